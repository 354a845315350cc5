"""History of in-place writes through views: CopySlices and regenerated view grad_fns.

When a view is written in place, torch rebases the history of its *base*: the base's new
grad_fn is a CopySlices node wrapping the in-place op's node, and every view of that base
regenerates its grad_fn from the base's (``AsStridedBackward0``) the next time it is used.
Here a view is replayed by its recorded chain of view ops instead of strides, so the same
code works for any base layout.
"""

from .. import _state
from .._graph_core import Node

__all__ = ["CopySlices", "regenerate_view_grad_fn", "rebase_history", "multi_output_error"]


def _replay(chain, t):
    from .._ops.registry import replay_view
    return replay_view(chain, t)


class CopySlices(Node):
    """Base's grad_fn after an in-place op on one of its views.

    Backward: the base's gradient passes through unchanged outside the view; inside it, the
    wrapped op's gradient for its first input replaces it; the op's other inputs get theirs.
    """

    __slots__ = ("_fn",)
    _qualname = "torch::autograd::CopySlices"

    def __init__(self, base_edge, chain, fn):
        Node.__init__(self, (base_edge,) + fn._next[1:], fn._saved, chain)
        self._fn = fn

    def _apply(self, gs):
        from .._ops.broadcast import reduce_grads
        g = gs[0]
        if g is None:
            return (None,) * len(self._next)
        result = g.clone()
        view = _replay(self._params, result)
        fn = self._fn
        res = reduce_grads(fn, fn._apply([view.clone()]))
        if res[0] is None:
            view.zero_()
        else:
            view.copy_(res[0])
        return (result,) + tuple(res[1:])

    def _release(self):
        self._fn._release()


class AsStridedBackward0(Node):
    """A view's grad_fn regenerated from its base's current history.

    Backward is the VJP of the view chain at a zero base: computed by autograd itself, so
    overlapping views (expand) sum their gradients instead of writing twice to one place.
    """

    __slots__ = ()

    def _apply(self, gs):
        from .. import zeros
        from . import grad
        from .grad_mode import enable_grad
        g = gs[0]
        if g is None:
            return (None,)
        shape, dtype, chain = self._params
        create_graph = _state.tls.grad_enabled
        with enable_grad():
            z = zeros(shape, dtype=dtype).requires_grad_()
            view = _replay(chain, z)
        return grad(view, z, g, create_graph=create_graph)


def multi_output_error(view, indirect):
    """torch's error for a view descending from a multi-output view op (unbind, split, chunk,
    split_with_sizes) that is written in place, or whose base (or a sibling view) was: such
    views cannot have their history rebased. None when the view's chain has no such op."""
    if not any(op.n_out != 1 for op, _, _ in view._view):
        return None
    fn = view._grad_fn
    what = ("its base or another view of its base has been" if indirect else "is being")
    if fn is not None:
        name = fn.name()
        if name.endswith("Backward0"):
            name = name[:-len("Backward0")]
        head = f"Output {view._output_nr} of {name} is a view and {what} modified inplace."
    else:
        # no grad_fn: the view was taken while nothing required grad (torch's wording)
        head = (f"A view was created in no_grad mode and {what} modified inplace with grad "
                "mode enabled.")
        if view._base._rg:
            # a base requiring grad without the view having history: taken under no_grad
            # (torch's creation_meta NO_GRAD_MODE, which takes precedence)
            return RuntimeError(
                head + " Given that this use case is ambiguous and error-prone, it is "
                "forbidden. You can clarify your code by moving both the view and the inplace "
                "either both inside the no_grad block (if you don't want the inplace to be "
                "tracked) or both outside (if you want the inplace to be tracked).")
    return RuntimeError(head + " This view is the output of a function that returns multiple "
                        "views. Such functions do not allow the output views to be modified "
                        "inplace. You should replace the inplace operation by an out-of-place "
                        "one.")


def regenerate_view_grad_fn(view, quiet=False):
    """Give `view` a grad_fn that reads its gradient out of its base's history.

    `quiet`: for ``requires_grad``, which torch answers without raising for an invalid view.
    """
    err = multi_output_error(view, True)
    if err is not None:
        # keep the view stale so that every later use raises again, as torch does
        view._view_ver = -1
        if not quiet:
            raise err
        return
    base = view._base
    node = AsStridedBackward0((base._edge(),), (), (base._data.shape, base.dtype, view._view))
    view._grad_fn = node
    view._output_nr = 0
    view._rg = True


def rebase_history(t, node):
    """Make `node` (an in-place op just applied to `t`) the new history of `t`."""
    if t._base is None:
        t._grad_fn = node
        t._output_nr = 0
        t._rg = True
        return
    base = t._base
    base_edge = base._edge() if base._rg else None
    cs = CopySlices(base_edge, t._view, node)
    base._grad_fn = cs
    base._output_nr = 0
    base._rg = True
