"""History of in-place writes through views: CopySlices and the multi-output-view error.

When a view is written in place, torch rebases the history of its *base*: the base's new grad_fn is
a CopySlices node wrapping the in-place op's node (``rebase_history``), and every view of that base
regenerates its grad_fn from the base's the next time it is used (that regeneration runs a
backward, so it lives in ``autograd/_view_regeneration.py``). Here a view is replayed by its
recorded chain of view ops instead of strides, so the same code works for any base layout.
"""

from .. import _state
from .._graph_core import Node
from .._tensor import Tensor
from .broadcast import reduce_grads
from .registry import replay_view as _replay

__all__ = ["CopySlices", "rebase_history", "multi_output_error"]

_tls = _state.tls


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
        g = gs[0]
        if g is None:
            return (None,) * len(self._next)
        if not _tls.grad_enabled and not _state.special and type(g) is Tensor:
            plain = self._apply_arrays(g)
            if plain is not None:
                return plain
        result = g.clone()
        view = _replay(self._params, result)
        fn = self._fn
        res = reduce_grads(fn, fn._apply([view.clone()]))
        if res[0] is None:
            view.zero_()
        else:
            view.copy_(res[0])
        return (result,) + tuple(res[1:])

    def _apply_arrays(self, g):
        """`_apply` for a backward that records nothing: the same copy, write and wrapped
        rule, the view replayed by its ops' kernels on the copied array. None (the general
        path runs) when the replay does not end in a writeable view of the copy (a
        multi-output view op, a read-only view such as a diagonal)."""
        result = g._data.copy()
        view = result
        for op, p, _k in self._params:
            if op.n_out != 1:
                return None
            view = op.fwd(view, p)
        if (view is not result and view.base is not result) or not view.flags.writeable:
            return None
        fn = self._fn
        res = reduce_grads(fn, fn._apply([Tensor(view.copy())]))
        if res[0] is None:
            view[...] = 0
        else:
            view[...] = res[0]._data
        return (Tensor(result),) + tuple(res[1:])

    def _release(self):
        self._fn._release()


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


def rebase_history(t, node):
    """Make `node` (an in-place op just applied to `t`) the new history of `t`."""
    if t._base is None:
        t._grad_fn = node
        t._output_nr = 0
        t._rg = True
        if t._extra is not None:
            t._history_changed()
        return
    base = t._base
    base_edge = base._edge() if base._rg else None
    cs = CopySlices(base_edge, t._view, node)
    base._grad_fn = cs
    base._output_nr = 0
    base._rg = True
    if base._extra is not None:
        base._history_changed()
