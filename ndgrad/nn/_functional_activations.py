"""The activation functions of ``ndgrad.nn.functional`` (re-exported there): ReLU's family,
smooth and gated activations, shrinkage, softmax / log_softmax / softmin and rrelu.

The heavy ones call fused primitives of ``ndgrad/_ops/activations.py`` (torch's node names);
the rest are composites of ndgrad ops. ``inplace=True`` runs the primitive in place
(``apply_inplace``: torch's node, the value before the write saved where the rule needs it),
under the in-place twin's name where torch's differs (EluBackward1, ...).
``_inplace_result`` is the convention the other functional modules share: the result is
copied into `input`, which is returned.
"""

import warnings

import numpy as np

from .. import _random
from .._ops import comparison as CMP
from .._ops import pointwise as PW
from .._ops.activations import (CELU, ELU, GELU, HARDSIGMOID, HARDSWISH, HARDTANH,
                                INPLACE_TWINS, LEAKY_RELU, LOG_SOFTMAX, LOGSIGMOID, MISH,
                                RRELU_WITH_NOISE, SILU, SOFTMAX, SOFTPLUS, glu_prim, prelu_prim)
from .._ops.inplace import apply_inplace
from .._ops.linalg_common import _tname
from .._ops.vmap_helpers import is_batched
from .._tensor import Tensor

__all__ = [
    "relu", "relu_", "threshold", "hardtanh", "hardtanh_", "relu6", "leaky_relu", "leaky_relu_",
    "elu", "elu_", "selu", "celu", "gelu", "silu", "mish", "softplus", "softsign", "hardsigmoid",
    "hardswish", "sigmoid", "tanh", "logsigmoid", "tanhshrink", "softshrink", "hardshrink",
    "prelu", "glu", "softmax", "softmin", "log_softmax", "rrelu", "rrelu_",
]


def _inplace_result(input, result, inplace):
    if inplace:
        return input.copy_(result)
    return result


def relu(input, inplace=False):
    if inplace:
        return input.relu_()
    return PW.relu(input)


def relu_(input):
    return input.relu_()


def threshold(input, threshold, value, inplace=False):
    if inplace:
        return apply_inplace(PW.THRESHOLD_, input, params=(threshold, value))
    return PW.THRESHOLD.call(input, (threshold, value))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if inplace:  # torch's hardtanh_ records HardtanhBackward0
        return apply_inplace(HARDTANH, input, params=(min_val, max_val))
    return HARDTANH.call(input, (min_val, max_val))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    return hardtanh(input, 0, 6, inplace)  # ints, as torch's (the nodes' _saved_min/max_val)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        return apply_inplace(INPLACE_TWINS["leaky_relu"], input, params=negative_slope)
    return LEAKY_RELU.call(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def elu(input, alpha=1.0, inplace=False):
    if inplace:
        return apply_inplace(INPLACE_TWINS["elu"], input, params=(alpha, 1.0, 1.0))
    return ELU.call(input, (alpha, 1.0, 1.0))


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    if inplace:  # torch's selu_ records EluBackward1
        return apply_inplace(INPLACE_TWINS["elu"], input,
                             params=(_SELU_ALPHA, _SELU_SCALE, 1.0))
    return ELU.call(input, (_SELU_ALPHA, _SELU_SCALE, 1.0))


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    if inplace:
        return apply_inplace(INPLACE_TWINS["celu"], input, params=(alpha, 1.0, 1.0 / alpha))
    return CELU.call(input, (alpha, 1.0, 1.0 / alpha))


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return GELU.call(input, approximate)


def silu(input, inplace=False):
    return apply_inplace(SILU, input) if inplace else SILU.call(input)


def mish(input, inplace=False):
    return apply_inplace(MISH, input) if inplace else MISH.call(input)


def softplus(input, beta=1, threshold=20):  # torch's defaults are ints (nn.Softplus: floats)
    return SOFTPLUS.call(input, (beta, threshold))


def softsign(input):
    return input / (input.abs() + 1)


def hardsigmoid(input, inplace=False):
    return apply_inplace(HARDSIGMOID, input) if inplace else HARDSIGMOID.call(input)


def hardswish(input, inplace=False):
    return apply_inplace(HARDSWISH, input) if inplace else HARDSWISH.call(input)


def sigmoid(input):
    return PW.sigmoid(input)


def tanh(input):
    return PW.tanh(input)


def logsigmoid(input):
    return LOGSIGMOID.call(input)


def tanhshrink(input):
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    return CMP.where(input > lambd, input - lambd, CMP.where(input < -lambd, input + lambd,
                                                         input * 0))


def hardshrink(input, lambd=0.5):
    return CMP.where((input > lambd) | (input < -lambd), input, input * 0)


def _dtype_name(t):
    return t.dtype._legacy[:-6]  # "Float", "Long", ...


def _float_kernel(t, kernel):
    """torch's CPU kernels dispatch on floating dtypes only."""
    if t._data.dtype.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype_name(t)}\'')


def prelu(input, weight):
    """``x if x > 0 else weight * x``, the weight per channel (dim 1) or shared
    (PreluKernelBackward0, the weight viewed to broadcast as torch's)."""
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_dtype_name(input)} "
                           f"and {_dtype_name(weight)}")
    ndim = input.dim()
    if weight.numel() != 1:
        if ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if ndim > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    _float_kernel(input, "prelu_cpu")
    if ndim != weight.dim():
        shape = [1] * ndim
        if ndim > 1:
            shape[1] = weight.numel()
        weight = weight.reshape(shape)
    return prelu_prim(input, weight)


def glu(input, dim=-1):
    """``a * sigmoid(b)`` for the halves ``a, b`` of `input` along `dim` (GluBackward0)."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = _wrap(dim, input.dim())
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension "
                           f"{dim} is size {input.shape[dim]}")
    _float_kernel(input, "glu_cpu")
    return glu_prim(input, dim)


def _softmax_dim(name, ndim, stacklevel=3):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _wrap(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _softmax_input(input, dim, dtype, name):
    if dim is None:
        dim = _softmax_dim(name, input.dim(), 4)
    if dtype is not None:
        input = input.to(dtype)
    elif input._data.dtype.kind != "f":
        raise NotImplementedError(f'"{name}_lastdim_kernel_impl" not implemented for '
                                  f"'{_SCALAR_NAMES.get(input._data.dtype.name, 'Long')}'")
    return input, _wrap(dim, input.dim())


_SCALAR_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                 "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                 "complex128": "ComplexDouble"}


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x))`` along `dim`, computed stably (SoftmaxBackward0).

    >>> softmax(ndgrad.tensor([0.0, 0.0]), 0)
    tensor([0.5000, 0.5000])
    """
    input, dim = _softmax_input(input, dim, dtype, "softmax")
    if input.dim() == 0:
        return SOFTMAX.call(input.reshape(1), params=0).reshape(())
    return SOFTMAX.call(input, params=dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmin", input.dim())
    if dtype is not None:
        input = input.to(dtype)
    return softmax(-input, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``x - logsumexp(x)`` along `dim`, computed stably (LogSoftmaxBackward0)."""
    input, dim = _softmax_input(input, dim, dtype, "log_softmax")
    if input.dim() == 0:
        return LOG_SOFTMAX.call(input.reshape(1), params=0).reshape(())
    return LOG_SOFTMAX.call(input, params=dim)


# ============================================================================ rrelu
# (issue 16) the op lives in _ops/activations.py (RreluWithNoiseBackward0). In training, every
# element x <= 0, in C order, gets its own slope uniform(lower, upper) from torch's 53-bit double
# draw, as torch's CPU loop; in eval the slope is (lower + upper) / 2.


def _rrelu_noise(input, lower, upper, training):
    x = input._data
    dt = x.dtype
    noise = np.ones(x.shape, dt)
    neg = x <= 0
    if training:
        gen = _random.default_generator
        r = _random._fma64(gen._u53(int(neg.sum())), float(upper) - float(lower), float(lower))
        noise[neg] = r.astype(dt)
    else:
        noise[neg] = dt.type((lower + upper) / 2)
    return Tensor(noise)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU with a random slope in [lower, upper] per negative element (training) or
    their mean (eval)."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if is_batched(input):  # torch 2.13 has no batching rule for rrelu (nor its fallback)
        raise RuntimeError(f"vmap: we do not yet support aten::rrelu{'_' if inplace else ''}. "
                           "Please file an issue")
    if input._data.dtype.kind != "f":
        raise NotImplementedError("\"rrelu_with_noise_out_cpu\" not implemented for "
                                  f"'{_tname(input)}'")
    out = RRELU_WITH_NOISE.call(input, _rrelu_noise(input, lower, upper, training), params=None)
    return input.copy_(out) if inplace else out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place ``rrelu``."""
    return rrelu(input, lower, upper, training, inplace=True)
