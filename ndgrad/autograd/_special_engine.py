"""The engine's slow path while a special mode (anomaly detection, profiler) is active.

Observers append themselves to `node_observers`; each has ``around(node, run)`` returning the
node's gradients (it must call ``run()`` exactly once), ``check(node, grads)`` returning them
checked, and ``on_error(node, exc)`` called when running or checking the node raised (before
the exception propagates). Observers run in registration order, the first outermost.

AccumulateGrad nodes are run by `accumulate_leaf` instead; observers in `leaf_observers` (the
profilers) see their phases: ``open_leaf(node)`` / ``open_accumulate(node, grad_shape)`` return
an event that ``close(event)`` ends, and ``begin_kernel(var)`` / ``end_kernel(token, var, g)``
bracket the accumulation into ``var.grad`` itself.
"""

from functools import partial

node_observers = []
leaf_observers = []


def apply_node(node, gs):
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
    return gx


def check_grad(node, gx):
    """Checks only (the engine calls this for AccumulateGrad, which it runs itself)."""
    for obs in tuple(node_observers):
        gx = obs.check(node, gx)
    return gx


def accumulate_leaf(node, gs, runs, captures, captured, create_graph):
    """The engine's AccumulateGrad branch (engine.run_backward) while a special mode is on:
    the same steps in the same order (keep the two in step), announced to `leaf_observers`.

    As in torch's engine, the leaf's tensor hooks, the capture for autograd.grad and the
    node's own pre- and post-hooks run inside the node's evaluation, while only the
    accumulation and the post-accumulate-grad hooks run inside the node itself, which runs
    (with an undefined gradient too) only when this backward accumulates into the leaf.
    """
    observers = tuple(leaf_observers)
    outer = [obs.open_leaf(node) for obs in observers]
    try:
        from .engine import leaf_gradient  # engine imports this module
        leaf_gradient(node, gs, captures, captured)
        if runs:
            _run_leaf(node, node.variable, gs, create_graph, observers)
    finally:
        for obs, ev in zip(reversed(observers), reversed(outer)):
            obs.close(ev)


def _run_leaf(node, var, gs, create_graph, observers):
    """engine._accumulate_with_node_hooks and engine._accumulate, with the node's events."""
    from .engine import accumulate_grad, run_node_prehooks
    extra = node._extra
    post = None
    if gs and gs[0] is not None and extra is not None:
        run_node_prehooks(extra, gs)
        post = extra.get("hooks")
    grad_outputs = tuple(gs) if post else None
    g = gs[0] if gs else None
    shape = list(g._data.shape) if g is not None else []
    inner = [obs.open_accumulate(node, shape) for obs in observers]
    try:
        if g is not None:
            # Only this frame may hold the gradient now, so accumulate_grad can steal it.
            gs[0] = None
            g = check_grad(node, (g,))[0]
            kernels = [obs.begin_kernel(var) for obs in observers]
            accumulate_grad(var, g, create_graph)
            for obs, token in zip(reversed(observers), reversed(kernels)):
                obs.end_kernel(token, var, g)
            g = None
            acc_hooks = var._extra.get("post_acc_hooks") if var._extra is not None else None
            if acc_hooks:
                for fn in list(acc_hooks.values()):
                    fn(var)
    finally:
        for obs, ev in zip(reversed(observers), reversed(inner)):
            obs.close(ev)
    if post:
        for fn in list(post.values()):
            fn((), grad_outputs)
