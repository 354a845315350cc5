"""Op database entries for reductions, scans, sorting and selection (``reduction.py`` and
``sorting.py``).

Samples are few and tiny: a 2x3 (or 3x4) tensor reduced over everything, over one dim (also
negative, with keepdim) and over a tuple of dims, a 0-d tensor and a transposed view. Values
are distinct and well separated (no ties), so the value-selecting ops (max, sort, median, ...)
have a unique answer and finite differences are meaningful; ties, NaN, infinities and the other
special points are tested against torch in tests/test_reductions.py.
"""

import numpy as np

import ndgrad

from . import FLOATING, OpInfo, SampleInput, Skip, register


def _distinct(shape, dtype, requires_grad, low=-2.0, high=2.0, transpose=False, seed=0):
    """Well separated values (a shuffled grid) so no two elements tie."""
    n = int(np.prod(shape)) if shape else 1
    rng = np.random.default_rng(seed + n)
    vals = np.linspace(low, high, n)[rng.permutation(n)] if n else np.zeros(0)
    arr = vals.reshape(shape[::-1] if transpose else shape).astype(dtype.np)
    t = ndgrad.tensor(arr)
    if transpose:
        t = t.t()
    if requires_grad and dtype.is_floating_point:
        t.requires_grad_(True)
    return t


def _samples(variants, shape=(3, 4), low=-2.0, high=2.0, zero_d=True, transposed=True,
             zero_d_args=()):
    """`variants`: tuples of (args, kwargs, name) applied to a `shape` tensor."""
    def gen(op, dtype, requires_grad):
        def make(s=shape, **kw):
            return _distinct(s, dtype, requires_grad, low, high, **kw)
        for args, kwargs, name in variants:
            yield SampleInput(make(), args=args, kwargs=kwargs, name=name)
        if zero_d:
            yield SampleInput(make(()), args=zero_d_args, name="0-d")
        if transposed and len(shape) == 2:
            yield SampleInput(make(shape, transpose=True), args=variants[-1][0],
                              kwargs=variants[-1][1], name="transposed")
    return gen


_ALL_DIM = [((), {}, "all"), ((1,), {}, "dim1"), ((-1,), {"keepdim": True}, "neg-keepdim")]
_DIMS = _ALL_DIM + [(((0, 1),), {}, "dims")]
_SCAN = [((1,), {}, "dim1"), ((-2,), {}, "neg-dim")]


def _entry(name, variants, family="reduction", method=True, **kw):
    sample_kw = {k: kw.pop(k) for k in ("shape", "low", "high", "zero_d", "transposed",
                                        "zero_d_args") if k in kw}
    return OpInfo(name, sample_inputs=_samples(variants, **sample_kw), family=family,
                  method=name if method is True else method, **kw)


def _values(out):
    return out[0]


register(
    _entry("sum", _DIMS, ref=lambda x, dim=None, keepdim=False: np.sum(x, axis=dim,
                                                                        keepdims=keepdim)),
    _entry("mean", _DIMS),
    _entry("prod", _ALL_DIM, low=0.5, high=1.5),
    _entry("amax", _DIMS),
    _entry("amin", _DIMS),
    _entry("max", _ALL_DIM, variant_test_name="reduction"),
    _entry("min", _ALL_DIM, variant_test_name="reduction"),
    _entry("argmax", _ALL_DIM, differentiable=False, supports_autograd=False),
    _entry("argmin", _ALL_DIM, differentiable=False, supports_autograd=False),
    _entry("var", _DIMS + [((1,), {"correction": 0}, "correction0")]),
    _entry("std", _DIMS + [((0,), {"unbiased": False}, "biased")]),
    _entry("var_mean", _DIMS, method=None),
    _entry("std_mean", _DIMS, method=None),
    _entry("logsumexp", [((1,), {}, "dim1"), (((0, 1),), {"keepdim": True}, "dims")],
           zero_d=False),
    _entry("norm", [((), {}, "fro"), ((1,), {"dim": 1}, "p1"), ((3,), {"dim": -1}, "p3"),
                    ((float("inf"),), {"dim": 0}, "inf"), ((1.5,), {}, "p1.5")],
           low=0.3, high=2.0),
    _entry("nansum", _DIMS),
    _entry("nanmean", _DIMS),
    _entry("cumsum", _SCAN, zero_d_args=(0,), inplace="cumsum_"),
    _entry("cumprod", _SCAN, low=0.5, high=1.5, zero_d_args=(0,), inplace="cumprod_"),
    _entry("cummax", _SCAN, zero_d_args=(0,)),
    _entry("cummin", _SCAN, zero_d_args=(-1,)),
    _entry("logcumsumexp", _SCAN, zero_d_args=(0,)),
    _entry("all", _ALL_DIM, differentiable=False, supports_autograd=False),
    _entry("any", _ALL_DIM, differentiable=False, supports_autograd=False),
    _entry("count_nonzero", [((), {}, "all"), ((1,), {}, "dim1")], method=None,
           differentiable=False, supports_autograd=False),
    # sorting / selection
    _entry("sort", [((), {}, "last"), ((0,), {"descending": True}, "dim0-desc")],
           family="sorting"),
    _entry("argsort", [((), {}, "last"), ((0,), {"descending": True}, "dim0-desc")],
           family="sorting", differentiable=False, supports_autograd=False),
    _entry("msort", [((), {}, "dim0")], family="sorting", zero_d=False),
    _entry("topk", [((2,), {}, "k2"), ((1, 0), {"largest": False}, "smallest-dim0")],
           family="sorting", zero_d=False),
    _entry("kthvalue", [((2,), {}, "k2"), ((3, 0, True), {}, "dim0-keepdim")],
           family="sorting", zero_d=False),
    _entry("median", _ALL_DIM, family="sorting"),
    _entry("nanmedian", _ALL_DIM, family="sorting"),
    _entry("mode", [((), {}, "last"), ((0, True), {}, "dim0-keepdim")], family="sorting",
           zero_d=False),
    _entry("unique_consecutive", [((), {"return_counts": True}, "counts")], family="sorting",
           supports_autograd=False, zero_d=False, transposed=False,
           notes="torch records UniqueConsecutiveBackward0 whose backward raises"),
    _entry("unique", [((), {}, "flat"), ((), {"return_counts": True}, "counts")],
           family="sorting", supports_autograd=False, zero_d=False, transposed=False,
           notes="torch records Unique2Backward0 whose backward raises (not differentiable)"),
)

del Skip, FLOATING, _values
