"""The engine's slow path while a special mode (anomaly detection, profiler) is active.

Observers append themselves to `node_observers`; each has ``around(node, run)`` returning the
node's gradients (it must call ``run()`` exactly once), ``check(node, grads)`` returning them
checked, and ``on_error(node, exc)`` called when running or checking the node raised (before
the exception propagates). Observers run in registration order, the first outermost.
"""

node_observers = []


def apply_node(node, gs):
    observers = tuple(node_observers)

    def run(i=0):
        if i == len(observers):
            return node._apply(gs)
        return observers[i].around(node, lambda: run(i + 1))
    try:
        gx = run()
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
