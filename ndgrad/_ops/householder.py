"""LAPACK's Householder representation of QR, as torch exposes it: ``geqrf`` (the packed
reflectors and their scales, torch's ``GeqrfBackward0`` node that refuses to differentiate),
``orgqr`` (the explicit Q, torch's older name of ``linalg.householder_product``) and
``ormqr`` (a product with Q or Q^H without forming it in torch; here a composite of
``householder_product`` and a matmul, so gradients reach all three inputs).

Invariant: ``geqrf`` matches LAPACK's ``?geqrf`` output layout (R on and above the diagonal,
the reflectors' tails below it, tau of length min(m, n)); NumPy's ``qr(mode="raw")`` returns
it transposed, which the kernel undoes.
"""

import numpy as np

from .._tensor import Tensor
from .decompositions import linalg_householder_product
from .joins import cat
from .linalg_common import _check_lapack_dtype, _named, _tname
from .matmul import matmul
from .registry import as_tensor_arg, primitive, sizes_decide

__all__ = ["geqrf", "orgqr", "ormqr"]

_Geqrf = _named("geqrf", ["a", "tau"])


def _geqrf_fwd(a, p):
    m, n = a.shape[-2:]
    if a.size == 0:
        return a.copy(), np.zeros(a.shape[:-2] + (min(m, n),), a.dtype)
    h, tau = np.linalg.qr(a, mode="raw")
    return np.ascontiguousarray(np.swapaxes(h, -1, -2)).astype(a.dtype), tau.astype(a.dtype)


GEQRF = primitive("geqrf", _geqrf_fwd, "GeqrfBackward0", n_out=2)


@GEQRF.def_vjp
def _(ctx, gs):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def geqrf(input, *, out=None):
    """(a, tau): R above the diagonal of `a`, the Householder vectors below it."""
    x = as_tensor_arg(input)
    if x._data.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_lapack_dtype(x, "torch.geqrf", kernel="geqrf_cpu")
    return _Geqrf(*GEQRF.call(x))


def orgqr(input, tau):
    """The first n columns of the product of the Householder reflectors (LAPACK's orgqr)."""
    return linalg_householder_product(input, tau)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """``Q @ other`` (or ``Q^H``, or from the right) with Q the full m x m product of the
    reflectors stored in (`input`, `tau`) as ``geqrf`` returns them."""
    a, tau, c = as_tensor_arg(input), as_tensor_arg(tau), as_tensor_arg(other)
    name = "torch.ormqr"
    if a._data.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if c._data.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    m = a._data.shape[-2]
    if c._data.shape[side] != m:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau._data.shape[-1] != min(c._data.shape[side], a._data.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           f"input.shape[-1])")
    if a._data.ndim - tau._data.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau._data.ndim} and input.ndim is equal to "
                           f"{a._data.ndim}")
    if a._data.ndim != c._data.ndim:
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {c._data.ndim} and input.ndim "
                           f"is equal to {a._data.ndim}")
    batch = a._data.shape[:-2]
    if tau._data.shape[:-1] != batch:
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau._data.shape[:-1])}")
    if c._data.shape[:-2] != batch:
        raise RuntimeError(f"{name}: Expected batch dimensions of other to be equal to "
                           f"input.shape[:-2], but got {list(c._data.shape[:-2])}")
    for what, t in (("tau", tau), ("other", c)):
        if t._data.dtype != a._data.dtype:
            raise RuntimeError(f"{name}: Expected input and {what} to have the same dtype, but "
                               f"input has dtype{_tname(a)} and {what} has dtype {_tname(t)}")
    _check_lapack_dtype(a, name, kernel="ormqr_cpu")
    n = a._data.shape[-1]
    sizes_decide()  # n >= m
    # the full Q: the reflectors padded with zero columns to m x m (H_1 ... H_k of I_m)
    full = a[..., :, :m] if n >= m else cat(
        [a, Tensor(np.zeros(batch + (m, m - n), a._data.dtype))], -1)
    q = linalg_householder_product(full, tau)
    if transpose:
        q = q.mH
    out_ = matmul(q, c) if left else matmul(c, q)
    return out_


def _bind():
    bind({"geqrf": lambda self: geqrf(self), "orgqr": orgqr, "ormqr": ormqr})


from .methods import bind  # noqa: E402

_bind()
