"""Finite differences and integrals along a dim: diff, gradient (torch.gradient: central
differences inside, one- or two-sided second-order ones at the edges, unit, scalar or
coordinate spacing), trapezoid and cumulative_trapezoid.

Composites of narrow, sub, mul, sum and cumsum (as in torch), so their gradients, JVPs and
grad_fn names come from those primitives.
"""

from .._tensor import Tensor
from .joins import cat
from .arguments import wrap_dim
from .registry import as_tensor_arg
from .methods import bind

__all__ = ["cumulative_trapezoid", "diff", "gradient", "trapezoid"]


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


# ----------------------------------------------------------------------------- gradient
def _slice(x, d, start, stop=None):
    return x.narrow(d, start % x.shape[d] if start < 0 else start,
                    (stop if stop is not None and stop >= 0 else x.shape[d] + (stop or 0))
                    - (start % x.shape[d] if start < 0 else start))


def _gradient_uniform(x, d, h, edge_order):
    center = (_slice(x, d, 2) - _slice(x, d, 0, -2)) / h
    if edge_order == 1:
        pre = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / h
        post = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / h
    else:
        pre = (-1.5 * _slice(x, d, 0, 1) + 2 * _slice(x, d, 1, 2)
               - 0.5 * _slice(x, d, 2, 3)) / h
        post = (0.5 * _slice(x, d, -3, -2) - 2 * _slice(x, d, -2, -1)
                + 1.5 * _slice(x, d, -1)) / h
    return cat([pre, center / 2, post], d)


def _gradient_coords(x, d, coords, edge_order):
    if coords.dim() != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {coords.dim()} dimensions!")
    shape = [1] * x.dim()
    shape[d] = -1
    dx = diff(coords)
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _slice(x, d, 0, -2) + b * _slice(x, d, 1, -1) + c * _slice(x, d, 2)
    if edge_order == 1:
        pre = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / dx[0]
        post = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / dx[-1]
    else:
        d0, d1 = dx[0], dx[1]
        pre = (-(2.0 * d0 + d1) / (d0 * (d0 + d1)) * _slice(x, d, 0, 1)
               + (d0 + d1) / (d0 * d1) * _slice(x, d, 1, 2)
               + (-d0) / (d1 * (d0 + d1)) * _slice(x, d, 2, 3))
        e1, e2 = dx[-1], dx[-2]
        post = (e1 / (e2 * (e1 + e2)) * _slice(x, d, -3, -2)
                - (e1 + e2) / (e1 * e2) * _slice(x, d, -2, -1)
                + (2 * e1 + e2) / (e1 * (e1 + e2)) * _slice(x, d, -1))
    return cat([pre, center, post], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates of d input / d x_i along each of `dim` (all dims by default): a tuple of
    tensors shaped like `input`."""
    x = as_tensor_arg(input)
    if x._data.dtype.kind == "u" and x._data.dtype.itemsize == 1:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = list(range(x.dim())) if dim is None else [dim] if isinstance(dim, int) \
        else list(dim)
    if spacing is None:  # torch's default: unit spacing
        spacing = 1
    scalar = not isinstance(spacing, (list, tuple))
    spacing = [spacing] * len(dims) if scalar else list(spacing)
    if not scalar or dim is not None:
        if dim is None and len(spacing) != x.dim():
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, "
                               f"or a list of length equal to 'self.dim() = {x.dim()}', since "
                               f"dim argument was not given, but got a list of length "
                               f"{len(spacing)}")
        if dim is not None and len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"it's spacing and dim arguments to have the same length, but "
                               f"got a spacing argument of length {len(spacing)} and a dim "
                               f"argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = [wrap_dim(d, x.dim()) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    for d in dims:
        if x.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    out = []
    for d, h in zip(dims, spacing):
        if isinstance(h, Tensor) and h.dim() > 0:
            out.append(_gradient_coords(x, d, h, edge_order))
        else:
            out.append(_gradient_uniform(x, d, h.item() if isinstance(h, Tensor) else h,
                                         edge_order))
    return tuple(out)


def _bind():
    bind({"diff": diff})


_bind()
