"""``torch.autograd.graph``: the public surface of the backward graph.

The graph's core types (Node, AccumulateGrad, SavedTensor, hook handles) live in
``ndgrad._graph_core``, below the Tensor; this module re-exports them with the rest of torch's
``autograd.graph`` API: gradient edges, version bumps, the introspection of nodes and saved
values (``_graph_introspection``) and the saved-tensor hook contexts (``_saved_hooks``).
"""

from .._graph_core import (BACKWARD_TWICE, FREED, AccumulateGrad, Node,  # noqa: F401
                           RemovableHandle, SavedTensor, version_error)
# The introspection API (saved-value attributes, multi-grad hooks, graph pictures) and the
# saved-tensor hook contexts live in their own modules; ``autograd.graph`` is their public home.
from ._graph_introspection import *  # noqa: F401,F403
from ._graph_introspection import __all__ as _introspection_all
from ._saved_hooks import *  # noqa: F401,F403
from ._saved_hooks import __all__ as _hooks_all

__all__ = ["Node", "AccumulateGrad", "SavedTensor", "RemovableHandle", "GradientEdge",
           "get_gradient_edge", "increment_version"] + _introspection_all + _hooks_all


class GradientEdge:
    """``(node, output_nr)``: where the gradient of a tensor enters the graph."""

    # `_meta`: (shape, NumPy dtype) of the tensor the edge was taken from, when known
    # (get_gradient_edge): a backward from the edge checks or makes its gradient with it, as
    # torch does from the node's input metadata (ndgrad's nodes do not record it).
    __slots__ = ("node", "output_nr", "_meta")

    def __init__(self, node, output_nr):
        self.node = node
        self.output_nr = output_nr
        self._meta = None

    def __iter__(self):
        return iter((self.node, self.output_nr))

    def __repr__(self):
        return f"GradientEdge(node={self.node!r}, output_nr={self.output_nr})"


def get_gradient_edge(tensor):
    """The GradientEdge of a tensor that requires grad (its grad_fn, or its accumulator)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that "
                           "does not require gradients")
    e = tensor._edge()
    edge = GradientEdge(e[0], e[1])
    edge._meta = (tensor._data.shape, tensor._data.dtype)
    return edge


def increment_version(tensor):
    """Bump the version counter of a tensor (or of each tensor of an iterable)."""
    if isinstance(tensor, (list, tuple)):
        for t in tensor:
            t._vc[0] += 1
    else:
        tensor._vc[0] += 1

