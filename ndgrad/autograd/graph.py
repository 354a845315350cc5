"""The backward graph: Node (a torch ``grad_fn``), AccumulateGrad (a leaf's sink), SavedTensor
(a value a node keeps for backward, version-checked), and hook handles.

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
import weakref

from .. import _state

__all__ = ["Node", "AccumulateGrad", "SavedTensor", "RemovableHandle", "GradientEdge",
           "get_gradient_edge", "increment_version"]

_next_seq = itertools.count().__next__
_next_acc_seq = itertools.count(1 << 62).__next__


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
        from .engine import accumulate_grad
        if gs and gs[0] is not None:
            accumulate_grad(self.variable, gs[0], _state.tls.grad_enabled)
        return ()


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
        from ._saved_hooks import pack_saved
        pack_saved(self, hooks, t)

    def unpack(self, node=None):
        if self._hooks is not None:
            from ._saved_hooks import unpack_saved
            return unpack_saved(self, node)
        if self._version != self._vc[0]:
            raise RuntimeError(version_error(self, node))
        t = self._tensor
        if t is not None:
            return t
        out = (_from_array or _tensor_ctor())(self._data)
        out._vc = self._vc
        if node is not None:
            out._rg = True
            out._grad_fn = node
            out._output_nr = self._output_nr
        return out

    def register_hooks(self, pack_hook, unpack_hook):
        """Set pack/unpack hooks on this one saved value (torch's raw saved-tensor handle)."""
        from ._saved_hooks import pack_saved
        t = self._tensor
        if t is None:
            from .._tensor import Tensor
            t = Tensor(self._data)
            t._vc = self._vc
        pack_saved(self, (pack_hook, unpack_hook), t)


def _Tensor():
    """The Tensor class (imported late: this module is imported by _tensor itself)."""
    global _TensorCls
    if _TensorCls is None:
        from .._tensor import Tensor
        _TensorCls = Tensor
    return _TensorCls


_TensorCls = None
_from_array = None


def _tensor_ctor():
    """``_tensor._from_array`` (imported late, as _Tensor)."""
    global _from_array
    from .._tensor import _from_array as fn
    _from_array = fn
    return fn


def _legacy_type(t):
    from .._dtype import from_np
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
        from .._dtype import from_np
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
        from .anomaly_mode import _explain_version_error
        msg = _explain_version_error(msg, saved)
    return msg


def _short(node):
    """torch 2.13 names a node in version errors without its ``Backward<N>`` suffix."""
    name = type(node).__name__
    i = name.rfind("Backward")
    return name[:i] if i > 0 else name


class GradientEdge:
    """``(node, output_nr)``: where the gradient of a tensor enters the graph."""

    __slots__ = ("node", "output_nr")

    def __init__(self, node, output_nr):
        self.node = node
        self.output_nr = output_nr

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
    return GradientEdge(e[0], e[1])


def increment_version(tensor):
    """Bump the version counter of a tensor (or of each tensor of an iterable)."""
    if isinstance(tensor, (list, tuple)):
        for t in tensor:
            t._vc[0] += 1
    else:
        tensor._vc[0] += 1


# The introspection API (saved-value attributes, multi-grad hooks, graph pictures) and the
# saved-tensor hook contexts live in their own modules; ``autograd.graph`` is their public home.
from ._graph_extras import *  # noqa: E402,F401,F403
from ._graph_extras import __all__ as _extras_all  # noqa: E402
from ._saved_hooks import *  # noqa: E402,F401,F403
from ._saved_hooks import __all__ as _hooks_all  # noqa: E402

__all__ = __all__ + _extras_all + _hooks_all
