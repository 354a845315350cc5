"""The short-time Fourier transform and its inverse (torch.stft, torch.istft, and the Tensor
methods): composites of framing, a window product and the FFT primitives of ``_ops/fft.py``,
with torch's defaults, warnings and error messages. stft frames with the view
``Tensor.unfold`` (``UnfoldBackward0``), istft overlap-adds with its adjoint
``unfold_backward`` (``UnfoldBackwardBackward0``, as torch's istft), both in
``_ops/reshaping.py``. stft finishes in place (``transpose_``, ``squeeze_``) as torch; its
graph differs from torch's in one node name (see docs/decisions.md): torch frames with
``as_strided``, which reads storage a vmap sample does not own.

stft: ``center`` reflect-pads (``pad_mode``) ``n_fft // 2`` on both sides, frames of
``n_fft`` every ``hop_length`` (default ``n_fft // 4``) are multiplied by the window
(``win_length`` entries, zero-padded to ``n_fft`` around the centre; rectangular when None)
and transformed (one-sided for real input and window); the result is
``(batch?, freq, frames)``. istft inverts it by overlap-adding the windowed inverse
transforms and dividing by the overlap-added squared window.
"""

import warnings

from ._creation import ones
from ._ops import fft as _P
from ._ops.complex_ops import view_as_real
from ._ops.reshaping import overlap_add
from ._tensor import Tensor
from .nn import functional as _F

__all__ = ["istft", "stft"]

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known "
              "to cause spectral leakage. Other windows such as torch.hann_window or "
              "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
              "warning and use a rectangular window, explicitly set "
              "`window=torch.ones(n_fft, device=<device>)`.")
_NO_WINDOW_ISTFT = ("A window was not provided. A rectangular window will be applied.Please "
                    "provide the same window used by stft to make the inversion lossless.To "
                    "suppress this warning and use a rectangular window, explicitly set "
                    "`window=torch.ones(n_fft, device=<device>)`.")
_REAL_OUTPUT = ("stft with return_complex=False is deprecated. In a future pytorch release, "
                "stft will return complex tensors for all inputs, and return_complex=False will "
                "raise an error.\nNote: you can still call torch.view_as_real on the complex "
                "output to recover the old return format.")
_TYPE = {"float16": "Half", "float32": "Float", "float64": "Double", "complex64": "ComplexFloat",
         "complex128": "ComplexDouble", "int64": "Long", "int32": "Int", "int16": "Short",
         "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _opt(v):
    if v is None:
        return "None"
    return str(int(v)) if isinstance(v, bool) else str(v)


def _sizes(t):
    return "[" + ", ".join(str(s) for s in t._data.shape) + "]"


def _window_repr(window):
    return "None" if window is None else f"{window.type()}{{{_sizes(window)}}}"


def _frame_window(window, win_length, n_fft, like):
    """The window zero-padded to n_fft around its centre; None stays None for a full-length
    rectangular window."""
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    if window is None:
        window = ones(win_length, dtype=like.dtype)
    return _F.pad(window, (left, n_fft - win_length - left))


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """The short-time Fourier transform of a 1-D (or batched 2-D) signal (torch.stft).

    >>> x = ndgrad.randn(64)
    >>> ndgrad.stft(x, 16, window=ndgrad.hann_window(16), return_complex=True).shape
    torch.Size([9, 17])
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        nd = input.dim()
        pad = int(n_fft // 2)
        extended = input.view([1] * (3 - nd) + list(input.shape))
        input = _F.pad(extended, [pad, pad], pad_mode)
        input = input.view(input.shape[-nd:])
    if window is None:
        warnings.warn(_NO_WINDOW, UserWarning, stacklevel=2)
    is_complex = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not is_complex:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
    elif not return_complex:
        warnings.warn(_REAL_OUTPUT, UserWarning, stacklevel=2)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    out_complex = is_complex if return_complex is None else return_complex
    head = (f"stft({input.type()}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_repr(window)}, normalized={int(normalized)}, "
            f"onesided={_opt(onesided)}, return_complex={_opt(return_complex)}, "
            f"align_to_window={_opt(align_to_window)}) ")
    nd = input.dim()
    if nd not in (1, 2):
        raise RuntimeError(head + ": expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if nd == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(head + f": expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(head + f": expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(head + f": expected 0 < win_length <= n_fft, but got "
                           f"win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(head + f": expected a 1D window tensor of size equal to "
                           f"win_length={win}, but got window with size {_sizes(window)}")
    if align_to_window and win < n_fft:
        # frames aligned to the window: the signal gains the window's zero margins
        left = (n_fft - win) // 2
        x = _F.pad(x, (left, n_fft - win - left))
    onesided = not is_complex if onesided is None else onesided
    if is_complex and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    # frames of n_fft every hop entries: a view of the signal (torch takes the same view with
    # as_strided; unfold is vmap-safe and its backward is the overlap-add, see decisions.md)
    frames = x.unfold(1, n_fft, hop)
    w = _frame_window(window, win, n_fft, x)
    if w is not None:
        frames = frames * w
    norm = _P.BY_ROOT_N if normalized else _P.NONE
    if frames.is_complex():
        out = _P.c2c(frames, (2,), norm, True)
    else:
        out = _P.r2c(frames, (2,), norm, onesided)
    # in place, as torch (TransposeBackward1, SqueezeBackward4): the FFT's result is fresh
    out.transpose_(1, 2)
    if nd == 1:
        out.squeeze_(0)
    return out if out_complex else view_as_real(out)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of `stft` by overlap-add (torch.istft): a (batch?, length) signal."""
    if window is None:
        warnings.warn(_NO_WINDOW_ISTFT, UserWarning, stacklevel=2)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    dt = _TYPE.get(input._data.dtype.name, input._data.dtype.name)
    head = (f"istft(CPU{dt}Type{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_repr(window)}, center={int(center)}, "
            f"normalized={int(normalized)}, onesided={_opt(onesided)}, length={_opt(length)}, "
            f"return_complex={int(return_complex)}) ")
    nd = input.dim()
    if input.numel() == 0:
        raise RuntimeError(head + ": input tensor cannot be empty.")
    if nd not in (2, 3):
        raise RuntimeError(head + ": expected a tensor with 3 or 4 dimensions of real, or 2 or "
                           f"3 dimensions of  complex, but got {nd + 1}")
    n_frames = input.shape[-1]
    fft_size = input.shape[-2]
    signal_len = n_fft + hop * (n_frames - 1)
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(head + ": expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{fft_size}")
    if not onesided and n_fft != fft_size:
        raise RuntimeError(head + ": expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got "
                           f"{fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError(head + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(head + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(head + ": Invalid window shape. window has to be 1D and length of "
                           "`win_length`")
    if window is None:
        window = ones(win, dtype=input.real.dtype)
    w = _frame_window(window, win, n_fft, input)
    x = input.unsqueeze(0) if nd == 2 else input
    x = x.transpose(1, 2)  # (batch, frames, freq)
    norm = _P.BY_ROOT_N if normalized else _P.BY_N
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = _P.c2c(x, (2,), norm, False)
    else:
        if w.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        x = _P.c2r(x, (2,), norm, n_fft)
    y = overlap_add(x * w.view(1, 1, n_fft), (x.shape[0], signal_len), 1, n_fft, hop)
    w2 = (w * w).view(1, 1, n_fft).expand(1, n_frames, n_fft)
    envelope = overlap_add(w2, (1, signal_len), 1, n_fft, hop)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = signal_len - n_fft // 2
    else:
        end = signal_len
    y = y.narrow(1, start, min(end, signal_len) - start)
    envelope = envelope.narrow(1, start, min(end, signal_len) - start)
    if envelope.numel() and bool((envelope.abs().min() < 1e-11).item()):
        raise RuntimeError(head + "window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if nd == 2:
        y = y.squeeze(0)
    if end > signal_len:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        y = _F.pad(y, (0, end - signal_len))
    return y


def _stft_method(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
                 pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
                 align_to_window=None):
    return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                onesided, return_complex, align_to_window)


def _istft_method(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
                  normalized=False, onesided=None, length=None, return_complex=False):
    return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided,
                 length, return_complex)


# Tensor.stft / Tensor.istft are bound here, next to the functions they call.
Tensor.stft = _stft_method
Tensor.istft = _istft_method
