"""gradcheck / gradgradcheck against torch 2.13: both accept correct ops and reject wrong
backwards with the same verdict and the same message (numerical and analytical Jacobians).

Every case runs the same code in both libraries (``T`` is ``torch`` or ``ndgrad``) on the
same float64 data; the fast-mode random vectors come from torch's default generator in both.
"""

# Closures in the per-library loops run inside their own iteration.
# ruff: noqa: B023

import re
import warnings

import numpy as np
import pytest
import torch
from torch.autograd.gradcheck import GradcheckError as TGradcheckError

import ndgrad
from ndgrad.autograd import GradcheckError as NGradcheckError

LIBS = (torch, ndgrad)


def _err_cls(T):
    return TGradcheckError if T is torch else NGradcheckError


def _x(T, shape=(3,), seed=0, rg=True):
    a = np.random.default_rng(seed).uniform(-1, 1, size=shape)
    return T.tensor(a, requires_grad=rg)


def _outcome(T, check):
    """True, or (exception type name, message) for what `check(T)` did."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return check(T)
        except Exception as e:  # noqa: BLE001 - compared with torch's
            if isinstance(e, _err_cls(T)):
                return ("GradcheckError", _norm(str(e)))
            return (type(e).__name__, _norm(str(e)))


def _norm(msg):
    """Long printed floats (fast mode's scalars) rounded: the last digits depend on sum order.
    """
    msg = re.sub(r"-?\d+\.\d{9,}", lambda m: f"{float(m.group()):.9f}", msg)
    # torch's forward-mode Jacobians print a grad_fn of its own bookkeeping; not a result.
    return re.sub(r",\s*grad_fn=<\w+>\)", ")", msg)


def _same_outcome(check):
    res = [_outcome(T, check) for T in LIBS]
    assert res[0] == res[1], f"torch: {res[0]}\nndgrad: {res[1]}"
    return res[0]


# --------------------------------------------------------------------------- correct ops
CORRECT = {
    "sin": (lambda T, x: x.sin(), [(3,)]),
    "matmul_tanh": (lambda T, a, b: (a @ b).tanh(), [(2, 3), (3, 2)]),
    "broadcast_mul": (lambda T, a, b: a * b, [(2, 3), (3,)]),
    "pow_sum": (lambda T, x: (x ** 3).sum(), [(2, 2)]),
    "softmax_like": (lambda T, x: x.exp() / x.exp().sum(-1, keepdim=True), [(2, 3)]),
    "two_outputs": (lambda T, x, y: (x * y, x - y), [(3,), (3,)]),
}


@pytest.mark.parametrize("name", sorted(CORRECT))
@pytest.mark.parametrize("fast", [False, True])
def test_accepts_correct_ops(name, fast):
    fn, shapes = CORRECT[name]

    def check(T):
        xs = tuple(_x(T, s, i) for i, s in enumerate(shapes))
        f = lambda *a: fn(T, *a)
        return (T.autograd.gradcheck(f, xs, fast_mode=fast)
                and T.autograd.gradgradcheck(f, xs, fast_mode=fast))
    assert _same_outcome(check) is True


def test_accepts_with_optional_checks():
    def check(T):
        x = _x(T, (2, 3))
        f = lambda x: (x.sin() * x).sum(0)
        return (T.autograd.gradcheck(f, (x,), check_batched_grad=True, check_grad_dtypes=True)
                and T.autograd.gradcheck(f, (x,), check_forward_ad=True)
                and T.autograd.gradcheck(f, (x,), check_forward_ad=True, fast_mode=True)
                and T.autograd.gradcheck(f, (x,), check_forward_ad=True,
                                         check_backward_ad=False)
                and T.autograd.gradgradcheck(f, (x,), gen_non_contig_grad_outputs=True)
                and T.autograd.gradgradcheck(f, (x,), check_batched_grad=True))
    assert _same_outcome(check) is True


def test_gradgradcheck_with_given_grad_outputs():
    def check(T):
        x = _x(T, (2, 2))
        go = _x(T, (2, 2), 7)
        return T.autograd.gradgradcheck(lambda x: (x @ x).sin(), (x,), (go,))
    assert _same_outcome(check) is True


def test_complex_inputs_and_outputs():
    def check(T):
        z = T.tensor(np.array([0.3 + 0.4j, -0.7 + 0.1j, 0.2 - 0.9j]), requires_grad=True)
        return (T.autograd.gradcheck(lambda z: z * z, (z,))
                and T.autograd.gradcheck(lambda z: z.abs(), (z,))
                and T.autograd.gradcheck(lambda z: z * z, (z,), fast_mode=True))
    assert _same_outcome(check) is True


@pytest.mark.parametrize("fast", [False, True])
def test_forward_mode_with_complex_input_checks_each_part(fast):
    def check(T):
        z = T.tensor(np.array([0.3 + 0.4j, -0.7 + 0.1j]), requires_grad=True)
        x = T.tensor(np.array([0.3, -0.7]), requires_grad=True)
        c = T.tensor(1 + 2j)
        return (T.autograd.gradcheck(lambda z: z * z, (z,), check_forward_ad=True,
                                     check_backward_ad=False, fast_mode=fast),
                T.autograd.gradcheck(lambda x: x * c, (x,), check_forward_ad=True,
                                     check_backward_ad=False, fast_mode=fast))
    assert _same_outcome(check) == (True, True)

    def wrong(T):  # a jvp that forgets the conjugate: only the imaginary part exposes it
        class Sq(T.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_forward(z)
                return z * z

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def jvp(ctx, t):
                (z,) = ctx.saved_tensors
                return 2 * t * z.conj()
        z = T.tensor(np.array([0.3 + 0.4j, -0.7 + 0.1j]), requires_grad=True)
        return T.autograd.gradcheck(Sq.apply, (z,), check_forward_ad=True,
                                    check_backward_ad=False, fast_mode=fast)
    kind, msg = _same_outcome(wrong)
    assert kind == "GradcheckError"
    assert msg.startswith("While considering the imaginary part of complex inputs only, "
                          "Jacobian computed with forward mode mismatch")


# --------------------------------------------------------------------------- wrong backwards
def _fn(T, forward, backward, jvp=None):
    attrs = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    if jvp is not None:
        attrs["jvp"] = staticmethod(jvp)
    return type("Op", (T.autograd.Function,), attrs)


def _sin_fwd(ctx, x):
    ctx.save_for_backward(x)
    ctx.save_for_forward(x)
    return x.sin()


def _sign_error(ctx, g):
    (x,) = ctx.saved_tensors
    return -g * x.cos()


def _square_fwd(ctx, x):
    ctx.save_for_backward(x)
    return x * x


def _missing_factor(ctx, g):
    (x,) = ctx.saved_tensors
    return g * x  # should be 2 * g * x


def _mm_fwd(ctx, a, b):
    ctx.save_for_backward(a, b)
    return a @ b


def _transposed(ctx, g):
    a, b = ctx.saved_tensors
    return (g @ b.T).T, a.T @ g  # grad of a transposed (shapes agree: square inputs)


WRONG = {
    "sign_error": (_sin_fwd, _sign_error, [(3,)]),
    "missing_factor": (_square_fwd, _missing_factor, [(2, 2)]),
    "transposed_gradient": (_mm_fwd, _transposed, [(2, 2), (2, 2)]),
}


@pytest.mark.parametrize("name", sorted(WRONG))
@pytest.mark.parametrize("fast", [False, True])
def test_rejects_wrong_backward_with_torchs_message(name, fast):
    fwd, bwd, shapes = WRONG[name]

    def check(T):
        xs = tuple(_x(T, s, i) for i, s in enumerate(shapes))
        return T.autograd.gradcheck(_fn(T, fwd, bwd).apply, xs, fast_mode=fast)
    kind, msg = _same_outcome(check)
    assert kind == "GradcheckError" and msg.startswith("Jacobian mismatch for output 0")

    def quiet(T):
        xs = tuple(_x(T, s, i) for i, s in enumerate(shapes))
        return T.autograd.gradcheck(_fn(T, fwd, bwd).apply, xs, fast_mode=fast,
                                    raise_exception=False)
    assert _same_outcome(quiet) is False


def _cube_fwd(ctx, x):
    ctx.save_for_backward(x)
    return x ** 3


def _cube_detached(ctx, g):
    (x,) = ctx.saved_tensors
    return 3 * g * x.detach() ** 2  # right value, but not differentiable w.r.t. x


def _cube_right(ctx, g):
    (x,) = ctx.saved_tensors
    return 3 * g * x ** 2


@pytest.mark.parametrize("fast", [False, True])
def test_wrong_second_derivative_only_gradgradcheck_sees(fast):
    def check(T):
        x = _x(T, (3,))
        good = _fn(T, _cube_fwd, _cube_right).apply
        bad = _fn(T, _cube_fwd, _cube_detached).apply
        first = (T.autograd.gradcheck(bad, (x,), fast_mode=fast),
                 T.autograd.gradgradcheck(good, (x,), fast_mode=fast))
        second = T.autograd.gradgradcheck(bad, (x,), fast_mode=fast, raise_exception=False)
        return first, second
    assert _same_outcome(check) == ((True, True), False)

    def message(T):
        T.manual_seed(0)  # the random grad_outputs: the same draws in both libraries
        bad = _fn(T, _cube_fwd, _cube_detached).apply
        return T.autograd.gradgradcheck(bad, (_x(T, (3,)),), fast_mode=fast)
    kind, msg = _same_outcome(message)
    assert kind == "GradcheckError"
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0")
    if not fast:
        assert "analytical:tensor([[0., 0., 0.]" in msg


def test_rejects_wrong_jvp_in_forward_mode():
    for fast in (False, True):
        def check(T):
            op = _fn(T, _sin_fwd, lambda ctx, g: g,
                     jvp=lambda ctx, t: -t * ctx.saved_tensors[0].cos())
            return T.autograd.gradcheck(op.apply, (_x(T),), check_forward_ad=True,
                                        check_backward_ad=False, fast_mode=fast)
        _kind, msg = _same_outcome(check)
        assert msg.startswith("Jacobian computed with forward mode mismatch for output 0")


def test_complex_wrong_backward_message():
    def check(T):
        z = T.tensor(np.array([0.3 + 0.4j, -0.7 + 0.1j]), requires_grad=True)
        op = _fn(T, _square_fwd, lambda ctx, g: g * 2 * ctx.saved_tensors[0])  # missing conj
        return T.autograd.gradcheck(op.apply, (z,))
    _kind, msg = _same_outcome(check)
    assert msg.startswith("While considering the imaginary part of complex outputs only")


# --------------------------------------------------------------------------- other checks
def test_backward_not_multiplied_by_grad_output():
    def check(T):
        def bwd(ctx, g):
            return g * 2 if g.abs().sum() > 0 else T.ones_like(g)
        return T.autograd.gradcheck(_fn(T, lambda ctx, x: x * 2, bwd).apply, (_x(T),))
    assert _same_outcome(check) == ("GradcheckError", "backward not multiplied by grad_output")


def test_nondeterministic_backward_and_nondet_tol():
    def check(T, tol):
        calls = [0]

        def bwd(ctx, g):
            calls[0] += 1
            return g * (2 + calls[0] * 1e-9)
        op = _fn(T, lambda ctx, x: x * 2, bwd).apply
        return T.autograd.gradcheck(op, (_x(T),), nondet_tol=tol)
    _kind, msg = _same_outcome(lambda T: check(T, 0.0))
    assert msg.startswith("Backward is not reentrant")
    assert _same_outcome(lambda T: check(T, 1e-6)) is True


def test_undefined_output_grads():
    def make(T):
        def fwd(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        def bwd(ctx, g1, g2):
            if g1 is None and g2 is None:
                raise RuntimeError("cannot handle undefined gradients")
            if g1 is None:
                return g2 * 3
            if g2 is None:
                return g1 * 2
            return g1 * 2 + g2 * 3
        return _fn(T, fwd, bwd).apply
    _kind, msg = _same_outcome(lambda T: T.autograd.gradcheck(make(T), (_x(T),)))
    assert msg.startswith("Expected backward function to handle undefined output grads")
    assert _same_outcome(lambda T: T.autograd.gradcheck(make(T), (_x(T),),
                                                       check_undefined_grad=False)) is True


def test_no_differentiable_outputs():
    assert _same_outcome(lambda T: T.autograd.gradcheck(lambda x: (x > 0).double(),
                                                       (_x(T),))) is True
    assert _same_outcome(lambda T: T.autograd.gradcheck(lambda x: x.detach() * 2, (_x(T),))) \
        == ("GradcheckError", "Numerical gradient for function expected to be zero")


def test_input_validation():
    kind, msg = _same_outcome(lambda T: T.autograd.gradcheck(lambda x: x * 2,
                                                            (_x(T, rg=False),)))
    assert kind == "ValueError"
    kind, msg = _same_outcome(lambda T: T.autograd.gradcheck(
        lambda x: x * 2, (T.ones(1, dtype=T.float64, requires_grad=True).expand(3),)))
    assert kind == "RuntimeError" and "stride 0" in msg
    for T in LIBS:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            T.autograd.gradcheck(lambda x: x * 2, (T.ones(3, requires_grad=True),),
                                 raise_exception=False)
        assert any("is not a double precision" in str(m.message) for m in w)


def test_float32_input_fails_like_torch():
    _kind, msg = _same_outcome(lambda T: T.autograd.gradcheck(
        lambda x: x * 2, (T.ones(3, requires_grad=True),)))
    assert "numerical:tensor([[1.9670, 0.0000, 0.0000]" in msg


def test_argument_assertions():
    for kw in ({"check_forward_ad": False, "check_backward_ad": False},
               {"check_batched_grad": True, "check_backward_ad": False,
                "check_forward_ad": True}):
        _same_outcome(lambda T: T.autograd.gradcheck(lambda x: x, (_x(T),), **kw))
    kind, _ = _same_outcome(lambda T: T.autograd.gradgradcheck(
        lambda x: x, (_x(T),), check_rev_over_rev=False))
    assert kind == "AssertionError"


def test_gradcheck_error_is_runtime_error():
    assert issubclass(NGradcheckError, RuntimeError)
    from ndgrad.autograd.gradcheck import gradcheck, gradgradcheck
    assert gradcheck is ndgrad.autograd.gradcheck and gradgradcheck is \
        ndgrad.autograd.gradgradcheck


@pytest.mark.parametrize("fast", [False, True])
def test_edge_shapes_and_non_tensor_arguments(fast):
    def check(T):
        x0 = T.tensor(0.7, dtype=T.float64, requires_grad=True)
        empty = T.zeros(0, 3, dtype=T.float64, requires_grad=True)
        nc = T.arange(12, dtype=T.float64).reshape(3, 4).t().requires_grad_()
        return (T.autograd.gradcheck(lambda x: x.sin() * 2, x0, fast_mode=fast),
                T.autograd.gradcheck(lambda x: x.sum(0), (empty,), fast_mode=fast),
                T.autograd.gradcheck(lambda x, k, n: (x * k).sum(1) ** n, (nc, 3.0, 2),
                                     fast_mode=fast),
                T.autograd.gradgradcheck(lambda x: (x * x).sum(1), (nc,), fast_mode=fast),
                T.autograd.gradcheck(lambda x, i: x[i], (nc, T.tensor([0, 2])),
                                     fast_mode=fast))
    assert _same_outcome(check) == (True,) * 5


def test_forward_mode_undefined_tangent_check():
    def make(T):
        fw = T.autograd.forward_ad

        def f(x, y):
            # Deliberately treats "no tangent" differently from "zero tangent" (only when x
            # has one, so the Jacobian checks, where all inputs are dual or none is, pass).
            if fw.unpack_dual(x).tangent is not None and fw.unpack_dual(y).tangent is None:
                return x * y + x
            return x * y
        return f

    def check(T, undefined):
        x = _x(T, (3,))
        y = _x(T, (3,), 1)
        return T.autograd.gradcheck(make(T), (x, y), check_forward_ad=True,
                                    check_backward_ad=False, check_undefined_grad=undefined,
                                    raise_exception=True)
    res = [_outcome(T, lambda T: check(T, True)) for T in LIBS]
    assert res[0][0] == res[1][0] == "GradcheckError"
    assert all("Mismatch in tangent values for output with index: " in r[1] for r in res)
    assert _same_outcome(lambda T: check(T, False)) is True


# --------------------------------------------------------------------------- batched forward AD
_BATCHED_FWD_FUNCS = {
    "matmul_tanh": (lambda L, a, b: (a @ b).tanh().sum(1), [(3, 4), (4, 2)]),
    "views_reductions": (lambda L, a, b: (a.t() * b[:1].t()).mean(0), [(3, 4), (2, 4)]),
    "inplace": (lambda L, a, b: a.clone().mul_(2) + b.sum(), [(3, 4), (2,)]),
    "two_outputs": (lambda L, a, b: (a.sin(), b.exp() * a[0, :2]), [(3, 4), (2,)]),
}


@pytest.mark.parametrize("name", sorted(_BATCHED_FWD_FUNCS))
def test_check_batched_forward_grad_passes_where_torch_passes(name):
    fn, shapes = _BATCHED_FWD_FUNCS[name]
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in shapes]
    for L in (ndgrad, torch):
        ins = tuple(L.tensor(a, requires_grad=True) for a in arrays)
        assert L.autograd.gradcheck(lambda *xs: fn(L, *xs), ins, check_forward_ad=True,
                                    check_batched_forward_grad=True) is True


def test_check_batched_forward_grad_catches_a_wrong_batched_rule(monkeypatch):
    """A batched forward rule that mixes the batch (sums over it) is caught, with torch's
    message; the unbatched checks still pass."""
    from ndgrad._ops.reduction import SUM_DIM
    good = SUM_DIM.batched_jvp
    monkeypatch.setattr(SUM_DIM, "batched_jvp", lambda ctx, t: good(ctx, t).sum(0).expand(
        good(ctx, t).shape))
    x = ndgrad.tensor(np.random.default_rng(6).standard_normal((3, 4)), requires_grad=True)
    f = lambda a: a.sum(1)  # noqa: E731
    assert ndgrad.autograd.gradcheck(f, (x,), check_forward_ad=True)
    with pytest.raises(ndgrad.autograd.GradcheckError,
                       match="gradcheck failed while testing batched gradient computation "
                             "with forward-mode AD"):
        ndgrad.autograd.gradcheck(f, (x,), check_forward_ad=True,
                                  check_batched_forward_grad=True)
    assert ndgrad.autograd.gradcheck(f, (x,), check_forward_ad=True,
                                     check_batched_forward_grad=True,
                                     raise_exception=False) is False
