"""Op database entries for the remaining torch surface names (``_ops/function_forms.py``,
``_ops/legacy_methods.py``, the linear-algebra additions of ``_ops/householder.py`` and
``_ops/ldl.py``): the out-of-place ``fill``, ``as_strided_scatter``, ``constant_pad_nd``,
``adjoint``, ``trapz``, ``split_with_sizes`` and the legacy ``Tensor.resize``.

Samples are tiny, deterministic (a seeded NumPy generator per sample) and include one
non-contiguous (transposed) input where the op accepts any layout.
"""

import warnings

import numpy as np

import ndgrad

from . import COMPLEX, FLOATING, OpInfo, SampleInput, Skip, register


def _t(shape, dtype, requires_grad, seed=0, transpose=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape[::-1] if transpose else shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(a.shape)
    t = ndgrad.tensor(a.astype(dtype.np))
    if transpose:
        t = t.t()
    if requires_grad:
        t.requires_grad_(True)
    return t


def _fill_samples(op, dtype, rg):
    yield SampleInput(_t((2, 3), dtype, rg), args=(1.5,), name="scalar")
    yield SampleInput(_t((3, 2), dtype, rg, transpose=True), args=(-2.0,), name="transposed")
    yield SampleInput(_t((2, 3), dtype, rg), args=(_t((), dtype, rg, seed=1),), name="tensor")


def _scatter_samples(op, dtype, rg):
    yield SampleInput(_t((2, 3), dtype, rg), args=(_t((2, 2), dtype, rg, seed=1), (2, 2),
                                                   (1, 2)), name="strided")
    yield SampleInput(_t((3, 4), dtype, rg), args=(_t((2, 3), dtype, rg, seed=2), (2, 3),
                                                   (4, 1), 1), name="offset")


def _pad_samples(op, dtype, rg):
    yield SampleInput(_t((2, 3), dtype, rg), args=([1, 2],), kwargs={"value": 0.5}, name="last")
    yield SampleInput(_t((2, 3, 4), dtype, rg), args=([1, -1, 2, 0],), name="crop")


def _adjoint_samples(op, dtype, rg):
    yield SampleInput(_t((2, 3), dtype, rg), name="matrix")
    yield SampleInput(_t((2, 3, 4), dtype, rg), name="batch")


def _trapz_samples(op, dtype, rg):
    yield SampleInput(_t((2, 4), dtype, rg), name="unit")
    yield SampleInput(_t((2, 4), dtype, rg), args=(_t((4,), dtype, rg, seed=1),), name="x")
    yield SampleInput(_t((3, 2), dtype, rg), kwargs={"dx": 0.5, "dim": 0}, name="dx")


def _split_samples(op, dtype, rg):
    yield SampleInput(_t((3, 5), dtype, rg), args=([2, 3], 1), name="dim1")
    yield SampleInput(_t((4, 3), dtype, rg, transpose=True), args=([1, 3],), name="dim0")


def _resize_samples(op, dtype, rg):
    yield SampleInput(_t((2, 3), dtype, rg), args=(3, 2), name="contiguous")
    yield SampleInput(_t((3, 2), dtype, rg, transpose=True), args=(6,), name="transposed")


def _resize(x, *sizes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x.resize(*sizes)


register(
    OpInfo("fill", sample_inputs=_fill_samples, dtypes=FLOATING + COMPLEX, family="surface",
           supports_complex_autograd=True),
    OpInfo("as_strided_scatter", sample_inputs=_scatter_samples, dtypes=FLOATING + COMPLEX,
           family="surface", method="as_strided_scatter", supports_complex_autograd=True,
           skips=(Skip("grad", "torch 2.13's gradient for `input` is wrong (it keeps the "
                               "scattered region and zeroes the rest; its own gradcheck "
                               "fails); ndgrad's passes finite differences: tested in "
                               "tests/test_surface_names.py, see decisions.md"),
                  Skip("complex_grad", "compared with torch's wrong input gradient"))),
    OpInfo("constant_pad_nd", sample_inputs=_pad_samples, family="surface"),
    OpInfo("adjoint", sample_inputs=_adjoint_samples, dtypes=FLOATING + COMPLEX,
           family="surface", method="adjoint", supports_complex_autograd=True),
    OpInfo("trapz", sample_inputs=_trapz_samples, family="surface", check_grad_fn=False,
           notes="composite of trapezoid; its node names are trapezoid's"),
    OpInfo("split_with_sizes", sample_inputs=_split_samples, family="surface",
           method="split_with_sizes"),
    OpInfo("Tensor.resize", op=_resize, torch_op=_resize, sample_inputs=_resize_samples,
           family="surface", supports_forward_ad=False,
           notes="torch's Resize Function defines no jvp (forward AD raises there); ndgrad's "
                 "resize is linear and has one"),
)


# ----------------------------------------------------------------------------- householder
def _reflectors(rng, m, n, dtype, rg):
    """geqrf's (a, tau) of a random m x n matrix, as leaves."""
    a, tau = ndgrad.geqrf(_t((m, n), dtype, False, seed=int(rng.integers(1 << 30))))
    return a.requires_grad_(rg), tau.requires_grad_(rg)


def _orgqr_samples(op, dtype, rg):
    rng = np.random.default_rng(5)
    for m, n in ((4, 3), (3, 3)):
        a, tau = _reflectors(rng, m, n, dtype, rg)
        yield SampleInput(a, args=(tau,), name=f"{m}x{n}")


def _ormqr_samples(op, dtype, rg):
    rng = np.random.default_rng(6)
    a, tau = _reflectors(rng, 4, 3, dtype, rg)
    for left in (True, False):
        for tr in (False, True):
            c = _t((4, 2) if left else (2, 4), dtype, rg, seed=7)
            yield SampleInput(a, args=(tau, c, left, tr), name=f"left={left},transpose={tr}")
    a, tau = _reflectors(rng, 3, 4, dtype, rg)
    yield SampleInput(a, args=(tau, _t((3, 2), dtype, rg, seed=8)), name="wide")


register(
    OpInfo("orgqr", sample_inputs=_orgqr_samples, dtypes=FLOATING + COMPLEX, family="surface",
           method="orgqr", check_grad_fn=False, supports_complex_autograd=True,
           notes="linalg.householder_product's composite: its node names, not torch's"),
    OpInfo("ormqr", sample_inputs=_ormqr_samples, dtypes=FLOATING + COMPLEX, family="surface",
           method="ormqr", check_grad_fn=False, supports_complex_autograd=True,
           supports_forward_ad=False,
           notes="a composite of householder_product and matmul (torch: OrmqrBackward0); "
                 "torch has no forward AD for ormqr, ndgrad's composite has one (untested "
                 "against torch)"),
)


def _gradient_samples(op, dtype, rg):
    yield SampleInput(_t((4, 5), dtype, rg), name="unit")
    yield SampleInput(_t((4, 5), dtype, rg), kwargs={"spacing": [0.5, 2.0], "edge_order": 2},
                      name="scalars-order2")
    coords = ndgrad.tensor(np.cumsum(np.random.default_rng(9).uniform(0.5, 1.5, 5))
                           .astype(dtype.np))
    yield SampleInput(_t((4, 5), dtype, rg), kwargs={"spacing": [coords], "dim": 1},
                      name="coordinates")


register(
    OpInfo("gradient", sample_inputs=_gradient_samples, family="surface", check_grad_fn=False,
           notes="a composite of narrow, arithmetic and cat (torch's node names differ: it "
                 "slices with at::slice)"),
)
