"""torch.masked's reductions and normalizations on strided tensors with a boolean ``mask=``.

Each function is a composition of ndgrad's public ops: the masked-out elements of the input
are replaced by the operation's identity (0 for sums, 1 for products, -inf for maxima and
log-sum-exp, +inf for minima, NaN for the median), then the ordinary op runs. Forward values,
gradients, forward-mode tangents and vmap batching therefore come from those ops' own rules
(``where`` routes no gradient to masked-out elements); nothing here defines a derivative.

Invariants (torch 2.13's ``torch.masked``):
- ``mask`` broadcasts to the input's shape (never the other way), is converted to bool, and
  ``mask=None`` means every element is valid.
- ``dim=None`` (and ``dim=()``) reduces over every dimension; dims are canonicalised, and a
  repeated or out-of-range dim raises torch's error.
- ``dtype=None`` keeps the input's dtype; sum and prod promote bool and small integers to
  int64. Results are cast to ``dtype`` after the computation (``argmax``/``argmin`` too:
  their indices come back in the input's dtype unless ``dtype`` says otherwise, as in torch).
- Mean, median, var and std of a fully masked-out slice are NaN.

Sparse layouts and ``MaskedTensor`` inputs are not provided (ndgrad has strided tensors only).
"""

import builtins
import math

from .. import _dtype

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
           "median", "logsumexp", "logaddexp", "norm", "var", "std", "softmax", "log_softmax",
           "softmin", "normalize"]

_SMALL_INTS = ("bool", "uint8", "int8", "int16", "int32")


def _torch():
    import ndgrad
    return ndgrad


def _canonical_dim(dim, ndim):
    """``dim`` as a sorted tuple of non-negative dims (every dim when None or ())."""
    if dim == () or dim is None:
        return tuple(range(ndim))
    ndim = builtins.max(ndim, 1)
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input, mask):
    """The mask as a bool tensor of the input's shape."""
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = _torch().broadcast_to(mask.clone(), input.shape)
    return mask.to(dtype=_dtype.bool)


def _identity(name, input, ord=2):
    """The identity of the reduction ``name`` for the input's dtype, as a 0-d tensor."""
    t = _torch()
    dt = input.dtype
    floating = dt.is_floating_point
    if name in ("sum", "norm") and not (name == "norm" and ord == -math.inf):
        value = 0
    elif name == "prod":
        value = 1
    elif name in ("amax", "logsumexp"):
        value = -math.inf if floating or dt.is_complex else t.iinfo(dt).min
    elif name in ("amin", "norm"):
        value = math.inf if floating else t.iinfo(dt).max
    elif name == "median":
        return t.tensor(math.nan, dtype=dt if floating else _dtype.float32)
    else:
        raise NotImplementedError(f"identity of {name} on {dt} input")
    return t.tensor(value, dtype=dt)


def _fill(name, input, mask, ord=2):
    """The input with its masked-out elements replaced by the identity of ``name``."""
    if mask is None:
        return input
    return _torch().where(_input_mask(input, mask), input, _identity(name, input, ord))


def _sum_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return _dtype.int64 if str(input.dtype).split(".")[1] in _SMALL_INTS else input.dtype


# ---------------------------------------------------------------------------- reductions
def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return _torch().sum(_fill("sum", input, mask), dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    result = _fill("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):  # one dim at a time, last first (torch's prod takes one dim)
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    filled = _fill("amax", input, mask)
    dims = _canonical_dim(dim, filled.ndim)
    return _torch().amax(filled, dims, bool(keepdim)).to(dtype=dtype or input.dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    filled = _fill("amin", input, mask)
    dims = _canonical_dim(dim, filled.ndim)
    return _torch().amin(filled, dims, bool(keepdim)).to(dtype=dtype or input.dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    filled = _fill("amax", input, mask)
    return _torch().argmax(filled, dim, bool(keepdim)).to(dtype=dtype or input.dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    filled = _fill("amin", input, mask)
    return _torch().argmin(filled, dim, bool(keepdim)).to(dtype=dtype or input.dtype)


def _count(input, dim, keepdim, mask):
    """How many valid elements each reduced slice holds (int64)."""
    if mask is None:
        ones = _torch().ones(input.shape, dtype=_dtype.int64)
        return sum(ones, dim, keepdim=keepdim)
    return mask.sum(dim=dim, keepdim=bool(keepdim))


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    source = "Optional" if dtype is not None else "Input"
    dtype = dtype or input.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    inmask = None if mask is None else _input_mask(input, mask)
    count = _count(input, dim, keepdim, inmask)
    return sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask) / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=_dtype.float32)
    out = _torch().nanmedian(_fill("median", input, mask), d, keepdim).values
    if is_float:
        return out
    if bool(_torch().isnan(out).any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not "
                         "floating point")
    return out.to(dtype=dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dims = _canonical_dim(dim, input.ndim)
    out = _torch().logsumexp(_fill("logsumexp", input, mask), dims, keepdim=keepdim)
    return out.to(dtype=dtype or input.dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    a = _fill("amax", input, input_mask)
    b = _fill("amax", other, other_mask)
    return _torch().logaddexp(a, b).to(dtype=dtype or input.dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    filled = _fill("norm", input, mask, ord)
    dims = _canonical_dim(dim, input.ndim)
    return _torch().linalg.vector_norm(filled, ord, dims, bool(keepdim),
                                       dtype=dtype or input.dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    """Sample variance (or its square root) over the valid elements, torch's formula."""
    t = _torch()
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    corr = 1.0 if unbiased is None else (1.0 if unbiased else 0.0)
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = _dtype.float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else _dtype.float32
    inmask = None if mask is None else _input_mask(input, mask)
    count = _count(input, dim, True, inmask)
    centred = input - sum(input, dim, keepdim=True, dtype=dtype, mask=inmask) / count
    total = sum(centred * centred.conj(), dim, keepdim=keepdim, dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if corr != 0:
        real = compute.to_real() if compute.is_complex else compute
        count = t.maximum(count.to(real) - corr, count.new_zeros([]).to(real))
    out = t.divide(total, count).to(dtype=dtype)
    return t.sqrt(out) if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _torch().cumsum(_fill("sum", input, mask), d, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _torch().cumprod(_fill("prod", input, mask), d, dtype=dtype).to(dtype=dtype)


# ---------------------------------------------------------------------------- normalizations
def _functional():
    return _torch().nn.functional


def softmax(input, dim, *, dtype=None, mask=None):
    d = _canonical_dim(dim, input.ndim)[0]
    return _functional().softmax(_fill("amax", input, mask), d, dtype=dtype or input.dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    d = _canonical_dim(dim, input.ndim)[0]
    return _functional().log_softmax(_fill("amax", input, mask), d,
                                     dtype=dtype or input.dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    d = _canonical_dim(dim, input.ndim)[0]
    return _functional().softmin(_fill("amin", input, mask), d, dtype=dtype or input.dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    t = _torch()
    filled = _fill("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype or input.dtype, mask=mask)
    return t.divide(filled, t.maximum(nrm, nrm.new_full([], eps)))

