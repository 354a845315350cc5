"""Loss primitives of ``nn.functional`` with torch's nodes: nll_loss and its spatial form
nll_loss2d (and through them cross_entropy), the pointwise losses (mse, smooth_l1, huber,
binary_cross_entropy, binary_cross_entropy_with_logits), soft_margin_loss, multi_margin_loss
and multilabel_margin_loss. Losses that are composites of ndgrad ops (l1, kl_div, the embedding
and ranking losses, ...) live in ``nn/functional.py`` itself.

Invariants: reductions ("none", "sum", "mean") happen inside the forward kernel in the input
dtype; nll_loss(2d) keeps only its input's shape and dtype (``x_meta``), not the input, raises
torch's IndexError for a target out of range before anything is recorded. soft_margin_loss has a
differentiable backward primitive; multi_margin_loss and multilabel_margin_loss, like torch,
have none (their backward's node is ``NotImplemented``) and no forward AD.
"""

import numpy as np

from .. import _state
from .._tensor import Tensor
from .activations import SOFTPLUS
from .comparison import where
from .registry import no_forward_ad, primitive, record_input_shape
from .vmap_helpers import to_batched

__all__ = []

_tls = _state.tls
_add_reduce = np.add.reduce


# ============================================================================ nll_loss
_min_reduce = np.minimum.reduce
_ARANGE = {}


def _rows(n):
    """np.arange(n) for row picks, cached read-only (the picks run every training step)."""
    r = _ARANGE.get(n)
    if r is None:
        r = np.arange(n)
        r.flags.writeable = False
        if n <= 65536:
            _ARANGE[n] = r
    return r


def _nll_parts(x, target, weight, ignore_index):
    """Per-sample picked log-probs and weights (None meaning all ones); x is (N, C) or (C,)."""
    if x.ndim == 1:
        xv = x[None]
        tv = np.asarray(target).reshape(1)
    else:
        xv = x
        tv = target
    n, c = xv.shape
    lo = _min_reduce(tv) if tv.size else 0
    if lo >= 0 and (ignore_index < 0 or ignore_index >= c):
        # Fast path: no target can equal ignore_index (one reduction instead of three).
        valid = None
        all_valid = True
        safe_t = tv
    else:
        valid = tv != ignore_index
        all_valid = valid.all()
        safe_t = tv if all_valid else np.where(valid, tv, 0)
        if safe_t.size and safe_t.min() < 0:
            bad = tv[(tv < 0) & (tv != ignore_index)]
            raise IndexError(f"Target {int(bad.reshape(-1)[0])} is out of bounds.")
    try:
        picked = xv[_rows(n), safe_t]
    except IndexError:
        bad = tv[(tv >= c) & (tv != ignore_index)]
        raise IndexError(f"Target {int(bad.reshape(-1)[0])} is out of bounds.") from None
    if weight is None and all_valid:
        return xv, safe_t, picked, None
    w = weight[safe_t] if weight is not None else np.ones(safe_t.shape, x.dtype)
    if not all_valid:
        w = np.where(valid, w, 0)
    return xv, safe_t, picked, w.astype(x.dtype, copy=False)


def _nll_fwd(x, target, weight, p):
    reduction, ignore_index = p
    if weight is None and x.ndim == 2 and reduction != "none":
        # (N, C) without weights or ignorable targets: _nll_parts' fast path, inlined
        n, c = x.shape
        if n and (ignore_index < 0 or ignore_index >= c) and _min_reduce(target) >= 0:
            try:
                picked = x[_rows(n), target]
            except IndexError:
                pass    # the general path raises torch's error
            else:
                dt = x.dtype
                total = _add_reduce(-picked, None, dt)
                if reduction == "sum":
                    return np.asarray(total)
                return np.asarray((total / dt.type(n)).astype(dt, copy=False))
    xv, safe_t, picked, w = _nll_parts(x, target, weight, ignore_index)
    losses = -picked if w is None else -picked * w
    if reduction == "none":
        return losses.reshape(np.shape(target)) if x.ndim > 1 else losses.reshape(())
    dt = x.dtype
    # (add.reduce with dtype is what ndarray.sum(dtype=) runs, minus its Python wrapper)
    total = _add_reduce(losses, None, dt)
    if reduction == "sum":
        return np.asarray(total)
    count = dt.type(len(picked)) if w is None else _add_reduce(w, None, dt)
    with np.errstate(invalid="ignore", divide="ignore"):  # no target counted: nan, as torch
        return np.asarray((total / count).astype(dt, copy=False))


def _nll_bw_fwd(g, x, target, weight, p):
    reduction, ignore_index = p
    xv, safe_t, picked, w = _nll_parts(x, target, weight, ignore_index)
    if w is None:
        w = np.ones(safe_t.shape, x.dtype)
    if reduction == "none":
        coef = -w * g.reshape(w.shape)
    elif reduction == "sum":
        coef = -w * g
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            coef = -w * (g / w.sum(dtype=x.dtype))
    ignored = np.reshape(target, safe_t.shape) == ignore_index
    if ignored.any():
        # an ignored target's row keeps its zero (torch writes none), even when a mean over
        # no target makes the coefficient nan
        coef = np.where(ignored, 0, coef)
    out = np.zeros(xv.shape, x.dtype)
    out[_rows(len(safe_t)), safe_t] = coef
    return out.reshape(x.shape)


def _nll_bw_plain(g, t, x_meta, p):
    """_nll_bw_fwd for (N, C) float32/float64 input, no weight, reduction mean/sum and no target
    equal to ignore_index; None otherwise. The forward already checked the targets' range.
    Same values: with unit weights ``-w * (g / w.sum())`` is ``-(g / N)`` exactly."""
    reduction, ignore_index = p
    shape, dt = x_meta
    if len(shape) != 2 or reduction == "none" or (dt != _F32 and dt != _F64):
        return None
    n, c = shape
    if n == 0 or (0 <= ignore_index < c) or _min_reduce(t) < 0:
        return None
    if reduction == "mean":
        g = g / dt.type(n)
    out = np.zeros(shape, dt)
    out[_rows(n), t] = -g
    return out


_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


NLL_LOSS = primitive("nll_loss", _nll_fwd, "NllLossBackward0", save=((1, None), (2, None)))
NLL_LOSS_BW = primitive("nll_loss_backward", _nll_bw_fwd, "NllLossBackwardBackward0",
                        save=((2, None), (3, None)))


@NLL_LOSS.def_vjp
def _(ctx, g):
    target, weight = ctx.saved
    if not _tls.grad_enabled and not _state.special and weight is None:
        gx = _nll_bw_plain(g._data, target._data, ctx._extras()["x_meta"], ctx._params)
        if gx is not None:
            return Tensor(gx), None, None
    x = _SHAPE_PROXY.get(ctx)
    if not _tls.grad_enabled and not _state.special:
        gx = _nll_bw_fwd(g._data, x._data, target._data,
                         weight._data if weight is not None else None, ctx._params)
        return Tensor(gx), None, None
    return NLL_LOSS_BW.call(g, x, target, weight, params=ctx._params), None, None


def _zero_self_grad(ctx, gg):
    """The gradient the backward node passes to self (nll_loss is linear in it): zeros."""
    return gg.new_zeros(gg.shape) if ctx._next[1] else None


@NLL_LOSS_BW.def_vjp
def _(ctx, gg):
    target, weight = ctx.saved
    gx = _zero_self_grad(ctx, gg)
    if not ctx._next[0]:
        return None, gx, None, None
    # through the wrapper: the new node must carry x_meta too (higher-order derivatives)
    return nll_loss_prim(gg, target, weight, *ctx._params), gx, None, None


class _ShapeProxy:
    """Backward of nll_loss needs x's shape and dtype only: keep a zero-stride stand-in.

    Under create_graph the stand-in takes x's place in the graph (x's edge), so the backward
    node has torch's edge to self and the gradient requires grad as torch's does (with a zero
    derivative in x)."""

    def get(self, ctx):
        shape, dtype = ctx._extras()["x_meta"]
        x = Tensor(np.broadcast_to(np.zeros((), dtype), shape))
        edge = ctx._next[0]
        if edge is not None and _tls.grad_enabled:
            x._grad_fn, x._output_nr = edge
            x._rg = True
        return x


_SHAPE_PROXY = _ShapeProxy()


def _with_x_meta(out, x):
    if out._grad_fn is not None:
        out._grad_fn._extras()["x_meta"] = (x._data.shape, x._data.dtype)
    return out


def nll_loss_prim(x, target, weight, reduction, ignore_index):
    return _with_x_meta(NLL_LOSS.call(x, target, weight, params=(reduction, ignore_index)), x)


@NLL_LOSS.def_vmap
def _(batched, p, x, target, weight):
    """Every sample's loss from one unreduced call on the flattened samples; a sample's mean
    divides by its own total weight of non-ignored targets."""
    if weight is not None and batched[2]:
        return NotImplemented
    x, target = to_batched(batched[:2], (x, target))
    return _batched_nll(x, target, weight, *p)


def _batched_nll(x, target, weight, reduction, ignore_index):
    """Per-sample nll_loss of a batch (B, ..., C) whose classes are the last dim, targets
    (B, ...): one unreduced call on the rows, then each sample's own reduction."""
    size = x.shape[0]
    c = x.shape[-1]
    flat_t = target.reshape(-1)
    losses = nll_loss_prim(x.reshape(-1, c), flat_t, weight, "none", ignore_index)
    losses = losses.reshape(target.shape)
    if reduction == "none":
        return losses
    total = losses.reshape(size, -1).sum(1)
    if reduction == "sum":
        return total
    keep = flat_t != ignore_index
    w = keep.to(x.dtype)
    if weight is not None:
        w = w * weight.index_select(0, where(keep, flat_t, 0))
    return total / w.reshape(size, -1).sum(1)


# ============================================================================ nll_loss2d
# torch's spatial form: input (N, C, H, W), target (N, H, W), its own nodes (NllLoss2DBackward0,
# NllLoss2DBackwardBackward0). The kernels run nll_loss's on the (N*H*W, C) rows.
def _as_rows(x, target):
    return np.moveaxis(x, 1, -1).reshape(-1, x.shape[1]), target.reshape(-1)


def _nll2d_fwd(x, target, weight, p):
    xr, tr = _as_rows(x, target)
    out = _nll_fwd(xr, tr, weight, p)
    return out.reshape(target.shape) if p[0] == "none" else out


def _nll2d_bw_fwd(g, x, target, weight, p):
    n, c, h, w = x.shape
    rows = np.broadcast_to(np.zeros((), x.dtype), (n * h * w, c))  # shape and dtype only
    gr = _nll_bw_fwd(g.reshape(-1) if p[0] == "none" else g, rows, target.reshape(-1),
                     weight, p)
    return np.ascontiguousarray(np.moveaxis(gr.reshape(n, h, w, c), -1, 1))


NLL_LOSS2D = primitive("nll_loss2d", _nll2d_fwd, "NllLoss2DBackward0",
                       save=((1, None), (2, None)))
NLL_LOSS2D_BW = primitive("nll_loss2d_backward", _nll2d_bw_fwd, "NllLoss2DBackwardBackward0",
                          save=((2, None), (3, None)))


@NLL_LOSS2D.def_vjp
def _(ctx, g):
    target, weight = ctx.saved
    x = _SHAPE_PROXY.get(ctx)
    if not _tls.grad_enabled and not _state.special:
        gx = _nll2d_bw_fwd(g._data, x._data, target._data,
                           weight._data if weight is not None else None, ctx._params)
        return Tensor(gx), None, None
    return NLL_LOSS2D_BW.call(g, x, target, weight, params=ctx._params), None, None


@NLL_LOSS2D_BW.def_vjp
def _(ctx, gg):
    target, weight = ctx.saved
    gx = _zero_self_grad(ctx, gg)
    if not ctx._next[0]:
        return None, gx, None, None
    return nll_loss2d_prim(gg, target, weight, *ctx._params), gx, None, None


def nll_loss2d_prim(x, target, weight, reduction, ignore_index):
    """nll_loss2d of checked arguments: x (N, C, H, W), target (N, H, W) int64."""
    return _with_x_meta(NLL_LOSS2D.call(x, target, weight, params=(reduction, ignore_index)), x)


@NLL_LOSS2D.def_vmap
def _(batched, p, x, target, weight):
    if weight is not None and batched[2]:
        return NotImplemented
    x, target = to_batched(batched[:2], (x, target))
    return _batched_nll(x.movedim(2, -1), target, weight, *p)


# ============================================================================ pointwise losses
def _loss_np(kind, x, t, extra, w, pw):
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if kind == "mse":
            d = x - t
            return d * d
        if kind == "smooth_l1":
            d = np.abs(x - t)
            return np.where(d < extra, 0.5 * d * d / extra, d - 0.5 * extra).astype(x.dtype)
        if kind == "huber":
            d = np.abs(x - t)
            return np.where(d < extra, 0.5 * d * d, extra * (d - 0.5 * extra)).astype(x.dtype)
        if kind == "bce":
            lx = np.maximum(np.log(x), -100)
            l1x = np.maximum(np.log1p(-x), -100)
            loss = -(t * lx + (1 - t) * l1x)
        else:  # bce_logits
            sp = np.logaddexp(0, -x)
            lw = 1 if pw is None else 1 + (pw - 1) * t
            loss = (1 - t) * x + lw * sp
        if w is not None:
            loss = loss * w
        return loss.astype(x.dtype)


def _loss_fwd(x, t, w, pw, p):
    kind, reduction, extra = p
    loss = _loss_np(kind, x, t, extra, w, pw)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.asarray(loss.sum(dtype=x.dtype))
    return np.asarray(loss.mean(dtype=x.dtype))


def _loss_derivs(kind, x, t, extra, w, pw, need_t):
    """(d loss / d x, d loss / d t) elementwise, in ndgrad ops."""
    dt = None
    if kind == "mse":
        dx = (x - t) * 2
        dt = -dx if need_t else None
    elif kind in ("smooth_l1", "huber"):
        d = x - t
        small = d.abs() < extra
        if kind == "smooth_l1":
            dx = where(small, d / extra, d.sign())
        else:
            dx = where(small, d, d.sign() * extra)
        dt = -dx if need_t else None
    elif kind == "bce":
        dx = (x - t) / (x * (1 - x)).clamp(min=1e-12)
        if need_t:
            dt = (1 - x).log().clamp(min=-100) - x.log().clamp(min=-100)
    else:
        s = x.sigmoid()
        if pw is None:
            dx = s - t
        else:
            dx = s * (1 + (pw - 1) * t) - pw * t
        if need_t:
            sp = SOFTPLUS.call(-x, (1.0, 20.0))
            dt = -x if pw is None else -x + (pw - 1) * sp
    if w is not None:
        dx = dx * w
        dt = dt * w if dt is not None else None
    return dx, dt


_LOSS_OPS = {}
_LOSS_NAMES = {"mse": "MseLossBackward0", "smooth_l1": "SmoothL1LossBackward0",
               "huber": "HuberLossBackward0", "bce": "BinaryCrossEntropyBackward0",
               "bce_logits": "BinaryCrossEntropyWithLogitsBackward0"}


def _loss_op(kind):
    op = _LOSS_OPS.get(kind)
    if op is not None:
        return op
    op = primitive("loss_" + kind, _loss_fwd, _LOSS_NAMES[kind],
                   save=((0, None), (1, None), (2, None), (3, None)))

    @op.def_vjp
    def _(ctx, g):
        x, t, w, pw = ctx.saved
        _, reduction, extra = ctx._params
        n = ctx._next
        if reduction == "mean":
            numel = 1
            for d in ctx._shape:  # (the recorded shape: ndgrad.compile may make it symbolic)
                numel *= d
            g = g / numel
        dx, dt = _loss_derivs(kind, x, t, extra, w, pw, n[1] is not None)
        gx = g * dx if n[0] is not None else None
        gt = g * dt if n[1] is not None and dt is not None else None
        return gx, gt, None, None

    record_input_shape(op)
    _LOSS_OPS[kind] = op
    return op


def pointwise_loss(kind, x, t, reduction, extra=None, w=None, pw=None):
    return _loss_op(kind).call(x, t, w, pw, params=(kind, reduction, extra))


# ============================================================================ soft margin loss
def _reduce_np(loss, reduction, dtype):
    if reduction == "none":
        return loss
    total = np.add.reduce(loss, axis=None, dtype=dtype)
    if reduction == "sum":
        return np.asarray(total, dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(total / dtype.type(loss.size) if loss.size else np.nan, dtype)


def _soft_margin_fwd(x, t, reduction):
    with np.errstate(over="ignore"):
        loss = np.log1p(np.exp((-x * t).astype(x.dtype, copy=False)))
    return _reduce_np(np.broadcast_to(loss, x.shape), reduction, x.dtype)


def _soft_margin_bw_fwd(g, x, t, reduction):
    norm = 1.0 / x.size if reduction == "mean" and x.size else 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        z = np.exp((-t * x).astype(x.dtype, copy=False))
        out = (t * z).astype(x.dtype, copy=False) * x.dtype.type(-norm) / (z + 1) * g
    return np.broadcast_to(out, x.shape).astype(x.dtype)


SOFT_MARGIN = primitive("soft_margin_loss", _soft_margin_fwd, "SoftMarginLossBackward0",
                        save=((0, None), (1, None)))
SOFT_MARGIN_BW = primitive("soft_margin_loss_backward", _soft_margin_bw_fwd,
                           "SoftMarginLossBackwardBackward0",
                           save=((0, 1), (1, None), (2, None)))


@SOFT_MARGIN.def_vjp
def _(ctx, g):
    x, t = ctx.saved
    return SOFT_MARGIN_BW.call(g, x, t, params=ctx._params), None


@SOFT_MARGIN_BW.def_vjp
def _(ctx, gg):
    g, x, t = ctx.saved
    reduction = ctx._params
    n = ctx._next
    d_g = d_x = None
    if n[0] is not None:
        if reduction == "none":
            d_g = SOFT_MARGIN_BW.call(gg, x, t, params=reduction)
        else:
            one = Tensor(np.ones((), x._data.dtype))
            d_g = (SOFT_MARGIN_BW.call(one, x, t, params=reduction) * gg).sum()
    if n[1] is not None:
        # d/dx of -t e / (1 + e), e = exp(-t x), is t^2 e / (1 + e)^2
        e = (-t * x).exp()
        d_x = gg * g * (t * t) * e / ((e + 1) * (e + 1))
        if reduction == "mean":
            d_x = d_x / max(x.numel(), 1)
    return d_g, d_x, None


SOFT_MARGIN_BW.def_jvp(no_forward_ad("soft_margin_loss_backward"))


def soft_margin_loss_prim(x, t, reduction):
    return SOFT_MARGIN.call(x, t, params=reduction)


# ============================================================================ margin losses
# torch has no double backward for these two: the backward's node is NotImplemented and
# raises when differentiated. Nor forward AD (nor for soft_margin_loss_backward).
def _not_implemented_op(name, fwd):
    op = primitive(name, fwd, "NotImplemented")

    @op.def_vjp
    def _(ctx, g):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return op


def _scale_rows(grad, g, per_row):
    """Multiply a (frames, C) gradient by the output gradient: per frame or one scalar."""
    if per_row:
        return grad * g.reshape(-1, 1)
    return grad * g.reshape(())


def _multi_margin_terms(x, t, margin):
    """Per (frame, class): margin - x[y] + x[d] where positive and d != y (else 0)."""
    rows = np.arange(x.shape[0])
    z = (x.dtype.type(margin) - x[rows, t][:, None]) + x
    active = z > 0
    active[rows, t] = False
    z = np.where(active, z, 0)
    return z, active, rows


def _multi_margin_fwd(x, t, w, p):
    shape, power, reduction = p[3], p[0], p[2]
    x2 = x.reshape(shape)
    t1 = t.reshape(-1)
    z, _, _ = _multi_margin_terms(x2, t1, p[1])
    h = z if power == 1 else z * z
    if w is not None:
        h = h * w.reshape(-1)[t1][:, None]
    loss = h.sum(1, dtype=x.dtype) / x.dtype.type(shape[1])
    if reduction == "none":
        return loss.reshape(-1 if t.ndim else ())
    return _reduce_np(loss, reduction, x.dtype)


def _multi_margin_bw_fwd(g, x, t, w, p):
    shape, power, reduction = p[3], p[0], p[2]
    x2 = x.reshape(shape)
    t1 = t.reshape(-1)
    z, active, rows = _multi_margin_terms(x2, t1, p[1])
    scale = 1.0 / (shape[1] * (shape[0] if reduction == "mean" else 1))
    h = np.where(active, x.dtype.type(scale), 0) if power == 1 else \
        z * x.dtype.type(2 * scale)
    if w is not None:
        h = h * w.reshape(-1)[t1][:, None]
    h = h.astype(x.dtype, copy=False)
    h[rows, t1] = -h.sum(1)
    return _scale_rows(h, g, reduction == "none" and g.ndim == 1).reshape(x.shape)


MULTI_MARGIN = primitive("multi_margin_loss", _multi_margin_fwd, "MultiMarginLossBackward0",
                         save=((0, None), (1, None), (2, None)))
MULTI_MARGIN_BW = _not_implemented_op("multi_margin_loss_backward", _multi_margin_bw_fwd)


@MULTI_MARGIN.def_vjp
def _(ctx, g):
    x, t, w = ctx.saved
    return MULTI_MARGIN_BW.call(g, x, t, w, params=ctx._params), None, None


MULTI_MARGIN.def_jvp(no_forward_ad("multi_margin_loss"))


def multi_margin_loss_prim(x, t, w, power, margin, reduction, shape):
    return MULTI_MARGIN.call(x, t, w, params=(power, margin, reduction, shape))


def _multilabel_terms(x, t):
    """(valid target slots, is_target mask, z) of torch's multilabel margin kernel: a row's
    targets are its entries before the first negative one; z[f, k, d] = 1 - x[t_k] + x[d]
    for valid slot k and non-target class d, where positive (else 0)."""
    valid = np.cumprod(t >= 0, axis=1).astype(bool)
    rows = np.arange(x.shape[0])[:, None]
    tk = np.where(valid, t, 0)
    is_target = np.zeros(x.shape, bool)
    is_target[np.broadcast_to(rows, t.shape)[valid], t[valid]] = True
    z = (1 - x[rows, tk])[:, :, None] + x[:, None, :]
    active = valid[:, :, None] & ~is_target[:, None, :] & (z > 0)
    return np.where(active, z, 0), active, tk, valid


def _multilabel_fwd(x, t, p):
    shape, reduction = p
    x2 = x.reshape(shape)
    z, _, _, _ = _multilabel_terms(x2, t.reshape(shape))
    loss = z.sum((1, 2), dtype=x.dtype) / x.dtype.type(shape[1])
    if reduction == "none":
        return loss.reshape(-1 if x.ndim == 2 else ())
    return _reduce_np(loss, reduction, x.dtype)


def _multilabel_bw_fwd(g, x, t, p):
    shape, reduction = p
    x2 = x.reshape(shape)
    _, active, tk, _ = _multilabel_terms(x2, t.reshape(shape))
    scale = x.dtype.type(1.0 / (shape[1] * (shape[0] if reduction == "mean" else 1)))
    counts = active.astype(x.dtype)
    grad = counts.sum(1) * scale  # + g for every active (slot, d) at class d
    rows = np.broadcast_to(np.arange(shape[0])[:, None], tk.shape)
    np.add.at(grad, (rows, tk), -counts.sum(2) * scale)  # - g at the slot's target class
    return _scale_rows(grad, g, reduction == "none" and g.ndim == 1).reshape(x.shape)


MULTILABEL_MARGIN = primitive("multilabel_margin_loss", _multilabel_fwd,
                              "MultilabelMarginLossBackward0", save=((0, None), (1, None)))
MULTILABEL_MARGIN_BW = _not_implemented_op("multilabel_margin_loss_backward",
                                           _multilabel_bw_fwd)


@MULTILABEL_MARGIN.def_vjp
def _(ctx, g):
    x, t = ctx.saved
    return MULTILABEL_MARGIN_BW.call(g, x, t, params=ctx._params), None


MULTILABEL_MARGIN.def_jvp(no_forward_ad("multilabel_margin_loss_forward"))


def multilabel_margin_loss_prim(x, t, reduction, shape):
    return MULTILABEL_MARGIN.call(x, t, params=(shape, reduction))

