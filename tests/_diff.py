"""Helpers for differential tests: run one scenario with ndgrad and with torch and compare."""

import numpy as np
import pytest
import torch

import ndgrad

LIBS = {"ndgrad": ndgrad, "torch": torch}


def to_np(x):
    """Plain values for comparison: tensors become arrays, containers recurse."""
    if isinstance(x, (ndgrad.Tensor, torch.Tensor)):
        return np.array(x.detach().numpy() if x.requires_grad else x.numpy(), copy=True)
    if isinstance(x, (list, tuple)):
        return type(x)(to_np(v) for v in x) if not hasattr(x, "_fields") else \
            tuple(to_np(v) for v in x)
    if isinstance(x, dict):
        return {k: to_np(v) for k, v in x.items()}
    return x


def assert_same(a, b, rtol=1e-6, atol=1e-6, check_dtype=True):
    """Recursively compare results of the two libraries (arrays, numbers, strings, None)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"shape {a.shape} != {b.shape}"
        if check_dtype:
            assert a.dtype == b.dtype, f"dtype {a.dtype} != {b.dtype}"
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{a!r} vs {b!r}"
        for x, y in zip(a, b):
            assert_same(x, y, rtol, atol, check_dtype)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k], rtol, atol, check_dtype)
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, rel=rtol, abs=atol, nan_ok=True)
    else:
        assert a == b, f"{a!r} != {b!r}"


def same(scenario, rtol=1e-6, atol=1e-6, check_dtype=True):
    """Run ``scenario(lib)`` for both libraries and assert equal results; returns ndgrad's."""
    ours = scenario(ndgrad)
    theirs = scenario(torch)
    assert_same(to_np(ours), to_np(theirs), rtol, atol, check_dtype)
    return ours


def raises_same(scenario):
    """Both libraries raise the same exception type with the same message."""
    errs = []
    for lib in (ndgrad, torch):
        with pytest.raises(Exception) as info:
            scenario(lib)
        errs.append(info.value)
    ours, theirs = errs
    assert type(ours) is type(theirs) or isinstance(ours, type(theirs)), \
        f"{type(ours).__name__}: {ours} vs {type(theirs).__name__}: {theirs}"
    assert str(ours) == str(theirs), f"\nndgrad: {ours}\ntorch:  {theirs}"
    return ours


def arr(seed, *shape, dtype=np.float64):
    """Deterministic test data."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype)


def t(lib, data, requires_grad=False, dtype=None):
    """A leaf tensor of `lib` holding a copy of `data`."""
    x = lib.tensor(np.array(data), dtype=dtype)
    if requires_grad:
        x.requires_grad_(True)
    return x
