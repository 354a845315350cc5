"""The rank-one update ``addr(input, vec1, vec2, beta, alpha) = beta * input + alpha *
outer(vec1, vec2)`` and its in-place form, as one primitive (torch's ``AddrBackward0``).

Invariants: with ``beta == 0`` the input's values (NaN included) are ignored, but its shape
still has to broadcast to the result and it gets a zero gradient; the result has the promoted
dtype of the three tensors. The VJP and JVP are written in ndgrad ops (differentiable again).
"""

import numpy as np

from .. import _dtype
from .broadcast import sum_to
from .arguments import scalar_first
from .arguments import _out
from .registry import as_tensor_arg, primitive
from .inplace import apply_inplace
from .methods import bind

__all__ = ["addr"]


def _addr_fwd(m, v1, v2, p):
    beta, alpha = p
    dt = np.result_type(m, v1, v2)
    outer = np.multiply.outer(v1, v2).astype(dt, copy=False)
    if alpha != 1:
        outer = outer * np.asarray(alpha).astype(dt)
    shape = np.broadcast_shapes(m.shape, outer.shape)
    if beta == 0:
        return np.broadcast_to(outer, shape).astype(dt)
    scaled = m if beta == 1 else m * np.asarray(beta).astype(dt)
    return (scaled + outer).astype(dt, copy=False)


ADDR = primitive("addr", _addr_fwd, "AddrBackward0", save=((0, None), (1, None), (2, None)))


@ADDR.def_vjp
def _(ctx, g):
    m, v1, v2 = ctx.saved
    beta, alpha = ctx._params
    n = ctx._next
    g_m = sum_to(g * beta if beta != 1 else g, m.shape) if n[0] is not None else None
    g_v1 = (g.mv(v2.conj()) * alpha) if n[1] is not None else None
    g_v2 = (g.t().mv(v1.conj()) * alpha) if n[2] is not None else None
    return g_m, g_v1, g_v2


@ADDR.def_jvp
def _(ctx, t_m, t_v1, t_v2):
    _, v1, v2 = ctx.inputs
    beta, alpha = ctx.params
    r = None
    if t_m is not None and beta != 0:
        r = t_m * beta
    if t_v1 is not None:
        d = t_v1.outer(v2) * alpha
        r = d if r is None else r + d
    if t_v2 is not None:
        d = v1.outer(t_v2) * alpha
        r = d if r is None else r + d
    (out,) = ctx.outputs
    return r.expand(out.shape) if r is not None else r


def _check_scalars(m, v1, v2, beta, alpha):
    for name, t in (("vec1", v1), ("vec2", v2)):
        if t.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t.dim()}-D")
    kinds = {np.asarray(t._data).dtype.kind for t in (m, v1, v2)}
    if kinds <= set("biu") and (isinstance(beta, float) or isinstance(alpha, float)):
        which = "beta" if isinstance(beta, float) else "alpha"
        raise RuntimeError(f"For integral input tensors, argument {which} must not be a "
                           "floating point number.")
    if kinds == {"b"} and not (isinstance(beta, bool) or beta in (0, 1)):
        raise RuntimeError("Boolean beta only supported for Boolean results.")
    try:
        np.broadcast_shapes(tuple(m.shape), (v1.shape[0], v2.shape[0]))
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({v2.shape[0]}) must match the "
                           f"existing size ({m.shape[-1]}) at non-singleton dimension "
                           f"{m.dim() - 1}.  Target sizes: [{v1.shape[0]}, {v2.shape[0]}].  "
                           f"Tensor sizes: {list(m.shape)}") from None


def addr(input, vec1, vec2, *legacy, beta=1, alpha=1, out=None):
    if legacy:  # the deprecated addr(beta, input, alpha, vec1, vec2), input.addr(beta, ...)
        (input, vec1, vec2), kw = scalar_first("addr", (input, vec1, vec2) + legacy,
                                              beta != 1 or alpha != 1)
        beta, alpha = kw["beta"], kw.get("alpha", 1)
    m = as_tensor_arg(input)
    v1 = as_tensor_arg(vec1, "vec1")
    v2 = as_tensor_arg(vec2, "vec2")
    _check_scalars(m, v1, v2, beta, alpha)
    return _out(ADDR.call(m, v1, v2, params=(beta, alpha)), out)


def _addr_(self, vec1, vec2, *legacy, beta=1, alpha=1):
    if legacy:  # the deprecated addr_(beta, alpha, vec1, vec2) and addr_(beta, vec1, vec2)
        (self, vec1, vec2), kw = scalar_first("addr_", (self, vec1, vec2) + legacy,
                                              beta != 1 or alpha != 1)
        beta, alpha = kw["beta"], kw.get("alpha", 1)
    if self.dim() != 2:
        raise RuntimeError(f"2D tensor expected, got {self.dim()}D tensor for input")
    v1 = as_tensor_arg(vec1, "vec1")
    v2 = as_tensor_arg(vec2, "vec2")
    _check_scalars(self, v1, v2, beta, alpha)
    return apply_inplace(ADDR, self, v1, v2, params=(beta, alpha))


def _bind():
    bind({"addr": addr, "addr_": _addr_})


_bind()
del _dtype
