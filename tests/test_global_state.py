"""Global modes and stacks survive errors and misuse, differential against torch 2.13.

Each scenario runs in both libraries: an error (in user code inside a context, in a hook, or a
refused argument) must raise torch's exception, and afterwards every global setting is what it
was before: grad mode, inference mode, anomaly mode, the dual level, the saved-tensor hook stack
(observed through hooks that count their calls), and no gradient is written by a failed
backward.
"""

import importlib
import warnings

import pytest
import torch

import ndgrad

LIBS = (torch, ndgrad)


def _modes(L):
    """Every observable global setting, as a tuple comparable across the libraries."""
    fw = L.autograd.forward_ad
    level = fw.enter_dual_level()       # 0 when no dual level is open
    fw.exit_dual_level(level=level)
    return (L.is_grad_enabled(), L.is_inference_mode_enabled(), L.is_anomaly_enabled(),
            L.is_anomaly_check_nan_enabled(), level)


def _no_hooks_left(L, calls):
    """An op saving a tensor after the scenario reaches none of the scenario's hooks."""
    before = len(calls)
    x = L.ones(2, requires_grad=True)
    x.exp().sum().backward()
    return len(calls) == before


def _after(scenario):
    """Run ``scenario(L)`` (which may raise) in both libraries; the modes afterwards and the
    exception (class and message) must be torch's, and the modes must be those before."""
    outcomes = []
    for L in LIBS:
        start = _modes(L)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                scenario(L)
                err = None
            except Exception as e:  # noqa: BLE001 (compared across libraries)
                err = (type(e).__name__, str(e))
        assert _modes(L) == start, L.__name__
        outcomes.append(err)
    assert outcomes[1] == outcomes[0]
    return outcomes[0]


def _boom():
    raise ValueError("boom")


# ------------------------------------------------------------------------------ grad modes
@pytest.mark.parametrize("ctx", ["no_grad", "enable_grad", "inference_mode",
                                 "set_grad_enabled_false", "nested"])
def test_grad_modes_restored_after_an_exception_inside(ctx):
    def scenario(L):
        make = {"no_grad": L.no_grad, "enable_grad": L.enable_grad,
                "inference_mode": L.inference_mode,
                "set_grad_enabled_false": lambda: L.set_grad_enabled(False)}
        if ctx == "nested":
            with L.enable_grad(), L.no_grad(), L.inference_mode():
                _boom()
        with make[ctx]():
            _boom()
    assert _after(scenario) == ("ValueError", "boom")
    with ndgrad.no_grad():
        _after(scenario)          # and from a no_grad start
        assert not ndgrad.is_grad_enabled()


def test_grad_mode_decorator_restores_after_an_exception():
    def scenario(L):
        L.no_grad()(_boom)()
    assert _after(scenario) == ("ValueError", "boom")


@pytest.mark.parametrize("bad", [1, 0, None, "yes", 1.0])
def test_set_grad_enabled_refuses_a_non_bool_and_changes_nothing(bad):
    err = _after(lambda L: L.set_grad_enabled(bad))
    assert err[0] == "TypeError" and "must be bool" in err[1]


def test_requires_grad_on_an_inference_tensor_outside_inference_mode():
    def scenario(L):
        with L.inference_mode():
            t = L.ones(2)
        assert t.requires_grad_(False).requires_grad is False
        t.requires_grad_()
    assert _after(scenario)[1] == ("Setting requires_grad=True on inference tensor outside "
                                   "InferenceMode is not allowed.")

    def attribute(L):
        with L.inference_mode():
            t = L.ones(2)
        t.requires_grad = True
    assert _after(attribute)[0] == "RuntimeError"

    def inside(L):
        with L.inference_mode():
            t = L.ones(2)
            assert t.requires_grad_().requires_grad
    assert _after(inside) is None


# ---------------------------------------------------------------------------- anomaly mode
def test_anomaly_mode_restored_after_an_exception_inside():
    def scenario(L):
        with L.autograd.detect_anomaly(check_nan=False):
            _boom()
    assert _after(scenario) == ("ValueError", "boom")

    def nested(L):
        with L.autograd.set_detect_anomaly(True), L.autograd.set_detect_anomaly(False):
            _boom()
    assert _after(nested) == ("ValueError", "boom")


@pytest.mark.parametrize("args", [("x",), (1,), (True, "x"), (True, 0)])
def test_set_detect_anomaly_refuses_non_bools_and_changes_nothing(args):
    err = _after(lambda L: L.autograd.set_detect_anomaly(*args))
    assert err[0] == "TypeError" and "set_anomaly_enabled()" in err[1]

    def ctx(L):
        with L.autograd.detect_anomaly(check_nan=args[-1]):
            pass
    if not isinstance(args[-1], bool):
        assert _after(ctx)[0] == "TypeError"


def test_anomaly_backward_error_leaves_the_mode_as_it_was():
    def scenario(L):
        x = L.zeros(1, requires_grad=True)
        with L.autograd.detect_anomaly():
            (x / x).sum().backward()
    err = _after(scenario)
    assert err[0] == "RuntimeError" and "returned nan values" in err[1]


# ----------------------------------------------------------------------------- dual levels
def test_dual_level_closed_after_an_exception_and_after_a_refused_nesting():
    def scenario(L):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            fw.make_dual(L.ones(2), L.ones(2))
            _boom()
    assert _after(scenario) == ("ValueError", "boom")

    def nested(L):
        fw = L.autograd.forward_ad
        with fw.dual_level(), fw.dual_level():
            pass
    assert _after(nested) == ("RuntimeError",
                              "Nested forward mode AD is not supported at the moment")

    def exit_unopened(L):
        L.autograd.forward_ad.exit_dual_level()
    assert _after(exit_unopened) == ("RuntimeError", "Dual level must be a positive number.")


# ---------------------------------------------------------------------- saved-tensor hooks
def _hooks(L, calls, pack=None, unpack=None):
    def p(t):
        calls.append("pack")
        return pack(t) if pack else t

    def u(t):
        calls.append("unpack")
        return unpack(t) if unpack else t
    return L.autograd.graph.saved_tensors_hooks(p, u)


@pytest.mark.parametrize("where", ["body", "pack", "unpack"])
def test_saved_tensor_hook_stack_restored_after_an_exception(where):
    def scenario(L):
        calls = []
        x = L.ones(2, requires_grad=True)
        try:
            with _hooks(L, calls, pack=(lambda t: _boom()) if where == "pack" else None,
                        unpack=(lambda t: _boom()) if where == "unpack" else None):
                y = x.exp()
                if where == "body":
                    _boom()
            y.sum().backward()
        finally:
            assert _no_hooks_left(L, calls)
            assert x.grad is None
    assert _after(scenario) == ("ValueError", "boom")


def test_saved_tensor_hooks_entered_inside_hooks_during_backward():
    """Entering saved_tensors_hooks inside a pack or unpack hook is allowed (torch 2.13 accepts
    it) and leaves nothing behind; ops inside a pack hook record nothing (grad mode is off
    there, as in torch), so they do not call the pack hook again."""
    def scenario(L):
        calls, inner = [], []
        x = L.ones(2, requires_grad=True)

        def reenter(t):
            with _hooks(L, inner):
                b = L.ones(2, requires_grad=True)
                assert (b * b).grad_fn is None and not L.is_grad_enabled()
            return t
        with _hooks(L, calls, pack=reenter, unpack=reenter):
            y = x.exp()
        y.sum().backward()
        assert calls == ["pack", "unpack"] and inner == []
        assert _no_hooks_left(L, calls)
        return x.grad.tolist()
    assert _after(scenario) is None


def test_disable_saved_tensors_hooks_refusal_and_state():
    def scenario(L):
        calls = []
        g = L.autograd.graph
        with g.disable_saved_tensors_hooks("no hooks here"):
            try:
                with _hooks(L, calls):
                    pass
            finally:
                assert _no_hooks_left(L, calls)
    assert _after(scenario) == ("RuntimeError", "no hooks here")

    def after(L):
        calls = []
        with _hooks(L, calls):       # allowed again once the disabling context is gone
            L.ones(2, requires_grad=True).exp()
        assert calls == ["pack"]
    assert _after(after) is None


# -------------------------------------------------------------------------- checkpointing
@pytest.mark.parametrize("reentrant", [False, True])
@pytest.mark.parametrize("when", ["forward", "recompute"])
def test_checkpoint_failure_leaves_no_state(reentrant, when):
    def scenario(L):
        ck = importlib.import_module(L.__name__ + ".utils.checkpoint")
        runs, calls = [], []

        def f(t):
            runs.append(1)
            if (when == "forward") == (len(runs) == 1):
                _boom()
            return t.sin().exp()
        x = L.ones(2, requires_grad=True)
        try:
            out = ck.checkpoint(f, x, use_reentrant=reentrant)
            out.sum().backward()
        finally:
            assert _no_hooks_left(L, calls) and x.grad is None
            with _hooks(L, calls):
                y = x.exp()
            y.sum().backward()
            assert calls == ["pack", "unpack"]
    assert _after(scenario) == ("ValueError", "boom")


# ------------------------------------------------------------------ failures are atomic
@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("bad", ["size", "dtype", "int", "type"])
def test_hook_returning_a_wrong_gradient_raises_before_any_write(leaf, bad):
    def scenario(L):
        x = L.ones(3, requires_grad=True)
        t = x if leaf else x * 2
        wrong = {"size": lambda g: L.ones(4), "dtype": lambda g: g.double(),
                 "int": lambda g: g.long(), "type": lambda g: 3}[bad]
        t.register_hook(wrong)
        try:
            (t * 2).sum().backward()
        finally:
            assert x.grad is None
    err = _after(scenario)
    assert err[0] == ("TypeError" if bad == "type" else "RuntimeError")


def test_hook_returning_a_gradient_of_the_same_type_and_size_is_used():
    got = []
    for L in LIBS:
        x = L.ones(3, requires_grad=True)
        x.register_hook(lambda g: g * 3)
        (x * 2).sum().backward()
        got.append(x.grad.tolist())
    assert got[0] == got[1] == [6.0, 6.0, 6.0]


def test_implicit_gradient_of_a_complex_scalar_is_refused():
    def run(L):
        a = L.ones(2, dtype=L.complex64, requires_grad=True)
        (a * 2).sum().backward()
    assert _after(run) == ("RuntimeError", ("grad can be implicitly created only for real "
                                            "scalar outputs but got torch.complex64"))

    def grad(L):
        a = L.ones(2, dtype=L.complex64, requires_grad=True)
        L.autograd.grad((a * 2).sum(), a)
    assert _after(grad)[0] == "RuntimeError"


def test_checkpoint_debug_override_restored_after_an_exception():
    """After an exception inside set_checkpoint_debug_enabled(True), checkpoints are back to
    their own ``debug`` flag: a non-deterministic recomputation reports without the op logs."""
    def scenario(L):
        ck = importlib.import_module(L.__name__ + ".utils.checkpoint")
        try:
            with ck.set_checkpoint_debug_enabled(True):
                _boom()
        except ValueError:
            pass
        runs = []

        def f(t):
            runs.append(1)
            return (t[:1] if len(runs) > 1 else t).exp()
        x = L.ones(2, requires_grad=True)
        out = ck.checkpoint(f, x, use_reentrant=False)
        try:
            out.sum().backward()
        except ck.CheckpointError as e:
            assert "Operations executed during the original forward" not in str(e)
            raise RuntimeError("non-deterministic recomputation") from None
    assert _after(scenario) == ("RuntimeError", "non-deterministic recomputation")


# ------------------------------------------------- modes a node's user code leaves changed
# torch's engine restores the thread's modes around every node of a backward (and so at its
# end): a hook or unpack hook that enters a context and never exits it harms nothing after.
def _leaky_unpack_scenario(L):
    """An unpack hook entering its own context during backward (never exited), then plain use;
    returns whether the hook was freed and the gradient of a later backward."""
    import gc
    import weakref

    def scope():
        def unpack(x):
            weak_ctx().__enter__()
            return x
        ctx = L.autograd.graph.saved_tensors_hooks(lambda x: x, unpack)
        weak_ctx = weakref.ref(ctx)
        x = L.ones(3, requires_grad=True)
        with ctx:
            x.sin().sum().backward()
        return weakref.ref(unpack)
    gc.disable()
    try:
        ref = scope()
        freed = ref() is None
    finally:
        gc.enable()
    a = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
    (a * a).exp().sum().backward()
    return freed, a.grad.tolist()


def test_unpack_hook_entering_a_context_during_backward_leaks_nothing():
    assert _leaky_unpack_scenario(ndgrad) == _leaky_unpack_scenario(torch)
    assert _leaky_unpack_scenario(ndgrad)[0]
    assert _no_hooks_left(ndgrad, [])


def test_unpack_hook_exiting_a_context_during_backward_is_undone_at_the_node():
    def scenario(L):
        calls = []

        def unpack(x):
            ctx_1.__exit__()
            return x
        ctx_1 = L.autograd.graph.saved_tensors_hooks(lambda x: x, unpack)
        ctx_2 = L.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x)
        for _ in range(3):
            with ctx_2:
                ctx_1.__enter__()
                L.ones(2, requires_grad=True).sin().sum().backward()
        for _ in range(3):
            ctx_1.__exit__()
        # the stack is empty again: a pair registered on one saved value works
        a = L.tensor(1.0, dtype=L.float64, requires_grad=True)
        y = a.exp()
        y.grad_fn._raw_saved_result.register_hooks(lambda x: (calls.append(1), x)[1],
                                                   lambda x: (calls.append(2), x)[1])
        y.backward()
        return calls, a.grad.item()
    assert scenario(ndgrad) == scenario(torch)


def _hook_mode_changes(L):
    """Hooks of one backward that change modes and never restore them: what the next node
    and the code after the backward see."""
    seen = []
    keep = []
    a = L.ones(2, requires_grad=True)
    b = a * 2
    c = b * 3

    def on_c(g):
        L.set_grad_enabled(True)
        m = L.inference_mode()
        m.__enter__()
        keep.append(m)
        L.autograd.graph.disable_saved_tensors_hooks("off").__enter__()

    def on_b(g):
        seen.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
        with L.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            seen.append("enter ok")
    c.register_hook(on_c)
    b.register_hook(on_b)
    c.sum().backward()
    seen.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
    d = L.ones(2, requires_grad=True)
    (d * d).sum().backward()
    seen.append(d.grad.tolist())
    return seen


def test_modes_changed_by_a_hook_are_restored_for_the_next_node_and_after_backward():
    assert _hook_mode_changes(ndgrad) == _hook_mode_changes(torch)


def test_saved_tensors_hooks_exit_without_enter_is_refused_and_changes_nothing():
    for L in LIBS:
        with pytest.raises(RuntimeError):
            L.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x).__exit__(None, None, None)
    calls = []
    with ndgrad.autograd.graph.saved_tensors_hooks(lambda x: (calls.append(1), x)[1],
                                                   lambda x: (calls.append(2), x)[1]):
        y = ndgrad.ones(2, requires_grad=True).exp()
    y.sum().backward()
    assert calls == [1, 2]


# ------------------------------------------------------------------ exits without enters
@pytest.mark.parametrize("misuse", ["no_grad", "enable_grad", "inference_mode", "dual_level",
                                    "exit_dual_level", "detect_anomaly", "set_grad_enabled"])
def test_an_exit_without_an_enter_then_normal_use(misuse):
    def scenario(L):
        make = {"no_grad": L.no_grad, "enable_grad": L.enable_grad,
                "inference_mode": L.inference_mode,
                "dual_level": L.autograd.forward_ad.dual_level,
                "detect_anomaly": L.autograd.detect_anomaly,
                "set_grad_enabled": lambda: L.set_grad_enabled(True)}
        outcome = None
        try:
            if misuse == "exit_dual_level":
                L.autograd.forward_ad.exit_dual_level()
            else:
                make[misuse]().__exit__(None, None, None)
        except Exception as e:  # noqa: BLE001 (the class is compared across libraries)
            outcome = type(e).__name__
        mode = L.is_grad_enabled()
        with L.enable_grad():
            a = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
            (a * a).sum().backward()
            doubled = L.func.vmap(lambda x: x * 2)(L.ones(2, dtype=L.float64))
        L.set_grad_enabled(True)
        return outcome, mode, a.grad.tolist(), doubled.tolist()
    assert scenario(ndgrad) == scenario(torch)
    assert ndgrad._state.special == 0


@pytest.mark.parametrize("bad", [1, None, "yes", 1.0])
def test_set_warn_always_refuses_a_non_bool_and_changes_nothing(bad):
    for L in LIBS:
        before = L.is_warn_always_enabled()
        with pytest.raises(RuntimeError, match="expects a bool"):
            L.set_warn_always(bad)
        assert L.is_warn_always_enabled() is before
