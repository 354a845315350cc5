"""``autograd.backward`` and ``autograd.grad``: torch's argument checks, the roots of the
graph, and the hand-off to the engine (``engine.run_backward``; ``_batched_backward`` for
``is_grads_batched``). ``backward`` accumulates into leaves' ``.grad``; ``grad`` returns
gradients without touching ``.grad``.
"""

import warnings

import numpy as np

from .. import _state
from .._creation import zeros_like
from .._legacy import is_warn_always_enabled
from .._size import Size
from .._tensor import Tensor, _from_array
from ._batched_backward import batch_size, batched_grad
from .engine import run_backward
from .graph import GradientEdge

__all__ = ["backward", "grad"]


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    if isinstance(x, GradientEdge):
        return (x,)
    return tuple(x)


def _calculate_shape(output, grad, is_grads_batched):
    """torch.autograd's helper: the shapes ``backward`` compares, ``(output's, grad's)``; with
    `is_grads_batched` the grad's first dimension (the batch) is left out. ndgrad's nodes do
    not record their outputs' metadata, so a GradientEdge output has no shape here."""
    if isinstance(output, GradientEdge):
        if is_grads_batched:
            raise RuntimeError("Batched grads are not supported with GradientEdge")
        raise NotImplementedError("_calculate_shape: ndgrad's graph nodes do not record the "
                                  "shapes of their outputs (torch's _input_metadata)")
    return output.shape, (grad.shape[1:] if is_grads_batched else grad.shape)


def _make_grads(outputs, grads, is_grads_batched=False):
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if isinstance(o, GradientEdge):
            meta = o._meta
            if meta is None:  # an edge built by hand: nothing known of its tensor
                if g is None:
                    raise RuntimeError("grad_outputs must be provided for a GradientEdge "
                                       "output")
                out.append(g)
                continue
            shape, dt = meta
            # the checks below, on a stand-in of the edge's tensor (no memory of its own)
            o = _from_array(np.broadcast_to(np.zeros((), dt), shape))
            o._rg = True
        if g is None:
            if o.requires_grad:
                if o._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if o._data.dtype.kind != "f":
                    raise RuntimeError("grad can be implicitly created only for real scalar "
                                       f"outputs but got {o.dtype}")
                out.append(_from_array(np.ones(o._data.shape, o._data.dtype)))  # ones_like
            else:
                out.append(None)
            continue
        if not isinstance(g, Tensor):
            raise TypeError("gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        gshape = g._data.shape[1:] if is_grads_batched else g._data.shape
        if gshape != o._data.shape:
            if is_grads_batched:
                raise RuntimeError(
                    "If `is_grads_batched=True`, we interpret the first dimension of each "
                    f"grad_output as the batch dimension. The sizes of the remaining dimensions "
                    f"are expected to match the shape of corresponding output, but a mismatch was "
                    # torch 2.13 prints the shape without its first *two* dims.
                    f"detected: grad_output[{i}] has a shape of {Size(g._data.shape[2:])} and "
                    f"output[{i}] has a shape of {Size(o._data.shape)}. If you only want some "
                    "tensors in `grad_output` to be considered batched, consider using vmap.")
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)} and "
                f"output[{i}] has a shape of {Size(o._data.shape)}.")
        if (o._data.dtype.kind == "c") != (g._data.dtype.kind == "c"):
            raise RuntimeError(
                f"For complex Tensors, both grad_output and output are required to have the "
                f"same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and "
                f"output[{i}] has a dtype of {o.dtype}.")
        if g._data.dtype != o._data.dtype and o._data.dtype.kind in "fc":
            g = g.to(o.dtype)
        out.append(g)
    return out


def _root_edges(outputs, grads):
    roots = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if isinstance(o, GradientEdge):
            roots.append(((o.node, o.output_nr), g))
            continue
        if not o.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        if g is None:
            continue
        if o._extra is not None and o._extra.get("inference"):
            raise RuntimeError("Inference tensors cannot be saved for backward.")
        roots.append((o._edge(), g))
    return roots


_create_graph_warned = False


def _warn_create_graph():
    """torch's warning (once per process, or always under set_warn_always) that
    ``backward(create_graph=True)`` ties parameters and their gradients in a cycle."""
    global _create_graph_warned
    _create_graph_warned = True
    warnings.warn(
        "Using backward() with create_graph=True will create a reference cycle between the "
        "parameter and its gradient which can cause a memory leak. We recommend using "
        "autograd.grad when creating the graph to avoid this. If you have to use this "
        "function, make sure to reset the .grad fields of your parameters to None after use "
        "to break the cycle and avoid the leak.", UserWarning, stacklevel=3)


# Per (shape, dtype): a one-element array of 1, copied for each loss.backward() (a copy is
# cheaper than np.ones).
_ONES = {}


def _one(d):
    """``np.ones(d.shape, d.dtype)`` for a one-element array `d`."""
    key = (d.shape, d.dtype)
    one = _ONES.get(key)
    if one is None:
        one = _ONES[key] = np.ones(d.shape, d.dtype)
    return one.copy()


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate gradients of `tensors` w.r.t. graph leaves (or `inputs`) into ``.grad``."""
    if _state.func_transforms:
        raise _state.backward_in_transform_error()
    if (grad_tensors is None and grad_variables is None and inputs is None
            and not create_graph and isinstance(tensors, Tensor)):
        # ``loss.backward()`` on a floating-point scalar computed by a graph (not a view, not
        # an inference tensor): every check below passes, the root is its own edge.
        fn = tensors._grad_fn
        d = tensors._data
        if (fn is not None and tensors._base is None and tensors._extra is None
                and d.size == 1 and d.dtype.kind == "f"):
            run_backward([((fn, tensors._output_nr), _from_array(_one(d)))],
                         bool(retain_graph), False)
            return
    if grad_variables is not None:
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    if inputs is not None:
        inputs = _as_tuple(inputs)  # read once: `inputs` may be a generator
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} tensors and {len(tensors)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grads)
    roots = _root_edges(tensors, grads)
    if create_graph and roots and (is_warn_always_enabled() or not _create_graph_warned):
        _warn_create_graph()
    accumulate_only = None
    captures = None
    non_leaves = []
    if inputs is not None:
        accumulate_only = set()
        captures = {}
        for t in inputs:
            if isinstance(t, GradientEdge):
                captures[(t.node, t.output_nr)] = None
                continue
            if not t.requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            e = t._edge()
            accumulate_only.add(e[0])  # a non-leaf's node runs too, as torch's
            if t.grad_fn is not None:
                non_leaves.append(t)
    if not roots:
        return
    # backward(inputs=[non_leaf]) fills the non-leaf's .grad through retain_grad (it stays
    # retaining afterwards), so after its tensor hooks, as torch does.
    for t in non_leaves:
        t.retain_grad()
    run_backward(roots, retain_graph, create_graph, captures=captures,
                 accumulate=True, accumulate_only=accumulate_only)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` w.r.t. `inputs`, returned as a tuple (``.grad`` untouched)."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grads)} and "
                           f"{len(outputs)}")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        grads = _make_grads(outputs, grads, is_grads_batched=True)
        B = batch_size(grads)
        edges = _input_edges(inputs)
        roots = _root_edges(outputs, grads)
        captured = batched_grad(roots, edges, B, retain_graph, create_graph)
    else:
        grads = _make_grads(outputs, grads)
        edges = _input_edges(inputs)
        roots = _root_edges(outputs, grads)
        captures = {e: None for e in edges}
        captured = run_backward(roots, retain_graph, create_graph, captures=captures,
                                accumulate=False) if roots else {}
    if materialize_grads and any(captured.get(e) is None and isinstance(t, GradientEdge)
                                 for t, e in zip(inputs, edges)):
        raise RuntimeError("materialize_grads cannot be used when the given input is a "
                           "GradientEdge")
    result = []
    for i, (t, e) in enumerate(zip(inputs, edges)):
        g = captured.get(e)
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                # (batched too: torch's vmap passes the unbatched zeros through); torch's
                # zeros require grad under create_graph, so they can be differentiated again
                g = zeros_like(t, requires_grad=create_graph)
        elif not create_graph and g._grad_fn is not None:
            g = g.detach()
        result.append(g)
    return tuple(result)


def _input_edges(inputs):
    """The graph edges of the tensors (or GradientEdges) ``grad`` differentiates against."""
    edges = []
    for t in inputs:
        if isinstance(t, GradientEdge):
            edges.append((t.node, t.output_nr))
            continue
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edges.append(t._edge())
    return edges


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor into the leaves' ``.grad``."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


_tensor_backward.__name__ = "backward"
_tensor_backward.__qualname__ = "Tensor.backward"
Tensor.backward = _tensor_backward  # the Tensor class sits below autograd
