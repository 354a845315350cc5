"""Saved-tensor hooks, save_on_cpu, disable_saved_tensors_hooks, raw saved handles and
allow_mutation_on_saved_tensors, differential against torch 2.13."""

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad import _state


def _pair(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    return a, b


def _log_hooks(lib, a, b, log):
    def pack(t):
        log.append(("pack", t is a, t is b, t.requires_grad, tuple(t.shape)))
        return t

    def unpack(t):
        log.append(("unpack", t is a, t is b))
        return t
    return lib.autograd.graph.saved_tensors_hooks(pack, unpack)


def test_pack_unpack_calls_and_results_match_torch():
    out = {}
    for lib in (torch, ndgrad):
        a, b = _pair(lib)
        log = []
        with _log_hooks(lib, a, b, log):
            y = a * b
            z = y.exp()
        packs = sorted(log)  # torch packs mul's `other` first; ndgrad `self` first
        log.clear()
        z.sum().backward()
        out[lib] = (packs, sorted(log), a.grad.numpy().copy(), b.grad.numpy().copy())
    assert out[ndgrad][0] == out[torch][0]
    assert out[ndgrad][1] == out[torch][1]
    np.testing.assert_allclose(out[ndgrad][2], out[torch][2], rtol=1e-6)
    np.testing.assert_allclose(out[ndgrad][3], out[torch][3], rtol=1e-6)


def test_pack_receives_the_output_tensor_itself():
    for lib in (torch, ndgrad):
        a, _ = _pair(lib)
        seen = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
            w = a.exp()
        assert seen[0] is w


def test_unpacked_values_are_new_tensors_with_autograd_identity():
    for lib in (torch, ndgrad):
        a, b = _pair(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            y = a * b
            z = y.exp()
        s = y.grad_fn._saved_self
        r = z.grad_fn._saved_result
        assert s is not a
        assert (s.requires_grad, s.grad_fn, s.is_leaf) == (True, None, True)
        assert r is not z and r.grad_fn is z.grad_fn
        np.testing.assert_allclose(r.detach().numpy(), np.exp([3.0, 8.0]), rtol=1e-6)


def test_innermost_hooks_win_and_double_backward_through_hooks():
    res = {}
    for lib in (torch, ndgrad):
        a, _ = _pair(lib)
        log = []
        outer = lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t,
                                                       lambda t: t)
        inner = lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t,
                                                       lambda t: t)
        with outer:
            with inner:
                y = a.sin()
            y2 = y.cos()
        g, = lib.autograd.grad(y2.sum(), a, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), a)
        res[lib] = (log, g.detach().numpy().copy(), gg.numpy().copy())
    assert res[ndgrad][0] == res[torch][0] == ["inner", "outer"]
    np.testing.assert_allclose(res[ndgrad][1], res[torch][1], rtol=1e-5)
    np.testing.assert_allclose(res[ndgrad][2], res[torch][2], rtol=1e-5)


def test_no_version_check_with_hooks_like_torch():
    for lib in (torch, ndgrad):
        a, b = _pair(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            c = a.clone()
            y = c * b
        c.add_(1)
        y.sum().backward()  # torch: no error, the packed clone is used
        np.testing.assert_allclose(b.grad.numpy(), [1.0, 2.0])


def test_hook_errors_match_torch():
    msgs = {}
    for lib in (torch, ndgrad):
        a, b = _pair(lib)
        got = []
        with pytest.raises(RuntimeError) as e1:
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t.mul_(1), lambda t: t):
                a.clone() * b.detach()
        got.append(str(e1.value))
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = a * b
        with pytest.raises(TypeError) as e2:
            y.grad_fn._saved_self
        got.append(str(e2.value))
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError) as e3:
                with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        got.append(str(e3.value))
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with pytest.raises(RuntimeError) as e4:
                with lib.autograd.graph.disable_saved_tensors_hooks("not inside hooks"):
                    pass
        got.append(str(e4.value))
        msgs[lib] = got
    assert msgs[ndgrad] == msgs[torch]
    assert _state.tls.saved_hooks == () and _state.tls.saved_hooks_disabled is None


def test_save_on_cpu_matches_torch():
    res = {}
    for lib in (torch, ndgrad):
        a, b = _pair(lib)
        with lib.autograd.graph.save_on_cpu():
            c = a.clone()
            y = (c * b).tanh()
        c.add_(1)  # the saved host copy is used, as in torch
        y.sum().backward()
        res[lib] = (a.grad.numpy().copy(), b.grad.numpy().copy())
    for x, y in zip(res[ndgrad], res[torch]):
        np.testing.assert_allclose(x, y, rtol=1e-5)


def test_raw_saved_handles_match_torch():
    out = {}
    for lib in (torch, ndgrad):
        a, b = _pair(lib)
        log = []
        y = a * b
        raw = y.grad_fn._raw_saved_self
        raw.register_hooks(lambda t: log.append("p") or t, lambda t: log.append("u") or t)
        msgs = []
        with pytest.raises(RuntimeError) as e:
            raw.register_hooks(lambda t: t, lambda t: t)
        msgs.append(str(e.value))
        y.sum().backward()
        with pytest.raises(RuntimeError) as e:
            y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        msgs.append(str(e.value))
        with pytest.raises(RuntimeError) as e:
            y.grad_fn._saved_self
        msgs.append(str(e.value))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y2 = x * lib.tensor([1.0, 2.0])
        with pytest.raises(RuntimeError) as e:
            y2.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        msgs.append(str(e.value))
        out[lib] = (log, msgs, y2.grad_fn._saved_self, b.grad.numpy().copy())
    assert out[ndgrad][0] == out[torch][0] == ["p", "u"]
    assert out[ndgrad][1] == out[torch][1]
    assert out[ndgrad][2] is None and out[torch][2] is None
    np.testing.assert_allclose(out[ndgrad][3], out[torch][3])


def test_allow_mutation_on_saved_tensors_matches_torch():
    res = {}
    for lib in (torch, ndgrad):
        msgs = []
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            y = x.clone()
            z = y * y
            y.mul_(10)
            y[0] = 5.0
            z.sum().backward()
            with pytest.raises(RuntimeError) as e:
                with lib.autograd.graph.allow_mutation_on_saved_tensors():
                    pass
            msgs.append(str(e.value))
            x2 = lib.tensor([1.0, 2.0], requires_grad=True)
            z2 = x2.clone().exp()
        with pytest.raises(AssertionError) as e:
            z2.sum().backward()
        msgs.append(str(e.value))
        res[lib] = (x.grad.numpy().copy(), y.detach().numpy().copy(), msgs)
    np.testing.assert_allclose(res[ndgrad][0], res[torch][0])
    np.testing.assert_allclose(res[ndgrad][0], [2.0, 4.0])
    np.testing.assert_allclose(res[ndgrad][1], res[torch][1])
    assert res[ndgrad][2] == res[torch][2]
    assert _state.special == 0


def test_mutation_without_allow_still_raises():
    x = ndgrad.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    z = y * y
    y.mul_(10)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_hooks_are_thread_local():
    import threading
    seen = []
    a = ndgrad.tensor([1.0], requires_grad=True)

    def other():
        seen.append(_state.tls.saved_hooks)
        (a * a).sum()
    with ndgrad.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        th = threading.Thread(target=other)
        th.start()
        th.join()
        assert len(_state.tls.saved_hooks) == 1
    assert seen == [()]


def test_hooks_apply_to_custom_function_saved_tensors_like_torch():
    logs = {}
    for lib in (torch, ndgrad):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y / x
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        log = []
        with lib.autograd.graph.saved_tensors_hooks(
                lambda t: log.append(("p", t.tolist())) or t,
                lambda t: log.append(("u", t.tolist())) or t):
            y = F.apply(a)
        y.sum().backward()
        logs[lib] = (log, a.grad.tolist())
    assert logs[ndgrad] == logs[torch]
