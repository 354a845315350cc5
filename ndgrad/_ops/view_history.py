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

__all__ = ["CopySlices", "rebase_history", "view_rebase_error", "creation_meta",
           "propagate_creation_meta", "multi_output_error"]

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


# How a view was made, when that forbids writing it (or its base) in place: torch's
# CreationMeta. Stored in ``view._extras()["creation"]`` by ``registry._make_views`` (and by a
# custom Function for its view outputs); absent means DEFAULT. A multi-output view op in the
# chain implies "multi" for views made without the mark (raw views of backward formulas).
_CREATION_REASON = {
    "multi": " This view is the output of a function that returns multiple views. Such "
             "functions do not allow the output views to be modified inplace. You should "
             "replace the inplace operation by an out-of-place one.",
    "no_grad": " Given that this use case is ambiguous and error-prone, it is forbidden. You "
               "can clarify your code by moving both the view and the inplace either both "
               "inside the no_grad block (if you don't want the inplace to be tracked) or both "
               "outside (if you want the inplace to be tracked).",
    "inference": " Given that this use case is ambiguous and error-prone, it is forbidden. You "
                 "can clarify your code by moving both the view and the inplace either both "
                 "inside the inference_mode block (if you don't want the inplace to be tracked) "
                 "or both outside (if you want the inplace to be tracked).",
    "custom": " This view was created inside a custom Function (or because an input was "
              "returned as-is) and the autograd logic to handle view+inplace would override "
              "the custom backward associated with the custom Function, leading to incorrect "
              "gradients. This behavior is forbidden. You can fix this by cloning the output of "
              "the custom Function.",
}


def creation_meta(view):
    """The view's creation meta ("multi", "no_grad", "inference", "custom") or None."""
    ex = view._extra
    meta = ex.get("creation") if ex is not None else None
    if meta is None and any(op.n_out != 1 for op, _, _ in view._view or ()):
        meta = "multi"
    return meta


def propagate_creation_meta(prev, new):
    """torch's rule for a view of a view: a DEFAULT new view keeps its parent's meta; an
    inference-mode parent's meta is never replaced."""
    if new is None or prev == "inference":
        return prev
    return new


def _node_short_name(fn):
    name = fn.name()
    for suffix in ("Backward0", "Backward"):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def view_rebase_error(view, indirect):
    """torch's error (``handle_view_on_rebase``) for a view whose creation meta forbids an
    in-place write to it (`indirect`: to its base or another view of its base). None when the
    view may be written."""
    meta = creation_meta(view)
    if meta is None:
        return None
    fn = view._grad_fn
    what = ("its base or another view of its base has been" if indirect else "is being")
    if meta in ("no_grad", "inference") or fn is None:
        prefix = (f"Output {view._output_nr} of {_node_short_name(fn)} is a view of a view "
                  "which was created in" if fn is not None else "A view was created in")
        if meta == "inference":
            head = f"{prefix} inference mode and {what} modified inplace in normal mode."
        else:
            # without a grad_fn the view was taken under no_grad, whatever its meta
            head = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        head = f"Output {view._output_nr} of {_node_short_name(fn)} is a view and {what} " \
               "modified inplace."
    return RuntimeError(head + _CREATION_REASON[meta])


def multi_output_error(view, indirect):
    """Kept for callers of the former name: the creation-meta error of `view`."""
    return view_rebase_error(view, indirect)


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
