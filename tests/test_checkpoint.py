"""Activation checkpointing, differential against torch 2.13: same gradients as without
checkpointing and as torch, RNG replay, grad_fn names, warnings and errors, memory release."""

import contextlib
import gc
import logging
import warnings
import weakref

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tck

import ndgrad
import ndgrad.utils.checkpoint as nck

RNG = np.random.default_rng(3)
XD = RNG.standard_normal((4, 5)).astype(np.float32)
WD = (RNG.standard_normal((5, 5)) / 2).astype(np.float32)
LIBS = ((torch, tck), (ndgrad, nck))


def _leaves(lib):
    return (lib.tensor(XD, requires_grad=True), lib.tensor(WD, requires_grad=True))


def _assert_libs_close(run, rtol=1e-5, atol=1e-5):
    """``run(lib, ck)`` returns a tuple of arrays; ndgrad's must match torch's."""
    res = {lib: run(lib, ck) for lib, ck in LIBS}
    assert len(res[ndgrad]) == len(res[torch])
    for a, b in zip(res[ndgrad], res[torch]):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _block(lib, w, calls=None):
    def f(x):
        if calls is not None:
            calls.append(1)
        h = (x @ w).tanh()
        noise = lib.rand(4, 5)  # replayed exactly when preserve_rng_state=True
        return (h * noise).exp().sum(1)
    return f


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_equal_plain_and_torch(use_reentrant):
    res = {}
    for lib, ck in LIBS:
        x, w = _leaves(lib)
        lib.manual_seed(0)
        _block(lib, w)(x).sum().backward()
        plain = (x.grad.numpy().copy(), w.grad.numpy().copy())
        x.grad = w.grad = None
        calls = []
        lib.manual_seed(0)
        out = ck.checkpoint(_block(lib, w, calls), x, use_reentrant=use_reentrant)
        name = out.grad_fn.name()
        out.sum().backward()
        res[lib] = (plain, (x.grad.numpy().copy(), w.grad.numpy().copy()), len(calls), name)
        np.testing.assert_array_equal(res[lib][1][0], plain[0])
        np.testing.assert_array_equal(res[lib][1][1], plain[1])
    for k in range(2):
        np.testing.assert_allclose(res[ndgrad][1][k], res[torch][1][k], rtol=1e-5, atol=1e-6)
    assert res[ndgrad][2] == res[torch][2] == 2  # forward once, recomputed once
    assert res[ndgrad][3] == res[torch][3] == \
        ("CheckpointFunctionBackward" if use_reentrant else "SumBackward1")


def test_without_rng_preservation_noise_differs():
    for lib, ck in LIBS:
        x, w = _leaves(lib)
        lib.manual_seed(0)
        _block(lib, w)(x).sum().backward()
        plain = x.grad.numpy().copy()
        x.grad = None
        lib.manual_seed(0)
        ck.checkpoint(_block(lib, w), x, use_reentrant=False,
                      preserve_rng_state=False).sum().backward()
        assert not np.allclose(x.grad.numpy(), plain)


def test_autograd_grad_retain_graph_and_inputs_without_grad():
    def run(lib, ck):
        x, w = _leaves(lib)
        c = lib.tensor(XD)  # no grad
        out = ck.checkpoint(lambda a, b: (a @ w + b).sin(), x, c, use_reentrant=False)
        g1, = lib.autograd.grad(out.sum(), x, retain_graph=True)
        g2, gw = lib.autograd.grad(out.sum(), (x, w))
        np.testing.assert_array_equal(g1.numpy(), g2.numpy())
        return g1.numpy().copy(), gw.numpy().copy()
    _assert_libs_close(run, atol=1e-6)


def test_kwargs_and_multiple_outputs():
    def run(lib, ck):
        x, w = _leaves(lib)

        def f(a, scale=1.0):
            h = a @ w
            return h.tanh() * scale, h.exp()
        u, v = ck.checkpoint(f, x, scale=3.0, use_reentrant=False)
        (u.sum() + v.sum()).backward()
        return x.grad.numpy().copy(), w.grad.numpy().copy()
    _assert_libs_close(run)


def test_checkpoint_sequential_matches_torch():
    def run(lib, ck):
        x, w = _leaves(lib)
        fns = [lambda t: t @ w, lambda t: t.tanh(), lambda t: t * 2, lambda t: t.sin(),
               lambda t: t @ w, lambda t: t.exp()]
        out = ck.checkpoint_sequential(fns, 3, x, use_reentrant=False)
        out.sum().backward()
        return out.detach().numpy().copy(), x.grad.numpy().copy(), w.grad.numpy().copy()
    _assert_libs_close(run)


def test_missing_use_reentrant_warns_like_torch():
    msgs = {}
    for lib, ck in LIBS:
        x, _ = _leaves(lib)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            out = ck.checkpoint(lambda t: t.exp(), x)
        msgs[lib] = [str(r.message) for r in rec if "use_reentrant" in str(r.message)]
        assert out.grad_fn.name() == "CheckpointFunctionBackward"  # torch's default
    assert msgs[ndgrad] == msgs[torch] and len(msgs[ndgrad]) == 1


def test_recomputed_metadata_mismatch_error_matches_torch():
    msgs = {}
    for lib, ck in LIBS:
        x = lib.ones(2, 3, requires_grad=True)

        def f(t, calls=[]):  # noqa: B006 (a fresh list per library: f is redefined)
            calls.append(1)
            return (t[:, :2] if len(calls) > 1 else t).exp()
        out = ck.checkpoint(f, x, use_reentrant=False)
        with pytest.raises(ck.CheckpointError) as e:
            out.sum().backward()
        msgs[lib] = str(e.value)  # the whole message, torch's tip included
        assert isinstance(e.value, RuntimeError)
    assert msgs[ndgrad] == msgs[torch]


def _tracked_block():
    """ndgrad input x, f(t) = (t @ w).sin().exp(), and weak references to the data of every
    ``t @ w`` f computes (in order), to see which intermediates stay alive."""
    x, w = _leaves(ndgrad)
    refs = []

    def f(t):
        h = t @ w
        refs.append(weakref.ref(h._data))
        return h.sin().exp()
    return x, f, refs


def test_intermediates_freed_in_forward():
    x, f, refs = _tracked_block()
    keep = f(x)  # without checkpointing sin saves h
    gc.collect()
    assert refs[0]() is not None
    out = nck.checkpoint(f, x, use_reentrant=False)
    gc.collect()
    assert refs[1]() is None
    out.sum().backward()
    del keep


def test_checkpoint_sequential_module_with_dropout_matches_torch():
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((6, 4)).astype(np.float32)
    w2 = rng.standard_normal((3, 6)).astype(np.float32)
    xd = rng.standard_normal((5, 4)).astype(np.float32)
    def run(lib, ck):
        nn = lib.nn
        m = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Dropout(0.5), nn.Linear(6, 3))
        with lib.no_grad():
            m[0].weight.copy_(lib.tensor(w1))
            m[3].weight.copy_(lib.tensor(w2))
            m[0].bias.zero_()
            m[3].bias.zero_()
        x = lib.tensor(xd, requires_grad=True)
        lib.manual_seed(0)  # same dropout mask in both libraries, and again on recompute
        out = ck.checkpoint_sequential(m, 2, x, use_reentrant=False)
        out.sum().backward()
        return (out.detach().numpy().copy(), x.grad.numpy().copy(),
                m[0].weight.grad.numpy().copy())
    _assert_libs_close(run)


def test_double_backward_through_non_reentrant_checkpoint_matches_torch():
    def run(lib, ck):
        x = lib.tensor(np.array([0.3, -0.7, 1.1], dtype=np.float32), requires_grad=True)
        w = lib.tensor(np.array([0.5, 2.0, -1.0], dtype=np.float32), requires_grad=True)
        y = ck.checkpoint(lambda t: (t * w).sin().exp(), x, use_reentrant=False)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gx, gw = lib.autograd.grad(g.sum(), (x, w))
        return g.detach().numpy().copy(), gx.numpy().copy(), gw.numpy().copy()
    _assert_libs_close(run, atol=1e-6)


def test_recomputed_values_released_after_use_even_with_retain_graph():
    x, f, refs = _tracked_block()
    out = nck.checkpoint(f, x, use_reentrant=False)
    out.sum().backward(retain_graph=True)
    g1 = x.grad.numpy().copy()
    gc.collect()
    assert len(refs) == 2 and refs[1]() is None  # the recomputed h is gone
    x.grad = None
    out.sum().backward()  # recomputes again
    np.testing.assert_array_equal(x.grad.numpy(), g1)
    assert len(refs) == 3


# ------------------------------------------------------------------ nested non-reentrant
def _ck(ck, use):
    """``ck.checkpoint`` (non-reentrant) when `use`, else a plain call: the same scenario runs
    checkpointed and uncheckpointed."""
    if not use:
        return lambda fn, *a, **k: fn(*a)
    return lambda fn, *a, **k: ck.checkpoint(fn, *a, use_reentrant=False, **k)


def _nested_scenario(kind):
    """``run(lib, ck, use)``: a nested-checkpoint scenario; returns (arrays, calls per level)."""

    def run(lib, ck, use):
        c = _ck(ck, use)
        x, w = _leaves(lib)
        calls = {"outer": 0, "middle": 0, "inner": 0}

        def inner(t):
            calls["inner"] += 1
            return (t @ w).sin().exp()

        if kind == "simple":  # checkpoint(lambda x: checkpoint(f, x) * 2, x)
            def outer(t):
                calls["outer"] += 1
                return c(inner, t) * 2
        elif kind == "double":  # three levels, plain ops between them
            def middle(t):
                calls["middle"] += 1
                h = t.tanh() @ w
                return c(inner, h).cos() + h
            def outer(t):
                calls["outer"] += 1
                return c(middle, t.sigmoid()) * t
        elif kind == "no_grad":  # no_grad regions around and inside the nested checkpoints
            def middle(t):
                calls["middle"] += 1
                with lib.no_grad():
                    unused = c(inner, t)  # runs plainly: nothing saved, nothing recomputed
                    scale = t.abs() + 1
                return c(inner, t * scale) + unused
            def outer(t):
                calls["outer"] += 1
                return c(middle, t.exp()).tanh()
        elif kind == "dropout":  # random ops at each level, replayed on recompute
            def middle(t):
                calls["middle"] += 1
                return c(inner, lib.nn.functional.dropout(t, 0.3)) * lib.rand(4, 5)
            def outer(t):
                calls["outer"] += 1
                return c(middle, lib.nn.functional.dropout(t.sin(), 0.5)) @ w
        lib.manual_seed(0)
        out = c(outer, x)
        out.sum().backward()
        return (out.detach().numpy().copy(), x.grad.numpy().copy(),
                w.grad.numpy().copy()), calls
    return run


@pytest.mark.parametrize("kind", ["simple", "double", "no_grad", "dropout"])
def test_nested_checkpoints_match_plain_and_torch(kind):
    run = _nested_scenario(kind)
    res = {lib: run(lib, ck, True) for lib, ck in LIBS}
    plain, plain_calls = run(ndgrad, nck, False)
    for a, b, p in zip(res[ndgrad][0], res[torch][0], plain):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(a, p, rtol=1e-6, atol=1e-6)
    # The same number of forward recomputations at every level as torch.
    assert res[ndgrad][1] == res[torch][1]
    assert res[ndgrad][1]["inner"] > plain_calls["inner"]


def test_nested_recompute_counts_with_retain_graph_and_second_backward():
    def run(lib, ck):
        x, w = _leaves(lib)
        calls = []

        def inner(t):
            calls.append("inner")
            return (t * w[0]).sin()

        def outer(t):
            calls.append("outer")
            return ck.checkpoint(inner, t.exp(), use_reentrant=False) * w[1]
        out = ck.checkpoint(outer, x, use_reentrant=False)
        out.sum().backward(retain_graph=True)
        g1 = x.grad.numpy().copy()
        n1 = list(calls)
        x.grad = w.grad = None
        out.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), g1)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            out.sum().backward()
        return (g1, w.grad.numpy().copy()), (n1, list(calls))
    res = {lib: run(lib, ck) for lib, ck in LIBS}
    for a, b in zip(res[ndgrad][0], res[torch][0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert res[ndgrad][1] == res[torch][1]


def test_nested_autograd_grad_on_part_of_the_inputs():
    def run(lib, ck):
        x, w = _leaves(lib)
        calls = []

        def inner(t):
            calls.append("inner")
            return (t @ w).tanh()

        def outer(t):
            calls.append("outer")
            h = t @ w
            return ck.checkpoint(inner, h, use_reentrant=False) + h.exp()
        out = ck.checkpoint(outer, x, use_reentrant=False)
        gw, = lib.autograd.grad(out.sum(), w, retain_graph=True)
        gx, = lib.autograd.grad(out.sum(), x)
        return (gw.numpy().copy(), gx.numpy().copy()), calls
    res = {lib: run(lib, ck) for lib, ck in LIBS}
    for a, b in zip(res[ndgrad][0], res[torch][0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert res[ndgrad][1] == res[torch][1]


def test_nested_double_backward_matches_torch():
    def run(lib, ck):
        x = lib.tensor(np.array([0.3, -0.7, 1.1], dtype=np.float32), requires_grad=True)
        w = lib.tensor(np.array([0.5, 2.0, -1.0], dtype=np.float32), requires_grad=True)
        def inner(t):
            return (t * w).sin()
        y = ck.checkpoint(lambda t: ck.checkpoint(inner, t.exp(), use_reentrant=False) * t,
                          x, use_reentrant=False)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gx, gw = lib.autograd.grad(g.sum(), (x, w))
        return g.detach().numpy().copy(), gx.numpy().copy(), gw.numpy().copy()
    _assert_libs_close(run, atol=1e-6)


def test_backward_inside_the_checkpointed_function_matches_torch():
    # torch's "rule 6": the function's own autograd.grad recomputes it during the forward.
    def run(lib, ck):
        x, w = _leaves(lib)
        calls = []

        def f(t):
            calls.append(1)
            z = (t @ w).sin().cos()
            g, = lib.autograd.grad(z.sum(), t, create_graph=True)
            return g * t.exp()
        out = ck.checkpoint(f, x, use_reentrant=False)
        out.sum().backward()
        return (out.detach().numpy().copy(), x.grad.numpy().copy(),
                w.grad.numpy().copy(), np.array(len(calls)))
    _assert_libs_close(run)


def test_nested_recomputed_values_released_after_use():
    x, f, refs = _tracked_block()
    out = nck.checkpoint(lambda t: nck.checkpoint(f, t * 2, use_reentrant=False).tanh(), x,
                         use_reentrant=False)
    out.sum().backward(retain_graph=True)
    gc.collect()
    assert all(r() is None for r in refs)


# ------------------------------------------------------------------ errors and options
def _error_of(run):
    """(type, message) of what ``run(lib, ck)`` raises, for both libraries (torch's first)."""
    out = []
    for lib, ck in LIBS:
        with pytest.raises(Exception) as e:
            run(lib, ck)
        out.append((type(e.value).__name__, str(e.value)))
    return out


def _assert_same_error(run, kind):
    (t_kind, t_msg), (n_kind, n_msg) = _error_of(run)
    assert t_kind == n_kind == kind
    assert n_msg == t_msg


def test_nested_shape_mismatch_raises_checkpoint_error_like_torch():
    def run(lib, ck):
        x = lib.ones(2, 3, requires_grad=True)
        calls = []

        def inner(t):
            calls.append(1)
            return (t[:, :2] if len(calls) > 1 else t).exp()
        # The inner frame's own recomputation (second call) slices: its saved exp differs.
        out = ck.checkpoint(lambda t: ck.checkpoint(inner, t.sin(), use_reentrant=False).sum(),
                            x, use_reentrant=False)
        out.backward()
    _assert_same_error(run, "CheckpointError")


def test_fewer_saved_in_recompute_raises_like_torch():
    def run(lib, ck):
        x = lib.ones(2, 3, requires_grad=True)
        calls = []

        def f(t):
            calls.append(1)
            return t.exp().exp() if len(calls) == 1 else t.exp() * 1
        ck.checkpoint(f, x, use_reentrant=False).sum().backward()
    _assert_same_error(run, "CheckpointError")


def test_without_early_stop_more_saved_in_recompute_raises_like_torch():
    def run(lib, ck):
        x = lib.ones(2, 3, requires_grad=True)
        calls = []

        def f(t):
            calls.append(1)
            return t.exp() if len(calls) == 1 else t.exp().exp()
        with ck.set_checkpoint_early_stop(False):
            out = ck.checkpoint(f, x, use_reentrant=False)
        out.sum().backward()
    _assert_same_error(run, "CheckpointError")


@pytest.mark.parametrize("early_stop", [True, False])
def test_early_stop_counts_like_torch(early_stop):
    def run(lib, ck):
        x, w = _leaves(lib)
        reached = []

        def f(t):
            h = (t @ w).sin()
            reached.append("saved all")
            h = h * 3  # saves nothing: after the last save
            reached.append("end")
            return h
        out = ck.checkpoint(f, x, use_reentrant=False, early_stop=early_stop)
        out.sum().backward()
        return x.grad.numpy().copy(), reached
    res = {lib: run(lib, ck) for lib, ck in LIBS}
    np.testing.assert_allclose(res[ndgrad][0], res[torch][0], rtol=1e-5, atol=1e-6)
    assert res[ndgrad][1] == res[torch][1]
    assert res[ndgrad][1].count("end") == (1 if early_stop else 2)


def test_unpacking_twice_in_one_backward_raises_like_torch():
    def run(lib, ck):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t)
                return t * 2

            @staticmethod
            def backward(ctx, g):
                first, = ctx.saved_tensors
                again, = ctx.saved_tensors  # the second unpack is the misuse
                return g * 2 + 0 * (first + again)

        x = lib.ones(3, requires_grad=True)
        ck.checkpoint(lambda t: Twice.apply(t.exp()), x, use_reentrant=False).sum().backward()
    _assert_same_error(run, "CheckpointError")


def test_input_modified_in_place_after_checkpoint_raises_like_torch():
    def run(lib, ck):
        x = lib.ones(3, requires_grad=True)
        a = x * 1
        out = ck.checkpoint(lambda t: t.sin(), a, use_reentrant=False)
        with lib.no_grad():
            a.add_(1)
        out.sum().backward()
    _assert_same_error(run, "RuntimeError")


@pytest.mark.parametrize("bad", [
    {"use_reentrant": True, "debug": True},
    {"use_reentrant": True, "context_fn": lambda: (None, None)},
    {"use_reentrant": False, "debug": True, "context_fn": lambda: (None, None)},
    {"use_reentrant": False, "determinism_check": "strict"},
])
def test_option_misuse_raises_like_torch(bad):
    def run(lib, ck):
        ck.checkpoint(lambda t: t.exp(), lib.ones(2, requires_grad=True), **bad)
    _assert_same_error(run, "ValueError")


def test_determinism_check_none_skips_the_metadata_check():
    def run(lib, ck):
        x = lib.ones(2, 3, requires_grad=True)
        calls = []

        def f(t):
            calls.append(1)
            return (t[:1] if len(calls) > 1 else t).exp()  # recomputed exp is 1 x 3
        out = ck.checkpoint(f, x, use_reentrant=False, determinism_check="none")
        out.sum().backward()  # ExpBackward broadcasts the 1 x 3 result: no error
        return (x.grad.numpy().copy(),)
    _assert_libs_close(run)


# ------------------------------------------------------------------ context_fn and debug
class _Scaled:
    """A context manager setting the scale the checkpointed function reads; counts entries."""

    def __init__(self, state, scale):
        self.state, self.scale, self.entered = state, scale, 0

    def __enter__(self):
        self.entered += 1
        self.prev, self.state["scale"] = self.state["scale"], self.scale

    def __exit__(self, *exc):
        self.state["scale"] = self.prev


def test_context_fn_wraps_forward_and_each_recomputation_like_torch():
    def run(lib, ck):
        x, w = _leaves(lib)
        state = {"scale": 1.0}
        ctxs = []

        def context_fn():
            ctxs.append((_Scaled(state, 2.0), _Scaled(state, 3.0)))
            return ctxs[-1]

        def inner(t):
            return (t * state["scale"]).sin()  # sin saves t * scale: recomputed with 3

        def outer(t):
            return ck.checkpoint(inner, t @ w, use_reentrant=False,
                                 context_fn=context_fn).exp()
        out = ck.checkpoint(outer, x, use_reentrant=False, context_fn=context_fn)
        out.sum().backward(retain_graph=True)
        out.sum().backward()
        return (out.detach().numpy().copy(), x.grad.numpy().copy(), w.grad.numpy().copy(),
                np.array([(f.entered, r.entered) for f, r in ctxs]))
    _assert_libs_close(run)


def test_context_fn_swallowing_the_forward_error_raises_like_torch():
    class Swallow:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return True

    def run(lib, ck):
        def f(t):
            raise KeyError("boom")
        ck.checkpoint(f, lib.ones(2, requires_grad=True), use_reentrant=False,
                      context_fn=lambda: (Swallow(), Swallow()))
    _assert_same_error(run, "RuntimeError")


@contextlib.contextmanager
def _torch_op_log_kept_private():
    """torch's checkpoint debug mode logs each op on the "LoggingTensor" logger with a record
    that only its own handler can format (arguments without placeholders). Once that logger is
    non-propagating, pytest's log capture attaches its handler to it too, and formatting the
    record there raises; so for the duration, the logger keeps no handler but torch's own."""
    logger = logging.getLogger("LoggingTensor")
    handlers, propagate = logger.handlers[:], logger.propagate
    for h in handlers:
        logger.removeHandler(h)
    logger.propagate = False
    try:
        yield
    finally:
        for h in logger.handlers[:]:
            logger.removeHandler(h)
        for h in handlers:
            logger.addHandler(h)
        logger.propagate = propagate


@pytest.mark.parametrize("globally", [False, True])
def test_debug_reports_the_ops_of_both_runs(globally):
    headers = ("1. Stack traces of the operators that ran in the original forward",
               "2. Stack traces of the operators that ran during recomputation",
               "Operations executed during the original forward:",
               "Operations executed during recomputation:",
               "ERROR: Detected non-determinism while running activation checkpointing")
    msgs = {}
    for lib, ck in LIBS:
        x = lib.ones(2, 3, requires_grad=True)

        def f(t, calls=[]):  # noqa: B006 (a fresh list per library: f is redefined)
            calls.append(1)
            return (t[:, :2] if len(calls) > 1 else t).exp()
        with _torch_op_log_kept_private():
            if globally:
                with ck.set_checkpoint_debug_enabled(True):
                    out = ck.checkpoint(f, x, use_reentrant=False)
            else:
                out = ck.checkpoint(f, x, use_reentrant=False, debug=True)
            with pytest.raises(ck.CheckpointError) as e:
                out.sum().backward()
        msg = str(e.value)
        assert all(h in msg for h in headers)
        assert isinstance(e.value.__cause__, ck.CheckpointError)
        assert "different metadata" in str(e.value.__cause__)
        msgs[lib] = msg
    # ndgrad's log names the ops and where the function called them.
    forward, recompute = msgs[ndgrad].split("Operations executed during the original forward:"
                                            )[1].split("Operations executed during recomputation:")
    assert "f32[2, 3] = aten::exp(f32[2, 3])" in forward and "slice" not in forward
    # the recomputation stopped in exp's save: exp is listed, without its output
    assert "f32[2, 2] = aten::slice(f32[2, 3])\naten::exp(f32[2, 2])" in recompute
    assert f"{__file__}:" in msgs[ndgrad]


@pytest.mark.parametrize("outer_reentrant", [False, True])
def test_reentrant_and_non_reentrant_nested_in_each_other_match_torch(outer_reentrant):
    def run(lib, ck):
        x = lib.tensor(XD[0], requires_grad=True)
        calls = []

        def inner(t):
            calls.append("inner")
            return t.sin().exp()

        def outer(t):
            calls.append("outer")
            return ck.checkpoint(inner, t * 1, use_reentrant=not outer_reentrant) * t
        ck.checkpoint(outer, x, use_reentrant=outer_reentrant).sum().backward()
        return x.grad.numpy().copy(), calls
    res = {lib: run(lib, ck) for lib, ck in LIBS}
    np.testing.assert_allclose(res[ndgrad][0], res[torch][0], rtol=1e-6, atol=1e-6)
    assert res[ndgrad][1] == res[torch][1]


def test_saved_value_read_outside_backward_recomputes_each_time_like_torch():
    def run(lib, ck):
        calls = []
        x = lib.tensor(XD[0], requires_grad=True)
        y = ck.checkpoint(lambda t: (calls.append(1), t.exp())[1], x, use_reentrant=False)
        a, b = y.grad_fn._saved_result, y.grad_fn._saved_result
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        return a.detach().numpy().copy(), np.array(len(calls)), np.array(a.requires_grad)
    _assert_libs_close(run)


def test_reentrant_checkpoint_refuses_a_partial_backward_and_stays_usable():
    """autograd.grad and backward(inputs=) through a reentrant checkpoint: torch's
    RuntimeError, raised before the graph is consumed; a plain backward then works."""
    import importlib

    import torch

    results = []
    for L in (torch, ndgrad):
        cp = importlib.import_module(L.__name__ + ".utils.checkpoint")
        x = L.tensor([0.5, 1.0, 2.0], dtype=L.float64, requires_grad=True)
        y = cp.checkpoint(lambda t: (t * t).sin(), x, use_reentrant=True).sum()
        messages = []
        for partial in (lambda: L.autograd.grad(y, x), lambda: y.backward(inputs=[x])):
            with pytest.raises(RuntimeError) as info:
                partial()
            messages.append(str(info.value))
        assert x.grad is None
        y.backward()
        results.append((messages, x.grad.tolist()))
    assert results[1] == results[0]
    assert "incompatible with .grad()" in results[1][0][0]
