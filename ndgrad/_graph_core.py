"""The core of the backward graph: Node (a torch ``grad_fn``), AccumulateGrad (a leaf's sink,
with the accumulation into ``.grad``), SavedTensor (a value a node keeps for backward,
version-checked, packed by saved-tensor hooks), and hook handles.

This module sits at the bottom of the autograd floors: it imports only `_state` and `_dtype`.
The Tensor class, defined above it in ``_tensor``, binds itself here when it is created
(`bind_tensor`), before any node can exist; ``ndgrad.autograd.graph`` is the public surface
(torch.autograd.graph) that re-exports what users see.

Invariants:
- A node's ``_next`` holds one edge per differentiable input: ``(node, input_nr)`` or ``None``
  when that input needs no gradient. ``needs_input_grad`` is derived from it.
- A node never holds its own output tensor strongly: an output saved for backward is kept as
  its array plus version counter and rebuilt on unpack (torch saves data + a weak grad_fn), so
  ``out -> grad_fn -> saved out`` is never a reference cycle and graphs die with their tensors.
- Sequence numbers grow with creation; the engine runs the newest ready node first.
  AccumulateGrad nodes get numbers above every op node so leaves are filled as soon as ready.
"""

import itertools
import sys
import weakref

import numpy as np

from . import _state
from ._dtype import from_np

__all__ = ["Node", "AccumulateGrad", "SavedTensor", "RemovableHandle", "FREED",
           "BACKWARD_TWICE", "accumulate_grad", "pack_saved", "unpack_saved", "version_error",
           "bind_tensor", "version_error_explainers", "GraphTask", "current_graph_task"]

_tls = _state.tls
_getrefcount = sys.getrefcount
_next_seq = itertools.count().__next__
_next_acc_seq = itertools.count(1 << 62).__next__

# The Tensor class and its array-wrapping constructor, bound by ``_tensor`` at its import.
_Tensor = None
_from_array = None


def bind_tensor(tensor_cls, from_array):
    """Called once by ``ndgrad._tensor``: the graph rebuilds and creates tensors with these."""
    global _Tensor, _from_array
    _Tensor = tensor_cls
    _from_array = from_array


# Functions ``(message, saved) -> message`` that refine the version-mismatch error while a
# special mode is on (anomaly mode registers its own at import).
version_error_explainers = []



class RemovableHandle:
    """Handle returned by ``register_*hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("_container", "_key", "id")
    _ids = itertools.count()

    def __init__(self, container, key=None):
        self._container = weakref.ref(container) if container is not None else None
        self.id = next(RemovableHandle._ids)
        self._key = self.id if key is None else key

    def remove(self):
        c = self._container() if self._container is not None else None
        if c is not None:
            c.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(dict):
    """An ordered id -> hook mapping that can be weakly referenced by its handles."""

    __slots__ = ("__weakref__",)


def _add_hook(owner_dict, fn):
    handle = RemovableHandle(owner_dict)
    owner_dict[handle._key] = fn
    return handle


class _Freed:
    """Marks a node whose saved values were released after a backward."""

    __slots__ = ()

    def __bool__(self):
        return True


FREED = _Freed()

BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class Node:
    """A function of the backward graph (torch's ``grad_fn``).

    Subclasses name themselves after torch's nodes (``MulBackward0``); op nodes carry their
    OpDef as the class attribute ``_op``.
    """

    # `_shape`: input 0's shape, set only by ops whose rule needs it (unset otherwise).
    __slots__ = ("_next", "_saved", "_params", "_seq", "_meta", "_extra", "_shape",
                 "__weakref__")
    _op = None
    # torch's name() of hand-written C++ nodes carries their namespace.
    _qualname = None
    # Whether the engine calls this node even when every incoming gradient is None.
    _wants_none = False

    def __init__(self, next_edges, saved=(), params=None):
        self._next = next_edges
        self._saved = saved
        self._params = params
        self._seq = _next_seq()
        self._meta = None
        self._extra = None

    # --- torch's Node API -------------------------------------------------------------
    def name(self):
        return self._qualname or type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def next_functions(self):
        return tuple((None, 0) if e is None else e for e in self._next)

    @property
    def needs_input_grad(self):
        return tuple(e is not None for e in self._next)

    @property
    def metadata(self):
        return self._extras().setdefault("metadata", {})

    def _sequence_nr(self):
        return self._seq

    def _set_sequence_nr(self, sequence_nr):
        """Move this node in the engine's order (a higher number runs earlier), as torch's."""
        self._seq = sequence_nr

    def _extras(self):
        if self._extra is None:
            self._extra = {}
        return self._extra

    def _hook_dict(self, key):
        extra = self._extras()
        d = extra.get(key)
        if d is None:
            d = extra[key] = _HookDict()
        return d

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after the node ran; may return new grad_inputs."""
        return _add_hook(self._hook_dict("hooks"), fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before the node runs; may return new grad_outputs."""
        return _add_hook(self._hook_dict("pre_hooks"), fn)

    def _register_tensor_prehook(self, output_nr, fn):
        tensor_hooks = self._extras().setdefault("tensor_pre_hooks", {})
        d = tensor_hooks.get(output_nr)
        if d is None:
            d = tensor_hooks[output_nr] = _HookDict()
        return _add_hook(d, fn)

    # --- saved values -----------------------------------------------------------------
    @property
    def saved(self):
        """The saved values, unpacked and version-checked, in the order the op saved them."""
        saved = self._saved
        if saved is FREED:
            raise RuntimeError(BACKWARD_TWICE)
        if len(saved) == 1:
            s = saved[0]
            return (s.unpack(self) if type(s) is SavedTensor else s,)
        if len(saved) == 2:
            s, t = saved
            return (s.unpack(self) if type(s) is SavedTensor else s,
                    t.unpack(self) if type(t) is SavedTensor else t)
        return tuple([s.unpack(self) if type(s) is SavedTensor else s for s in saved])

    def _release(self):
        if self._saved:
            self._saved = FREED

    # --- running ------------------------------------------------------------------------
    def _apply(self, gs):
        """Gradients for the inputs (one per edge) from the gradients of the outputs."""
        op = self._op
        return op.vjp(self, gs[0] if op.n_out == 1 else gs)

    def __call__(self, *grads):
        op = getattr(type(self), "_op", None)
        if op is not None and len(grads) != op.n_out:
            # torch checks the count of gradients handed to a node called directly
            raise TypeError(f"expected {op.n_out} arguments, got {len(grads)} instead")
        out = self._apply(list(grads))
        return out if isinstance(out, tuple) else (out,)


class AccumulateGrad(Node):
    """The sink of a leaf tensor: accumulates incoming gradients into ``variable.grad``."""

    __slots__ = ("variable",)
    _qualname = "torch::autograd::AccumulateGrad"

    def __init__(self, variable):
        self._next = ()
        self._saved = ()
        self._params = None
        self._seq = _next_acc_seq()
        self._meta = None
        self._extra = None
        self.variable = variable

    def _apply(self, gs):  # the engine accumulates; calling it directly does the same
        if gs and gs[0] is not None:
            accumulate_grad(self.variable, gs[0], _tls.grad_enabled)
        return ()



def _owned(g):
    """True when nothing but the engine holds `g` and its array, so it can become ``.grad``.

    The counts are those of the one call chain that reaches here (_accumulate's local,
    accumulate_grad's and this function's arguments, getrefcount's own; for the array also
    accumulate_grad's `data`); any other holder (a
    second leaf given the same gradient, the user's grad_outputs) makes them higher and the
    gradient is copied instead. tests/test_engine.py checks both outcomes.

    A view is owned too when it covers all of a base array that nothing else holds (the
    base's count: the view's reference, the local, getrefcount's own), such as the transposed
    gradient a linear layer's weight receives through TBackward0. The view Tensor's own
    ``_base`` may hold the base array a second time (directly or through a view of it) when
    that Tensor is held by the view alone: the input gradient of the transposing node, which
    only the view keeps alive.
    """
    d = g._data
    if not (_getrefcount(g) <= 4 and _getrefcount(d) <= 4 and d.flags.writeable
            and g._grad_fn is None):
        return False
    b = d.base
    if b is None:
        return True
    if not (type(b) is np.ndarray and b.base is None and b.size == d.size):
        return False
    limit = 3
    gb = g._base
    if gb is not None:
        # counts of gb: g's _base slot, the local, getrefcount's own; of a view array of its
        # own: gb's _data, the local, getrefcount's own
        bd = gb._data
        if _getrefcount(gb) > 3 or gb._extra is not None or \
                (bd is not b and (bd.base is not b or _getrefcount(bd) > 3)):
            return False
        limit = 4
    return _getrefcount(b) <= limit


def accumulate_grad(var, g, create_graph):
    """Add `g` into ``var.grad`` following torch's default gradient layouts."""
    if not var._rg:
        return  # torch: a leaf that stopped requiring grad after the graph was built
    Tensor = _Tensor
    old = var._grad
    if old is None:
        if create_graph:
            # torch's AccumulateGrad never keeps the incoming gradient under create_graph: it
            # copies it into a fresh tensor of the parameter's layout (CopyBackwards when it
            # has a graph), so .grad is no view of anything (optimizers call grad.detach_())
            var._grad = Tensor(np.empty_like(var._data, dtype=g._data.dtype)).copy_(g)
            return
        data = g._data
        vdata = var._data
        # Keep the parameter's memory layout (strides) when it is dense, like torch (a
        # transposed gradient of a C-contiguous parameter becomes C-contiguous).
        if data.strides != vdata.strides and (vdata.flags.c_contiguous or
                                              vdata.flags.f_contiguous or _is_dense(vdata)):
            new = np.empty_like(vdata, dtype=data.dtype)  # (a grad_dtype may differ)
            np.copyto(new, data)
            var._grad = Tensor(new)
        elif _owned(g) and data.shape == vdata.shape:
            # Nothing else holds `g`: it becomes .grad (torch steals the gradient the same way)
            # when it is a plain tensor; a view or a tensor with extras gives its data.
            if type(g) is Tensor and g._extra is None and g._base is None and not g._rg:
                var._grad = g
            else:
                # (an owned view's base is held by nothing else: its data alone is the grad)
                var._grad = _from_array(data) if g._extra is None else g.detach()
            return
        else:
            var._grad = Tensor(np.array(data, order="K" if data.shape == vdata.shape else "C"))
        if var._grad._data.shape != vdata.shape:
            var._grad = Tensor(np.broadcast_to(var._grad._data, vdata.shape).copy())
    elif create_graph or _tls.grad_enabled:
        var._grad = old + g
    else:
        od = old._data
        if od.flags.writeable:
            np.add(od, g._data, out=od, casting="unsafe")
            old._vc[0] += 1
        else:
            var._grad = Tensor(od + g._data)


def _is_dense(a):
    """Non-overlapping and dense: some permutation of the dims is contiguous."""
    order = sorted(range(a.ndim), key=lambda i: a.strides[i])
    expected = a.itemsize
    for i in order:
        if a.shape[i] != 1 and a.strides[i] != expected:
            return False
        expected *= a.shape[i]
    return True


class SavedTensor:
    """A tensor saved for backward: remembers the version it was saved at.

    An input is kept by reference. An output of the saving node is kept as data plus version
    counter (no reference back to the tensor, which would make a cycle through its grad_fn)
    and rebuilt on unpack with the node as grad_fn.
    """

    __slots__ = ("_tensor", "_data", "_vc", "_version", "_output_nr", "_hooks", "_packed",
                 "_rg", "_leaf_acc")

    def __init__(self, t, is_output=False, output_nr=0):
        self._vc = t._vc
        self._version = t._vc[0]
        self._hooks = None
        if is_output:
            self._tensor = None
            self._data = t._data
            self._output_nr = output_nr
        else:
            self._tensor = t
            self._data = None
            self._output_nr = -1
            self._rg = t._grad_fn is not None  # a non-leaf: detach_() later is refused
        if _state.saved_hooks_active:
            hooks = _state.tls.saved_hooks
            if hooks:
                self._pack_with(hooks[-1], t)

    @staticmethod
    def of_input(t, _new=object.__new__):
        """``SavedTensor(t)`` (the dispatcher's generated savers call this)."""
        s = _new(SavedTensor)
        s._vc = vc = t._vc
        s._version = vc[0]
        s._hooks = None
        s._tensor = t
        s._data = None
        s._output_nr = -1
        s._rg = t._grad_fn is not None  # a non-leaf: detach_() later is refused
        if _state.saved_hooks_active:
            hooks = _state.tls.saved_hooks
            if hooks:
                s._pack_with(hooks[-1], t)
        return s

    @staticmethod
    def of_output(t, _new=object.__new__):
        """``SavedTensor(t, True, 0)``: output 0 of the saving node."""
        s = _new(SavedTensor)
        s._vc = vc = t._vc
        s._version = vc[0]
        s._hooks = None
        s._tensor = None
        s._data = t._data
        s._output_nr = 0
        if _state.saved_hooks_active:
            hooks = _state.tls.saved_hooks
            if hooks:
                s._pack_with(hooks[-1], t)
        return s

    def _pack_with(self, hooks, t):
        pack_saved(self, hooks, t)

    def unpack(self, node=None):
        if self._hooks is not None:
            return unpack_saved(self, node)
        if self._version != self._vc[0]:
            raise RuntimeError(version_error(self, node))
        t = self._tensor
        if t is not None:
            if t._grad_fn is None and not t._rg and getattr(self, "_rg", False):
                raise RuntimeError(_DETACHED_SAVED)
            return t
        out = _from_array(self._data)
        out._vc = self._vc
        if node is not None:
            out._rg = True
            out._grad_fn = node
            out._output_nr = self._output_nr
        return out

    def register_hooks(self, pack_hook, unpack_hook):
        """Set pack/unpack hooks on this one saved value (torch's raw saved-tensor handle)."""
        t = self._tensor
        if t is None:
            t = _from_array(self._data)
            t._vc = self._vc
        pack_saved(self, (pack_hook, unpack_hook), t)


_DETACHED_SAVED = ("Trying to use a saved tensor that has been detached in-place, i.e. with "
                   ".detach_().This is not supported, please use out-of-place `.detach()` "
                   "instead")


def _legacy_type(t):
    return "torch." + from_np(t._data.dtype)._legacy


def version_error(saved, node):
    """torch's message for a saved tensor modified in place after it was saved."""
    if saved._tensor is not None:
        t = saved._tensor
        shape = list(t._data.shape)
        kind = _legacy_type(t)
        fn = t._grad_fn
        where = "" if fn is None else f", which is output {t._output_nr} of {_short(fn)},"
    else:
        shape = list(saved._data.shape)
        kind = "torch." + from_np(saved._data.dtype)._legacy
        where = "" if node is None else \
            f", which is output {saved._output_nr} of {_short(node)},"
    msg = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{kind} {shape}]{where} is at version {saved._vc[0]}; expected version "
        f"{saved._version} instead. Hint: enable anomaly detection to find the operation that "
        "failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, "
        "check_nan=False).")
    if _state.special:
        # Anomaly mode changes the hint, and may know where the in-place op was called.
        for explain in version_error_explainers:
            msg = explain(msg, saved)
    return msg


def _short(node):
    """torch 2.13 names a node in version errors without its ``Backward<N>`` suffix."""
    name = type(node).__name__
    i = name.rfind("Backward")
    return name[:i] if i > 0 else name


# --------------------------------------------------------------- saved-tensor hooks
_PACK_MUTATED = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the "
    "input to a pack hook.")


def pack_saved(saved, hooks, t):
    """Run ``pack`` of `hooks` on `t` (the tensor `saved` stands for) and keep the result."""
    pack, unpack = hooks
    if saved._hooks is not None:
        raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                           "been set. Hint: only one pair of hooks is allowed at a time.")
    if saved._output_nr < 0:
        # An input: remember where its gradient goes so the unpacked copy is connected.
        saved._leaf_acc = t._edge() if t.requires_grad else None
    elif not t._rg:
        # An output is saved just before the dispatcher marks it as requiring grad; torch's
        # pack hook already sees requires_grad=True, so mark it now.
        t._rg = True
    version = t._vc[0]
    # torch runs the pack hook with grad mode off: ops inside it record nothing (and so
    # save nothing, which would otherwise call the pack hook again, without end).
    prev, _tls.grad_enabled = _tls.grad_enabled, False
    try:
        packed = pack(t)
    finally:
        _tls.grad_enabled = prev
    if t._vc[0] != version:
        raise RuntimeError(_PACK_MUTATED)
    saved._packed = packed
    saved._hooks = unpack
    # Drop our own references: from now on the packed value is the only copy we keep.
    saved._tensor = None
    saved._data = None


def unpack_saved(saved, node):
    """The tensor for `saved`, rebuilt from ``unpack_hook(packed)``."""
    r = saved._hooks(saved._packed)
    if not isinstance(r, _Tensor):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(r).__name__}")
    out = _from_array(r._data)
    # the unpacked tensor aliases what unpack_hook returned, and shares *its* version
    # counter (torch: a pack hook's replacement does not share the original's)
    out._vc = r._vc
    if saved._output_nr >= 0:
        if node is not None:
            out._rg = True
            out._grad_fn = node
            out._output_nr = saved._output_nr
        return out
    edge = saved._leaf_acc
    if edge is not None:
        fn, nr = edge
        out._rg = True
        if type(fn) is AccumulateGrad:
            # Gradients reaching the copy flow into the original leaf's accumulator.
            out._acc = weakref.ref(fn)
        else:
            out._grad_fn = fn
            out._output_nr = nr
    return out


# --------------------------------------------------------------- the running backward
class GraphTask:
    """What a running backward still has to do: pending dependency counts, the ready heap,
    and which nodes it needs (None: all). Hooks never see the lone `ready` node of the
    engine's loop: it is always empty while hooks run."""

    __slots__ = ("deps", "heap", "needed", "callbacks", "partial")

    def __init__(self, deps, heap, needed, partial=False):
        self.deps = deps
        self.heap = heap
        self.needed = needed
        # True for autograd.grad and backward(inputs=): only part of the graph is wanted
        # (torch's non-empty exec_info; a reentrant checkpoint refuses to run in one).
        self.partial = partial
        # Variable._execution_engine.queue_callback: run once the graph is done, in order
        # (one queued by a callback runs too).
        self.callbacks = []


def current_graph_task():
    """The innermost backward running on this thread, or None (ops whose rule depends on
    which inputs the running backward needs, checkpointing and multi-grad hooks ask)."""
    tasks = _tls.__dict__.get("graph_tasks")
    return tasks[-1] if tasks else None
