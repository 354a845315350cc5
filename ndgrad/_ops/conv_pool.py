"""Spatial primitives of ``nn.functional``: convolution and transposed convolution (1-D and
2-D, im2col + one matmul per group), max / average / adaptive max pooling, the "sandwich"
``Lm @ x @ Rm.T`` behind adaptive average pooling and interpolate, constant / reflect /
replicate / circular padding, and unfold / fold (im2col / col2im).

Invariants: forward kernels are vectorised over the batch (no Python loop over samples);
max / average pooling, col2im and the convolution's input gradient loop only over kernel
offsets (adaptive max pooling over output cells). A 1-D convolution runs as 2-D with unit
height. Every backward is a primitive with its own rule (a convolution's gradients are
convolutions; a pooling backward's adjoint is the pooling again or a gather of the picked
positions), so double backward is exact. An input that a node needs only the shape of is not
saved: its shape rides in the node's extras (``x_meta``, ``x_shape``, ``hw``).
"""

import numpy as np

from .._tensor import Tensor
from .registry import primitive

__all__ = []


def _input_stand_in(ctx):
    """The unsaved input of a node as a zero-stride tensor of its shape and dtype (x_meta)."""
    shape, dtype = ctx._extras()["x_meta"]
    return Tensor(np.broadcast_to(np.zeros((), dtype), shape))


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
        x = _input_stand_in(ctx)
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


# ============================================================================ max unpooling
# ``max_unpool2d``: (N, C, H, W) or (C, H, W) values scattered into zeros of (..., oH, oW) at
# flat per-plane indices (the indices max_pool2d returns). params = (oH, oW). Linear in the
# values; the VJP gathers the gradient back at the same indices (in ndgrad ops, so
# differentiable).
def _max_unpool2d_fwd(x, idx, p):
    lead = x.shape[:-2]
    out = np.zeros(lead + (p[0] * p[1],), x.dtype)
    np.put_along_axis(out, idx.reshape(lead + (-1,)), x.reshape(lead + (-1,)), axis=-1)
    return out.reshape(lead + (p[0], p[1]))


MAX_UNPOOL2D = primitive("max_unpool2d", _max_unpool2d_fwd, "MaxUnpool2DBackward0",
                         save=((1, None),), linear=True)


@MAX_UNPOOL2D.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    lead = tuple(idx.shape[:-2])
    flat = g.reshape(*lead, -1).gather(-1, idx.reshape(*lead, -1))
    return flat.reshape(idx.shape), None
