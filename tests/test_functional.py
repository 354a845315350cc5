"""autograd.functional and batched gradients against torch 2.13: values, output structure
(Tensor vs tuples vs nested tuples), requires_grad of results, strict-mode and argument errors,
create_graph, vectorize / forward-mode strategies, and is_grads_batched vs the loop."""

import numpy as np
import pytest
import torch
import torch.autograd.functional as TF
from _helpers import error_of as _err

import ndgrad
from ndgrad.autograd import functional as NF


def _arr(shape, seed):
    return np.random.default_rng(seed).uniform(-1, 1, size=shape)


def _both(*arrays):
    return tuple(ndgrad.tensor(a) for a in arrays), tuple(torch.tensor(a) for a in arrays)


def _same(a, b, tol=1e-10):
    """Same structure, values and requires_grad."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, ndgrad.Tensor), (type(a), type(b))
        assert tuple(a.shape) == tuple(b.shape)
        assert a.requires_grad == b.requires_grad
        np.testing.assert_allclose(a.detach()._data, b.detach().numpy(), rtol=tol, atol=tol)
        return
    if b is None:
        assert a is None
        return
    assert type(a) is type(b) and isinstance(b, (tuple, list)), (type(a), type(b))
    assert len(a) == len(b)
    for x, y in zip(a, b):
        _same(x, y, tol)


# ----------------------------------------------------------------------------- functions
def f_single(T):
    return lambda x: (x.sin() * x.exp()).tanh() * 2


def f_two_in(T):
    return lambda x, y: x.exp() * y.sum() + (x * y).tanh()


def f_two_out(T):
    return lambda x: (x.sigmoid(), (x ** 3).sum())


def f_two_two(T):
    return lambda x, y: (x * y, (x.sin() @ y.cos()).exp())


def f_matrix(T):
    return lambda w: (w @ w.t()).relu().sum(0)


FUNCS = {"single": (f_single, [(3,)]), "two_in": (f_two_in, [(3,), (3,)]),
         "two_out": (f_two_out, [(4,)]), "two_two": (f_two_two, [(2,), (2,)]),
         "matrix": (f_matrix, [(2, 3)])}


def _inputs(name, as_tuple_single=False):
    shapes = FUNCS[name][1]
    arrays = [_arr(s, i) for i, s in enumerate(shapes)]
    n, t = _both(*arrays)
    if len(n) == 1 and not as_tuple_single:
        return n[0], t[0]
    return n, t


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("kw", [{}, {"vectorize": True},
                                {"vectorize": True, "strategy": "forward-mode"},
                                {"create_graph": True}])
def test_jacobian_matches_torch(name, kw):
    fn = FUNCS[name][0]
    xn, xt = _inputs(name)
    _same(NF.jacobian(fn(ndgrad), xn, **kw), TF.jacobian(fn(torch), xt, **kw))


def test_jacobian_single_input_given_as_tuple():
    xn, xt = _inputs("single", as_tuple_single=True)
    _same(NF.jacobian(f_single(ndgrad), xn), TF.jacobian(f_single(torch), xt))


def scalar_two(T):
    return lambda x, y: (x.sin() * y.exp()).sum() + (x @ y) ** 2 + (x * x * x).prod()


def scalar_one(T):
    return lambda x: (x.tanh() ** 2).sum() * x.sigmoid().mean() + x.exp().prod()


@pytest.mark.parametrize("kw", [{}, {"vectorize": True}, {"create_graph": True},
                                {"vectorize": True, "outer_jacobian_strategy": "forward-mode"}])
@pytest.mark.parametrize("two", [False, True])
def test_hessian_matches_torch(kw, two):
    if two:
        (xn, yn), (xt, yt) = _both(_arr(3, 1), _arr(3, 2))
        _same(NF.hessian(scalar_two(ndgrad), (xn, yn), **kw),
              TF.hessian(scalar_two(torch), (xt, yt), **kw))
    else:
        (xn,), (xt,) = _both(_arr(4, 3))
        _same(NF.hessian(scalar_one(ndgrad), xn, **kw), TF.hessian(scalar_one(torch), xt, **kw))


def _vectors_like(ts, seed):
    """Random (ndgrad, torch) tensors shaped like the torch tensor ``ts`` or each of the tuple
    ``ts`` (seeds ``seed``, ``seed + 1``, ...), as a tuple exactly when ``ts`` is one."""
    single = not isinstance(ts, tuple)
    n, t = _both(*(_arr(tuple(x.shape), seed + i) for i, x in enumerate((ts,) if single else ts)))
    return (n[0], t[0]) if single else (n, t)


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_and_jvp_match_torch(name, create_graph):
    fn = FUNCS[name][0]
    xn, xt = _inputs(name)
    outs = fn(torch)(*(xt if isinstance(xt, tuple) else (xt,)))
    von, vot = _vectors_like(outs, 10)
    _same(NF.vjp(fn(ndgrad), xn, von, create_graph=create_graph),
          TF.vjp(fn(torch), xt, vot, create_graph=create_graph))
    vin, vit = _vectors_like(xt, 20)
    _same(NF.jvp(fn(ndgrad), xn, vin, create_graph=create_graph),
          TF.jvp(fn(torch), xt, vit, create_graph=create_graph))


@pytest.mark.parametrize("which", ["vhp", "hvp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_vhp_hvp_match_torch(which, create_graph):
    (xn, yn, vn, wn), (xt, yt, vt, wt) = _both(_arr(3, 1), _arr(3, 2), _arr(3, 3), _arr(3, 4))
    _same(getattr(NF, which)(scalar_two(ndgrad), (xn, yn), (vn, wn), create_graph=create_graph),
          getattr(TF, which)(scalar_two(torch), (xt, yt), (vt, wt), create_graph=create_graph))
    _same(getattr(NF, which)(scalar_one(ndgrad), xn, vn, create_graph=create_graph),
          getattr(TF, which)(scalar_one(torch), xt, vt, create_graph=create_graph))


def test_create_graph_results_are_differentiable_like_torch():
    res = []
    for lib, F in ((ndgrad, NF), (torch, TF)):
        x = lib.tensor([0.3, -0.2, 0.9], dtype=lib.float64, requires_grad=True)
        h = F.hessian(lambda z: (z.sin() * z.exp()).sum(), x, create_graph=True)
        _, hv = F.hvp(lambda z: (z ** 4).sum(), x, lib.ones(3, dtype=lib.float64),
                      create_graph=True)
        g = lib.autograd.grad(h.sum() + hv.sum(), x)[0]
        res.append((h.detach(), g))
    _same(res[0], res[1])


def test_default_v_for_single_element():
    a = NF.vjp(lambda x: (x * x).sum(), ndgrad.tensor([1.0, 2.0]))
    b = TF.vjp(lambda x: (x * x).sum(), torch.tensor([1.0, 2.0]))
    _same(a, b)
    a = NF.jvp(lambda x: x * x, ndgrad.tensor([3.0]))
    b = TF.jvp(lambda x: x * x, torch.tensor([3.0]))
    _same(a, b)


# ----------------------------------------------------------------------------- errors
def _error_cases(lib, F):
    x = lib.tensor([1.0, 2.0])
    y = lib.tensor([3.0, 4.0])
    lin = lambda a: a * 2
    return [
        _err(lambda: F.vjp(lambda a: a.detach(), x, x, strict=True)),
        _err(lambda: F.vjp(lambda a, b: a * 2, (x, y), x, strict=True)),
        _err(lambda: F.jvp(lambda a, b: a * 2, (x, y), (x, y), strict=True)),
        _err(lambda: F.jacobian(lambda a, b: a * 2, (x, y), strict=True)),
        _err(lambda: F.jacobian(lin, x, strict=True, create_graph=True)),
        _err(lambda: F.hessian(lambda a: a.sum(), x, strict=True)),
        _err(lambda: F.hessian(lambda a: (a * a).sum(), x, strict=True, create_graph=True)),
        _err(lambda: F.vhp(lambda a: a.sum(), x, x, strict=True)),
        _err(lambda: F.hvp(lambda a: (a * 2).sum(), x, x, strict=True)),
        _err(lambda: F.vjp(lin, x)),
        _err(lambda: F.jvp(lin, x)),
        _err(lambda: F.vjp(lin, x, lib.ones(3))),
        _err(lambda: F.vjp(lambda a, b: (a, b), (x, y), (x,))),
        _err(lambda: F.jvp(lambda a, b: a, (x, y), (x, lib.ones(3)))),
        _err(lambda: F.jvp(lin, x, (x, y))),
        _err(lambda: F.vjp(lin, [x, y], x)),
        _err(lambda: F.vjp(lin, 3.0, x)),
        _err(lambda: F.jacobian(lambda a: 3, x)),
        _err(lambda: F.vhp(lambda a: a, x, x)),
        _err(lambda: F.hvp(lambda a: (a, a.sum()), x, x)),
        _err(lambda: F.hessian(lambda a: a, x)),
        _err(lambda: F.hessian(lambda a: (a.sum(), a.sum()), x)),
        _err(lambda: F.jacobian(lin, x, strategy="sideways")),
        _err(lambda: F.jacobian(lin, x, strategy="forward-mode")),
        _err(lambda: F.jacobian(lin, x, strategy="forward-mode", create_graph=True)),
        _err(lambda: F.jacobian(lin, x, strategy="forward-mode", strict=True,
                                vectorize=True)),
        _err(lambda: F.jacobian(lin, x, vectorize=True, strict=True)),
        _err(lambda: F.hessian(lambda a: a.sum(), x, outer_jacobian_strategy="x")),
    ]


def test_errors_match_torch():
    got = _error_cases(ndgrad, NF)
    want = _error_cases(torch, TF)
    for i, (a, b) in enumerate(zip(got, want)):
        assert a == b, (i, a, b)


# ----------------------------------------------------------------------------- batched grads
def _batched_case(lib, create_graph=False):
    rng = np.random.default_rng(7)
    W = lib.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    x = lib.tensor(rng.standard_normal(3), requires_grad=True)
    b = lib.tensor(rng.standard_normal((1,)), requires_grad=True)
    h = (W @ x + b).tanh()
    m = (h.unsqueeze(1) * W).sigmoid().t().reshape(12).exp()
    out = (h.sum() * m + m.mean()).relu() + W.sum(0).repeat(4) * x.prod()
    g = lib.tensor(rng.standard_normal((5, 12)))
    return lib.autograd.grad(out, (W, x, b), g, is_grads_batched=True,
                             create_graph=create_graph), (W, x, b)


def test_is_grads_batched_matches_torch_and_loop():
    got, (W, x, b) = _batched_case(ndgrad)
    want, _ = _batched_case(torch)
    _same(got, want)
    # Row b of the batched result is the single backward with grad_output g[b].
    rng = np.random.default_rng(7)
    rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal((1,))
    g = rng.standard_normal((5, 12))
    for k in range(5):
        h = (W @ x + b).tanh()
        m = (h.unsqueeze(1) * W).sigmoid().t().reshape(12).exp()
        out = (h.sum() * m + m.mean()).relu() + W.sum(0).repeat(4) * x.prod()
        row = ndgrad.autograd.grad(out, (W, x, b), ndgrad.tensor(g[k]))
        for full, single in zip(got, row):
            np.testing.assert_allclose(full._data[k], single._data, rtol=1e-12, atol=1e-12)


def test_is_grads_batched_create_graph_is_differentiable():
    res = []
    for lib in (ndgrad, torch):
        (gW, gx, _), (W, x, _) = _batched_case(lib, create_graph=True)
        res.append((gW.detach(), lib.autograd.grad((gW.sum() + gx.pow(2).sum()), (W, x))))
    _same(res[0], res[1])


def test_is_grads_batched_unused_and_errors_match_torch():
    def cases(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.tensor([1.0, 2.0], requires_grad=True)
        eye = lib.eye(3)
        out = [lib.autograd.grad(x * 2, (x, y), eye, is_grads_batched=True, allow_unused=True),
               lib.autograd.grad(x * 2, (x, y), eye, is_grads_batched=True,
                                 materialize_grads=True),
               lib.autograd.grad(x.sum(), x, lib.ones(4), is_grads_batched=True)]
        errs = [_err(lambda: lib.autograd.grad(x * 2, (x, y), eye, is_grads_batched=True)),
                _err(lambda: lib.autograd.grad((x * 2, x.sum()), x,
                                               (lib.ones(4, 3), lib.ones(5)),
                                               is_grads_batched=True)),
                _err(lambda: lib.autograd.grad(x * 2, x, lib.ones(4, 2),
                                               is_grads_batched=True))]
        return out, errs
    (ga, ea), (gb, eb) = cases(ndgrad), cases(torch)
    for a, b in zip(ga, gb):
        _same(a, b)
    assert ea == eb


def test_batched_per_sample_fallback_for_ops_without_batched_rule():
    """Indexing and custom Functions run per batch element inside the batched traversal."""
    res = []
    for lib in (ndgrad, torch):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * a

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return 2 * g * a
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], requires_grad=True)
        y = Square.apply(x)[:, lib.tensor([2, 0])].flatten() * x[0, 1:].repeat(2)
        g = lib.tensor(np.arange(12.0).reshape(3, 4) / 7)
        res.append(lib.autograd.grad(y, x, g, is_grads_batched=True))
    _same(res[0], res[1])


def test_vectorized_jacobian_equals_loop_for_many_ops():
    def fn(z):
        a = z.reshape(2, 3)
        return ((a.t() @ a).exp().mean(1) * a.sum(0)).sin().unsqueeze(0).expand(2, 3).t()
    a = _arr(6, 11)
    _same(NF.jacobian(fn, ndgrad.tensor(a), vectorize=True),
          TF.jacobian(fn, torch.tensor(a), vectorize=True))
    np.testing.assert_allclose(NF.jacobian(fn, ndgrad.tensor(a), vectorize=True)._data,
                               NF.jacobian(fn, ndgrad.tensor(a))._data, rtol=1e-12)


# ----------------------------------------------------------------------------- batched forward
BATCHED_FWD = {
    "elementwise": lambda x: (x.sin() * x.exp() / (x * x + 1)).tanh().sigmoid().relu(),
    "broadcast": lambda x: x.reshape(2, 3) * x[:3] + x[3:].reshape(3, 1).sum(),
    "matmul": lambda x: (x.reshape(2, 3) @ x.reshape(3, 2)).t().mv(x[:2]),
    "reductions": lambda x: x.reshape(2, 3).mean(0) * x.reshape(3, 2).sum(1, keepdim=True),
    "views": lambda x: x.view(3, 2).transpose(0, 1).permute(1, 0).unsqueeze(0).expand(2, 3, 2),
    "per_sample": lambda x: x.reshape(2, 3).max(1)[0] * x.prod() + x[x > 0].sum(),
    "where_pow": lambda x: ndgrad.where(x > 0, x, x * 2) ** 3 if isinstance(x, ndgrad.Tensor)
    else torch.where(x > 0, x, x * 2) ** 3,
}


@pytest.mark.parametrize("name", sorted(BATCHED_FWD))
def test_forward_mode_jacobian_batched_matches_torch(name):
    fn = BATCHED_FWD[name]
    a = _arr(6, 30)
    _same(NF.jacobian(fn, ndgrad.tensor(a), vectorize=True, strategy="forward-mode"),
          TF.jacobian(fn, torch.tensor(a), vectorize=True, strategy="forward-mode"))


def test_forward_mode_jacobian_falls_back_to_loop_for_inplace(monkeypatch):
    calls = []
    orig = NF._jacobian_forward_loop

    def spy(*args):
        calls.append(1)
        return orig(*args)
    monkeypatch.setattr(NF, "_jacobian_forward_loop", spy)

    def fn(x):
        y = x * 2
        y.mul_(x)
        return y
    a = _arr(4, 31)
    _same(NF.jacobian(fn, ndgrad.tensor(a), vectorize=True, strategy="forward-mode"),
          TF.jacobian(fn, torch.tensor(a), vectorize=True, strategy="forward-mode"))
    assert calls == [1]
    calls.clear()
    NF.jacobian(BATCHED_FWD["elementwise"], ndgrad.tensor(a), vectorize=True,
                strategy="forward-mode")
    assert calls == []


def test_batched_rules_for_stack_cat_select_slice_unbind_equal_the_loop():
    rng = np.random.default_rng(12)
    x = ndgrad.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    a, b, c = x.unbind(0)
    y = ndgrad.stack([a * b, c.exp()], 1)            # (4, 2)
    z = ndgrad.cat([y, x.t()[:, 1:]], 1)             # (4, 4)
    out = (z[1] * z[:, 3]).sin().repeat(2)           # (8,)
    g = rng.standard_normal((6, 8))
    batched = ndgrad.autograd.grad(out, x, ndgrad.tensor(g), is_grads_batched=True,
                                   retain_graph=True)[0]
    for k in range(6):
        row = ndgrad.autograd.grad(out, x, ndgrad.tensor(g[k]), retain_graph=True)[0]
        np.testing.assert_allclose(batched._data[k], row._data, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kw", [{}, {"vectorize": True}, {"create_graph": True},
                                {"vectorize": True, "strategy": "forward-mode"}])
def test_independent_inputs_give_zeros_like_torch(kw):
    def f(x, y):
        return x.exp(), x.sum() * 2

    def g(x, y):
        return (x ** 3).sum()
    (xn, yn), (xt, yt) = _both(_arr(2, 40), _arr(3, 41))
    _same(NF.jacobian(f, (xn, yn), **kw), TF.jacobian(f, (xt, yt), **kw))
    hkw = {k: v for k, v in kw.items() if k != "strategy"}
    _same(NF.hessian(g, (xn, yn), **hkw), TF.hessian(g, (xt, yt), **hkw))
    _same(NF.vjp(f, (xn, yn), (xn, xn.sum())), TF.vjp(f, (xt, yt), (xt, xt.sum())))
    _same(NF.hvp(g, (xn, yn), (xn, yn)), TF.hvp(g, (xt, yt), (xt, yt)))


@pytest.mark.parametrize("create_graph", [False, True])
def test_per_example_grads_of_a_network_equal_the_loop(create_graph):
    """is_grads_batched with the identity: per-example gradients (linear, softmax, nll...)."""
    F = ndgrad.nn.functional
    rng = np.random.default_rng(3)
    X = ndgrad.tensor(rng.standard_normal((5, 4)))
    y = ndgrad.tensor(rng.integers(0, 3, 5))
    W1 = ndgrad.tensor(rng.standard_normal((6, 4)), requires_grad=True)
    b1 = ndgrad.tensor(rng.standard_normal(6), requires_grad=True)
    W2 = ndgrad.tensor(rng.standard_normal((3, 6)), requires_grad=True)
    params = (W1, b1, W2)

    def losses():
        h = F.linear(X, W1, b1).tanh()
        z = F.linear(h, W2)
        return F.nll_loss(F.log_softmax(z, 1), y, reduction="none") + F.softmax(z, -1)[:, 0]
    batched = ndgrad.autograd.grad(losses(), params, ndgrad.eye(5, dtype=ndgrad.float64),
                                   is_grads_batched=True, create_graph=create_graph)
    for k in range(5):
        rows = ndgrad.autograd.grad(losses()[k], params)
        for full, row in zip(batched, rows):
            np.testing.assert_allclose(full._data[k], row._data, rtol=1e-12, atol=1e-12)
    if create_graph:
        # The batched gradients are differentiable: compare a second derivative too.
        sec = ndgrad.autograd.grad(sum((g ** 2).sum() for g in batched), W1)[0]
        ref = 0
        for k in range(5):
            rows = ndgrad.autograd.grad(losses()[k], params, create_graph=True)
            ref = ref + sum((g ** 2).sum() for g in rows)
        np.testing.assert_allclose(sec._data, ndgrad.autograd.grad(ref, W1)[0]._data,
                                   rtol=1e-10, atol=1e-12)


_OWN_BATCHED_RULES = {"AddmmBackward0", "SoftmaxBackward0", "LogSoftmaxBackward0"}


def _nn_batched_case(lib, create_graph):
    """F.linear (AddmmBackward0, 1-D bias), softmax / log_softmax over both dims, and an RNN
    (its step's fused linear with a 2-D bias) under is_grads_batched."""
    rng = np.random.default_rng(21)
    F = lib.nn.functional
    x, W, b = (lib.tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((5, 4), (6, 4), (6,)))
    h = F.linear(x, W, b)
    out = F.softmax(h, 1) * F.log_softmax(h, 0) + F.log_softmax(h, -1) * F.softmax(h, -2)
    g = lib.tensor(rng.standard_normal((7, 5, 6)))
    res = lib.autograd.grad(out, (x, W, b), g, is_grads_batched=True, create_graph=create_graph)
    lib.manual_seed(0)
    rnn = lib.nn.RNN(4, 3, dtype=lib.float64)
    seq = lib.tensor(rng.standard_normal((2, 5, 4)), requires_grad=True)
    y, _ = rnn(seq)
    gy = lib.tensor(rng.standard_normal((3, 2, 5, 3)))
    res += lib.autograd.grad(y, (seq, rnn.weight_hh_l0, rnn.bias_hh_l0), gy,
                             is_grads_batched=True, create_graph=create_graph)
    if create_graph:
        res += lib.autograd.grad(sum((r ** 2).sum() for r in res), (x, W, b, seq))
    return res


@pytest.mark.parametrize("create_graph", [False, True])
def test_batched_rules_of_linear_softmax_log_softmax_equal_torch(create_graph, monkeypatch):
    from ndgrad.autograd import _batched_backward
    looped = set()
    per_sample = _batched_backward._per_sample

    def spy(node, gs, B):
        looped.add(type(node).__name__)
        return per_sample(node, gs, B)
    monkeypatch.setattr(_batched_backward, "_per_sample", spy)
    got = _nn_batched_case(ndgrad, create_graph)
    want = _nn_batched_case(torch, create_graph)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.detach()._data, b.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    # the three ops ran their own batched rule, not the per-element loop
    assert not looped & _OWN_BATCHED_RULES, looped


@pytest.mark.parametrize("kw", [{}, {"vectorize": True}, {"create_graph": True},
                                {"vectorize": True, "strategy": "forward-mode"}])
def test_jacobian_of_empty_input_like_torch(kw):
    def run(F, lib):
        try:
            r = F.jacobian(lambda x: x * 2, lib.zeros(0, dtype=lib.float64), **kw)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
        return tuple(r.shape), r.requires_grad
    assert run(NF, ndgrad) == run(TF, torch)


def _hooked_batched(lib):
    seen = []
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    x.register_hook(lambda g: seen.append(tuple(g.shape)))
    h = x.sin() * 3
    h.register_hook(lambda g: g * 2)
    y = (h * x).exp()
    g = lib.tensor(np.arange(6.0).reshape(2, 3))
    return lib.autograd.grad(y, x, g, is_grads_batched=True), seen


def test_is_grads_batched_calls_tensor_hooks_per_element_like_torch():
    (a,), seen_a = _hooked_batched(ndgrad)
    (b,), seen_b = _hooked_batched(torch)
    _same(a, b)
    # torch calls the hook once with a vmap BatchedTensor that looks unbatched; ndgrad calls
    # it once per batch element with the same-looking gradient.
    assert set(seen_a) == set(seen_b) == {(3,)}


def test_batched_grad_runs_node_hooks_per_element_like_torchs_vmap():
    """is_grads_batched with Node pre- and post-hooks: each hook sees one batch element's
    gradients (torch: a BatchedTensor per call, same shapes) and what it returns replaces
    them; the result equals torch's."""
    xa = np.arange(6, dtype=np.float64).reshape(2, 3) / 5
    ga = np.stack([np.ones((2, 3)), np.arange(6.0).reshape(2, 3)])
    res, shapes = {}, {}
    for L in (ndgrad, torch):
        x = L.tensor(xa, requires_grad=True)
        y = x.exp()
        z = y * 3
        seen = []

        def pre(grad_outputs, seen=seen):
            seen.append(tuple(grad_outputs[0].shape))
            return (grad_outputs[0] * 2,)

        def post(grad_inputs, grad_outputs, seen=seen):
            seen.append(tuple(grad_inputs[0].shape))
            return (grad_inputs[0] + 1,)

        z.grad_fn.register_prehook(pre)
        y.grad_fn.register_hook(post)
        (gx,) = L.autograd.grad(z, x, L.tensor(ga), is_grads_batched=True)
        res[L.__name__] = gx.detach().numpy()
        shapes[L.__name__] = set(seen)
    np.testing.assert_allclose(res["ndgrad"], res["torch"], rtol=1e-12)
    assert shapes["ndgrad"] == shapes["torch"] == {(2, 3)}
