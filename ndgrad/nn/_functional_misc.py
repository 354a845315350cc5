"""The remaining names of torch's functional namespace: ``gumbel_softmax``,
``triplet_margin_with_distance_loss``, ``multi_head_attention_forward`` (the functional core
of ``nn.MultiheadAttention``), ``pdist``, the in-place ``celu_``/``selu_``/``threshold_``,
``native_channel_shuffle``, the deprecated ``upsample*`` forms, and the helpers torch's own
scripts touch (``has_torch_function*``, ``handle_torch_function``, ``boolean_dispatch``,
``assert_int_or_pair``, ``BroadcastingList1/2/3``, the ``*_notes`` documentation dicts).

All are composites of ndgrad ops (their grad_fn names are those of the ops they end in, as
torch's Python implementations). ndgrad has no ``__torch_function__`` dispatch: the
``has_torch_function*`` helpers report False, so torch-style code takes its plain path.
"""

import math
import warnings

import numpy as np

from .. import _creation
from .._ops import comparison as CMP
from .._ops import joins as J
from .._ops import matmul as L
from .._ops.channel_permutations import NATIVE_CHANNEL_SHUFFLE
from .._ops.distances import pdist
from .._tensor import Tensor

# ``ndgrad.nn.functional``, attached by it when it imports this module (it sits above).
F = None

__all__ = ["gumbel_softmax", "triplet_margin_with_distance_loss", "multi_head_attention_forward",
           "pdist", "native_channel_shuffle", "upsample", "upsample_bilinear",
           "upsample_nearest", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "handle_torch_function", "boolean_dispatch",
           "assert_int_or_pair", "BroadcastingList1", "BroadcastingList2", "BroadcastingList3",
           "reproducibility_notes", "tf32_notes", "sparse_support_notes", "TYPE_CHECKING"]


# ======================================================================= torch-function helpers
def has_torch_function(relevant_args):
    """False: ndgrad tensors carry no ``__torch_function__`` override."""
    return False


def has_torch_function_unary(arg):
    return False


def has_torch_function_variadic(*args):
    return False


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """With no override to dispatch to, call the public function itself."""
    return public_api(*args, **kwargs)


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function calling ``if_true`` or ``if_false`` by a boolean argument (as torch's)."""
    def fn(*args, **kwargs):
        flag = kwargs[arg_name] if arg_name in kwargs else \
            (args[arg_index] if arg_index < len(args) else default)
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        if_true.__doc__ = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        if_false.__doc__ = if_true.__doc__
    elif if_false.__doc__ is not None and if_true.__doc__ is not None:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = if_true.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


def assert_int_or_pair(arg, arg_name, message):
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


class _BroadcastingList:
    """TorchScript's ``BroadcastingList`` annotation: subscripting gives the type back."""

    def __getitem__(self, types):
        return types


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = _BroadcastingList()

reproducibility_notes = {
    "forward_reproducibility_note": "This operation may behave nondeterministically when "
    "given tensors on a CUDA device. (ndgrad runs on the CPU and is deterministic.)",
    "backward_reproducibility_note": "This operation may produce nondeterministic gradients "
    "when given tensors on a CUDA device. (ndgrad runs on the CPU and is deterministic.)",
    "cudnn_reproducibility_note": "In some circumstances when given tensors on a CUDA device "
    "and using CuDNN, this operator may select a nondeterministic algorithm. (Not in ndgrad.)",
}
tf32_notes = {"tf32_note": "TensorFloat-32 applies to CUDA devices only; ndgrad computes in "
              "the tensors' own precision."}
sparse_support_notes = {"sparse_beta_warning": "Sparse layouts are not provided by ndgrad."}


# ============================================================================ activations, shuffles
def check_channel_shuffle(input, groups):
    """torch's argument errors of channel_shuffle and native_channel_shuffle."""
    if input.dim() <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got "
                           f"{input.shape[1]} channels and {groups} groups.")


def native_channel_shuffle(input, groups):
    """channel_shuffle without a derivative (torch's grad_fn is NotImplemented)."""
    check_channel_shuffle(input, groups)
    return NATIVE_CHANNEL_SHUFFLE.call(input, params=(int(groups),))


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Softmax of (logits + Gumbel noise) / tau; ``hard`` gives a straight-through one-hot.
    The noise is ``-log(Exponential(1))``, drawn as torch's ``exponential_`` (same stream)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_creation.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """``max(margin + d(a, p) - d(a, n), 0)`` for any distance function (torch's order)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a_dim}D, positive "
                           f"{p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        distance_function = F.pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = CMP.minimum(dist_neg, distance_function(positive, negative))
    loss = (margin + dist_pos - dist_neg).clamp_min(0)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss


# ============================================================================ upsample
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return F.interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return F.interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return F.interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ============================================================================ attention
def _float_mask(mask, dtype):
    """Boolean masks (True = masked out) become additive -inf masks."""
    if mask is None or mask._data.dtype != np.bool_:
        return mask
    return Tensor(np.where(mask._data, -np.inf, 0.0).astype(dtype))


def _mha_dims_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched; torch's AssertionError for dims that do not fit."""
    nd = query.dim()
    if nd not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{nd}-D query tensor")
    kind = "batched (3-D)" if nd == 3 else "unbatched (2-D)"
    if key.dim() != nd or value.dim() != nd:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {nd}-D but "
                             f"found {key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != nd - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{nd - 1}-D but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D "
                                 f"or 3-D but found {attn_mask.dim()}-D tensor instead")
        if nd == 2 and attn_mask.dim() == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
    return nd == 3


def _attn_mask_shape_check(attn_mask, tgt_len, src_len, batch_heads):
    if attn_mask.dim() == 2 and tuple(attn_mask.shape) != (tgt_len, src_len):
        raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                           f"{(tgt_len, src_len)}.")
    if attn_mask.dim() == 3 and tuple(attn_mask.shape) != (batch_heads, tgt_len, src_len):
        raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                           f"{(batch_heads, tgt_len, src_len)}.")


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention on (L, N, E) (or unbatched (L, E)) query/key/value."""
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    batched = _mha_dims_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        # separate projections may map keys and values of different widths
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    e = embed_dim
    bq = bk = bv = None
    if in_proj_bias is not None:
        bq, bk, bv = in_proj_bias[:e], in_proj_bias[e:2 * e], in_proj_bias[2 * e:]
    if use_separate_proj_weight:
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        wq, wk, wv = in_proj_weight[:e], in_proj_weight[e:2 * e], in_proj_weight[2 * e:]
    q = F.linear(query, wq, bq)
    k = F.linear(key, wk, bk)
    v = F.linear(value, wv, bv)
    attn_mask = _float_mask(attn_mask, q._data.dtype)
    key_padding_mask = _float_mask(key_padding_mask, q._data.dtype)
    if attn_mask is not None:
        _attn_mask_shape_check(attn_mask, tgt_len, k.shape[0], bsz * num_heads)
    if bias_k is not None and bias_v is not None:
        k = J.cat([k, bias_k.expand(1, bsz, e)])
        v = J.cat([v, bias_v.expand(1, bsz, e)])
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) \
        if static_k is None else static_k
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) \
        if static_v is None else static_v
    if add_zero_attn:
        zeros = _creation.zeros((bsz * num_heads, 1, head_dim), dtype=q.dtype)
        k = J.cat([k, zeros], 1)
        v = J.cat([v, zeros], 1)
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if attn_mask is not None and attn_mask.dim() == 2:
        attn_mask = attn_mask.unsqueeze(0)
    if key_padding_mask is not None:
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    scores = L.matmul(q * (1.0 / math.sqrt(head_dim)), k.transpose(1, 2))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = F.softmax(scores, -1)
    if dropout_p > 0.0 and training:
        weights = F.dropout(weights, dropout_p, True)
    out = L.matmul(weights, v)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, e)
    out = F.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, e)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    w = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        w = w.mean(1)
    if not batched:
        w = w.squeeze(0)
    return out, w


# ============================================================================ in-place activations
def celu_(input, alpha=1.0):
    return F.celu(input, alpha, inplace=True)


def selu_(input):
    return F.selu(input, inplace=True)


def threshold_(input, threshold, value):
    return F.threshold(input, threshold, value, inplace=True)


__all__ += ["celu_", "selu_", "threshold_"]


# ============================================================================ linear cross entropy
def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0, options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target)``; a (C, *out, in)
    weight gives a K-dimensional loss. ``options`` (torch's chunked path, a memory saving
    with the same values) is accepted and the reference path is always taken."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes,) + out_features:
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = batches + (num_classes,) + out_features
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if out_features:
        rows = math.prod(out_features) * num_classes
        linear_weight = linear_weight.reshape(rows, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = F.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return F.cross_entropy(logits, target, weight=weight, reduction=reduction,
                           ignore_index=ignore_index, label_smoothing=label_smoothing)


__all__ += ["linear_cross_entropy"]
TYPE_CHECKING = False
