"""torch.signal.windows: the scipy-style window functions (``M`` points, ``sym=`` keyword).

Each window is composed from ndgrad ops exactly as torch composes it (a ``linspace`` carrying
``requires_grad``, then pointwise ops), so the result has torch's values in the requested dtype's
arithmetic and, with ``requires_grad=True``, torch's graph (a non-leaf whose ``grad_fn`` is the last
op; lengths 0 and 1 give leaf ``empty``/``ones``).  ``sym=False`` gives the periodic window: the
symmetric window of ``M + 1`` points without its last entry.  Only strided float32/float64 windows
exist; other dtypes or layouts raise torch's ``ValueError``.
"""

import math
from collections.abc import Iterable

from .. import _dtype

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _torch():
    import ndgrad
    return ndgrad


def _checked_dtype(name, M, dtype, layout):
    """The window's dtype after torch's common checks (length, layout, floating dtype)."""
    t = _torch()
    dtype = _dtype.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not t.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (t.float32, t.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M, dtype, device, requires_grad):
    """The window of 0 or 1 points (``None`` for longer ones)."""
    t = _torch()
    if M == 0:
        return t.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return t.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _grid(M, start, step, dtype, device, requires_grad):
    """``start + step * n`` for n in 0..M-1 as torch builds it (one linspace)."""
    return _torch().linspace(start * step, (start + (M - 1)) * step, M, dtype=dtype,
                             device=device, requires_grad=requires_grad)


def _span(M, sym):
    """The window's denominator: M - 1 points between ends when symmetric, M when periodic."""
    return M - 1 if sym else M


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    """The exponential (Poisson) window ``exp(-|n - center| / tau)``."""
    t = _torch()
    dtype = _checked_dtype("exponential", M, dtype, t.strided if layout is None else layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _grid(M, -center, 1.0 / tau, dtype, device, requires_grad)
    return t.exp(-t.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The cosine (sine) window ``sin(pi (n + 1/2) / M)``."""
    t = _torch()
    dtype = _checked_dtype("cosine", M, dtype, t.strided if layout is None else layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    k = _grid(M, 0.5, math.pi / (M + 1 if not sym else M), dtype, device, requires_grad)
    return t.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """The Gaussian window ``exp(-(n - c)^2 / (2 std^2))``."""
    t = _torch()
    dtype = _checked_dtype("gaussian", M, dtype, t.strided if layout is None else layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    k = _grid(M, start, 1 / (std * math.sqrt(2)), dtype, device, requires_grad)
    return t.exp(-k ** 2)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """The Kaiser window ``I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta)``."""
    t = _torch()
    dtype = _checked_dtype("kaiser", M, dtype, t.strided if layout is None else layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    beta = t.tensor(beta, dtype=dtype, device=device)  # in the window's dtype: no NaN at ends
    start = -beta
    step = 2.0 * beta / _span(M, sym)
    end = t.minimum(beta, start + (M - 1) * step)
    k = t.linspace(start.item(), end.item(), M, dtype=dtype, device=device,
                   requires_grad=requires_grad)
    return t.i0(t.sqrt(beta * beta - t.pow(k, 2))) / t.i0(beta)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """The sum of cosines ``sum_i (-1)^i a_i cos(2 pi i n / N)``."""
    t = _torch()
    dtype = _checked_dtype("general_cosine", M, dtype, t.strided if layout is None else layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _grid(M, 0, 2 * math.pi / _span(M, sym), dtype, device, requires_grad)
    coefficients = t.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype,
                            device=device, requires_grad=requires_grad)
    order = t.arange(coefficients.shape[0], dtype=dtype, device=device,
                     requires_grad=requires_grad)
    return (coefficients.unsqueeze(-1) * t.cos(order.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """The generalised Hamming window ``alpha - (1 - alpha) cos(2 pi n / N)``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hamming window (general Hamming with alpha 0.54)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window (general Hamming with alpha 0.5)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window (cosine sum with a = 0.42, 0.5, 0.08)."""
    t = _torch()
    dtype = _checked_dtype("blackman", M, dtype, t.strided if layout is None else layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Bartlett (triangular) window ``1 - |2n / N - 1|``."""
    t = _torch()
    dtype = _checked_dtype("bartlett", M, dtype, t.strided if layout is None else layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    step = 2 / _span(M, sym)
    k = t.linspace(-1, -1 + (M - 1) * step, M, dtype=dtype, device=device,
                   requires_grad=requires_grad)
    return 1 - t.abs(k)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
