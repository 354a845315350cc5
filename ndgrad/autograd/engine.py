"""The reverse-mode engine: one traversal of the backward graph, with pluggable behaviours.

Scheduling is iterative (no recursion, so a 100 000-op chain works): first count, for every
node reachable from the roots, how many edges point at it; then repeatedly run the ready node
with the highest sequence number (the newest op; AccumulateGrad nodes rank above all), as
torch's engine does. A node is ready when all its dependents have delivered their gradient,
so each node runs once with the sum of its incoming gradients.

Gradients are Tensors; ``None`` means zero and is never materialised. Under ``create_graph``
the rules run with grad mode on, so the backward itself is recorded (higher-order grads), and
gradients are accumulated out of place; otherwise rules run under no_grad and saved values
are released right after their node ran (unless ``retain_graph``).

What running one node means is a *behaviour* (`Backward` and its subclasses); the traversal
(`run_backward`: dependency counts, ready heap, input buffers, captures, release of saved
values) is the same for all of them:

- plain (`Backward`): the node's rule, its hooks, AccumulateGrad into ``.grad``. The loop
  inlines this behaviour's node step on its fast path;
- observed (`ObservedBackward`, when a special mode is on as the backward starts): the same
  steps wrapped by the registered observers (profiler events, anomaly-mode checks), see
  `node_observers`;
- batched (``autograd._batched_backward.BatchedBackward``): every gradient carries a leading batch
  dimension (``autograd.grad(..., is_grads_batched=True)``).
"""

import heapq
import sys
import threading
import weakref
from functools import partial

from .. import _state
from .._graph_core import FREED, AccumulateGrad, GraphTask, accumulate_grad, current_graph_task
from .._legacy import Variable
from .._ops.broadcast import reduce_grads
from .._tensor import Tensor

__all__ = ["run_backward", "Backward", "ObservedBackward", "node_observers", "leaf_observers"]

_tls = _state.tls

# Observers of the observed behaviour (they register themselves while their mode is on).
# A node observer has ``around(node, run)`` returning the node's gradients (it must call
# ``run()`` exactly once), ``check(node, grads)`` returning them checked, and
# ``on_error(node, exc)`` called when running or checking the node raised (before the
# exception propagates); they run in registration order, the first outermost.
# A leaf observer (the profilers) sees an AccumulateGrad node's phases: ``open_leaf(node)`` /
# ``open_accumulate(node, grad_shape)`` return an event that ``close(event)`` ends, and
# ``begin_kernel(var)`` / ``end_kernel(token, var, g)`` bracket the accumulation itself.
node_observers = []
leaf_observers = []


class Backward:
    """The plain behaviour: how one node of a backward runs.

    Every method is one step of a node as torch's engine takes it. `run_backward` inlines
    `apply` on its fast path (keep the two in step); subclasses override steps to change
    what running a node means (ObservedBackward below, autograd._batched_backward.BatchedBackward).
    """

    __slots__ = ()

    def apply(self, node, gs):
        """The node's rule on its incoming gradients `gs`: one gradient per input edge,
        fitted to its input's shape and dtype."""
        gx = node._apply(gs)
        if type(gx) is not tuple or node._meta is not None:
            gx = reduce_grads(node, gx)
        return gx

    def tensor_hooks(self, hooks, g):
        """A tensor's ``register_hook`` hooks on its gradient `g`; what one returns replaces
        `g` for the hooks after it and for the graph."""
        for fn in list(hooks.values()):
            r = fn(g)
            if r is not None:
                if g is None:
                    raise RuntimeError("can't replace a None gradient with a non-None value")
                if r._data.shape != g._data.shape:
                    raise RuntimeError(f"hook '{getattr(fn, '__name__', fn)}' has changed the "
                                       "size of value")
                g = r
        return g

    def pre_hooks(self, node, gs, extra):
        """Before a node runs: its outputs' tensor hooks, ``retain_grad``, then the node's
        ``register_prehook`` hooks. Returns the (possibly replaced) gradients."""
        tensor_hooks = extra.get("tensor_pre_hooks")
        if tensor_hooks:
            for nr, hooks in list(tensor_hooks.items()):
                if not hooks:
                    continue
                # an output without a gradient calls its hooks with None, as torch's
                g = gs[nr] if nr < len(gs) else None
                g = self.tensor_hooks(hooks, g)
                if nr < len(gs):
                    gs[nr] = g
        retain = extra.get("retain_hooks")
        if retain:
            for nr, fn in list(retain.items()):
                if nr < len(gs) and gs[nr] is not None:
                    fn(gs[nr])
        pre = extra.get("pre_hooks")
        if pre:
            self.node_prehooks(pre, gs)
        return gs

    def tensor_pre_hooks(self, node, gs, extra):
        """A node that this backward reaches but does not run: only its outputs' tensor hooks
        and ``retain_grad`` (torch's call_tensor_pre_hooks), not its ``register_prehook``
        hooks."""
        pre = extra.get("pre_hooks")
        if not pre:
            return self.pre_hooks(node, gs, extra)
        extra = dict(extra)
        del extra["pre_hooks"]
        return self.pre_hooks(node, gs, extra)

    def node_prehooks(self, hooks, gs):
        """A node's ``register_prehook`` hooks on `gs` (replaced in place by a hook's
        result)."""
        for fn in list(hooks.values()):
            r = fn(tuple(gs))
            if r is not None:
                gs[:] = list(r)

    def post_hooks(self, hooks, gx, gs):
        """A node's ``register_hook`` hooks ``fn(grad_inputs, grad_outputs)`` after it ran."""
        for fn in list(hooks.values()):
            r = fn(tuple(gx), tuple(gs))
            if r is not None:
                gx = tuple(r)
        return gx

    # --- AccumulateGrad ---------------------------------------------------------------------
    def leaf(self, node, gs, runs, captures, captured, create_graph):
        """An AccumulateGrad node: the leaf's tensor hooks and the capture for autograd.grad;
        then, when this backward accumulates into the leaf (`runs`), the node's pre-hooks,
        the accumulation, the post-accumulate-grad hooks and the node's hooks."""
        self.leaf_gradient(node, gs, captures, captured)
        if runs and gs and gs[0] is not None:
            extra = node._extra
            if extra is None:
                self.accumulate(node, gs, create_graph)
                return
            # register_prehook hooks run before the accumulation, register_hook ones after
            # it with ((), grad_outputs), as in torch.
            pre = extra.get("pre_hooks")
            if pre:
                self.node_prehooks(pre, gs)
            post = extra.get("hooks")
            if not post:
                self.accumulate(node, gs, create_graph)
                return
            # The gradient is held weakly meanwhile, so the accumulation may still steal it
            # (torch counts its post hooks' reference as expected): a post hook then sees
            # ``.grad``'s memory as grad_outputs[0] (a detached alias, as torch's stolen
            # gradient is), changes made by post-accumulate hooks included.
            if node.variable._grad is not None or create_graph:
                grad_outputs = tuple(gs)  # nothing to steal: the hooks get the gradient
                self.accumulate(node, gs, create_graph)
            else:
                ref = weakref.ref(gs[0])
                rest = tuple(gs[1:])
                self.accumulate(node, gs, create_graph)
                g = ref()
                if g is None:  # (cannot happen: either stolen into .grad or held elsewhere)
                    g = node.variable._grad
                if g is node.variable._grad:
                    g = g.detach()
                grad_outputs = (g,) + rest
            for fn in list(post.values()):
                fn((), grad_outputs)

    def leaf_gradient(self, node, gs, captures, captured):
        """A leaf's incoming gradient ``gs[0]`` after its tensor hooks, captured for
        autograd.grad when the leaf is a target."""
        var = node.variable
        if var._extra is not None:
            if "grad_dtype" in var._extra and gs and gs[0] is not None:
                # Tensor.grad_dtype: the leaf's gradients arrive in that dtype (None: as is)
                want = var._extra["grad_dtype"]
                if want is not None and gs[0]._data.dtype != want.np:
                    gs[0] = gs[0].to(want)
            hooks = var._extra.get("hooks")
            if hooks and gs and gs[0] is not None:
                gs[0] = self.tensor_hooks(hooks, gs[0])
        if captures is not None and (node, 0) in captures and gs and gs[0] is not None:
            captured[(node, 0)] = gs[0]

    def accumulate(self, node, gs, create_graph):
        """``gs[0]`` into the leaf's ``.grad``, then its post-accumulate-grad hooks."""
        var = node.variable
        g = gs[0]
        gs[0] = None  # drop the engine's reference so an owned gradient can be stolen
        accumulate_grad(var, g, create_graph)
        extra = var._extra
        if extra is not None:
            hooks = extra.get("post_acc_hooks")
            if hooks:
                _post_accumulate_hooks(hooks, var)


class ObservedBackward(Backward):
    """The plain steps, announced to `node_observers` and `leaf_observers` (the profiler's
    events, anomaly mode's checks). The engine takes it while a special mode is on."""

    __slots__ = ()

    def apply(self, node, gs):
        observers = tuple(node_observers)
        # Wrap the node in its observers, innermost last. Partials, not nested closures: a
        # closure calling itself is a reference cycle that would keep `gs` alive until a GC.
        call = partial(node._apply, gs)
        for obs in reversed(observers):
            call = partial(obs.around, node, call)
        try:
            gx = call()
            for obs in observers:
                gx = obs.check(node, gx)
        except Exception as exc:
            for obs in observers:
                obs.on_error(node, exc)
            raise
        if type(gx) is not tuple or node._meta is not None:
            gx = reduce_grads(node, gx)
        return gx

    def leaf(self, node, gs, runs, captures, captured, create_graph):
        """As in torch's engine, the leaf's tensor hooks, the capture for autograd.grad and
        the node's own pre- and post-hooks run inside the node's evaluation event, while only
        the accumulation and the post-accumulate-grad hooks run inside the node itself, which
        runs (with an undefined gradient too) only when this backward accumulates into it."""
        observers = tuple(leaf_observers)
        outer = [obs.open_leaf(node) for obs in observers]
        try:
            self.leaf_gradient(node, gs, captures, captured)
            if runs:
                self._observed_accumulate(node, gs, create_graph, observers)
        finally:
            for obs, ev in zip(reversed(observers), reversed(outer)):
                obs.close(ev)

    def _observed_accumulate(self, node, gs, create_graph, observers):
        extra = node._extra
        post = None
        if gs and gs[0] is not None and extra is not None:
            pre = extra.get("pre_hooks")
            if pre:
                self.node_prehooks(pre, gs)
            post = extra.get("hooks")
        grad_outputs = tuple(gs) if post else None
        g = gs[0] if gs else None
        shape = list(g._data.shape) if g is not None else []
        inner = [obs.open_accumulate(node, shape) for obs in observers]
        try:
            if g is not None:
                g = None  # only `gs` holds the gradient now, so it can be stolen
                self.accumulate(node, gs, create_graph)
        finally:
            for obs, ev in zip(reversed(observers), reversed(inner)):
                obs.close(ev)
        if post:
            for fn in list(post.values()):
                fn((), grad_outputs)

    def accumulate(self, node, gs, create_graph):
        """Backward.accumulate with anomaly checks on the gradient and the profilers' kernel
        events around the accumulation into ``.grad``."""
        var = node.variable
        g = gs[0]
        gs[0] = None  # only this frame may hold the gradient now, so it can be stolen
        for obs in tuple(node_observers):
            g = obs.check(node, (g,))[0]
        observers = tuple(leaf_observers)
        kernels = [obs.begin_kernel(var) for obs in observers]
        accumulate_grad(var, g, create_graph)
        for obs, token in zip(reversed(observers), reversed(kernels)):
            obs.end_kernel(token, var, g)
        g = None
        extra = var._extra
        if extra is not None:
            hooks = extra.get("post_acc_hooks")
            if hooks:
                _post_accumulate_hooks(hooks, var)


def _post_accumulate_hooks(hooks, var):
    """Run a leaf's post-accumulate-grad hooks; as torch, each must return None (the
    gradient is already in ``.grad`` when one does not)."""
    for fn in list(hooks.values()):
        res = fn(var)
        if res is not None:
            if isinstance(res, Tensor):
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")
            raise TypeError(f"expected Variable, but hook returned '{type(res).__name__}'")


PLAIN = Backward()
OBSERVED = ObservedBackward()


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


def _capture(node, gs, captures, captured):
    for nr in range(len(gs)):
        if (node, nr) in captures and gs[nr] is not None:
            captured[(node, nr)] = gs[nr]


def needed_nodes(root_nodes, deps, terminals, targets, run_targets=()):
    """Which nodes must run to reach the `targets` (leaf AccumulateGrads and captured nodes):
    a dict node -> bool, or None when all must. When every terminal node is a target leaf,
    each node has a path to a target and the pass is skipped. A target that is not a leaf
    runs only when in `run_targets` (backward's non-leaf inputs) or on the way to another.

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
        ok = node in targets and (type(node) is AccumulateGrad or node in run_targets)
        if not ok:
            for e in node._next:
                if e is not None and (get(e[0]) or e[0] in targets):
                    ok = True
                    break
        needed[node] = ok
    return needed


# Reentrant backward (a backward started inside a node of another, e.g. by a custom
# Function or checkpoint) recurses on the Python stack. As torch's engine does past a depth,
# every _REENTRANT_HOP nested backwards the next one runs on a fresh thread (the caller waits
# for it), which starts with an empty Python stack and the caller's thread-local modes: a
# chain of thousands of reentrant backwards then never meets the recursion limit.
_REENTRANT_HOP = 32
_reentrant = threading.local()


def run_backward(roots, keep_graph, create_graph, captures=None, accumulate=True,
                 accumulate_only=None, behaviour=None):
    """Run the graph from `roots` (see `_run_backward`), on a fresh thread when this thread
    is already _REENTRANT_HOP backwards deep."""
    depth = getattr(_reentrant, "depth", 0)
    if depth >= _REENTRANT_HOP:
        return _on_fresh_thread(_run_backward, (roots, keep_graph, create_graph, captures,
                                                accumulate, accumulate_only, behaviour))
    _reentrant.depth = depth + 1
    try:
        return _run_backward(roots, keep_graph, create_graph, captures, accumulate,
                             accumulate_only, behaviour)
    finally:
        _reentrant.depth = depth


def _on_fresh_thread(fn, args):
    """`fn(*args)` on a new thread carrying this thread's modes (grad and inference mode,
    saved-tensor hooks, the running graph tasks, autocast), its result or exception handed
    back. The worker's changes to those modes stay on the worker, as on torch's."""
    modes = dict(_tls.__dict__)
    amp = sys.modules.get("ndgrad.amp.autocast_mode")
    amp_modes = dict(amp._state.__dict__) if amp is not None else None
    box = {}

    def work():
        _tls.__dict__.update(modes)
        if amp_modes is not None:
            amp._state.__dict__.update(amp_modes)
        try:
            box["result"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            box["error"] = e

    worker = threading.Thread(target=work, name="ndgrad-reentrant-backward", daemon=True)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


def _run_backward(roots, keep_graph, create_graph, captures=None, accumulate=True,
                  accumulate_only=None, behaviour=None):
    """Run the graph from `roots` (a list of ``((node, nr), grad)``).

    `captures`: ``{(node, nr): [result slots...]}`` for autograd.grad, filled with the
    gradient arriving at that edge (before a running node's hooks, after a skipped node's
    tensor hooks). `accumulate`: run AccumulateGrad nodes (backward) or not (grad).
    `accumulate_only`: when given, only these AccumulateGrad nodes run, and these other
    nodes run (backward's non-leaf inputs, whose retain_grad hooks fill their .grad).
    `behaviour`: how each node runs (a `Backward`); by default the plain one, or the observed
    one while a special mode (profiler, anomaly detection, ...) is on when the backward starts.
    Returns the captured gradients as a dict ``{(node, nr): grad}``.
    """
    if behaviour is None:
        behaviour = OBSERVED if _state.special else PLAIN
    # The plain behaviour's node step is inlined below.
    plain = behaviour is PLAIN
    # Every AccumulateGrad node accumulates, none is captured: a leaf without hooks only adds
    # its gradient into .grad.
    plain_leaves = plain and accumulate and captures is None and accumulate_only is None
    if plain_leaves and not create_graph and len(roots) == 1:
        (node, nr), g = roots[0]
        if g is not None and type(node) is not AccumulateGrad and node._extra is None:
            leaves = _hook_free_leaves(node)
            if leaves is not None:
                # A node class may fuse this path (the compiled region's node does):
                # ``_into_leaves(nr, g, keep_graph)`` returns False to leave it to the loop's
                # steps below, having changed nothing.
                into = getattr(type(node), "_into_leaves", None)
                if into is None or not into(node, nr, g, keep_graph):
                    _run_into_leaves(node, nr, g, leaves, keep_graph)
                return {}

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
        needed = needed_nodes(root_nodes, deps, terminals, targets, accumulate_only or ())

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
    task = GraphTask(deps, heap, needed,
                     captures is not None or accumulate_only is not None or not accumulate)
    tasks = _tls.__dict__.setdefault("graph_tasks", [])
    tasks.append(task)
    prev_grad_mode = _tls.grad_enabled
    # The modes every node starts from (torch's engine restores them around each node): user
    # code a node runs (hooks, custom Functions, unpack hooks) may change them.
    modes = _state.node_modes()
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
                if plain_leaves and extra is None and node.variable._extra is None:
                    # Backward.leaf, inline, for a leaf without hooks in a plain backward:
                    # only the accumulation. `gs` is dropped first so that this frame's `g`
                    # is the engine's one reference (an owned gradient is stolen, see _owned).
                    g = gs[0] if gs else None
                    gs = None
                    if g is not None:
                        accumulate_grad(node.variable, g, create_graph)
                        g = None
                    continue
                runs = accumulate and (accumulate_only is None or node in accumulate_only)
                if not runs and (captures is None or (node, 0) not in captures):
                    continue  # a leaf this backward does not target: its hooks stay quiet
                behaviour.leaf(node, gs, runs, captures, captured, create_graph)
                _state.restore_node_modes(modes, create_graph)
                continue
            if needed is not None and not needed.get(node, False):
                # A node reached but not run: its tensor hooks and retain_grad, then the
                # captures for autograd.grad (after those hooks), as torch's engine.
                if extra is not None:
                    gs = behaviour.tensor_pre_hooks(node, gs, extra)
                    _state.restore_node_modes(modes, create_graph)
                if captures is not None and node in capture_nodes:
                    _capture(node, gs, captures, captured)
                continue
            # A node that runs is captured before any of its hooks (a leaf's gradient is
            # captured after its tensor hooks, in Backward.leaf_gradient), as torch does.
            if captures is not None and node in capture_nodes:
                _capture(node, gs, captures, captured)
            if extra is not None:
                gs = behaviour.pre_hooks(node, gs, extra)
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
            if not plain:
                gx = behaviour.apply(node, gs)
            else:
                # Backward.apply, inline
                if op is not None and op.n_out == 1:
                    gx = op.vjp(node, gs[0])  # the common case, without Node._apply's frame
                else:
                    gx = node._apply(gs)
                if type(gx) is not tuple or node._meta is not None:
                    gx = reduce_grads(node, gx)
            if extra is not None:
                post = extra.get("hooks")
                if post:
                    gx = behaviour.post_hooks(post, gx, gs)
            if extra is not None or op is None or _state.saved_hooks_active:
                # user code ran in this node (hooks, a custom Function, unpack hooks)
                _state.restore_node_modes(modes, create_graph)
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
        _run_callbacks(task)
    finally:
        _state.restore_node_modes(modes, prev_grad_mode)
        tasks.pop()
    return captured


def _run_callbacks(task):
    """Run the callbacks queued on `task` (Variable._execution_engine.queue_callback) in order,
    including the ones they queue, once its graph is done."""
    callbacks = task.callbacks
    i = 0
    while i < len(callbacks):
        callbacks[i]()
        i += 1


class _ExecutionEngine:
    """``Variable._execution_engine``: torch's handle on its engine; here only
    ``queue_callback`` (run a function when the running backward has finished)."""

    def queue_callback(self, callback):
        task = current_graph_task()
        if task is None:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        task.callbacks.append(callback)


Variable._execution_engine = _ExecutionEngine()


def _hook_free_leaves(node):
    """When every edge of `node` is None or leads to its own hook-free leaf (a compiled region
    over a model's parameters, one op on leaves), the dependency counts of a backward from
    `node` alone: ``{leaf AccumulateGrad: 1}``; else None."""
    deps = {}
    for e in node._next:
        if e is None:
            continue
        m = e[0]
        if (type(m) is not AccumulateGrad or m._extra is not None
                or m.variable._extra is not None or m in deps):
            return None
        deps[m] = 1
    return deps


def _run_into_leaves(node, nr, g, deps, keep_graph):
    """run_backward for one root `node` (gradient `g` for its output `nr`, no hooks on it)
    whose edges lead only to distinct hook-free leaves (see _hook_free_leaves), in a plain
    backward without create_graph: the loop's steps for that graph (node rule, release of its
    saved values, accumulation into each leaf) without its scheduling. No hook can observe
    the order in which the leaves accumulate."""
    gs = [None] * nr
    gs.append(g)
    g = None
    tasks = _tls.__dict__.setdefault("graph_tasks", [])
    task = GraphTask(deps, [], None)
    tasks.append(task)
    prev_grad_mode = _tls.grad_enabled
    modes = _state.node_modes()
    _tls.grad_enabled = False
    try:
        op = node._op
        if op is not None and op.n_out == 1:
            gx = op.vjp(node, gs[0])
        else:
            gx = node._apply(gs)
        if type(gx) is not tuple or node._meta is not None:
            gx = reduce_grads(node, gx)
        if not keep_graph and node._saved:
            if op is not None:
                node._saved = FREED
            else:
                node._release()
        del gs
        # A list this frame empties as it goes, so that each gradient's only holder is the
        # local `g` when it reaches its leaf (an owned gradient is stolen, see _owned).
        gx = list(gx)
        for i, e in enumerate(node._next[:len(gx)]):
            if e is None:
                continue
            g = gx[i]
            gx[i] = None
            if g is not None:
                accumulate_grad(e[0].variable, g, False)
                g = None
        # A custom Function's backward may have queued engine callbacks (queue_callback).
        _run_callbacks(task)
    finally:
        _state.restore_node_modes(modes, prev_grad_mode)
        tasks.pop()


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
