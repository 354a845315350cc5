"""Regenerated view grad_fns: a view whose base was written in place (through it or through
another view) reads its gradient out of the base's new history.

torch gives such a view an ``AsStridedBackward0`` node the next time it is used; here the node
replays the view's recorded chain of view ops on a zero base and differentiates that replay,
so the same code works for any base layout. ``Tensor._refresh_view`` calls
``Tensor._regenerate_grad_fn``, bound here at import (the Tensor class sits below autograd).
The in-place side (CopySlices, rebase_history) is in ``_ops/view_history.py``.
"""

from .. import _state
from .._creation import zeros
from .._graph_core import Node
from .._ops.registry import replay_view as _replay
from .._ops.view_history import view_rebase_error
from .._tensor import Tensor
from ._backward import grad
from .grad_mode import enable_grad

__all__ = ["AsStridedBackward0", "regenerate_view_grad_fn"]


class AsStridedBackward0(Node):
    """A view's grad_fn regenerated from its base's current history.

    Backward is the VJP of the view chain at a zero base: computed by autograd itself, so
    overlapping views (expand) sum their gradients instead of writing twice to one place.
    """

    __slots__ = ()

    def _apply(self, gs):
        g = gs[0]
        if g is None:
            return (None,)
        shape, dtype, chain = self._params
        create_graph = _state.tls.grad_enabled
        with enable_grad():
            z = zeros(shape, dtype=dtype).requires_grad_()
            view = _replay(chain, z)
        return grad(view, z, g, create_graph=create_graph)


_REPLAY_NODES = {}


def _replay_node_class(chain):
    """Under view replay torch names the regenerated node after the view's last op."""
    name = chain[-1][0].node.__name__
    cls = _REPLAY_NODES.get(name)
    if cls is None:
        cls = _REPLAY_NODES[name] = type(name, (AsStridedBackward0,), {"__slots__": ()})
    return cls


def regenerate_view_grad_fn(view, quiet=False):
    """Give `view` a grad_fn that reads its gradient out of its base's history.

    `quiet`: for ``requires_grad``, which torch answers without raising for an invalid view.
    """
    err = view_rebase_error(view, True)
    if err is not None:
        # keep the view stale so that every later use raises again, as torch does
        view._view_ver = -1
        if not quiet:
            raise err
        return
    base = view._base
    cls = _replay_node_class(view._view) if _state.tls.view_replay and view._view else \
        AsStridedBackward0
    node = cls((base._edge(),), (), (base._data.shape, base.dtype, view._view))
    view._grad_fn = node
    view._output_nr = 0
    view._rg = True
    if view._extra is not None:
        view._history_changed()


Tensor._regenerate_grad_fn = regenerate_view_grad_fn
