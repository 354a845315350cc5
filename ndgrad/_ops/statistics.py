"""Statistics over samples: aminmax, quantile and nanquantile, cov and corrcoef, and the
counting ops histc, histogram, bincount, bucketize and searchsorted.

quantile, nanquantile, cov and corrcoef are composites of differentiable ops (sort, lerp,
matmul, ...) as in torch, so their gradients and grad_fn names come from those primitives.
aminmax is a primitive (``AminmaxBackward0``) whose gradient is split evenly among tied
extremes, like amin/amax. The counting ops return integer or histogram tensors that do not
require grad (torch defines no derivative for them).

Invariant: every argument check runs before any computation, so a rejected call has no effect.
"""

import math

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .arguments import return_type, wrap_dim
from .registry import as_tensor_arg, primitive, wrap, sizes_decide
from .complex_ops import complex as _complex
from .methods import bind

__all__ = ["aminmax", "bincount", "bucketize", "corrcoef", "cov", "histc", "histogram",
           "histogramdd",
           "nanquantile", "quantile", "searchsorted"]

return_types_aminmax = return_type("aminmax", ("min", "max"))
return_types_histogram = return_type("histogram", ("hist", "bin_edges"))
return_types_histogramdd = return_type("histogramdd", ("hist", "bin_edges"))


# ============================================================================ aminmax
def _aminmax_fwd(x, p):
    dim, keepdim = p
    if dim is None:
        axis = None
        mn, mx = x.min(), x.max()
        if keepdim:
            mn = np.reshape(mn, (1,) * x.ndim)
            mx = np.reshape(mx, (1,) * x.ndim)
    else:
        axis = dim if x.ndim else None
        mn = x.min(axis=axis, keepdims=keepdim)
        mx = x.max(axis=axis, keepdims=keepdim)
    return np.asarray(mn), np.asarray(mx)


AMINMAX = primitive("aminmax", _aminmax_fwd, "AminmaxBackward0", save=((0, None), ("out0", None),
                                                                        ("out1", None)), n_out=2)


def _even_share(x, ext, g, dim, keepdim):
    """`g` spread evenly over the elements of `x` equal to their (reduced) extreme `ext`."""
    if dim is None:
        ext_b, g_b = ext.reshape(()), g.reshape(())
        mask = (x == ext_b)
        count = mask.sum()
    else:
        if not keepdim and x.dim():
            ext, g = ext.unsqueeze(dim), g.unsqueeze(dim)
        ext_b, g_b = ext, g
        mask = (x == ext_b)
        count = mask.sum(dim, keepdim=True) if x.dim() else mask.sum()
    return mask.to(g.dtype) * (g_b / count)


@AMINMAX.def_vjp
def _(ctx, grads):
    x, mn, mx = ctx.saved
    dim, keepdim = ctx._params
    # trailing outputs without a gradient may be left off the tuple
    g_mn, g_mx = (tuple(grads) + (None, None))[:2]
    r = None
    if g_mn is not None:
        r = _even_share(x, mn, g_mn, dim, keepdim)
    if g_mx is not None:
        s = _even_share(x, mx, g_mx, dim, keepdim)
        r = s if r is None else r + s
    return (r,)


@AMINMAX.def_jvp
def _(ctx, t):
    x = ctx.inputs[0]
    mn, mx = ctx.outputs
    dim, keepdim = ctx.params

    def pick(ext):
        share = _even_share(x, ext, ext.new_ones(ext.shape), dim, keepdim)
        prod = share * t
        if dim is None:
            s = prod.sum()
            return s.reshape((1,) * x.dim()) if keepdim else s
        return prod.sum(dim, keepdim=keepdim) if x.dim() else prod
    return pick(mn), pick(mx)


def aminmax(input, *, dim=None, keepdim=False):
    x = as_tensor_arg(input)
    if dim is not None:
        dim = wrap_dim(dim, x.dim())
    if x.numel() == 0:
        if dim is None:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        if x.shape[dim] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
    if x.is_complex():
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for "
                                  f"'{x.dtype._legacy[:-6]}'")
    mn, mx = AMINMAX.call(x, params=(dim, bool(keepdim)))
    return return_types_aminmax(mn, mx)


# ============================================================================ quantile
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    x = as_tensor_arg(input)
    if x.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    elif q.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if x.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.dtype != x.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qd = q._data
        if qd.size and not ((qd >= 0) & (qd <= 1)).all():
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if dim is not None:
        dim = wrap_dim(dim, x.dim())

    # Rows to take the quantiles of, along the last dim.
    rows = x.reshape(-1) if dim is None else (x.unsqueeze(0) if x.dim() == 0 else x)
    if dim is not None and x.dim():
        rows = rows.movedim(dim, -1)
    srt = rows.sort(dim=-1).values
    sizes_decide()  # indices from q * (n - 1), rounded
    n = srt.shape[-1]
    q_arr = np.asarray(q._data if isinstance(q, Tensor) else q, dtype=x._data.dtype)
    nan_rows = np.isnan(srt._data).any(axis=-1, keepdims=True)
    if ignore_nan:
        count = (~np.isnan(srt._data)).sum(axis=-1, keepdims=True)
        ranks = q_arr.reshape(-1) * (count - 1)
        ranks = np.where(count == 0, 0, ranks)  # all-NaN rows: the first (NaN) value
    else:
        ranks = np.broadcast_to(q_arr.reshape(-1) * (n - 1), srt.shape[:-1] + (q_arr.size,))
        ranks = np.where(nan_rows, n - 1, ranks)
    ranks = ranks.astype(x._data.dtype)
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)
    lo = np.floor(ranks).astype(np.int64)
    hi = np.ceil(ranks).astype(np.int64)
    below = srt.gather(-1, wrap(lo))
    if interpolation in ("lower", "higher", "nearest"):
        out = below
    else:
        above = srt.gather(-1, wrap(hi))
        w = np.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - lo
        out = below.lerp(above, wrap(w.astype(x._data.dtype)))
    # out: rows' leading shape + (nq,); move the q dim to the front.
    out = out.movedim(-1, 0)
    if dim is None:
        out = out.reshape((-1,) + (1,) * x.dim() if keepdim else (-1,))
    else:
        if x.dim() == 0:
            out = out.reshape(-1)
        elif keepdim:
            out = out.unsqueeze(dim + 1)
    if not isinstance(q, Tensor) or q.dim() == 0:
        out = out.squeeze(0)
    return out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# ============================================================================ cov, corrcoef
def cov(input, *, correction=1, fweights=None, aweights=None):
    x = as_tensor_arg(input)
    if x.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                         f"input with {x.dim()} dimensions")
    obs = x.reshape(1, -1) if x.dim() < 2 else x
    n_obs = obs.shape[1]
    w = None
    if fweights is not None:
        if fweights.dim() > 1:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions but "
                             f"got fweights with {fweights.dim()} dimensions")
        if fweights.is_floating_point() or fweights.is_complex():
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                             f"fweights with {fweights.dtype._legacy[:-6]} dtype")
        if fweights.numel() != n_obs:
            raise RuntimeError(f"cov(): expected fweights to have the same numel as there are "
                             f"observations in the input but got {fweights.numel()} != "
                             f"{n_obs}")
        if (fweights._data < 0).any():
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights.dim() > 1:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions but "
                             f"got aweights with {aweights.dim()} dimensions")
        if not aweights.is_floating_point():
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                             f"aweights with {aweights.dtype._legacy[:-6]} dtype")
        if aweights.numel() != n_obs:
            raise RuntimeError(f"cov(): expected aweights to have the same numel as there are "
                             f"observations in the input but got {aweights.numel()} != "
                             f"{n_obs}")
        if (aweights._data < 0).any():
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    if w is None:
        avg = obs.mean(1)
        w_sum = n_obs
        norm = n_obs - correction
    else:
        w_sum = w.sum()
        avg = (obs * w).sum(1) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    norm_val = norm.item() if isinstance(norm, Tensor) else norm
    if norm_val <= 0:
        norm = 0
    centred = obs - avg.unsqueeze(1)
    weighted = centred if w is None else centred * w
    c = centred.mm(weighted.t().conj())
    return (c / norm).squeeze()


def corrcoef(input):
    x = as_tensor_arg(input)
    if x.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                         f"an input with {x.dim()} dimensions")
    c = cov(x)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    std = (d.real if d.is_complex() else d).sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    if c.is_complex():
        return _complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# ============================================================================ counting
def _float_input(name, x):
    if not (x.is_floating_point()):
        raise NotImplementedError(f"\"{name}\" not implemented for '{x.dtype._legacy[:-6]}'")


def histc(input, bins=100, min=0, max=0, *, out=None):
    x = as_tensor_arg(input)
    _float_input("histogram_cpu", x)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    data = x._data.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and data.size:
        lo, hi = float(data.min()), float(data.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    dt = data.dtype
    keep = data[(data >= lo) & (data <= hi)]
    pos = ((keep - dt.type(lo)) * dt.type(bins) / (dt.type(hi) - dt.type(lo))).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    hist = np.bincount(pos, minlength=bins).astype(dt)
    return wrap(hist)


def _fmt(v):
    if math.isinf(v) or math.isnan(v):
        return str(v)
    return f"{v:g}"


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    x = as_tensor_arg(input)
    _float_input("histogram_cpu", x)
    data = x._data.reshape(-1)
    dt = data.dtype
    if isinstance(bins, Tensor):
        if bins.dim() != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {bins.dim()} dimensions in the bins tensor for dimension 0")
        edges = bins._data.astype(dt)
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {bins} for "
                               "dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif data.size:
            lo, hi = float(data.min()), float(data.max())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{_fmt(lo)} max {_fmt(hi)} for dimension 0")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, bins + 1).astype(dt)
    return return_types_histogram(*HISTOGRAM.call(x, params=(edges, weight, density)))


def _histogram_fwd(data, p):
    edges, weight, density = p
    dt = data.dtype
    w = None if weight is None else weight._data.reshape(-1)
    hist, _ = np.histogram(data.reshape(-1), bins=edges, weights=w)
    hist = hist.astype(dt)
    if density:
        hist = (hist / (hist.sum() * np.diff(edges))).astype(dt)
    return hist, edges.copy()


# torch records a node whose backward raises (no derivative is defined for histogram).
HISTOGRAM = primitive("histogram", _histogram_fwd, "NotImplemented", n_out=2)


@HISTOGRAM.def_vjp
def _(ctx, g):
    raise RuntimeError("derivative for aten::histogram is not implemented")


class _HistogramddOp:
    """A primitive per number of dims D (its output count is D + 1), declared on first use."""

    def __init__(self):
        self._ops = {}

    def call(self, x, params):
        n = len(params[0])
        op = self._ops.get(n)
        if op is None:
            op = primitive(f"histogramdd_{n}", _histogramdd_fwd, "NotImplemented", n_out=n + 1)
            op.def_vjp(_histogramdd_vjp)
            self._ops[n] = op
        return op.call(x, params=params)


def _histogramdd_vjp(ctx, g):
    raise RuntimeError("derivative for aten::_histogramdd_from_bin_cts is not implemented")


HISTOGRAMDD = _HistogramddOp()


def _histogramdd_fwd(data, p):
    edges, weight, density = p
    dt = data.dtype
    pts = data.reshape(-1, data.shape[-1])
    w = None if weight is None else weight._data.reshape(-1)
    hist, _ = np.histogramdd(pts, bins=list(edges), weights=w)
    hist = hist.astype(dt)
    if density:
        vol = np.ones(hist.shape)
        for k, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[k] = -1
            vol = vol * np.diff(e).reshape(shape)
        hist = (hist / (hist.sum() * vol)).astype(dt)
    return (hist,) + tuple(e.copy() for e in edges)


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """The D-dimensional histogram of the points in `input` (..., D): bins per dim as counts
    (int or list) or edge tensors; `range` a flat [lo0, hi0, lo1, hi1, ...]."""
    x = as_tensor_arg(input)
    _float_input("histogramdd", x)
    if x.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    D = x.shape[-1]
    data = x._data.reshape(-1, D)
    dt = data.dtype
    if isinstance(bins, int):
        bins = [bins] * D
    bins = list(bins)
    if len(bins) != D:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if range is not None and len(range) != 2 * D:
        raise RuntimeError(f"torch.histogramdd: for a {D}-dimensional histogram range should "
                           f"have {2 * D} elements, but got {len(range)}")
    edges = []
    for k, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b.dim() != 1:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, "
                                   f"but got {b.dim()} dimensions in the bins tensor for "
                                   f"dimension {k}")
            edges.append(b._data.astype(dt))
            continue
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for "
                               f"dimension {k}")
        if range is not None:
            lo, hi = float(range[2 * k]), float(range[2 * k + 1])
        elif data.shape[0]:
            lo, hi = float(data[:, k].min()), float(data[:, k].max())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{_fmt(lo)} max {_fmt(hi)} for dimension {k}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges.append(np.linspace(lo, hi, b + 1).astype(dt))
    outs = HISTOGRAMDD.call(x, params=(tuple(edges), weight, density))
    return return_types_histogramdd(outs[0], tuple(outs[1:]))


def bincount(input, weights=None, minlength=0):
    x = as_tensor_arg(input)
    if x.dim() != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if x.is_floating_point() or x.is_complex() or x.dtype == _dtype.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{x.dtype._legacy[:-6]}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    data = x._data
    if data.size and data.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None:
        if weights.dim() != 1 or weights.shape[0] != data.shape[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input")
        wd = weights._data
        res_dt = np.float32 if wd.dtype == np.float32 else np.float64
        return wrap(np.bincount(data, weights=wd.astype(np.float64),
                                minlength=minlength).astype(res_dt))
    return wrap(np.bincount(data, minlength=minlength).astype(np.int64))


def _search(seq, vals, right):
    return np.searchsorted(seq, vals, side="right" if right else "left")


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    seq = as_tensor_arg(sorted_sequence, "sorted_sequence")
    scalar = not isinstance(input, Tensor)
    vals = as_tensor_arg(input) if not scalar else None
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    if seq.dim() == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if scalar and seq.dim() != 1:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when "
                           f"boundaries tensor dimension is 1, but we got boundaries tensor "
                           f"dim({seq.dim()}) and input value's dim(0) numel(1)")
    if not scalar and seq.dim() != 1 and seq.shape[:-1] != vals.shape[:-1]:
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor "
                           f"{list(seq.shape)} and input value tensor {list(vals.shape)}")
    sd = seq._data
    if sorter is not None:
        if sorter.shape != seq.shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(seq.shape)}and got sorter "
                               f"tensor {list(sorter.shape)}")
        sd = np.take_along_axis(sd, sorter._data, axis=-1)
    vd = np.asarray(input) if scalar else vals._data
    if seq.dim() == 1:
        res = _search(sd, vd, right)
    else:
        lead = sd.shape[:-1]
        sd2 = sd.reshape(-1, sd.shape[-1])
        vd2 = vd.reshape(-1, vd.shape[-1])
        res = np.stack([_search(s, v, right) for s, v in zip(sd2, vd2)]).reshape(
            lead + (vd.shape[-1],)) if sd2.shape[0] else np.zeros(vd.shape, np.int64)
    return wrap(np.asarray(res, dtype=np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    b = as_tensor_arg(boundaries, "boundaries")
    if b.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.dim()})")
    return searchsorted(b, input, out_int32=out_int32, right=right)


def _bind():
    bind({"aminmax": aminmax, "quantile": quantile, "nanquantile": nanquantile, "cov": cov,
          "corrcoef": corrcoef, "histc": histc, "histogram": histogram, "bincount": bincount})


_bind()
