"""Op database entries for torch.special's functions added in issue 16: erfcx, log_ndtr and
ndtri (``_ops/normal_cdf.py``, differentiable), the Bessel functions J/Y, the modified I/K,
their scaled forms, the spherical j0 and Airy's Ai (``_ops/bessel.py``) and the orthogonal
polynomials (``_ops/special_polynomials.py``), which torch does not differentiate: their
entries are ``differentiable=False`` (the suite checks their outputs never require grad).

Domains and special values are tested in tests/test_special_functions.py.
"""


import ndgrad

from . import FLOATING, OpInfo, SampleInput, make_arg, register
from .pointwise import U


def _float16_error(op):
    yield SampleInput(ndgrad.tensor([0.5], dtype=ndgrad.float16), name="float16")
    yield SampleInput(ndgrad.tensor([0.5 + 1j]), name="complex")
    yield SampleInput(0.5, name="python-number")


_NO_GRAD = {"method": None, "inplace": None, "differentiable": False,
            "error_inputs": _float16_error}
_J_NOTE = ("float64: FFT of exp(i x sin t) (Jacobi-Anger) / Neumann series for Y, Hankel "
           "series above 25; torch's own kernel is only about 1e-7 accurate in 5 < x < 12 "
           "(docs/decisions.md)")
_K_NOTE = "float64: log series (x <= 1), trapezoid rule on the integral, Hankel series (x > 25)"

register(
    U("special.erfcx", -3.0, 5.0, int_range=(-2, 4), method=None, inplace=None,
      error_inputs=_float16_error,
      notes="exp(x^2) erfc(x) by erfc (x < 2) or its continued fraction without exp(-x^2)"),
    U("special.log_ndtr", -5.0, 4.0, int_range=(-3, 3), method=None, inplace=None,
      error_inputs=_float16_error,
      notes="log(erfcx(-x/sqrt 2)/2) - x^2/2 below -1, log1p(-erfc(x/sqrt 2)/2) above"),
    U("special.ndtri", 0.05, 0.95, int_range=(0, 0), method=None, inplace=None,
      error_inputs=_float16_error,
      notes="sqrt(2) erfinv(2p-1) centrally, Newton on log_ndtr in the tails"),
    U("special.bessel_j0", -8.0, 30.0, notes=_J_NOTE, atol=1e-6, rtol=1e-5, **_NO_GRAD),
    U("special.bessel_j1", -8.0, 30.0, notes=_J_NOTE, atol=1e-6, rtol=1e-5, **_NO_GRAD),
    U("special.bessel_y0", 0.1, 30.0, int_range=(1, 9), notes=_J_NOTE, atol=1e-6, rtol=1e-5,
      **_NO_GRAD),
    U("special.bessel_y1", 0.1, 30.0, int_range=(1, 9), notes=_J_NOTE, atol=1e-6, rtol=1e-5,
      **_NO_GRAD),
    U("special.modified_bessel_i0", -5.0, 5.0, notes="the kernel of i0 (no gradient here)",
      **_NO_GRAD),
    U("special.modified_bessel_i1", -5.0, 5.0, notes="the kernel of i1 (no gradient here)",
      **_NO_GRAD),
    U("special.modified_bessel_k0", 0.05, 30.0, int_range=(1, 9), notes=_K_NOTE, **_NO_GRAD),
    U("special.modified_bessel_k1", 0.05, 30.0, int_range=(1, 9), notes=_K_NOTE, **_NO_GRAD),
    U("special.scaled_modified_bessel_k0", 0.05, 30.0, int_range=(1, 9), notes=_K_NOTE,
      **_NO_GRAD),
    U("special.scaled_modified_bessel_k1", 0.05, 30.0, int_range=(1, 9), notes=_K_NOTE,
      **_NO_GRAD),
    U("special.spherical_bessel_j0", -10.0, 10.0, notes="sin(x)/x", **_NO_GRAD),
    U("special.airy_ai", -8.0, 8.0, atol=1e-5, rtol=1e-5,
      notes="Taylor steps of Ai'' = x Ai on [-9, 1], K_1/3 above, asymptotic series below; "
            "torch's own kernel is about 1e-5 off near x = -2.1", **_NO_GRAD),
)


def _polynomial_samples(lo, hi):
    def gen(op, dtype, requires_grad):
        if dtype.np.kind in "iu":
            mx = make_arg(dtype, low=-2, high=3)
        else:
            mx = make_arg(dtype, low=lo, high=hi)
        n = ndgrad.tensor([[0, 1, 2], [3, 5, 9]])
        yield SampleInput(mx((2, 3)), args=(n,), name="tensor-degrees")
        yield SampleInput(mx((4, 1)), args=(ndgrad.tensor([2.0, 7.0, 12.0]),),
                          name="broadcast-float-degrees")
        yield SampleInput(mx((3,)), args=(4,), name="python-int-degree")
        yield SampleInput(mx(()), args=(ndgrad.tensor([1, 3]),), name="0-d")
        yield SampleInput(mx((0, 2)), args=(3,), name="empty")
        if dtype.np.kind == "f":
            yield SampleInput(0.25, args=(ndgrad.tensor([2, 3, 8]),), name="python-number-x")
    return gen


def _polynomial_errors(op):
    yield SampleInput(0.5, args=(3,), name="two-numbers")
    yield SampleInput(ndgrad.tensor([0.5], dtype=ndgrad.float16), args=(3,), name="float16")


def _polynomial(name, lo=-1.0, hi=1.0, **kw):
    return OpInfo("special." + name, sample_inputs=_polynomial_samples(lo, hi), **kw,
                  dtypes=FLOATING + (ndgrad.int64,), family="pointwise binary",
                  differentiable=False, error_inputs=_polynomial_errors,
                  notes="torch's kernel: truncated degree, end values, trigonometric forms "
                        "for high degrees inside the interval, else the recurrence")


register(*[_polynomial(n) for n in (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "legendre_polynomial_p")],
    *[_polynomial("shifted_chebyshev_polynomial_" + k, 0.0, 1.0) for k in "tuvw"],
    # float32 recurrences that cancel: torch's float32 kernel rounds differently (1e-5)
    _polynomial("hermite_polynomial_h", -2.0, 2.0, rtol=2e-5, atol=1e-5),
    _polynomial("hermite_polynomial_he", -2.0, 2.0, rtol=2e-5, atol=1e-5),
    _polynomial("laguerre_polynomial_l", 0.0, 4.0))

