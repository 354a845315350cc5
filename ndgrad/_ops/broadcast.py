"""Broadcasting's adjoint: summing a gradient back to the shape of an input that was broadcast.

What lives here: ``sum_to`` (torch's ``at::sum_to``), used by the VJPs of ops that broadcast
(expand, masked ops, prelu, ...); ``reduce_grads``, which fits every rule's result to its
inputs (shape through ``validated_sum_to``, the checked form; then dtype), for the engine and
every other caller of a node's rule; the batched forms ``sum_to_batched`` and ``align_batched``
for values with a leading batch dimension.

Invariant: written in ops (``sum`` over the broadcast dims, then ``view``) so that under
``create_graph`` the reduction is recorded with torch's node names (SumBackward0/1,
ViewBackward0); the plain-backward shortcut gives the same values without recording.

Place: the floor under the op families. The ops used here belong to families that use
``sum_to`` in their own rules (expand's VJP is sum_to, sum's VJP is expand), so this module
imports none of them: it calls the sum and view primitives through the registry's table
(``registry.PRIMITIVES``), and the rest through Tensor methods.
"""

import numpy as np

from .. import _state
from .._dtype import from_np
from .._tensor import Tensor, _from_array
from .registry import PRIMITIVES

__all__ = ["sum_to", "validated_sum_to", "reduce_grads", "sum_to_batched", "align_batched"]

_tls = _state.tls


def sum_to(g, shape):
    """Sum a broadcast gradient back to `shape`, as torch's sum_to: ``g.sum()`` for a 0-d
    target, else one ``sum(dims, keepdim=True)`` over the broadcast dims followed by a
    ``view(shape)`` when leading dims were added (so grad_fns read SumBackward0, SumBackward1
    or ViewBackward0 as in torch)."""
    gshape = g._data.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and gshape[lead + i] != 1:
            dims.append(lead + i)
    d = g._data
    if not _tls.grad_enabled and not _state.special and d.dtype.kind == "f" and \
            d.dtype.itemsize > 2 and type(g) is Tensor:
        # Plain backward: the NumPy sums the ops below would run, without their dispatch
        # (float16 is left to sum's float32 accumulation). The result is a fresh tensor
        # (torch's is a view of the sum; the values are the same).
        if not shape:
            return _from_array(np.asarray(np.add.reduce(d, axis=None)))
        if dims:
            # np.sum's reduction for float32/64, without its Python-level wrapper
            d = np.add.reduce(d, axis=tuple(dims), keepdims=True)
        if d.shape != shape:
            d = d.reshape(shape)
        return _from_array(d)
    # Recorded (create_graph), or a dtype/subclass the shortcut leaves to the ops.
    if type(g) is Tensor:
        # the methods' ops without their argument parsing (same ops, same params)
        if not shape:
            return PRIMITIVES["sum"].call(g, params=(None, False, None))
        if dims:
            g = PRIMITIVES["sum_dim"].call(g, params=(tuple(dims), True, None))
        if lead:
            g = PRIMITIVES["view"].call(g, params=tuple(shape))
        return g
    if not shape:
        return g.sum()
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead:
        g = g.view(tuple(shape))
    return g


def validated_sum_to(node, i, g, shape):
    """`sum_to` for the gradient a node's rule returned for input `i`: torch's RuntimeError
    when `g` cannot have been broadcast from `shape`."""
    gs = g._data.shape
    lead = len(gs) - len(shape)
    ok = lead >= 0
    if ok:
        for k, s in enumerate(shape):
            if s != 1 and s != gs[lead + k]:
                ok = False
                break
    if not ok:
        raise RuntimeError(
            f"Function {node.name()} returned an invalid gradient at index {i} - got "
            f"{list(gs)} but expected shape compatible with {list(shape)}")
    return sum_to(g, shape)


def reduce_grads(node, gx):
    """Normalise a rule's result to a tuple and fit each gradient to its input (shape, dtype)."""
    if type(gx) is not tuple:
        gx = tuple(gx) if isinstance(gx, list) else (gx,)
    meta = node._meta
    if meta is not None:
        out = list(gx)
        for i, m in enumerate(meta):
            g = out[i] if i < len(out) else None
            if m is None or g is None:
                continue
            shape, dtype = m
            if g._data.shape != shape:
                g = validated_sum_to(node, i, g, shape)
            if g._data.dtype != dtype:
                if g._data.dtype.kind == "c" and dtype.kind != "c":
                    g = g.real  # a real input of a complex op gets Re(grad), as torch
                g = g.to(from_np(dtype))
            out[i] = g
        gx = tuple(out)
    return gx


# ----------------------------------------------------------------------------- batched forms
# For values carrying a leading batch dimension B (is_grads_batched, vectorized Jacobians):
# the ops' batched VJPs and JVPs and the two batched engines use them.
def sum_to_batched(g, shape, B):
    """Sum a batched gradient (B, *broadcast_shape) back to (B, *shape)."""
    gshape = g._data.shape
    if gshape[0] != B or len(gshape) - 1 < len(shape):
        # A rule returned an unbatched value (a gradient independent of g): add the batch.
        g = g.expand((B,) + tuple(gshape))
        gshape = g._data.shape
    body = gshape[1:]
    if body == tuple(shape):
        return g
    lead = len(body) - len(shape)
    dims = [1 + i for i in range(lead)]
    for i, s in enumerate(shape):
        if s == 1 and body[lead + i] != 1:
            dims.append(1 + lead + i)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g.reshape((B,) + tuple(shape))


def align_batched(t, a, nd):
    """(B, *a.shape) -> (B, 1, ..., *a.shape) so it broadcasts against rank-`nd` values."""
    if t is None:
        return None
    k = nd - a._data.ndim
    if k <= 0:
        return t
    return t.reshape((t._data.shape[0],) + (1,) * k + a._data.shape)
