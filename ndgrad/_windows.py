"""Window functions for spectral analysis (torch.hann_window, hamming_window, blackman_window,
bartlett_window, kaiser_window): creation functions returning leaf tensors.

As in torch, a *periodic* window of length L is the symmetric window of length L + 1 without
its last entry (the right choice for ``stft``); lengths 0 and 1 give ``[]`` and ``[1.]``.
The values are computed in float64 and rounded to the requested floating dtype (torch computes
float32 windows in float32 arithmetic: entries may differ in the last bit).
"""

import numpy as np

from . import _dtype
from ._tensor import Tensor

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]

_CPP_TYPES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def _make(fname, window_length, periodic, dtype, requires_grad, values):
    """The window as a leaf tensor; `values(m)` gives the symmetric window of length m >= 2."""
    if not isinstance(window_length, (int, np.integer)) or isinstance(window_length, bool):
        raise TypeError(f"{fname}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    dt = _dtype.get_default_dtype() if dtype is None else dtype
    if not dt.is_floating_point:
        if dt.is_complex:
            name = "ComplexFloat" if dt.np == np.complex64 else "ComplexDouble"
            raise NotImplementedError(f"\"arange_cpu\" not implemented for '{name}'")
        raise RuntimeError(
            f"{fname} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_CPP_TYPES.get(dt.np.name, dt.np.name)}, device=cpu, layout=Strided (default), "
            "requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{fname} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length <= 1:
        arr = np.ones(window_length)
    else:
        m = window_length + 1 if periodic else window_length
        arr = values(m)[:window_length]
    t = Tensor(np.ascontiguousarray(arr, dtype=dt.np))
    if requires_grad:
        t.requires_grad_(True)
    return t


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    """The generalised Hamming window ``alpha - beta cos(2 pi k / (m - 1))``.

    >>> ndgrad.hamming_window(4)
    tensor([0.0800, 0.5400, 1.0000, 0.5400])
    """
    def values(m):
        return alpha - beta * np.cos(np.arange(m) * (2 * np.pi / (m - 1)))
    return _make("hamming_window", window_length, periodic, dtype, requires_grad, values)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """The Hann window ``0.5 - 0.5 cos(2 pi k / (m - 1))``.

    >>> ndgrad.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    def values(m):
        return 0.5 - 0.5 * np.cos(np.arange(m) * (2 * np.pi / (m - 1)))
    return _make("hann_window", window_length, periodic, dtype, requires_grad, values)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """The Blackman window ``0.42 - 0.5 cos(2 pi k / (m - 1)) + 0.08 cos(4 pi k / (m - 1))``."""
    def values(m):
        w = np.arange(m) * (np.pi / (m - 1))
        return 0.08 * np.cos(4 * w) - 0.5 * np.cos(2 * w) + 0.42
    return _make("blackman_window", window_length, periodic, dtype, requires_grad, values)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """The triangular Bartlett window ``1 - |2k / (m - 1) - 1|``."""
    def values(m):
        w = np.arange(m) * (2.0 / (m - 1))
        half = ((m - 1) >> 1) + 1
        w[half:] = 2 - w[half:]
        return w
    return _make("bartlett_window", window_length, periodic, dtype, requires_grad, values)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """The Kaiser window ``I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta)``, a = (m - 1) / 2."""
    def values(m):
        a = (m - 1) / 2.0
        r = (np.arange(m) - a) / a
        return np.i0(beta * np.sqrt(np.maximum(1 - r * r, 0.0))) / np.i0(beta)
    return _make("kaiser_window", window_length, periodic, dtype, requires_grad, values)
