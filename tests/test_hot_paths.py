"""The dispatcher's and the hot rules' fast paths give exactly what the general paths give.

A plain backward runs mul/tanh/sigmoid/relu/pow rules and sum_to on raw arrays; with
``create_graph=True`` the same rules run in ndgrad ops. Both must agree bitwise, and with
torch. The fast paths must also leave saved-tensor hooks, version checks and complex inputs
exactly as before.
"""

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad import _state

SHAPES = [((3, 4), (4,)), ((3, 4), (3, 1)), ((2, 3, 4), ()), ((5,), (1,)), ((3, 4), (3, 4)),
          ((), ())]


def _f(L, x, w):
    y = (x * w * x) ** 2 + x ** 3 + (x * 2) ** 0.5 + (x * w * w + 3) ** -1.5 + x ** 2.5
    y = (y.tanh() * w).sigmoid() - 0.25
    return (y.relu() * w + w * 2 - 1).sum()


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("sx,sw", SHAPES)
def test_plain_backward_equals_op_level_rules_and_torch(dt, sx, sw):
    rng = np.random.default_rng(0)
    xa = (np.abs(rng.standard_normal(sx)) + 0.1).astype(dt)
    wa = rng.standard_normal(sw).astype(dt)
    got = []
    for cg in (False, True):
        x = ndgrad.tensor(xa, requires_grad=True)
        w = ndgrad.tensor(wa, requires_grad=True)
        gx, gw = ndgrad.autograd.grad(_f(ndgrad, x, w), (x, w), create_graph=cg)
        assert (gx.grad_fn is not None) == cg
        got.append((gx.detach().numpy(), gw.detach().numpy()))
    for a, b in zip(*got):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    tx = torch.tensor(xa, requires_grad=True)
    tw = torch.tensor(wa, requires_grad=True)
    tgx, tgw = torch.autograd.grad(_f(torch, tx, tw), (tx, tw))
    tol = 1e-4 if dt == np.float32 else 1e-10
    np.testing.assert_allclose(got[0][0], tgx.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(got[0][1], tgw.numpy(), rtol=tol, atol=tol)


def test_backward_accumulates_broadcast_grads_as_torch():
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((4, 3)).astype(np.float32)
    ba = rng.standard_normal((3,)).astype(np.float32)
    res = {}
    for L in (ndgrad, torch):
        x = L.tensor(xa, requires_grad=True)
        b = L.tensor(ba, requires_grad=True)
        for _ in range(2):
            ((x + b).tanh() * b).sum().backward()
        res[L.__name__] = (x.grad.numpy(), b.grad.numpy())
    for a, t in zip(res["ndgrad"], res["torch"]):
        np.testing.assert_allclose(a, t, rtol=1e-5, atol=1e-6)


def test_saved_tensor_hooks_still_apply_and_counter_resets():
    calls = {}
    for L in (ndgrad, torch):
        n = {"pack": 0, "unpack": 0}

        def pack(t, n=n):
            n["pack"] += 1
            return t

        def unpack(t, n=n):
            n["unpack"] += 1
            return t

        x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        w = L.tensor([1.5, 2.0, -3.0])
        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = ((x * w).tanh() ** 2).sigmoid().relu().sum()
        y.backward()
        calls[L.__name__] = (dict(n), x.grad.numpy().copy())
    assert calls["ndgrad"][0] == calls["torch"][0]
    np.testing.assert_allclose(calls["ndgrad"][1], calls["torch"][1], rtol=1e-4, atol=1e-7)
    assert _state.saved_hooks_active == 0
    with pytest.raises(ZeroDivisionError):
        with ndgrad.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            assert _state.saved_hooks_active == 1
            1 / 0
    assert _state.saved_hooks_active == 0


@pytest.mark.parametrize("op", ["mul", "tanh", "pow"])
def test_in_place_change_of_saved_tensor_raises_as_torch(op):
    msgs = []
    for L in (ndgrad, torch):
        x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        w = L.tensor([1.5, 2.0, -3.0])
        h = x * 1.0
        if op == "mul":
            y = h * w
            w.add_(1)
        elif op == "tanh":
            y = h.tanh()
            y.add_(1)
        else:
            y = h ** 3
            h.mul_(2)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_complex_and_mixed_dtypes_take_the_general_path():
    za = np.array([1 + 2j, -0.5 + 1j], np.complex64)
    res = {}
    for L in (ndgrad, torch):
        z = L.tensor(za, requires_grad=True)
        x = L.tensor([0.5, 1.5], dtype=L.float64, requires_grad=True)
        y = (z * z.conj()).real.sum() + (z * 2).tanh().abs().sum() + (x * 2.0).sum()
        y = y + (x.float() * L.tensor([1.0, 2.0])).sum()
        y.backward()
        res[L.__name__] = (z.grad.numpy(), x.grad.numpy(), x.grad.dtype)
    np.testing.assert_allclose(res["ndgrad"][0], res["torch"][0], rtol=1e-5)
    np.testing.assert_allclose(res["ndgrad"][1], res["torch"][1], rtol=1e-12)
    assert str(res["ndgrad"][2]) == str(res["torch"][2])


def test_scalar_fast_path_dtypes_and_grad_fns_match_torch():
    for dt in ("float16", "float32", "float64"):
        out = []
        for L in (ndgrad, torch):
            x = L.tensor([1.0, -2.0, 3.0], dtype=getattr(L, dt), requires_grad=True)
            ys = [x * 2, x - 1, x + 2.5, x / 4, x ** 2, 2 - x, x > 1]
            out.append([(str(y.dtype), type(y.grad_fn).__name__ if y.grad_fn else None,
                         y.detach().double().numpy()) for y in ys])
        for a, b in zip(*out):
            assert a[0] == b[0] and a[1] == b[1]
            np.testing.assert_allclose(a[2], b[2], rtol=1e-3)


REDUCTIONS = [dict(), dict(dim=1), dict(dim=(0, 2)), dict(dim=0, keepdim=True),
              dict(dim=(1, 2), keepdim=True)]


@pytest.mark.parametrize("red", ["sum", "mean"])
@pytest.mark.parametrize("kw", REDUCTIONS)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_sum_mean_rules_raw_path_equals_op_path_and_torch(red, kw, dt):
    """sum/mean rules skip the unsqueeze/expand/div ops when nothing is recorded (plain
    backward, or create_graph with a gradient that needs no grad); the result is the same
    view of the gradient (strides, base) or the same fresh quotient as the op path (taken when
    the incoming gradient requires grad) and as torch."""
    xa = np.random.default_rng(2).standard_normal((2, 3, 4)).astype(dt)
    ga_shape = getattr(np.ones((2, 3, 4)), "sum")(axis=kw.get("dim"),
                                                  keepdims=kw.get("keepdim", False)).shape
    ga = (np.arange(int(np.prod(ga_shape))).reshape(ga_shape) / 7 + 1).astype(dt)
    out = {}
    for L in (ndgrad, torch):
        x = L.tensor(xa, requires_grad=True)
        for mode in ("plain", "create_graph", "recorded"):
            y = getattr(x, red)(**kw)
            g = L.tensor(ga, requires_grad=mode == "recorded")
            r = L.autograd.grad(y, x, g, create_graph=mode != "plain")[0]
            out[L.__name__, mode] = (r.detach().numpy().copy(), r.stride(), r._is_view(),
                                     r._base is g, r.requires_grad)
    for mode in ("plain", "create_graph", "recorded"):
        a, t = out["ndgrad", mode], out["torch", mode]
        np.testing.assert_array_equal(a[0], t[0])
        assert a[1:] == t[1:]
    for mode in ("plain", "create_graph"):
        np.testing.assert_array_equal(out["ndgrad", mode][0], out["ndgrad", "recorded"][0])


def test_sum_rule_raw_view_follows_in_place_change_of_its_gradient():
    """The raw path's result is a view of the incoming gradient, as the op path's is: an
    in-place change of the gradient shows through it, in ndgrad as in torch."""
    res = {}
    for L in (ndgrad, torch):
        x = L.tensor(np.ones((2, 3), np.float32), requires_grad=True)
        g = L.tensor(np.array([1.0, 2.0], np.float32))
        r = L.autograd.grad(x.sum(1), x, g)[0]
        g.mul_(3)
        res[L.__name__] = (r.numpy().copy(), r._version, g._version)
    np.testing.assert_array_equal(res["ndgrad"][0], res["torch"][0])
    assert res["ndgrad"][1:] == res["torch"][1:]


def test_broadcast_gradients_reduced_as_torchs_sum_to():
    """A gradient summed back to a broadcast input's shape: with create_graph it is recorded
    as torch's sum_to records it (SumBackward0 for a 0-d input; else one keepdim sum, then a
    view when leading dims were added), with the same values in a plain backward."""
    rng = np.random.default_rng(3)
    shapes = {"x": (5, 2, 4, 3), "b": (3,), "c": (1, 3), "s": (), "d": (2, 1, 3)}
    arrays = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    out = {}
    for L in (ndgrad, torch):
        ts = {k: L.tensor(a, requires_grad=True) for k, a in arrays.items()}
        for cg in (False, True):
            y = (ts["x"] * ts["b"] * ts["c"] * ts["s"] * ts["d"]).tanh().sum()
            grads = L.autograd.grad(y, [ts[k] for k in "bcsd"], create_graph=cg)
            out[L.__name__, cg] = [
                (g.grad_fn.name() if g.grad_fn is not None else None,
                 g._is_view() if cg else None, tuple(g.shape), g.detach().numpy().copy())
                for g in grads]
    for cg in (False, True):
        for a, t in zip(out["ndgrad", cg], out["torch", cg]):
            assert a[:3] == t[:3]
            np.testing.assert_allclose(a[3], t[3], rtol=1e-5, atol=1e-6)
    for a, b in zip(out["ndgrad", False], out["ndgrad", True]):
        np.testing.assert_array_equal(a[3], b[3])


@pytest.mark.parametrize("mode", ["plain", "create_graph", "recorded"])
def test_view_rule_raw_path_is_the_reshape_view_of_the_gradient(mode):
    """ViewBackward0 reshapes its gradient on the raw array when nothing is recorded: the
    result is the same view (base, strides, values) that reshape gives, as in torch; a
    non-contiguous gradient is copied as reshape copies it."""
    xa = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for g_t in (False, True):
        out = {}
        for L in (ndgrad, torch):
            x = L.tensor(xa, requires_grad=True)
            y = x.view(6, 4)
            ga = np.arange(24, dtype=np.float32).reshape(4, 6) / 3
            g = L.tensor(ga, requires_grad=mode == "recorded")
            g = g.t() if g_t else g.reshape(6, 4)  # non-contiguous, or a view
            if mode != "recorded":
                g = g.detach()
            r = L.autograd.grad(y, x, g, create_graph=mode != "plain")[0]
            out[L.__name__] = (r.detach().numpy().copy(), r.stride(), r._is_view(),
                               r.requires_grad, r.grad_fn.name() if r.grad_fn else None)
        np.testing.assert_array_equal(out["ndgrad"][0], out["torch"][0])
        assert out["ndgrad"][1:] == out["torch"][1:]


def _node_names(fn):
    names, seen, stack = [], set(), [fn]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        names.append(n.name())
        stack.extend(m for m, _ in n.next_functions)
    return sorted(names)


@pytest.mark.parametrize("e", [2, 3, 0.5, 2.5, -1, 1.5j])
def test_pow_rule_records_torchs_graph(e):
    """With create_graph, pow's rule records torch's formula node for node (the scalar factor
    is mul(Tensor, Scalar), MulBackward1), with torch's values and second derivatives."""
    xa = np.array([0.5, 1.5, 2.0], np.float32)
    res = {}
    for L in (ndgrad, torch):
        x = L.tensor(xa.astype(np.complex64) if type(e) is complex else xa,
                     requires_grad=True)
        y = x.abs() ** e if e != 2 else x ** e
        (g,) = L.autograd.grad(y.sum().abs() if type(e) is complex else y.sum(), x,
                               create_graph=True)
        (gg,) = L.autograd.grad(g.abs().sum(), x)
        res[L.__name__] = (_node_names(g.grad_fn), g.detach().numpy(), gg.numpy())
    assert res["ndgrad"][0] == res["torch"][0]
    for a, t in zip(res["ndgrad"][1:], res["torch"][1:]):
        np.testing.assert_allclose(a, t, rtol=1e-5, atol=1e-6)


def test_hvp_double_backward_graph_is_torchs():
    """The graph a create_graph gradient records (the HVP benchmark's MLP) has torch's
    nodes, name for name, and the Hessian-vector product torch's values."""
    rng = np.random.default_rng(2)
    sizes = [(8, 6), (6,), (6, 3), (3,)]
    arrays = [rng.standard_normal(s).astype(np.float32) * 0.5 for s in sizes]
    va = [rng.standard_normal(s).astype(np.float32) for s in sizes]
    Xa = rng.standard_normal((4, 8)).astype(np.float32)
    Ya = rng.standard_normal((4, 3)).astype(np.float32)
    res = {}
    for L in (ndgrad, torch):
        w1, b1, w2, b2 = ps = [L.tensor(a, requires_grad=True) for a in arrays]
        X, Y = L.tensor(Xa), L.tensor(Ya)
        out = ((X @ w1 + b1).tanh() @ w2 + b2).tanh()
        gs = L.autograd.grad(((out - Y) ** 2).mean(), ps, create_graph=True)
        dot = sum((g * L.tensor(v)).sum() for g, v in zip(gs, va))
        hv = L.autograd.grad(dot, ps)
        res[L.__name__] = (_node_names(dot.grad_fn), [h.numpy() for h in hv])
    assert res["ndgrad"][0] == res["torch"][0]
    for a, t in zip(res["ndgrad"][1], res["torch"][1]):
        np.testing.assert_allclose(a, t, rtol=1e-4, atol=1e-5)


def test_views_through_fast_paths_current_and_after_in_place_change():
    """Unary/binary ops on a view take the fast path while the view is current and the
    general path once its base changed in place; both give torch's grad_fn chain, values
    and gradients."""
    res = {}
    for L in (ndgrad, torch):
        x = L.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 4, requires_grad=True)
        b = x * 1
        v = b[0]                       # a current view
        y1 = (v + 1).tanh() + v * 2.0  # saves no view (an in-place change follows)
        b.mul_(3)                      # v is now stale: its grad_fn is regenerated
        y2 = v.exp() * v + 1.0
        out = y1.sum() + y2.sum()
        out.backward()
        res[L.__name__] = (y1.grad_fn.name(), y1.grad_fn.next_functions[0][0].name(),
                           y2.grad_fn.next_functions[0][0].name(), v.grad_fn.name(),
                           y1.detach().numpy().copy(), y2.detach().numpy().copy(),
                           x.grad.numpy().copy())
    a, t = res["ndgrad"], res["torch"]
    assert a[:4] == t[:4]
    for u, w in zip(a[4:], t[4:]):
        np.testing.assert_allclose(u, w, rtol=1e-6, atol=1e-6)


# Ops on an nn.Parameter: (name, f(lib, p, w)) with p a Parameter (or a plain tensor) and w
# a plain tensor needing no grad; they cover unary, both binary fast paths, the general
# binary path (mixed dtypes), primitives of one and two inputs, a view and a multi-output op.
_PARAM_OPS = [
    ("mul_scalar", lambda L, p, w: p * 2.0),
    ("rsub_scalar", lambda L, p, w: 1 - p),
    ("mul", lambda L, p, w: p * w),
    ("add_broadcast", lambda L, p, w: p + w[:1]),
    ("mul_float64", lambda L, p, w: p * w.double()),
    ("tanh", lambda L, p, w: p.tanh()),
    ("exp_neg", lambda L, p, w: (-p).exp()),
    ("sum_dim", lambda L, p, w: p.sum(1)),
    ("matmul", lambda L, p, w: p @ w.t()),
    ("view_t", lambda L, p, w: p.t() * w.t()),
    ("unbind", lambda L, p, w: p.unbind(0)[1] * 3),
    ("cat", lambda L, p, w: L.cat([p, w, p], 0)),
]


@pytest.mark.parametrize("name,f", _PARAM_OPS, ids=[n for n, _ in _PARAM_OPS])
def test_ops_on_a_parameter_equal_ops_on_a_tensor_and_torch(name, f):
    rng = np.random.default_rng(3)
    pa = rng.standard_normal((3, 4)).astype(np.float32)
    wa = rng.standard_normal((3, 4)).astype(np.float32)
    got = {}
    for L, kind in ((ndgrad, "param"), (ndgrad, "tensor"), (torch, "param")):
        t = L.tensor(pa)
        p = L.nn.Parameter(t) if kind == "param" else t.requires_grad_()
        w = L.tensor(wa)
        out = f(L, p, w)
        g = rng.standard_normal(tuple(out.shape)).astype(out.numpy(force=True).dtype) \
            if L is ndgrad else None
        got[L.__name__, kind] = (out, g, p)
    # one upstream gradient for all three runs
    g = got["ndgrad", "param"][1]
    res = {}
    for key, (out, _, p) in got.items():
        L = ndgrad if key[0] == "ndgrad" else torch
        out.backward(L.tensor(g))
        res[key] = (type(out).__name__, type(out.grad_fn).__name__, out.detach().numpy(),
                    p.grad.numpy())
    pr, tr, th = res["ndgrad", "param"], res["ndgrad", "tensor"], res["torch", "param"]
    assert pr[0] == "Tensor" and pr[1] == tr[1] == th[1]
    for a, b in zip(pr[2:], tr[2:]):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    for a, b in zip(pr[2:], th[2:]):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("module,op,name,f", [
    ("arithmetic", "MUL", "_scalar_promote", lambda t: t * 2.0),
    ("pointwise", "TANH", "default_dtype", lambda t: t.tanh()),
])
def test_parameter_takes_the_fast_paths(module, op, name, f):
    """A function only the general path calls (dtype promotion) is not called for a
    Parameter, and is for an integer tensor (which the fast paths leave)."""
    import importlib
    env = getattr(importlib.import_module(f"ndgrad._ops.{module}"), op).impl.__globals__  # the generated code's namespace
    orig = env[name]
    calls = []
    env[name] = lambda *a: calls.append(a) or orig(*a)
    try:
        f(ndgrad.nn.Parameter(ndgrad.ones(3)))
        assert calls == []
        f(ndgrad.tensor([1, 2]))
        assert len(calls) == 1
    finally:
        env[name] = orig


def test_ops_on_inference_tensors_record_as_torch():
    def run(L):
        with L.inference_mode():
            z = L.ones(3, requires_grad=True)
            y = L.ones(3)
        x = L.ones(3, requires_grad=True)
        out = []
        for f in (lambda: -z, lambda: z.exp(), lambda: z.sum(), lambda: z * y, lambda: z.t(),
                  lambda: z * 2, lambda: z + x, lambda: x + y, lambda: z * L.ones(3)):
            r = f()
            out.append((r.requires_grad, type(r.grad_fn).__name__, r.is_inference()))
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
            x * y
        return out
    assert run(ndgrad) == run(torch)
