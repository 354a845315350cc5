"""Batched backward: ``autograd.grad(..., is_grads_batched=True)`` in one graph traversal.

Every gradient flowing through the graph carries a leading batch dimension B (cotangent
number b is ``g[b]``). The traversal is the engine's (``engine.run_backward`` with the
`BatchedBackward` behaviour), and each node is run in one of three ways:

1. the op's *batched rule* (``OpDef.def_batched_vjp``, declared in the op's module: views,
   reductions, joins, matrix products, softmax): the op's VJP rewritten so that a leading
   batch dimension passes through (``matmul`` broadcasts over it, ``sum``/``view`` backwards
   shift their dims by one);
2. *transparent* ops (``OpDef.batch_transparent``: elementwise unary/binary ops, ``where``,
   ``clone``, casts): their VJP works on ``g`` elementwise, so NumPy broadcasting already
   carries the batch; only the reduction of broadcast gradients back to the input shape is
   made batch-aware;
3. anything else (custom Functions, CopySlices, indexing, ...): the node's own VJP runs once
   per batch element and the results are stacked. Always correct, just not vectorised.

Every rule is written in ndgrad ops, so ``create_graph=True`` works as in the loop. The result
equals B separate ``autograd.grad`` calls. Tensor hooks (``register_hook``) and Node hooks
(``grad_fn.register_hook`` / ``register_prehook``) are called once per batch element with
that element's gradients (torch calls them once, with vmap's BatchedTensors that look the
same); what they return replaces that element's gradients.
"""

from .._ops.broadcast import reduce_grads
from .engine import Backward, run_backward

__all__ = ["batch_size", "batched_grad", "BatchedBackward"]


def _vmap_size_error(sizes):
    return ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                      f"dimension, got sizes {sizes} for the mapped dimension")


def batch_size(grads):
    """The batch size B shared by the batched grad_outputs (vmap's errors otherwise)."""
    sizes = []
    for g in grads:
        if g is not None:
            if g._data.ndim == 0:
                raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some "
                                 "input, but that input is a Tensor of dimensionality 0 so "
                                 "expected in_dim to satisfy 0 <= in_dim < 0.")
            sizes.append(g._data.shape[0])
    if len(set(sizes)) > 1:
        raise _vmap_size_error(sizes)
    return sizes[0] if sizes else 1


def batched_grad(roots, edges, B, retain_graph, create_graph):
    """Run the graph from `roots` with batched gradients; the gradients arriving at `edges`,
    as ``{edge: grad}`` (``autograd.grad`` assembles its result from them)."""
    return run_backward(roots, retain_graph, create_graph, captures=dict.fromkeys(edges),
                        accumulate=False, behaviour=BatchedBackward(B))


class BatchedBackward(Backward):
    """The engine's behaviour for batched gradients: each node runs as the module docstring
    says, and hooks see one batch element at a time (the traversal is the engine's)."""

    __slots__ = ("B",)

    def __init__(self, B):
        self.B = B

    def apply(self, node, gs):
        return _apply(node, gs, self.B)

    def tensor_hooks(self, hooks, g):
        return _per_sample_hooks(hooks, g, self.B)

    def pre_hooks(self, node, gs, extra):
        tensor_hooks = extra.get("tensor_pre_hooks")
        if tensor_hooks:
            for nr, hooks in tensor_hooks.items():
                if nr < len(gs) and gs[nr] is not None and hooks:
                    gs[nr] = _per_sample_hooks(hooks, gs[nr], self.B)
        if extra.get("pre_hooks"):
            gs = list(_per_sample_node_hooks(extra["pre_hooks"], gs, self.B))
        return gs

    def post_hooks(self, hooks, gx, gs):
        return _per_sample_node_hooks(hooks, gx, self.B, gs)


def _per_sample_hooks(hooks, g, B):
    """Tensor hooks see one gradient at a time (torch vmaps them): call them per batch
    element and stack what they return."""
    from .. import stack
    rows = []
    changed = False
    for b in range(B):
        r = g[b]
        for fn in list(hooks.values()):
            out = fn(r)
            if out is not None:
                r = out
                changed = True
        rows.append(r)
    return stack(rows, 0) if changed else g


def _per_sample_node_hooks(hooks, grads, B, grad_outputs=None):
    """Node hooks, one batch element at a time as tensor hooks are: pre-hooks get
    ``(grad_outputs,)``, post-hooks ``(grad_inputs, grad_outputs)`` (pass `grad_outputs`); a
    hook returning new gradients replaces them, restacked along the batch."""
    from .. import stack

    def row(gs, b):
        return tuple(None if g is None else g[b] for g in gs)

    rows = []
    changed = False
    for b in range(B):
        cur = row(grads, b)
        outs = None if grad_outputs is None else row(grad_outputs, b)
        for fn in list(hooks.values()):
            r = fn(cur) if outs is None else fn(cur, outs)
            if r is not None:
                cur = tuple(r)
                changed = True
        rows.append(cur)
    if not changed:
        return grads
    return tuple(None if rows[0][k] is None else stack([r[k] for r in rows], 0)
                 for k in range(len(rows[0])))


def _add_to(buffers, node, nr, g):
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = []
    while len(buf) <= nr:
        buf.append(None)
    buf[nr] = g if buf[nr] is None else buf[nr] + g


# --------------------------------------------------------------------------- node application
def _apply(node, gs, B):
    op = type(node)._op
    if op is not None:
        rule = op.batched_vjp
        transparent = op.batch_transparent
        if rule is not None or transparent:
            fn = rule if rule is not None else op.vjp
            try:
                return _fit_all(node, fn(node, gs[0] if op.n_out == 1 else gs), B)
            except Exception:  # noqa: BLE001
                # A rule that cannot take this call's batch (an unusual layout or dtype):
                # the per-element VJP gives the same result (or raises the real error).
                return _per_sample(node, gs, B)
    return _per_sample(node, gs, B)


def _per_sample(node, gs, B):
    """Run the node's VJP once per batch element and stack the results."""
    from .. import stack, zeros
    per = []
    for b in range(B):
        gb = [None if g is None else g[b] for g in gs]
        if all(g is None for g in gb):
            per.append(None)
            continue
        per.append(reduce_grads(node, node._apply(gb)))
    n = len(node._next)
    out = []
    for k in range(n):
        col = [p[k] if p is not None and k < len(p) else None for p in per]
        ref = next((c for c in col if c is not None), None)
        if ref is None:
            out.append(None)
            continue
        col = [c if c is not None else zeros(ref.shape, dtype=ref.dtype) for c in col]
        out.append(stack(col, 0))
    return tuple(out)


def _fit_all(node, gx, B):
    """Batch-aware version of the engine's reduce_grads: each gradient to (B, *input_shape)."""
    if type(gx) is not tuple:
        gx = tuple(gx) if isinstance(gx, list) else (gx,)
    meta = node._meta
    if meta is None:
        return gx
    out = list(gx)
    for i, m in enumerate(meta):
        g = out[i] if i < len(out) else None
        if m is None or g is None:
            continue
        shape, dtype = m
        g = sum_to_batched(g, shape, B)
        if g._data.dtype != dtype:
            from .._dtype import from_np
            g = g.to(from_np(dtype))
        out[i] = g
    return tuple(out)


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
