"""Dynamic shapes in ndgrad.compile: one entry generalised over input sizes after two traces of
the same program (torch's automatic dynamic shapes), its guards (user code's decisions on
sizes, sizes 0 and 1, constant sizes, equal sizes), specialisation where sizes reach the
program as values, ``dynamic=False``, and the SymInt sizes user code reads while tracing.

Every call is checked against eager mode bitwise: outputs and the gradients of the inputs
(each function is run on the same inputs compiled and eagerly). The number of traces is
counted by the functions themselves (a traced call runs the Python body; a compiled one does
not).
"""

import logging

import numpy as np
import pytest

import ndgrad
import ndgrad.nn as nn
import ndgrad.nn.functional as F
from ndgrad import _dynamo
from ndgrad._compile import symbolic
from ndgrad._compile.region import CompiledFunctionBackward


class Counted:
    """A function that counts the calls that ran its body."""

    def __init__(self, fn):
        self.fn = fn
        self.runs = 0

    def __call__(self, *args):
        self.runs += 1
        return self.fn(*args)


def _grads(xs):
    out = []
    for x in xs:
        out.append(None if x.grad is None else x.grad._data.copy())
        x.grad = None
    return out


def _run_both(cf, counted, xs, params=()):
    """Run the compiled function and eager mode on `xs`; assert bitwise equal outputs and
    gradients (of `xs` and `params`). Returns the compiled output."""
    leaves = [x for x in xs if x.requires_grad] + list(params)
    out = cf(*xs)
    if out.requires_grad:
        (out if out.dim() == 0 else out.sum()).backward()
    got = _grads(leaves)
    before = counted.runs
    ref = counted(*xs)
    counted.runs = before
    np.testing.assert_array_equal(out._data, ref._data)
    assert out.dtype == ref.dtype and out.shape == ref.shape
    if ref.requires_grad:
        (ref if ref.dim() == 0 else ref.sum()).backward()
    want = _grads(leaves)
    for g, w in zip(got, want):
        if w is None:
            assert g is None
        else:
            np.testing.assert_array_equal(g, w)
    return out


def _compiled(out):
    return isinstance(out.grad_fn, CompiledFunctionBackward)


# --------------------------------------------------------------------------- generalising
def test_training_step_generalises_over_batch_size():
    ndgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    counted = Counted(lambda x, y: F.cross_entropy(model(x), y))
    cf = ndgrad.compile(counted)
    runs = []
    for n in (4, 6, 9, 13, 21, 6, 40, 2):
        x = ndgrad.randn(n, 8)
        y = ndgrad.randint(0, 3, (n,))
        out = _run_both(cf, counted, [x, y], model.parameters())
        runs.append((counted.runs, _compiled(out)))
    # traced at 4 and 6 (the same program: generalised); every other size runs compiled
    assert runs == [(1, False), (2, False), (2, True), (2, True), (2, True), (2, True),
                    (2, True), (2, True)]


def test_reductions_and_broadcasting_generalise():
    ndgrad.manual_seed(1)
    w = ndgrad.randn(8, 5, requires_grad=True)
    b = ndgrad.randn(5, requires_grad=True)
    counted = Counted(lambda x: ((x @ w + b).tanh().sum(1).mean() + (x * 2).mean(0).sum()))
    cf = ndgrad.compile(counted)
    for n in (3, 4, 7, 10, 25):
        x = ndgrad.randn(n, 8, requires_grad=True)
        out = _run_both(cf, counted, [x], [w, b])
    assert counted.runs == 2 and _compiled(out)


def test_two_dims_vary_and_their_equality_is_guarded():
    counted = Counted(lambda x: x.softmax(-1).mul(x).sum(0).mean())
    cf = ndgrad.compile(counted)
    for shape in ((3, 4), (5, 7), (9, 11), (6, 6), (8, 13)):
        x = ndgrad.randn(*shape, requires_grad=True)
        _run_both(cf, counted, [x])
    # (6, 6): sizes that differed in the traces are equal: traced on its own
    assert counted.runs == 3


def test_user_decisions_on_sizes_are_guarded():
    def f(x):
        if x.size(0) * 2 > 20:
            return x.sin()
        return x.cos()
    counted = Counted(f)
    cf = ndgrad.compile(counted)
    runs = []
    for n in (3, 4, 5, 9, 10, 11, 12, 30, 7):
        x = ndgrad.randn(n, requires_grad=True)
        _run_both(cf, counted, [x])
        runs.append(counted.runs)
    # 3, 4: cos traced twice -> generalised with guard not (2n > 20); 11, 12: sin likewise
    assert runs == [1, 2, 2, 2, 2, 3, 4, 4, 4]


def test_decisions_on_computed_values_sizes_checked_by_the_program():
    w = ndgrad.randn(4, 6)

    def f(x):
        h = (x @ w).reshape(-1, 3)
        if h.shape[0] > 12:
            return h.exp().sum()
        return h.sin().sum()
    counted = Counted(f)
    cf = ndgrad.compile(counted)
    for n in (2, 3, 4, 5, 7, 3, 8):
        x = ndgrad.randn(n, 4, requires_grad=True)
        _run_both(cf, counted, [x])


def test_sizes_0_and_1_and_constant_sizes_are_traced_alone():
    w = ndgrad.randn(5, 6, requires_grad=True)
    counted = Counted(lambda x: (x @ w).relu().sum())
    cf = ndgrad.compile(counted)
    runs = []
    for n in (3, 4, 1, 5, 6, 0, 7):
        x = ndgrad.randn(n, 5, requires_grad=True)
        _run_both(cf, counted, [x], [w])
        runs.append(counted.runs)
    # 1 and 0 are never generalised; 5 and 6 are sizes of the program (w's): traced alone
    assert runs == [1, 2, 3, 4, 5, 6, 6]


def test_dynamic_false_specialises_every_size():
    counted = Counted(lambda x: x.exp().sum())
    cf = ndgrad.compile(counted, dynamic=False)
    for n in (3, 4, 5, 6):
        _run_both(cf, counted, [ndgrad.randn(n, requires_grad=True)])
    assert counted.runs == 4


def test_dynamic_true_generalises_too():
    counted = Counted(lambda x: x.exp().sum())
    cf = ndgrad.compile(counted, dynamic=True)
    for n in (3, 4, 5, 6):
        _run_both(cf, counted, [ndgrad.randn(n, requires_grad=True)])
    assert counted.runs == 2


def test_many_sizes_stay_below_the_cache_limit(caplog):
    counted = Counted(lambda x: (x * 3).tanh().sum())
    cf = ndgrad.compile(counted)
    with caplog.at_level(logging.WARNING, logger="ndgrad._dynamo"):
        for n in range(2, 40):
            _run_both(cf, counted, [ndgrad.randn(n, requires_grad=True)])
    assert counted.runs == 2
    assert not caplog.records


def test_aliased_arguments_are_not_generalised():
    counted = Counted(lambda a, b: (a * b).sum())
    cf = ndgrad.compile(counted)
    for n in (3, 4, 5):
        x = ndgrad.randn(n, requires_grad=True)
        _run_both(cf, counted, [x, x])
    assert counted.runs == 3


# --------------------------------------------------------------------------- specialised
@pytest.mark.parametrize("name", ["arange_of_size", "slice_to_size", "select_from_end",
                                  "len", "size_as_text", "size_in_a_set"])
def test_sizes_reaching_the_program_as_values_specialise(name):
    fns = {
        "arange_of_size": lambda x: (x + ndgrad.arange(x.shape[0]).unsqueeze(1)).sum(),
        # Python's len() strips the SymInt, and text and hashes only serve decisions: from
        # user code, each specialises
        "len": lambda x: x.exp().sum() * (2 if len(x) > 4 else 3),
        "size_as_text": lambda x: x.exp().sum() * (2 if str(x.size(0)) == "5" else 3),
        "size_in_a_set": lambda x: x.exp().sum() * (2 if x.size(0) in {5, 9} else 3),
        "slice_to_size": lambda x: x[:-1].exp().sum(),
        "select_from_end": lambda x: x[-2].exp().sum(),
    }
    counted = Counted(fns[name])
    cf = ndgrad.compile(counted)
    for n in (3, 4, 5, 6):
        _run_both(cf, counted, [ndgrad.randn(n, 3, requires_grad=True)])
    assert counted.runs == 4


@pytest.mark.parametrize("name", ["view_by_size", "flatten", "expand", "mse", "bce",
                                  "max_pool", "factory_of_size", "select_scatter_zeros",
                                  "amax", "cat", "slice_open_end", "select_last",
                                  "divide_by_size", "scale_by_size"])
def test_sizes_forced_by_the_arrays_generalise(name):
    w = ndgrad.randn(2, 1, 3, 3, requires_grad=True)
    fns = {
        "view_by_size": lambda x: x.view(x.size(0), -1).exp().sum(),
        "flatten": lambda x: x.flatten(1).tanh().sum(),
        "expand": lambda x: x.sum(1, keepdim=True).expand(-1, 4, -1).exp().sum(),
        "mse": lambda x: F.mse_loss(x.sin(), x.detach()),
        "bce": lambda x: F.binary_cross_entropy(x.sigmoid(), x.detach().sigmoid()),
        "max_pool": lambda x: F.max_pool2d(F.conv2d(x.view(-1, 1, 2, 6), w, padding=1),
                                           2).sum(),
        "factory_of_size": lambda x: (x + ndgrad.ones(x.shape[0], 1, 1)).sum(),
        "select_scatter_zeros": lambda x: x[0].exp().sum() + x[:, 1:3].sin().sum(),
        "amax": lambda x: x.amax(0).sum() + x.amin(1).exp().sum(),
        "cat": lambda x: ndgrad.cat([x, x.sin(), x[:2]], 0).exp().sum(),
        "slice_open_end": lambda x: x[1:].exp().sum() + x[:, 2:].sum(),
        "select_last": lambda x: x[-1].exp().sum() + x[:, -1].sin().sum(),
        "divide_by_size": lambda x: (x - x.mean(0)).pow(2).sum() / x.shape[0],
        "scale_by_size": lambda x: (x * x.size(0) - 1).tanh().sum() * x.numel(),
    }
    counted = Counted(fns[name])
    cf = ndgrad.compile(counted)
    for n in (5, 7, 9, 11, 13):  # (2, 3, 4, 6 and 12 are sizes of the programs)
        _run_both(cf, counted, [ndgrad.randn(n, 3, 4, requires_grad=True)],
                  [w] if name == "max_pool" else [])
    assert counted.runs == 2


# --------------------------------------------------------------------------- many ops
def _conv(x, w=ndgrad.randn(4, 3, 3, 3, requires_grad=True)):
    return F.max_pool2d(F.conv2d(x.view(-1, 3, 6, 6), w, padding=1).relu(), 2).sum()


CASES = {
    "elementwise_chain": (lambda x: (x.sin() * x.cos() + x.exp().neg()).tanh().sum(), (5,)),
    "softmax_rows": (lambda x: x.softmax(1).log().mean(), (7,)),
    "log_softmax_nll": (lambda x: F.nll_loss(x.log_softmax(1),
                                              ndgrad.zeros(x.shape[0], dtype=ndgrad.long)),
                        (4,)),
    "mse": (lambda x: F.mse_loss(x, x.detach() * 0.5), (3,)),
    "l1": (lambda x: F.l1_loss(x.sin(), x.cos()), (3,)),
    "bce_logits": (lambda x: F.binary_cross_entropy_with_logits(x, x.detach().sigmoid()),
                   (3,)),
    "layer_norm": (lambda x: F.layer_norm(x, (6,)).pow(2).sum(), (6,)),
    "transpose_matmul": (lambda x: (x.t() @ x).sum(), (4,)),
    "permute_sum": (lambda x: x.view(-1, 2, 3).permute(2, 0, 1).exp().sum((1, 2)).sum(),
                    (6,)),
    "slice_rows": (lambda x: x[1:].sum() + x[:, 1:3].exp().sum(), (5,)),
    "slice_past_end": (lambda x: x[:3].sum() * 2, (4,)),
    "select_index": (lambda x: x[0].exp().sum() + x[-1].sum(), (4,)),
    "cat_stack": (lambda x: ndgrad.cat([x, x * 2], 0).sum() + ndgrad.stack([x, x]).mean(),
                  (3,)),
    "expand_unsqueeze": (lambda x: x.unsqueeze(1).expand(-1, 3, -1).sum(), (4,)),
    "var_std": (lambda x: x.var(0).sum() + x.std(1).sum(), (5,)),
    "cumsum_flip": (lambda x: x.cumsum(0).flip(0).sum(), (3,)),
    "where_clamp": (lambda x: ndgrad.where(x > 0, x, x * 0.1).clamp(-1, 1).sum(), (4,)),
    "max_min": (lambda x: x.max(1).values.sum() + x.amin(0).sum(), (5,)),
    "norm": (lambda x: x.norm(dim=1).sum(), (4,)),
    "conv_pool": (_conv, (108,)),
    "flatten": (lambda x: x.flatten().exp().sum(), (3,)),
    "squeeze_dim": (lambda x: x.unsqueeze(0).squeeze(0).sum(), (3,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_ops_at_many_sizes_match_eager(name):
    fn, tail = CASES[name]
    counted = Counted(fn)
    cf = ndgrad.compile(counted)
    rng = np.random.default_rng(0)
    for n in (2, 3, 5, 8, 4, 11, 3, 16, 7):
        x = ndgrad.tensor(rng.standard_normal((n, *tail)).astype(np.float32),
                          requires_grad=True)
        _run_both(cf, counted, [x])


# --------------------------------------------------------------------------- state
def test_traced_call_leaves_plain_ints_in_the_eager_graph():
    cf = ndgrad.compile(lambda x: x.sum(1).mean())
    for n in (3, 4):
        out = cf(ndgrad.randn(n, 5, requires_grad=True))
        sizes = out.grad_fn._saved_self_sym_sizes
        assert sizes == (n,) and all(type(s) is int for s in sizes)


def test_user_sizes_outside_a_trace_are_plain():
    x = ndgrad.randn(4, 3)
    assert type(x.size(0)) is int and type(x.shape[1]) is int and type(len(x)) is int


def test_symint_keeps_expressions_and_records_user_decisions():
    class FakeTracer:
        sym_guards = []
    tr = FakeTracer()
    symbolic.active.tracer = tr
    try:
        s = symbolic.SymInt(6, "@i0[0]")
        t = (s * 2 + 1) // 3 - s % 4
        assert t == 2 and type(t) is symbolic.SymInt
        assert t.expr == "((((@i0[0] * 2) + 1) // 3) - (@i0[0] % 4))"
        assert repr(s) == "6" and hash(s) == hash(6)
        assert s > 5 and not s < 3 and bool(s)
        assert int(s) == 6 and type(int(s)) is int
        assert s / 4 == 1.5
        guards = [g for g, _ in tr.sym_guards]
        assert "(@i0[0] > 5)" in guards and "(@i0[0] < 3)" in guards
        assert ("(@i0[0] == 6)", True) in tr.sym_guards   # int() and / specialise
        assert symbolic.guard_source([("(@i0[0] > 5)", True), ("(@i0[0] < 3)", False)]) == \
            "(@i0[0] > 5) and not (@i0[0] < 3)"
    finally:
        symbolic.active.tracer = None
    n = len(tr.sym_guards)
    assert (s == 6) and len(tr.sym_guards) == n   # no tracer: nothing recorded


def test_reset_forgets_dynamic_entries():
    counted = Counted(lambda x: x.exp().sum())
    cf = ndgrad.compile(counted)
    for n in (3, 4, 5):
        _run_both(cf, counted, [ndgrad.randn(n, requires_grad=True)])
    assert counted.runs == 2
    _dynamo.reset()
    _run_both(cf, counted, [ndgrad.randn(5, requires_grad=True)])
    assert counted.runs == 3


# --------------------------------------------------------------------------- size decisions
def _same_error(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - the class and message are compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("name", ["narrow", "unfold"])
def test_checks_the_kernel_does_not_repeat_keep_raising(name):
    fns = {"narrow": lambda x: x.narrow(0, 0, 5).exp().sum(),
           "unfold": lambda x: x.unfold(0, 5, 1).sum()}
    counted = Counted(fns[name])
    cf = ndgrad.compile(counted)
    for n in (10, 20, 13):
        _run_both(cf, counted, [ndgrad.randn(n, requires_grad=True)])
    assert counted.runs == 3   # never generalised
    x = ndgrad.randn(3, requires_grad=True)
    err = _same_error(cf, x)
    assert err is not None and err == _same_error(fns[name], x)


def test_pinv_tolerance_follows_the_size():
    def f(a):
        return ndgrad.linalg.pinv(a)
    counted = Counted(f)
    cf = ndgrad.compile(counted)
    rng = np.random.default_rng(0)
    for m in (3, 4, 8):
        u, _ = np.linalg.qr(rng.standard_normal((m, m)))
        v, _ = np.linalg.qr(rng.standard_normal((5, 5)))
        s = np.zeros((m, 5))
        k = min(m, 5)
        s[np.arange(k), np.arange(k)] = [1.0, 0.5, 0.25, 6.5 * np.finfo(np.float64).eps,
                                         0.1][:k]
        a = ndgrad.tensor(u @ s @ v.T, requires_grad=True)
        _run_both(cf, counted, [a])
    assert counted.runs == 3


def test_multi_dot_order_follows_the_sizes():
    rng = np.random.default_rng(1)
    w = ndgrad.tensor(rng.standard_normal((3, 50)))
    counted = Counted(lambda x, y: ndgrad.linalg.multi_dot([w, x, y]).sum())
    cf = ndgrad.compile(counted)
    for k in (4, 5, 10, 20):   # the best order changes between 5 and 10
        _run_both(cf, counted, [ndgrad.tensor(rng.standard_normal((50, k)),
                                              requires_grad=True),
                                ndgrad.tensor(rng.standard_normal((k, 2)),
                                              requires_grad=True)])
    assert counted.runs == 4


def test_an_error_inside_a_symbolic_trace_leaves_no_state():
    from ndgrad._ops import registry

    def f(x):
        h = x.sum(1)
        if x.size(0) > 4:
            raise ValueError("too big")
        return h.mean()
    cf = ndgrad.compile(f)
    x = ndgrad.randn(3, 2, requires_grad=True)
    cf(x)
    with pytest.raises(ValueError, match="too big"):
        cf(ndgrad.randn(6, 2, requires_grad=True))
    assert registry.symbolic_traces[0] == 0 and symbolic.active.tracer is None
    assert type(x.size(0)) is int and type(x.shape[1]) is int
    out = f(ndgrad.randn(3, 2, requires_grad=True))
    assert all(type(s) is int for s in out.grad_fn._saved_self_sym_sizes)
    _run_both(cf, Counted(f), [ndgrad.randn(2, 2, requires_grad=True)])
