"""Fused primitives of ``ndgrad.nn.functional`` whose composite form would be too slow or
unstable: activations with torch's node names, softmax / log_softmax, nll_loss, convolution
(im2col + one matmul), max / average pooling, embedding, batch / layer norm; plus the
in-place random fills of ``Tensor`` (``uniform_``, ``normal_``, ``bernoulli_``, ...).

Each backward rule is written in ndgrad ops or as another primitive with its own rule, so
double backward works. Forward kernels are vectorised over the batch (no Python loop over
samples); pooling and col2im loop only over kernel offsets.
"""

import math

import numpy as np

from .. import _random, _state
from .._tensor import Tensor
from . import elementwise as E
from .inplace import check_inplace
from .registry import binary, no_forward_ad, primitive, unary

__all__ = []

_tls = _state.tls


# ============================================================================ helpers
def write_inplace(t, values):
    """Write `values` (an array) into tensor `t` as an in-place op without history."""
    check_inplace(t)
    np.copyto(t._data, values, casting="unsafe")
    t._vc[0] += 1
    return t


def _erf_np(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def erfinv_np(y):
    """Inverse error function in float64 (Giles' approximation + two Newton steps)."""
    y = np.asarray(y, np.float64)
    w = -np.log((1.0 - y) * (1.0 + y))
    small = w < 5.0
    ws = w - 2.5
    p1 = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p1 = c + p1 * ws
    wl = np.sqrt(np.maximum(w, 5.0)) - 3.0
    p2 = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        p2 = c + p2 * wl
    x = np.where(small, p1, p2) * y
    two_over_sqrt_pi = 2.0 / math.sqrt(math.pi)
    for _ in range(2):
        err = _erf_np(x) - y
        x = x - err / (two_over_sqrt_pi * np.exp(-x * x))
    x = np.where(np.abs(y) == 1.0, np.copysign(np.inf, y), x)
    return x


# ============================================================================ random fills
def _gen(generator):
    return generator if generator is not None else _random.default_generator


def _random_fill_op(node_name):
    """An in-place random fill recorded like torch's (the old value gets a zero gradient)."""
    op = primitive("random_fill_" + node_name, lambda x, vals: vals, node_name)
    op.def_vjp(lambda ctx, g: (g * 0,))
    return op


_FILL_OPS = {name: _random_fill_op(name) for name in (
    "UniformBackward0", "NormalBackward0", "BernoulliBackward1", "BernoulliBackward2",
    "ExponentialBackward0", "RandomBackward0", "RandomBackward1", "RandomBackward2")}


def _fill_random(t, vals, node_name):
    if _tls.grad_enabled and (t._rg or (t._base is not None and t.requires_grad)):
        from .inplace import apply_inplace
        return apply_inplace(_FILL_OPS[node_name], t, params=vals.astype(t._data.dtype))
    return write_inplace(t, vals)


def _uniform_(self, from_=0.0, to=1.0, *, generator=None):
    vals = _gen(generator).uniform(self._data.shape, self._data.dtype, from_, to)
    return _fill_random(self, vals, "UniformBackward0")


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    vals = _gen(generator).normal(self._data.shape, self._data.dtype, mean, std)
    return _fill_random(self, vals, "NormalBackward0")


def _bernoulli_(self, p=0.5, *, generator=None):
    pp = p._data if isinstance(p, Tensor) else p
    vals = _gen(generator).bernoulli(pp, self._data.shape, self._data.dtype)
    return _fill_random(self, vals, "BernoulliBackward1" if isinstance(p, Tensor)
                        else "BernoulliBackward2")


def _exponential_(self, lambd=1.0, *, generator=None):
    vals = _gen(generator).exponential(self._data.shape, self._data.dtype, lambd)
    return _fill_random(self, vals, "ExponentialBackward0")


def _random_(self, from_=0, to=None, *, generator=None):
    # torch's overloads: random_(from, to), random_(to), random_()
    node = "RandomBackward0" if to is not None else (
        "RandomBackward2" if from_ == 0 else "RandomBackward1")
    if to is None:
        if from_ == 0 and to is None:
            d = self._data.dtype
            if d.kind == "f":
                to = 2 ** {2: 11, 4: 24, 8: 53}[d.itemsize] + 1
            elif d.kind == "b":
                to = 2
            else:
                to = int(np.iinfo(d).max) + 1
        else:
            from_, to = 0, from_
    vals = _gen(generator).randint(from_, to, self._data.shape, np.int64)
    return _fill_random(self, vals.astype(self._data.dtype), node)


def _erfinv_(self):
    return write_inplace(self, erfinv_np(self._data).astype(self._data.dtype))


# ============================================================================ activations
def _activation(name, node_name, f, df, d2f=None):
    """An elementwise activation ``y = f(x, p)`` with a differentiable fused backward.

    ``ACT_BW(g, x) = g * df(x)`` is itself a primitive whose rule uses ``d2f`` (zero when
    None, for piecewise-linear functions), so double backward is exact.
    """
    op = unary(name, f, node_name, save=((0, None),), float_only=True, params=True)
    bw = binary(name + "_backward", lambda g, x, p: g * df(x, p),
                node_name.replace("Backward0", "BackwardBackward0"), save=((0, 1), (1, None)),
                params=True)
    d2 = unary(name + "_d2", (lambda x, p: d2f(x, p)) if d2f is not None else
               (lambda x, p: np.zeros_like(x)), params=True)

    @op.def_vjp
    def _(ctx, g):
        (x,) = ctx.saved
        return (bw.call(g, x, ctx._params),)

    @bw.def_vjp
    def _(ctx, gg):
        g, x = ctx.saved
        n = ctx._next
        p = ctx._params
        ggrad = bw.call(gg, x, p) if n[0] else None
        gx = None
        if n[1] and d2f is not None:
            gx = gg * g * d2.call(x, p)
        return ggrad, gx

    return op


_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _erf(x):
    """erf for activation kernels: float64 to full precision (the op catalogue's kernel when
    present), float32/16 by a rational approximation with relative error < 1.2e-7."""
    if x.dtype == np.float64:
        try:
            from .pointwise import _erf64
        except ImportError:  # pragma: no cover - older catalogue
            return _erf_np(x)
        return _erf64(x)
    return _erf_approx(x.astype(np.float64)).astype(x.dtype)


def _erf_approx(x):
    # Abramowitz-Stegun 7.1.26 is too coarse; use erfc continued via exp and a high-order
    # polynomial (Numerical Recipes erfc, fractional error < 1.2e-7).
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (
        0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (
            1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    r = 1.0 - t * np.exp(poly)
    return np.where(x >= 0, r, -r)


def _gelu_f(x, approx):
    if approx == "tanh":
        inner = x.dtype.type(_SQRT_2_PI) * (x + x.dtype.type(0.044715) * x * x * x)
        return x.dtype.type(0.5) * x * (1 + np.tanh(inner))
    return x * x.dtype.type(0.5) * (1 + _erf(x * x.dtype.type(_INV_SQRT_2)))


def _gelu_df(x, approx):
    if approx == "tanh":
        k = _SQRT_2_PI
        inner = k * (x + 0.044715 * x ** 3)
        th = np.tanh(inner)
        dinner = k * (1 + 3 * 0.044715 * x * x)
        return (0.5 * (1 + th) + 0.5 * x * (1 - th * th) * dinner).astype(x.dtype)
    cdf = 0.5 * (1 + _erf(x * x.dtype.type(_INV_SQRT_2)))
    pdf = np.exp(-0.5 * x * x) * x.dtype.type(_INV_SQRT_2PI)
    return (cdf + x * pdf).astype(x.dtype)


def _gelu_d2(x, approx):
    if approx == "tanh":
        k = _SQRT_2_PI
        c = 0.044715
        inner = k * (x + c * x ** 3)
        th = np.tanh(inner)
        sech2 = 1 - th * th
        dinner = k * (1 + 3 * c * x * x)
        d2inner = k * 6 * c * x
        return (sech2 * dinner + 0.5 * x * (-2 * th * sech2 * dinner * dinner
                                            + sech2 * d2inner)).astype(x.dtype)
    pdf = np.exp(-0.5 * x * x) * _INV_SQRT_2PI
    return (pdf * (2 - x * x)).astype(x.dtype)


GELU = _activation("gelu", "GeluBackward0", _gelu_f, _gelu_df, _gelu_d2)


def _elu_f(x, p):
    alpha, scale, input_scale = p
    with np.errstate(over="ignore"):
        neg = alpha * np.expm1(np.minimum(x, 0) * input_scale)
    return (scale * np.where(x > 0, x, neg)).astype(x.dtype)


def _elu_df(x, p):
    alpha, scale, input_scale = p
    return (scale * np.where(x > 0, 1.0, alpha * input_scale * np.exp(np.minimum(x, 0)
                                                                      * input_scale))
            ).astype(x.dtype)


def _elu_d2(x, p):
    alpha, scale, input_scale = p
    return (scale * np.where(x > 0, 0.0, alpha * input_scale ** 2
                             * np.exp(np.minimum(x, 0) * input_scale))).astype(x.dtype)


ELU = _activation("elu", "EluBackward0", _elu_f, _elu_df, _elu_d2)
CELU = _activation("celu", "CeluBackward0", _elu_f, _elu_df, _elu_d2)

LEAKY_RELU = _activation(
    "leaky_relu", "LeakyReluBackward0",
    lambda x, s: np.where(x > 0, x, x * x.dtype.type(s)),
    lambda x, s: np.where(x > 0, x.dtype.type(1), x.dtype.type(s)))

HARDTANH = _activation(
    "hardtanh", "HardtanhBackward0",
    lambda x, p: np.clip(x, x.dtype.type(p[0]), x.dtype.type(p[1])),
    lambda x, p: ((x > p[0]) & (x < p[1])).astype(x.dtype))


def _softplus_f(x, p):
    beta, threshold = p
    bx = x * x.dtype.type(beta)
    with np.errstate(over="ignore"):
        soft = np.log1p(np.exp(np.minimum(bx, threshold))) / x.dtype.type(beta)
    return np.where(bx > threshold, x, soft).astype(x.dtype)


def _softplus_df(x, p):
    beta, threshold = p
    bx = x * beta
    with np.errstate(over="ignore"):
        z = np.exp(np.minimum(bx, threshold))
    return np.where(bx > threshold, 1.0, z / (z + 1)).astype(x.dtype)


def _softplus_d2(x, p):
    beta, threshold = p
    bx = x * beta
    s = 1 / (1 + np.exp(-np.minimum(bx, threshold)))
    return np.where(bx > threshold, 0.0, beta * s * (1 - s)).astype(x.dtype)


SOFTPLUS = _activation("softplus", "SoftplusBackward0", _softplus_f, _softplus_df,
                       _softplus_d2)


def _sig(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


SILU = _activation(
    "silu", "SiluBackward0",
    lambda x, p: x * _sig(x),
    lambda x, p: _sig(x) * (1 + x * (1 - _sig(x))),
    lambda x, p: _sig(x) * (1 - _sig(x)) * (2 + x * (1 - 2 * _sig(x))))


def _mish_parts(x):
    sp = np.logaddexp(0, x).astype(x.dtype)
    return np.tanh(sp), _sig(x)


def _mish_df(x, p):
    t, s = _mish_parts(x)
    return (t + x * s * (1 - t * t)).astype(x.dtype)


def _mish_d2(x, p):
    t, s = _mish_parts(x)
    sech2 = 1 - t * t
    return (2 * s * sech2 + x * s * (1 - s) * sech2 - 2 * x * s * s * t * sech2).astype(x.dtype)


MISH = _activation("mish", "MishBackward0", lambda x, p: x * _mish_parts(x)[0], _mish_df,
                   _mish_d2)

HARDSIGMOID = _activation(
    "hardsigmoid", "HardsigmoidBackward0",
    lambda x, p: (np.clip(x + 3, 0, 6) / 6).astype(x.dtype),
    lambda x, p: np.where((x > -3) & (x < 3), x.dtype.type(1 / 6), x.dtype.type(0)))

HARDSWISH = _activation(
    "hardswish", "HardswishBackward0",
    lambda x, p: (x * np.clip(x + 3, 0, 6) / 6).astype(x.dtype),
    lambda x, p: np.where(x < -3, 0.0, np.where(x <= 3, x / 3 + 0.5, 1.0)).astype(x.dtype),
    lambda x, p: np.where((x > -3) & (x < 3), 1 / 3, 0.0).astype(x.dtype))

LOGSIGMOID = _activation(
    "log_sigmoid", "LogSigmoidBackward0",
    lambda x, p: (-np.logaddexp(0, -x)).astype(x.dtype),
    lambda x, p: _sig(-x).astype(x.dtype),
    lambda x, p: (-_sig(x) * _sig(-x)).astype(x.dtype))


# ============================================================================ linear
def _linear_fwd(b, x, wt, p):
    out = x @ wt
    out += b
    return out


# torch's F.linear on 2-D input with a bias records AddmmBackward0(bias, input, weight.t()).
# This primitive has the same node name and edges but reduces the bias gradient itself (one
# row sum) instead of leaving a broadcast gradient for the engine to reduce.
LINEAR = primitive("linear_addmm", _linear_fwd, "AddmmBackward0", save=((1, 2), (2, 1)))


def _linear_bw_fwd(g, x, wt, p):
    mask, bias_2d = p
    z = None if mask[0] and mask[1] and mask[2] else np.zeros((), g.dtype)
    # (add.reduce is what ndarray.sum runs, without its Python wrapper)
    gb = (g.copy() if bias_2d else _add_reduce(g, 0)) if mask[0] else z
    gx = g @ wt.T if mask[1] else z
    # The weight enters as weight.t(): compute its gradient as (g.T @ x).T so that, after
    # TBackward0 transposes it back, weight.grad is C-contiguous like the weight (torch's
    # AccumulateGrad layout contract); optimizer updates then stream through memory.
    gw = (g.T @ x).T if mask[2] else z
    return gb, gx, gw


# All three gradients of the fused linear in one kernel call; its own rule (in ndgrad ops)
# keeps double backward exact.
LINEAR_BW = primitive("linear_addmm_backward", _linear_bw_fwd, "AddmmBackwardBackward0",
                      save=((0, None), (1, None), (2, None)), n_out=3)


@LINEAR.def_vjp
def _(ctx, g):
    x, wt = ctx.saved
    n = ctx._next
    mask = (n[0] is not None, n[1] is not None, n[2] is not None)
    xs = x if x is not None else g
    ws = wt if wt is not None else g
    if not _tls.grad_enabled and not _state.special:
        # Plain backward (no graph recorded): the kernel directly, without a dispatch.
        gb, gx, gw = _linear_bw_fwd(g._data, xs._data, ws._data, (mask, bool(ctx._params)))
        return (Tensor(gb) if mask[0] else None, Tensor(gx) if mask[1] else None,
                Tensor(gw) if mask[2] else None)
    gb, gx, gw = LINEAR_BW.call(g, xs, ws, params=(mask, bool(ctx._params)))
    return (gb if mask[0] else None, gx if mask[1] else None, gw if mask[2] else None)


@LINEAR_BW.def_vjp
def _(ctx, gs):
    g, x, wt = ctx.saved
    mask, bias_2d = ctx._params
    ggb, ggx, ggw = tuple(gs) + (None,) * (3 - len(gs))
    ggb = ggb if mask[0] else None
    ggx = ggx if mask[1] else None
    ggw = ggw if mask[2] else None
    n = ctx._next
    d_g = d_x = d_w = None
    if n[0] is not None:
        parts = []
        if ggb is not None:
            parts.append(ggb if bias_2d else ggb.expand(*g.shape))
        if ggx is not None:
            parts.append(ggx.mm(wt))
        if ggw is not None:
            parts.append(x.mm(ggw))
        for t in parts:
            d_g = t if d_g is None else d_g + t
    if n[1] is not None and ggw is not None:
        d_x = g.mm(ggw.t())
    if n[2] is not None and ggx is not None:
        d_w = ggx.t().mm(g)
    return d_g, d_x, d_w


# ============================================================================ LSTM cell
def _lstm_acts(gates):
    h4 = gates.shape[1] // 4
    with np.errstate(over="ignore"):
        sig = 1 / (1 + np.exp(-gates))
    i, f, o = sig[:, :h4], sig[:, h4:2 * h4], sig[:, 3 * h4:]
    g = np.tanh(gates[:, 2 * h4:3 * h4])
    return i, f, g, o


def _lstm_cell_fwd(gates, c, p):
    i, f, g, o = _lstm_acts(gates)
    c_new = f * c + i * g
    return o * np.tanh(c_new), c_new


# The pointwise part of an LSTM step (gate order i, f, g, o as torch): (gates, c) -> (h, c').
LSTM_CELL = primitive("lstm_cell_pointwise", _lstm_cell_fwd, "LstmCellPointwiseBackward0",
                      save=((0, None), (1, None)), n_out=2)


@LSTM_CELL.def_vjp
def _(ctx, gs):
    gates, c = ctx.saved
    gh, gc = tuple(gs) + (None,) * (2 - len(gs))
    if not _tls.grad_enabled:
        # No graph is being recorded (plain backward): the same formulas on arrays.
        i, f, g, o = _lstm_acts(gates._data)
        cd = c._data
        c_new = f * cd + i * g
        tc = np.tanh(c_new)
        dc = gc._data.copy() if gc is not None else np.zeros_like(cd)
        if gh is not None:
            ghd = gh._data
            dc += ghd * o * (1 - tc * tc)
            do = ghd * tc * o * (1 - o)
        else:
            do = np.zeros_like(cd)
        dgates = np.concatenate([dc * g * i * (1 - i), dc * cd * f * (1 - f),
                                 dc * i * (1 - g * g), do], axis=1)
        return Tensor(dgates), Tensor(dc * f)
    # create_graph: the rule in ndgrad ops, differentiable in gates and c.
    a_i, a_f, a_g, a_o = gates.chunk(4, 1)
    i, f, g, o = a_i.sigmoid(), a_f.sigmoid(), a_g.tanh(), a_o.sigmoid()
    c_new = f * c + i * g
    tc = c_new.tanh()
    dc = gc if gc is not None else None
    do = None
    if gh is not None:
        t = gh * o * (1 - tc * tc)
        dc = t if dc is None else dc + t
        do = gh * tc * o * (1 - o)
    if dc is None:
        dc = c * 0
    if do is None:
        do = c * 0
    from .shape import cat
    dgates = cat([dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g), do], 1)
    return dgates, dc * f


# ============================================================================ GRU cell
def _gru_acts(gi, gh):
    h3 = gi.shape[1] // 3
    with np.errstate(over="ignore"):
        rz = 1 / (1 + np.exp(-(gi[:, :2 * h3] + gh[:, :2 * h3])))
    r, z = rz[:, :h3], rz[:, h3:]
    n = np.tanh(gi[:, 2 * h3:] + r * gh[:, 2 * h3:])
    return r, z, n


def _gru_cell_fwd(gi, gh, h, p):
    r, z, n = _gru_acts(gi, gh)
    return (1 - z) * n + z * h


# The pointwise part of a GRU step (gate order r, z, n as torch): (gi, gh, h) -> h'.
GRU_CELL = primitive("gru_cell_pointwise", _gru_cell_fwd, "GruCellPointwiseBackward0",
                     save=((0, None), (1, None), (2, None)))


@GRU_CELL.def_vjp
def _(ctx, g):
    gi, gh, h = ctx.saved
    if not _tls.grad_enabled:
        r, z, n = _gru_acts(gi._data, gh._data)
        gd, hd = g._data, h._data
        h3 = hd.shape[1]
        da_n = gd * (1 - z) * (1 - n * n)
        da_r = da_n * gh._data[:, 2 * h3:] * r * (1 - r)
        da_z = gd * (hd - n) * z * (1 - z)
        dgi = np.concatenate([da_r, da_z, da_n], axis=1)
        dgh = np.concatenate([da_r, da_z, da_n * r], axis=1)
        return Tensor(dgi), Tensor(dgh), Tensor(gd * z)
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    da_n = g * (1 - z) * (1 - n * n)
    da_r = da_n * h_n * r * (1 - r)
    da_z = g * (h - n) * z * (1 - z)
    from .shape import cat
    return cat([da_r, da_z, da_n], 1), cat([da_r, da_z, da_n * r], 1), g * z


# ============================================================================ softmax family
def _softmax_fwd(x, p):
    e = x - np.maximum.reduce(x, axis=p, keepdims=True)
    np.exp(e, out=e)
    e /= np.add.reduce(e, axis=p, keepdims=True)
    return e


_max_reduce = np.maximum.reduce
_add_reduce = np.add.reduce


def _log_softmax_fwd(x, p):
    # ufunc reductions directly: ndarray.max/.sum add a Python wrapper per call
    s = x - _max_reduce(x, axis=p, keepdims=True)
    s -= np.log(_add_reduce(np.exp(s), axis=p, keepdims=True))
    return s


SOFTMAX = primitive("softmax", _softmax_fwd, "SoftmaxBackward0", save=(("out", None),))
LOG_SOFTMAX = primitive("log_softmax", _log_softmax_fwd, "LogSoftmaxBackward0",
                        save=(("out", None),))


def _softmax_bw_fwd(g, y, dim):
    gy = g * y
    gy -= y * gy.sum(axis=dim, keepdims=True)
    return gy


def _log_softmax_bw_fwd(g, y, dim):
    return g - np.exp(y) * _add_reduce(g, axis=dim, keepdims=True)


# Fused backward kernels (torch's _softmax_backward_data / _log_softmax_backward_data), each
# with a rule in ndgrad ops for double backward.
SOFTMAX_BW = primitive("softmax_backward_data", _softmax_bw_fwd, "SoftmaxBackwardDataBackward0",
                       save=((0, None), (1, None)))
LOG_SOFTMAX_BW = primitive("log_softmax_backward_data", _log_softmax_bw_fwd,
                           "LogSoftmaxBackwardDataBackward0", save=((0, None), (1, None)))


@SOFTMAX.def_vjp
def _(ctx, g):
    (y,) = ctx.saved
    if not _tls.grad_enabled and not _state.special:
        return (Tensor(_softmax_bw_fwd(g._data, y._data, ctx._params)),)
    return (SOFTMAX_BW.call(g, y, params=ctx._params),)


@LOG_SOFTMAX.def_vjp
def _(ctx, g):
    (y,) = ctx.saved
    if not _tls.grad_enabled and not _state.special:
        return (Tensor(_log_softmax_bw_fwd(g._data, y._data, ctx._params)),)
    return (LOG_SOFTMAX_BW.call(g, y, params=ctx._params),)


@SOFTMAX_BW.def_vjp
def _(ctx, gg):
    g, y = ctx.saved
    dim = ctx._params
    n = ctx._next
    # out = y * (g - s), s = sum(g * y)
    s = (g * y).sum(dim, keepdim=True)
    ggy = gg * y
    t = ggy.sum(dim, keepdim=True)
    d_g = (ggy - y * t) if n[0] is not None else None
    d_y = (gg * (g - s) - g * t) if n[1] is not None else None
    return d_g, d_y


@LOG_SOFTMAX_BW.def_vjp
def _(ctx, gg):
    g, y = ctx.saved
    dim = ctx._params
    n = ctx._next
    # out = g - exp(y) * sum(g)
    e = y.exp()
    d_g = (gg - (gg * e).sum(dim, keepdim=True)) if n[0] is not None else None
    d_y = (-gg * e * g.sum(dim, keepdim=True)) if n[1] is not None else None
    return d_g, d_y


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
        coef = -w * (g / w.sum(dtype=x.dtype))
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


@NLL_LOSS_BW.def_vjp
def _(ctx, gg):
    target, weight = ctx.saved
    if not ctx._next[0]:
        return None, None, None, None
    # through the wrapper: the new node must carry x_meta too (higher-order derivatives)
    return nll_loss_prim(gg, target, weight, *ctx._params), None, None, None


class _ShapeProxy:
    """Backward of nll_loss needs x's shape and dtype only: keep a zero-stride stand-in."""

    def get(self, ctx):
        shape, dtype = ctx._extras()["x_meta"]
        return Tensor(np.broadcast_to(np.zeros((), dtype), shape))


_SHAPE_PROXY = _ShapeProxy()


def nll_loss_prim(x, target, weight, reduction, ignore_index):
    out = NLL_LOSS.call(x, target, weight, params=(reduction, ignore_index))
    if out._grad_fn is not None:
        out._grad_fn._extras()["x_meta"] = (x._data.shape, x._data.dtype)
    return out


# ============================================================================ convolution
def _pad_nd(x, pads):
    """Zero-pad the trailing spatial dims of x by ``pads`` ((lo, hi) per dim)."""
    if not any(lo or hi for lo, hi in pads):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(pads))


def _im2col(x, kshape, stride, dilation):
    """(N, C, H, W) padded -> strided view (N, C, kh, kw, Ho, Wo) (no copy)."""
    n, c, h, w = x.shape
    kh, kw = kshape
    sh, sw = stride
    dh, dw = dilation
    ho = (h - dh * (kh - 1) - 1) // sh + 1
    wo = (w - dw * (kw - 1) - 1) // sw + 1
    s = x.strides
    return np.lib.stride_tricks.as_strided(
        x, (n, c, kh, kw, ho, wo),
        (s[0], s[1], s[2] * dh, s[3] * dw, s[2] * sh, s[3] * sw), writeable=False)


def _conv2d_np(x, w, stride, padding, dilation, groups):
    """Cross-correlation; x (N, C, H, W), w (O, C/g, kh, kw) -> (N, O, Ho, Wo)."""
    n, c = x.shape[:2]
    o, cg, kh, kw = w.shape
    xp = _pad_nd(x, ((padding[0], padding[0]), (padding[1], padding[1])))
    cols = _im2col(xp, (kh, kw), stride, dilation)
    ho, wo = cols.shape[4:]
    if groups == 1:
        # (C, kh, kw, N, Ho, Wo) -> (K, N*L): one GEMM with the (O, K) weight.
        cm = cols.transpose(1, 2, 3, 0, 4, 5).reshape(c * kh * kw, n * ho * wo)
        out = w.reshape(o, -1) @ cm
        return np.ascontiguousarray(out.reshape(o, n, ho, wo).transpose(1, 0, 2, 3))
    cm = cols.transpose(1, 2, 3, 0, 4, 5).reshape(groups, cg * kh * kw, n * ho * wo)
    out = np.matmul(w.reshape(groups, o // groups, cg * kh * kw), cm)
    return np.ascontiguousarray(out.reshape(o, n, ho, wo).transpose(1, 0, 2, 3))


def _conv2d_input_grad_np(g, w, in_hw, stride, padding, dilation, groups):
    """Adjoint of _conv2d_np in x: g (N, O, Ho, Wo) -> (N, C, H, W) (col2im)."""
    n, o, ho, wo = g.shape
    _, cg, kh, kw = w.shape
    c = cg * groups
    h, wd = in_hw
    if groups == 1:
        cols = w.reshape(o, cg * kh * kw).T @ g.transpose(1, 0, 2, 3).reshape(o, n * ho * wo)
    else:
        gm = g.transpose(1, 0, 2, 3).reshape(groups, o // groups, n * ho * wo)
        cols = np.matmul(w.reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1), gm)
    cols = cols.reshape(c, kh, kw, n, ho, wo)
    ph, pw = padding
    hp = max(h + 2 * ph, (ho - 1) * stride[0] + dilation[0] * (kh - 1) + 1)
    wp = max(wd + 2 * pw, (wo - 1) * stride[1] + dilation[1] * (kw - 1) + 1)
    out = np.zeros((c, n, hp, wp), g.dtype)
    sh, sw = stride
    dh, dw = dilation
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh: i * dh + sh * (ho - 1) + 1: sh,
                j * dw: j * dw + sw * (wo - 1) + 1: sw] += cols[:, i, j]
    out = out[:, :, ph: ph + h, pw: pw + wd]
    return np.ascontiguousarray(out.transpose(1, 0, 2, 3))


def _conv2d_weight_grad_np(x, g, wshape, stride, padding, dilation, groups):
    """Adjoint of _conv2d_np in w: -> (O, C/g, kh, kw)."""
    n, c = x.shape[:2]
    o, cg, kh, kw = wshape
    xp = _pad_nd(x, ((padding[0], padding[0]), (padding[1], padding[1])))
    cols = _im2col(xp, (kh, kw), stride, dilation)
    ho, wo = g.shape[2:]
    cols = cols[..., :ho, :wo]
    if groups == 1:
        cm = cols.transpose(1, 2, 3, 0, 4, 5).reshape(cg * kh * kw, n * ho * wo)
        gw = g.transpose(1, 0, 2, 3).reshape(o, n * ho * wo) @ cm.T
        return gw.reshape(wshape)
    cm = cols.transpose(1, 2, 3, 0, 4, 5).reshape(groups, cg * kh * kw, n * ho * wo)
    gm = g.transpose(1, 0, 2, 3).reshape(groups, o // groups, n * ho * wo)
    gw = np.matmul(gm, cm.transpose(0, 2, 1))
    return gw.reshape(wshape)


def _hw(shape):
    """Spatial size as 2-D: a 1-D convolution runs as 2-D with unit height."""
    return tuple(shape[2:]) if len(shape) == 4 else (1,) + tuple(shape[2:])


def _as4d(a):
    return a if a.ndim == 4 else a[:, :, None]


def _conv_out_hw(p, x_hw, w_hw):
    stride, padding, dilation, transposed, output_padding, groups = p
    if not transposed:
        return tuple((x_hw[i] + 2 * padding[i] - dilation[i] * (w_hw[i] - 1) - 1) // stride[i]
                     + 1 for i in range(2))
    return tuple((x_hw[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (w_hw[i] - 1)
                 + output_padding[i] + 1 for i in range(2))


def _conv_fwd(x, w, b, p):
    if x.ndim == 3:
        return _conv_fwd(x[:, :, None], w[:, :, None], b, p)[:, :, 0]
    stride, padding, dilation, transposed, output_padding, groups = p
    if not transposed:
        out = _conv2d_np(x, w, stride, padding, dilation, groups)
    else:
        hw = _conv_out_hw(p, _hw(x.shape), _hw(w.shape))
        out = _conv2d_input_grad_np(x, w, hw, stride, padding, dilation, groups)
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def _conv_bw_fwd(g, x, w, p):
    """(grad_input, grad_weight, grad_bias) of a 2-D convolution; params end with a mask."""
    *cp, mask = p
    if x.ndim == 3:
        res = _conv_bw_fwd(g[:, :, None], x[:, :, None], w[:, :, None], p)
        return tuple(r[:, :, 0] if r.ndim == 4 else r for r in res)
    stride, padding, dilation, transposed, output_padding, groups = cp
    gx = gw = gb = None
    if not transposed:
        if mask[0]:
            gx = _conv2d_input_grad_np(g, w, x.shape[2:], stride, padding, dilation, groups)
        if mask[1]:
            gw = _conv2d_weight_grad_np(x, g, w.shape, stride, padding, dilation, groups)
    else:
        if mask[0]:
            gx = _conv2d_np(g, w, stride, padding, dilation, groups)
        if mask[1]:
            gw = _conv2d_weight_grad_np(g, x, w.shape, stride, padding, dilation, groups)
    if mask[2]:
        gb = g.sum(axis=(0, 2, 3))
    z = np.zeros((), g.dtype)
    return (gx if gx is not None else z, gw if gw is not None else z,
            gb if gb is not None else z)


CONVOLUTION = primitive("convolution", _conv_fwd, "ConvolutionBackward0",
                        save=((0, 1), (1, 0)))
CONVOLUTION_BW = primitive("convolution_backward", _conv_bw_fwd,
                           "ConvolutionBackwardBackward0", save=((0, None), (1, None),
                                                                 (2, None)), n_out=3)


@CONVOLUTION.def_vjp
def _(ctx, g):
    x, w = ctx.saved
    n = ctx._next
    if x is None:
        x = _SHAPE_PROXY.get(ctx)
    if w is None:
        w = Tensor(np.broadcast_to(np.zeros((), g._data.dtype), ctx._extras()["w_shape"]))
    mask = (n[0] is not None, n[1] is not None, len(n) > 2 and n[2] is not None)
    gx, gw, gb = CONVOLUTION_BW.call(g, x, w, params=tuple(ctx._params) + (mask,))
    return (gx if mask[0] else None, gw if mask[1] else None, gb if mask[2] else None)


@CONVOLUTION_BW.def_vjp
def _(ctx, gs):
    g, x, w = ctx.saved
    ggx, ggw, ggb = tuple(gs) + (None,) * (3 - len(gs))
    *cp, mask = ctx._params
    cp = tuple(cp)
    stride, padding, dilation, transposed, output_padding, groups = cp
    n = ctx._next
    ggx = ggx if mask[0] else None
    ggw = ggw if mask[1] else None
    ggb = ggb if mask[2] else None
    d_g = d_x = d_w = None

    def conv(a, k, tr, out_hw=None):
        op = (0, 0)
        if tr and out_hw is not None:
            nat = _conv_out_hw((stride, padding, dilation, True, (0, 0), groups),
                               _hw(a._data.shape), _hw(k._data.shape))
            op = (out_hw[0] - nat[0], out_hw[1] - nat[1])
        return convolution(a, k, None, stride, padding, dilation, tr, op, groups)

    g_hw = _hw(g._data.shape)
    x_hw = _hw(x._data.shape)
    if n[0] is not None:
        parts = []
        if ggx is not None:
            parts.append(conv(ggx, w, transposed, g_hw))
        if ggw is not None:
            parts.append(conv(x, ggw, transposed, g_hw))
        if ggb is not None:
            parts.append(ggb.reshape(1, -1, 1, 1).expand(g._data.shape))
        if parts:
            d_g = parts[0]
            for t in parts[1:]:
                d_g = d_g + t
    if n[1] is not None and ggw is not None:
        # gw is linear in x: its adjoint is the other-kind convolution of g with ggw
        d_x = conv(g, ggw, not transposed, x_hw)
    if n[2] is not None and ggx is not None:
        # gx is linear in w; for both kinds the adjoint is the weight gradient with the
        # conv-input role taken by ggx (plain) or g (transposed), which CONVOLUTION_BW's
        # argument order gives in one call.
        d_w = CONVOLUTION_BW.call(g, ggx, w, params=cp + ((False, True, False),))[1]
    return d_g, d_x, d_w


def convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    """2-D convolution primitive call (1-D callers add a unit height)."""
    p = (tuple(stride), tuple(padding), tuple(dilation), bool(transposed),
         tuple(output_padding), int(groups))
    out = CONVOLUTION.call(x, w, b, params=p)
    node = out._grad_fn
    if node is not None:
        ex = node._extras()
        ex["x_meta"] = (x._data.shape, x._data.dtype)
        ex["w_shape"] = w._data.shape
    return out


# ============================================================================ pooling
def _pool_windows(x, k, s, pad, dil, ceil_mode, fill):
    """Strided windows (N, C, Ho, Wo, kh, kw) over x padded with `fill`."""
    n, c, h, w = x.shape
    outs = []
    for dim, size in ((0, h), (1, w)):
        span = dil[dim] * (k[dim] - 1) + 1
        num = size + 2 * pad[dim] - span
        if ceil_mode:
            o = -(-num // s[dim]) + 1
            if (o - 1) * s[dim] >= size + pad[dim]:
                o -= 1
        else:
            o = num // s[dim] + 1
        outs.append(o)
    ho, wo = outs
    need_h = (ho - 1) * s[0] + dil[0] * (k[0] - 1) + 1
    need_w = (wo - 1) * s[1] + dil[1] * (k[1] - 1) + 1
    hi_h = max(need_h - h - pad[0], 0)
    hi_w = max(need_w - w - pad[1], 0)
    if pad[0] or pad[1] or hi_h or hi_w:
        xp = np.pad(x, ((0, 0), (0, 0), (pad[0], hi_h), (pad[1], hi_w)), constant_values=fill)
    else:
        xp = x
    st = xp.strides
    win = np.lib.stride_tricks.as_strided(
        xp, (n, c, ho, wo, k[0], k[1]),
        (st[0], st[1], st[2] * s[0], st[3] * s[1], st[2] * dil[0], st[3] * dil[1]),
        writeable=False)
    return win, (ho, wo)


def _max_pool_fwd(x, p):
    k, s, pad, dil, ceil_mode = p
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    win, (ho, wo) = _pool_windows(x, k, s, pad, dil, ceil_mode, fill)
    # A running max over the kh*kw kernel offsets (no window copy). torch's rule: a later
    # value replaces the max if it is greater or NaN (np.maximum agrees on the value).
    # `off` tracks the flat offset of the winner inside the image relative to its window.
    w_img = x.shape[3]

    def running_max(nan_aware):
        out = win[..., 0, 0].copy()
        off = np.zeros(out.shape, np.int64)
        for a in range(k[0]):
            for b in range(k[1]):
                if a == 0 and b == 0:
                    continue
                v = win[..., a, b]
                m = v > out
                if nan_aware:
                    m |= np.isnan(v)
                np.maximum(out, v, out=out)
                np.putmask(off, m, a * dil[0] * w_img + b * dil[1])
        return out, off

    out, off = running_max(False)
    if x.dtype.kind == "f" and np.isnan(out).any():
        out, off = running_max(True)   # NaN windows: the index of the last NaN, as torch
    base = (np.arange(ho)[:, None] * s[0] - pad[0]) * w_img + \
        (np.arange(wo)[None, :] * s[1] - pad[1])
    return out, off + base


def _max_pool_bw_fwd(g, idx, p):
    shape, disjoint = p
    n, c = g.shape[:2]
    hw = shape[2] * shape[3]
    ii = idx.reshape(n * c, -1)
    gi = g.reshape(n * c, -1)
    if disjoint:
        # Non-overlapping windows: every input position receives at most one gradient.
        out = np.zeros((n * c, hw), g.dtype)
        out[np.arange(n * c)[:, None], ii] = gi
        return out.reshape(shape)
    flat = (np.arange(n * c)[:, None] * hw + ii).ravel()
    out = np.bincount(flat, weights=gi.ravel().astype(np.float64), minlength=n * c * hw)
    return out.astype(g.dtype).reshape(shape)


MAX_POOL2D = primitive("max_pool2d_with_indices", _max_pool_fwd,
                       "MaxPool2DWithIndicesBackward0", save=(("out1", None),), n_out=2,
                       diff_outs=(True, False))
MAX_POOL2D_BW = primitive("max_pool2d_with_indices_backward", _max_pool_bw_fwd,
                          "MaxPool2DWithIndicesBackwardBackward0", save=((1, None),))


@MAX_POOL2D.def_vjp
def _(ctx, gs):
    (idx,) = ctx.saved
    k, s, pad, dil, ceil_mode = ctx._params
    disjoint = all(s[i] >= dil[i] * (k[i] - 1) + 1 for i in range(2))
    return (MAX_POOL2D_BW.call(gs[0], idx, params=(ctx._extras()["x_shape"], disjoint)),)


@MAX_POOL2D_BW.def_vjp
def _(ctx, gg):
    (idx,) = ctx.saved
    n, c = idx.shape[:2]
    picked = gg.reshape(n, c, -1).gather(2, idx.reshape(n, c, -1))
    return picked.reshape(idx.shape), None


def max_pool2d_prim(x, k, s, pad, dil, ceil_mode):
    out, idx = MAX_POOL2D.call(x, params=(k, s, pad, dil, ceil_mode))
    if out._grad_fn is not None:
        out._grad_fn._extras()["x_shape"] = x._data.shape
    return out, idx


def _avg_pool_fwd(x, p):
    k, s, pad, ceil_mode, count_include_pad, divisor = p
    win, (ho, wo) = _pool_windows(x, k, s, pad, (1, 1), ceil_mode, 0)
    total = win.sum(axis=(-2, -1), dtype=np.float64 if x.dtype == np.float16 else x.dtype)
    return (total / _avg_divisor(x.shape, p, ho, wo)).astype(x.dtype)


def _avg_divisor(shape, p, ho, wo):
    k, s, pad, ceil_mode, count_include_pad, divisor = p
    if divisor:
        return divisor
    h, w = shape[2:]
    hs = np.arange(ho) * s[0] - pad[0]
    ws = np.arange(wo) * s[1] - pad[1]
    he = np.minimum(hs + k[0], h + pad[0])
    we = np.minimum(ws + k[1], w + pad[1])
    if count_include_pad:
        cnt = (he - hs)[:, None] * (we - ws)[None, :]
    else:
        cnt = (np.minimum(he, h) - np.maximum(hs, 0))[:, None] * \
              (np.minimum(we, w) - np.maximum(ws, 0))[None, :]
    return cnt.astype(np.float64)


def _avg_pool_bw_fwd(g, p):
    k, s, pad, ceil_mode, count_include_pad, divisor, shape = p
    ho, wo = g.shape[2:]
    gd = (g / _avg_divisor(shape, p[:6], ho, wo)).astype(g.dtype)
    h, w = shape[2:]
    hp = max(h + 2 * pad[0], (ho - 1) * s[0] + k[0])
    wp = max(w + 2 * pad[1], (wo - 1) * s[1] + k[1])
    out = np.zeros(shape[:2] + (hp, wp), g.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, i: i + s[0] * (ho - 1) + 1: s[0], j: j + s[1] * (wo - 1) + 1: s[1]] += gd
    return np.ascontiguousarray(out[:, :, pad[0]: pad[0] + h, pad[1]: pad[1] + w])


AVG_POOL2D = primitive("avg_pool2d", _avg_pool_fwd, "AvgPool2DBackward0")
AVG_POOL2D_BW = primitive("avg_pool2d_backward", _avg_pool_bw_fwd, "AvgPool2DBackwardBackward0")


@AVG_POOL2D.def_vjp
def _(ctx, g):
    return (AVG_POOL2D_BW.call(g, params=tuple(ctx._params) + (ctx._extras()["x_shape"],)),)


@AVG_POOL2D_BW.def_vjp
def _(ctx, gg):
    return (avg_pool2d_prim(gg, *ctx._params[:6]),)


def avg_pool2d_prim(x, k, s, pad, ceil_mode, count_include_pad, divisor):
    out = AVG_POOL2D.call(x, params=(k, s, pad, ceil_mode, count_include_pad, divisor))
    if out._grad_fn is not None:
        out._grad_fn._extras()["x_shape"] = x._data.shape
    return out


# ============================================================================ embedding
def _embedding_fwd(w, idx, p):
    return w[idx]


def _embedding_bw_fwd(g, idx, p):
    num, padding_idx = p[:2]
    flat = idx.reshape(-1)
    rows = g.reshape(-1, g.shape[-1])
    if len(p) > 2 and p[2]:
        # scale_grad_by_freq: each row's gradient is divided by its count in the batch
        counts = np.bincount(flat, minlength=num)
        rows = rows / counts[flat][:, None].astype(g.dtype)
    out = np.zeros((num, g.shape[-1]), g.dtype)
    np.add.at(out, flat, rows)
    if padding_idx is not None and padding_idx >= 0:
        out[padding_idx] = 0
    return out


EMBEDDING = primitive("embedding", _embedding_fwd, "EmbeddingBackward0", save=((1, None),))
EMBEDDING_BW = primitive("embedding_backward", _embedding_bw_fwd,
                         "EmbeddingBackwardBackward0", save=((1, None),))


@EMBEDDING.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    return EMBEDDING_BW.call(g, idx, params=ctx._params), None


@EMBEDDING_BW.def_vjp
def _(ctx, gg):
    (idx,) = ctx.saved
    num, padding_idx = ctx._params[:2]
    if padding_idx is not None and padding_idx >= 0:
        keep = np.ones((num, 1), gg._data.dtype)
        keep[padding_idx] = 0
        gg = gg * Tensor(keep)
    out = EMBEDDING.call(gg, idx, params=None)
    if len(ctx._params) > 2 and ctx._params[2]:
        flat = idx._data.reshape(-1)
        counts = np.bincount(flat, minlength=num)[idx._data].astype(gg._data.dtype)
        out = out / Tensor(counts[..., None])
    return out, None


# ============================================================================ sandwich
_SANDWICH = {}


def _sandwich_ops(node_name):
    """``out = Lm @ x @ Rm.T`` over the last two dims: adaptive pooling, upsampling."""
    ops = _SANDWICH.get(node_name)
    if ops is not None:
        return ops
    fwd = primitive("sandwich_" + node_name, lambda x, p: np.matmul(np.matmul(p[0], x), p[1].T),
                    node_name)
    bw = primitive("sandwich_t_" + node_name,
                   lambda g, p: np.matmul(np.matmul(p[0].T, g), p[1]),
                   node_name.replace("Backward0", "BackwardBackward0"))
    fwd.def_vjp(lambda ctx, g: (bw.call(g, params=ctx._params),))
    bw.def_vjp(lambda ctx, gg: (fwd.call(gg, params=ctx._params),))
    _SANDWICH[node_name] = (fwd, bw)
    return fwd, bw


def sandwich(x, lm, rm, node_name):
    return _sandwich_ops(node_name)[0].call(x, params=(lm, rm))


# ============================================================================ adaptive max
def _adaptive_max_fwd(x, p):
    (hs, he), (ws, we) = p
    n, c, h, w = x.shape
    oh, ow = len(hs), len(ws)
    out = np.empty((n, c, oh, ow), x.dtype)
    idx = np.empty((n, c, oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            win = x[:, :, hs[i]:he[i], ws[j]:we[j]]
            ww = we[j] - ws[j]
            flat = win.reshape(n, c, -1)
            a = np.argmax(flat, axis=-1)
            if x.dtype.kind == "f":
                nan = np.isnan(flat)
                if nan.any():
                    a = np.where(nan.any(-1), np.argmax(nan, axis=-1), a)
            out[:, :, i, j] = np.take_along_axis(flat, a[..., None], -1)[..., 0]
            idx[:, :, i, j] = (hs[i] + a // ww) * w + ws[j] + a % ww
    return out, idx


ADAPTIVE_MAX_POOL2D = primitive("adaptive_max_pool2d", _adaptive_max_fwd,
                                "AdaptiveMaxPool2DBackward0", save=(("out1", None),), n_out=2,
                                diff_outs=(True, False))


@ADAPTIVE_MAX_POOL2D.def_vjp
def _(ctx, gs):
    (idx,) = ctx.saved
    return (MAX_POOL2D_BW.call(gs[0], idx, params=(ctx._extras()["x_shape"], False)),)


def adaptive_max_pool2d_prim(x, hb, wb):
    out, idx = ADAPTIVE_MAX_POOL2D.call(x, params=(hb, wb))
    if out._grad_fn is not None:
        out._grad_fn._extras()["x_shape"] = x._data.shape
    return out, idx


# ============================================================================ batch / layer norm
def _norm_fwd(x, w, b, p):
    axes, eps, mean, invstd, pshape = p
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
    if len(n) > 1 and n[1] is not None:
        gw = (g * xhat).sum(outer).reshape(w.shape)
    if len(n) > 2 and n[2] is not None:
        gb = g.sum(outer).reshape(ctx._extras()["b_shape"])
    return gx, gw, gb


NATIVE_BATCH_NORM = primitive("native_batch_norm", _norm_fwd, "NativeBatchNormBackward0",
                              save=((0, None), (1, None)))
NATIVE_LAYER_NORM = primitive("native_layer_norm", _norm_fwd, "NativeLayerNormBackward0",
                              save=((0, None), (1, None)))
NATIVE_BATCH_NORM.def_vjp(_norm_vjp)
NATIVE_LAYER_NORM.def_vjp(_norm_vjp)


def _acc_dtype(d):
    return np.float32 if d == np.float16 else d


def batch_norm_prim(x, w, b, rm, rv, training, momentum, eps):
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
    d = x._data
    axes = tuple(range(d.ndim - k, d.ndim))
    acc = _acc_dtype(d.dtype)
    mean = d.mean(axis=axes, keepdims=True, dtype=acc)
    var = ((d - mean) ** 2).mean(axis=axes, keepdims=True, dtype=acc)
    invstd = (1.0 / np.sqrt(var + eps)).astype(d.dtype)
    pshape = d.shape[d.ndim - k:]
    out = NATIVE_LAYER_NORM.call(x, w, b, params=(axes, eps, mean.astype(d.dtype), invstd,
                                                  pshape))
    if out._grad_fn is not None:
        ex = out._grad_fn._extras()
        ex["training"] = True
        ex["layer"] = True
        ex["b_shape"] = b._data.shape if b is not None else None
    return out


def write_inplace_nocheck(t, values):
    """Running-stat updates: written like torch's in-place buffer update (version bump)."""
    np.copyto(t._data, values, casting="unsafe")
    t._vc[0] += 1


# ============================================================================ padding
def _crop_pad_fwd(x, p):
    pairs, value = p
    sl = tuple(slice(max(-lo, 0), x.shape[i] - max(-hi, 0)) for i, (lo, hi) in
               enumerate(pairs))
    x = x[sl]
    pos = tuple((max(lo, 0), max(hi, 0)) for lo, hi in pairs)
    if any(lo or hi for lo, hi in pos):
        return np.pad(x, pos, constant_values=value)
    return x.copy()


CONSTANT_PAD = primitive("constant_pad_nd", _crop_pad_fwd, "ConstantPadNdBackward0")


@CONSTANT_PAD.def_vjp
def _(ctx, g):
    pairs, _ = ctx._params
    return (CONSTANT_PAD.call(g, params=(tuple((-lo, -hi) for lo, hi in pairs), 0)),)


def constant_pad(x, pairs, value):
    for i, (lo, hi) in enumerate(pairs):
        if x._data.shape[i] + lo + hi < 0:
            raise RuntimeError(f"The input size {x._data.shape[i]}, plus negative padding "
                               f"{lo} and {hi} resulted in a negative output size, which is "
                               "invalid. Check dimension {i} of your input.")
    return CONSTANT_PAD.call(x, params=(pairs, value))


_INDEX_PAD = {}


def _take_fwd(x, p):
    for dim, idx, _ in p:
        x = np.take(x, idx, axis=dim)
    return x


def _take_bw_fwd(g, p):
    for dim, idx, size in reversed(p):
        shape = list(g.shape)
        shape[dim] = size
        out = np.zeros(shape, g.dtype)
        np.add.at(np.moveaxis(out, dim, 0), idx, np.moveaxis(g, dim, 0))
        g = out
    return g


def index_pad(x, pairs, np_mode, node_name):
    ops = _INDEX_PAD.get(node_name)
    if ops is None:
        fwd = primitive("index_pad_" + node_name, _take_fwd, node_name)
        bw = primitive("index_pad_bw_" + node_name, _take_bw_fwd,
                       node_name.replace("Backward0", "BackwardBackward0"))
        fwd.def_vjp(lambda ctx, g: (bw.call(g, params=ctx._params),))
        bw.def_vjp(lambda ctx, gg: (fwd.call(gg, params=ctx._params),))
        ops = _INDEX_PAD[node_name] = (fwd, bw)
    p = []
    for dim, (lo, hi) in enumerate(pairs):
        if lo or hi:
            size = x._data.shape[dim]
            idx = np.pad(np.arange(size), (lo, hi), mode=np_mode)
            p.append((dim, idx, size))
    return ops[0].call(x, params=tuple(p))


# ============================================================================ unfold / fold
def _im2col_fwd(x, p):
    k, d, pad, s = p
    xp = _pad_nd(x, ((pad[0], pad[0]), (pad[1], pad[1])))
    cols = _im2col(xp, k, s, d)
    n, c = x.shape[:2]
    return cols.reshape(n, c * k[0] * k[1], -1)


def _col2im_fwd(cols, p):
    out_hw, k, d, pad, s = p
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    hp, wp = out_hw[0] + 2 * pad[0], out_hw[1] + 2 * pad[1]
    ho = (hp - d[0] * (k[0] - 1) - 1) // s[0] + 1
    wo = (wp - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if ho * wo != cols.shape[2]:
        raise RuntimeError(f"Given output_size={list(out_hw)}, kernel_size={list(k)}, "
                           f"dilation={list(d)}, padding={list(pad)}, stride={list(s)}, "
                           f"expected size of input's dimension 2 to match the calculated "
                           f"number of sliding blocks {ho} * {wo} = {ho * wo}, but got "
                           f"input.size(2)={cols.shape[2]}.")
    c6 = cols.reshape(n, c, k[0], k[1], ho, wo)
    out = np.zeros((n, c, hp, wp), cols.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, i * d[0]: i * d[0] + s[0] * (ho - 1) + 1: s[0],
                j * d[1]: j * d[1] + s[1] * (wo - 1) + 1: s[1]] += c6[:, :, i, j]
    return np.ascontiguousarray(out[:, :, pad[0]: pad[0] + out_hw[0],
                                    pad[1]: pad[1] + out_hw[1]])


IM2COL = primitive("im2col", _im2col_fwd, "Im2ColBackward0")
COL2IM = primitive("col2im", _col2im_fwd, "Col2ImBackward0")


@IM2COL.def_vjp
def _(ctx, g):
    return (COL2IM.call(g, params=(ctx._extras()["hw"],) + tuple(ctx._params)),)


@COL2IM.def_vjp
def _(ctx, g):
    out_hw, *rest = ctx._params
    return (im2col(g, *rest),)


def im2col(x, k, d, pad, s):
    out = IM2COL.call(x, params=(k, d, pad, s))
    if out._grad_fn is not None:
        out._grad_fn._extras()["hw"] = x._data.shape[2:]
    return out


def col2im(cols, out_hw, k, d, pad, s):
    return COL2IM.call(cols, params=(out_hw, k, d, pad, s))


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
            dx = E.where(small, d / extra, d.sign())
        else:
            dx = E.where(small, d, d.sign() * extra)
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
            g = g / x._data.size
        dx, dt = _loss_derivs(kind, x, t, extra, w, pw, n[1] is not None)
        gx = g * dx if n[0] is not None else None
        gt = g * dt if n[1] is not None and dt is not None else None
        return gx, gt, None, None

    _LOSS_OPS[kind] = op
    return op


def pointwise_loss(kind, x, t, reduction, extra=None, w=None, pw=None):
    return _loss_op(kind).call(x, t, w, pw, params=(kind, reduction, extra))


# ============================================================================ glu
def _halves(x, dim):
    h = x.shape[dim] // 2
    return np.split(x, [h], axis=dim)


def _np_sigmoid(x):
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False)


def _glu_fwd(x, dim):
    a, b = _halves(x, dim)
    return a * _np_sigmoid(b)


def _glu_bw_fwd(g, x, dim):
    a, b = _halves(x, dim)
    s = _np_sigmoid(b)
    return np.concatenate((g * s, (1 - s) * s * a * g), axis=dim)


GLU = primitive("glu", _glu_fwd, "GluBackward0", save=((0, None),))
GLU_BW = primitive("glu_backward", _glu_bw_fwd, "GluBackwardBackward0",
                   save=((0, 1), (1, None)))


@GLU.def_vjp
def _(ctx, g):
    (x,) = ctx.saved
    return (GLU_BW.call(g, x, params=ctx._params),)


@GLU_BW.def_vjp
def _(ctx, gg):
    g, x = ctx.saved
    dim = ctx._params
    n = ctx._next
    a, b = x.chunk(2, dim)
    gg_a, gg_b = gg.chunk(2, dim)
    s = b.sigmoid()
    ds = s * (1 - s)  # sigmoid'
    d_g = gg_a * s + gg_b * a * ds if n[0] is not None else None
    d_x = None
    if n[1] is not None:
        d2s = ds * (1 - s * 2)  # sigmoid''
        from .shape import cat
        d_x = cat((gg_b * g * ds, (gg_b * a * d2s + gg_a * ds) * g), dim)
    return d_g, d_x


def glu_prim(x, dim):
    return GLU.call(x, params=dim)


# ============================================================================ prelu
def _prelu_fwd(x, w, p):
    return np.where(x > 0, x, w * x).astype(x.dtype, copy=False)


def _prelu_bw_fwd(g, x, w, p):
    pos = x > 0
    zero = np.zeros((), g.dtype)
    return (np.where(pos, g, w * g).astype(g.dtype, copy=False),
            np.where(pos, zero, x * g).astype(g.dtype, copy=False))


# torch's _prelu_kernel: the weight arrives viewed to broadcast against the input; both
# gradients of the backward kernel have the input's shape (the weight's is summed back).
PRELU = primitive("prelu_kernel", _prelu_fwd, "PreluKernelBackward0",
                  save=((0, None), (1, None)))
PRELU_BW = primitive("prelu_kernel_backward", _prelu_bw_fwd, "PreluKernelBackwardBackward0",
                     save=((0, None), (1, None), (2, None)), n_out=2)


def _sum_to(g, shape):
    from .broadcast import sum_to
    return sum_to(g, tuple(shape))


@PRELU.def_vjp
def _(ctx, g):
    x, w = ctx.saved
    n = ctx._next
    gx, gw = PRELU_BW.call(g, x, w)
    return (gx if n[0] is not None else None,
            _sum_to(gw, w.shape) if n[1] is not None else None)


@PRELU_BW.def_vjp
def _(ctx, gs):
    g, x, w = ctx.saved
    ggx, ggw = tuple(gs) + (None,) * (2 - len(gs))
    n = ctx._next
    # torch's double-backward formula splits at x >= 0 (the kernels at x > 0): at x == 0
    # the second derivatives follow the positive branch, as torch's do
    pos = x >= 0
    d_g = d_x = d_w = None
    if n[0] is not None and (ggx is not None or ggw is not None):
        neg = ggx * w if ggx is not None else None
        if ggw is not None:
            neg = ggw * x if neg is None else neg + ggw * x
        d_g = E.where(pos, ggx if ggx is not None else neg * 0, neg)
    if n[1] is not None and ggw is not None:
        d_x = E.where(pos, g * 0, g * ggw)
    if n[2] is not None and ggx is not None:
        d_w = _sum_to(E.where(pos, g * 0, g * ggx), w.shape)
    return d_g, d_x, d_w


def prelu_prim(x, w):
    return PRELU.call(x, w)


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


# ============================================================================ bind
from .methods import bind  # noqa: E402

bind({"uniform_": _uniform_, "normal_": _normal_, "bernoulli_": _bernoulli_,
      "exponential_": _exponential_, "random_": _random_, "erfinv_": _erfinv_})
