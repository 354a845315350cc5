"""Finite differences and integrals along a dim: diff, trapezoid and cumulative_trapezoid.

Composites of narrow, sub, mul, sum and cumsum (as in torch), so their gradients, JVPs and
grad_fn names come from those primitives.
"""

from .._tensor import Tensor
from .joins import cat
from .arguments import wrap_dim
from .registry import as_tensor_arg
from .methods import bind

__all__ = ["cumulative_trapezoid", "diff", "trapezoid"]


def diff(input, n=1, dim=-1, prepend=None, append=None):
    x = as_tensor_arg(input)
    if x.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = wrap_dim(dim, x.dim())
    for extra in (prepend, append):
        if isinstance(extra, Tensor) and extra.dim() != x.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as "
                               "input")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        parts = [p if isinstance(p, Tensor) else x.new_full(
            x.shape[:dim] + (1,) + x.shape[dim + 1:], p) for p in parts]
        x = cat(parts, dim)
    if n == 0:
        # torch returns a fresh copy (recorded as CopyBackwards)
        return x.new_empty(x.shape).copy_(x)
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        if x.dtype.is_floating_point or x.is_complex():
            x = x.narrow(dim, 1, length - 1) - x.narrow(dim, 0, length - 1)
        elif x.dtype.__str__() == "torch.bool":
            x = x.narrow(dim, 1, length - 1) ^ x.narrow(dim, 0, length - 1)
        else:
            x = x.narrow(dim, 1, length - 1) - x.narrow(dim, 0, length - 1)
    return x


def trapezoid(y, x=None, *, dx=None, dim=-1):
    y = as_tensor_arg(y, "y")
    if y.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if y.dtype.__str__() == "torch.bool":
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not "
                           "supported")
    dim = wrap_dim(dim, y.dim())
    n = y.shape[dim]
    if isinstance(x, Tensor):
        if x.dtype.__str__() == "torch.bool":
            raise RuntimeError("trapezoid: received a bool input for `x`, but bool is not "
                               "supported")
        if n == 0:
            return y.sum(dim) * 0
        if x.dim() == 1:
            if x.shape[0] != n:
                raise RuntimeError("trapezoid: There must be one `x` value for each sample "
                                   "point")
            shape = [1] * y.dim()
            shape[dim] = n
            x = x.reshape(shape)
        dxs = diff(x, dim=dim)
        return ((y.narrow(dim, 0, n - 1) + y.narrow(dim, 1, n - 1)) * dxs).sum(dim) / 2
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments")
    step = dx if dx is not None else (x if x is not None else 1)
    if n == 0:
        return y.sum(dim) * 0
    return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * step


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    y = as_tensor_arg(y, "y")
    if y.dtype.__str__() == "torch.bool":
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is "
                           "not supported")
    dim = wrap_dim(dim, y.dim())
    n = y.shape[dim]
    if n == 0:
        return y.narrow(dim, 0, 0) * 1
    mids = y.narrow(dim, 0, n - 1) + y.narrow(dim, 1, n - 1)
    if isinstance(x, Tensor):
        if x.dim() == 1:
            if x.shape[0] != n:
                raise RuntimeError("cumulative_trapezoid: There must be one `x` value for "
                                   "each sample point")
            shape = [1] * y.dim()
            shape[dim] = n
            x = x.reshape(shape)
        return (diff(x, dim=dim) * mids / 2).cumsum(dim)
    step = dx if dx is not None else (x if x is not None else 1)
    return (mids * (step / 2)).cumsum(dim)


def _bind():
    bind({"diff": diff})


_bind()
