"""Op database entries for nll_loss in every rank torch dispatches differently (``_ops/losses.py``:
nll_loss for 1-d/2-d inputs, nll_loss2d for 4-d, nll_loss2d over a (N, C, 1, -1) view for 3-d
and 5-d) and cross_entropy on K-dim inputs, so the generic suites (node names, gradcheck,
gradgradcheck, forward AD, vmap, compile) run over torch's NllLoss2DBackward0 path.

Targets come from a fixed list (no draw), with one ignore_index hit in the samples that set it;
weights are positive so a "mean" never divides by zero.
"""

import ndgrad

from . import OpInfo, SampleInput, make_arg, register


def _targets(shape, c):
    n = 1
    for s in shape:
        n *= s
    return ndgrad.tensor([(3 * i + 1) % c for i in range(n)]).reshape(shape)


def _weight(c, dtype):
    return ndgrad.tensor([0.5 + 0.25 * k for k in range(c)], dtype=dtype)


_SHAPES = {"1d": (4,), "2d": (3, 4), "3d": (2, 4, 3), "4d": (2, 3, 2, 3), "5d": (2, 3, 2, 1, 2)}


def _nll_samples(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad)
    for rank, shape in _SHAPES.items():
        c = shape[1] if len(shape) > 1 else shape[0]
        tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
        t = _targets(tshape, c)
        for reduction in ("mean", "sum", "none"):
            yield SampleInput(make(shape), args=(t,), kwargs={"reduction": reduction},
                              name=f"{rank}-{reduction}")
        yield SampleInput(make(shape), args=(t, _weight(c, dtype)),
                          kwargs={"ignore_index": 1}, name=f"{rank}-weight-ignore")
        yield SampleInput(make(shape), args=(t, _weight(c, dtype)),
                          kwargs={"reduction": "none"}, name=f"{rank}-weight-none")


def _nll_errors(op):
    x4 = ndgrad.zeros(2, 3, 4, 5)
    x3 = ndgrad.zeros(2, 3, 4)
    long = ndgrad.int64
    yield SampleInput(x4, args=(ndgrad.zeros(2, 4, dtype=long),), name="2d target of 4d")
    yield SampleInput(x4, args=(ndgrad.zeros(2, 4, 6, dtype=long),), name="spatial mismatch")
    yield SampleInput(x4, args=(ndgrad.zeros(3, 4, 5, dtype=long),), name="batch mismatch")
    yield SampleInput(x4, args=(ndgrad.zeros(2, 4, 5, dtype=long), ndgrad.ones(4)),
                      name="4d weight size")
    yield SampleInput(x4, args=(ndgrad.zeros(2, 4, 5, dtype=ndgrad.uint8),), name="4d byte")
    yield SampleInput(x4, args=(ndgrad.zeros(2, 4, 5, dtype=ndgrad.int32),), name="4d int32")
    yield SampleInput(x3, args=(ndgrad.zeros(2, 5, dtype=long),), name="3d target size")
    yield SampleInput(x3, args=(ndgrad.zeros(2, 4, dtype=long), ndgrad.ones(2)),
                      name="3d weight size")
    yield SampleInput(ndgrad.zeros(3, 4), args=(ndgrad.zeros(3, 1, dtype=long),),
                      name="multi-target")
    yield SampleInput(ndgrad.zeros(3, 4), args=(ndgrad.zeros(3),), name="float target")
    yield SampleInput(ndgrad.zeros(3, 4), args=(ndgrad.zeros(3, dtype=long),
                                                ndgrad.ones(4, dtype=ndgrad.float64)),
                      name="weight dtype")
    t = ndgrad.zeros(2, 4, 5, dtype=long)
    t[1, 2, 3] = 3
    yield SampleInput(x4, args=(t,), name="target out of range")


def _ce_samples(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad)
    for rank in ("3d", "4d", "5d"):
        shape = _SHAPES[rank]
        t = _targets((shape[0],) + shape[2:], shape[1])
        yield SampleInput(make(shape), args=(t,), name=f"{rank}-mean")
        yield SampleInput(make(shape), args=(t, _weight(shape[1], dtype)),
                          kwargs={"reduction": "none", "ignore_index": 2},
                          name=f"{rank}-weight-none")
    shape = _SHAPES["4d"]
    yield SampleInput(make(shape), args=(_targets((2, 2, 3), 3),),
                      kwargs={"label_smoothing": 0.2, "reduction": "sum"}, name="4d-smooth")


register(
    OpInfo("nn.functional.nll_loss", sample_inputs=_nll_samples, family="nn",
           error_inputs=_nll_errors),
    OpInfo("nn.functional.cross_entropy", variant_test_name="kdim", sample_inputs=_ce_samples,
           family="nn"),
)
