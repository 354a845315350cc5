"""``ndgrad.nn.functional``: torch's functional layer API on ndgrad ops.

The activation functions live in ``_functional_activations.py``, convolution / pooling /
unpooling (1-3 d) and dropout3d in ``_functional_spatial.py``; both are re-exported here.
Heavy or numerically delicate functions call fused primitives with torch's node names, kept
in ``ndgrad/_ops/`` by kind: ``activations.py``, ``linear.py``, ``conv_pool.py``,
``normalization.py``, ``embedding.py``, ``losses.py`` (``rnn_cells.py`` serves
``nn.modules.rnn``); the rest are composites of ndgrad ops, so their gradients (and gradients
of gradients) come from the ops they use.
"""

import math
import sys as _sys
import warnings

import numpy as np

from .. import _random, _state
from . import _dropout_noise
from .._ops import comparison as CMP
from .._ops import matmul as L
from .._ops import shape as S
from .._ops.activations import LOG_SOFTMAX
from .._ops.arithmetic import MUL_SCALAR
from .._ops.conv_pool import col2im, constant_pad, im2col, index_pad
from .._ops.embedding import EMBEDDING
from .._ops.linear import LINEAR
from .._ops.losses import (multi_margin_loss_prim, multilabel_margin_loss_prim, nll_loss_prim,
                           nll_loss2d_prim, pointwise_loss, soft_margin_loss_prim)
from .._ops.normalization import batch_norm_prim, group_norm_prim, layer_norm_prim
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .. import _dtype
from .._ops.methods import bind as _bind_methods
from ._functional_activations import *  # their names are listed in __all__ below
from . import _functional_activations as _activations
from ._functional_activations import _dtype_name, _float_kernel
from ._functional_spatial import (  # noqa: F401 (re-exported)
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices, adaptive_max_pool2d, adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d, adaptive_max_pool3d_with_indices, avg_pool1d, avg_pool2d, avg_pool3d,
    conv1d, conv2d, conv3d, conv_tbc, conv_transpose1d, conv_transpose2d, conv_transpose3d,
    dropout3d, lp_pool1d, lp_pool2d, lp_pool3d, max_pool1d, max_pool1d_with_indices, max_pool2d,
    max_pool2d_with_indices, max_pool3d, max_pool3d_with_indices, max_unpool1d, max_unpool2d,
    max_unpool3d
)
from . import _functional_spatial as _spatial
from ._functional_spatial import _adaptive_matrix, _unpool_output_size  # noqa: F401

__all__ = [
    "linear", "bilinear", "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_",
    "selu", "celu", "gelu", "silu", "mish", "softplus", "softsign", "hardtanh", "hardtanh_",
    "hardsigmoid", "hardswish", "sigmoid", "tanh", "logsigmoid", "prelu", "glu", "threshold",
    "tanhshrink", "softshrink", "hardshrink", "softmax", "log_softmax", "softmin", "dropout",
    "dropout1d", "dropout2d", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_max_pool2d", "batch_norm", "layer_norm", "group_norm",
    "instance_norm", "embedding", "one_hot", "pad", "interpolate", "unfold", "fold",
    "normalize", "cosine_similarity", "pairwise_distance", "scaled_dot_product_attention",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
    "triplet_margin_loss", "soft_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
]
__all__ += [n for n in _spatial.__all__ if n not in __all__]


def _pair(v, n=2):
    if isinstance(v, (tuple, list)):
        return tuple(None if a is None else int(a) for a in v)
    return (int(v),) * n


# ============================================================================ linear
_T = S.t


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (AddmmBackward0 for 2-D input with bias, like torch)."""
    xd = input._data
    if xd.ndim == 2 and bias is not None:
        wd, bd = weight._data, bias._data
        if bd.ndim == 1 and xd.dtype == wd.dtype == bd.dtype and \
                xd.shape[1] == wd.shape[1] and bd.shape[0] == wd.shape[0]:
            return LINEAR.call(bias, input, _T(weight))
        return L.addmm(bias, input, weight.t())
    if input.dim() == 2:
        return input.mm(weight.t())
    if bias is not None and input.dim() > 2:
        shape = input.shape
        out = linear(input.reshape(-1, shape[-1]), weight, bias)
        return out.view(*shape[:-1], out.shape[-1])
    out = L.matmul(input, weight.t())
    return out + bias if bias is not None else out


def bilinear(input1, input2, weight, bias=None):
    """``y_k = x1^T W_k x2 + b_k`` for weight (out, in1, in2)."""
    lead = input1.shape[:-1]
    a = input1.reshape(-1, input1.shape[-1])
    b = input2.reshape(-1, input2.shape[-1])
    o, i1, i2 = weight.shape
    # (N, in1) @ (in1, out*in2) -> (N, out, in2), then contract with x2.
    t = a.mm(weight.permute(1, 0, 2).reshape(i1, o * i2)).view(-1, o, i2)
    out = (t * b.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    return out.view(*lead, o)


# ============================================================================ dropout
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero elements with probability `p` and scale the rest by ``1/(1-p)`` (torch's draws)."""
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    noise = _dropout_noise.noise_like(input, p)
    if inplace:
        return input.mul_(noise)
    return input * noise


def _feature_dropout(input, p, training, inplace, batched_dim):
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    noise = _dropout_noise.noise_like(input, p, batched_dim)
    if inplace:
        return input.mul_(noise)
    return input * noise


def dropout1d(input, p=0.5, training=True, inplace=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a "
                           f"{input.dim()}D input. Note that dropout1d exists to provide "
                           "channel-wise dropout on inputs with 1 spatial dimension, a channel "
                           "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, 2 if input.dim() == 3 else 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 2 if input.dim() == 4 else 1)


# ============================================================================ convolution / pooling
# conv*, conv_transpose*, conv_tbc, max/avg/adaptive/lp pooling, max unpooling (1-3 d) and
# dropout3d live in _functional_spatial.py (imported above).


# ============================================================================ normalization
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise over all dims but 1; in training, update running stats in place."""
    if training:
        size = input.shape
        n = size[0] * math.prod(size[2:]) if size else 1  # values per channel, as torch
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {size}")
    elif running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    c = input.shape[1] if input.dim() > 1 else 0  # torch counts no channel in a 1-D input
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if input.numel() == 0:  # nothing to normalise; torch leaves the running stats as they are
        return input * 1
    return batch_norm_prim(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing `normalized_shape` dims, then scale and shift."""
    normalized_shape = _pair(normalized_shape, 1) if not isinstance(
        normalized_shape, (tuple, list)) else tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.dim() - k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(str(s) for s in normalized_shape)}], "
                           f"but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(normalized_shape)}")
    return layer_norm_prim(input, weight, bias, k, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each group of ``C / num_groups`` channels of every sample, then scale and
    shift per channel (NativeGroupNormBackward0)."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    size = list(input.shape)
    _verify_batch_size([size[0] * size[1] // num_groups, num_groups] + size[2:])
    c = size[1]
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {size} and "
                           f"num_groups={num_groups}")
    if weight is not None and (weight.dim() != 1 or weight.numel() != c):
        raise RuntimeError(f"Expected weight to be a vector of size equal to the number of "
                           f"channels in input, but got weight of shape {list(weight.shape)} "
                           f"and input of shape {size}")
    if bias is not None and (bias.dim() != 1 or bias.numel() != c):
        # (torch's message shows the weight's shape, [0] when there is none)
        shown = list(weight.shape) if weight is not None else [0]
        raise RuntimeError(f"Expected bias to be a vector of size equal to the number of "
                           f"channels in input, but got bias of shape {shown} and input of "
                           f"shape {size}")
    params = [p for p in (weight, bias) if p is not None]
    if params and input._data.dtype != np.float32 and all(
            p._data.dtype == np.float32 for p in params):
        # torch's mixed type: float16 input with float32 parameters is allowed
        if input._data.dtype != np.float16:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    elif any(p.dtype != input.dtype for p in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    _float_kernel(input, "GroupNormKernelImpl")
    return group_norm_prim(input, weight, bias, num_groups, eps)


def _verify_batch_size(size):
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {size}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Batch norm of the (1, N*C, *) view, as torch's: per-channel parameters and running
    statistics are repeated N times, and the running statistics get the mean over N back."""
    n, c = input.shape[:2]
    x = input.reshape(1, n * c, *input.shape[2:])

    def repeat(t):
        return None if t is None else t.repeat(n)

    rm, rv = repeat(running_mean), repeat(running_var)
    out = batch_norm_prim(x, repeat(weight), repeat(bias), rm, rv, use_input_stats, momentum,
                          eps)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.reshape(n, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.reshape(n, c).mean(0))
    return out.view(input.shape)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return input / denom


# ============================================================================ embedding
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by integer `input` (`sparse` gradients are returned dense)."""
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    if input._data.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"torch.{_legacy_name(input)} instead (while checking arguments for "
                           "embedding)")
    idx = input._data
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        with no_grad():
            rows = np.unique(idx)
            w = weight._data
            norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=1)
            scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            w[rows] = (w[rows] * scale[:, None]).astype(w.dtype)
            weight._vc[0] += 1
    return EMBEDDING.call(weight, input, params=(weight.shape[0], padding_idx,
                                                  bool(scale_grad_by_freq)))


def _legacy_name(t):
    return _dtype.from_np(t._data.dtype)._legacy


def one_hot(tensor, num_classes=-1):
    if tensor._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    d = tensor._data
    if num_classes == -1:
        if d.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(d.max()) + 1
    if d.size and d.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if d.size and d.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (d[..., None] == np.arange(num_classes)).astype(np.int64)
    return Tensor(out)


# ============================================================================ pad / resize
def pad(input, pad, mode="constant", value=None):
    """Pad trailing dims: ``pad = (left_last, right_last, left_2nd_last, ...)``."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           "input dimension but got padding length "
                           f"{len(pad)} and input of dimension {input.dim()}")
    nd = input.dim()
    pairs = [(0, 0)] * nd
    for i in range(len(pad) // 2):
        pairs[nd - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    if mode == "constant":
        return constant_pad(input, tuple(pairs), 0.0 if value is None else value)
    if value is not None and value != 0:
        raise NotImplementedError(f"Padding mode \"{mode}\" doesn't take in value argument.")
    k = len(pad) // 2
    if mode in ("reflect", "replicate", "circular"):
        if not ((k == 1 and nd in (2, 3)) or (k == 2 and nd in (3, 4))
                or (k == 3 and nd in (4, 5))):
            raise NotImplementedError(
                f"Padding size {len(pad)} is not supported for {nd}D input tensor.")
        if mode == "reflect":
            for i in range(k):
                lo, hi = pairs[nd - 1 - i]
                size = input.shape[nd - 1 - i]
                if lo >= size or hi >= size:
                    raise RuntimeError(f"Argument #4: Padding size should be less than the "
                                       f"corresponding input dimension, but got: padding "
                                       f"({lo}, {hi}) at dimension {nd - 1 - i} of input "
                                       f"{list(input.shape)}")
        np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
        name = {"reflect": "ReflectionPad", "replicate": "ReplicationPad",
                "circular": "CircularPad"}[mode]
        return index_pad(input, tuple(pairs), np_mode, f"{name}{k}DBackward0")
    raise NotImplementedError(f"Unrecognised padding mode {mode}")


# interpolate lives in _functional_interpolate.py (imported at the end of this module).


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C, H, W) -> (N, C*kh*kw, L); an unbatched (C, H, W) gives (C*kh*kw, L)."""
    if input.dim() == 3:
        return unfold(input.unsqueeze(0), kernel_size, dilation, padding, stride).squeeze(0)
    if input.dim() != 4:
        raise NotImplementedError("Input Error: Only 4D input Tensors are supported "
                                  f"(got {input.dim()}D)")
    return im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im: (N, C*kh*kw, L) -> (N, C, H, W), summing overlaps."""
    return col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation),
                    _pair(padding), _pair(stride))


# ============================================================================ distances
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    if tuple(x1.shape) != tuple(x2.shape):  # torch broadcasts first, then takes the norms
        x1, x2 = S.broadcast_tensors(x1, x2)
    n1 = x1.norm(2, dim, keepdim=True).clamp(min=eps)
    n2 = x2.norm(2, dim, keepdim=True).clamp(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)


def _causal_mask(lq, sk):
    """The positions a causal attention hides: True above the diagonal (a constant of the
    sizes, which ndgrad.compile's tracer accepts as made from shapes only)."""
    return Tensor(~np.tril(np.ones((lq, sk), dtype=bool)))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(q @ k.T * scale + mask) @ v``; boolean masks keep True positions."""
    lq, sk = query.shape[-2], key.shape[-2]
    if enable_gqa and key.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        # grouped-query attention: each key/value head serves query.heads / key.heads heads
        rep = query.shape[-3] // key.shape[-3]

        def widen(t):
            lead, (h, s_, e) = tuple(t.shape[:-3]), tuple(t.shape[-3:])
            return t.unsqueeze(-3).expand(*lead, h, rep, s_, e).reshape(*lead, h * rep, s_, e)
        key, value = widen(key), widen(value)
    scale_factor = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    attn = L.matmul(query, key.transpose(-2, -1)) * scale_factor
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not "
                               "be set when is_causal=True")
        attn = attn.masked_fill(_causal_mask(lq, sk), float("-inf"))
    if attn_mask is not None:
        if attn_mask._data.dtype == np.bool_:
            attn = attn.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            attn = attn + attn_mask
    attn = softmax(attn, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return L.matmul(attn, value)


# ============================================================================ losses
_I64 = np.dtype(np.int64)
_U8 = np.dtype(np.uint8)


def _reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _broadcast_pair(input, target, name):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)
        try:
            shape = np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
        except ValueError:
            # the same message as any broadcasting op (torch's "The size of tensor a ...")
            input.sub(target)
            raise
        input, target = input.expand(*shape), target.expand(*shape)
    return input, target


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of class indices; "mean" divides by the summed weights.

    As torch's nll_loss_nd: 1-d and 2-d inputs take nll_loss (NllLossBackward0), 4-d inputs
    nll_loss2d (NllLoss2DBackward0); any other rank is viewed as (N, C, 1, -1) for nll_loss2d
    (a ViewBackward0 under its node) and an unreduced loss viewed back to (N, d1, ...)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    dim = input.dim()
    if dim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {dim})")
    if dim != 1:
        n = target.shape[0] if target.dim() else 0
        if input.shape[0] != n:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({n}).")
    if dim <= 2:
        _no_grad_arg("nll_loss_forward", "weight", weight)
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        c = input.shape[-1]
        # (targets out of [0, C) raise torch's IndexError inside the kernel)
        if weight is not None and weight.numel() != c:
            raise RuntimeError(f"weight tensor should be defined either for all {c} classes or "
                               f"no classes but got weight tensor of shape: {list(weight.shape)}")
        _check_nll_dtypes(input, target, weight)
        return nll_loss_prim(input, target, weight, reduction, ignore_index)
    if dim == 4:
        return _nll_loss2d(input, target, weight, reduction, ignore_index)
    n, c = input.shape[:2]
    out_size = [n] + list(input.shape[2:])
    if list(target.shape[1:]) != out_size[1:]:
        raise RuntimeError(f"Expected target size {out_size}, got {list(target.shape)}")
    x = input.contiguous()
    t = target.contiguous()
    x = x.view(n, c, 1, -1) if x.numel() else x.view(n, c, 0, 0)
    t = t.view(n, 1, -1) if t.numel() else t.view(n, 0, 0)
    out = _nll_loss2d(x, t, weight, reduction, ignore_index)
    return out.view(out_size) if reduction == "none" else out


def _check_nll_dtypes(input, target, weight):
    tdt = target._data.dtype
    if tdt != np.int64 and tdt != np.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_dtype_name(target)}")
    if weight is not None and weight._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_name(input)} but found "
                           f"{_dtype_name(weight)}")


def _nll_loss2d(input, target, weight, reduction, ignore_index):
    """torch's nll_loss2d: input (N, C, H, W), target (N, H, W), with its checks in order."""
    _no_grad_arg("nll_loss2d_forward", "weight", weight)
    if target.dim() != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.dim()}")
    if weight is not None and weight.numel() != input.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    xs, ts = tuple(input.shape), tuple(target.shape)
    if xs[0] != ts[0] or xs[2:] != ts[1:]:
        # (torch's message has no closing parenthesis)
        raise RuntimeError(f"size mismatch (got input: {list(xs)} , target: {list(ts)}")
    _check_nll_dtypes(input, target, weight)
    if target._data.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype_name(target)}")
    return nll_loss2d_prim(input, target, weight, reduction, ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax over dim 1 followed by nll_loss (class indices) or a soft-target sum."""
    if (weight is None and label_smoothing == 0.0 and size_average is None and reduce is None
            and (reduction == "mean" or reduction == "sum")):
        # Common case, (N, C) floats with (N,) integer targets: the same two primitives the
        # general path reaches (LogSoftmaxBackward0 -> NllLossBackward0), without its checks.
        xd = getattr(input, "_data", None)
        td = getattr(target, "_data", None)
        if (xd is not None and td is not None and xd.ndim == 2 and td.ndim == 1
                and xd.dtype.kind == "f" and (td.dtype == _I64 or td.dtype == _U8)
                and xd.shape[0] == td.shape[0]):
            return nll_loss_prim(LOG_SOFTMAX.call(input, params=1), target, None,
                                   reduction, ignore_index)
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, class_dim)
    c = input.shape[class_dim]
    wshape = [1] * input.dim()
    wshape[class_dim] = c
    if target._data.dtype.kind in "iu":
        nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
        if label_smoothing == 0.0:
            return nll
        ignore = Tensor(target._data == ignore_index)
        if weight is not None:
            smooth = -(logp * weight.reshape(wshape)).sum(class_dim)
        else:
            smooth = -logp.sum(class_dim)
        smooth = smooth.masked_fill(ignore, 0.0)
        if reduction == "mean":
            if weight is not None:
                keep = target._data[target._data != ignore_index]
                ret = smooth.sum() / weight[Tensor(keep.reshape(-1))].sum()
            else:
                ret = smooth.sum() / float((target._data != ignore_index).sum())
        elif reduction == "sum":
            ret = smooth.sum()
        else:
            ret = smooth
        # torch scales by C++ numbers: mul(Tensor, Scalar) nodes (MulBackward1)
        return (MUL_SCALAR.call(nll, params=1 - label_smoothing)
                + MUL_SCALAR.call(ret, params=label_smoothing / c))
    if tuple(target.shape) != tuple(input.shape):
        if target.dim() != input.dim() - 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        raise RuntimeError(f"Expected target size {list(input.shape)}, got "
                           f"{list(target.shape)}")
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / c
    prod = logp * target
    if weight is not None:
        prod = prod * weight.reshape(wshape)
    if reduction == "mean":
        return -prod.sum() / (input.numel() / c)
    if reduction == "sum":
        return -prod.sum()
    return -prod.sum(class_dim)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    input, target = _broadcast_pair(input, target, "mse_loss")
    if weight is not None:
        return _reduce(((input - target) ** 2) * weight, reduction)
    return pointwise_loss("mse", input, target, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    input, target = _broadcast_pair(input, target, "l1_loss")
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    input, target = _broadcast_pair(input, target, "smooth_l1_loss")
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    return pointwise_loss("smooth_l1", input, target, reduction, beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _check_reduction(reduction)
    input, target = _broadcast_pair(input, target, "huber_loss")
    if weight is not None:
        d = (input - target).abs()
        loss = CMP.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
        return _reduce(loss * weight, reduction)
    return pointwise_loss("huber", input, target, reduction, delta)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                         f"input size ({input.shape}) is deprecated. Please ensure they have "
                         "the same size.")
    d = input._data
    if d.size and ((d < 0).any() or (d > 1).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if weight is not None:
        weight = weight.expand(*input.shape)
        _no_grad_arg("binary_cross_entropy", "weight", weight)
    return pointwise_loss("bce", input, target, reduction, None, weight)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    _no_grad_arg("binary_cross_entropy_with_logits", "weight", weight)
    _no_grad_arg("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    if weight is not None:
        weight = weight.expand(*input.shape)
    pw = pos_weight.expand(*input.shape) if pos_weight is not None else None
    return pointwise_loss("bce_logits", input, target, reduction, None, weight, pw)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    reduction = _reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns "
                      "with the KL div math definition.'mean' will be changed to behave the "
                      "same as 'batchmean' in the next major release.", stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        tl = CMP.where(target > 0, target * CMP.where(target > 0, target, 1.0).log(), target * 0)
        loss = tl - target * input
    if reduction == "batchmean":
        if input.dim() == 0:
            return loss.sum()
        return loss.sum() / input.shape[0]
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    loss = (-target * (input1 - input2) + margin).clamp(min=0)
    return _reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    zeros = input * 0
    margin_clamp = (margin - input).clamp(min=0)
    out_margin = CMP.where(target != 1, margin_clamp, zeros)
    out_self = CMP.where(target != -1, input, zeros)
    return _reduce(out_margin + out_self, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    eps = 1e-12
    prod_sum = (input1 * input2).sum(-1)
    mag1 = (input1 * input1).sum(-1) + eps
    mag2 = (input2 * input2).sum(-1) + eps
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = cos * 0
    pos = 1 - cos
    neg = (cos - margin).clamp(min=0)
    out = CMP.where(target == 1, pos, zeros) + CMP.where(target == -1, neg, zeros)
    return _reduce(out, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = CMP.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = (d_pos - d_neg + margin).clamp(min=0)
    return _reduce(loss, reduction)


def _no_grad_arg(fn_name, arg_name, t):
    if t is not None and t.requires_grad and _state.tls.grad_enabled:
        raise RuntimeError(f"The function '{fn_name}' is not differentiable with respect to "
                           f"argument '{arg_name}'. This input cannot have requires_grad True.")


def _long_target(target):
    if target._data.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype_name(target)}")


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))``, reduced (SoftMarginLossBackward0)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    shape = tuple(input.shape)
    try:
        full = np.broadcast_shapes(shape, tuple(target.shape))
    except ValueError:
        input.sub(target)  # torch's broadcasting message
        raise
    if full != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(full)}")
    if input._data.dtype.kind != "f":
        # (the promoted type: a floating target's, else the default float)
        name = _dtype_name(target) if target._data.dtype.kind == "f" else "Float"
        raise RuntimeError(f"result type {name} can't be cast to the desired output type "
                           f"{_dtype_name(input)}")
    _no_grad_arg("soft_margin_loss", "target", target)
    return soft_margin_loss_prim(input, target, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per sample, the mean over classes of the binary logistic loss (torch's composite)."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def _frames(input):
    """(frames, classes) of a margin loss's input: 0-d and 1-d inputs are one frame."""
    ndim = input.dim()
    if not ((ndim == 2 and input.shape[1] != 0) or (ndim == 1 and input.shape[0] != 0)
            or ndim == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    if ndim <= 1:
        return 1, (input.shape[0] if ndim else 1)
    return input.shape[0], input.shape[1]


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss: per sample ``sum_{d != y} max(0, margin - x[y] + x[d])^p / C``,
    each term scaled by ``weight[y]`` (MultiMarginLossBackward0)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    nframe, dim = _frames(input)
    if not (target.dim() <= 1 and target.numel() == nframe):
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{nframe}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got "
                           f"{list(weight.shape)}")
    _long_target(target)
    _float_kernel(input, "multi_margin_loss_cpu_kernel")
    if input._data.dtype.itemsize == 2:
        raise NotImplementedError(f'"multi_margin_loss_cpu_kernel" not implemented for '
                                  f"'{_dtype_name(input)}'")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_name(input)} but found "
                           f"{_dtype_name(weight)}")
    t = target._data
    if t.size and (t.min() < 0 or t.max() >= dim):
        raise RuntimeError("target out of range")
    _no_grad_arg("multi_margin_loss", "weight", weight)
    return multi_margin_loss_prim(input, target, weight, int(p), float(margin), reduction,
                                    (nframe, dim))


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: per sample ``sum_{j, d} max(0, 1 - x[y_j] + x[d]) / C`` over
    the target classes ``y_j`` (the entries before the first -1) and the other classes ``d``
    (MultilabelMarginLossBackward0)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    nframe, dim = _frames(input)
    if input.dim() <= 1:
        ok = target.dim() <= 1 and target.numel() == dim
    else:
        ok = target.dim() == 2 and tuple(target.shape) == (nframe, dim)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    _long_target(target)
    t = target._data
    if t.size and (t.min() < -1 or t.max() >= dim):
        raise RuntimeError("argument #2 'target' is out of range")
    _float_kernel(input, "multilabel_margin_loss_forward_out_frame")
    if input._data.dtype.itemsize == 2:
        raise NotImplementedError(f'"multilabel_margin_loss_forward_out_frame" not implemented '
                                  f"for '{_dtype_name(input)}'")
    return multilabel_margin_loss_prim(input, target, reduction, (nframe, dim))


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        t = target._data
        st = np.where(t > 1, t * np.log(np.where(t > 1, t, 1)) - t
                      + 0.5 * np.log(2 * np.pi * np.where(t > 1, t, 1)), 0)
        loss = loss + Tensor(st.astype(input._data.dtype))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    var = var.clamp(min=eps) if not var.requires_grad else var + (var.clamp(min=eps) - var
                                                                  ).detach()
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)



# ============================================================================ torch.* aliases
def _torch_dropout(input, p, train):
    return dropout(input, p, train)


def _torch_dropout_(input, p, train):
    return dropout(input, p, train, inplace=True)


def _torch_celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def _torch_selu_(input):
    return selu(input, inplace=True)


def _torch_threshold_(input, threshold, value):
    return _activations.threshold(input, threshold, value, inplace=True)


def _torch_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                      cudnn_enabled=True):
    return batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5,
                      cudnn_enable=True):
    return layer_norm(input, normalized_shape, weight, bias, eps)


def _torch_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return embedding(indices, weight, None if padding_idx == -1 else padding_idx)


def _export_aliases():
    """torch exposes several of these ops as ``torch.softmax`` and ``Tensor.softmax`` too;
    attach them where the op catalogue has not defined them (never overriding)."""
    import ndgrad  # the (partly initialised) root package these aliases are attached to

    top = {"softmax": lambda input, dim, dtype=None: softmax(input, dim, dtype=dtype),
           "log_softmax": lambda input, dim, dtype=None: log_softmax(input, dim, dtype=dtype),
           "dropout": _torch_dropout, "dropout_": _torch_dropout_, "celu_": _torch_celu_,
           "selu_": _torch_selu_, "threshold_": _torch_threshold_, "conv1d": conv1d,
           "conv2d": conv2d,
           "conv_transpose1d": conv_transpose1d, "conv_transpose2d": conv_transpose2d,
           "max_pool1d": max_pool1d, "max_pool2d": max_pool2d, "avg_pool1d": avg_pool1d,
           "batch_norm": _torch_batch_norm, "layer_norm": _torch_layer_norm,
           "group_norm": lambda input, num_groups, weight=None, bias=None, eps=1e-5,
           cudnn_enabled=True: group_norm(input, num_groups, weight, bias, eps),
           "embedding": _torch_embedding, "cosine_similarity": cosine_similarity,
           "pairwise_distance": pairwise_distance, "prelu": prelu, "selu": selu, "celu": celu,
           "bilinear": bilinear, "hardshrink": hardshrink,
           "adaptive_avg_pool1d": adaptive_avg_pool1d}
    for name, fn in top.items():
        if not hasattr(ndgrad, name):
            setattr(ndgrad, name, fn)
    _bind_methods({"softmax": lambda self, dim, dtype=None: softmax(self, dim, dtype=dtype),
                   "log_softmax": lambda self, dim, dtype=None: log_softmax(self, dim, dtype=dtype),
                   "prelu": prelu, "hardshrink": hardshrink})


_export_aliases()


# ============================================================================ channel permutations
# (issue 16) pixel_shuffle / pixel_unshuffle / channel_shuffle: the kernels and rules live in
# _ops/channel_permutations.py; these wrappers check the arguments with torch's messages.
from .._ops.channel_permutations import (
    CHANNEL_SHUFFLE,
    PIXEL_SHUFFLE,
    PIXEL_UNSHUFFLE,
)

__all__ += ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle"]

def pixel_shuffle(input, upscale_factor):
    """``(*, C r^2, H, W) -> (*, C, H r, W r)`` (PixelShuffleBackward0)."""
    r = upscale_factor
    if input.dim() < 3:
        raise RuntimeError("pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           "divisible by the square of upscale_factor, but input.size(-3)="
                           f"{c} is not divisible by {r * r}")
    return PIXEL_SHUFFLE.call(input, params=(int(r),))


def pixel_unshuffle(input, downscale_factor):
    """``(*, C, H r, W r) -> (*, C r^2, H, W)`` (PixelUnshuffleBackward0)."""
    r = downscale_factor
    if input.dim() < 3:
        raise RuntimeError("pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    for name, dim in (("height", -2), ("width", -1)):
        if input.shape[dim] % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({dim})={input.shape[dim]} is "
                               f"not divisible by {r}")
    return PIXEL_UNSHUFFLE.call(input, params=(int(r),))


def channel_shuffle(input, groups):
    """Interleave the ``groups`` channel groups of ``(N, C, *)`` (ChannelShuffleBackward0)."""
    _misc.check_channel_shuffle(input, groups)  # _misc is bound at the end of this module
    return CHANNEL_SHUFFLE.call(input, params=(int(groups),))



# ============================================================================ rms norm
# (issue 16) a composite, as torch's CPU rms_norm: grad_fn MulBackward0 (of the weight when
# given), ``eps=None`` meaning the dtype's machine epsilon; half input is computed in float32.
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x^2 over the trailing normalized_shape dims) + eps) * weight``."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    shape = tuple(normalized_shape)
    k = len(shape)
    if tuple(input.shape[input.dim() - k:]) != shape or input.dim() < k:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in shape)}], but got input of size"
                           f"{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(shape)}")
    x = input
    if x._data.dtype.itemsize < 4 and x._data.dtype.kind == "f":
        x = x.to(_dtype.float32)
    if eps is None:
        eps = float(np.finfo(x._data.dtype).eps)
    dims = tuple(range(x.dim() - k, x.dim()))
    out = x * (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    out = out.type_as(input)
    return out * weight if weight is not None else out


__all__ += ["rms_norm"]


# ============================================================================ local response / Lp
# (issue 16) composites in torch's order of operations, so values and grad_fn (DivBackward0,
# PowBackward0) match: the channel window of local_response_norm is an average pool over a
# (N, 1, C, rest) view, which equals torch's avg_pool3d with a (size, 1, 1) kernel.
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta``."""
    dim = input.dim()
    if dim < 3:
        # torch's message carries the indentation of its own line continuation
        raise ValueError(f"Expected 3D or higher dimensionality{' ' * 26}input (got {dim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    sizes = input.shape
    div = div.unsqueeze(1) if dim == 3 else div.reshape(sizes[0], 1, sizes[1], -1)
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    if dim > 3:
        div = div.reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


# ============================================================================ alpha dropout
# (issue 16) torch's _dropout_impl with alpha=True: keep-mask m ~ bernoulli(1 - p) (the same
# draws as dropout), output ``x * (a m) + b`` with ``b = (m - 1) a alpha' + a alpha' p``, so the
# SELU fixed point (mean 0, variance 1) is kept. Feature variant: one draw per (N, C).
_SELU_ALPHA_PRIME = 1.7580993408473766


def _alpha_dropout(input, p, training, inplace, feature):
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1:
        zero = Tensor(np.zeros((), input._data.dtype))
        return input.mul_(zero) if inplace else input.mul(zero)
    dt = input._data.dtype
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2) if feature else \
        tuple(input.shape)
    mask = _random.dropout_mask(shape, p, dt)
    a = 1.0 / math.sqrt((_SELU_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
    b = ((mask - dt.type(1)) * dt.type(_SELU_ALPHA_PRIME * a)
         + dt.type(_SELU_ALPHA_PRIME * a * p)).astype(dt)
    noise = (mask * dt.type(a)).astype(dt)
    out = input.mul_(Tensor(noise)) if inplace else input.mul(Tensor(noise))
    return out.add_(Tensor(b))


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps a SELU network's zero mean and unit variance."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (one draw per sample and channel)."""
    return _alpha_dropout(input, p, training, inplace, True)


__all__ += ["local_response_norm", "lp_pool1d", "lp_pool2d", "alpha_dropout",
            "feature_alpha_dropout"]


# ============================================================================ affine grid
# (issue 16) the generator lives in _ops/grid_sampling.py (AffineGridGeneratorBackward0).
from .._ops.grid_sampling import AFFINE_GRID


def affine_grid(theta, size, align_corners=None):
    """The (N, H, W, 2) (or (N, D, H, W, 3)) sampling grid of the affine maps ``theta``."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = list(size)[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = list(size)[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if size[0] != theta.shape[0]:  # torch's message: its batched matmul with the base grid
        k = len(spatial) + 1
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {k}] but got: [{theta.shape[0]}, {k}].")
    return AFFINE_GRID.call(theta, params=(tuple(int(s) for s in spatial), bool(align_corners)))


__all__ += ["affine_grid"]
__all__ += ["rrelu", "rrelu_"]  # defined in _functional_activations


# ============================================================================ nn misc (issue 16)
# grid_sample, embedding_bag, ctc_loss, fractional max pooling, the new interpolate modes and
# the remaining helpers torch's functional namespace exposes live in their own modules.
from . import _functional_sampling as _sampling  # noqa: E402
from ._functional_sampling import *  # noqa: E402,F401,F403
from ._functional_embedding_bag import embedding_bag  # noqa: E402,F401
from ._functional_ctc import ctc_loss  # noqa: E402,F401
from . import _functional_fractional_pool as _fractional  # noqa: E402
from ._functional_fractional_pool import *  # noqa: E402,F401,F403
from . import _functional_misc as _misc  # noqa: E402
from ._functional_misc import *  # noqa: E402,F401,F403
from . import _functional_interpolate as _interpolate  # noqa: E402
from ._functional_interpolate import interpolate  # noqa: E402,F401

_misc.F = _interpolate.F = _sys.modules[__name__]
__all__ += _sampling.__all__ + ["embedding_bag", "ctc_loss"] + _misc.__all__ + \
    _fractional.__all__
