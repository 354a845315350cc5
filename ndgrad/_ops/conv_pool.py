"""Spatial primitives of ``nn.functional``: convolution and transposed convolution (1-D, 2-D
and 3-D, im2col + one matmul per group) and ``conv_tbc``, max / average / adaptive max pooling
(2-D and 3-D), the "sandwich" of per-dim matrices behind adaptive average pooling and
interpolate, constant / reflect / replicate / circular padding, unfold / fold (im2col /
col2im) and max unpooling.

Invariants: the kernels are written once for any number of spatial dims; 1-D convolution
and pooling run as 2-D with unit height. Forward kernels are vectorised over the batch (no
Python loop over samples); max / average pooling, col2im and the convolution's input gradient
loop only over kernel offsets (adaptive max pooling over output cells). Fast paths compute
the general kernels' math in other memory layouts and apply only where their conditions
hold: unit-stride convolutions run batch first or batch innermost (see "layouts for unit
stride"), max pooling whose windows tile the input reads contiguous per-offset planes, and a
disjoint max-pool backward is one flat assignment.
Every backward is a primitive with its own rule (a convolution's gradients are convolutions;
a pooling backward's adjoint is the pooling again or a gather of the picked positions), so
double backward is exact. An input that a node needs only the shape of is not saved: its
shape rides in the node's extras (``x_meta``, ``x_shape``, ``hw``).
"""

import math

import numpy as np

from .._tensor import Tensor
from .registry import jvp_from_parts, no_forward_ad, primitive

__all__ = []


def _stand_in(shape, dtype):
    """A zero-stride tensor of `shape` standing for an input a node did not save because its
    gradient is not asked for (the kernels read only its shape; ndgrad.compile takes it as
    a constant made from a shape)."""
    return Tensor(np.broadcast_to(np.zeros((), dtype), shape))


def _input_stand_in(ctx):
    """The unsaved input of a node as a zero-stride tensor of its shape and dtype (x_meta)."""
    shape, dtype = ctx._extras()["x_meta"]
    return _stand_in(shape, dtype)


# ============================================================================ convolution
# The kernels work on (N, C, *spatial) arrays with 2 or 3 spatial dims (a 1-D convolution runs
# as 2-D with unit height); "nd" below is the number of spatial dims.
def _pad_nd(x, pads):
    """Zero-pad the trailing spatial dims of x by ``pads`` ((lo, hi) per dim)."""
    if not any(lo or hi for lo, hi in pads):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(pads))


def _out_sizes(sizes, kshape, stride, dilation):
    return tuple((sizes[i] - dilation[i] * (kshape[i] - 1) - 1) // stride[i] + 1
                 for i in range(len(kshape)))


def _im2col(x, kshape, stride, dilation):
    """(N, C, *S) padded -> strided view (N, C, *k, *So) (no copy)."""
    nd = len(kshape)
    outs = _out_sizes(x.shape[2:], kshape, stride, dilation)
    s = x.strides
    return np.lib.stride_tricks.as_strided(
        x, x.shape[:2] + tuple(kshape) + outs,
        s[:2] + tuple(s[2 + i] * dilation[i] for i in range(nd))
        + tuple(s[2 + i] * stride[i] for i in range(nd)), writeable=False)


def _cols_matrix(cols, nd, groups):
    """(N, C, *k, *So) -> (groups, C/g * K, N * L): channel and kernel offsets as rows."""
    perm = (1,) + tuple(range(2, 2 + nd)) + (0,) + tuple(range(2 + nd, 2 + 2 * nd))
    t = cols.transpose(perm)
    rows = int(np.prod(t.shape[:1 + nd]))
    return t.reshape(groups, rows // groups, -1)


def _batch_first(out, o, n, outs):
    """(O, N * L) -> contiguous (N, O, *So)."""
    nd = len(outs)
    out = out.reshape((o, n) + tuple(outs))
    return np.ascontiguousarray(out.transpose((1, 0) + tuple(range(2, 2 + nd))))


def _channels_first(g, groups):
    """(N, O, *So) -> (groups, O/g, N * L)."""
    nd = g.ndim - 2
    o = g.shape[1]
    return g.transpose((1, 0) + tuple(range(2, 2 + nd))).reshape(groups, o // groups, -1)


def _conv_np(x, w, stride, padding, dilation, groups):
    """Cross-correlation; x (N, C, *S), w (O, C/g, *k) -> (N, O, *So)."""
    if all(s == 1 for s in stride):
        if _batch_first_wins(w, groups):
            return _conv_batch_major(x, w, stride, padding, dilation, groups)
        return _conv_batch_last(x, w, padding, dilation, groups)
    return _conv_general(x, w, stride, padding, dilation, groups)


def _conv_general(x, w, stride, padding, dilation, groups):
    """_conv_np in the batch-second layout (any stride)."""
    n = x.shape[0]
    o = w.shape[0]
    nd = w.ndim - 2
    xp = _pad_nd(x, tuple((p, p) for p in padding))
    cols = _im2col(xp, w.shape[2:], stride, dilation)
    outs = cols.shape[2 + nd:]
    cm = _cols_matrix(cols, nd, groups)
    if groups == 1:
        out = w.reshape(o, -1) @ cm[0]   # one GEMM with the (O, K) weight
    else:
        out = np.matmul(w.reshape(groups, o // groups, -1), cm)
    return _batch_first(out, o, n, outs)


def _conv_input_grad_np(g, w, in_sizes, stride, padding, dilation, groups):
    """Adjoint of _conv_np in x: g (N, O, *So) -> (N, C, *S) (col2im)."""
    n, o = g.shape[:2]
    outs = g.shape[2:]
    nd = len(outs)
    cg = w.shape[1]
    kshape = w.shape[2:]
    c = cg * groups
    if groups == 1:
        cols = w.reshape(o, -1).T @ _channels_first(g, 1)[0]
    else:
        cols = np.matmul(w.reshape(groups, o // groups, -1).transpose(0, 2, 1),
                         _channels_first(g, groups))
    cols = cols.reshape((c,) + tuple(kshape) + (n,) + tuple(outs))
    padded = tuple(max(in_sizes[i] + 2 * padding[i],
                       (outs[i] - 1) * stride[i] + dilation[i] * (kshape[i] - 1) + 1)
                   for i in range(nd))
    out = np.zeros((c, n) + padded, g.dtype)
    for off in np.ndindex(*kshape):
        sl = tuple(slice(off[i] * dilation[i], off[i] * dilation[i]
                         + stride[i] * (outs[i] - 1) + 1, stride[i]) for i in range(nd))
        out[(slice(None), slice(None)) + sl] += cols[(slice(None),) + off]
    out = out[(slice(None), slice(None))
              + tuple(slice(padding[i], padding[i] + in_sizes[i]) for i in range(nd))]
    return np.ascontiguousarray(out.transpose((1, 0) + tuple(range(2, 2 + nd))))


def _conv_weight_grad_np(x, g, wshape, stride, padding, dilation, groups):
    """Adjoint of _conv_np in w: -> (O, C/g, *k)."""
    nd = len(wshape) - 2
    xp = _pad_nd(x, tuple((p, p) for p in padding))
    cols = _im2col(xp, wshape[2:], stride, dilation)
    outs = g.shape[2:]
    cols = cols[(Ellipsis,) + tuple(slice(0, s) for s in outs)]
    cm = _cols_matrix(cols, nd, groups)
    if groups == 1:
        gw = _channels_first(g, 1)[0] @ cm[0].T
    else:
        gw = np.matmul(_channels_first(g, groups), cm.transpose(0, 2, 1))
    return gw.reshape(wshape)


# ------------------------------------------------------------------ layouts for unit stride
# The general kernels above keep the batch second, (C, N, *S), so im2col copies and col2im
# adds runs of one output row (Wo elements), each run a trip through NumPy's inner loop. With
# unit stride two other layouts make those runs long or the transposes unnecessary:
# - batch innermost, (C, *S, N): a run is an output row times the batch (Wo * N elements).
#   It is the general kernels applied to one "sample" whose batch is a trailing spatial dim
#   of kernel size 1 (_batch_last); x, g and the result are transposed once each.
# - batch first, (N, C, *k, L) (_conv_batch_major): one GEMM per sample writes (N, O, L)
#   directly; its im2col has C * K rows per output row, against O rows of the transposing
#   copy of the output in the batch-innermost forward, so it wins where C * K <= O.
def _batch_last(a, padding=None):
    """(N, C, *S) -> (1, C, *S, N): the batch as a trailing spatial dim of one sample (with
    kernel size 1 there, a convolution of it is the batched convolution). A view; made
    contiguous when given zero `padding` (the kernels' padding copy does it otherwise), so
    that im2col reads contiguous runs."""
    t = a.transpose((1,) + tuple(range(2, a.ndim)) + (0,))[None]
    return np.ascontiguousarray(t) if padding is not None and not any(padding) else t


def _batch_to_front(a):
    """(C, *S, N) -> contiguous (N, C, *S): the same copy as
    ``np.ascontiguousarray(np.moveaxis(a, -1, 0))``, blocked. NumPy's plain copy reads `a`
    with stride N along its innermost output dim, and past the caches (a few MB) it costs
    10x a copy; as a 2-D transpose in row blocks of about 32 KB each block is read once."""
    n = a.shape[-1]
    if a.nbytes < (1 << 20) or n < 16 or not a.flags.c_contiguous:
        return np.ascontiguousarray(np.moveaxis(a, -1, 0))
    src = a.reshape(-1, n)
    m = src.shape[0]
    out = np.empty((n, m), a.dtype)
    step = max(16, 32768 // (n * a.itemsize))
    for m0 in range(0, m, step):
        out[:, m0:m0 + step] = src[m0:m0 + step].T
    return out.reshape((n,) + a.shape[:-1])


def _unit_params(padding, dilation):
    """(stride, padding, dilation) of the batch-innermost convolution: the trailing batch dim
    has unit stride and dilation and no padding."""
    nd = len(padding)
    return (1,) * (nd + 1), tuple(padding) + (0,), tuple(dilation) + (1,)


def _conv_batch_last(x, w, padding, dilation, groups):
    """Unit-stride _conv_np with the batch innermost."""
    stride, padding, dilation = _unit_params(padding, dilation)
    out = _conv_general(_batch_last(x, padding), w[..., None], stride, padding, dilation,
                        groups)
    return _batch_to_front(out[0])


def _conv_grads_batch_last(g, x, w, padding, dilation, groups, need_x, need_w):
    """(grad_input, grad_weight) (None where not needed) of a unit-stride convolution with the
    batch innermost."""
    xt, gt, wt = _batch_last(x, padding if need_w else None), _batch_last(g), w[..., None]
    stride, padding, dilation = _unit_params(padding, dilation)
    gx = gw = None
    if need_x:
        gx = _conv_input_grad_np(gt, wt, xt.shape[2:], stride, padding, dilation, groups)
        gx = _batch_to_front(gx[0])
    if need_w:
        gw = _conv_weight_grad_np(xt, gt, wt.shape, stride, padding, dilation, groups)[..., 0]
    return gx, gw


def _batch_first_wins(w, groups):
    """Whether a unit-stride convolution with weight w runs batch first: where C * K (the
    im2col rows per output row) is at most O (the rows of the output or gradient that the
    batch-innermost layout transposes)."""
    return w.shape[1] * groups * math.prod(w.shape[2:]) <= w.shape[0]


def _conv_batch_major(x, w, stride, padding, dilation, groups):
    """_conv_np with im2col rows per sample, (N, groups, C/g * K, L), and one GEMM per sample
    and group whose result is already (N, O, L): no transposing copy. Its im2col copies
    C * K rows of one output row's length per sample and output row, so it is the cheaper
    forward where C * K is at most O (_batch_first_wins)."""
    n, o = x.shape[0], w.shape[0]
    xp = _pad_nd(x, tuple((p, p) for p in padding))
    cols = _im2col(xp, w.shape[2:], stride, dilation)   # (N, C, *k, *So)
    outs = cols.shape[2 + len(stride):]
    rows = w.shape[1] * math.prod(w.shape[2:])   # explicit sizes: N may be 0
    cols = cols.reshape(n, groups, rows, math.prod(outs))
    out = np.matmul(w.reshape(groups, o // groups, rows), cols)
    return out.reshape((n, o) + tuple(outs))


def _conv_weight_grad_batch_major(x, g, wshape, padding, dilation, groups):
    """Unit-stride _conv_weight_grad_np batch first: one GEMM per sample and group on the
    (N, C/g * K, L) im2col of _conv_batch_major, summed over the batch (g is not
    transposed)."""
    n, o = g.shape[:2]
    nd = len(wshape) - 2
    xp = _pad_nd(x, tuple((p, p) for p in padding))
    cols = _im2col(xp, wshape[2:], (1,) * nd, dilation)
    cols = cols[(Ellipsis,) + tuple(slice(0, s) for s in g.shape[2:])]
    rows, cells = wshape[1] * math.prod(wshape[2:]), math.prod(g.shape[2:])
    cols = cols.reshape(n, groups, rows, cells)
    gw = np.matmul(g.reshape(n, groups, o // groups, cells), cols.transpose(0, 1, 3, 2))
    return gw.sum(axis=0).reshape(wshape)


def _spatial(shape):
    """Spatial sizes as the kernels see them: a 1-D convolution runs as 2-D with unit height."""
    return tuple(shape[2:]) if len(shape) != 3 else (1,) + tuple(shape[2:])


def _conv_out_sizes(p, x_sp, w_sp):
    stride, padding, dilation, transposed, output_padding, groups = p
    nd = len(stride)
    if not transposed:
        return tuple((x_sp[i] + 2 * padding[i] - dilation[i] * (w_sp[i] - 1) - 1) // stride[i]
                     + 1 for i in range(nd))
    return tuple((x_sp[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (w_sp[i] - 1)
                 + output_padding[i] + 1 for i in range(nd))


def _conv_fwd(x, w, b, p):
    if x.ndim == 3:
        return _conv_fwd(x[:, :, None], w[:, :, None], b, p)[:, :, 0]
    stride, padding, dilation, transposed, output_padding, groups = p
    if not transposed:
        out = _conv_np(x, w, stride, padding, dilation, groups)
    else:
        sizes = _conv_out_sizes(p, x.shape[2:], w.shape[2:])
        out = _conv_input_grad_np(x, w, sizes, stride, padding, dilation, groups)
    if b is not None:
        out += b.reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


def _conv_bw_fwd(g, x, w, p):
    """(grad_input, grad_weight, grad_bias) of a convolution; params end with a mask."""
    *cp, mask = p
    if x.ndim == 3:
        res = _conv_bw_fwd(g[:, :, None], x[:, :, None], w[:, :, None], p)
        return tuple(r[:, :, 0] if r.ndim == 4 else r for r in res)
    stride, padding, dilation, transposed, output_padding, groups = cp
    gx = gw = gb = None
    if not transposed:
        if all(s == 1 for s in stride) and not mask[0] and _batch_first_wins(w, groups):
            gw = _conv_weight_grad_batch_major(x, g, w.shape, padding, dilation, groups)
        elif all(s == 1 for s in stride):
            gx, gw = _conv_grads_batch_last(g, x, w, padding, dilation, groups, mask[0],
                                            mask[1])
        else:
            if mask[0]:
                gx = _conv_input_grad_np(g, w, x.shape[2:], stride, padding, dilation, groups)
            if mask[1]:
                gw = _conv_weight_grad_np(x, g, w.shape, stride, padding, dilation, groups)
    else:
        if mask[0]:
            gx = _conv_np(g, w, stride, padding, dilation, groups)
            # output_padding can leave the plain convolution of g longer than x: the cells
            # past x's end belong to no input position
            gx = np.ascontiguousarray(gx[(Ellipsis,) + tuple(slice(0, s) for s in x.shape[2:])])
        if mask[1]:
            gw = _conv_weight_grad_np(g, x, w.shape, stride, padding, dilation, groups)
    if mask[2]:   # the batch first: NumPy sums over (0, 2, 3) at once about half as fast
        gb = g.sum(axis=0).reshape(g.shape[1], math.prod(g.shape[2:])).sum(axis=1)
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
        w = _stand_in(ctx._extras()["w_shape"], g._data.dtype)
    mask = (n[0] is not None, n[1] is not None, len(n) > 2 and n[2] is not None)
    # Bilinear in (x, w): for complex tensors each gradient is the adjoint with the other
    # factor conjugated (torch's conjugate Wirtinger convention).
    gx, gw, gb = CONVOLUTION_BW.call(g, _cj(x), _cj(w), params=tuple(ctx._params) + (mask,))
    return (gx if mask[0] else None, gw if mask[1] else None, gb if mask[2] else None)


@CONVOLUTION_BW.def_vjp
def _(ctx, gs):
    g, x, w = ctx.saved
    ggx, ggw, ggb = tuple(gs) + (None,) * (3 - len(gs))
    *cp, mask = ctx._params
    cp = tuple(cp)
    stride, padding, dilation, transposed, output_padding, groups = cp
    nd = len(stride)
    n = ctx._next
    ggx = ggx if mask[0] else None
    ggw = ggw if mask[1] else None
    ggb = ggb if mask[2] else None
    d_g = d_x = d_w = None

    def conv(a, k, tr, out_sp=None):
        op = (0,) * nd
        if tr and out_sp is not None:
            nat = _conv_out_sizes((stride, padding, dilation, True, op, groups),
                                  _spatial(a._data.shape), _spatial(k._data.shape))
            op = tuple(out_sp[i] - nat[i] for i in range(nd))
        out = convolution(a, k, None, stride, padding, dilation, tr, op, groups)
        if not tr and out_sp is not None:
            # a transposed convolution's output_padding can leave the plain convolution
            # longer than the sizes wanted: the cells past them belong to no position
            lead = out._data.ndim - len(_spatial(out._data.shape))  # 1 for a 1-D conv
            for i, size in enumerate(_spatial(out._data.shape)):
                if size != out_sp[i]:
                    out = out.narrow(lead + i, 0, out_sp[i])
        return out

    g_sp = _spatial(g._data.shape)
    x_sp = _spatial(x._data.shape)
    if n[0] is not None:
        parts = []
        # every product below is bilinear: the factor that is not the cotangent is
        # conjugated for complex tensors (real ones pass through unchanged)
        if ggx is not None:
            parts.append(conv(ggx, _cj(w), transposed, g_sp))
        if ggw is not None:
            parts.append(conv(_cj(x), ggw, transposed, g_sp))
        if ggb is not None:
            parts.append(ggb.reshape((1, -1) + (1,) * (g._data.ndim - 2))
                         .expand(g._data.shape))
        if parts:
            d_g = parts[0]
            for t in parts[1:]:
                d_g = d_g + t
    if n[1] is not None and ggw is not None:
        # gw is linear in x: its adjoint is the other-kind convolution of g with ggw
        d_x = conv(_cj(g), ggw, not transposed, x_sp)
    if n[2] is not None and ggx is not None:
        # gx is linear in w; for both kinds the adjoint is the weight gradient with the
        # conv-input role taken by ggx (plain) or g (transposed), which CONVOLUTION_BW's
        # argument order gives in one call.
        d_w = CONVOLUTION_BW.call(_cj(g), ggx, w, params=cp + ((False, True, False),))[1]
    return d_g, d_x, d_w


def _cj(t):
    """The conjugate of a complex tensor (an ndgrad op, so it is differentiated); others as
    they are."""
    return t.conj() if t._data.dtype.kind == "c" else t


def _conv_bias_tangent(ctx, tb):
    out_rank = len(ctx.outputs[0]._data.shape)
    return tb.reshape((1, -1) + (1,) * (out_rank - 2)).expand(ctx.outputs[0]._data.shape)


# Convolution is bilinear in (input, weight) and affine in the bias: its JVP needs no fact
# from the wrapper (the generic rule through the VJP needs the weight's shape, which the
# per-sample path of vmap cannot attach before the next op reads the tangent).
CONVOLUTION.def_jvp(jvp_from_parts((
    lambda ctx, tx: CONVOLUTION.call(tx, ctx.inputs[1], None, params=ctx.params),
    lambda ctx, tw: CONVOLUTION.call(ctx.inputs[0], tw, None, params=ctx.params),
    _conv_bias_tangent)))


def convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    """The convolution primitive on (N, C, *S) with 2 or 3 spatial dims, or 1 (run as 2-D
    with unit height: stride, padding, ... then have 2 entries, the first for the unit dim)."""
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
# Max / average / adaptive max pooling over the trailing 2 or 3 spatial dims of (N, C, *S)
# (1-D pooling runs as 2-D with unit height). Indices are flat positions inside each
# spatial plane/volume, as torch's. Each kind has one OpDef per dimensionality (torch's
# node names differ: MaxPool2DWithIndicesBackward0 / MaxPool3DWithIndicesBackward0) sharing
# one kernel and one set of rules.
def _pool_out_size(size, k, s, pad, dil, ceil_mode):
    num = size + 2 * pad - dil * (k - 1) - 1
    if ceil_mode:
        o = -(-num // s) + 1
        if (o - 1) * s >= size + pad:   # the last window must start inside the input
            o -= 1
        return o
    return num // s + 1


def _pool_windows(x, k, s, pad, dil, ceil_mode, fill):
    """Strided windows (N, C, *So, *k) over x padded with `fill`."""
    nd = len(k)
    sizes = x.shape[2:]
    outs = tuple(_pool_out_size(sizes[i], k[i], s[i], pad[i], dil[i], ceil_mode)
                 for i in range(nd))
    hi = tuple(max((outs[i] - 1) * s[i] + dil[i] * (k[i] - 1) + 1 - sizes[i] - pad[i], 0)
               for i in range(nd))
    if any(pad) or any(hi):
        xp = np.pad(x, ((0, 0), (0, 0)) + tuple((pad[i], hi[i]) for i in range(nd)),
                    constant_values=fill)
    else:
        xp = x
    st = xp.strides
    win = np.lib.stride_tricks.as_strided(
        xp, x.shape[:2] + outs + tuple(k),
        st[:2] + tuple(st[2 + i] * s[i] for i in range(nd))
        + tuple(st[2 + i] * dil[i] for i in range(nd)), writeable=False)
    return win, outs


def _plane_strides(sizes):
    """Element strides of a C-ordered spatial plane/volume: flat index = sum(i_d * stride_d)."""
    out = [1] * len(sizes)
    for d in range(len(sizes) - 2, -1, -1):
        out[d] = out[d + 1] * sizes[d + 1]
    return out


def _tiling_planes(x, k, s, pad, dil, ceil_mode):
    """(planes, outs) when the pooling windows tile x (stride = kernel, no padding or
    dilation, no partial window; cells past the last whole window belong to none): planes is
    the contiguous (*k, N, C, *So) stack of each kernel offset's values, one copy after which
    every pass of the running max reads contiguous memory. None otherwise."""
    nd = len(k)
    sizes = x.shape[2:]
    outs = tuple(sizes[i] // k[i] for i in range(nd))
    if (tuple(k) != tuple(s) or any(pad) or any(d != 1 for d in dil) or 0 in outs
            or (ceil_mode and any(sizes[i] % k[i] for i in range(nd)))):
        return None
    crop = x[(Ellipsis,) + tuple(slice(0, outs[i] * k[i]) for i in range(nd))]
    split = crop.reshape(x.shape[:2] + sum(((outs[i], k[i]) for i in range(nd)), ()))
    perm = tuple(3 + 2 * i for i in range(nd)) + (0, 1) + tuple(2 + 2 * i for i in range(nd))
    return np.ascontiguousarray(split.transpose(perm)), outs


def _max_pool_fwd(x, p):
    k, s, pad, dil, ceil_mode = p
    nd = len(k)
    if x.ndim == nd + 1:   # unbatched (C, *S)
        out, idx = _max_pool_fwd(x[None], p)
        return out[0], idx[0]
    tiles = _tiling_planes(x, k, s, pad, dil, ceil_mode)
    if tiles is not None:
        win, outs = tiles
        lead = ()
    else:
        fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        win, outs = _pool_windows(x, k, s, pad, dil, ceil_mode, fill)
        lead = (Ellipsis,)
    pst = _plane_strides(x.shape[2:])
    offsets = list(np.ndindex(*k))
    # A running max over the kernel offsets (no window copy). torch's rule: a later value
    # replaces the max if it is greater or NaN. np.maximum agrees on the value: it propagates
    # NaN, and on equal values (+0.0 and -0.0) it returns its second operand, so the running
    # max goes second to keep the earlier zero as torch does (pinned by the tests). `off` tracks
    # the flat offset of the winner inside the plane relative to its window's origin. Where
    # windows tile the input, the flat offsets grow in scan order, so "take the later offset
    # where it won" is a maximum with (won * offset), many times faster than np.putmask
    # (with padding, offsets of different rows can alias, so the general path keeps putmask).
    odt = np.int32 if math.prod(x.shape[2:]) < 2 ** 31 else np.int64

    def running_max(nan_aware):
        out = win[lead + offsets[0]].copy()
        off = np.zeros(out.shape, odt)
        for o in offsets[1:]:
            v = win[lead + o]
            m = v > out
            if nan_aware:
                m |= np.isnan(v)
            np.maximum(v, out, out=out)
            flat = sum(o[i] * dil[i] * pst[i] for i in range(nd))
            if tiles is not None:
                np.maximum(off, np.multiply(m, flat, dtype=odt), out=off)
            else:
                np.putmask(off, m, flat)
        return out, off

    out, off = running_max(False)
    if x.dtype.kind == "f" and np.isnan(out).any():
        out, off = running_max(True)   # NaN windows: the index of the last NaN, as torch
    base = np.zeros(outs, np.int64)
    for i in range(nd):
        shape = [1] * nd
        shape[i] = outs[i]
        base = base + ((np.arange(outs[i]) * s[i] - pad[i]) * pst[i]).reshape(shape)
    return out, np.add(off, base, dtype=np.int64)


def _max_pool_bw_fwd(g, idx, p):
    shape, disjoint, nd = p
    hw = int(np.prod(shape[-nd:]))
    nc = int(np.prod(shape[:-nd]))
    cells = int(np.prod(idx.shape[-nd:]))   # explicit sizes: N may be 0
    ii = idx.reshape(nc, cells)
    gi = g.reshape(nc, cells)
    if disjoint:
        # Non-overlapping windows: every input position receives at most one gradient, so a
        # plain assignment at the flat positions is the scatter-add (1-D fancy indexing is
        # several times faster than the 2-D (plane, index) form).
        out = np.zeros(nc * hw, g.dtype)
        out[(ii + (np.arange(nc) * hw)[:, None]).ravel()] = gi.ravel()
        return out.reshape(shape)
    flat = (np.arange(nc)[:, None] * hw + ii).ravel()
    out = np.bincount(flat, weights=gi.ravel().astype(np.float64), minlength=nc * hw)
    return out.astype(g.dtype).reshape(shape)


def _max_pool_ops(nd):
    fwd = primitive(f"max_pool{nd}d_with_indices", _max_pool_fwd,
                    f"MaxPool{nd}DWithIndicesBackward0", save=(("out1", None),), n_out=2,
                    diff_outs=(True, False))
    bw = primitive(f"max_pool{nd}d_with_indices_backward", _max_pool_bw_fwd,
                   f"MaxPool{nd}DWithIndicesBackwardBackward0", save=((1, None),))

    @fwd.def_vjp
    def _(ctx, gs):
        (idx,) = ctx.saved
        k, s, pad, dil, ceil_mode = ctx._params
        disjoint = all(s[i] >= dil[i] * (k[i] - 1) + 1 for i in range(nd))
        return (bw.call(gs[0], idx, params=(ctx._extras()["x_shape"], disjoint, nd)),)

    bw.def_vjp(_gather_at_indices)
    return fwd, bw


def _gather_at_indices(ctx, gg):
    """Adjoint of a scatter-add at flat per-plane indices: gather gg at the same indices."""
    (idx,) = ctx.saved
    nd = ctx._params[2]
    lead = tuple(idx.shape[:-nd])
    plane = int(np.prod(gg.shape[-nd:]))   # explicit sizes: N may be 0
    cells = int(np.prod(idx.shape[-nd:]))
    picked = gg.reshape(*lead, plane).gather(-1, idx.reshape(*lead, cells))
    return picked.reshape(idx.shape), None


MAX_POOL2D, MAX_POOL2D_BW = _max_pool_ops(2)
MAX_POOL3D, MAX_POOL3D_BW = _max_pool_ops(3)
_MAX_POOL = {2: MAX_POOL2D, 3: MAX_POOL3D}


def max_pool_prim(x, k, s, pad, dil, ceil_mode):
    """(values, indices) of max pooling over the len(k) trailing dims of x ((N, C, *S) or
    (C, *S))."""
    out, idx = _MAX_POOL[len(k)].call(x, params=(k, s, pad, dil, ceil_mode))
    if out._grad_fn is not None:
        out._grad_fn._extras()["x_shape"] = x._data.shape
    return out, idx


max_pool2d_prim = max_pool_prim


def _avg_pool_fwd(x, p):
    k, s, pad, ceil_mode, count_include_pad, divisor = p
    nd = len(k)
    if x.ndim == nd + 1:   # unbatched (C, *S)
        return _avg_pool_fwd(x[None], p)[0]
    win, outs = _pool_windows(x, k, s, pad, (1,) * nd, ceil_mode, 0)
    total = win.sum(axis=tuple(range(-nd, 0)),
                    dtype=np.float64 if x.dtype == np.float16 else x.dtype)
    return (total / _avg_divisor(x.shape, p, outs)).astype(x.dtype)


def _avg_divisor(shape, p, outs):
    """Per output cell, the count torch divides a window's sum by (an outer product)."""
    k, s, pad, ceil_mode, count_include_pad, divisor = p
    if divisor:
        return divisor
    cnt = np.ones((), np.float64)
    for i, size in enumerate(shape[-len(k):]):
        start = np.arange(outs[i]) * s[i] - pad[i]
        end = np.minimum(start + k[i], size + pad[i])
        if count_include_pad:
            n = end - start
        else:
            n = np.minimum(end, size) - np.maximum(start, 0)
        cnt = np.multiply.outer(cnt, n)
    return cnt.astype(np.float64)


def _avg_pool_bw_fwd(g, p):
    k, s, pad, ceil_mode, count_include_pad, divisor, shape = p
    nd = len(k)
    outs = g.shape[-nd:]
    gd = (g / _avg_divisor(shape, p[:6], outs)).astype(g.dtype)
    sizes = shape[-nd:]
    padded = tuple(max(sizes[i] + 2 * pad[i], (outs[i] - 1) * s[i] + k[i]) for i in range(nd))
    out = np.zeros(tuple(shape[:-nd]) + padded, g.dtype)
    for off in np.ndindex(*k):
        out[(Ellipsis,) + tuple(slice(off[i], off[i] + s[i] * (outs[i] - 1) + 1, s[i])
                                for i in range(nd))] += gd
    return np.ascontiguousarray(
        out[(Ellipsis,) + tuple(slice(pad[i], pad[i] + sizes[i]) for i in range(nd))])


def _avg_pool_ops(nd):
    fwd = primitive(f"avg_pool{nd}d", _avg_pool_fwd, f"AvgPool{nd}DBackward0")
    bw = primitive(f"avg_pool{nd}d_backward", _avg_pool_bw_fwd,
                   f"AvgPool{nd}DBackwardBackward0")
    fwd.def_vjp(lambda ctx, g: (bw.call(g, params=tuple(ctx._params)
                                        + (ctx._extras()["x_shape"],)),))
    bw.def_vjp(lambda ctx, gg: (avg_pool_prim(gg, *ctx._params[:6]),))
    return fwd, bw


AVG_POOL2D, AVG_POOL2D_BW = _avg_pool_ops(2)
AVG_POOL3D, AVG_POOL3D_BW = _avg_pool_ops(3)
_AVG_POOL = {2: AVG_POOL2D, 3: AVG_POOL3D}


def avg_pool_prim(x, k, s, pad, ceil_mode, count_include_pad, divisor):
    """Average pooling over the len(k) trailing dims of x ((N, C, *S) or (C, *S))."""
    out = _AVG_POOL[len(k)].call(x, params=(k, s, pad, ceil_mode, count_include_pad, divisor))
    if out._grad_fn is not None:
        out._grad_fn._extras()["x_shape"] = x._data.shape
    return out


avg_pool2d_prim = avg_pool_prim


# ============================================================================ adaptive max
def _adaptive_max_fwd(x, p):
    """params: per spatial dim, the (starts, ends) of its adaptive windows."""
    nd = len(p)
    if x.ndim == nd + 1:   # unbatched (C, *S)
        out, idx = _adaptive_max_fwd(x[None], p)
        return out[0], idx[0]
    lead = x.shape[:2]
    sizes = x.shape[2:]
    outs = tuple(len(st) for st, _ in p)
    pst = _plane_strides(sizes)
    out = np.empty(lead + outs, x.dtype)
    idx = np.empty(lead + outs, np.int64)
    for cell in np.ndindex(*outs):
        bounds = [(p[i][0][cell[i]], p[i][1][cell[i]]) for i in range(nd)]
        win = x[(Ellipsis,) + tuple(slice(a, b) for a, b in bounds)]
        flat = win.reshape(lead + (int(np.prod(win.shape[2:])),))
        a = np.argmax(flat, axis=-1)
        if x.dtype.kind == "f":
            nan = np.isnan(flat)
            if nan.any():
                a = np.where(nan.any(-1), np.argmax(nan, axis=-1), a)
        out[(Ellipsis,) + cell] = np.take_along_axis(flat, a[..., None], -1)[..., 0]
        pos = np.unravel_index(a, win.shape[2:])
        idx[(Ellipsis,) + cell] = sum((bounds[i][0] + pos[i]) * pst[i] for i in range(nd))
    return out, idx


def _adaptive_max_ops(nd):
    fwd = primitive(f"adaptive_max_pool{nd}d", _adaptive_max_fwd,
                    f"AdaptiveMaxPool{nd}DBackward0", save=(("out1", None),), n_out=2,
                    diff_outs=(True, False))
    bw = primitive(f"adaptive_max_pool{nd}d_backward", _max_pool_bw_fwd,
                   f"AdaptiveMaxPool{nd}DBackwardBackward0", save=((1, None),))
    fwd.def_vjp(lambda ctx, gs: (bw.call(gs[0], ctx.saved[0],
                                         params=(ctx._extras()["x_shape"], False, nd)),))
    bw.def_vjp(_gather_at_indices)
    return fwd, bw


ADAPTIVE_MAX_POOL2D, ADAPTIVE_MAX_POOL2D_BW = _adaptive_max_ops(2)
ADAPTIVE_MAX_POOL3D, ADAPTIVE_MAX_POOL3D_BW = _adaptive_max_ops(3)
_ADAPTIVE_MAX = {2: ADAPTIVE_MAX_POOL2D, 3: ADAPTIVE_MAX_POOL3D}


def adaptive_max_pool_prim(x, *bounds):
    """(values, indices) of adaptive max pooling; one (starts, ends) per trailing dim."""
    out, idx = _ADAPTIVE_MAX[len(bounds)].call(x, params=tuple(bounds))
    if out._grad_fn is not None:
        out._grad_fn._extras()["x_shape"] = x._data.shape
    return out, idx


adaptive_max_pool2d_prim = adaptive_max_pool_prim


# ============================================================================ sandwich
# ``out = Lm @ x @ Rm.T`` over the last two dims (adaptive average pooling, upsampling), and
# its 3-d form: one matrix per trailing dim, each applied along its own dim (params = the
# matrices in dim order). The op is linear; its adjoint applies the transposed matrices.
_SANDWICH = {}


def _apply_mats(x, mats, transpose):
    if len(mats) == 2:
        lm, rm = mats
        if transpose:
            return np.matmul(np.matmul(lm.T, x), rm)
        return np.matmul(np.matmul(lm, x), rm.T)
    k = len(mats)
    for i, m in enumerate(mats):
        d = x.ndim - k + i
        x = np.moveaxis(np.matmul(m.T if transpose else m, np.moveaxis(x, d, -2)), -2, d)
    return x


def _sandwich_ops(node_name):
    ops = _SANDWICH.get(node_name)
    if ops is not None:
        return ops
    fwd = primitive("sandwich_" + node_name, lambda x, p: _apply_mats(x, p, False), node_name)
    bw = primitive("sandwich_t_" + node_name, lambda g, p: _apply_mats(g, p, True),
                   node_name.replace("Backward0", "BackwardBackward0"))
    fwd.def_vjp(lambda ctx, g: (bw.call(g, params=ctx._params),))
    bw.def_vjp(lambda ctx, gg: (fwd.call(gg, params=ctx._params),))
    _SANDWICH[node_name] = (fwd, bw)
    return fwd, bw


def sandwich(x, lm, rm, node_name):
    return _sandwich_ops(node_name)[0].call(x, params=(lm, rm))


def sandwich_nd(x, mats, node_name):
    """The linear map applying ``mats[i]`` along trailing dim ``i`` of x."""
    return _sandwich_ops(node_name)[0].call(x, params=tuple(mats))


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
            # Negative pads crop, as torch: a replicate pad reads source j - lo clamped into
            # the input (so it can crop everything and still replicate the edge); reflect and
            # circular pads crop first and extend what is left.
            if np_mode == "edge":
                idx = np.clip(np.arange(size + lo + hi) - lo, 0, size - 1)
            else:
                kept = np.arange(max(-lo, 0), size - max(-hi, 0))
                idx = np.pad(kept, (max(lo, 0), max(hi, 0)), mode=np_mode)
            p.append((dim, idx, size))
    return ops[0].call(x, params=tuple(p))


# ============================================================================ unfold / fold
def _im2col_fwd(x, p):
    k, d, pad, s = p
    xp = _pad_nd(x, ((pad[0], pad[0]), (pad[1], pad[1])))
    cols = _im2col(xp, k, s, d)
    n, c = x.shape[:2]
    # the block count spelled out: -1 cannot be inferred when the batch is empty
    ho = (xp.shape[2] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    wo = (xp.shape[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    return cols.reshape(n, c * k[0] * k[1], ho * wo)


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
# ``max_unpool2d/3d``: (N, C, *S) or (C, *S) values scattered into zeros of (..., *O) at flat
# per-plane indices (the indices max pooling returns). params = O. Linear in the values; the
# VJP gathers the gradient back at the same indices (in ndgrad ops, so differentiable).
def _max_unpool_fwd(x, idx, p):
    lead = x.shape[:-len(p)]
    out = np.zeros(lead + (int(np.prod(p)),), x.dtype)
    cells = (int(np.prod(x.shape[-len(p):])),)   # explicit sizes: N may be 0
    np.put_along_axis(out, idx.reshape(lead + cells), x.reshape(lead + cells), axis=-1)
    return out.reshape(lead + tuple(p))


def _max_unpool_op(nd):
    op = primitive(f"max_unpool{nd}d", _max_unpool_fwd, f"MaxUnpool{nd}DBackward0",
                   save=((1, None),), linear=True)

    @op.def_vjp
    def _(ctx, g):
        (idx,) = ctx.saved
        lead = tuple(idx.shape[:-nd])
        plane = int(np.prod(g.shape[-nd:]))   # explicit sizes: N may be 0
        cells = int(np.prod(idx.shape[-nd:]))
        flat = g.reshape(*lead, plane).gather(-1, idx.reshape(*lead, cells))
        return flat.reshape(idx.shape), None
    return op


MAX_UNPOOL2D = _max_unpool_op(2)
MAX_UNPOOL3D = _max_unpool_op(3)


# ============================================================================ conv_tbc
# ``torch.conv_tbc``: a 1-D convolution over time-major (T, B, C_in) input with a (K, C_in,
# C_out) weight and a symmetric time padding (negative crops). Its kernel and gradients are the
# convolution's on the (B, C, T) layout; torch defines no forward-mode rule for it.
def _tbc_params(pad):
    return ((1, 1), (0, max(pad, 0)), (1, 1), False, (0, 0), 1)


def _conv_tbc_fwd(x, w, b, p):
    (pad,) = p
    xt = x.transpose(1, 2, 0)
    if pad < 0:
        xt = xt[:, :, -pad: xt.shape[2] + pad]
    out = _conv_fwd(xt, np.ascontiguousarray(w.transpose(2, 1, 0)), b, _tbc_params(pad))
    return np.ascontiguousarray(out.transpose(2, 0, 1))


CONV_TBC = primitive("conv_tbc", _conv_tbc_fwd, "ConvTbcBackward0",
                     save=((0, None), (1, None)))


@CONV_TBC.def_vjp
def _(ctx, g):
    x, w = ctx.saved
    (pad,) = ctx._params
    n = ctx._next
    xt = x.permute(1, 2, 0)
    if pad < 0:
        xt = xt[:, :, -pad: x._data.shape[0] + pad]
    mask = (n[0] is not None, n[1] is not None, n[2] is not None)
    gx, gw, gb = CONVOLUTION_BW.call(g.permute(1, 2, 0), xt, w.permute(2, 1, 0),
                                     params=_tbc_params(pad) + (mask,))
    if mask[0]:
        gx = gx.permute(2, 0, 1)
        if pad < 0:
            gx = constant_pad(gx, ((-pad, -pad), (0, 0), (0, 0)), 0)
    return (gx if mask[0] else None, gw.permute(2, 1, 0) if mask[1] else None,
            gb if mask[2] else None)


CONV_TBC.def_jvp(no_forward_ad("conv_tbc"))
