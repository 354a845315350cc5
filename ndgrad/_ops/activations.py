"""Activation primitives of ``nn.functional`` with torch's node names: the elementwise table
built by ``_activation(f, df, d2f)`` (gelu, elu / selu / celu, leaky_relu, hardtanh, softplus,
silu, mish, hardsigmoid, hardswish, logsigmoid), softmax / log_softmax with their fused
backward kernels (``softmax_backward_data``, ``log_softmax_backward_data``) and batched VJPs,
glu and prelu.

Not here: relu, sigmoid and tanh (elementwise ops of the tensor API), threshold, softsign and
the shrink functions (composites in ``nn/functional.py``).

Invariants: every fused backward is itself a primitive whose rule is written in ndgrad ops, so
double backward is exact; the plain-backward shortcuts (no graph recorded, no special mode)
run the same NumPy kernel as the backward primitive, so both paths give the same bits.
"""

import math

import numpy as np

from .. import _state
from .._tensor import Tensor
from .comparison import where
from .registry import binary, primitive, unary
from .joins import cat
from .broadcast import sum_to
from .pointwise import _erf64

__all__ = []

_tls = _state.tls


# ============================================================================ elementwise table
# name -> the activation's backward primitive ``g * df(x)``
ACT_BACKWARD = {}
# name -> (forward, backward) as declared, before _blockwise (tests compare the two)
BLOCKWISE_DECLARATIONS = {}


# Elements per block of _blockwise: 64 KB float64 temporaries stay in the caches.
_BLOCK = 8192


def _blockwise(fn, arrays, p):
    """``fn(*arrays, p)`` for an elementwise `fn`, evaluated block by block over the flat
    arrays: the same numbers (each element's operations are unchanged), but the formula's
    temporaries are cache-sized and reused by the allocator instead of one fresh array per
    step, which past a few hundred KB costs a page fault per 4 KB (exact GELU's erf at
    nanoGPT's sizes: 30 float64 passes). Arrays of other shapes than the first (broadcasting)
    and small ones go to `fn` whole."""
    a0 = arrays[0]
    n = a0.size
    if n <= 2 * _BLOCK or any(a.shape != a0.shape for a in arrays[1:]):
        return fn(*arrays, p)
    flat = [np.ravel(a) for a in arrays]
    first = fn(*(f[:_BLOCK] for f in flat), p)
    out = np.empty(n, first.dtype)
    out[:_BLOCK] = first
    for s in range(_BLOCK, n, _BLOCK):
        out[s:s + _BLOCK] = fn(*(f[s:s + _BLOCK] for f in flat), p)
    return out.reshape(a0.shape)


def _activation(name, node_name, f, df, d2f=None):
    """An elementwise activation ``y = f(x, p)`` with a differentiable fused backward.

    ``ACT_BW(g, x) = g * df(x)`` is itself a primitive whose rule uses ``d2f`` (zero when
    None, for piecewise-linear functions), so double backward is exact. Forward and backward
    kernels run block by block (_blockwise).
    """
    f_decl, bw_decl = f, (lambda g, x, p: g * df(x, p))
    BLOCKWISE_DECLARATIONS[name] = (f_decl, bw_decl)
    op = unary(name, lambda x, p: _blockwise(f_decl, (x,), p), node_name, save=((0, None),),
               float_only=True, params=True)
    bw = ACT_BACKWARD[name] = binary(name + "_backward",
                                     lambda g, x, p: _blockwise(bw_decl, (g, x), p),
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
    """erf for activation kernels: float64 to full precision (the op catalogue's kernel),
    float32/16 by a rational approximation with relative error < 1.2e-7."""
    if x.dtype == np.float64:
        return _erf64(x)
    return _erf_approx(x.astype(np.float64)).astype(x.dtype)


def _erf_approx(x):
    # Abramowitz-Stegun 7.1.26 is too coarse; use erfc continued via exp and a high-order
    # polynomial (Numerical Recipes erfc, fractional error < 1.2e-7). Horner's scheme in
    # place on one scratch buffer: the same float64 operations in the same order as the
    # expression written out (bitwise the same result), without a temporary per term.
    z = np.abs(x)
    t = np.multiply(z, 0.5)
    t += 1.0
    np.divide(1.0, t, out=t)
    acc = np.multiply(t, 0.17087277)
    for c in (-0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
              0.09678418, 0.37409196):
        acc += c
        acc *= t
    acc += 1.00002368
    acc *= t
    zz = np.multiply(z, z, out=z)
    np.negative(zz, out=zz)
    zz -= 1.26551223
    acc += zz
    np.exp(acc, out=acc)
    acc *= t
    np.subtract(1.0, acc, out=acc)
    return np.where(x >= 0, acc, -acc)


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
        # (minimum(0, x) keeps x on a tie: elu(-0.0) is -0.0, as torch's)
        neg = alpha * np.expm1(np.minimum(0, x) * input_scale)
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


# The in-place forms torch records as ...Backward1 (elu_, selu_, celu_, leaky_relu_): the
# same kernel, the *result* saved (the input is overwritten) and torch's rule on it. In ndgrad
# ops, so double backward runs through the saved result's own node. (hardtanh_, silu_,
# mish_, hardsigmoid_ and hardswish_ keep the out-of-place node in torch, the value before
# the write saved as original_self: ``apply_inplace`` of the op itself.)
INPLACE_TWINS = {}


def _inplace_twin(op, node_name, vjp):
    twin = unary(op.name + "_", op.fwd, node_name, save=(("out", None),), float_only=True,
                 params=True)
    twin.def_vjp(vjp)
    INPLACE_TWINS[op.name] = twin
    return twin


def _elu_result_vjp(ctx, g):
    # torch's elu_backward on the result: scale where it is > 0, else
    # input_scale * (result + alpha * scale)
    (y,) = ctx.saved
    alpha, scale, input_scale = ctx._params
    return (where(y > 0, g * scale, g * input_scale * (y + alpha * scale)),)


def _leaky_relu_result_vjp(ctx, g):
    # the slope read at the result (same sign as the input, as torch's is_result rule)
    (y,) = ctx.saved
    return (ACT_BACKWARD["leaky_relu"].call(g, y, ctx._params),)


_inplace_twin(ELU, "EluBackward1", _elu_result_vjp)
_inplace_twin(CELU, "CeluBackward1", _elu_result_vjp)
_inplace_twin(LEAKY_RELU, "LeakyReluBackward1", _leaky_relu_result_vjp)

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


# ============================================================================ softmax family
def _softmax_fwd(x, p):
    if x.size == 0:  # NumPy's max has no identity: an empty input gives an empty result
        return x.copy()
    e = x - np.maximum.reduce(x, axis=p, keepdims=True)
    np.exp(e, out=e)
    e /= np.add.reduce(e, axis=p, keepdims=True)
    return e


_max_reduce = np.maximum.reduce
_add_reduce = np.add.reduce


def _log_softmax_fwd(x, p):
    # ufunc reductions directly: ndarray.max/.sum add a Python wrapper per call
    if x.size == 0:
        return x.copy()
    s = x - _max_reduce(x, axis=p, keepdims=True)
    s -= np.log(_add_reduce(np.exp(s), axis=p, keepdims=True))
    return s


SOFTMAX = primitive("softmax", _softmax_fwd, "SoftmaxBackward0", save=(("out", None),))
LOG_SOFTMAX = primitive("log_softmax", _log_softmax_fwd, "LogSoftmaxBackward0",
                        save=(("out", None),))
SOFTMAX.def_vmap(lambda batched, dim, x: SOFTMAX.call(x, params=dim + 1))
LOG_SOFTMAX.def_vmap(lambda batched, dim, x: LOG_SOFTMAX.call(x, params=dim + 1))


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


def _batched_softmax_vjp(kernel):
    def rule(ctx, g):
        # g carries a leading batch dim, so a non-negative dim moves by one. y is expanded (a
        # differentiable view) so the kernel sees equal shapes and its own backward needs no
        # broadcast reduction under create_graph.
        (y,) = ctx.saved
        dim = ctx._params
        return (kernel.call(g, y.expand_as(g), params=dim + 1 if dim >= 0 else dim),)
    return rule


SOFTMAX.def_batched_vjp(_batched_softmax_vjp(SOFTMAX_BW))
LOG_SOFTMAX.def_batched_vjp(_batched_softmax_vjp(LOG_SOFTMAX_BW))


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
        d_g = where(pos, ggx if ggx is not None else neg * 0, neg)
    if n[1] is not None and ggw is not None:
        d_x = where(pos, g * 0, g * ggw)
    if n[2] is not None and ggx is not None:
        d_w = _sum_to(where(pos, g * 0, g * ggx), w.shape)
    return d_g, d_x, d_w


def prelu_prim(x, w):
    return PRELU.call(x, w)


# ============================================================================ rrelu
# ``rrelu_with_noise``: ``x * noise``, the noise (a non-differentiable input, drawn by the
# caller) holding 1 for x > 0 and the slope for x <= 0. Linear in x for a fixed noise: the VJP
# and the JVP multiply by the same noise.
RRELU_WITH_NOISE = primitive("rrelu_with_noise", lambda x, noise, p: x * noise,
                             "RreluWithNoiseBackward0", save=((1, None),))


@RRELU_WITH_NOISE.def_vjp
def _(ctx, g):
    (noise,) = ctx.saved
    return g * noise, None


RRELU_WITH_NOISE.def_jvp_parts(lambda ctx, t: t * ctx.inputs[1], None)
