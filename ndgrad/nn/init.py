"""``nn.init``: in-place initialisers with torch's formulas and random streams.

Every function runs under ``no_grad``, writes into the tensor it is given and returns it. The
random draws come from ``ndgrad._random`` (torch's CPU generator), so after
``manual_seed(s)`` the values equal torch's bit for bit (``trunc_normal_`` and
``orthogonal_`` go through erfinv / QR and agree to rounding).
"""

import math
import warnings

import numpy as np

from .._ops.random_fills import write_inplace
from ..autograd.grad_mode import no_grad
from .. import _random

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_", "uniform", "normal", "constant",
           "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal",
           "sparse", "eye", "dirac"]


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (``calculate_gain('relu') == sqrt(2)``)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    if tensor.dim() > 2:
        for s in tensor.shape[2:]:
            receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std**2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std**2) truncated to [a, b], by torch 2.13's rejection sampling.

    When the interval holds more than 30% of the mass, normals outside [a, b] are redrawn;
    otherwise uniforms on [a, b] are accepted against the normal density. The draw order is
    torch's, so the values follow its random stream.
    """
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    gen = generator if generator is not None else _random.default_generator
    d = tensor._data
    dt, shape = d.dtype, d.shape
    with no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            lo, hi = dt.type(a), dt.type(b)
            result = gen.normal(shape, dt, mean, std)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                result = np.where(mask, gen.normal(shape, dt, mean, std), result)
        else:
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2

            def log_density(c):
                c = (c - dt.type(mean)) / dt.type(std)
                return c * c * dt.type(-0.5) - dt.type(log_peak)

            result = gen.uniform(shape, dt, a, b)
            cand = log_density(result)
            pending = np.log(gen.uniform(shape, dt)) > cand
            while pending.any():
                cand = gen.uniform(shape, dt, a, b)
                result = np.where(pending, cand, result)
                cand = log_density(cand)
                pending = np.where(pending, np.log(gen.uniform(shape, dt)) > cand, pending)
        write_inplace(tensor, result)
    return tensor


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        write_inplace(tensor, np.eye(*tensor._data.shape, dtype=tensor._data.dtype))
    return tensor


def dirac_(tensor, groups=1):
    """Fill a 3/4/5-D tensor with the Dirac delta (identity convolution per group)."""
    dimensions = tensor.ndimension()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    arr = np.zeros(tensor._data.shape, tensor._data.dtype)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            arr[(g * out_chans_per_grp + d, d) + centre] = 1
    with no_grad():
        write_inplace(tensor, arr)
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _zero_element(tensor):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan)."""
    if _zero_element(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std**2) with std = gain / sqrt(fan)."""
    if _zero_element(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal sample."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    gen = generator if generator is not None else _random.default_generator
    flat = gen.normal((rows, cols), tensor._data.dtype, 0.0, 1.0)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat.astype(np.float64))
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    vals = (q.astype(tensor._data.dtype) * tensor._data.dtype.type(gain))
    with no_grad():
        write_inplace(tensor, vals.reshape(tensor._data.shape))
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std**2) with a `sparsity` fraction of each column set to zero."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    # torch draws the permutations from the default generator even when one is passed
    gen = _random.default_generator
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        vals = tensor._data.copy()
        for col_idx in range(cols):
            row_indices = gen.randperm(rows)
            vals[row_indices[:num_zeros], col_idx] = 0
        write_inplace(tensor, vals)
    return tensor


def _deprecated(new):
    def fn(*args, **kwargs):
        warnings.warn(f"`nn.init.{new.__name__[:-1]}` is now deprecated in favor of "
                      f"`nn.init.{new.__name__}`.", FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    fn.__name__ = new.__name__[:-1]
    fn.__doc__ = (f"{fn.__name__}(...): deprecated in favor of :func:`nn.init.{new.__name__}` "
                  "(same arguments), with a FutureWarning as torch's.")
    return fn


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
