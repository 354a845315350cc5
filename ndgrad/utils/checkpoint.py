"""Activation checkpointing: trade compute for memory by recomputing a forward in backward.

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` without keeping the tensors its ops
save for backward; the first time backward needs one of them, ``fn`` is run again (with the
random-number state of the first run when ``preserve_rng_state``) and the recomputed values
are used. ``checkpoint_sequential`` applies this to consecutive segments of a sequence of
modules/functions.

Two implementations, as in torch:
- ``use_reentrant=False`` (recommended): saved-tensor hooks. The forward packs a small
  placeholder instead of each saved tensor; the first unpack in a backward pass recomputes
  ``fn`` and takes the values in the order they were saved, stopping as soon as every saved
  value is back (``early_stop``). Works with ``autograd.grad``, ``inputs=``, inputs that do
  not require grad, and nesting (a checkpoint inside a checkpointed function: its inputs are
  saved by the enclosing checkpoint, so recomputing it first recomputes the enclosing one).
  ``context_fn`` gives a context for the forward and one for each recomputation; ``debug``
  turns a recomputation mismatch into a log of the ops of both runs.
- ``use_reentrant=True``: the forward runs under ``no_grad`` and the outputs get one
  ``CheckpointFunctionBackward`` node, whose backward recomputes ``fn`` on detached inputs and
  runs a nested backward through it (torch's original scheme; ``autograd.grad`` and
  ``backward(inputs=...)`` are not supported through it, as in torch).
"""

import contextlib
import enum
import os
import sys
import traceback
import warnings
import weakref

from .. import _random, _state
from .._dtype import from_np
from .._graph_core import BACKWARD_TWICE, FREED, Node, SavedTensor, current_graph_task
from .._ops.registry import special_hooks
from .._size import Size
from .._tensor import Tensor
from ..autograd._backward import backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..autograd.profiler import aten_name

__all__ = ["CheckpointError", "CheckpointFunction", "CheckpointPolicy", "DefaultDeviceType",
           "SelectiveCheckpointContext", "check_backward_validity", "checkpoint",
           "checkpoint_sequential", "detach_variable", "get_device_states", "noop_context_fn",
           "set_checkpoint_debug_enabled", "set_checkpoint_early_stop", "set_device_states"]


class CheckpointError(RuntimeError):
    """The recomputed forward did not save the same tensors as the original one."""


_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")


def noop_context_fn():
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default",
               debug=False, early_stop=True, preserve_rng_state=True, **kwargs):
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
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return _checkpoint_reentrant(function, preserve_rng_state, args)
    return _checkpoint_hooks(function, args, kwargs, preserve_rng_state, context_fn,
                             determinism_check, debug, early_stop)


# ------------------------------------------------------------------ non-reentrant (hooks)
#
# How nesting works (torch's rules, see its NOTE [ Nestable Checkpoint ]):
# 1. a saved tensor belongs to the innermost checkpoint active when it was saved;
# 2. the tensor inputs of a checkpoint are saved tensors of the enclosing one (they are packed
#    with whatever saved-tensor hooks are active when ``checkpoint`` is called);
# so unpacking a value saved inside an inner checkpoint recomputes the inner function, whose
# inputs unpack through the outer checkpoint, which recomputes the outer function first (once
# per backward). Checkpoints met while recomputing are real checkpoints again.
#
# A frame recomputes at most once per backward pass (graph task). Each recomputed value is
# handed out once and then dropped, even under retain_graph=True (a later backward recomputes).

_early_stop_override = None   # set_checkpoint_early_stop
_debug_override = None        # set_checkpoint_debug_enabled

_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""

_CONTEXT_SUPPRESSED = (
    "torch.utils.checkpoint: the forward context provided by context_fn suppressed an "
    "exception raised during the checkpointed forward. This is not supported because "
    "checkpoint cannot return a value for a failed forward.")


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether checkpoints created inside stop recomputing once every saved value is back."""
    global _early_stop_override
    prev, _early_stop_override = _early_stop_override, enable
    try:
        yield
    finally:
        _early_stop_override = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Override ``debug`` of the checkpoints created inside (None: use their own flag)."""
    global _debug_override
    prev, _debug_override = _debug_override, enabled
    try:
        yield
    finally:
        _debug_override = prev


def _shape_dtype(t):
    return (t._data.shape, t._data.dtype)


def _no_metadata(_t):
    return None


_METADATA_FNS = {"default": _shape_dtype, "none": _no_metadata}


def _meta_text(meta):
    shape, np_dtype = meta
    return (f"{{'shape': {Size(shape)!r}, 'dtype': {from_np(np_dtype)}, "
            "'device': device(type='cpu')}")


def _active_tasks():
    return _state.tls.__dict__.get("graph_tasks") or ()


class _Holder:
    """What the forward packs in place of a saved tensor. ``values`` maps a backward pass to
    the value recomputed for it (None once handed out). The frame references holders weakly:
    a holder whose node was released needs no recomputed value."""

    __slots__ = ("__weakref__", "values")

    def __init__(self):
        self.values = {}


class _StopRecomputation(Exception):
    """Raised by a frame's recomputation pack hook once every needed value is recomputed."""

    def __init__(self, frame):
        super().__init__()
        self.frame = frame


class _Frame:
    """One non-reentrant checkpointed call: how to rerun it and what it saved the first time."""

    def __init__(self, recompute, metadata_fn, early_stop, on_unpack_error):
        self.recompute = recompute      # recompute(*inputs): reruns the function
        self.metadata_fn = metadata_fn
        self.early_stop = early_stop
        self.on_unpack_error = on_unpack_error
        self.inputs = ()                # positional args; tensors as graph.SavedTensor
        self.holders = []               # weakrefs to _Holder, in save order
        self.metas = []                 # metadata_fn(saved tensor), in save order
        self.done = {}                  # backward pass -> number of values recomputed for it
        self.forward_completed = False
        self.ignore_count_mismatch = False

    def save_inputs(self, args):
        self.inputs = tuple(SavedTensor.of_input(a) if isinstance(a, Tensor) else a
                            for a in args)

    # hooks of the original forward
    def pack(self, t):
        holder = _Holder()
        self.holders.append(weakref.ref(holder))
        self.metas.append(self.metadata_fn(t))
        return holder

    def unpack(self, holder):
        if self.on_unpack_error is None:
            return self._unpack(holder)
        try:
            return self._unpack(holder)
        except CheckpointError as e:
            self.on_unpack_error(e)
            raise

    def _unpack(self, holder):
        task = current_graph_task()
        key = task if task is not None else object()  # outside backward: always recompute
        if key not in self.done:
            self._recompute(key)
        value = holder.values[key]
        if value is None:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                "already unpacked once. If you are calling ctx.saved_tensors in backward, make "
                "sure to do so only once. Otherwise please open an issue with details on your "
                "use case.")
        holder.values[key] = None  # hand it out once (torch's rule 4)
        return value

    def _recompute(self, key):
        # Forget passes that are over; their leftovers can never be asked for.
        active = _active_tasks()
        for k in [k for k in self.done if not any(k is t for t in active)]:
            del self.done[k]
        # Unpacking the inputs may recompute the enclosing checkpoint first (rule 2).
        inputs = [a.unpack() if isinstance(a, SavedTensor) else a for a in self.inputs]
        self.done[key] = 0  # counts the values saved by this recomputation
        try:
            with saved_tensors_hooks(lambda t: self._pack_recomputed(key, t), _identity), \
                    enable_grad():
                self.recompute(*inputs)
        except _StopRecomputation as stop:
            if stop.frame is not self:
                del self.done[key]
                raise
        except BaseException:
            del self.done[key]  # a later unpack tries again
            raise
        self._check(key)

    def _pack_recomputed(self, key, t):
        value = t.detach() if t.requires_grad else t
        index = self.done[key]
        self.done[key] = index + 1
        if index >= len(self.holders):
            # Only reachable without early stop.
            if not self.forward_completed:
                # A backward inside the checkpointed forward recomputed it (torch's rule 6).
                self.ignore_count_mismatch = True
                return value
            raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during "
                                  "recomputation than during the original forward pass.\n"
                                  + _DEBUG_TIP)
        holder = self.holders[index]()
        if holder is not None:  # else its node was released: nobody needs the value
            values = holder.values
            for k in [k for k in values if k not in self.done]:
                del values[k]
            values[key] = value
        if self.early_stop and index + 1 == len(self.holders):
            raise _StopRecomputation(self)  # everything backward needs is back (torch's rule 5)
        # The value is also what the recomputed graph saves, should someone backward it.
        return value

    def _check(self, key):
        if self.ignore_count_mismatch:
            return
        count = self.done[key]
        if count != len(self.holders):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{len(self.holders)}\nNumber of tensors saved during recomputation: {count}.\n"
                + _DEBUG_TIP)
        if self.metadata_fn is _no_metadata:
            return
        bad = []
        for i, ref in enumerate(self.holders):
            holder = ref()
            if holder is not None:
                now = self.metadata_fn(holder.values[key])
                if now != self.metas[i]:
                    bad.append(f"tensor at position {i}:\nsaved metadata: "
                               f"{_meta_text(self.metas[i])}\nrecomputed metadata: "
                               f"{_meta_text(now)}\n")
        if bad:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                "different metadata than during the forward pass.\n" + "".join(bad) + ".\n"
                + _DEBUG_TIP)


def _identity(x):
    return x


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


def _checkpoint_hooks(function, args, kwargs, preserve_rng_state, context_fn, determinism_check,
                      debug, early_stop):
    on_unpack_error = None
    if _debug_override if _debug_override is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, on_unpack_error = _debug_context_fn()
    metadata_fn = _METADATA_FNS.get(determinism_check)
    if metadata_fn is None:
        raise ValueError(f"determinism_check should be one of {list(_METADATA_FNS)}, but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn()
    rng = _random.get_rng_state() if preserve_rng_state else None

    def recompute(*inputs):
        with _rng_state(rng), recompute_context:
            function(*inputs, **kwargs)

    if not _state.tls.grad_enabled:
        return function(*args, **kwargs)  # nothing is saved: nothing to recompute
    frame = _Frame(recompute, metadata_fn,
                   _early_stop_override if _early_stop_override is not None else early_stop,
                   on_unpack_error)
    frame.save_inputs(args)  # packed by the enclosing checkpoint, if any (rule 2)
    failed = True
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        out = function(*args, **kwargs)
        failed = False
    if failed:  # forward_context swallowed the function's exception
        raise RuntimeError(_CONTEXT_SUPPRESSED)
    frame.forward_completed = True
    return out


# ------------------------------------------------------------------ debug=True
_DEBUG_ERROR = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.
Scroll all the way down for guidance on how to navigate these logs.

+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+
(Scroll up to correlate stack traces with each operation listed below. This
 helps identify their source in the code.)

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, you can do the following:

 1) Compare the operators ran during original forward and recomputation to
    see where they differ. These operators are printed above in the order they
    were executed.

 2) Review the stack trace for each operator to locate its invocation source.
    Each operator's stack trace is printed in their execution order.

 Note that the logs can be quite long. Here's how they are structured:
 (Tip: you can Ctrl-f for these headers)

 1. Stack traces of the operators that ran in the original forward
 2. Stack traces of the operators that ran during recomputation
 3. Log of operators in the original forward and recomputation
 4. Error message                                             <--- You are here
--------------------------------------------------------------------------------
"""

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tensor_text(v):
    if not isinstance(v, Tensor):
        return repr(v)
    short = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
             "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
             "bool": "b8", "complex64": "c64", "complex128": "c128"}
    name = str(from_np(v._data.dtype)).replace("torch.", "")
    return f"{short.get(name, name)}{list(v._data.shape)}"


class _OpLog:
    """Records every op run while active (a special-mode observer): one line per op and the
    user-code stack it was called from (innermost first, ndgrad's own frames left out)."""

    def __init__(self):
        self.ops = None  # [line, stack] per op, in call order

    def __enter__(self):
        self.ops = []
        special_hooks.append(self)
        _state.enter_special()
        return self

    def __exit__(self, *exc):
        _state.exit_special()
        special_hooks.remove(self)

    def before(self, op, args, params):
        stack = traceback.extract_stack(sys._getframe(1))
        # Logged before the op runs: the op whose save stops a recomputation shows too.
        entry = [f"{aten_name(op)}({', '.join(_tensor_text(a) for a in args)})",
                 [f for f in reversed(stack) if not f.filename.startswith(_PACKAGE_DIR)]]
        self.ops.append(entry)
        return entry

    def after(self, op, args, params, outputs, entry):
        outs = outputs if type(outputs) is tuple else (outputs,)
        entry[0] = f"{', '.join(_tensor_text(o) for o in outs)} = {entry[0]}"

    def report(self, label):
        lines = []
        for i, (op, stack) in enumerate(self.ops):
            lines.append(f"{op}   ({i + 1} of {len(self.ops)} in {label})\n\n")
            lines.extend(f"{f.filename}:{f.lineno}:{f.name}\n" for f in stack)
            lines.append("\n\n")
        return "".join(lines)


def _debug_context_fn():
    """``(context_fn, on_unpack_error)`` for debug=True: log the ops of the forward and of the
    latest recomputation, and turn a CheckpointError at unpack into a report of both."""
    forward_log, recompute_log = _OpLog(), _OpLog()

    def on_unpack_error(e):
        raise CheckpointError(_DEBUG_ERROR.format(
            forward_traces=forward_log.report("original"),
            recompute_traces=recompute_log.report("recompute"),
            forward_ops="\n".join(line for line, _ in forward_log.ops or ()),
            recompute_ops="\n".join(line for line, _ in recompute_log.ops or ()))) from e

    return (lambda: (forward_log, recompute_log)), on_unpack_error


# ------------------------------------------------------------------ reentrant
_REENTRANT_PARTIAL_BACKWARD = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing "
    "an `inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument.")


class CheckpointFunctionBackward(Node):
    """The single node a reentrant checkpoint gives its outputs."""

    __slots__ = ()

    def _apply(self, gs):
        info = self._params
        if info is None:
            raise RuntimeError(BACKWARD_TWICE)
        task = current_graph_task()
        if task is not None and task.partial:
            # a backward that runs only part of the graph (autograd.grad, backward(inputs=)):
            # the inner backward below would accumulate into every leaf. Refused first, as
            # torch does, so the graph stays usable.
            raise RuntimeError(_REENTRANT_PARTIAL_BACKWARD)
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
        backward(roots, grads)
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
    for k, o in enumerate(out_tuple):
        if isinstance(o, Tensor) and o._data.dtype.kind in "fc":
            o._rg = True
            o._grad_fn = node
            o._output_nr = k
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


# ------------------------------------------------------------------ torch's helper names
# What code written against torch's checkpoint module imports besides ``checkpoint``. The
# selective-checkpoint entry points (``create_selective_checkpoint_contexts``,
# ``SAC_IGNORED_OPS``) are keyed on ATen operator overloads (``torch.ops.aten.mm.default``),
# which ndgrad has no dispatcher for: they are not provided (docs/coverage.md says so).
class CheckpointFunction(Function):
    """torch's reentrant checkpoint as a Function class, for code that calls it directly:
    ``CheckpointFunction.apply(run_function, preserve_rng_state, *args)`` is
    ``checkpoint(run_function, *args, use_reentrant=True, preserve_rng_state=...)`` (its
    outputs' ``grad_fn`` is a ``CheckpointFunctionBackward``)."""

    @staticmethod
    def apply(run_function, preserve_rng_state, *args):
        return _checkpoint_reentrant(run_function, preserve_rng_state, args)


class CheckpointPolicy(enum.Enum):
    """What a selective-checkpoint policy answers for one op (torch's enum, values included)."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """The context a selective-checkpoint policy function receives."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


class DefaultDeviceType:
    """The device type whose random state a checkpoint saves when no input names one: 'cpu'
    (ndgrad has no accelerator) unless set."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


def detach_variable(inputs):
    """``inputs`` (a tuple) with each tensor detached, keeping its ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           + type(inputs).__name__)
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            d = inp.detach()
            d.requires_grad = inp.requires_grad
            inp = d
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs):
    """Warn, as torch does, when no tensor of ``inputs`` requires grad."""
    if not any(i.requires_grad for i in inputs if isinstance(i, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


def get_device_states(*args):
    """The ids and random states of the accelerator devices ``args`` live on: none, as every
    ndgrad tensor is on the CPU."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    """Restore the random states of accelerator ``devices`` (nothing to do for none)."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    module = getattr(sys.modules[__name__.rsplit(".", 2)[0]], device_type)
    for device, state in zip(devices, states):
        with module.device(device):         # torch's AttributeError for 'cpu', as in torch
            module.set_rng_state(state)
