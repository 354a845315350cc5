"""Custom autograd Functions against torch 2.13: both forward styles, every ctx feature,
once_differentiable, double backward through hand-written backwards, and torch's errors.

Each test builds the same Function in both libraries (``T`` is ``torch`` or ``ndgrad``), runs
it on the same float64 data and compares values, gradients, grad_fn names and errors.
"""

# Closures in the per-library loops run inside their own iteration.
# ruff: noqa: B023

import warnings

import numpy as np
import pytest
import torch
from torch.autograd.function import once_differentiable as t_once

import ndgrad
from ndgrad.autograd.function import once_differentiable as nd_once
from ndgrad.autograd.function import run_jvp

LIBS = (torch, ndgrad)


def _arr(shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=shape)


def _np(t):
    if t is None:
        return None
    return t.detach().numpy().copy() if isinstance(t, torch.Tensor) else t.detach()._data.copy()


def _same(a, b, tol=1e-12):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, tol)
        return
    assert (a is None) == (b is None), (a, b)
    if a is None:
        return
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is compared with torch's
        return type(e).__name__, str(e)
    return None


def _both_errors(make):
    """Run make(T) in both libraries; both must raise the same type and message."""
    errs = [_error(lambda: make(T)) for T in LIBS]
    assert errs[0] is not None
    assert errs[0] == errs[1]
    return errs[0]


def _once(T):
    return t_once if T is torch else nd_once


# --------------------------------------------------------------------------- Functions
def make_fn(T, backward=None, name="F", k=2, **methods):
    """A Function ``name`` of library ``T`` whose ``forward(ctx, x)`` returns ``x * k``;
    ``backward`` (unless None) and the other ``methods`` (vjp, setup_context) are its static
    methods. Built by the metaclass exactly as a class statement would be."""
    attrs = {"forward": staticmethod(lambda ctx, x: x * k)}
    if backward is not None:
        attrs["backward"] = staticmethod(backward)
    attrs.update((n, staticmethod(m)) for n, m in methods.items())
    return type(name, (T.autograd.Function,), attrs)


def make_exp(T):
    class Exp(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out
    return Exp


def make_scaled_tanh(T):
    """forward(x, scale) with setup_context; backward written in ops (double-differentiable)."""
    class ScaledTanh(T.autograd.Function):
        @staticmethod
        def forward(x, w, scale=2.0):
            return (x * w).tanh() * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w, scale = inputs
            ctx.scale = scale
            ctx.save_for_backward(x, w, output)

        @staticmethod
        def backward(ctx, g):
            x, w, out = ctx.saved_tensors
            t = out / ctx.scale
            d = g * ctx.scale * (1 - t * t)
            return d * w, d * x, None
    return ScaledTanh


def test_ctx_style_values_grads_and_node_name():
    res = []
    for T in LIBS:
        x = T.tensor(_arr((2, 3)), requires_grad=True)
        y = make_exp(T).apply(x)
        assert type(y.grad_fn).__name__ == "ExpBackward"
        assert y.grad_fn.name() == "ExpBackward"
        assert type(y.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"
        (y * y).sum().backward()
        res.append((y, x.grad))
    _same(res[0], res[1])


def test_setup_context_style_defaults_and_double_backward():
    res = []
    for T in LIBS:
        x = T.tensor(_arr((3,), 1), requires_grad=True)
        w = T.tensor(_arr((3,), 2), requires_grad=True)
        F = make_scaled_tanh(T)
        y = F.apply(x, w)
        y3 = F.apply(x, w, 3.0)
        assert y.grad_fn.name() == "ScaledTanhBackward"
        assert y.grad_fn.scale == 2.0 and y3.grad_fn.scale == 3.0
        gx, gw = T.autograd.grad((y * y3).sum(), (x, w), create_graph=True)
        ggx, ggw = T.autograd.grad((gx * gx).sum() + gw.sum(), (x, w), create_graph=True)
        (g3,) = T.autograd.grad(ggx.sum() + ggw.sum(), x)
        res.append((y, y3, gx, gw, ggx, ggw, g3))
    _same(res[0], res[1], 1e-10)


def test_setup_context_binding_errors():
    def kw_only(T):
        class F(T.autograd.Function):
            @staticmethod
            def forward(x, *, scale=1.0):
                return x * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g
        return F.apply(T.ones(2, requires_grad=True))
    _both_errors(kw_only)

    def ctx_forward_with_setup(T):
        F = make_fn(T, lambda ctx, g: g, setup_context=lambda ctx, inputs, output: None)
        return F.apply(T.ones(2, requires_grad=True))
    assert _both_errors(ctx_forward_with_setup)[0] == "TypeError"


def test_vjp_alias_and_missing_methods():
    for T in LIBS:
        V = make_fn(T, name="V", k=3, vjp=lambda ctx, g: g * 3)
        x = T.ones(2, requires_grad=True)
        (g,) = T.autograd.grad(V.apply(x).sum(), x)
        assert g.tolist() == [3.0, 3.0]

    def both(T):
        B = make_fn(T, lambda ctx, g: g, name="B", k=3, vjp=lambda ctx, g: g)
        B.apply(T.ones(2, requires_grad=True)).sum().backward()
    assert "not allowed" in _both_errors(both)[1]

    def no_backward(T):
        make_fn(T, name="N").apply(T.ones(2, requires_grad=True)).sum().backward()
    assert _both_errors(no_backward)[0] == "NotImplementedError"

    def no_forward(T):
        class N(T.autograd.Function):
            pass
        N.apply(T.ones(2, requires_grad=True))
    assert _both_errors(no_forward)[0] == "NotImplementedError"


def test_instantiation_warns_and_legacy_call_errors():
    for T in LIBS:
        class F(T.autograd.Function):
            pass
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f = F()
        assert any(issubclass(x.category, DeprecationWarning) and "should not be instantiated"
                   in str(x.message) for x in w)
        del f


# --------------------------------------------------------------------------- arguments
def make_affine(T):
    """Non-tensor arguments in the middle, a tensor not requiring grad, extra None returned."""
    class Affine(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, b, name="n"):
            ctx.k = k
            ctx.needs_seen = ctx.needs_input_grad
            return x * k + b, name

        @staticmethod
        def backward(ctx, g, g_name):
            ctx.backward_needs = ctx.needs_input_grad
            ctx.g_name = g_name
            return g * ctx.k, None, g, None, None
    return Affine


def test_non_tensor_arguments_outputs_and_needs_input_grad():
    res = []
    for T in LIBS:
        x = T.tensor(_arr((2,)), requires_grad=True)
        b = T.tensor(_arr((2,), 3))
        y, name = make_affine(T).apply(x, 2.5, b)
        assert name == "n"
        node = y.grad_fn
        assert node.needs_seen == (True, False, False)
        assert len(node.next_functions) == 2 and node.next_functions[1] == (None, 0)
        y.sum().backward()
        assert node.backward_needs == (True, False, False)
        assert node.g_name is None
        res.append((y, x.grad))
    _same(res[0], res[1])


@pytest.mark.parametrize("case", ["too_few", "extra_non_none", "grad_for_non_tensor",
                                  "bad_shape", "bad_shape_after_non_tensor"])
def test_returned_gradient_errors(case):
    def make(T):
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, k, a, b):
                return a * b * k

            @staticmethod
            def backward(ctx, g):
                if case == "too_few":
                    return None, g
                if case == "extra_non_none":
                    return None, g, g, g
                if case == "grad_for_non_tensor":
                    return g, g, g
                if case == "bad_shape":
                    return None, T.ones(3), None
                return None, None, T.ones(3)
        a = T.ones(2, requires_grad=True)
        b = T.ones(2, requires_grad=True)
        F.apply(2.0, a, b).sum().backward()
    _both_errors(make)


def test_invalid_gradient_message_text():
    def make(T):
        MyFn = make_fn(T, lambda ctx, g: T.ones(3), name="MyFn")
        MyFn.apply(T.ones(2, requires_grad=True)).sum().backward()
    err = _both_errors(make)
    assert err == ("RuntimeError", ("Function MyFnBackward returned an invalid gradient at "
                                    "index 0 - got [3] but expected shape compatible with [2]"))


def test_broadcast_gradient_is_summed_and_dtype_cast():
    res = []
    for T in LIBS:
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.sum()

            @staticmethod
            def backward(ctx, g):
                # (3, 2) for a (2,) input: summed back; float32 for float64: cast.
                return (g * T.ones(3, 2)).to(T.float32)
        x = T.tensor(_arr((2,)), requires_grad=True)
        F.apply(x).backward()
        assert x.grad.dtype == T.float64
        res.append(x.grad)
    _same(res[0], res[1])


def test_returning_none_and_unused_input():
    res = []
    for T in LIBS:
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * 2 + y

            @staticmethod
            def backward(ctx, g):
                return None, g
        x = T.ones(2, requires_grad=True)
        y = T.ones(2, requires_grad=True)
        out = F.apply(x, y)
        err = _error(lambda: T.autograd.grad(out.sum(), x, retain_graph=True))
        gy = T.autograd.grad(out.sum(), (x, y), allow_unused=True)
        res.append((err, gy[0] is None, gy[1]))
    assert res[0][:2] == res[1][:2]
    _same(res[0][2], res[1][2])


# --------------------------------------------------------------------------- saved tensors
def test_saved_output_unpacks_with_node_and_is_version_checked():
    msgs = []
    for T in LIBS:
        x = T.tensor(_arr((2,)), requires_grad=True)
        y = make_exp(T).apply(x)
        (saved,) = y.grad_fn.saved_tensors
        assert saved.grad_fn is y.grad_fn and saved.requires_grad
        with T.no_grad():
            y.mul_(2)
        msgs.append(_error(lambda: y.sum().backward()))
    assert msgs[0] == msgs[1]
    assert "which is output 0 of Exp, is at version 1; expected version 0" in msgs[0][1]


def test_saved_input_modified_in_place_is_detected():
    def make(T):
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * g * x
        a = T.ones(2, requires_grad=True)
        x = a * 1
        y = F.apply(x)
        x.add_(1)
        y.sum().backward()
    msg = _both_errors(make)[1]
    assert "is at version 1; expected version 0 instead" in msg


def test_saved_tensors_freed_after_backward_and_retain_graph():
    def make(T):
        x = T.ones(2, requires_grad=True)
        y = make_exp(T).apply(x)
        y.sum().backward()
        return y.grad_fn.saved_tensors
    assert "backward through the graph a second time" in _both_errors(make)[1]

    def twice(T):
        x = T.ones(2, requires_grad=True)
        y = make_exp(T).apply(x)
        y.sum().backward()
        y.sum().backward()
    _both_errors(twice)
    for T in LIBS:
        x = T.ones(2, requires_grad=True)
        y = make_exp(T).apply(x)
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        assert np.allclose(_np(x.grad), 2 * np.e)


def test_save_intermediate_and_none_and_bad_type():
    res = []
    for T in LIBS:
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                t = x.sin()
                ctx.save_for_backward(t, None, x)
                return t * t

            @staticmethod
            def backward(ctx, g):
                t, none, x = ctx.saved_tensors
                assert none is None and not t.requires_grad
                return g * 2 * t * x.cos()
        x = T.tensor(_arr((3,)), requires_grad=True)
        (g,) = T.autograd.grad(F.apply(x).sum(), x, create_graph=True)
        res.append(g)
    _same(res[0], res[1])

    def bad(T):
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        F.apply(T.ones(2, requires_grad=True))
    assert _both_errors(bad)[0] == "TypeError"


def test_setup_context_saving_returned_input_errors():
    def make(T):
        class F(T.autograd.Function):
            @staticmethod
            def forward(x):
                return x

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                return g
        F.apply(T.ones(2, requires_grad=True))
    assert "returned as-is as output is being saved" in _both_errors(make)[1]


# --------------------------------------------------------------------------- outputs
def make_dirty(T):
    class Dirty(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Dirty


def test_mark_dirty_bumps_version_and_rebases_history():
    res = []
    for T in LIBS:
        a = T.tensor(_arr((3,)), requires_grad=True)
        x = a * 1
        v0 = x._version
        y = make_dirty(T).apply(x)
        assert y is x and x._version - v0 == 2
        assert x.grad_fn.name() == "DirtyBackward"
        (y * y).sum().backward()
        res.append((y, a.grad))
        b = T.tensor(_arr((3,), 1))
        z = make_dirty(T).apply(b)
        assert z is b and b._version == 2 and not z.requires_grad
    _same(res[0], res[1])


def test_mark_dirty_on_view_gives_copyslices():
    res = []
    for T in LIBS:
        a = T.tensor(_arr((4,)), requires_grad=True)
        base = a * 1
        v = base[:2]
        y = make_dirty(T).apply(v)
        assert y is v
        assert type(base.grad_fn).__name__ == "CopySlices"
        (base * base).sum().backward()
        res.append((base, a.grad))
    _same(res[0], res[1])


def test_mark_dirty_errors():
    def leaf(T):
        make_dirty(T).apply(T.ones(2, requires_grad=True))
    assert _both_errors(leaf)[1] == ("a leaf Variable that requires grad has been used in an "
                                     "in-place operation.")

    def not_returned(T):
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g
        F.apply(T.ones(2, requires_grad=True) * 1)
    assert "marked as dirty" in _both_errors(not_returned)[1]


def test_returned_input_is_a_new_tensor_with_history():
    res = []
    for T in LIBS:
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                return x, w * 2

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 3, g2 * 2
        x = T.tensor(_arr((2,)), requires_grad=True)
        w = T.tensor(_arr((2,), 1))
        o1, o2 = F.apply(x, w)
        assert o1 is not x and o1.grad_fn.name() == "FBackward" and o1.output_nr == 0
        assert o2.output_nr == 1
        o1.sum().backward()
        with T.no_grad():
            p1, _ = F.apply(x, w)
        assert p1 is not x and not p1.requires_grad
        res.append(x.grad)
    _same(res[0], res[1])


def test_non_differentiable_outputs_get_zero_grads():
    res = []
    for T in LIBS:
        seen = {}

        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = x.argmax()
                ctx.mark_non_differentiable(idx)
                return x * 2, idx, 3, (x > 0).long(), x * 3

            @staticmethod
            def backward(ctx, g, gi, gn, gl, g3):
                seen.update(gi=gi, gn=gn, gl=gl, g3=g3)
                return g * 2 + g3 * 3
        x = T.tensor(_arr((3,)), requires_grad=True)
        out = F.apply(x)
        assert [getattr(o, "requires_grad", None) for o in out] == [True, False, None, False,
                                                                      True]
        out[0].sum().backward()
        assert seen["gn"] is None
        res.append((x.grad, seen["gi"], seen["gl"], seen["g3"]))
        assert seen["gi"].dtype == T.int64 and seen["gl"].dtype == T.int64
    _same(res[0], res[1])


def test_set_materialize_grads_false_passes_none():
    res = []
    for T in LIBS:
        seen = []

        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1 is None, g2 is None))
                out = None
                if g1 is not None:
                    out = g1 * 2
                if g2 is not None:
                    out = g2 * 3 if out is None else out + g2 * 3
                return out
        x = T.tensor(_arr((2,)), requires_grad=True)
        F.apply(x)[1].sum().backward()
        F.apply(x)[0].sum().backward()
        res.append((seen, x.grad))
    assert res[0][0] == res[1][0] == [(True, False), (False, True)]
    _same(res[0][1], res[1][1])


def test_no_grad_and_no_input_requiring_grad():
    for T in LIBS:
        x = T.tensor(_arr((2,)), requires_grad=True)
        with T.no_grad():
            y = make_exp(T).apply(x)
        assert not y.requires_grad and y.grad_fn is None
        z = make_exp(T).apply(T.ones(2))
        assert not z.requires_grad


# --------------------------------------------------------------------------- higher order
def make_cube(T, once=False):
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x

    class Cube(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

    Cube.backward = staticmethod(_once(T)(backward) if once else backward)
    return Cube


def test_double_and_triple_backward_through_custom_function():
    res = []
    for T in LIBS:
        x = T.tensor(_arr((3,)), requires_grad=True)
        y = make_cube(T).apply(x)
        (g1,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (g2,) = T.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = T.autograd.grad(g2.sum(), x)
        res.append((g1, g2, g3))
    _same(res[0], res[1])
    np.testing.assert_allclose(_np(res[1][2]), np.full(3, 6.0))


def test_once_differentiable():
    res = []
    for T in LIBS:
        modes = []

        class Sq(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @_once(T)
            def backward(ctx, g):
                modes.append(T.is_grad_enabled())
                (x,) = ctx.saved_tensors
                return 2 * g * x
        x = T.tensor(_arr((3,)), requires_grad=True)
        (g,) = T.autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
        assert not g.requires_grad  # implicit grad_output does not require grad
        go = T.ones(3, requires_grad=True)
        (g2,) = T.autograd.grad(Sq.apply(x), x, go, create_graph=True)
        assert g2.requires_grad and type(g2.grad_fn).__name__ == "Error"
        err = _error(lambda: g2.sum().backward())
        res.append((modes, g, g2, err))
    assert res[0][0] == res[1][0] == [False, False]
    assert res[0][3] == res[1][3] == ("RuntimeError", ("trying to differentiate twice a "
                                                       "function that was marked with "
                                                       "@once_differentiable"))
    _same(res[0][1:3], res[1][1:3])


def test_hooks_on_custom_node():
    res = []
    for T in LIBS:
        x = T.tensor(_arr((2,)), requires_grad=True)
        y = make_exp(T).apply(x)
        calls = []
        y.grad_fn.register_prehook(lambda gs: (gs[0] * 10,))
        y.grad_fn.register_hook(lambda gi, go: calls.append(len(gi)))
        y.sum().backward()
        res.append((calls, x.grad))
    assert res[0][0] == res[1][0] == [1]
    _same(res[0][1], res[1][1])


def test_custom_function_inside_larger_graph_and_retain_grad():
    res = []
    for T in LIBS:
        x = T.tensor(_arr((2, 2)), requires_grad=True)
        h = x @ x
        y = make_exp(T).apply(h)
        y.retain_grad()
        (y.sin() * h).sum().backward()
        res.append((y.grad, x.grad))
    _same(res[0], res[1], 1e-10)


# --------------------------------------------------------------------------- forward mode
def make_jvp_fn(T):
    class J(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_forward(x)
            ctx.k = k
            return x.sin() * k, x * 2, "tag"

        @staticmethod
        def jvp(ctx, tx, tk):
            (x,) = ctx.saved_tensors  # in jvp: what save_for_forward kept
            return tx * x.cos() * ctx.k, tx * 2, None

        @staticmethod
        def backward(ctx, g1, g2, g3):
            return g1, None
    return J


def test_jvp_through_forward_ad_matches_torch():
    a, t = _arr((3,)), _arr((3,), 5)
    res = []
    for T in LIBS:
        fw = T.autograd.forward_ad
        with fw.dual_level():
            o = make_jvp_fn(T).apply(fw.make_dual(T.tensor(a), T.tensor(t)), 1.5)
            assert o[2] == "tag"
            res.append([fw.unpack_dual(p).tangent for p in o[:2]] + [o[0], o[1]])
    _same(res[0], res[1])


def test_run_jvp_contract():
    """run_jvp: one tangent per positional argument in, one per output out."""
    class F(ndgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k, "tag"

        @staticmethod
        def jvp(ctx, tx, tk):
            assert tk is None
            return tx * ctx.k, None

        @staticmethod
        def backward(ctx, g, g2):
            return g * ctx.k, None
    y, _ = F.apply(ndgrad.ones(2, requires_grad=True), 3.0)
    out = run_jvp(y.grad_fn, (ndgrad.tensor([1.0, 2.0]), None))
    assert len(out) == 2 and out[1] is None and out[0].tolist() == [3.0, 6.0]


def test_jvp_missing_raises_torch_message():
    F = make_fn(ndgrad, lambda ctx, g: g * 2)
    y = F.apply(ndgrad.ones(2, requires_grad=True))
    with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
        run_jvp(y.grad_fn, (ndgrad.ones(2),))


def test_no_reference_cycle_through_saved_output():
    """An output saved for backward must not keep itself alive through its grad_fn."""
    import gc
    import weakref
    gc_was = gc.isenabled()
    gc.disable()
    try:
        x = ndgrad.ones(3, requires_grad=True)

        class F(ndgrad.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x.exp()
                idx = x.argmax()
                ctx.save_for_backward(out)
                ctx.mark_non_differentiable(idx)
                return out, idx

            @staticmethod
            def backward(ctx, g, gi):
                (out,) = ctx.saved_tensors
                return g * out
        y, i = F.apply(x)
        ref, node = weakref.ref(y), weakref.ref(y.grad_fn)
        del y, i
        assert ref() is None and node() is None
    finally:
        if gc_was:
            gc.enable()


def test_backward_returning_a_non_tensor_errors():
    def make(T):
        WT = make_fn(T, lambda ctx, g: 3.0, name="WT")
        WT.apply(T.ones(2, requires_grad=True)).sum().backward()
    assert _both_errors(make) == ("RuntimeError", "expected Variable or None (got float)")


def test_anomaly_mode_reports_custom_function_and_its_forward_stack():
    msgs = []
    for T in LIBS:
        NanB = make_fn(T, lambda ctx, g: g * float("nan"), name="NanB")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with T.autograd.detect_anomaly():
                err = _error(lambda: NanB.apply(T.ones(2, requires_grad=True)).sum().backward())
        assert any("Error detected in NanBBackward. Traceback of forward call" in str(m.message)
                   and "NanB.apply" in str(m.message) for m in w)
        msgs.append(err)
    assert msgs[0] == msgs[1] == ("RuntimeError",
                                  "Function 'NanBBackward' returned nan values in its 0th output.")


def test_saved_tensor_hooks_apply_to_custom_function():
    res = []
    for T in LIBS:
        calls = []
        x = T.ones(2, dtype=T.float64, requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(lambda t: (calls.append("pack"), t)[1],
                                                  lambda t: (calls.append("unpack"), t)[1]):
            y = make_exp(T).apply(x)
        y.sum().backward()
        res.append((calls, x.grad))
    assert res[0][0] == res[1][0] == ["pack", "unpack"]
    _same(res[0][1], res[1][1])


def test_legacy_non_static_methods_subclassing_and_ctx_apply():
    res = []
    for T in LIBS:
        class L(T.autograd.Function):
            def forward(ctx, x):  # no @staticmethod: still called as forward(ctx, x)
                return x * 2

            def backward(ctx, g):
                return g * 2

        class B(L):
            pass
        x = T.ones(2, requires_grad=True)
        y = L.apply(x)
        names = (y.grad_fn.name(), B.apply(x).grad_fn.name())
        direct = y.grad_fn.apply(T.ones(2))  # the user's backward, result as is
        base_err = _error(lambda: T.autograd.Function.apply(x))
        res.append((names, direct, base_err))
    assert res[0][0] == res[1][0] == ("LBackward", "BBackward")
    assert res[0][2] == res[1][2]
    _same(res[0][1], res[1][1])


def test_jvp_receives_zeros_for_tensors_without_tangent_and_none_for_non_tensors():
    seen = []
    for T in LIBS:
        fw = T.autograd.forward_ad
        got = []

        class J(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                return x * y * k

            @staticmethod
            def jvp(ctx, tx, ty, tk):
                got.append((_np(tx), _np(ty), tk))
                return tx * 3

            @staticmethod
            def backward(ctx, g):
                return g, g, None
        with fw.dual_level():
            d = fw.make_dual(T.ones(2, dtype=T.float64), T.tensor([1.0, 2.0], dtype=T.float64))
            out = fw.unpack_dual(J.apply(d, T.ones(2, dtype=T.float64), 3.0)).tangent
        seen.append((got, out))
    (tx0, ty0, tk0), (tx1, ty1, tk1) = seen[0][0][0], seen[1][0][0]
    np.testing.assert_array_equal(tx0, tx1)
    np.testing.assert_array_equal(ty0, ty1)
    assert tk0 is None and tk1 is None and not ty1.any()
    _same(seen[0][1], seen[1][1])


@pytest.mark.parametrize("clear", [False, True])
@pytest.mark.parametrize("boxed", [False, True])
@pytest.mark.parametrize("twice", [False, True])
@pytest.mark.parametrize("retain", [False, True])
def test_clear_saved_tensors_on_access_and_boxed_grads_call(clear, boxed, twice, retain):
    """torch 2.13's Function options: ``clear_saved_tensors_on_access`` (a second read of
    ctx.saved_tensors, in this backward or a retained one, raises) and ``boxed_grads_call``
    (backward gets the output gradients as one list)."""
    def run(L):
        class F(L.autograd.Function):
            clear_saved_tensors_on_access = clear
            boxed_grads_call = boxed

            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(x, y)
                return x * y, x + y

            @staticmethod
            def backward(ctx, *grads):
                if boxed:
                    assert len(grads) == 1 and isinstance(grads[0], list)
                    g1, g2 = grads[0]
                    grads[0].clear()
                else:
                    g1, g2 = grads
                a, b = ctx.saved_tensors
                if twice:
                    ctx.saved_tensors
                return g1 * b + g2, g1 * a + g2
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = L.tensor([3.0, 4.0], requires_grad=True)
        o = F.apply(x, y)
        try:
            (o[0].sum() + o[1].sum() * 2).backward(retain_graph=retain)
            if retain:
                o[0].sum().backward()
        except RuntimeError as e:
            return str(e), None if x.grad is None else x.grad.tolist()
        return x.grad.tolist(), y.grad.tolist()
    assert run(ndgrad) == run(torch)
