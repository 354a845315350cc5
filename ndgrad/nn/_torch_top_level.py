"""torch's top-level forms of nn functions (``torch.kl_div``, ``torch.pixel_shuffle``,
``torch.native_layer_norm``, ...): positional signatures as torch's native functions, integer
reductions (0 none, 1 mean, 2 sum), tuple results for the ``native_*`` ops. Each delegates to
``nn.functional``; ``ndgrad/__init__.py`` attaches ``TOP_LEVEL`` to the package (never
replacing a name already defined).
"""

import numpy as np

from .. import _random
from .._ops.native_dropout import NATIVE_DROPOUT
from .._tensor import Tensor
from . import functional as F
from ._functional_ctc import ctc_loss_reduced
from ._functional_embedding_bag import embedding_bag_tuple
from ._functional_sampling import grid_sampler, grid_sampler_2d, grid_sampler_3d

__all__ = ["TOP_LEVEL"]

_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _red(reduction):
    return _REDUCTION[int(reduction)]


def kl_div(input, target, reduction=1, log_target=False):
    return F.kl_div(input, target, reduction=_red(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_red(reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_red(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return F.hinge_embedding_loss(input, target, margin, reduction=_red(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_red(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_red(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        reduction=1):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_red(reduction))


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


def threshold(input, threshold, value):
    return F.threshold(input, threshold, value)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu(input, lower, upper, training, inplace=True)


def alpha_dropout(input, p, train):
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    return F._feature_dropout(input, p, train, False, 2)


def feature_dropout_(input, p, train):
    return F._feature_dropout(input, p, train, True, 2)


def affine_grid_generator(theta, size, align_corners):
    return F.affine_grid(theta, size, align_corners)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
             zero_infinity=False):
    return ctc_loss_reduced(log_probs, targets, input_lengths, target_lengths, blank,
                            int(reduction), zero_infinity)


def _stats(x, dims, eps, differentiable=False):
    """(mean, 1 / sqrt(biased var + eps)) over ``dims`` of a tensor, keeping them as size 1;
    ndgrad ops (so they batch under vmap), differentiated only when `differentiable`
    (torch differentiates group norm's statistics, not layer or batch norm's)."""
    if not differentiable:
        x = x.detach()  # no gradient and no forward-mode tangent, as torch's
    mean = x.mean(dims, keepdim=True)
    rstd = (x.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return mean, rstd


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd): mean and rstd keep the normalised dims as size 1."""
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    k = len(normalized_shape)
    mean, rstd = _stats(input, tuple(range(input.dim() - k, input.dim())), eps)
    return out, mean, rstd


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd), the statistics of shape (N, group), differentiable as torch's."""
    out = F.group_norm(input, group, weight, bias, eps)
    x = input.reshape(N, group, (C // group) * HxW)  # sizes spelled out: N may be 0
    mean, rstd = _stats(x, (2,), eps, differentiable=True)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd): batch statistics in training, empty in eval."""
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = np.zeros(0, input._data.dtype)
        return out, Tensor(empty), Tensor(empty.copy())
    dims = (0,) + tuple(range(2, input.dim()))
    mean, rstd = _stats(input, dims, eps)
    return out, mean.reshape(-1), rstd.reshape(-1)


TOP_LEVEL = {
    "pixel_shuffle": F.pixel_shuffle, "pixel_unshuffle": F.pixel_unshuffle,
    "channel_shuffle": F.channel_shuffle, "native_channel_shuffle": F.native_channel_shuffle,
    "affine_grid_generator": affine_grid_generator, "alpha_dropout": alpha_dropout,
    "alpha_dropout_": alpha_dropout_, "feature_alpha_dropout": feature_alpha_dropout,
    "feature_alpha_dropout_": feature_alpha_dropout_, "feature_dropout": feature_dropout,
    "feature_dropout_": feature_dropout_, "rms_norm": rms_norm, "rrelu": rrelu,
    "rrelu_": rrelu_, "threshold": threshold, "instance_norm": instance_norm,
    "kl_div": kl_div, "binary_cross_entropy_with_logits": binary_cross_entropy_with_logits,
    "cosine_embedding_loss": cosine_embedding_loss,
    "hinge_embedding_loss": hinge_embedding_loss, "margin_ranking_loss": margin_ranking_loss,
    "poisson_nll_loss": poisson_nll_loss, "triplet_margin_loss": triplet_margin_loss,
    "ctc_loss": ctc_loss, "embedding_bag": embedding_bag_tuple, "grid_sampler": grid_sampler,
    "grid_sampler_2d": grid_sampler_2d, "grid_sampler_3d": grid_sampler_3d,
    "native_layer_norm": native_layer_norm, "native_group_norm": native_group_norm,
    "native_batch_norm": native_batch_norm,
}
TOP_LEVEL["conv_tbc"] = F.conv_tbc


def native_dropout(input, p, train):
    """(output, keep mask): torch's dropout draws; in eval (or p = 0) the mask is all True."""
    dt = input._data.dtype
    if train and p > 0:
        noise = _random.dropout_noise(input._data.shape, p, dt)
    else:
        noise = np.ones(input._data.shape, dt)
    out = NATIVE_DROPOUT.call(input, params=noise)
    return out, Tensor(noise != 0)


TOP_LEVEL["native_dropout"] = native_dropout
