"""p-norm distances and norm limits: cdist (between two sets of row vectors), pdist (between
the rows of one set), dist (of two tensors) and renorm (caps each slice's norm).

cdist, pdist and dist are primitives (``CdistBackward0``, ``PdistBackward0``,
``DistBackward0``) sharing one derivative: for a difference ``v`` with norm ``d``, the gradient
of ``d`` is ``sign(v) |v|^(p-1) / d^(p-1)`` (``v / d`` for p = 2, ``sign(v)`` for p = 1, the
elements reaching the max for p = inf, zero for p = 0), and zero where ``d`` is zero, as in
torch. The VJPs and JVPs are written in ndgrad ops, so they are differentiable in turn.
renorm is a primitive too (``RenormBackward0``): each slice along `dim` whose norm exceeds
`maxnorm` is scaled by ``maxnorm / (norm + 1e-7)``, as torch.
"""

import math

import numpy as np

from .broadcast import sum_to
from .registry import as_tensor_arg, primitive, wrap
from .registry import _broadcast_error
from .arguments import wrap_dim
from .inplace import apply_inplace
from .methods import bind
from .pointwise import _conj

__all__ = ["cdist", "dist", "pdist", "renorm"]


# ============================================================================ shared kernels
def _np_norm(v, p, axis):
    a = np.abs(v)
    if p == 0:  # norms are real: a (|v|) has v's real dtype
        return (a != 0).sum(axis=axis).astype(a.dtype)
    if p == math.inf:
        return a.max(axis=axis, initial=0).astype(a.dtype)
    if p == 1:
        return a.sum(axis=axis)
    if p == 2:
        return np.sqrt((a * a).sum(axis=axis))
    return ((a ** p).sum(axis=axis) ** (1.0 / p)).astype(a.dtype)


def _norm_grad(v, d, p):
    """d(norm)/dv for differences `v` and their norms `d` (broadcast over v's last dim for the
    pair ops, over all of v for dist), as ndgrad ops."""
    zero = v.new_zeros(())
    if p == 0:
        return v * 0
    if p == 1:
        return v.sgn()
    nz = d != 0
    safe = d.where(nz, d.new_ones(()))
    if p == 2:
        return (v / safe).where(nz, zero)
    if p == math.inf:
        hit = (v.abs() == d) & nz
        return v.sgn().where(hit, zero)
    r = v.sgn() * v.abs().pow(p - 1) / safe.pow(p - 1)
    return r.where(nz, zero)


def _check_p(name, p):
    if p < 0:
        raise RuntimeError(f"{name} only supports non-negative p values")


# ============================================================================ cdist
def _cdist_fwd(x1, x2, p):
    v = x1[..., :, None, :] - x2[..., None, :, :]
    return _np_norm(v, p, -1)


CDIST = primitive("cdist", _cdist_fwd, "CdistBackward0", save=((0, None), (1, None),
                                                                ("out", None)))


def _pair_diff(x1, x2):
    return x1.unsqueeze(-2) - x2.unsqueeze(-3)


@CDIST.def_vjp
def _(ctx, g):
    x1, x2, d = ctx.saved
    p = ctx._params
    gv = _norm_grad(_pair_diff(x1, x2), d.unsqueeze(-1), p) * g.unsqueeze(-1)
    n = ctx._next
    g1 = sum_to(gv.sum(-2), x1.shape) if n[0] is not None else None
    g2 = sum_to(-gv.sum(-3), x2.shape) if n[1] is not None else None
    return g1, g2


@CDIST.def_jvp
def _(ctx, t1, t2):
    x1, x2 = ctx.inputs
    (d,) = ctx.outputs
    p = ctx.params
    dt1 = t1 if t1 is not None else x1.new_zeros(x1.shape)
    dt2 = t2 if t2 is not None else x2.new_zeros(x2.shape)
    gv = _norm_grad(_pair_diff(x1, x2), d.unsqueeze(-1), p)
    return (gv * _pair_diff(dt1, dt2)).sum(-1)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    x1 = as_tensor_arg(x1, "x1")
    x2 = as_tensor_arg(x2, "x2")
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if not x1.is_floating_point():
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{x1.dtype._legacy[:-6]}")
    if not x2.is_floating_point():
        raise RuntimeError(f"cdist only supports floating-point dtypes, X2 got: "
                           f"{x2.dtype._legacy[:-6]}")
    _check_p("cdist", p)
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist", None):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return CDIST.call(x1, x2, params=float(p))


# ============================================================================ pdist
def _pdist_pairs(n):
    return np.triu_indices(n, 1)


def _pdist_fwd(x, p):
    i, j = _pdist_pairs(x.shape[0])
    return _np_norm(x[i] - x[j], p, -1)


PDIST = primitive("pdist", _pdist_fwd, "PdistBackward0", save=((0, None), ("out", None)))


def _pdist_diff(x):
    i, j = _pdist_pairs(x.shape[0])
    ii, jj = wrap(i.astype(np.int64)), wrap(j.astype(np.int64))
    return x.index_select(0, ii) - x.index_select(0, jj), ii, jj


@PDIST.def_vjp
def _(ctx, g):
    x, d = ctx.saved
    p = ctx._params
    v, ii, jj = _pdist_diff(x)
    gv = _norm_grad(v, d.unsqueeze(-1), p) * g.unsqueeze(-1)
    return (x.new_zeros(x.shape).index_add(0, ii, gv).index_add(0, jj, -gv),)


@PDIST.def_jvp
def _(ctx, t):
    (x,) = ctx.inputs
    (d,) = ctx.outputs
    v, _, _ = _pdist_diff(x)
    tv, _, _ = _pdist_diff(t)
    return (_norm_grad(v, d.unsqueeze(-1), ctx.params) * tv).sum(-1)


def pdist(input, p=2):
    x = as_tensor_arg(input)
    if x.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.dim()}D")
    if not x.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    _check_p("pdist", p)
    return PDIST.call(x, params=float(p))


# ============================================================================ dist
def _dist_fwd(a, b, p):
    v = np.asarray(a - b).reshape(-1)
    # The norm of complex differences is real (torch: dist of complex128 is float64).
    return np.asarray(_np_norm(v, p, None), dtype=np.abs(np.zeros(0, np.result_type(a, b))).dtype)


DIST = primitive("dist", _dist_fwd, "DistBackward0", save=((0, None), (1, None), ("out", None)))


@DIST.def_vjp
def _(ctx, g):
    a, b, d = ctx.saved
    gv = _norm_grad(a - b, d, ctx._params) * g
    n = ctx._next
    return (sum_to(gv, a.shape) if n[0] is not None else None,
            sum_to(-gv, b.shape) if n[1] is not None else None)


@DIST.def_jvp
def _(ctx, ta, tb):
    a, b = ctx.inputs
    (d,) = ctx.outputs
    tv = ta if tb is None else (-tb if ta is None else ta - tb)
    slope = _norm_grad(a - b, d, ctx.params)
    if slope.is_complex():  # a real function of z: its tangent is Re(conj(dN/dz) dz)
        return (slope.conj() * tv).real.sum()
    return (slope * tv).sum()


def dist(input, other, p=2):
    a = as_tensor_arg(input)
    b = as_tensor_arg(other, "other")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected both inputs to have same dtype, but found "
                           f"{a.dtype._legacy[:-6]} and {b.dtype._legacy[:-6]}")
    if not (a.is_floating_point() or a.is_complex()):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {a.dtype._legacy[:-6]}")
    if not _broadcastable(a, b):
        _raise_broadcast(a, b)
    return DIST.call(a, b, params=float(p))


def _broadcastable(a, b):
    try:
        np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        return True
    except ValueError:
        return False


def _raise_broadcast(a, b):
    raise _broadcast_error(a._data, b._data)


# ============================================================================ renorm
def _renorm_params(x, p, dim, maxnorm):
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if x.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.dim()} "
                           "dimensions")
    return (float(p), wrap_dim(dim, x.dim()), float(maxnorm))


def renorm(input, p, dim, maxnorm):
    x = as_tensor_arg(input)
    return RENORM.call(x, params=_renorm_params(x, p, dim, maxnorm))


def _renorm_(self, p, dim, maxnorm):
    return apply_inplace(RENORM, self, params=_renorm_params(self, p, dim, maxnorm))


_RENORM_EPS = 1e-7  # torch's: the scale is maxnorm / (norm + 1e-7)


def _renorm_fwd(x, params):
    p, dim, maxnorm = params
    norms = _slice_norms(x, p, dim)
    scale = np.where(norms > maxnorm, maxnorm / (norms + _RENORM_EPS), 1.0).astype(x.dtype)
    return x * scale


def _slice_norms(x, p, dim):
    """The p-norm of each slice ``x.select(dim, i)``, shaped to broadcast against x."""
    flat = np.moveaxis(x, dim, 0).reshape(x.shape[dim], -1)
    shape = [1] * x.ndim
    shape[dim] = -1
    return _np_norm(flat, p, -1).reshape(shape)


RENORM = primitive("renorm", _renorm_fwd, "RenormBackward0", save=((0, None),))


def _renorm_parts(x, params):
    """(scale, d scale / d norm, d norm / d x) of each slice, as ndgrad tensors."""
    p, dim, maxnorm = params
    others = tuple(k for k in range(x.dim()) if k != dim)
    norms = x.norm(p, dim=others, keepdim=True)
    over = norms > maxnorm
    one = norms.new_ones(())
    scale = (maxnorm / (norms + _RENORM_EPS)).where(over, one)
    dscale = (-maxnorm / (norms + _RENORM_EPS) ** 2).where(over, norms.new_zeros(()))
    return scale, dscale, _norm_grad(x, norms, p), others


@RENORM.def_vjp
def _(ctx, g):
    (x,) = ctx.saved
    scale, dscale, dnorm, others = _renorm_parts(x, ctx._params)
    # d norm = Re <grad norm, dx>: the norm's sensitivity is Re(conj(x) g), summed per slice.
    gx = (_conj(x) * g).real if x.is_complex() else g * x
    return (g * scale + dnorm * (dscale * gx.sum(others, keepdim=True)),)


@RENORM.def_jvp
def _(ctx, t):
    (x,) = ctx.inputs
    scale, dscale, dnorm, others = _renorm_parts(x, ctx.params)
    dt = (_conj(dnorm) * t).real if x.is_complex() else dnorm * t
    return t * scale + x * (dscale * dt.sum(others, keepdim=True))


def _bind():
    bind({"dist": dist, "renorm": renorm, "renorm_": _renorm_})


_bind()
