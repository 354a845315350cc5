"""Op database entries for the 3-d and N-d convolution / pooling family (kernels in
``_ops/conv_pool.py``, functions in ``nn/_functional_spatial.py``): conv3d,
conv_transpose3d, conv1d, conv_tbc, torch.convolution, 3-d max / average / adaptive / Lp
pooling, max_unpool3d, the ``*_with_indices`` forms and 3-d padding modes.

Pooling samples hold distinct values (no ties inside a window, so max pooling is
differentiable and finite differences agree); the broader behaviour (strides, dilation,
ceil mode, errors, RNG of dropout3d) is tested against torch in tests/test_nn3d.py.
"""

import ndgrad

from . import OpInfo, SampleInput, make_arg, register


def _samples(build):
    def gen(op, dtype, requires_grad):
        yield from build(make_arg(dtype, requires_grad), dtype, requires_grad)
    return gen


def _distinct(shape, dtype, requires_grad, seed=0):
    """A tensor of `shape` holding distinct values in [-2, 2] (a seeded permutation)."""
    n = 1
    for s in shape:
        n *= s
    x = ndgrad.linspace(-2, 2, n, dtype=dtype)
    x = x[ndgrad.randperm(n, generator=ndgrad.Generator().manual_seed(seed))]
    return x.reshape(shape).detach().requires_grad_(requires_grad)


def _conv3d(make, dtype, rg):
    yield SampleInput(make((1, 2, 3, 4, 3)), args=(make((2, 2, 2, 2, 2)), make((2,))),
                      name="bias")
    yield SampleInput(make((1, 2, 4, 3, 4)), args=(make((2, 1, 2, 1, 2)),),
                      kwargs={"stride": (2, 1, 1), "padding": 1, "dilation": (1, 1, 2),
                              "groups": 2}, name="groups")
    yield SampleInput(make((2, 3, 3, 3)), args=(make((1, 2, 2, 2, 2)),), name="unbatched")


def _conv_transpose3d(make, dtype, rg):
    yield SampleInput(make((1, 2, 2, 3, 2)), args=(make((2, 1, 2, 2, 2)), make((2,))),
                      kwargs={"stride": 2, "output_padding": (1, 0, 1), "groups": 2},
                      name="groups")
    yield SampleInput(make((1, 1, 2, 2, 2)), args=(make((1, 2, 2, 1, 2)),),
                      kwargs={"padding": (1, 0, 0), "dilation": 2}, name="dilation")


def _conv1d(make, dtype, rg):
    yield SampleInput(make((2, 2, 5)), args=(make((3, 2, 2)), make((3,))),
                      kwargs={"stride": 2, "padding": 1}, name="stride")


def _conv_tbc(make, dtype, rg):
    yield SampleInput(make((5, 2, 3)), args=(make((3, 3, 2)), make((2,)), 1), name="pad")
    yield SampleInput(make((6, 1, 2)), args=(make((2, 2, 3)), make((3,)), -1), name="crop")


def _convolution(make, dtype, rg):
    yield SampleInput(make((1, 2, 3, 3, 3)), args=(make((2, 1, 2, 2, 2)), make((2,)),
                                                   [1, 2, 1], [0, 1, 0], [1, 1, 1], False,
                                                   [0, 0, 0], 2), name="3d")
    yield SampleInput(make((1, 2, 4)), args=(make((2, 3, 2)), None, [2], [1], [1], True, [1],
                                             1), name="transposed-1d")


def _pool3d(kwargs, shape=(1, 2, 4, 5, 4)):
    def build(make, dtype, rg):
        yield SampleInput(_distinct(shape, dtype, rg), kwargs=dict(kwargs), name="pool")
        yield SampleInput(_distinct(shape[1:], dtype, rg, seed=1), kwargs=dict(kwargs),
                          name="unbatched")
    return build


def _pool_lower(nd, kwargs):
    shape = {1: (2, 3, 7), 2: (1, 2, 5, 5), 3: (1, 2, 4, 4, 3)}[nd]

    def build(make, dtype, rg):
        yield SampleInput(_distinct(shape, dtype, rg), kwargs=dict(kwargs), name="pool")
    return build


def _lp_pool3d(make, dtype, rg):
    x = make((1, 2, 4, 4, 3), low=0.5, high=2.0)
    yield SampleInput(x, args=(2.0, 2), name="p2")
    yield SampleInput(x, args=(1.5, (2, 2, 1)), kwargs={"stride": 1}, name="p1.5")


def _max_unpool3d(make, dtype, rg):
    x = make((1, 2, 2, 2, 1))
    pooled = ndgrad.nn.functional.max_pool3d(_distinct((1, 2, 4, 4, 2), dtype, False), 2,
                                             return_indices=True)[1]
    yield SampleInput(x, args=(pooled, 2), name="indices")
    yield SampleInput(x, args=(pooled, 2), kwargs={"output_size": (5, 5, 3)}, name="size")


def _pad3d(make, dtype, rg):
    x = make((1, 2, 3, 3, 4))
    for mode in ("reflect", "replicate", "circular"):
        yield SampleInput(x, args=((1, 2, 2, 1, 1, 0),), kwargs={"mode": mode}, name=mode)


# ============================================================================ error inputs
def _x5():
    return ndgrad.ones(1, 2, 4, 4, 4)


def _conv3d_errors(op):
    w = ndgrad.ones(1, 2, 2, 2, 2)
    yield SampleInput(ndgrad.ones(2, 4, 4), args=(w,), name="3-d input")
    yield SampleInput(_x5(), args=(ndgrad.ones(1, 3, 2, 2, 2),), name="channels")
    yield SampleInput(_x5(), args=(ndgrad.ones(1, 2, 5, 2, 2),), name="kernel too big")
    yield SampleInput(_x5(), args=(w,), kwargs={"stride": 0}, name="stride 0")
    yield SampleInput(_x5(), args=(w,), kwargs={"padding": -1}, name="negative padding")
    yield SampleInput(_x5(), args=(w,), kwargs={"padding": "full"}, name="padding string")
    yield SampleInput(_x5(), args=(w,), kwargs={"padding": "same", "stride": 2},
                      name="same strided")


def _conv_transpose3d_errors(op):
    yield SampleInput(_x5(), args=(ndgrad.ones(3, 1, 2, 2, 2),), name="channels")
    yield SampleInput(_x5(), args=(ndgrad.ones(2, 1, 2, 2, 2),), kwargs={"output_padding": 1},
                      name="output padding")
    yield SampleInput(ndgrad.ones(2, 4, 4), args=(ndgrad.ones(2, 1, 2, 2, 2),),
                      name="3-d input")


def _conv_tbc_errors(op):
    x, w, b = ndgrad.ones(5, 2, 3), ndgrad.ones(3, 3, 4), ndgrad.ones(4)
    yield SampleInput(x[0], args=(w, b), name="2-d input")
    yield SampleInput(x, args=(w[0], b), name="2-d weight")
    yield SampleInput(x, args=(w, b[:2]), name="bias size")
    yield SampleInput(x, args=(w[:, :2], b), name="channels")


def _max_pool3d_errors(op):
    yield SampleInput(ndgrad.ones(4, 4, 4), args=(2,), name="3-d input")
    yield SampleInput(_x5(), args=(5,), name="output too small")
    yield SampleInput(_x5(), args=(2,), kwargs={"padding": 2}, name="padding")
    yield SampleInput(_x5(), args=((2, 2),), name="kernel tuple")
    yield SampleInput(_x5(), args=(2, (2, 2)), name="stride tuple")
    yield SampleInput(_x5(), args=(2, 0), name="stride 0")
    yield SampleInput(_x5(), args=(2,), kwargs={"dilation": 0}, name="dilation 0")


def _avg_pool3d_errors(op):
    yield SampleInput(ndgrad.ones(4, 4, 4), args=(2,), name="3-d input")
    yield SampleInput(_x5(), args=(5,), name="kernel too big")
    yield SampleInput(_x5(), args=((2, 2),), name="kernel tuple")
    yield SampleInput(_x5(), args=(2,), kwargs={"divisor_override": 0}, name="divisor 0")


def _adaptive3d_errors(op):
    yield SampleInput(ndgrad.ones(4, 4), args=(2,), name="2-d input")
    yield SampleInput(_x5(), args=((2, 2),), name="output size length")


def _max_unpool3d_errors(op):
    x = ndgrad.ones(1, 1, 2, 2, 2)
    yield SampleInput(ndgrad.ones(2, 2, 2), args=(ndgrad.zeros(2, 2, 2, dtype=ndgrad.int64), 2),
                      name="3-d input")
    yield SampleInput(x, args=(ndgrad.full((1, 1, 2, 2, 2), 100, dtype=ndgrad.int64), 2),
                      name="index out of range")
    yield SampleInput(x, args=(ndgrad.zeros(1, 1, 2, 2, 2), 2), name="float indices")
    yield SampleInput(x, args=(ndgrad.zeros(1, 1, 2, 2, 1, dtype=ndgrad.int64), 2),
                      name="indices shape")


def _first(out):
    return out[0]


def _pool_entry(name, build, **kw):
    return OpInfo(name, sample_inputs=_samples(build), family="nn", **kw)


register(
    OpInfo("nn.functional.conv3d", sample_inputs=_samples(_conv3d), family="nn",
           error_inputs=_conv3d_errors),
    OpInfo("nn.functional.conv_transpose3d", sample_inputs=_samples(_conv_transpose3d),
           family="nn", error_inputs=_conv_transpose3d_errors),
    OpInfo("nn.functional.conv1d", sample_inputs=_samples(_conv1d), family="nn"),
    # torch defines no forward-mode rule for conv_tbc (and raises); ndgrad raises the same
    OpInfo("conv_tbc", sample_inputs=_samples(_conv_tbc), family="nn",
           supports_forward_ad=False, error_inputs=_conv_tbc_errors),
    OpInfo("convolution", sample_inputs=_samples(_convolution), family="nn"),
    _pool_entry("nn.functional.max_pool3d",
                _pool3d({"kernel_size": 2, "stride": (1, 2, 2), "padding": 1,
                         "ceil_mode": True}), error_inputs=_max_pool3d_errors),
    _pool_entry("nn.functional.max_pool3d", _pool3d({"kernel_size": (2, 2, 1),
                                                     "dilation": (1, 2, 1)}),
                variant_test_name="dilation"),
    _pool_entry("max_pool3d", _pool3d({"kernel_size": 2})),
    _pool_entry("nn.functional.avg_pool3d",
                _pool3d({"kernel_size": 3, "stride": 2, "padding": 1,
                         "count_include_pad": False, "ceil_mode": True}),
                error_inputs=_avg_pool3d_errors),
    _pool_entry("nn.functional.avg_pool3d", _pool3d({"kernel_size": 2,
                                                     "divisor_override": 3}),
                variant_test_name="divisor"),
    _pool_entry("nn.functional.adaptive_avg_pool3d", _pool3d({"output_size": (3, None, 2)}),
                error_inputs=_adaptive3d_errors),
    _pool_entry("nn.functional.adaptive_max_pool3d", _pool3d({"output_size": (3, 2, 3)}),
                error_inputs=_adaptive3d_errors),
    _pool_entry("nn.functional.lp_pool3d", _lp_pool3d),
    _pool_entry("nn.functional.max_unpool3d", _max_unpool3d, error_inputs=_max_unpool3d_errors),
    _pool_entry("nn.functional.max_pool1d_with_indices",
                _pool_lower(1, {"kernel_size": 3, "stride": 2, "padding": 1}),
                output_process_fn_grad=_first),
    _pool_entry("nn.functional.max_pool2d_with_indices",
                _pool_lower(2, {"kernel_size": 2, "stride": 1}), output_process_fn_grad=_first),
    _pool_entry("nn.functional.max_pool3d_with_indices",
                _pool_lower(3, {"kernel_size": 2}), output_process_fn_grad=_first),
    _pool_entry("max_pool1d_with_indices", _pool_lower(1, {"kernel_size": 2}),
                output_process_fn_grad=_first),
    _pool_entry("nn.functional.adaptive_max_pool1d_with_indices",
                _pool_lower(1, {"output_size": 3}), output_process_fn_grad=_first),
    _pool_entry("nn.functional.adaptive_max_pool2d_with_indices",
                _pool_lower(2, {"output_size": (2, 3)}), output_process_fn_grad=_first),
    _pool_entry("nn.functional.adaptive_max_pool3d_with_indices",
                _pool_lower(3, {"output_size": 2}), output_process_fn_grad=_first),
    _pool_entry("adaptive_max_pool1d", _pool_lower(1, {"output_size": 2}),
                output_process_fn_grad=_first),
    # torch's circular padding is a composite of slice copies (grad_fn CopySlices)
    OpInfo("nn.functional.pad", sample_inputs=_samples(_pad3d), family="nn",
           variant_test_name="3d", check_grad_fn=False),
)
