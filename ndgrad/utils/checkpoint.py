"""Activation checkpointing: trade compute for memory by recomputing a forward in backward.

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` without keeping the tensors its ops
save for backward; the first time backward needs one of them, ``fn`` is run again (with the
random-number state of the first run when ``preserve_rng_state``) and the recomputed values
are used. ``checkpoint_sequential`` applies this to consecutive segments of a sequence of
modules/functions.

Two implementations, as in torch:
- ``use_reentrant=False`` (recommended): saved-tensor hooks. The forward packs a small
  placeholder instead of each saved tensor; the first unpack in a backward pass recomputes
  ``fn`` and takes the values in the order they were saved. Works with ``autograd.grad``,
  ``inputs=`` and inputs that do not require grad.
- ``use_reentrant=True``: the forward runs under ``no_grad`` and the outputs get one
  ``CheckpointFunctionBackward`` node, whose backward recomputes ``fn`` on detached inputs and
  runs a nested backward through it (torch's original scheme; ``autograd.grad`` and
  ``backward(inputs=...)`` are not supported through it, as in torch).

Like torch, the recomputation stops as soon as every saved tensor backward needs has been
recomputed. Not supported: nested checkpoints with ``use_reentrant=False`` (an inner
checkpoint inside a recomputed outer one), ``context_fn`` and ``debug=True``.
"""

import warnings

from .. import _random, _state
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import FREED, Node, saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]


class CheckpointError(RuntimeError):
    """The recomputed forward did not save the same tensors as the original one."""


_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """Run ``function(*args, **kwargs)``, recomputing it in backward instead of storing it.

    Example::

        >>> def block(x):
        ...     return (x @ w1).tanh() @ w2
        >>> y = checkpoint(block, x, use_reentrant=False)
        >>> y.sum().backward()    # block runs again here; gradients are unchanged
    """
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    if context_fn is not None:
        raise NotImplementedError("ndgrad's checkpoint does not support context_fn")
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _checkpoint_reentrant(function, preserve_rng_state, args)
    return _checkpoint_hooks(function, preserve_rng_state, determinism_check, args, kwargs)


# ------------------------------------------------------------------ non-reentrant (hooks)
class _Holder:
    """What the forward saves in place of a tensor: its position in the save order."""

    __slots__ = ("frame", "index")

    def __init__(self, frame, index):
        self.frame = frame
        self.index = index


class _Frame:
    """One checkpointed call: how to rerun it and what it saved the first time."""

    def __init__(self, function, args, kwargs, rng_state, check):
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng_state = rng_state
        self.check = check
        self.meta = []        # (shape, dtype) per saved tensor, in save order
        self.task = None      # the backward pass the recomputed values belong to
        self.values = None

    def pack(self, t):
        self.meta.append((t._data.shape, t._data.dtype))
        return _Holder(self, len(self.meta) - 1)

    def unpack(self, holder):
        from ..autograd._graph_extras import _current_task
        task = _current_task()
        key = task[0] if task is not None else None
        values = self.values
        if values is None or key is None or self.task is not key or \
                values[holder.index] is None:
            values = self.values = self._recompute()
            self.task = key
        # Hand each recomputed value out once and forget it, so the memory of the segment is
        # released as backward consumes it (a second unpack recomputes).
        value = values[holder.index]
        values[holder.index] = None
        return value

    def _recompute(self):
        values = []
        needed = len(self.meta)

        def pack(t):
            values.append(t)
            if len(values) == needed:
                # Everything backward needs is recomputed: stop running the function (torch's
                # early stop; later saves, even different ones, do not matter).
                raise _StopRecomputation
            return None

        def unpack(_):
            raise RuntimeError("torch.utils.checkpoint: unpack is being triggered for a tensor "
                               "that was already unpacked once during recomputation.")

        outer = _state.tls.saved_hooks
        _state.tls.saved_hooks = ()  # the recomputation must not see outer hooks
        try:
            with _rng_state(self.rng_state), enable_grad(), saved_tensors_hooks(pack, unpack):
                self.function(*self.args, **self.kwargs)
        except _StopRecomputation:
            pass
        finally:
            _state.tls.saved_hooks = outer
        if len(values) != needed:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{needed}\nNumber of tensors saved during recomputation: {len(values)}.")
        if self.check:
            bad = [i for i, (t, (shape, dtype)) in enumerate(zip(values, self.meta))
                   if t._data.shape != shape or t._data.dtype != dtype]
            if bad:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have "
                    "different metadata than during the forward pass.\n" +
                    "".join(f"tensor at position {i}:\nsaved metadata: "
                            f"{_meta_text(*self.meta[i])}\nrecomputed metadata: "
                            f"{_meta_text(values[i]._data.shape, values[i]._data.dtype)}\n"
                            for i in bad) + ".")
        return values


class _StopRecomputation(Exception):
    pass


def _meta_text(shape, np_dtype):
    from .._dtype import from_np
    from .._size import Size
    return (f"{{'shape': {Size(shape)!r}, 'dtype': {from_np(np_dtype)}, "
            "'device': device(type='cpu')}")


class _rng_state:
    """Run a block with the default generator at `state` (None: leave it alone)."""

    def __init__(self, state):
        self.state = state
        self.saved = None

    def __enter__(self):
        if self.state is not None:
            self.saved = _random.get_rng_state()
            _random.set_rng_state(self.state)

    def __exit__(self, *exc):
        if self.state is not None:
            _random.set_rng_state(self.saved)


def _checkpoint_hooks(function, preserve_rng_state, determinism_check, args, kwargs):
    state = _random.get_rng_state() if preserve_rng_state else None
    frame = _Frame(function, args, kwargs, state, determinism_check != "none")
    with saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


# ------------------------------------------------------------------ reentrant
class CheckpointFunctionBackward(Node):
    """The single node a reentrant checkpoint gives its outputs."""

    __slots__ = ()

    def _apply(self, gs):
        from .. import autograd
        info = self._params
        if info is None:
            from ..autograd.graph import BACKWARD_TWICE
            raise RuntimeError(BACKWARD_TWICE)
        function, args, state, _n_out = info
        detached = []
        for a in args:
            if isinstance(a, Tensor):
                d = a.detach()
                d._rg = a.requires_grad
                detached.append(d)
            else:
                detached.append(a)
        with _rng_state(state), enable_grad():
            outs = function(*detached)
        outs = outs if isinstance(outs, tuple) else (outs,)
        roots, grads = [], []
        for o, g in zip(outs, gs):
            if isinstance(o, Tensor) and o.requires_grad and g is not None:
                roots.append(o)
                grads.append(g)
        if not roots:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        autograd.backward(roots, grads)
        return tuple(d.grad if isinstance(d, Tensor) and self._next[i] is not None else None
                     for i, d in enumerate(detached))

    def _release(self):
        self._saved = FREED
        self._params = None


def _checkpoint_reentrant(function, preserve_rng_state, args):
    state = _random.get_rng_state() if preserve_rng_state else None
    with no_grad():
        outs = function(*args)
    rgs = [isinstance(a, Tensor) and a.requires_grad for a in args]
    if not any(rgs) or not _state.tls.grad_enabled:
        if not any(rgs):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          UserWarning, stacklevel=3)
        return outs
    edges = tuple(a._edge() if rg else None for a, rg in zip(args, rgs))
    single = not isinstance(outs, tuple)
    out_tuple = (outs,) if single else outs
    # A non-empty `saved` so the engine releases the node (and its recompute recipe) after use.
    node = CheckpointFunctionBackward(edges, (None,), (function, args, state, len(out_tuple)))
    k = 0
    for o in out_tuple:
        if isinstance(o, Tensor) and o._data.dtype.kind in "fc":
            o._rg = True
            o._grad_fn = node
            o._output_nr = k
        k += 1
    return outs


# ------------------------------------------------------------------ sequential
def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Checkpoint all but the last of `segments` consecutive chunks of `functions`.

    `functions` is an ``nn.Sequential`` (its children) or a list of callables applied in
    order to `input`.
    """
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    functions = list(functions)

    def run_function(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)
