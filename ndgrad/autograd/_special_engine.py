"""The engine's slow path while a special mode (anomaly detection, profiler) is active.

Observers append themselves to `node_observers`; each has ``around(node, run)`` returning the
node's gradients (it must call ``run()``), and ``check(node, grads)`` returning them checked.
"""

node_observers = []


def apply_node(node, gs):
    def run(i=0):
        if i == len(node_observers):
            return node._apply(gs)
        return node_observers[i].around(node, lambda: run(i + 1))
    gx = run()
    return check_grad(node, gx)


def check_grad(node, gx):
    for obs in node_observers:
        gx = obs.check(node, gx)
    return gx
