"""The reverse-mode engine: runs the backward graph from some roots.

Scheduling is iterative (no recursion, so a 100 000-op chain works): first count, for every
node reachable from the roots, how many edges point at it; then repeatedly run the ready node
with the highest sequence number (the newest op; AccumulateGrad nodes rank above all), as
torch's engine does. A node is ready when all its dependents have delivered their gradient,
so each node runs once with the sum of its incoming gradients.

Gradients are Tensors; ``None`` means zero and is never materialised. Under ``create_graph``
the rules run with grad mode on, so the backward itself is recorded (higher-order grads), and
gradients are accumulated out of place; otherwise rules run under no_grad and saved values
are released right after their node ran (unless ``retain_graph``).
"""

import heapq
import sys

import numpy as np

from .. import _state
from .._ops.broadcast import validated_sum_to
from . import _special_engine
from .graph import FREED, AccumulateGrad

__all__ = ["run_backward", "accumulate_grad", "reduce_grads"]

_tls = _state.tls
_getrefcount = sys.getrefcount


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
                g = g.to(_dtype_of(dtype))
            out[i] = g
        gx = tuple(out)
    return gx


def _dtype_of(np_dtype):
    from .._dtype import from_np
    return from_np(np_dtype)


def _owned(g):
    """True when nothing but the engine holds `g` and its array, so it can become ``.grad``.

    The counts are those of the one call chain that reaches here (_accumulate's local,
    accumulate_grad's and this function's arguments, getrefcount's own; for the array also
    accumulate_grad's `data`); any other holder (a
    second leaf given the same gradient, the user's grad_outputs) makes them higher and the
    gradient is copied instead. tests/test_engine.py checks both outcomes.
    """
    d = g._data
    return (_getrefcount(g) <= 4 and _getrefcount(d) <= 4 and d.base is None
            and d.flags.writeable and g._grad_fn is None)


def accumulate_grad(var, g, create_graph):
    """Add `g` into ``var.grad`` following torch's default gradient layouts."""
    Tensor = _TensorCls or _tensor_cls()
    old = var._grad
    if old is None:
        if create_graph:
            var._grad = g
            return
        data = g._data
        vdata = var._data
        # Keep the parameter's memory layout (strides) when it is dense, like torch.
        if data.strides != vdata.strides and vdata.flags.c_contiguous is False and \
                (vdata.flags.f_contiguous or _is_dense(vdata)):
            new = np.empty_like(vdata)
            np.copyto(new, data)
            var._grad = Tensor(new)
        elif _owned(g) and data.shape == vdata.shape:
            var._grad = _from_array(data) if g._extra is None and g._base is None else g.detach()
        else:
            var._grad = Tensor(np.array(data, order="K" if data.shape == vdata.shape else "C"))
        if var._grad._data.shape != vdata.shape:
            var._grad = Tensor(np.broadcast_to(var._grad._data, vdata.shape).copy())
    elif create_graph or _tls.grad_enabled:
        var._grad = old + g
    else:
        od = old._data
        if od.flags.writeable:
            np.add(od, g._data, out=od, casting="unsafe")
            old._vc[0] += 1
        else:
            var._grad = Tensor(od + g._data)


_TensorCls = None


def _tensor_cls():
    global _TensorCls, _from_array
    from .._tensor import Tensor, _from_array
    _TensorCls = Tensor
    return Tensor


_from_array = None


def _is_dense(a):
    """Non-overlapping and dense: some permutation of the dims is contiguous."""
    order = sorted(range(a.ndim), key=lambda i: a.strides[i])
    expected = a.itemsize
    for i in order:
        if a.shape[i] != 1 and a.strides[i] != expected:
            return False
        expected *= a.shape[i]
    return True


def _run_hooks(hooks, g):
    for fn in list(hooks.values()):
        r = fn(g)
        if r is not None:
            g = r
    return g


def _call_pre_hooks(node, gs, extra):
    tensor_hooks = extra.get("tensor_pre_hooks")
    if tensor_hooks:
        for nr, hooks in tensor_hooks.items():
            if nr < len(gs) and gs[nr] is not None and hooks:
                gs[nr] = _run_hooks(hooks, gs[nr])
    retain = extra.get("retain_hooks")
    if retain:
        for nr, fn in list(retain.items()):
            if nr < len(gs) and gs[nr] is not None:
                fn(gs[nr])
    pre = extra.get("pre_hooks")
    if pre:
        for fn in list(pre.values()):
            r = fn(tuple(gs))
            if r is not None:
                gs[:] = list(r)
    return gs


def _call_post_hooks(node, gx, gs, extra):
    post = extra.get("hooks")
    if post:
        for fn in list(post.values()):
            r = fn(tuple(gx), tuple(gs))
            if r is not None:
                gx = tuple(r)
    return gx


def graph_dependencies(roots):
    """Walk the graph from `roots` (a list of ``((node, nr), grad)``).

    Returns ``(root_nodes, deps, terminals)``: the distinct root nodes in order; for every
    reachable node, how many edges point at it (roots nobody points at are absent); and the
    terminal nodes (no outgoing edge), whose kinds decide whether `needed_nodes` must run."""
    deps = {}
    root_nodes = []
    seen = set()
    for (node, nr), g in roots:
        if node not in seen:
            seen.add(node)
            root_nodes.append(node)
    stack = list(root_nodes)
    deps_get = deps.get
    terminals = []
    while stack:
        node = stack.pop()
        terminal = True
        for e in node._next:
            if e is None:
                continue
            terminal = False
            m = e[0]
            d = deps_get(m)
            if d is None:
                # First edge into m: visit it, unless it is a root (visited already).
                deps[m] = 1
                if m not in seen:
                    stack.append(m)
            else:
                deps[m] = d + 1
        if terminal:
            terminals.append(node)
    return root_nodes, deps, terminals


def needed_nodes(root_nodes, deps, terminals, targets):
    """Which nodes must run to reach the `targets` (leaf AccumulateGrads and captured nodes):
    a dict node -> bool, or None when all must. When every terminal node is a target leaf,
    each node has a path to a target and the pass is skipped.

    Otherwise a topological order is built from `deps` (no node is pushed twice) and walked
    backwards, children before parents."""
    for node in terminals:
        if type(node) is not AccumulateGrad or node not in targets:
            break
    else:
        return None
    pending = dict(deps)
    order = [n for n in root_nodes if n not in pending]
    i = 0
    while i < len(order):
        for e in order[i]._next:
            if e is not None:
                m = e[0]
                d = pending[m] - 1
                if d:
                    pending[m] = d
                else:
                    order.append(m)
        i += 1
    needed = {}
    get = needed.get
    for node in reversed(order):
        ok = node in targets and type(node) is AccumulateGrad
        if not ok:
            for e in node._next:
                if e is not None and (get(e[0]) or e[0] in targets):
                    ok = True
                    break
        needed[node] = ok
    return needed


def run_backward(roots, keep_graph, create_graph, captures=None, accumulate=True,
                 accumulate_only=None):
    """Run the graph from `roots` (a list of ``((node, nr), grad)``).

    `captures`: ``{(node, nr): [result slots...]}`` for autograd.grad, filled with the
    gradient arriving at that edge (after tensor hooks). `accumulate`: run AccumulateGrad nodes
    (backward) or not (grad). `accumulate_only`: when given, only these AccumulateGrad nodes run.
    Returns the captured gradients as a dict ``{(node, nr): grad}``.
    """
    # 1. Dependencies of every reachable node.
    root_nodes, deps, terminals = graph_dependencies(roots)

    # 2. Which nodes must run (None: all of them).
    needed = None
    if captures is not None or accumulate_only is not None or not accumulate:
        targets = set()
        if captures:
            targets.update([node for node, nr in captures])
        if accumulate_only:
            targets.update(accumulate_only)
        needed = needed_nodes(root_nodes, deps, terminals, targets)

    # 3. Seed the input buffers with the root gradients.
    buffers = {}
    for (node, nr), g in roots:
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = []
        while len(buf) <= nr:
            buf.append(None)
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    heap = [(-n._seq, n) for n in root_nodes if n not in deps]
    heapq.heapify(heap)
    captured = {}
    capture_nodes = {n for n, _ in captures} if captures is not None else None

    # The running backward, for hooks that must know what else will run in it (multi-grad
    # hooks, checkpointing); pushed once per backward, so nodes pay nothing for it.
    task = GraphTask(deps, heap, needed)
    tasks = _tls.__dict__.setdefault("graph_tasks", [])
    tasks.append(task)
    prev_grad_mode = _tls.grad_enabled
    _tls.grad_enabled = create_graph
    heappop = heapq.heappop
    heappush = heapq.heappush
    # `ready` holds a node that became ready while the heap was empty: in a chain it runs next
    # without a round trip through the heap (it is the only candidate, so order is unchanged).
    ready = None
    # The gradients of `ready` when they never went through `buffers` (the usual case in a
    # chain: a node's only input edge delivers its only gradient).
    ready_gs = None
    try:
        while heap or ready is not None:
            if ready is not None:
                node = ready
                ready = None
                if ready_gs is not None:
                    gs = ready_gs
                    ready_gs = None
                else:
                    gs = buffers.pop(node, None) or []
            else:
                node = heappop(heap)[1]
                gs = buffers.pop(node, None) or []
            extra = node._extra
            if type(node) is AccumulateGrad:
                runs = accumulate and (accumulate_only is None or node in accumulate_only)
                if not runs and (captures is None or (node, 0) not in captures):
                    continue  # a leaf this backward does not target: its hooks stay quiet
                if _state.special:  # the same steps, with events for the profiler
                    _special_engine.accumulate_leaf(node, gs, runs, captures, captured,
                                                    create_graph)
                    continue
                leaf_gradient(node, gs, captures, captured)
                if runs:
                    if gs and gs[0] is not None:
                        if node._extra is not None:
                            _accumulate_with_node_hooks(node, gs, create_graph, node._extra)
                        else:
                            _accumulate(node, gs, create_graph)
                continue
            # autograd.grad captures a non-leaf's gradient before its tensor hooks run (a
            # leaf's is captured after them, above), as torch does.
            if captures is not None and node in capture_nodes:
                for nr in range(len(gs)):
                    if (node, nr) in captures and gs[nr] is not None:
                        captured[(node, nr)] = gs[nr]
            if extra is not None:
                gs = _call_pre_hooks(node, gs, extra)
            if needed is not None and not needed.get(node, False):
                continue
            # Skip a node whose incoming gradients are all None (zero), unless it asks to be
            # called anyway (custom Functions with materialize_grads).
            if gs and gs[0] is not None:
                empty = False
            else:
                empty = True
                for g in gs:
                    if g is not None:
                        empty = False
                        break
            if empty and not node._wants_none:
                if not keep_graph and node._saved:
                    node._release()
                _propagate_none(node, deps, heap)
                continue
            op = node._op
            if _state.special:
                gx = _apply_special(node, gs)
            elif op is not None and op.n_out == 1:
                gx = op.vjp(node, gs[0])  # the common case, without Node._apply's frame
            else:
                gx = node._apply(gs)
            if type(gx) is not tuple or node._meta is not None:
                gx = reduce_grads(node, gx)
            if extra is not None and extra.get("hooks"):
                gx = _call_post_hooks(node, gx, gs, extra)
            if not keep_graph and node._saved:
                if op is not None:
                    node._saved = FREED  # op nodes release as Node._release does
                else:
                    node._release()
            del gs
            for e, g in zip(node._next, gx):
                if e is None:
                    continue
                m = e[0]
                d = deps[m] - 1
                if d:
                    deps[m] = d
                    if g is not None:
                        if e[1] == 0 and m not in buffers:
                            buffers[m] = [g]  # _deliver's first case, inline
                        else:
                            _deliver(buffers, m, e[1], g)
                    continue
                # m's last pending edge: m becomes ready with its gradients.
                del deps[m]
                if ready is None and not heap:
                    ready = m
                    if g is not None:
                        nr = e[1]
                        buf = buffers.pop(m, None)
                        if buf is None and nr == 0:
                            ready_gs = [g]  # never stored: the next iteration takes it
                        else:
                            if buf is None:
                                buf = []
                            _add_to(buf, nr, g)
                            ready_gs = buf
                else:
                    if g is not None:
                        if e[1] == 0 and m not in buffers:
                            buffers[m] = [g]
                        else:
                            _deliver(buffers, m, e[1], g)
                    if ready is not None:
                        if ready_gs is not None:
                            buffers[ready] = ready_gs
                            ready_gs = None
                        heappush(heap, (-ready._seq, ready))
                        ready = None
                    heappush(heap, (-m._seq, m))
            # Drop this frame's references so a leaf can steal its gradient (see _owned).
            gx = g = None
    finally:
        _tls.grad_enabled = prev_grad_mode
        tasks.pop()
    return captured


def leaf_gradient(node, gs, captures, captured):
    """A leaf's incoming gradient (``gs[0]``) after its tensor hooks, captured for
    autograd.grad when it is a target: the first steps of an AccumulateGrad node."""
    var = node.variable
    if var._extra is not None:
        hooks = var._extra.get("hooks")
        if hooks and gs and gs[0] is not None:
            gs[0] = _run_hooks(hooks, gs[0])
    if captures is not None and (node, 0) in captures and gs and gs[0] is not None:
        captured[(node, 0)] = gs[0]


def _deliver(buffers, m, nr, g):
    """Add gradient `g` for output `nr` of node `m` into its input buffer."""
    buf = buffers.get(m)
    if buf is None:
        if nr == 0:
            buffers[m] = [g]
        else:
            buf = buffers[m] = [None] * (nr + 1)
            buf[nr] = g
    else:
        _add_to(buf, nr, g)


def _add_to(buf, nr, g):
    if len(buf) <= nr:
        buf.extend([None] * (nr + 1 - len(buf)))
    prev = buf[nr]
    buf[nr] = g if prev is None else prev + g


class GraphTask:
    """What a running backward still has to do: pending dependency counts, the ready heap,
    and which nodes it needs (None: all). Hooks never see the lone `ready` node of the
    engine's loop: it is always empty while hooks run."""

    __slots__ = ("deps", "heap", "needed")

    def __init__(self, deps, heap, needed):
        self.deps = deps
        self.heap = heap
        self.needed = needed


def current_graph_task():
    """The innermost backward running on this thread, or None."""
    tasks = _tls.__dict__.get("graph_tasks")
    return tasks[-1] if tasks else None


def _accumulate_with_node_hooks(node, gs, create_graph, extra):
    """AccumulateGrad whose node has hooks: ``register_prehook`` ones run before the
    accumulation, ``register_hook`` ones after it with ``((), grad_outputs)``, as in torch."""
    run_node_prehooks(extra, gs)
    post = extra.get("hooks")
    grad_outputs = tuple(gs) if post else None
    _accumulate(node, gs, create_graph)
    if post:
        for fn in list(post.values()):
            fn((), grad_outputs)


def run_node_prehooks(extra, gs):
    """A node's ``register_prehook`` hooks on its incoming gradients `gs` (replaced in place
    by what a hook returns)."""
    pre = extra.get("pre_hooks")
    if pre:
        for fn in list(pre.values()):
            r = fn(tuple(gs))
            if r is not None:
                gs[:] = list(r)


def _accumulate(node, gs, create_graph):
    var = node.variable
    g = gs[0]
    gs[0] = None  # drop the engine's reference so an owned gradient can be stolen
    if _state.special:
        g = _special_engine.check_grad(node, (g,))[0]
    accumulate_grad(var, g, create_graph)
    extra = var._extra
    if extra is not None:
        hooks = extra.get("post_acc_hooks")
        if hooks:
            for fn in list(hooks.values()):
                fn(var)


def _release_if(node, keep_graph):
    if not keep_graph:
        node._release()


def _propagate_none(node, deps, heap):
    for e in node._next:
        if e is None:
            continue
        m = e[0]
        d = deps[m] - 1
        if d:
            deps[m] = d
        else:
            del deps[m]
            heapq.heappush(heap, (-m._seq, m))


def _apply_special(node, gs):
    """Run a node while a special mode (anomaly detection, profiler) is active."""
    return _special_engine.apply_node(node, gs)
