"""Op database entries for constructions and differences (``_ops/constructions.py``,
``_ops/differences.py``), flat and per-dim writes (``_ops/scatter_variants.py``), ravel and
``Tensor.unfold`` (``_ops/reshaping.py``) and the ``*_copy`` view variants
(``_ops/copy_variants.py``).

Samples are small; every special case (empty results, bool inputs, duplicate indices, each
error) is tested against torch in tests/test_missing_ops.py.
"""

import ndgrad

from . import OpInfo, SampleInput, Skip, make_arg, register


def _one(*variants):
    """Samples from (shape, args, kwargs, name) tuples."""
    def gen(op, dtype, rg):
        make = make_arg(dtype, rg)
        for shape, args, kwargs, name in variants:
            yield SampleInput(make(shape), args=args, kwargs=kwargs, name=name)
    return gen


def _block_diag(op, dtype, rg):
    make = make_arg(dtype, rg)
    yield SampleInput([make((2, 3)), make((3,)), make((1, 1))], name="mixed")


def _trapz_x(op, dtype, rg):
    make = make_arg(dtype, rg)
    yield SampleInput(make((3, 4)), name="unit")
    yield SampleInput(make((3, 4)), kwargs={"dx": 0.5, "dim": 0}, name="dx-dim0")
    x = ndgrad.tensor([0.0, 0.3, 1.0, 1.8], dtype=dtype)
    yield SampleInput(make((2, 4)), args=(x,), name="x")


def _index_reduce(reduce):
    def gen(op, dtype, rg):
        make = make_arg(dtype, rg, low=0.5, high=2.0)
        idx = ndgrad.tensor([0, 2, 1])
        yield SampleInput(make((3, 4)), args=(0, idx, make((3, 4)), reduce), name="dim0")
        yield SampleInput(make((2, 4)), args=(1, ndgrad.tensor([3, 0]), make((2, 2)), reduce),
                          kwargs={"include_self": False}, name="dim1-exclude-self")
    return gen


def _addr(op, dtype, rg):
    make = make_arg(dtype, rg)
    yield SampleInput(make((3, 4)), args=(make((3,)), make((4,))), name="plain")
    yield SampleInput(make((4,)), args=(make((3,)), make((4,))),
                      kwargs={"beta": 0.5, "alpha": 2.0}, name="broadcast-scaled")



register(
    OpInfo("block_diag", sample_inputs=_block_diag, op=lambda ts: ndgrad.block_diag(*ts),
           torch_op=lambda ts: __import__("torch").block_diag(*ts), family="constructions"),
    OpInfo("diagflat", sample_inputs=_one(((2, 2), (), {}, "2-d"), ((3,), (1,), {}, "offset")),
           family="constructions", method="diagflat"),
    OpInfo("vander", sample_inputs=_one(((3,), (), {}, "square"),
                                         ((3,), (), {"N": 2, "increasing": True}, "N2-inc")),
           family="constructions", check_grad_fn=False,
           skips=(Skip("grad", "torch's own vander backward fails (it writes a cumprod in "
                               "place); gradcheck in tests/test_missing_ops.py"),
                  Skip("gradgrad", "as grad"), Skip("forward_ad", "as grad"),
                  Skip("fwgrad_bwgrad", "as grad"))),
    OpInfo("combinations", sample_inputs=_one(((4,), (), {}, "r2"),
                                               ((4,), (3, True), {}, "r3-rep")),
           family="constructions", check_grad_fn=False),
    OpInfo("diff", sample_inputs=_one(((3, 4), (), {}, "last"), ((3, 4), (2, 0), {}, "n2-dim0")),
           family="differences", method="diff"),
    OpInfo("trapezoid", sample_inputs=_trapz_x, family="differences", check_grad_fn=False),
    OpInfo("cumulative_trapezoid", sample_inputs=_trapz_x, family="differences",
           check_grad_fn=False),
    OpInfo("index_reduce", variant_test_name="prod", sample_inputs=_index_reduce("prod"),
           op=lambda x, *a, **k: x.index_reduce(*a, **k),
           torch_op=lambda x, *a, **k: x.index_reduce(*a, **k), family="scatter",
           supports_forward_ad=False, notes="torch has no forward AD for index_reduce"),
    OpInfo("index_reduce", variant_test_name="amax", sample_inputs=_index_reduce("amax"),
           op=lambda x, *a, **k: x.index_reduce(*a, **k),
           torch_op=lambda x, *a, **k: x.index_reduce(*a, **k), family="scatter",
           supports_forward_ad=False, notes="torch has no forward AD for index_reduce"),
    OpInfo("index_reduce", variant_test_name="mean", sample_inputs=_index_reduce("mean"),
           op=lambda x, *a, **k: x.index_reduce(*a, **k),
           torch_op=lambda x, *a, **k: x.index_reduce(*a, **k), family="scatter",
           supports_forward_ad=False, notes="torch has no forward AD for index_reduce"),
    OpInfo("addr", sample_inputs=_addr, family="products", method="addr", inplace="addr_"),
    OpInfo("ravel", sample_inputs=_one(((2, 3), (), {}, "2-d"), ((), (), {}, "0-d")),
           family="shape", method="ravel"),
    OpInfo("Tensor.unfold", sample_inputs=_one(((3, 4), (1, 2, 1), {}, "dim1"),
                                                ((3, 4), (0, 2, 1), {}, "dim0"),
                                                ((5,), (0, 2, 2), {}, "step2")),
           op=lambda x, *a: x.unfold(*a), torch_op=lambda x, *a: x.unfold(*a),
           family="shape"),
)

_COPIES = [
    ("view_copy", ((3, 4), ((4, 3),))), ("expand_copy", ((3, 1), ((2, 3, 4),))),
    ("permute_copy", ((2, 3, 4), ((2, 0, 1),))), ("transpose_copy", ((3, 4), (0, 1))),
    ("t_copy", ((3, 4), ())), ("squeeze_copy", ((3, 1, 4), (1,))),
    ("unsqueeze_copy", ((3, 4), (1,))), ("select_copy", ((3, 4), (1, 2))),
    ("diagonal_copy", ((3, 4), (1,))), ("unbind_copy", ((3, 2), (1,))),
    ("split_copy", ((3, 4), (2, 1))), ("split_with_sizes_copy", ((3, 4), ([1, 3], 1))),
    ("narrow_copy", ((3, 4), (1, 1, 2))), ("slice_copy", ((3, 4), (1, 1, 4, 2))),
    ("alias_copy", ((3, 4), ())), ("unfold_copy", ((3, 4), (1, 2, 1))),
]
for _name, (_shape, _args) in _COPIES:
    register(OpInfo(_name, sample_inputs=_one((_shape, _args, {}, "")), family="copies",
                    ))
register(OpInfo("detach_copy", sample_inputs=_one(((3, 4), (), {}, "")), family="copies",
                supports_autograd=False, supports_forward_ad=False,
                notes="torch records a node whose backward raises"))
