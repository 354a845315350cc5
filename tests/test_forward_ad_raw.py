"""The forward-AD raw path (``OpDef.jvp_raw``, run by ``_forward_engine._fast_unary`` and
``_fast_binary``).

Every op declaring a raw JVP gives bitwise the tangent of the general path (the observer and
the op's Tensor-level ``jvp``, run here with the raw rule switched off) and torch's values,
on nan/inf/signed zeros in primals and tangents, broadcasting, Python-number operands and
both dtypes it takes. The cases it must leave to the general path (dtype promotion, grad
needed, views of a dual base, in-place ops, another special mode) give torch's results, and
the raw rule is checked to be (or not be) what ran, so no case passes by not testing it.
"""

import contextlib

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad._ops import registry
from ndgrad.autograd import _forward_engine

nfw = ndgrad.autograd.forward_ad
tfw = torch.autograd.forward_ad

RAW_OPS = sorted(name for name, op in registry.all_ops().items() if op.jvp_raw is not None)
UNARY = [n for n in RAW_OPS if registry.all_ops()[n].kind == "unary"]
BINARY = [n for n in RAW_OPS if registry.all_ops()[n].kind == "binary"]
DTYPES = [np.float32, np.float64]
# the name of each op's torch function where it is not the op's own name
TORCH_NAME = {}


@contextlib.contextmanager
def _counting(op):
    """Count the calls of op's raw rule."""
    rule = op.jvp_raw
    calls = [0]

    def counted(*args):
        calls[0] += 1
        return rule(*args)
    op.jvp_raw = counted
    try:
        yield calls
    finally:
        op.jvp_raw = rule


@contextlib.contextmanager
def _general_path(op):
    """The op without its raw rule: the observer's general path runs."""
    rule = op.jvp_raw
    op.jvp_raw = None
    try:
        yield
    finally:
        op.jvp_raw = rule


def _values(rng, shape, dtype, special=True):
    a = rng.standard_normal(shape).astype(dtype)
    if special:
        flat = a.reshape(-1)
        corners = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e-30, 20.0],
                           dtype=dtype)
        k = min(len(corners), flat.size)
        flat[:k] = corners[:k]
    return a


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def _run(lib, fn, primals, tangents):
    """fn on duals made of `primals` with `tangents` (None: a plain operand); the output's
    (primal, tangent) as arrays (tangent None when it has none)."""
    fw = tfw if lib is torch else nfw
    with fw.dual_level():
        args = []
        for p, t in zip(primals, tangents):
            if isinstance(p, np.ndarray):
                p = lib.tensor(p)
                if t is not None:
                    p = fw.make_dual(p, lib.tensor(t))
            args.append(p)
        out = fn(*args)
        prim, tan = fw.unpack_dual(out)
        return (np.array(prim.detach().numpy()),
                None if tan is None else np.array(tan.detach().numpy()))


def _torch_fn(name):
    return getattr(torch, TORCH_NAME.get(name, name))


def _check_case(name, primals, tangents, expect_raw=True):
    op = registry.all_ops()[name]

    def fn(*args):
        return op.call(*args)
    with _counting(op) as calls:
        raw = _run(ndgrad, fn, primals, tangents)
    assert calls[0] == (1 if expect_raw else 0), (name, calls[0])
    with _general_path(op):
        general = _run(ndgrad, fn, primals, tangents)
    ref = _run(torch, _torch_fn(name), primals, tangents)
    np.testing.assert_array_equal(_bits(raw[0]), _bits(general[0]))
    assert (raw[1] is None) == (general[1] is None) == (ref[1] is None)
    if raw[1] is None:
        return
    assert raw[1].dtype == general[1].dtype == ref[1].dtype
    assert raw[1].shape == general[1].shape == ref[1].shape
    np.testing.assert_array_equal(_bits(raw[1]), _bits(general[1]))
    # torch's values: nan and inf exactly where torch has them, the rest to rounding
    tol = 1e-5 if raw[1].dtype == np.float32 else 1e-12
    np.testing.assert_array_equal(np.isnan(raw[1]), np.isnan(ref[1]))
    np.testing.assert_allclose(raw[1], ref[1], rtol=tol, atol=tol, equal_nan=True)


def test_raw_ops_are_declared_with_a_general_rule():
    assert {"add", "sub", "mul", "div", "neg", "sin", "cos", "tanh", "exp", "log", "sqrt",
            "sigmoid", "relu"} <= set(RAW_OPS)
    for name in RAW_OPS:
        op = registry.all_ops()[name]
        assert op.kind in ("unary", "binary") and (op.jvp is not None or op.linear), name


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_raw_tangent_is_the_general_one_and_torch_s(name, dtype):
    rng = np.random.default_rng(7)
    x = _values(rng, (3, 4), dtype)
    t = _values(rng, (3, 4), dtype)[::-1].copy()  # specials meet other primal values
    _check_case(name, [x], [t])
    _check_case(name, [x], [np.zeros_like(x)])  # a zero tangent times inf is nan, as torch


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_raw_tangent_is_the_general_one_and_torch_s(name, dtype):
    rng = np.random.default_rng(11)
    a, b = _values(rng, (3, 4), dtype), _values(rng, (3, 4), dtype)[::-1].copy()
    ta, tb = _values(rng, (3, 4), dtype, special=False), _values(rng, (3, 4), dtype)
    _check_case(name, [a, b], [ta, tb])
    _check_case(name, [a, b], [ta, None])
    _check_case(name, [a, b], [None, tb])
    _check_case(name, [a, b], [np.zeros_like(a), np.zeros_like(b)])
    _check_case(name, [a, 1.5], [ta, None])  # a Python number operand
    _check_case(name, [a, 3], [ta, None])
    # broadcasting: tangents of an operand's shape are expanded to the output's
    c, d = _values(rng, (3, 1), dtype), _values(rng, (1, 4), dtype)
    tc, td = _values(rng, (3, 1), dtype, special=False), _values(rng, (1, 4), dtype, False)
    _check_case(name, [c, d], [tc, td])
    _check_case(name, [c, d], [tc, None])
    _check_case(name, [c, d], [None, td])


@pytest.mark.parametrize("name", BINARY)
def test_mixed_dtypes_take_the_general_path(name):
    rng = np.random.default_rng(3)
    a = _values(rng, (4,), np.float32)
    b = _values(rng, (4,), np.float64)
    _check_case(name, [a, b], [a * 0 + 1, None], expect_raw=False)
    _check_case(name, [b, a], [None, a * 0 + 1], expect_raw=False)


def test_raw_results_read_written_and_chained_like_the_general_path():
    """A raw tangent is wrapped once when read (the same Tensor on every read), an in-place
    write to it is seen by the next op, and a tangent passed on unchanged (``y + c`` with a
    constant c) is the same Tensor as the general path gives."""
    outs = {}
    for mode in ("raw", "general"):
        ctx = contextlib.ExitStack()
        if mode == "general":
            for name in RAW_OPS:
                ctx.enter_context(_general_path(registry.all_ops()[name]))
        with ctx, nfw.dual_level():
            rng = np.random.default_rng(5)
            x = nfw.make_dual(ndgrad.tensor(_values(rng, (6,), np.float32)),
                              ndgrad.tensor(_values(rng, (6,), np.float32, False)))
            c = ndgrad.tensor(rng.standard_normal(6).astype(np.float32))
            y = x.sin() * c
            t1 = nfw.unpack_dual(y).tangent
            assert nfw.unpack_dual(y).tangent is t1
            t1.mul_(3.0)
            z = (y + c).tanh()
            passed = y + c
            same = nfw.unpack_dual(passed).tangent is nfw.unpack_dual(y).tangent
            outs[mode] = (_bits(nfw.unpack_dual(z).tangent._data), same, t1._version)
    np.testing.assert_array_equal(outs["raw"][0], outs["general"][0])
    assert outs["raw"][1:] == outs["general"][1:]
    # and torch's values for the same program
    with tfw.dual_level():
        rng = np.random.default_rng(5)
        x = tfw.make_dual(torch.tensor(_values(rng, (6,), np.float32)),
                          torch.tensor(_values(rng, (6,), np.float32, False)))
        c = torch.tensor(rng.standard_normal(6).astype(np.float32))
        y = x.sin() * c
        tfw.unpack_dual(y).tangent.mul_(3.0)
        ref = tfw.unpack_dual((y + c).tanh()).tangent.numpy()
    got = outs["raw"][0].view(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6, equal_nan=True)


def _chain(lib, requires_grad=False, inplace=False):
    fw = tfw if lib is torch else nfw
    rng = np.random.default_rng(9)
    x = lib.tensor(rng.standard_normal(5).astype(np.float64), requires_grad=requires_grad)
    v = lib.tensor(rng.standard_normal(5).astype(np.float64))
    c = lib.tensor(rng.uniform(0.5, 2, 5))
    with fw.dual_level():
        y = fw.make_dual(x, v)
        a = fw.make_dual(c, lib.zeros_like(c))
        y = (y.sin() * a).tanh() + a
        if inplace:
            y = y * 1.0
            y.mul_(a)
            y[1:3].add_(a[:2])  # an in-place write through a view of a raw result
        y = y * y
        t = fw.unpack_dual(y).tangent
        g = lib.autograd.grad(t.sum(), x)[0] if requires_grad else None
        return t.detach().numpy().copy(), None if g is None else g.numpy().copy()


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
def test_chain_with_grad_and_inplace_matches_torch(requires_grad, inplace):
    """Primals needing grad (reverse over forward: the general path records the tangent ops)
    and in-place ops on raw results give torch's tangents and gradients."""
    t, g = _chain(ndgrad, requires_grad, inplace)
    tt, tg = _chain(torch, requires_grad, inplace)
    np.testing.assert_allclose(t, tt, rtol=1e-12, atol=1e-12)
    if requires_grad:
        np.testing.assert_allclose(g, tg, rtol=1e-12, atol=1e-12)


def test_other_special_modes_take_the_general_path():
    """With the profiler or anomaly mode on, the observers see every op (no raw path); after
    an inference_mode block (whose marker stays registered) the raw path runs again."""
    op = registry.all_ops()["sin"]
    x = ndgrad.tensor([0.5, 1.0])
    for mode in (ndgrad.autograd.profiler.profile, ndgrad.autograd.detect_anomaly):
        with _counting(op) as calls, nfw.dual_level(), mode():
            y = nfw.make_dual(x, ndgrad.ones(2)).sin()
            t = nfw.unpack_dual(y).tangent
        assert calls[0] == 0
        np.testing.assert_allclose(t._data, np.cos([0.5, 1.0]).astype(np.float32))
    with ndgrad.inference_mode():
        ndgrad.ones(2).sin()
    with _counting(op) as calls, nfw.dual_level():
        t = nfw.unpack_dual(nfw.make_dual(x, ndgrad.ones(2)).sin()).tangent
    assert calls[0] == 1
    np.testing.assert_allclose(t._data, np.cos([0.5, 1.0]).astype(np.float32))


def test_level_exit_drops_raw_tangents():
    """A raw result read inside the level is registered and loses its tangent at exit; one
    never read keeps its array until it is next looked at or dies, and is no tangent in a
    later level (its entry carries the exited level's token)."""
    with nfw.dual_level():
        x = nfw.make_dual(ndgrad.ones(3), ndgrad.ones(3))
        y = x.sin()
        z = x.sin()
        assert nfw.unpack_dual(z).tangent is not None
    assert "fw_grad" not in (z._extra or {})
    assert "fw_grad" in y._extra  # not read: left for later
    assert nfw.unpack_dual(y).tangent is None
    with nfw.dual_level():
        assert _forward_engine.get_tangent(y) is None
        assert "fw_grad" not in (y._extra or {})  # dropped once looked at
    with nfw.dual_level():
        v = nfw.make_dual(x.detach(), ndgrad.ones(3)).sin()
        w = nfw.make_dual(x.detach(), ndgrad.ones(3)).sin()
    with nfw.dual_level():
        # as an operand: the raw path sees the stale entry and leaves it to the general one
        assert nfw.unpack_dual(v * 2).tangent is None
        assert nfw.unpack_dual(w.cos()).tangent is None
        d = nfw.make_dual(w, ndgrad.full((3,), 2.0))  # w has no tangent at this level
        np.testing.assert_allclose(nfw.unpack_dual(d.exp()).tangent._data,
                                   2 * np.exp(np.sin(np.ones(3, np.float32))), rtol=1e-6)


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_tanh_and_sigmoid_derivatives_keep_torch_s_corners(name):
    """Their backward kernels compute torch's formulas (g * (1 - y^2), g * (1 - y) * y): an
    infinite gradient or tangent gives +-inf inside the range, not inf - inf = nan; torch's
    nan and inf exactly, in reverse mode and in forward mode (finite values to the ulp the
    two libraries' tanh may differ by)."""
    x = np.array([0.3, -0.7, 2.0, 0.0, 25.0, -1.5], dtype=np.float32)
    g = np.array([np.inf, -np.inf, 1e30, np.nan, np.inf, 0.25], dtype=np.float32)
    res = {}
    for lib in (ndgrad, torch):
        fw = tfw if lib is torch else nfw
        xt = lib.tensor(x, requires_grad=True)
        getattr(xt, name)().backward(lib.tensor(g))
        with fw.dual_level():
            tan = fw.unpack_dual(getattr(fw.make_dual(lib.tensor(x), lib.tensor(g)), name)())
            res[lib.__name__] = (xt.grad.numpy().copy(), tan.tangent.numpy().copy())
    for a, b in zip(res["ndgrad"], res["torch"]):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_array_equal(np.isinf(a) * np.sign(a), np.isinf(b) * np.sign(b))
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=0, equal_nan=True)
