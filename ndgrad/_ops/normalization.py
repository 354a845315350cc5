"""Normalization primitives of ``nn.functional`` with torch's nodes: ``native_batch_norm``,
``native_layer_norm`` (one forward kernel and one rule, told apart by the node's extras) and
``native_group_norm``.

Invariants: statistics are accumulated in float32 for float16 input; the backward recomputes
the statistics in ndgrad ops (batch norm: in training mode), so the gradient is itself
differentiable in the input; batch norm's running statistics are updated in place (version
bump, no history), with the unbiased variance, as torch's. Under vmap the wrappers never
compute statistics on a BatchedTensor's placeholder data: the primitives' batching rules
compute every sample's statistics on the values, and affine parameters apply per sample.
"""

import math

import numpy as np

from .. import _state
from .._tensor import Tensor
from .registry import no_forward_ad, primitive
from .vmap_helpers import is_batched

__all__ = []


# ============================================================================ batch / layer norm
def _norm_fwd(x, w, b, p):
    axes, eps, mean, invstd, pshape = p
    if mean is None:  # layer norm: the statistics are the kernel's own (a replay recomputes)
        mean, invstd = _layer_stats(x, axes, eps)
    y = (x - mean) * invstd
    if w is not None:
        y = y * w.reshape(pshape)
    if b is not None:
        y = y + b.reshape(pshape)
    return y.astype(x.dtype, copy=False)


def _norm_vjp(ctx, g):
    x, w = ctx.saved
    axes, eps, mean, invstd, pshape = ctx._params
    training = ctx._extras()["training"]
    n = ctx._next
    if training:
        # Recomputed in ndgrad ops so the gradient is itself differentiable in x.
        mu = x.mean(axes, keepdim=True)
        xc = x - mu
        inv = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()
    else:
        xc = x - Tensor(mean)
        inv = Tensor(invstd)
    xhat = xc * inv
    outer = tuple(i for i in range(x.dim()) if i not in axes) if ctx._extras()["layer"] \
        else axes
    gx = gw = gb = None
    if n[0] is not None:
        gxh = g * w.reshape(pshape) if w is not None else g
        if training:
            gx = inv * (gxh - gxh.mean(axes, keepdim=True)
                        - xhat * (gxh * xhat).mean(axes, keepdim=True))
        else:
            gx = gxh * inv
    # An empty `outer` (a layer norm over every dim) reduces nothing; sum(()) would sum all.
    def over_outer(t):
        return t.sum(outer) if outer else t

    if len(n) > 1 and n[1] is not None:
        gw = over_outer(g * xhat).reshape(w.shape)
    if len(n) > 2 and n[2] is not None:
        gb = over_outer(g).reshape(ctx._extras()["b_shape"])
    return gx, gw, gb


NATIVE_BATCH_NORM = primitive("native_batch_norm", _norm_fwd, "NativeBatchNormBackward0",
                              save=((0, None), (1, None)))
NATIVE_LAYER_NORM = primitive("native_layer_norm", _norm_fwd, "NativeLayerNormBackward0",
                              save=((0, None), (1, None)))
NATIVE_BATCH_NORM.def_vjp(_norm_vjp)
NATIVE_LAYER_NORM.def_vjp(_norm_vjp)


def _acc_dtype(d):
    return np.float32 if d == np.float16 else d


def _layer_stats(d, axes, eps):
    """(mean, 1 / sqrt(biased var + eps)) of array `d` over `axes`, kept as size-1 dims, in
    d's dtype (accumulated in float32 for float16)."""
    acc = _acc_dtype(d.dtype)
    mean = d.mean(axis=axes, keepdims=True, dtype=acc)
    var = ((d - mean) ** 2).mean(axis=axes, keepdims=True, dtype=acc)
    return mean.astype(d.dtype), (1.0 / np.sqrt(var + eps)).astype(d.dtype)


def batch_norm_prim(x, w, b, rm, rv, training, momentum, eps):
    if is_batched(x, w, b, rm, rv):
        return _batch_norm_vmapped(x, w, b, rm, rv, training, momentum, eps)
    d = x._data
    axes = (0,) + tuple(range(2, d.ndim))
    pshape = (1, d.shape[1]) + (1,) * (d.ndim - 2)
    if training:
        acc = _acc_dtype(d.dtype)
        mean = d.mean(axis=axes, keepdims=True, dtype=acc)
        var = ((d - mean) ** 2).mean(axis=axes, keepdims=True, dtype=acc)
        cnt = d.size // d.shape[1]
        if rm is not None:
            write_inplace_nocheck(rm, (1 - momentum) * rm._data + momentum * mean.reshape(-1))
        if rv is not None:
            unbiased = var.reshape(-1) * (cnt / (cnt - 1))
            write_inplace_nocheck(rv, (1 - momentum) * rv._data + momentum * unbiased)
    else:
        mean = rm._data.reshape(pshape)
        var = rv._data.reshape(pshape)
    invstd = (1.0 / np.sqrt(var + eps)).astype(d.dtype)
    mean = mean.astype(d.dtype)
    out = NATIVE_BATCH_NORM.call(x, w, b, params=(axes, eps, mean, invstd, pshape))
    if out._grad_fn is not None:
        ex = out._grad_fn._extras()
        ex["training"] = training
        ex["layer"] = False
        ex["b_shape"] = b._data.shape if b is not None else None
    return out


def layer_norm_prim(x, w, b, k, eps):
    if is_batched(x, w, b):
        n = x.dim()
        if is_batched(x):
            y = NATIVE_LAYER_NORM.call(x, None, None, params=(
                tuple(range(n - k, n)), eps, None, None, tuple(x.shape[n - k:])))
        else:
            y = layer_norm_prim(x, None, None, k, eps)
        return _affine(y, w, b, None)
    d = x._data
    axes = tuple(range(d.ndim - k, d.ndim))
    pshape = d.shape[d.ndim - k:]
    # no statistics in the parameters: the kernel computes them (_layer_stats), so the
    # parameters hold no arrays computed from data and ndgrad.compile replays the op
    out = NATIVE_LAYER_NORM.call(x, w, b, params=(axes, eps, None, None, pshape))
    if out._grad_fn is not None:
        ex = out._grad_fn._extras()
        ex["training"] = True
        ex["layer"] = True
        ex["b_shape"] = b._data.shape if b is not None else None
    return out


# --------------------------------------------------------------------------- under vmap
# The wrappers above call the primitive on a BatchedTensor without statistics (params[2] is
# None); its rule normalizes the values, whose batch dim is 0, and the affine parameters
# (batched or not) apply in ops afterwards, so each sample gets its own.
_BN_RUNNING_STATS_ERROR = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which "
    "will be updated in place, were not batched.\nIf you are using a module and do not need "
    "eval mode, please set `track_running_stats` to be False.If you are using a prebuilt "
    "module and do not need eval mode, please see the functorch website for resources on how "
    "to patch your module to work with vmap")


def _affine(y, w, b, pshape):
    if w is not None:
        y = y * (w if pshape is None else w.reshape(pshape))
    if b is not None:
        y = y + (b if pshape is None else b.reshape(pshape))
    return y


def _batch_norm_vmapped(x, w, b, rm, rv, training, momentum, eps):
    n = x.dim()
    axes = (0,) + tuple(range(2, n))
    pshape = (1, x.shape[1]) + (1,) * (n - 2)
    if not training:
        y = (x - rm.reshape(pshape)) * (rv.reshape(pshape) + eps).rsqrt()
        return _affine(y, w, b, pshape)
    if is_batched(x) and ((rm is not None and not is_batched(rm))
                          or (rv is not None and not is_batched(rv))):
        raise RuntimeError(_BN_RUNNING_STATS_ERROR)
    if rm is not None or rv is not None:
        # torch's in-place update of each sample's running statistics (no history)
        prev = _state.tls.grad_enabled
        _state.tls.grad_enabled = False
        try:
            xd = x.detach()
            mean = xd.mean(axes, keepdim=True)
            if rm is not None:
                rm.mul_(1 - momentum).add_(mean.reshape(rm.shape) * momentum)
            if rv is not None:
                cnt = x.numel() // x.shape[1]
                var = ((xd - mean) ** 2).mean(axes) * (cnt / (cnt - 1))
                rv.mul_(1 - momentum).add_(var * momentum)
        finally:
            _state.tls.grad_enabled = prev
    if is_batched(x):
        y = NATIVE_BATCH_NORM.call(x, None, None, params=(axes, eps, None, None, pshape))
    else:
        y = batch_norm_prim(x, None, None, None, None, True, momentum, eps)
    return _affine(y, w, b, pshape)


@NATIVE_LAYER_NORM.def_vmap
def _(batched, p, x, w, b):
    return layer_norm_prim(x, None, None, len(p[4]), p[1])


@NATIVE_BATCH_NORM.def_vmap
def _(batched, p, x, w, b):
    # Each sample's channels become channels of one batch norm: (B, N, C, *S) -> (N, B*C, *S).
    shape = tuple(x.shape)
    folded = x.movedim(0, 1).reshape((shape[1], shape[0] * shape[2]) + shape[3:])
    y = batch_norm_prim(folded, None, None, None, None, True, 0.0, p[1])
    return y.reshape((shape[1], shape[0], shape[2]) + shape[3:]).movedim(1, 0)


def write_inplace_nocheck(t, values):
    """Running-stat updates: written like torch's in-place buffer update (version bump)."""
    np.copyto(t._data, values, casting="unsafe")
    t._vc[0] += 1


# ============================================================================ group norm
def _group_size(shape, groups):
    """Elements per (sample, group): C / groups channels times the spatial size."""
    return shape[1] // groups * math.prod(shape[2:])


def _group_norm_fwd(x, w, b, p):
    groups, eps = p
    n, c = x.shape[:2]
    acc = np.float64 if x.dtype == np.float64 else np.float32
    xr = x.reshape(n, groups, _group_size(x.shape, groups)).astype(acc)
    mean = xr.mean(-1, keepdims=True)
    xc = xr - mean
    rstd = 1 / np.sqrt((xc * xc).mean(-1, keepdims=True) + eps)
    y = (xc * rstd).reshape(x.shape)
    pshape = (1, c) + (1,) * (x.ndim - 2)
    if w is not None:
        y = y * w.reshape(pshape)
    if b is not None:
        y = y + b.reshape(pshape)
    return y.astype(x.dtype, copy=False)


NATIVE_GROUP_NORM = primitive("native_group_norm", _group_norm_fwd, "NativeGroupNormBackward0",
                              save=((0, None), (1, None)))


@NATIVE_GROUP_NORM.def_vjp
def _(ctx, g):
    # Recomputed in ndgrad ops, so the gradient is itself differentiable (torch's
    # NativeGroupNormBackward0 takes a composite path under create_graph too).
    x, w = ctx.saved
    groups, eps = ctx._params
    n = ctx._next
    shape = tuple(x.shape)
    c = shape[1]
    pshape = (1, c) + (1,) * (len(shape) - 2)
    m = _group_size(shape, groups)
    xr = x.reshape(shape[0], groups, m)
    xc = xr - xr.mean(-1, keepdim=True)
    inv = ((xc * xc).mean(-1, keepdim=True) + eps).rsqrt()
    xhat = xc * inv
    outer = (0,) + tuple(range(2, len(shape)))
    gx = gw = gb = None
    if n[0] is not None:
        gy = (g * w.reshape(pshape) if w is not None else g).reshape(shape[0], groups, m)
        gx = (inv * (gy - gy.mean(-1, keepdim=True)
                     - xhat * (gy * xhat).mean(-1, keepdim=True))).reshape(shape)
    if len(n) > 1 and n[1] is not None:
        gw = (g * xhat.reshape(shape)).sum(outer, keepdim=True).view(c)
    if len(n) > 2 and n[2] is not None:
        gb = g.sum(outer, keepdim=True).view(c)
    return gx, gw, gb


def group_norm_prim(x, w, b, groups, eps):
    return NATIVE_GROUP_NORM.call(x, w, b, params=(groups, eps))


# ============================================================================ weight norm
# ``_weight_norm_interface``: w = v * (g / ||v||), the norm taken over every dim but ``dim``
# (``dim == -1``: over all of v). params = (dim,). The VJP is written in ndgrad ops, so the
# gradient is itself differentiable; forward AD raises, as in torch.
def _norm_axes(ndim, dim):
    return tuple(range(ndim)) if dim == -1 else tuple(i for i in range(ndim) if i != dim)


def _weight_norm_fwd(v, g, p):
    axes = _norm_axes(v.ndim, p[0])
    norm = np.sqrt((v * v).sum(axis=axes, keepdims=True))
    return (v * (g.reshape(norm.shape) / norm)).astype(v.dtype, copy=False)


WEIGHT_NORM = primitive("weight_norm_interface", _weight_norm_fwd, "WeightNormInterfaceBackward0",
                        save=((0, None), (1, None)))


def _weight_norm_parts(v, g, dim):
    """(axes, ||v|| with kept dims, g shaped like the norm)."""
    axes = _norm_axes(v.dim(), dim)
    norm = (v * v).sum(axes, keepdim=True).sqrt()
    return axes, norm, g.reshape(norm.shape)


@WEIGHT_NORM.def_vjp
def _(ctx, gw):
    v, g = ctx.saved
    axes, norm, gn = _weight_norm_parts(v, g, ctx._params[0])
    proj = (gw * v).sum(axes, keepdim=True)
    gv = (gn / norm) * (gw - v * (proj / (norm * norm)))
    return gv, (proj / norm).reshape(g.shape)


# torch declares no forward-mode formula for the fused weight norm
WEIGHT_NORM.def_jvp(no_forward_ad("_weight_norm_interface"))
