"""Convolution, pooling and unpooling of ``ndgrad.nn.functional`` in 1, 2 and 3 spatial dims.

One implementation per kind, parameterised by the number of spatial dims ``nd``: argument
normalisation and torch's argument errors here, the kernels and rules in
``_ops/conv_pool.py``. 1-D convolution runs as 2-D with unit height inside the primitive (so
its grad_fn is torch's ConvolutionBackward0); 1-D pooling and max unpooling go through the
2-D functions on a unit dim as torch's do (their grad_fn is SqueezeBackward1, as torch's).
Pooling takes unbatched (C, *S) input natively (grad_fn the pooling node, as torch's);
convolution adds and removes the batch dim (SqueezeBackward1, as torch's).
Re-exported by ``nn/functional.py``; the names listed in ``__all__`` are public there.
"""

import warnings

import numpy as np

from . import _dropout_noise
from .._ops.conv_pool import (CONV_TBC, MAX_UNPOOL2D, MAX_UNPOOL3D, adaptive_max_pool_prim,
                              avg_pool_prim, constant_pad, convolution, max_pool_prim,
                              sandwich, sandwich_nd)
from .._ops.arguments import wrap_dim
from .._ops.linalg_common import _tname
from .._tensor import Tensor, _c_name
from ._functional_activations import relu

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "conv_tbc", "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "dropout3d",
]

_WORDS = {1: "one", 2: "two", 3: "three"}


def _ntuple(v, n):
    if isinstance(v, (tuple, list)):
        return tuple(None if a is None else int(a) for a in v)
    return (int(v),) * n


# ============================================================================ convolution
def _conv_padding(padding, kernel, dilation, stride):
    """(symmetric padding per dim, extra high-side pads or None) for int/tuple/'same'/'valid'."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * len(kernel), None
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        sym, extra = [], []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            sym.append(total // 2)
            extra.append(total - 2 * (total // 2))
        return tuple(sym), (tuple(extra) if any(extra) else None)
    return _ntuple(padding, len(kernel)), None


def _lift_1d(nd, stride, padding, dilation, output_padding):
    """The 2-D parameters of a 1-D convolution (a unit height in front)."""
    if nd != 1:
        return stride, padding, dilation, output_padding
    return (1,) + stride, (0,) + padding, (1,) + dilation, (0,) + output_padding


def _check_conv_common(stride, padding):
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")


def _check_conv_dtypes(input, weight, bias):
    """torch's errors for a weight or bias of another dtype than the input (nothing is
    promoted)."""
    if weight._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected scalar type {_tname(input)} but found {_tname(weight)}")
    if bias is not None and bias._data.dtype != input._data.dtype:
        raise RuntimeError(f"Input type ({_c_name(input._data.dtype)}) and bias type "
                           f"({_c_name(bias._data.dtype)}) should be the same")


def _conv_nd(input, weight, bias, stride, padding, dilation, groups, nd, name):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    batched = input.dim() == nd + 2
    if not batched:
        input = input.unsqueeze(0)
    if weight.dim() != nd + 2:
        raise RuntimeError(f"expected stride to be a single integer value or a list of "
                           f"{weight.dim() - 2} values to match the convolution dimensions, "
                           f"but got stride={list(_ntuple(stride, nd))}")
    stride = _ntuple(stride, nd)
    dilation = _ntuple(dilation, nd)
    pads, extra = _conv_padding(padding, tuple(weight.shape[2:]), dilation, stride)
    _check_conv_common(stride, pads)
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    _check_conv_dtypes(input, weight, bias)
    c = input.shape[1]
    if c != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(input.shape)} to have "
                           f"{weight.shape[1] * groups} channels, but got {c} channels instead")
    if extra is not None:
        # torch pads the odd remainder of 'same' on the high side of each dim.
        input = constant_pad(input, ((0, 0), (0, 0)) + tuple((0, e) for e in extra), 0.0)
    padded = [n + 2 * p for n, p in zip(input.shape[2:], pads)]
    kernel = [d * (k - 1) + 1 for d, k in zip(dilation, weight.shape[2:])]
    if any(n < k for n, k in zip(padded, kernel)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                           "than actual input size")
    s, p, d, op = _lift_1d(nd, stride, pads, dilation, (0,) * nd)
    out = convolution(input, weight, bias, s, p, d, False, op, groups)
    return out if batched else out.squeeze(0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation over (N, C, L) with weight (O, C/groups, k)."""
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation over (N, C, H, W) with weight (O, C/groups, kh, kw).

    `padding` is an int, a pair, "valid" or "same" (stride 1). One im2col GEMM per call.

    >>> conv2d(ndgrad.ones(1, 1, 3, 3), ndgrad.ones(1, 1, 2, 2)).shape
    torch.Size([1, 1, 2, 2])
    """
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation over (N, C, D, H, W) with weight (O, C/groups, kd, kh, kw)."""
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                       nd):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"conv_transpose{nd}d, but got input of size: {list(input.shape)}")
    batched = input.dim() == nd + 2
    if not batched:
        input = input.unsqueeze(0)
    stride = _ntuple(stride, nd)
    padding = _ntuple(padding, nd)
    output_padding = _ntuple(output_padding, nd)
    dilation = _ntuple(dilation, nd)
    _check_conv_common(stride, padding)
    if input.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"input{list(input.shape)} to have {weight.shape[0]} channels, but "
                           f"got {input.shape[1]} channels instead")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            names = ("depth", "height", "width")[3 - max(nd, 2):]
            parts = []
            lifted = _lift_1d(nd, stride, padding, dilation, output_padding)
            for what, vals in (("output_padding", lifted[3]), ("stride", lifted[0]),
                               ("dilation", lifted[2])):   # torch reports 1-D as 2-D
                parts += [f"{what}_{n}: {v}" for n, v in zip(names, vals)]
            raise RuntimeError("output padding must be smaller than either stride or "
                               f"dilation, but got {' '.join(parts)}")
    s, p, d, op = _lift_1d(nd, stride, padding, dilation, output_padding)
    out = convolution(input, weight, bias, s, p, d, True, op, groups)
    return out if batched else out.squeeze(0)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                              dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                              dilation, 2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 3-D convolution (the adjoint of conv3d in its input)."""
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                              dilation, 3)


def torch_convolution(input, weight, bias, stride, padding, dilation, transposed,
                      output_padding, groups):
    """``torch.convolution``: the general convolution (N, C, *S) with 1 to 3 spatial dims."""
    nd = weight.dim() - 2
    if nd not in (1, 2, 3) or input.dim() != nd + 2:
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for "
                           f"{weight.dim()}-dimensional weight {list(weight.shape)}, but got "
                           f"{input.dim()}-dimensional input of size {list(input.shape)} "
                           "instead")
    if transposed:
        return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                                  dilation, nd)
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, nd,
                    f"conv{nd}d")


def conv_tbc(input, weight, bias, pad=0):
    """1-D convolution over time-major (T, B, C_in) input with a (K, C_in, C_out) weight."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    t_out = input.shape[0] + 2 * int(pad) - weight.shape[0] + 1
    if t_out < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {t_out}: "
                           f"[{t_out}, {input.shape[1]}, {weight.shape[2]}]")
    return CONV_TBC.call(input, weight, bias, params=(int(pad),))


# ============================================================================ pooling
def _pool_tuple(v, nd, fn, what, default=None):
    """torch's checks of a pooling argument: an int or a tuple of `nd` ints (or 1)."""
    if v is None or (isinstance(v, (tuple, list)) and not v):
        if default is None:
            raise RuntimeError(f"{fn}: {what} must be given")
        return default
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]),) * nd
        if len(v) != nd:
            word = _WORDS[nd]
            if fn.startswith("avg"):
                msg = {"kernel_size": "must be a single int", "stride":
                       "must be omitted, a single int", "padding": "must be a single int"}
                if nd == 2:
                    msg["kernel_size"] = "must either be a single int"
            else:
                msg = {"kernel_size": "must either be a single int", "stride":
                       "must either be omitted, a single int", "padding":
                       "must either be a single int", "dilation": "must be either a single int"}
            raise RuntimeError(f"{fn}: {what} {msg[what]}, or a tuple of {word} ints")
        return tuple(int(a) for a in v)
    return (int(v),) * nd


def _pool_args(kernel_size, stride, padding, dilation, nd, fn):
    k = _pool_tuple(kernel_size, nd, fn, "kernel_size")
    s = _pool_tuple(stride, nd, fn, "stride", default=k)
    p = _pool_tuple(padding, nd, fn, "padding")
    d = _pool_tuple(dilation, nd, fn, "dilation") if dilation is not None else (1,) * nd
    letters = ("T", "H", "W")[3 - nd:]
    if any(x == 0 for x in s):
        raise RuntimeError("stride should not be zero")
    if any(x <= 0 for x in k):
        shown = " ".join(f"k{a}: {v}" for a, v in zip(letters, k))
        raise RuntimeError(f"kernel size should be greater than zero, but got {shown}")
    if any(x <= 0 for x in d):
        shown = " ".join(f"dilation{a}: {v}" for a, v in zip(letters, d))
        raise RuntimeError(f"dilation should be greater than zero, but got {shown}")
    for pi in p:
        if pi < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pi}")
    for pi, ki, di in zip(p, k, d):
        if pi > (di * (ki - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pi}, kernel_size={ki} and dilation={di}")
    return k, s, p, d


def _pool_out(size, k, s, p, d, ceil_mode):
    num = size + 2 * p - d * (k - 1) - 1
    o = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    return o


def _check_pool_output(x, k, s, p, d, ceil_mode):
    nd = len(k)
    sizes = tuple(x.shape[-nd:])
    outs = [_pool_out(*a, ceil_mode) for a in zip(sizes, k, s, p, d)]
    if min(outs) < 1:
        c = x.shape[-nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (c,) + sizes))}). "
                           "Calculated output size: "
                           f"({'x'.join(map(str, [c] + outs))}). Output size is too small")


def _check_pool_input(input, nd, fn):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           "input")
    shape = list(input.shape)
    if 0 in shape[input.dim() - nd - 1:]:   # an empty channel or spatial dim
        if nd == 2:
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                               f"size for input, but got:{shape}")
        # torch's message names dimension 0 whichever is empty
        raise RuntimeError(f"{fn}(): Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {shape} and non-batch dimension 0 "
                           "has length zero!")


def _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, nd):
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, nd, f"max_pool{nd}d")
    _check_pool_input(input, nd, "max_pool3d_with_indices_out_cpu_template")
    _check_pool_output(input, k, s, p, d, ceil_mode)
    return max_pool_prim(input, k, s, p, d, bool(ceil_mode))


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """(values, flat indices into each H*W plane) of 2-D max pooling."""
    return _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, 2)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """(values, flat indices into each D*H*W volume) of 3-D max pooling."""
    return _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, 3)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """(values, indices) of 1-D max pooling (through the 2-D kernel on a unit height)."""
    if input.dim() not in (2, 3) or 0 in input.shape[1:]:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    k, s, p, d = _max_pool1d_args(kernel_size, stride, padding, dilation)
    o = _pool_out(input.shape[-1], k[0], s[0], p[0], d[0], ceil_mode)
    if o < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {o}")
    out, idx = _max_pool_nd(input.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + p, (1,) + d,
                            ceil_mode, 2)
    return out.squeeze(-2), idx.squeeze(-2)


def _max_pool1d_args(kernel_size, stride, padding, dilation):
    """torch's own argument checks of max_pool1d (messages differ from the 2-d/3-d ones)."""
    def one(v, what, kinds):
        if isinstance(v, (tuple, list)):
            if len(v) != 1:
                raise RuntimeError(f"max_pool1d() {what} must be {kinds} of size 1 but got size "
                                   f"{len(v)}")
            return int(v[0])
        return int(v)
    k = one(kernel_size, "kernel_size", "an int, list of ints or tuple of ints")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else \
        one(stride, "stride", "None, an int, list of ints, or tuple of ints")
    p = one(padding, "padding", "an int, list of ints, or tuple of ints")
    d = one(dilation, "dilation", "an int, list of ints or tuple of ints")
    for what, v, ok, cond in (("kernel_size", k, k > 0, "greater than zero"),
                              ("stride", s, s > 0, "greater than zero"),
                              ("padding", p, p >= 0, "non-negative"),
                              ("dilation", d, d > 0, "greater than zero")):
        if not ok:
            raise RuntimeError(f"max_pool1d() {what} must be {cond}, but got {v}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    return (k,), (s,), (p,), (d,)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    out = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over sliding windows; with `return_indices`, flat indices into each H*W plane."""
    out = _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, 2)
    return out if return_indices else out[0]


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-D max pooling; with `return_indices`, flat indices into each D*H*W volume."""
    out = _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, 3)
    return out if return_indices else out[0]


def _avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override, nd):
    k, s, p, _ = _pool_args(kernel_size, stride, padding, None, nd, f"avg_pool{nd}d")
    if nd == 2 and input.dim() < 3:
        # torch's 2-d kernel reads the channel count (dim -3) before it checks the rank
        if input.dim() == 0:
            raise IndexError("Dimension specified as -3 but tensor has no dimensions")
        wrap_dim(-3, input.dim())
    _check_pool_input(input, nd, f"avg_pool{nd}d")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if nd == 3 and any(n < kk for n, kk in zip(input.shape[-3:], k)):
        t, h, w = input.shape[-3:]
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    _check_pool_output(input, k, s, p, (1,) * nd, ceil_mode)
    return avg_pool_prim(input, k, s, p, bool(ceil_mode), bool(count_include_pad),
                         divisor_override)


def _check_1d_input(input, fn):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for {fn})")


def _one_int(v, fn, what):
    """torch's int[1] argument parsing: an int or a sequence of exactly one int."""
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise RuntimeError(f"{fn}() argument '{what}' should contain one int (got {len(v)})")
        return (int(v[0]),)
    return (int(v),)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    _check_1d_input(input, "avg_pool1d")
    k = _one_int(kernel_size, "avg_pool1d", "kernel_size")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else \
        _one_int(stride, "avg_pool1d", "stride")
    p = _one_int(padding, "avg_pool1d", "padding")
    k, s, p, _ = _pool_args(k, s, p, None, 1, "avg_pool1d")
    return avg_pool2d(input.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + p, ceil_mode,
                      count_include_pad).squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, 2)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W)."""
    return _avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, 3)


# ============================================================================ adaptive pooling
def _adaptive_bounds(size, out):
    starts = [(i * size) // out for i in range(out)]
    ends = [-(-((i + 1) * size) // out) for i in range(out)]
    return starts, ends


def _adaptive_matrix(size, out, dtype):
    m = np.zeros((out, size), dtype)
    for i, (a, b) in enumerate(zip(*_adaptive_bounds(size, out))):
        m[i, a:b] = 1.0 / (b - a)
    return m


def _adaptive_sizes(input, output_size, nd, fn):
    """The output size with None entries taken from the input, and torch's dim checks."""
    if input.dim() not in (nd + 1, nd + 2):
        sep = ": " if "max" in fn else " "
        raise RuntimeError(f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got"
                           f"{sep}{list(input.shape)}")
    osz = _ntuple(output_size, nd)
    if len(osz) != nd:
        if "max" in fn:
            raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {nd}")
        raise RuntimeError(f"{fn}: output_size must be {nd}")
    sizes = input.shape[-nd:]
    osz = tuple(n if o is None else o for n, o in zip(sizes, osz))
    if any(o < 0 for o in osz):
        if "max" in fn:
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{min(osz)}: {list(input.shape[:-nd]) + list(osz)}")
        shown = ", ".join(map(str, osz[:2])) + "," + ",".join(map(str, osz[2:]))
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{shown}}}")
    return sizes, osz


def adaptive_avg_pool1d(input, output_size):
    _check_1d_input(input, "adaptive_avg_pool1d")
    (o,) = _one_int(output_size, "adaptive_avg_pool1d", "output_size")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    sizes, osz = _adaptive_sizes(input, output_size, 2, "adaptive_avg_pool2d")
    if osz == (1, 1):   # torch takes the mean (grad_fn MeanBackward1)
        return input.mean((-2, -1), keepdim=True)
    dt = input._data.dtype
    return sandwich(input, _adaptive_matrix(sizes[0], osz[0], dt),
                    _adaptive_matrix(sizes[1], osz[1], dt), "AdaptiveAvgPool2DBackward0")


def adaptive_avg_pool3d(input, output_size):
    """Average over adaptive windows of the last three dims (a separable linear map)."""
    sizes, osz = _adaptive_sizes(input, output_size, 3, "adaptive_avg_pool3d")
    if osz == (1, 1, 1):
        return input.mean((-3, -2, -1), keepdim=True)
    dt = input._data.dtype
    mats = [_adaptive_matrix(n, o, dt) for n, o in zip(sizes, osz)]
    return sandwich_nd(input, mats, "AdaptiveAvgPool3DBackward0")


def _adaptive_max_nd(input, output_size, nd):
    sizes, osz = _adaptive_sizes(input, output_size, nd, f"adaptive_max_pool{nd}d")
    shape = list(input.shape)
    for i in range(input.dim() - nd, input.dim()):
        if shape[i] == 0:
            raise RuntimeError(f"adaptive_max_pool{nd}d(): Expected input to have non-zero size "
                               f"for non-batch dimensions, but input has sizes {shape} with "
                               f"dimension {i} being empty")
    return adaptive_max_pool_prim(input, *[_adaptive_bounds(n, o) for n, o in zip(sizes, osz)])


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_nd(input, output_size, 2)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_nd(input, output_size, 3)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """Adaptive max pooling over the last dim (through adaptive_max_pool2d)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_max_pool1d)")
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 1:
            raise RuntimeError("adaptive_max_pool1d() argument 'output_size' should contain "
                               f"one int (got {len(output_size)})")
        output_size = output_size[0]
    out, idx = _adaptive_max_nd(input.unsqueeze(-2), (1, output_size), 2)
    return out.squeeze(-2), idx.squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    out = _adaptive_max_nd(input, output_size, 2)
    return out if return_indices else out[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max over adaptive windows of the last three dims (indices into each D*H*W volume)."""
    out = _adaptive_max_nd(input, output_size, 3)
    return out if return_indices else out[0]


# ============================================================================ Lp pooling
# torch's formula through average pooling: sign(s) * relu(|s|) * prod(k), to the power 1/p.
def _lp(out, norm_type, kernel):
    return (out.sign() * relu(out.abs())).mul(int(np.prod(kernel))).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The ``norm_type``-norm of every 1-d pooling window."""
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, _ntuple(kernel_size, 1))


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The ``norm_type``-norm of every pooling window (torch's formula through avg_pool2d)."""
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, _ntuple(kernel_size, 2))


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The ``norm_type``-norm of every 3-d pooling window."""
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, _ntuple(kernel_size, 3))


# ============================================================================ max unpooling
def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    default = [(input.shape[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d]
               - 2 * padding[d] for d in range(len(kernel_size))]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == len(kernel_size) + 2:
        output_size = output_size[2:]
    if len(output_size) != len(kernel_size):
        raise ValueError(f"output_size should be a sequence containing {len(kernel_size)} or "
                         f"{len(kernel_size) + 2} elements, but it has a length of "
                         f"'{len(output_size)}'")
    for d in range(len(kernel_size)):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be '
                             f"between {lo} and {hi})")
    return output_size


def _max_unpool(input, indices, output_size, nd):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d "
                           f"Tensor, but got a tensor with {input.dim()} dimensions.")
    if indices._data.dtype != np.int64:
        tail = f" but got: {_tname(indices)}" if nd == 2 else ""
        raise RuntimeError(f"elements in indices should be type int64{tail}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError("Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    osz = tuple(int(s) for s in output_size)
    bad = (indices._data < 0) | (indices._data >= int(np.prod(osz)))
    if bad.any():
        raise RuntimeError(f"Found an invalid max index: {int(indices._data[bad].flat[0])} "
                           f"(output volumes are of size {'x'.join(map(str, osz))})")
    return (MAX_UNPOOL2D if nd == 2 else MAX_UNPOOL3D).call(input, indices, params=osz)


def _unpool_args(kernel_size, stride, padding, nd):
    k = _ntuple(kernel_size, nd)
    s = _ntuple(stride, nd) if stride is not None else k
    return k, s, _ntuple(padding, nd)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The 1-d max unpooling (through max_unpool2d on a trailing unit dim)."""
    k, s, p = _unpool_args(kernel_size, stride, padding, 1)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), list(size) + [1],
                       2).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Place each value at its max_pool2d index in a zero tensor (MaxUnpool2DBackward0)."""
    k, s, p = _unpool_args(kernel_size, stride, padding, 2)
    return _max_unpool(input, indices, _unpool_output_size(input, k, s, p, output_size), 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Place each value at its max_pool3d index in a zero tensor (MaxUnpool3DBackward0)."""
    k, s, p = _unpool_args(kernel_size, stride, padding, 3)
    return _max_unpool(input, indices, _unpool_output_size(input, k, s, p, output_size), 3)


# ============================================================================ dropout3d
def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input (torch's draws)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    dim = input.dim()
    if dim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {dim}-D input to dropout3d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead. Note that "
                      "dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 4D or 5D inputs).", stacklevel=2)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    batched = dim == 5
    if not batched:   # torch adds a batch dim around its feature dropout
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    noise = _dropout_noise.noise_like(input, p, 2)   # a draw per (sample, channel)
    out = input.mul_(noise) if inplace else input * noise
    if not batched:
        out = out.squeeze_(0) if inplace else out.squeeze(0)
    return out


# ============================================================================ torch.* forms
def _torch_max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


def _torch_adaptive_max_pool1d(input, output_size):
    return adaptive_max_pool1d_with_indices(input, output_size)


# The names torch exposes at top level for this family (the facade adds them to ``ndgrad``).
TORCH_NAMES = {
    "conv3d": conv3d, "conv_transpose3d": conv_transpose3d, "conv_tbc": conv_tbc,
    "convolution": torch_convolution, "max_pool3d": _torch_max_pool3d,
    "max_pool1d_with_indices": max_pool1d_with_indices,
    "adaptive_max_pool1d": _torch_adaptive_max_pool1d,
}
