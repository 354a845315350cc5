"""torch.utils.checkpoint's helper names (CheckpointFunction, detach_variable, ...) against
torch 2.13: same results, gradients, warnings and errors."""

import warnings

import numpy as np
import pytest
import torch

import ndgrad

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
W = np.arange(12.0).reshape(3, 4) / 10


def _reentrant_run(lib, preserve):
    ck = lib.utils.checkpoint
    x = lib.tensor(X, requires_grad=True)
    w = lib.tensor(W, requires_grad=True)
    lib.manual_seed(3)

    def f(a, scale):
        return lib.nn.functional.dropout(lib.tanh(a @ w), 0.5) * scale

    out = ck.CheckpointFunction.apply(f, preserve, x, 2.0)
    name = type(out.grad_fn).__name__
    out.pow(2).sum().backward()
    return name, out.detach().numpy(), x.grad.numpy(), w.grad.numpy()


@pytest.mark.parametrize("preserve", [True, False])
def test_checkpoint_function_apply_as_torch(preserve):
    ours, theirs = _reentrant_run(ndgrad, preserve), _reentrant_run(torch, preserve)
    assert ours[0] == theirs[0] == "CheckpointFunctionBackward"
    if preserve:        # the recomputation redraws the same dropout mask: exact gradients
        for a, b in zip(ours[1:], theirs[1:]):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    else:               # forward values still agree; the mask of the recomputation differs
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


def test_checkpoint_function_without_grad_inputs_warns_as_torch():
    for lib in (torch, ndgrad):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = lib.utils.checkpoint.CheckpointFunction.apply(lambda a: a * 2, True,
                                                                lib.ones(2))
        assert not out.requires_grad and out.grad_fn is None
        assert [str(w.message) for w in seen] == [
            "None of the inputs have requires_grad=True. Gradients will be None"]


def _detached(lib):
    a = lib.ones(2, requires_grad=True) * 3
    b = lib.zeros(1)
    out = lib.utils.checkpoint.detach_variable((a, b, 5))
    return [(o.requires_grad, o.is_leaf, o.grad_fn is None) if isinstance(o, lib.Tensor)
            else o for o in out]


def test_detach_variable_as_torch():
    assert _detached(ndgrad) == _detached(torch) == [(True, True, True), (False, True, True), 5]
    for lib in (torch, ndgrad):
        with pytest.raises(RuntimeError, match="Only tuple of tensors is supported. Got "
                                               "Unsupported input type: list"):
            lib.utils.checkpoint.detach_variable([lib.ones(1)])


def test_check_backward_validity_and_device_states_as_torch():
    for lib in (torch, ndgrad):
        ck = lib.utils.checkpoint
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            ck.check_backward_validity([lib.ones(1), 2])
            ck.check_backward_validity([lib.ones(1, requires_grad=True)])
        assert len(seen) == 1 and "None of the inputs have requires_grad" in str(seen[0].message)
        assert ck.get_device_states(lib.ones(2), 3, [lib.zeros(1)]) == ([], [])
        assert ck.set_device_states([], []) is None
        assert ck.DefaultDeviceType.get_device_type() == "cpu"
        with pytest.raises(AttributeError, match="has no attribute 'device'"):
            ck.set_device_states([0], [lib.get_rng_state()], device_type="cpu")


def test_checkpoint_policy_and_context_as_torch():
    tp, np_ = torch.utils.checkpoint.CheckpointPolicy, ndgrad.utils.checkpoint.CheckpointPolicy
    assert [(m.name, m.value) for m in np_] == [(m.name, m.value) for m in tp]
    for lib in (torch, ndgrad):
        ctx = lib.utils.checkpoint.SelectiveCheckpointContext(is_recompute=False, op_output=4)
        assert (ctx.is_recompute, ctx.op_output) == (False, 4)
        with pytest.raises(TypeError):
            lib.utils.checkpoint.SelectiveCheckpointContext(False)


def test_default_device_type_set_and_restored():
    for lib in (torch, ndgrad):
        d = lib.utils.checkpoint.DefaultDeviceType
        before = d.get_device_type()
        try:
            d.set_device_type("meta")
            assert d.get_device_type() == "meta"
            assert lib.utils.checkpoint.set_device_states([0], [None]) is None   # meta: skip
        finally:
            d.set_device_type(before)
        assert d.get_device_type() == before
