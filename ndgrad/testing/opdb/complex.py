"""Op database entries for complex numbers (``ndgrad._ops.complex_ops``): the real/complex
views, conj, angle, polar and complex. Complex inputs avoid 0 (angle and sgn are not smooth
there); gradients are checked in torch's conjugate-Wirtinger convention (complex128)."""

import numpy as np

import ndgrad

from . import COMPLEX, FLOATING, OpInfo, SampleInput, register

_AS_COMPLEX = {ndgrad.float32: ndgrad.complex64, ndgrad.float64: ndgrad.complex128}


def _rand(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return a


def _t(arr, dtype, rg):
    t = ndgrad.tensor(np.asarray(arr), dtype=dtype)
    if rg and (dtype.is_floating_point or dtype.is_complex):
        t.requires_grad_(True)
    return t


def _unary_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    yield SampleInput(_t(_rand(rng, (2, 3), dtype), dtype, requires_grad), name="2x3")
    yield SampleInput(_t(_rand(rng, (), dtype), dtype, requires_grad), name="0-d")
    yield SampleInput(_t(_rand(rng, (0,), dtype), dtype, requires_grad), name="empty")
    t = _t(_rand(rng, (2, 3), dtype), dtype, requires_grad)
    yield SampleInput(t.t(), name="transposed")


def _complex_only(gen):
    """Samples of a complex-only op: the real-dtype suites (float64 gradcheck, no-mutation)
    get the matching complex dtype, so they exercise the op instead of its dtype error."""
    def wrapped(op, dtype, requires_grad):
        return gen(op, _AS_COMPLEX.get(dtype, dtype), requires_grad)
    return wrapped


def _view_as_complex_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    yield SampleInput(_t(_rand(rng, (3, 2), dtype), dtype, requires_grad), name="3x2")
    yield SampleInput(_t(_rand(rng, (2, 2, 2), dtype), dtype, requires_grad), name="batched")
    yield SampleInput(_t(_rand(rng, (2,), dtype), dtype, requires_grad), name="0-d result")


def _pair_samples(positive_first):
    def gen(op, dtype, requires_grad):
        rng = np.random.default_rng(0)
        for sa, sb in (((2, 3), (2, 3)), ((2, 3), (3,)), ((), (2,))):
            a = _rand(rng, sa, dtype)
            if positive_first:
                a = np.abs(a) + 0.1
            yield SampleInput(_t(a, dtype, requires_grad),
                              args=(_t(_rand(rng, sb, dtype), dtype, requires_grad),),
                              name=f"{sa}x{sb}")
    return gen


def _real(x):
    return ndgrad.real(x) * 1


def _t_real(x):
    import torch  # the test oracle: imported only when a test calls this
    return torch.real(x) * 1


register(
    OpInfo("real", sample_inputs=_unary_samples, dtypes=COMPLEX + FLOATING, family="complex",
           supports_complex_autograd=True, ref=np.real,
           notes="a view: select(view_as_real(z), -1, 0) as torch; real input returned as is"),
    OpInfo("imag", sample_inputs=_complex_only(_unary_samples), dtypes=COMPLEX,
           family="complex", supports_complex_autograd=True, ref=np.imag),
    OpInfo("conj", sample_inputs=_complex_only(_unary_samples), dtypes=COMPLEX,
           family="complex", op=lambda x: ndgrad.conj(x) * 1,
           torch_op=lambda x: __import__("torch").conj(x) * 1, supports_complex_autograd=True,
           ref=lambda x: np.conj(x) * 1,
           notes="multiplied by 1: torch's lazy conj view cannot be read by NumPy"),
    OpInfo("conj_physical", sample_inputs=_complex_only(_unary_samples), dtypes=COMPLEX,
           family="complex", supports_complex_autograd=True, ref=np.conj),
    OpInfo("angle", sample_inputs=_unary_samples, dtypes=COMPLEX + FLOATING, family="complex",
           supports_complex_autograd=True, method="angle", ref=np.angle),
    OpInfo("view_as_real", sample_inputs=_complex_only(_unary_samples), dtypes=COMPLEX,
           family="complex", supports_complex_autograd=True,
           ref=lambda x: np.stack([x.real, x.imag], -1)),
    OpInfo("view_as_complex", sample_inputs=_view_as_complex_samples, dtypes=FLOATING,
           family="complex", ref=lambda x: x[..., 0] + 1j * x[..., 1]),
    OpInfo("polar", sample_inputs=_pair_samples(True), dtypes=FLOATING, family="complex",
           ref=lambda r, t: r * np.exp(1j * t)),
    OpInfo("complex", sample_inputs=_pair_samples(False), dtypes=FLOATING, family="complex",
           ref=lambda a, b: a + 1j * b),
)
