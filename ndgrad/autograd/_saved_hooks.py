"""Saved-tensor hooks: how a value saved for backward is packed and unpacked.

What lives here: ``register_raw_hooks`` (hooks on one value already saved) and the user-facing
contexts ``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks`` and
``allow_mutation_on_saved_tensors``. Packing and unpacking themselves belong to SavedTensor
(``_graph_core.pack_saved`` / ``unpack_saved``).

Semantics follow torch 2.13:
- the innermost active pair of hooks applies, at save time; ``pack_hook(tensor)`` may return
  anything, ``unpack_hook(packed)`` must return a Tensor and is called on every access;
- a packed value is not version-checked (the hooks own it), and the saved tensor drops its
  own reference to the data, so memory really is released (that is what the hooks are for);
- the unpacked tensor is a new tensor carrying the original's autograd identity: the node
  for a saved output, the grad_fn or gradient accumulator of a saved input.
"""

import functools
import weakref

import numpy as np

from .. import _state
from .._graph_core import FREED, pack_saved
from .._ops.registry import special_hooks
from .._tensor import Tensor, _from_array

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "allow_mutation_on_saved_tensors"]

_tls = _state.tls
# Guards _state.saved_hooks_active, the count of open saved_tensors_hooks contexts on all
# threads (one lock with the engine's restoration of the stack after a node).
_count_lock = _state.saved_hooks_lock

def register_raw_hooks(saved, node, pack_hook, unpack_hook):
    """``_raw_saved_<name>.register_hooks(pack, unpack)`` on a value already saved."""
    if node is not None and node._saved is not None and _is_freed(node):
        raise RuntimeError(
            "Calling register_hooks on a saved tensor after it has been freed. Saved "
            "intermediate values of the graph are freed when you call .backward() or "
            "autograd.grad(). Specify retain_graph=True if you need to backward through the "
            "graph a second time or if you need to access saved variables after calling "
            "backward.")
    if saved is None:
        raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                           "forbidden")
    if not callable(pack_hook) or not callable(unpack_hook):
        raise TypeError("register_hooks(): expected two callables (pack_hook, unpack_hook)")
    if saved._hooks is not None:
        raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                           "been set. Hint: only one pair of hooks is allowed at a time.")
    t = saved._tensor
    if t is None:
        t = _from_array(saved._data)
        t._vc = saved._vc
    pack_saved(saved, (pack_hook, unpack_hook), t)


def _is_freed(node):
    return node._saved is FREED


class saved_tensors_hooks:
    """Context manager setting pack/unpack hooks for tensors saved for backward.

    Example::

        >>> def pack(t): return t.detach().clone()
        >>> def unpack(t): return t
        >>> with ndgrad.autograd.graph.saved_tensors_hooks(pack, unpack):
        ...     y = x.exp()       # the saved result goes through pack
        >>> y.sum().backward()    # ... and through unpack here
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        msg = _tls.saved_hooks_disabled
        if msg is not None:
            raise RuntimeError(msg)
        with _count_lock:  # `+=` on a module global is not atomic across threads
            _state.saved_hooks_active += 1
        _tls.saved_hooks = _tls.saved_hooks + ((self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc):
        if not _tls.saved_hooks:
            # torch's check (an internal assert there): the count must never go below the
            # number of open contexts.
            raise RuntimeError("saved_tensors_hooks: exit without a matching enter (the "
                               "stack of saved tensor hooks is empty)")
        _tls.saved_hooks = _tls.saved_hooks[:-1]
        with _count_lock:
            _state.saved_hooks_active -= 1


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in host memory and bring them back for backward.

    ndgrad's tensors already live in host memory, so, exactly as torch does for CPU tensors,
    the saved value is the tensor itself (``tensor.cpu()`` is a no-op) unless ``pin_memory``
    asks for a separate (here: plain) host copy made at save time.
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(t):
            if not pin_memory:
                return (t.device, t)
            return (t.device, Tensor(np.array(t._data, copy=True)))

        def unpack_from_cpu(packed):
            _device, tensor = packed
            return tensor

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Make entering ``saved_tensors_hooks`` raise ``RuntimeError(error_message)``.

    Also usable as a decorator. Raises at once if hooks are already active.
    """

    def __init__(self, error_message):
        self.error_message = error_message
        self._prev = None

    def __enter__(self):
        if _tls.saved_hooks:
            raise RuntimeError(self.error_message)
        self._prev = _tls.saved_hooks_disabled
        _tls.saved_hooks_disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _tls.saved_hooks_disabled = self._prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)
        return wrapper


# --------------------------------------------------------------------- allow mutation
_OUTSIDE_ALLOW_MUTATION = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded.")


class _Handle:
    """What allow_mutation_on_saved_tensors packs: a key to the saved tensor (or its clone).
    The graph holds it; when the graph lets it go, the context forgets the tensor."""

    __slots__ = ("__weakref__",)


class _AllowMutationOnSavedContext:
    """State of an ``allow_mutation_on_saved_tensors`` block, with torch's fields.

    A saved tensor is identified by (tensor, storage, version) (`tid`) and its memory by
    (storage, version) (`sid`); one handle per `tid`, so a tensor saved twice at one version
    is cloned once. Just before an in-place op writes to memory some saved tensor reads, that
    tensor is cloned (``cloned``), and backward reads the clone. All maps hold the handles
    weakly: freeing the graph empties them.
    """

    def __init__(self):
        self.cloned = weakref.WeakKeyDictionary()      # handle -> clone
        self.original = weakref.WeakKeyDictionary()    # handle -> saved tensor
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        self.sid_to_tid = {}
        self.closed = False

    @staticmethod
    def _sid(t):
        return (id(t._vc), t._version)

    # pack/unpack hooks
    def pack(self, t):
        sid = self._sid(t)
        tid = (id(t),) + sid
        self.sid_to_tid.setdefault(sid, set()).add(tid)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:
            handle = _Handle()
            self.tid_to_weakhandle[tid] = handle
            self.original[handle] = t
        return handle

    def unpack(self, handle):
        if self.closed:
            raise AssertionError(_OUTSIDE_ALLOW_MUTATION)
        t = self.cloned.get(handle)
        if t is None:
            t = self.original.get(handle)
            if t is None:
                raise AssertionError(_OUTSIDE_ALLOW_MUTATION)
        return t

    # special-mode observer: before every op, clone what an in-place op is about to change
    def before(self, op, args, params):
        if hasattr(op, "op") and args:
            tids = self.sid_to_tid.pop(self._sid(args[0]), ())
            for tid in tids:
                handle = self.tid_to_weakhandle.get(tid)
                if handle is None or handle in self.cloned:
                    continue
                saved = self.original.pop(handle)
                self.cloned[handle] = Tensor(np.array(saved._data, copy=True))
        return None

    def after(self, op, args, params, outputs, token):
        pass

    def clear(self):
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


_allow_mutation_active = []


class allow_mutation_on_saved_tensors:
    """Allow in-place changes to tensors saved for backward: the originals are cloned first.

    Inside the block, mutating a tensor that a node saved makes a copy of the saved value
    before the write, so backward computes with the value the forward used. Backward through
    such a graph after the block has exited raises torch's AssertionError.
    """

    def __enter__(self):
        if _allow_mutation_active:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        ctx = self._ctx = _AllowMutationOnSavedContext()
        self._hooks = saved_tensors_hooks(ctx.pack, ctx.unpack)
        self._hooks.__enter__()
        special_hooks.append(ctx)
        _state.enter_special()
        _allow_mutation_active.append(ctx)
        return ctx

    def __exit__(self, *exc):
        ctx = self._ctx
        _allow_mutation_active.remove(ctx)
        _state.exit_special()
        special_hooks.remove(ctx)
        self._hooks.__exit__(*exc)
        ctx.closed = True
        ctx.clear()
