"""Batched backward: ``autograd.grad(..., is_grads_batched=True)`` in one graph traversal.

Every gradient flowing through the graph carries a leading batch dimension B (cotangent
number b is ``g[b]``). The traversal is the engine's (``engine.run_backward`` with the
`BatchedBackward` behaviour), and each node is run in one of three ways:

1. a *batched rule* from ``_RULES`` (matrix products, views, reductions, casts): the op's
   VJP rewritten so that a leading batch dimension passes through (``matmul`` broadcasts over
   it, ``sum``/``view`` backwards shift their dims by one);
2. *transparent* ops (elementwise unary/binary ops and ``where``): their VJP multiplies ``g``
   elementwise with saved values, so NumPy broadcasting already carries the batch; only the
   reduction of broadcast gradients back to the input shape is made batch-aware;
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
        rule = op.batched_vjp or _rules().get(op.name)
        transparent = op.batch_transparent or op.name in _TRANSPARENT
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


# --------------------------------------------------------------------------- batched rules
_TRANSPARENT = {"where", "clamp", "mul_scalar"}
_RULE_TABLE = None


def _rules():
    global _RULE_TABLE
    if _RULE_TABLE is None:
        _RULE_TABLE = _build_rules()
    return _RULE_TABLE


def _build_rules():
    from .. import matmul
    from .._ops.elementwise import _conj

    def needs(ctx, i):
        return ctx._next[i] is not None

    def mm(ctx, g):
        a, b = ctx.saved
        return (matmul(g, _conj(b).mT) if needs(ctx, 0) else None,
                matmul(_conj(a).mT, g) if needs(ctx, 1) else None)

    def mv(ctx, g):
        a, v = ctx.saved
        ga = g.unsqueeze(-1) * _conj(v) if needs(ctx, 0) else None
        gv = matmul(g, _conj(a)) if needs(ctx, 1) else None
        return ga, gv

    def dot(ctx, g):
        a, b = ctx.saved
        return (g.unsqueeze(-1) * _conj(b) if needs(ctx, 0) else None,
                g.unsqueeze(-1) * _conj(a) if needs(ctx, 1) else None)

    def addmm(ctx, g):
        a, b = ctx.saved
        beta, alpha = ctx._params
        gc = (g if beta == 1 else g * beta) if needs(ctx, 0) else None
        ga = gb = None
        if needs(ctx, 1):
            ga = matmul(g, _conj(b).mT)
            ga = ga if alpha == 1 else ga * alpha
        if needs(ctx, 2):
            gb = matmul(_conj(a).mT, g)
            gb = gb if alpha == 1 else gb * alpha
        return gc, ga, gb

    def bmm(ctx, g):
        a, b = ctx.saved
        return (matmul(g, _conj(b).mT) if needs(ctx, 0) else None,
                matmul(_conj(a).mT, g) if needs(ctx, 1) else None)

    def reshape_back(ctx, g):
        shape = ctx._shape
        return (g.reshape((g._data.shape[0],) + tuple(shape)),)

    def reduce_back(scale):
        def rule(ctx, g):
            dims, keepdim, _ = ctx._params
            shape = tuple(ctx._shape)
            nd = len(shape)
            dims_t = tuple(range(nd)) if dims is None else tuple(
                d % nd if nd else 0 for d in ((dims,) if isinstance(dims, int) else dims))
            if not keepdim and nd:
                for d in sorted(dims_t):
                    g = g.unsqueeze(1 + d)
            g = g.expand((g._data.shape[0],) + shape)
            if scale:
                n = 1
                for d in dims_t:
                    n *= shape[d] if nd else 1
                g = g / n
            return (g,)
        return rule

    def transpose(ctx, g):
        d0, d1 = ctx._params
        return (g.transpose(1 + d0, 1 + d1),)

    def t(ctx, g):
        return (g.transpose(1, 2) if g._data.ndim == 3 else g,)

    def permute(ctx, g):
        dims = ctx._params
        inv = [0] * len(dims)
        for i, d in enumerate(dims):
            inv[d] = i
        return (g.permute([0] + [1 + d for d in inv]),)

    def expand(ctx, g):
        return (sum_to_batched(g, tuple(ctx._shape), g._data.shape[0]),)

    def unsqueeze(ctx, g):
        return (g.squeeze(1 + ctx._params),)

    def identity(ctx, g):
        return (g,)

    def to_copy(ctx, g):
        from .._dtype import from_np
        src = ctx._extra["dtype"]
        if g._data.dtype.kind == "c" and src.kind != "c":
            g = g.real
        return (g.to(from_np(src)),)

    def stack(ctx, g):
        parts = g.unbind(1 + ctx._params)
        return tuple(p if e is not None else None for p, e in zip(parts, ctx._next))

    def cat(ctx, g):
        dim = 1 + ctx._params
        out, a = [], 0
        for size, e in zip(ctx._extra["sizes"], ctx._next):
            out.append(g.narrow(dim, a, size) if e is not None else None)
            a += size
        return tuple(out)

    def select(ctx, g):
        from .. import zeros
        from .._ops.shape import _select_scatter
        dim, index = ctx._params
        z = zeros((g._data.shape[0],) + tuple(ctx._shape), dtype=g.dtype)
        return (_select_scatter(z, g, 1 + dim, index),)

    def slice_(ctx, g):
        from .. import zeros
        from .._ops.shape import _slice_scatter
        dim, start, stop, step = ctx._params
        z = zeros((g._data.shape[0],) + tuple(ctx._shape), dtype=g.dtype)
        return (_slice_scatter(z, g, 1 + dim, start, stop, step),)

    def unbind(ctx, gs):
        from .. import stack as stack_
        from .. import zeros
        dim = ctx._params
        shape = tuple(ctx._shape)
        ref = next(g for g in gs if g is not None)
        part = (ref._data.shape[0],) + shape[:dim] + shape[dim + 1:]
        gs = list(gs) + [None] * (shape[dim] - len(gs))
        full = [g if g is not None else zeros(part, dtype=ref.dtype) for g in gs]
        return (stack_(full, 1 + dim),)

    def linear_addmm(ctx, g):
        # F.linear's fused addmm: out = x @ wt + b; ctx._params says whether b is 2-D.
        x, wt = ctx.saved
        n = ctx._next
        gb = (g if ctx._params else g.sum(1)) if n[0] is not None else None
        gx = matmul(g, _conj(wt).mT) if n[1] is not None else None
        gw = matmul(_conj(x).mT, g) if n[2] is not None else None
        return gb, gx, gw

    def softmax_like(kernel_name):
        def rule(ctx, g):
            from .._ops import nn_kernels
            kernel = getattr(nn_kernels, kernel_name)
            (y,) = ctx.saved
            dim = ctx._params
            # y is expanded (a differentiable view) so the kernel sees equal shapes and its
            # own backward needs no broadcast reduction under create_graph.
            return (kernel.call(g, y.expand_as(g), params=dim + 1 if dim >= 0 else dim),)
        return rule

    table = {"stack": stack, "linear_addmm": linear_addmm,
             "softmax": softmax_like("SOFTMAX_BW"),
             "log_softmax": softmax_like("LOG_SOFTMAX_BW"), "cat": cat, "select": select,
             "slice": slice_, "unbind": unbind,
             "mm": mm, "mv": mv, "dot": dot, "addmm": addmm, "bmm": bmm,
             "view": reshape_back, "_unsafe_view": reshape_back,
             "_reshape_alias": reshape_back,
             "squeeze": reshape_back, "squeeze_dim": reshape_back,
             "squeeze_dims": reshape_back, "unsqueeze": unsqueeze,
             "sum": reduce_back(False), "sum_dim": reduce_back(False),
             "mean": reduce_back(True), "mean_dim": reduce_back(True),
             "transpose": transpose, "t": t, "permute": permute, "expand": expand,
             "clone": identity, "alias": identity, "_to_copy": to_copy}
    return table

