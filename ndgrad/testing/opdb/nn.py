"""Op database entries for ``ndgrad.nn.functional`` (kernels in ``_ops/activations.py``,
``linear.py``, ``conv_pool.py``, ``normalization.py``, ``embedding.py``, ``losses.py``).

Samples are tiny and away from kinks (activations sample |x| > 0.05 through ``exclude_zero``
and a wide range); the heavier behaviour (strides, groups, masks, reductions, errors) is tested
against torch in tests/test_nn_functional.py. These entries put the nn kernels through the
generic suites: gradcheck, gradgradcheck, forward AD, forward-over-backward and "no input
mutation".
"""

import ndgrad

from . import OpInfo, SampleInput, make_arg, register


def _unary(shape=(3, 4), low=-3.0, high=3.0, kwargs_list=({},)):
    def gen(op, dtype, requires_grad):
        make = make_arg(dtype, requires_grad, low=low, high=high, exclude_zero=True)
        for i, kw in enumerate(kwargs_list):
            yield SampleInput(make(shape), kwargs=dict(kw), name=f"kw{i}")
    return gen


def _act(name, kwargs_list=({},), sample_shape=(3, 4), **kw):
    return OpInfo("nn.functional." + name,
                  sample_inputs=_unary(sample_shape, kwargs_list=kwargs_list), family="nn", **kw)


def _samples(build):
    def gen(op, dtype, requires_grad):
        make = make_arg(dtype, requires_grad)
        yield from build(make, dtype)
    return gen


def _linear(make, dtype):
    yield SampleInput(make((3, 4)), args=(make((2, 4)), make((2,))), name="bias")
    yield SampleInput(make((2, 3, 4)), args=(make((2, 4)),), name="3d-nobias")


def _conv2d(make, dtype):
    yield SampleInput(make((1, 2, 4, 4)), args=(make((2, 2, 2, 2)), make((2,))), name="basic")
    yield SampleInput(make((1, 2, 5, 4)), args=(make((2, 1, 3, 2)),),
                      kwargs={"stride": 2, "padding": 1, "groups": 2}, name="groups")


def _conv_transpose2d(make, dtype):
    yield SampleInput(make((1, 2, 3, 3)), args=(make((2, 1, 2, 2)), make((1,))),
                      kwargs={"stride": 2}, name="stride")


def _pool(kwargs):
    def build(make, dtype):
        # distinct values: no ties inside a window, so max pooling is differentiable
        x = ndgrad.linspace(-2, 2, 2 * 5 * 5, dtype=dtype)
        x = x[ndgrad.randperm(50, generator=ndgrad.Generator().manual_seed(0))]
        x = x.reshape(1, 2, 5, 5).detach().requires_grad_(make((1,)).requires_grad)
        yield SampleInput(x, kwargs=dict(kwargs), name="pool")
    return build


def _norm_bn(make, dtype):
    yield SampleInput(make((4, 3)), args=(None, None, make((3,)), make((3,))),
                      kwargs={"training": True}, name="train")


def _layer_norm(make, dtype):
    yield SampleInput(make((3, 4)), args=((4,), make((4,)), make((4,))), name="affine")


def _embedding(make, dtype):
    idx = ndgrad.tensor([[0, 2], [1, 2]])
    yield SampleInput(idx, args=(make((3, 2)),), name="basic")



def _packed(make, dtype):
    yield SampleInput(make((4, 3, 2)), args=([4, 2, 1],), name="time-major")
    yield SampleInput(make((3, 4)), args=([2, 4, 3],),
                      kwargs={"batch_first": True, "enforce_sorted": False},
                      name="batch-first-unsorted")


def _packed_data(root):
    """``pack_padded_sequence(...).data`` of ndgrad or (lazily imported) torch."""
    def op(x, *args, **kwargs):
        mod = ndgrad if root == "ndgrad" else __import__(root)
        return mod.nn.utils.rnn.pack_padded_sequence(x, *args, **kwargs).data
    return op


def _weight_norm(make, dtype):
    yield SampleInput(make((3, 4)), args=(make((3, 1)), 0), name="dim0")
    yield SampleInput(make((2, 3, 2)), args=(make((1, 1, 2)), 2), name="last-dim")


def _weight_norm_op(v, g, dim):
    return ndgrad.nn.utils.parametrizations._weight_norm(v, g, dim)


def _pixel_shuffle(make, dtype):
    yield SampleInput(make((1, 8, 2, 3)), args=(2,), name="batched")
    yield SampleInput(make((2, 2, 9, 1, 2)), args=(3,), name="two-lead-dims")


def _pixel_unshuffle(make, dtype):
    yield SampleInput(make((1, 2, 4, 6)), args=(2,), name="batched")
    yield SampleInput(make((3, 3, 3)), args=(3,), name="unbatched")


def _channel_shuffle(make, dtype):
    yield SampleInput(make((2, 6, 3)), args=(2,), name="1d")
    yield SampleInput(make((1, 6, 2, 2)), args=(3,), name="2d")


def _max_unpool(make, dtype):
    x = make((1, 2, 2, 3))
    idx = ndgrad.tensor([[[[0, 3, 5], [13, 10, 20]], [[1, 2, 4], [22, 19, 17]]]])
    yield SampleInput(x, args=(idx, 2), kwargs={"output_size": (5, 6)}, name="indices")


def _affine_grid(make, dtype):
    yield SampleInput(make((2, 2, 3)), args=((2, 1, 3, 2),), kwargs={"align_corners": False},
                      name="2d")
    yield SampleInput(make((1, 3, 4)), args=((1, 1, 2, 2, 3),), kwargs={"align_corners": True},
                      name="3d")

def _pad(make, dtype):
    yield SampleInput(make((2, 5)), args=((2, 1),), kwargs={"mode": "reflect"}, name="reflect")
    yield SampleInput(make((1, 2, 3)), args=((1, 2),), kwargs={"mode": "replicate"},
                      name="replicate")
    yield SampleInput(make((2, 3)), args=((1, -1),), name="constant")


def _interp(make, dtype):
    yield SampleInput(make((1, 1, 2, 3)), kwargs={"scale_factor": 2, "mode": "bilinear"},
                      name="bilinear")
    yield SampleInput(make((1, 1, 2, 3)), kwargs={"size": (3, 5)}, name="nearest")


def _cross_entropy(make, dtype):
    yield SampleInput(make((3, 4)), args=(ndgrad.tensor([0, 3, 1]),), name="indices")
    yield SampleInput(make((3, 4)), args=(ndgrad.tensor([0, 3, 1]),),
                      kwargs={"label_smoothing": 0.2, "reduction": "sum"}, name="smooth")


def _pair_loss(make, dtype):
    yield SampleInput(make((3, 4)), args=(make((3, 4)),), name="mean")
    yield SampleInput(make((3, 4)), args=(make((3, 4)),), kwargs={"reduction": "none"},
                      name="none")


def _prelu(make, dtype):
    yield SampleInput(make((2, 3, 4), exclude_zero=True), args=(make((3,)),), name="channels")
    yield SampleInput(make((3, 4), exclude_zero=True), args=(make((1,)),), name="shared")


def _group_norm(make, dtype):
    yield SampleInput(make((2, 4, 3)), args=(2, make((4,)), make((4,))), name="affine")
    yield SampleInput(make((3, 6)), args=(3,), kwargs={"eps": 0.1}, name="plain")


def _target(shape, values, dtype):
    return ndgrad.tensor(values, dtype=dtype).reshape(shape)


def _soft_margin(make, dtype):
    t = _target((3, 4), [1.0, -1.0] * 6, dtype)
    yield SampleInput(make((3, 4)), args=(t,), name="mean")
    yield SampleInput(make((3, 4)), args=(t,), kwargs={"reduction": "none"}, name="none")


def _multi_margin(make, dtype):
    # margins kept away from the hinge: classes 0.3 apart, margin 0.15 off any difference
    x = ndgrad.tensor([[0.0, 0.3, 0.9, -0.6], [1.2, -0.3, 0.6, 0.0]], dtype=dtype)
    x = x.requires_grad_(make((1,)).requires_grad)
    t = ndgrad.tensor([1, 2])
    yield SampleInput(x, args=(t,), kwargs={"margin": 0.45}, name="p1")
    yield SampleInput(x, args=(t,), kwargs={"p": 2, "margin": 0.45, "reduction": "none"},
                      name="p2")


def _multilabel_margin(make, dtype):
    x = ndgrad.tensor([[0.0, 0.3, 0.9, -0.6], [1.2, -0.45, 0.65, 0.05]], dtype=dtype)
    x = x.requires_grad_(make((1,)).requires_grad)
    t = ndgrad.tensor([[1, 3, -1, 0], [2, -1, 0, 1]])
    yield SampleInput(x, args=(t,), name="mean")
    yield SampleInput(x, args=(t,), kwargs={"reduction": "none"}, name="none")


def _multilabel_soft_margin(make, dtype):
    t = _target((3, 4), [1.0, 0.0, 0.0, 1.0, 1.0, 1.0] * 2, dtype)
    yield SampleInput(make((3, 4)), args=(t,), kwargs={"weight": make((4,))}, name="weight")
    yield SampleInput(make((3, 4)), args=(t,), kwargs={"reduction": "none"}, name="none")


def _unfold(make, dtype):
    yield SampleInput(make((1, 2, 3, 3)), args=(2,), name="k2")


register(
    _act("gelu", ({}, {"approximate": "tanh"})),
    _act("elu", ({}, {"alpha": 0.5})),
    _act("celu", ({"alpha": 1.5},)),
    _act("selu"),
    _act("silu"),
    _act("mish"),
    _act("softplus", ({}, {"beta": 2.0, "threshold": 2.0})),
    _act("leaky_relu", ({"negative_slope": 0.2},)),
    _act("hardtanh", ({"min_val": -2.5, "max_val": 2.5},)),
    _act("logsigmoid"),
    _act("glu", ({}, {"dim": 0}), sample_shape=(4, 6)),
    OpInfo("nn.functional.prelu", sample_inputs=_samples(_prelu), family="nn"),
    OpInfo("nn.functional.group_norm", sample_inputs=_samples(_group_norm), family="nn"),
    # (torch has no forward AD through soft_margin_loss_backward)
    OpInfo("nn.functional.soft_margin_loss", sample_inputs=_samples(_soft_margin),
           family="nn", supports_fwgrad_bwgrad=False),
    # torch has no double backward nor forward AD for the two margin losses
    OpInfo("nn.functional.multi_margin_loss", sample_inputs=_samples(_multi_margin),
           family="nn", supports_gradgrad=False, supports_forward_ad=False,
           supports_fwgrad_bwgrad=False),
    OpInfo("nn.functional.multilabel_margin_loss", sample_inputs=_samples(_multilabel_margin),
           family="nn", supports_gradgrad=False, supports_forward_ad=False,
           supports_fwgrad_bwgrad=False),
    OpInfo("nn.functional.multilabel_soft_margin_loss",
           sample_inputs=_samples(_multilabel_soft_margin), family="nn"),
    OpInfo("nn.functional.softmax", sample_inputs=_unary(kwargs_list=({"dim": 1},)),
           family="nn"),
    OpInfo("nn.functional.log_softmax", sample_inputs=_unary(kwargs_list=({"dim": 0},)),
           family="nn"),
    OpInfo("nn.functional.linear", sample_inputs=_samples(_linear), family="nn",
           check_grad_fn=False),
    OpInfo("nn.functional.conv2d", sample_inputs=_samples(_conv2d), family="nn"),
    OpInfo("nn.functional.conv_transpose2d", sample_inputs=_samples(_conv_transpose2d),
           family="nn"),
    OpInfo("nn.functional.max_pool2d", sample_inputs=_samples(_pool({"kernel_size": 2})),
           family="nn"),
    OpInfo("nn.functional.avg_pool2d",
           sample_inputs=_samples(_pool({"kernel_size": 3, "stride": 2, "padding": 1})),
           family="nn"),
    OpInfo("nn.functional.adaptive_avg_pool2d",
           sample_inputs=_samples(_pool({"output_size": (2, 3)})), family="nn"),
    OpInfo("nn.functional.batch_norm", sample_inputs=_samples(_norm_bn), family="nn"),
    OpInfo("nn.functional.layer_norm", sample_inputs=_samples(_layer_norm), family="nn"),
    OpInfo("nn.functional.embedding", sample_inputs=_samples(_embedding), family="nn",
           op=lambda idx, w: ndgrad.nn.functional.embedding(idx, w)),
    OpInfo("nn.utils.rnn.pack_padded_sequence", sample_inputs=_samples(_packed), family="nn",
           op=_packed_data("ndgrad"), torch_op=_packed_data("torch"), check_grad_fn=False,
           supports_forward_ad=False),  # torch has no forward AD for the packing
    OpInfo("_weight_norm", sample_inputs=_samples(_weight_norm), family="nn",
           op=_weight_norm_op, supports_forward_ad=False),  # torch: no forward AD
    OpInfo("nn.functional.pixel_shuffle", sample_inputs=_samples(_pixel_shuffle), family="nn"),
    OpInfo("nn.functional.pixel_unshuffle", sample_inputs=_samples(_pixel_unshuffle),
           family="nn"),
    OpInfo("nn.functional.channel_shuffle", sample_inputs=_samples(_channel_shuffle),
           family="nn"),
    OpInfo("nn.functional.max_unpool2d", sample_inputs=_samples(_max_unpool), family="nn"),
    OpInfo("nn.functional.affine_grid", sample_inputs=_samples(_affine_grid), family="nn"),
    # eval mode: the slope is fixed, so finite differences and torch see the same function
    _act("rrelu", ({"lower": 0.1, "upper": 0.3},)),
    OpInfo("nn.functional.pad", sample_inputs=_samples(_pad), family="nn",
           check_grad_fn=False),
    OpInfo("nn.functional.interpolate", sample_inputs=_samples(_interp), family="nn"),
    OpInfo("nn.functional.unfold", sample_inputs=_samples(_unfold), family="nn"),
    OpInfo("nn.functional.cross_entropy", sample_inputs=_samples(_cross_entropy),
           family="nn", check_grad_fn=False),
    OpInfo("nn.functional.mse_loss", sample_inputs=_samples(_pair_loss), family="nn"),
    OpInfo("nn.functional.smooth_l1_loss", sample_inputs=_samples(_pair_loss), family="nn",
           grad_atol=1e-4),
    OpInfo("nn.functional.binary_cross_entropy_with_logits",
           sample_inputs=_samples(_pair_loss), family="nn"),
)
