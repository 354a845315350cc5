"""torch.signal.windows against torch 2.13: every op_db sample of the eleven windows (values and
dtypes in float32/float64), their error inputs (class and message), and the graph a
``requires_grad=True`` window carries (grad_fn name, gradient of a weighted sum)."""

import re

import numpy as np
import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import ndgrad

WINDOW_OPS = [o for o in op_db if o.name.startswith("signal.windows.")]


def _to_ndgrad(value):
    """A sample argument as ndgrad takes it (dtypes and layouts by name; others unchanged)."""
    if isinstance(value, (torch.dtype, torch.layout)):
        name = str(value).split(".")[-1]
        found = getattr(ndgrad, name, None)
        return _Absent(str(value)) if found is None else found
    return value


class _Absent:
    """A torch dtype/layout ndgrad does not have: passed on so the window's check sees it."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text


def _ndgrad_window(opinfo):
    return getattr(ndgrad.signal.windows, opinfo.name.split(".")[-1])


def test_every_window_is_covered():
    assert len(WINDOW_OPS) == 11
    assert sorted(ndgrad.signal.windows.__all__) == sorted(o.name.split(".")[-1]
                                                            for o in WINDOW_OPS)


@pytest.mark.parametrize("opinfo", WINDOW_OPS, ids=lambda o: o.name)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_samples_match_torch(opinfo, dtype):
    window = _ndgrad_window(opinfo)
    samples = list(opinfo.sample_inputs("cpu", dtype))
    assert samples
    for sample in samples:
        expected = opinfo.op(sample.input, *sample.args, **sample.kwargs)
        kwargs = {k: _to_ndgrad(v) for k, v in sample.kwargs.items()}
        got = window(sample.input, *sample.args, **kwargs)
        assert str(got.dtype) == str(expected.dtype)
        assert tuple(got.shape) == tuple(expected.shape)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("opinfo", WINDOW_OPS, ids=lambda o: o.name)
def test_error_inputs_match_torch(opinfo):
    window = _ndgrad_window(opinfo)
    errors = list(opinfo.error_inputs("cpu"))
    assert errors
    for error in errors:
        sample = error.sample_input
        kwargs = {k: _to_ndgrad(v) for k, v in sample.kwargs.items()}
        with pytest.raises(error.error_type) as caught:
            window(sample.input, *sample.args, **kwargs)
        assert re.search(error.error_regex, str(caught.value)), str(caught.value)


@pytest.mark.parametrize("name,kwargs", [
    ("hann", {}), ("cosine", {"sym": False}), ("gaussian", {"std": 0.7}),
    ("exponential", {"center": 2.0, "tau": 1.5, "sym": False}), ("kaiser", {"beta": 4.0}),
    ("bartlett", {}), ("nuttall", {"sym": False}), ("general_cosine", {"a": [0.5, 0.3, 0.2]}),
])
def test_requires_grad_graph_matches_torch(name, kwargs):
    weights = np.linspace(0.5, 2.0, 7)
    expected = getattr(torch.signal.windows, name)(7, dtype=torch.float64, requires_grad=True,
                                                   **kwargs)
    got = getattr(ndgrad.signal.windows, name)(7, dtype=ndgrad.float64, requires_grad=True,
                                               **kwargs)
    assert type(got.grad_fn).__name__ == type(expected.grad_fn).__name__
    assert got.requires_grad and not got.is_leaf
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("length", [0, 1])
def test_short_windows_are_leaves(length):
    got = ndgrad.signal.windows.hamming(length, requires_grad=True)
    expected = torch.signal.windows.hamming(length, requires_grad=True)
    assert got.is_leaf == expected.is_leaf and got.requires_grad
    assert got.tolist() == expected.tolist()
