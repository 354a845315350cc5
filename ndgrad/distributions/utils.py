"""Helpers shared by the distribution families: argument broadcasting, probs <-> logits,
lazily computed parameters and the small batched linear-algebra pieces.

Invariant: every helper is a composite of ndgrad's differentiable ops, so gradients flow
through them to the distribution parameters."""

from numbers import Number

import ndgrad as torch

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Broadcast numbers and tensors to one shape; numbers take the first tensor's dtype."""
    if not all(isinstance(v, (torch.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, torch.Tensor) for v in values):
        dtype = torch.get_default_dtype()
        for v in values:
            if isinstance(v, torch.Tensor):
                dtype = v.dtype
                break
        values = [v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=dtype)
                  for v in values]
    return torch.broadcast_tensors(*values)


def expand_probs_or_logits(src, new, shape):
    """Give `new` (an ``expand`` result) `src`'s probs and/or logits expanded to `shape`:
    whichever of the two `src` holds (the other is a lazy property computed from it), the
    last one set also being ``new._param``."""
    for name in ("probs", "logits"):
        if name in src.__dict__:
            setattr(new, name, src.__dict__[name].expand(shape))
            new._param = new.__dict__[name]


def _standard_normal(shape, dtype):
    return torch.randn(shape, dtype=dtype)


def _sum_rightmost(value, dim):
    """Sum out the ``dim`` right-most dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return torch.sigmoid(logits)
    return torch.softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps = clamp_probs(probs)
    if is_binary:
        return torch.log(ps) - torch.log1p(-ps)
    return torch.log(ps)


class lazy_property:
    """A parameter computed on first access from the other parameterisation, then cached
    in the instance ``__dict__`` (so ``'probs' in d.__dict__`` tells which one was given)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with torch.enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


def batch_mv(bmat, bvec):
    """Matrix-vector product with broadcasting over the batch dimensions."""
    return torch.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def batch_mahalanobis(bL, bx):
    """``x^T (L L^T)^-1 x`` for a lower-triangular ``L``, broadcasting the batch dims."""
    shape = torch.broadcast_shapes(bL.shape[:-1], bx.shape)
    L = bL.expand(shape[:-1] + bL.shape[-2:])
    x = bx.expand(shape).unsqueeze(-1)
    y = torch.linalg.solve_triangular(L, x, upper=False).squeeze(-1)
    return y.pow(2).sum(-1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (below ``diag``, inclusive) of a batch of square
    matrices, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    arange = torch.arange(n)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    return mat[..., tril_mask]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of ``tril_matrix_to_vec``: a batch of lower-triangular matrices."""
    # n is the positive root of n^2 + (1 + 2 diag) n - |diag| (diag + 1) - 2 len = 0
    b = 1 + 2 * diag
    n = (-b + (b ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = torch.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + torch.Size((n, n)))
    arange = torch.arange(n)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    mat[..., tril_mask] = vec
    return mat
