"""The engine's slow path while a special mode (anomaly detection, profiler) is active.

Observers append themselves to `node_observers`; each has ``around(node, run)`` returning the
node's gradients (it must call ``run()`` exactly once), ``check(node, grads)`` returning them
checked, and ``on_error(node, exc)`` called when running or checking the node raised (before
the exception propagates). Observers run in registration order, the first outermost.
"""

from functools import partial

node_observers = []


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
