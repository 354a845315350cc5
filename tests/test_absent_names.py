"""Names op_db exercises that ndgrad lacked (issue 25): as_strided_copy, Tensor.__rdiv__,
Tensor.cdouble/cfloat(memory_format=), Tensor.bfloat16/chalf. Values and gradients are
checked against torch 2.13 on op_db's own samples (float64 and complex128)."""

import numpy as np
import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import ndgrad


def _to_ndgrad(value):
    """A sample argument as ndgrad takes it (tensors copied with their requires_grad)."""
    if isinstance(value, torch.Tensor):
        out = ndgrad.tensor(value.detach().numpy().copy())
        return out.requires_grad_(True) if value.requires_grad else out
    if isinstance(value, (list, tuple)):
        return type(value)(_to_ndgrad(v) for v in value)
    return value


def _opinfo(name):
    return next(o for o in op_db if o.name == name)


@pytest.mark.parametrize("name", ["as_strided_copy", "__rdiv__"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128], ids=str)
def test_opdb_samples_values_and_gradients(name, dtype):
    opinfo = _opinfo(name)
    samples = list(opinfo.sample_inputs("cpu", dtype, requires_grad=True))
    assert samples
    for sample in samples:
        expected = opinfo.op(sample.input, *sample.args, **sample.kwargs)
        inp, args = _to_ndgrad(sample.input), _to_ndgrad(sample.args)
        if hasattr(ndgrad, name):
            got = getattr(ndgrad, name)(inp, *args, **sample.kwargs)
        else:
            got = getattr(inp, name)(*args, **sample.kwargs)
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
        cotangent = torch.randn_like(expected)
        (want,) = torch.autograd.grad(expected, sample.input, cotangent)
        (have,) = ndgrad.autograd.grad(got, inp, _to_ndgrad(cotangent))
        np.testing.assert_allclose(have.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_rdiv_grad_fn_matches_torch():
    got = ndgrad.tensor([1.0, 2.0], requires_grad=True).__rdiv__(3)
    expected = torch.tensor([1.0, 2.0], requires_grad=True).__rdiv__(3)
    assert type(got.grad_fn).__name__ == type(expected.grad_fn).__name__
    assert got.tolist() == expected.tolist()


@pytest.mark.parametrize("method", ["cdouble", "cfloat", "double", "float"])
def test_conversions_take_memory_format(method):
    got = getattr(ndgrad.tensor([[1.0, 2.0]]), method)(memory_format=ndgrad.preserve_format)
    expected = getattr(torch.tensor([[1.0, 2.0]]), method)(memory_format=torch.preserve_format)
    assert str(got.dtype) == str(expected.dtype)
    assert got.tolist() == expected.tolist()


@pytest.mark.parametrize("method", ["bfloat16", "chalf"])
def test_dtypes_ndgrad_lacks_raise_and_change_nothing(method):
    x = ndgrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="ndgrad has no"):
        getattr(x, method)()
    assert x.dtype == ndgrad.float32 and x.grad is None and x._version == 0
