"""Custom autograd Functions: ``Function``, its ``ctx`` (``FunctionCtx``), ``once_differentiable``.

A user subclasses ``Function`` with a static ``forward`` and ``backward`` (or ``vjp``) and
calls ``MyFn.apply(...)``. Each subclass gets, once, a node class ``MyFnBackward`` (a
``Node`` of the backward graph); one instance of it per call is both the ``ctx`` that
``forward`` fills and the ``grad_fn`` of the outputs, exactly as in torch.

What lives here and how it maps onto the engine:

- ``apply`` runs ``forward`` under no_grad, then wraps the outputs: differentiable tensor
  outputs get the node as ``grad_fn``; an input returned as-is becomes a view of itself (as
  torch's ``view_as(self)``; a plain alias under no_grad); ``mark_dirty`` tensors have their
  version bumped and their history rebased on the node (``_ops.view_history.rebase_history``);
  non-differentiable outputs (marked, or of an integer/bool dtype) never require grad.
- The node's edges are one per *tensor* argument (non-tensor arguments have none); its
  ``_meta`` holds each differentiable input's (shape, dtype) so the engine validates, sums and
  casts returned gradients (torch's "returned an invalid gradient at index i" error).
- ``save_for_backward`` values become ``graph.SavedTensor`` objects, version-checked on unpack
  like built-in saved values; an output is saved without a reference cycle and unpacks with
  the node as its ``grad_fn`` (so double backward through it works).
- ``_wants_none = True``: the engine calls the node even when every incoming gradient is None;
  ``_apply`` materialises zeros unless ``ctx.set_materialize_grads(False)`` was called.

Forward mode (the contract with ``ndgrad.autograd.forward_ad``): after wrapping the outputs,
``apply`` calls ``_forward_ad_hook(ctx, args, outputs)`` when a special mode is active and the
forward-AD module installed the hook (``ndgrad.autograd.function._forward_ad_hook = fn``).
``args`` are the positional arguments as passed (dual tensors included), ``outputs`` the tuple
of outputs (non-tensors included). The hook finds the input tangents at its current level and
calls ``run_jvp(ctx, tangents)`` with one entry per positional argument (as torch: zeros for
a tensor without a tangent, None for a non-tensor); ``run_jvp`` calls the user's
``jvp(ctx, *tangents)`` and returns a tuple with one tangent (or None) per output, which the
hook attaches to the outputs.
``run_jvp`` raises torch's NotImplementedError when the Function defines no ``jvp``.
Under a profiler, ``apply`` runs inside one event named after the Function class (as torch),
which encloses the forward's ops and carries the node's sequence number.
``save_for_forward`` values are readable (as ``ctx.saved_tensors`` inside ``jvp``) only
during that hook: afterwards ``apply`` drops every plain reference ``ctx`` holds to outputs
(``to_save``, ``dirty_tensors``, ``non_differentiable``, ``saved_for_forward``), since an output
holds ``ctx`` as its ``grad_fn`` and the pair would otherwise form a reference cycle.
"""

import functools
import inspect
import warnings

import numpy as np

from .. import _state
from .._graph_core import BACKWARD_TWICE, FREED, Node, SavedTensor
from .._ops.inplace import check_inplace
from .._ops.registry import special_hooks
from .._ops.view_history import rebase_history
from .._tensor import Tensor
from . import anomaly_mode
from ._graph_introspection import _RawSaved
from .profiler import _Recorder

# ndgrad.autograd star-imports this list: torch's public names only (run_jvp and
# BackwardCFunction stay reachable as ndgrad.autograd.function.<name>).
__all__ = ["Function", "FunctionCtx", "InplaceFunction", "once_differentiable"]

_tls = _state.tls


# Installed by ndgrad.autograd.forward_ad: ``hook(ctx, args, outputs)``. See module docstring.
_forward_ad_hook = None

# Installed by ndgrad._functorch.custom_function (a floor above): ``apply`` while a torch.func
# transform is active (``_state.func_transforms``), ``hook(cls, args, kwargs)`` returning the
# outputs, or NotImplemented for the ordinary apply.
transformed_apply = None


class FunctionCtx:
    """What ``forward`` (or ``setup_context``) can tell the backward: saved values and flags.

    The methods are mixed into the node class, so ``ctx`` *is* the ``grad_fn`` of the outputs.
    """

    def save_for_backward(self, *tensors):
        """Save tensors (or None) for ``backward``; read them back with ``ctx.saved_tensors``.

        Saved tensors are version-checked: modifying one in place afterwards makes backward
        raise. Inputs, outputs and intermediate tensors may all be saved.
        """
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Save tensors for ``jvp``; in ``jvp`` they are read with ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_forward expects all arguments to be tensors; you "
                                f"should save non-tensors as attributes on ctx. (argument {i} "
                                f"is of type {type(t).__name__})")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Mark input tensors modified in place by ``forward``; they must also be returned."""
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs):
        warnings.warn("mark_shared_storage is deprecated. Tensors with shared storages are "
                      "automatically tracked. Note that calls to `set_()` are not tracked")

    def mark_non_differentiable(self, *args):
        """Mark outputs that do not require grad; their gradients arrive as zeros (or None)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """Whether None output gradients are turned into zero tensors before ``backward``."""
        self.materialize_grads = bool(value)


_ACCESSED_ONCE = (
    "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True is set on "
    "the autograd.Function. Either access saved_tensors only once, or set "
    "clear_saved_tensors_on_access=False.")


class BackwardCFunction(Node, FunctionCtx):
    """Base of the per-Function node classes (``MyFnBackward``); instances are the ``ctx``."""

    # No __slots__: user code stores arbitrary attributes on ctx.
    _forward_cls = None
    _wants_none = True
    materialize_grads = True
    to_save = ()
    dirty_tensors = ()
    non_differentiable = ()

    def __init__(self, next_edges, needs):
        Node.__init__(self, next_edges)
        self._needs = needs

    @property
    def needs_input_grad(self):
        """Per positional argument of ``forward``: whether its gradient is needed."""
        return self._needs

    @needs_input_grad.setter
    def needs_input_grad(self, value):
        self._needs = tuple(value)

    @property
    def saved_tensors(self):
        """The values given to ``save_for_backward``, unpacked and version-checked."""
        if self._in_jvp():
            return tuple(getattr(self, "saved_for_forward", ()))
        saved = self._saved
        if saved is FREED:
            raise RuntimeError(BACKWARD_TWICE)
        if self._forward_cls.clear_saved_tensors_on_access:
            if self.__dict__.get("_saved_accessed"):
                raise RuntimeError(_ACCESSED_ONCE)
            self._saved_accessed = True
            out = tuple([s.unpack(self) if type(s) is SavedTensor else s for s in saved])
            self._saved = ()     # the caller's tuple now holds the only references
            return out
        return tuple([s.unpack(self) if type(s) is SavedTensor else s for s in saved])

    @property
    def _raw_saved_tensors(self):
        """One ``SavedTensor`` handle per value given to ``save_for_backward`` (None
        included: only unpacking tells), for ``register_hooks`` on it."""
        if self._saved is FREED:
            raise RuntimeError(BACKWARD_TWICE)
        return tuple([_RawSaved._of(self, i) for i in range(len(self._saved))])

    @property
    def saved_variables(self):
        """The pre-0.4 name of ``saved_tensors``: the same values, with torch's warning."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors

    def _in_jvp(self):
        return self.__dict__.get("_jvp_running", False)

    def apply(self, *grads):
        """Call the user's backward (or vjp) on `grads` and return its result as is."""
        return self._forward_cls._backward_impl()(self, *grads)

    def _apply(self, gs):
        cls = self._forward_cls
        n_out = self._n_outputs
        gs = list(gs)
        if len(gs) < n_out:
            gs.extend([None] * (n_out - len(gs)))
        if self.materialize_grads:
            # torch's ctx._materialize_non_diff_grads = False keeps None for the outputs
            # that were not differentiable
            skip = self.__dict__.get("_nondiff_outs", ()) if not getattr(
                self, "_materialize_non_diff_grads", True) else ()
            for i, g in enumerate(gs):
                if g is None and self._out_meta[i] is not None and i not in skip:
                    shape, dtype = self._out_meta[i]
                    gs[i] = Tensor(np.zeros(shape, dtype))
        backward_fn = cls._backward_impl()
        res = backward_fn(self, gs) if cls.boxed_grads_call else backward_fn(self, *gs)
        if type(res) is not tuple:
            res = tuple(res) if isinstance(res, list) else (res,)
        return self._check_grads(res)

    def _check_grads(self, res):
        """Torch's count checks, then the gradients of the tensor arguments (one per edge)."""
        is_tensor = self._arg_is_tensor
        n_in = len(is_tensor)
        name = type(self).__name__
        if len(res) != n_in:
            if len(res) > n_in and all(g is None for g in res[n_in:]):
                res = res[:n_in]
            else:
                raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                                   f"(expected {n_in}, got {len(res)})")
        out = []
        for i, (g, tensor_arg) in enumerate(zip(res, is_tensor)):
            if not tensor_arg:
                if g is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at position "
                        f"{i + 1}, but the corresponding forward input was not a Variable")
                continue
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            out.append(g if self._needs[i] else None)
        return tuple(out)

    def _release(self):
        if self._saved:
            self._saved = FREED


class _ErrorNode(Node):
    """A node whose backward raises (torch's ``DelayedError``; its grad_fn prints as Error)."""

    __slots__ = ()

    def _apply(self, gs):
        raise RuntimeError(self._params)


_ErrorNode.__name__ = _ErrorNode.__qualname__ = "Error"


def _delayed_error(message, outputs):
    """Aliases of `outputs` whose backward raises `message` (once_differentiable's guard)."""
    result = []
    for v in outputs:
        if v is None or not isinstance(v, Tensor):
            result.append(v)
            continue
        leaf = v.detach()
        leaf._rg = True
        node = _ErrorNode((leaf._edge(),), (), message)
        out = Tensor(v._data)
        out._vc = v._vc
        out._rg = True
        out._grad_fn = node
        result.append(out)
    return tuple(result)


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable.

    It runs with grad disabled; when higher-order gradients are requested (grad mode on and a
    gradient requiring grad), the results get a node that raises torch's error on a double
    backward instead of silently returning wrong numbers.
    """

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _tls.grad_enabled
        _tls.grad_enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            _tls.grad_enabled = prev
        if not prev:
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        res = _delayed_error("trying to differentiate twice a function that was marked with "
                             "@once_differentiable", (outputs,) if single else outputs)
        return res[0] if single else res

    return wrapper


def _is_overridden(cls, name):
    return getattr(cls, name) is not getattr(Function, name)


class Function:
    """Base class for differentiable operations with a hand-written derivative.

    Define a static ``forward`` and ``backward`` (or ``vjp``), and call ``MyFn.apply``::

        >>> class Exp(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         out = x.exp()
        ...         ctx.save_for_backward(out)
        ...         return out
        ...     @staticmethod
        ...     def backward(ctx, grad_out):
        ...         (out,) = ctx.saved_tensors
        ...         return grad_out * out
        >>> y = Exp.apply(ndgrad.ones(2, requires_grad=True))
        >>> y.grad_fn.name()
        'ExpBackward'

    ``forward`` may instead take only the inputs, with a separate static
    ``setup_context(ctx, inputs, output)`` filling ``ctx``. ``backward`` gets one gradient per
    output and returns one per positional input (None where not needed); written in ndgrad
    ops, it is itself differentiable (double backward). ``jvp(ctx, *tangents)`` gives forward
    mode.
    """

    _backward_cls = None
    # Set by subclasses that want torch.func transforms; kept for API compatibility.
    generate_vmap_rule = False
    # True: ``ctx.saved_tensors`` may be read once, and then drops its references.
    clear_saved_tensors_on_access = False
    # True: ``backward(ctx, grads)`` receives the output gradients as one mutable list.
    boxed_grads_call = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # One node class per Function class, named as torch names it.
        backward_cls = type(cls.__name__ + "Backward", (BackwardCFunction,),
                            {"_forward_cls": cls, "__module__": cls.__module__})
        cls._backward_cls = backward_cls

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    # ---------------------------------------------------------------- user-overridden API
    @staticmethod
    def forward(*args, **kwargs):
        """Compute the outputs (runs with grad disabled)."""
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Optional: fill ``ctx`` from the inputs and output when forward takes no ctx."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Gradients of the inputs from the gradients of the outputs."""
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Output tangents from input tangents (forward mode)."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @staticmethod
    def vmap(info, in_dims, *args):
        """Optional batching rule under ``func.vmap``: ``in_dims`` gives each argument's batch
        dim (None: not batched), ``info.batch_size`` and ``info.randomness`` the vmap's;
        returns ``(outputs, out_dims)``. See docs/func.md."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either "
                                  "override the vmap staticmethod or set "
                                  "generate_vmap_rule=True.")

    @classmethod
    def _backward_impl(cls):
        has_backward = _is_overridden(cls, "backward")
        has_vjp = cls.vjp is not Function.vjp and cls.vjp is not cls.backward
        if has_backward and has_vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function "
                               "is not allowed. You should only implement one of them.")
        return cls.vjp if has_vjp else cls.backward

    # ---------------------------------------------------------------- apply
    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the Function on `args`, recording it in the graph when a gradient is needed."""
        if _state.func_transforms:
            out = transformed_apply(cls, args, kwargs)
            if out is not NotImplemented:
                return out
        if _state.special:
            recorders = _profile_recorders()
            if recorders:
                return _profiled_apply(cls, recorders, args, kwargs)
        return cls._apply_impl(args, kwargs, None)

    @classmethod
    def _apply_impl(cls, args, kwargs, probe):
        """``apply``'s body; `probe` (a list or None) receives the ctx once it exists."""
        if not _is_overridden(cls, "forward"):
            raise NotImplementedError("You must implement the forward function for custom "
                                      "autograd.Function.")
        uses_setup_context = _is_overridden(cls, "setup_context")
        if uses_setup_context:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            if bound.kwargs:
                raise TypeError(f"{cls.forward.__name__}() got an unexpected keyword argument "
                                f"'{next(iter(bound.kwargs))}'")
            args = tuple(bound.args)

        grad_on = _tls.grad_enabled
        arg_is_tensor = tuple(isinstance(a, Tensor) for a in args)
        needs = tuple(t and a.requires_grad for a, t in zip(args, arg_is_tensor))
        executable = grad_on and any(needs)
        tensor_args = [a for a, t in zip(args, arg_is_tensor) if t]
        if executable:
            edges = tuple([a._edge() if a.requires_grad else None for a in tensor_args])
        else:
            edges = (None,) * len(tensor_args)
        ctx = cls._backward_cls(edges, needs)
        ctx._arg_is_tensor = arg_is_tensor
        if probe is not None:
            probe.append(ctx)

        _tls.grad_enabled = False
        try:
            if uses_setup_context:
                output = cls.forward(*args)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            _tls.grad_enabled = grad_on
        if uses_setup_context:
            cls.setup_context(ctx, args, output)

        single = not isinstance(output, tuple)
        outputs = (output,) if single else output
        outputs = _wrap_outputs(ctx, tensor_args, outputs, executable, uses_setup_context)
        if _state.special:
            if _forward_ad_hook is not None:
                _forward_ad_hook(ctx, args, outputs)
            if executable:
                _record_forward_stack(ctx)
        # Drop ctx's plain references to outputs (torch clears them too): outputs hold ctx as
        # grad_fn, so keeping them would make a reference cycle that outlives the graph.
        d = ctx.__dict__
        for key in ("to_save", "dirty_tensors", "non_differentiable", "saved_for_forward"):
            d.pop(key, None)
        return outputs[0] if single else outputs


def _profile_recorders():
    """The active profilers' observers among the dispatcher's special hooks (only they see
    Functions; forward AD has its own hook and anomaly mode its own stack recording)."""
    return [h for h in special_hooks if type(h) is _Recorder]


def _profiled_apply(cls, recorders, args, kwargs):
    """``apply`` inside one event per profiler named after the Function (torch's record),
    enclosing the ops its forward runs and carrying the node's sequence number."""
    events = []
    for rec in recorders:
        ev = rec.open(cls.__name__)
        if rec.prof.record_shapes:
            ev.input_shapes = [list(a._data.shape) if isinstance(a, Tensor) else []
                               for a in args]
        events.append(ev)
    probe = []
    try:
        return cls._apply_impl(args, kwargs, probe)
    finally:
        for rec, ev in zip(reversed(recorders), reversed(events)):
            if probe:
                ev.sequence_nr = probe[0]._seq
            rec.close(ev)


def _record_forward_stack(ctx):
    """Under anomaly detection, remember where the Function was called (shown on errors)."""
    if anomaly_mode.is_anomaly_enabled():
        ctx._extras().setdefault("stack", anomaly_mode._user_stack())


_DIRTY_VIEW_MULTI_OUTPUT = (
    "If your Function modifies inplace an input that is a view of another Tensor, your "
    "Function cannot return more than one Tensor. This is not supported by the current "
    "autograd engine. You should either make sure the input is not a view (using .clone() for "
    "example) or make your Function only return one Tensor (potentially splitting it into two "
    "Functions: one doing the inplace that returns a single Tensor and a second one that does "
    "the other operations). You can ask on the forum https://discuss.pytorch.org/ if you need "
    "help to do this change.")


def _wrap_outputs(ctx, tensor_args, outputs, executable, uses_setup_context):
    """Attach `ctx` as grad_fn of the outputs and save the tensors ``ctx`` asked to keep."""
    dirty = ctx.dirty_tensors
    non_diff = ctx.non_differentiable
    dirty_ids = {id(t) for t in dirty} if dirty else ()
    non_diff_ids = {id(t) for t in non_diff} if non_diff else ()

    if dirty:
        out_ids = {id(o) for o in outputs}
        in_ids = {id(a) for a in tensor_args}
        for t in dirty:
            if id(t) not in in_ids:
                msg = ("ctx.mark_dirty() received a tensor that was not an input. Only input "
                       "Tensors that have been mutated should be passed to ctx.mark_dirty().")
                if isinstance(t, Tensor) and t._base is not None:
                    raise RuntimeError(msg)  # torch refuses a view, warns otherwise
                warnings.warn(msg, UserWarning, stacklevel=3)
        for t in dirty:
            if id(t) not in out_ids:
                raise RuntimeError("Some elements marked as dirty during the forward method "
                                   "were not returned as output. The inputs that are modified "
                                   "inplace must all be outputs of the Function.")
        if executable:
            for t in dirty:
                if t._base is not None and len(outputs) > 1:
                    raise RuntimeError(_DIRTY_VIEW_MULTI_OUTPUT)
                if t._base is None and t._rg and t._grad_fn is None:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                       "in-place operation.")
                check_inplace(t)
        for t in dirty:
            t._vc[0] += 1

    new_outputs = []
    out_meta = []
    for k, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            new_outputs.append(o)
            out_meta.append(None)
            continue
        d = o._data
        out_meta.append((d.shape, d.dtype))
        oid = id(o)
        differentiable = (executable and d.dtype.kind in "fc"
                          and (not non_diff_ids or oid not in non_diff_ids))
        if not differentiable and executable:
            ctx.__dict__.setdefault("_nondiff_outs", set()).add(k)
        if dirty_ids and oid in dirty_ids:
            if differentiable:
                rebase_history(o, ctx)
                if o._base is None:
                    o._output_nr = k
            new_outputs.append(o)
            continue
        is_input = False
        for a in tensor_args:
            if a is o:
                is_input = True
                break
        if is_input:
            if uses_setup_context and executable and any(t is o for t in ctx.to_save):
                raise RuntimeError(
                    "An input that has been returned as-is as output is being saved for "
                    "backward. This is not supported if you override setup_context. You should "
                    "return and save a view of the input instead, e.g. with x.view_as(x) or "
                    "setup ctx inside the forward function itself.")
            if _tls.grad_enabled:
                # torch returns a view of the input (view_as(self)), never the input itself;
                # under no_grad a plain alias.
                _tls.grad_enabled = False
                try:
                    o = o.view_as(o)
                finally:
                    _tls.grad_enabled = True
            else:
                o = o.detach()
        elif not differentiable and o._rg:
            o = o.detach()
        if differentiable:
            o._rg = True
            o._grad_fn = ctx
            o._output_nr = k
        if o._base is not None:
            # torch's IN_CUSTOM_FUNCTION creation meta: writing this view in place would
            # replace the custom backward (view_history.view_rebase_error)
            o._extras()["creation"] = "custom"
        new_outputs.append(o)

    ctx._n_outputs = len(outputs)
    ctx._out_meta = out_meta
    if executable:
        ctx._meta = tuple([(a._data.shape, a._data.dtype) if e is not None else None
                           for a, e in zip(tensor_args, ctx._next)])

    to_save = ctx.to_save
    if to_save:
        saved = []
        for t in to_save:
            if t is None:
                saved.append(None)
                continue
            k = -1
            for j, o in enumerate(outputs):
                if o is t:
                    k = j
                    break
            if k >= 0 and new_outputs[k] is t and t._grad_fn is ctx and t._base is None:
                # An output of this node: saved without a reference back to it.
                saved.append(SavedTensor(t, True, k))
            else:
                saved.append(SavedTensor(t))
        ctx._saved = tuple(saved)
    return tuple(new_outputs)


def run_jvp(ctx, tangents):
    """Call the Function's ``jvp`` with `tangents` (one per positional argument).

    Returns one output tangent (or None) per output of the Function. For the forward-AD
    machinery; see the module docstring for the contract.
    """
    cls = ctx._forward_cls
    if not _is_overridden(cls, "jvp"):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")
    ctx.__dict__["_jvp_running"] = True
    prev = _tls.grad_enabled
    try:
        res = cls.jvp(ctx, *tangents)
    finally:
        ctx.__dict__["_jvp_running"] = False
        _tls.grad_enabled = prev
    if type(res) is not tuple:
        res = (res,)
    n = ctx._n_outputs
    if len(res) != n:
        raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of "
                           f"forward gradients (expected {n}, got {len(res)})")
    return res


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (kept for torch compatibility)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace
