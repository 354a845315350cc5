"""Op database entries for sample statistics and counting (``_ops/statistics.py``) and for
distances (``_ops/distances.py``).

Values are drawn from a fixed seed, well inside each op's smooth region: no ties for
aminmax/quantile (continuous draws), distances between distinct points. Ties, NaN, weights
and each error are tested against torch in tests/test_missing_ops.py.
"""

import ndgrad

from . import OpInfo, SampleInput, Skip, make_arg, register

# torch 2.13 has no forward-mode formula for cdist and pdist (nothing to compare with);
# ndgrad's JVPs are checked against finite differences in tests/test_missing_ops.py.
_NO_TORCH_FWD = (Skip("forward_ad", "torch has no forward AD for it to compare with"),
                 Skip("fwgrad_bwgrad", "torch has no forward AD for it to compare with"))


def _aminmax(op, dtype, rg):
    make = make_arg(dtype, rg)
    yield SampleInput(make((3, 4)), name="all")
    yield SampleInput(make((3, 4)), kwargs={"dim": 1}, name="dim1")
    yield SampleInput(make((3, 4)), kwargs={"dim": -2, "keepdim": True}, name="neg-keepdim")
    yield SampleInput(make(()), name="0-d")


def _quantile(op, dtype, rg):
    make = make_arg(dtype, rg)
    yield SampleInput(make((3, 5)), args=(0.3,), name="all")
    yield SampleInput(make((3, 5)), args=(0.6,), kwargs={"dim": 1, "keepdim": True},
                      name="dim1-keepdim")
    yield SampleInput(make((3, 5)), args=(ndgrad.tensor([0.2, 0.9], dtype=dtype),),
                      kwargs={"dim": 0}, name="q-tensor")
    yield SampleInput(make((4,)), args=(0.5,), kwargs={"interpolation": "midpoint"},
                      name="midpoint")


def _cov(op, dtype, rg):
    make = make_arg(dtype, rg)
    yield SampleInput(make((3, 5)), name="2-d")
    yield SampleInput(make((5,)), kwargs={"correction": 0}, name="1-d-biased")
    yield SampleInput(make((2, 4)), kwargs={"aweights": make((4,), low=0.5, high=2.0,
                                                             requires_grad=False)},
                      name="aweights")


def _corrcoef(op, dtype, rg):
    make = make_arg(dtype, rg)
    yield SampleInput(make((3, 5)), name="2-d")


def _histc(op, dtype, rg):
    make = make_arg(dtype, False)
    yield SampleInput(make((10,)), name="auto-range")
    yield SampleInput(make((3, 4)), args=(5, -1.0, 1.0), name="range")


def _bincount(op, dtype, rg):
    yield SampleInput(ndgrad.tensor([0, 3, 1, 1, 4]), name="counts")
    yield SampleInput(ndgrad.tensor([0, 3, 1]), kwargs={"minlength": 6}, name="minlength")


def _searchsorted(op, dtype, rg):
    b = ndgrad.tensor([-1.0, 0.0, 0.5, 2.0], dtype=dtype)
    v = make_arg(dtype, False)((2, 3))
    yield SampleInput(b, args=(v,), name="1-d")
    yield SampleInput(b, args=(v,), kwargs={"right": True}, name="right")


def _bucketize(op, dtype, rg):
    b = ndgrad.tensor([-1.0, 0.0, 0.5, 2.0], dtype=dtype)
    yield SampleInput(make_arg(dtype, False)((2, 3)), args=(b,), name="1-d")
    yield SampleInput(make_arg(dtype, False)((4,)), args=(b,), kwargs={"out_int32": True},
                      name="int32")


def _cdist(op, dtype, rg):
    make = make_arg(dtype, rg)
    yield SampleInput(make((4, 3)), args=(make((5, 3)),), name="p2")
    yield SampleInput(make((2, 3, 2)), args=(make((1, 4, 2)),), kwargs={"p": 1.0},
                      name="p1-batched")
    yield SampleInput(make((3, 2)), args=(make((2, 2)),), kwargs={"p": 3.0}, name="p3")


def _pdist(op, dtype, rg):
    make = make_arg(dtype, rg)
    yield SampleInput(make((4, 3)), name="p2")
    yield SampleInput(make((3, 2)), args=(1.5,), name="p1.5")


def _dist(op, dtype, rg):
    make = make_arg(dtype, rg)
    yield SampleInput(make((3, 4)), args=(make((4,)),), name="broadcast")
    yield SampleInput(make((3,)), args=(make((3,)), 3), name="p3")


def _renorm(op, dtype, rg):
    make = make_arg(dtype, rg)
    yield SampleInput(make((3, 4)), args=(2, 0, 1.0), name="p2-dim0")
    yield SampleInput(make((3, 4)), args=(1, -1, 0.5), name="p1-dim-1")


_COUNTING = {"differentiable": False, "supports_autograd": False, "family": "statistics"}

register(
    OpInfo("aminmax", sample_inputs=_aminmax, family="statistics", method="aminmax"),
    OpInfo("quantile", sample_inputs=_quantile, family="statistics", method="quantile",
           check_grad_fn=False, notes="composite of sort, gather and lerp (torch: composite)"),
    OpInfo("nanquantile", sample_inputs=_quantile, family="statistics",
           method="nanquantile", check_grad_fn=False,
           notes="composite of sort, gather and lerp (torch: composite)"),
    OpInfo("cov", sample_inputs=_cov, family="statistics", method="cov"),
    OpInfo("corrcoef", sample_inputs=_corrcoef, family="statistics", method="corrcoef"),
    OpInfo("histc", sample_inputs=_histc, method="histc", **_COUNTING),
    OpInfo("bincount", sample_inputs=_bincount, method="bincount", dtypes=(ndgrad.int64,),
           **_COUNTING),
    OpInfo("searchsorted", sample_inputs=_searchsorted, **_COUNTING),
    OpInfo("bucketize", sample_inputs=_bucketize, **_COUNTING),
    OpInfo("cdist", sample_inputs=_cdist, family="distances", skips=_NO_TORCH_FWD,
           notes="torch has no double backward for cdist; ndgrad's is checked by finite "
                 "differences"),
    OpInfo("pdist", sample_inputs=_pdist, family="distances", skips=_NO_TORCH_FWD,
           notes="torch has no double backward for pdist; ndgrad's is checked by finite "
                 "differences"),
    OpInfo("dist", sample_inputs=_dist, family="distances", method="dist"),
    OpInfo("renorm", sample_inputs=_renorm, family="distances", method="renorm",
           inplace="renorm_"),
)
