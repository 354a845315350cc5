"""Op database entries for ``ndgrad.fft`` (the transforms of ``ndgrad/fft.py`` on the three
primitives of ``ndgrad/_ops/fft.py``), the frequency helpers and the window functions.

Samples cover every norm mode, ``n``/``s`` trimming and padding (odd and even lengths, where
the Hermitian doubling of c2r differs), explicit and negative dims, a non-contiguous input
and a batch dim. Transforms taking complex input run in float and complex dtypes; the real
dtypes exercise torch's real-input paths (r2c for fft/ifft, a ToCopy to complex for the n-D
c2c transforms and the c2r ones), the complex ones the c2c/c2r paths, and gradients are also
checked in complex128 (conjugate-Wirtinger convention)."""

import ndgrad

from . import COMPLEX, FLOATING, INTEGRAL, OpInfo, SampleInput, make_arg, register

_NORMS = (None, "forward", "ortho")


def _samples_1d(hermitian_input):
    """Samples of a 1-D transform; `hermitian_input` ops (irfft, hfft) default to an output
    of 2 * (size - 1), so n variants cover odd and even outputs."""
    def gen(op, dtype, requires_grad):
        make = make_arg(dtype, requires_grad)
        yield SampleInput(make((6,)), name="1-D")
        for norm in _NORMS:
            yield SampleInput(make((3, 5)), kwargs={"norm": norm}, name=f"norm={norm}")
        yield SampleInput(make((3, 5)), kwargs={"n": 8}, name="pad")
        yield SampleInput(make((3, 5)), kwargs={"n": 3}, name="trim")
        yield SampleInput(make((4, 3)), kwargs={"n": 5, "dim": 0}, name="dim0-odd")
        yield SampleInput(make((2, 4, 3)), kwargs={"dim": -2, "norm": "ortho"}, name="dim-2")
        yield SampleInput(make((5, 4), noncontiguous=True), kwargs={"n": 6},
                          name="noncontiguous")
        if hermitian_input:
            yield SampleInput(make((3, 4)), kwargs={"n": 7}, name="odd-n")
    return gen


def _samples_nd(two_d):
    def gen(op, dtype, requires_grad):
        make = make_arg(dtype, requires_grad)
        yield SampleInput(make((3, 4)), name="2-D")
        for norm in _NORMS[1:]:
            yield SampleInput(make((2, 3, 4)), kwargs={"norm": norm}, name=f"norm={norm}")
        yield SampleInput(make((2, 3, 4)), kwargs={"s": (4, 5)}, name="s-pad")
        yield SampleInput(make((2, 5, 4)), kwargs={"s": (3, -1)}, name="s-trim")
        yield SampleInput(make((2, 3, 4)), kwargs={"s": (5, 3), "dim": (0, -1)},
                          name="s-dim")
        yield SampleInput(make((4, 3), noncontiguous=True), name="noncontiguous")
        if not two_d:
            yield SampleInput(make((2, 3, 4)), kwargs={"dim": (-1, 0)}, name="dims-reordered")
            yield SampleInput(make((3, 4, 2)), name="all-dims")
    return gen


def _real_only_errors(op):
    yield SampleInput(ndgrad.ones(4, 4, dtype=ndgrad.complex64), name="complex input")
    yield SampleInput(ndgrad.ones(4, 4), kwargs={"norm": "bad"}, name="bad norm")


def _errors_1d(op):
    x = ndgrad.ones(2, 4, dtype=ndgrad.complex128)
    yield SampleInput(x, kwargs={"dim": 2}, name="dim out of range")
    yield SampleInput(x, kwargs={"n": 0}, name="n=0")
    yield SampleInput(x, kwargs={"n": -2}, name="n<0")
    yield SampleInput(x, kwargs={"norm": "xyz"}, name="bad norm")
    yield SampleInput(ndgrad.tensor(1 + 1j), name="0-d")
    yield SampleInput(ndgrad.ones(4, dtype=ndgrad.float16), name="half")


def _errors_nd(op):
    x = ndgrad.ones(2, 4, dtype=ndgrad.complex128)
    yield SampleInput(x, kwargs={"dim": (0, 0)}, name="repeated dims")
    yield SampleInput(x, kwargs={"s": (2,), "dim": (0, 1)}, name="s and dim lengths")
    yield SampleInput(x, kwargs={"s": (2, 2, 2)}, name="s too long")
    yield SampleInput(x, kwargs={"s": (0, 2)}, name="s=0")
    yield SampleInput(x, kwargs={"dim": (5,)}, name="dim out of range")
    yield SampleInput(x, kwargs={"norm": "Ortho"}, name="bad norm")


def _errors_nd_hermitian(op):
    yield from _errors_nd(op)
    yield SampleInput(ndgrad.ones(2, 4, dtype=ndgrad.complex128), kwargs={"dim": ()},
                      name="no dims")


def _entry(name, samples, dtypes, complex_grad, errors):
    return OpInfo(f"fft.{name}", sample_inputs=samples, dtypes=dtypes, family="fft",
                  supports_complex_autograd=complex_grad, error_inputs=errors,
                  atol=1e-5, rtol=1e-5)


_ANY = FLOATING + COMPLEX
_ENTRIES = [
    _entry("fft", _samples_1d(False), _ANY + INTEGRAL[-1:], True, _errors_1d),
    _entry("ifft", _samples_1d(False), _ANY, True, _errors_1d),
    _entry("rfft", _samples_1d(False), FLOATING, False, _real_only_errors),
    _entry("irfft", _samples_1d(True), _ANY, True, _errors_1d),
    _entry("hfft", _samples_1d(True), _ANY, True, _errors_1d),
    _entry("ihfft", _samples_1d(False), FLOATING, False, _real_only_errors),
    _entry("fft2", _samples_nd(True), _ANY, True, _errors_nd),
    _entry("ifft2", _samples_nd(True), _ANY, True, _errors_nd),
    _entry("fftn", _samples_nd(False), _ANY + INTEGRAL[-1:], True, _errors_nd),
    _entry("ifftn", _samples_nd(False), _ANY, True, _errors_nd),
    _entry("rfft2", _samples_nd(True), FLOATING, False, _real_only_errors),
    _entry("rfftn", _samples_nd(False), FLOATING, False, _real_only_errors),
    _entry("irfft2", _samples_nd(True), _ANY, True, _errors_nd),
    _entry("irfftn", _samples_nd(False), _ANY, True, _errors_nd_hermitian),
    _entry("hfft2", _samples_nd(True), _ANY, True, _errors_nd),
    _entry("hfftn", _samples_nd(False), _ANY, True, _errors_nd_hermitian),
    _entry("ihfft2", _samples_nd(True), FLOATING, False, _real_only_errors),
    _entry("ihfftn", _samples_nd(False), FLOATING, False, _real_only_errors),
]


def _shift_samples(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad)
    yield SampleInput(make((4, 5)), name="all dims")
    yield SampleInput(make((3, 4, 5)), kwargs={"dim": 1}, name="dim")
    yield SampleInput(make((3, 4, 5)), kwargs={"dim": (-1, 0)}, name="dims")


def _shift_errors(op):
    yield SampleInput(ndgrad.tensor(1.0), name="0-d")
    yield SampleInput(ndgrad.ones(2, 3), kwargs={"dim": 3}, name="dim out of range")


register(
    *_ENTRIES,
    OpInfo("fft.fftshift", sample_inputs=_shift_samples, dtypes=_ANY, family="fft",
           supports_complex_autograd=True, error_inputs=_shift_errors),
    OpInfo("fft.ifftshift", sample_inputs=_shift_samples, dtypes=_ANY, family="fft",
           supports_complex_autograd=True, error_inputs=_shift_errors),
)


# --------------------------------------------------------------------------- stft / istft
def _window(dtype, requires_grad, n):
    dtype = {ndgrad.complex64: ndgrad.float32, ndgrad.complex128: ndgrad.float64}.get(dtype,
                                                                                     dtype)
    w = ndgrad.hann_window(n, dtype=dtype) + 0.1  # no zero entries: istft divides by it
    return w.detach().requires_grad_(requires_grad)


def _stft_samples(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad)
    w16 = _window(dtype, requires_grad, 16)
    yield SampleInput(make((40,)), args=(16,), kwargs={"window": w16, "return_complex": True},
                      name="1-D")
    yield SampleInput(make((2, 40)), args=(16,),
                      kwargs={"hop_length": 3, "win_length": 10, "return_complex": True,
                              "window": _window(dtype, requires_grad, 10)}, name="win_length")
    yield SampleInput(make((2, 33)), args=(15,),
                      kwargs={"hop_length": 5, "center": False, "normalized": True,
                              "window": _window(dtype, requires_grad, 15),
                              "return_complex": True}, name="no center, normalized")
    yield SampleInput(make((30,)), args=(8,),
                      kwargs={"onesided": False, "pad_mode": "constant", "window":
                              _window(dtype, requires_grad, 8), "return_complex": True},
                      name="two-sided")


def _istft_samples(op, dtype, requires_grad):
    cdt = {ndgrad.float32: ndgrad.complex64, ndgrad.float64: ndgrad.complex128}.get(dtype,
                                                                                   dtype)
    make = make_arg(cdt, requires_grad)
    yield SampleInput(make((9, 11)), args=(16,),
                      kwargs={"window": _window(cdt, requires_grad, 16)}, name="onesided")
    yield SampleInput(make((2, 9, 14)), args=(16,),
                      kwargs={"hop_length": 3, "win_length": 10, "length": 40,
                              "window": _window(cdt, requires_grad, 10)}, name="batched")
    yield SampleInput(make((8, 9)), args=(8,),
                      kwargs={"onesided": False, "return_complex": True, "normalized": True,
                              "window": _window(cdt, requires_grad, 8)}, name="two-sided")


_FRAMING = ("stft cuts its frames with unfold (UnfoldBackward0 where torch records "
            "AsStridedBackward0); values and gradients are torch's")

register(
    OpInfo("stft", sample_inputs=_stft_samples, dtypes=FLOATING + COMPLEX, family="fft",
           supports_complex_autograd=True, check_grad_fn=False, method="stft",
           atol=1e-5, rtol=1e-5, notes=_FRAMING),
    OpInfo("istft", sample_inputs=_istft_samples, dtypes=COMPLEX, family="fft",
           supports_complex_autograd=True, method="istft", atol=1e-5, rtol=1e-5),
)


# --------------------------------------------------------------------------- windows
def _window_samples(op, dtype, requires_grad):
    for n, periodic in ((0, True), (1, False), (7, True), (8, False)):
        yield SampleInput(n, args=(periodic,), kwargs={"dtype": dtype},
                          name=f"{n}-{'periodic' if periodic else 'symmetric'}")


def _window_errors(op):
    yield SampleInput(-1, name="negative length")
    yield SampleInput(4, kwargs={"dtype": ndgrad.int64}, name="integer dtype")


register(*[
    OpInfo(name, sample_inputs=_window_samples, family="fft", differentiable=False,
           supports_autograd=False, error_inputs=_window_errors, atol=1e-6, rtol=1e-6)
    for name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
                 "kaiser_window")])
