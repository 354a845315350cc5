"""``torch.jit``: what libraries probe for, answered eagerly (ndgrad has no TorchScript).

Libraries call ``torch.jit`` at import time: decorate helpers with ``script`` / ``ignore`` /
``unused``, branch on ``is_scripting()``, subclass or test ``ScriptModule``. ndgrad runs all
code eagerly, so:

- ``script(obj)`` and ``trace(obj, example_inputs)`` return `obj` itself (torch returns a
  ScriptFunction / ScriptModule computing the same values; the decision is in
  docs/decisions.md: calling the result gives torch's numbers, but it has no ``.graph``,
  ``.code`` or ``.save``);
- ``is_scripting()`` and ``is_tracing()`` are False, as in eager torch;
- ``ignore``, ``unused``, ``export``, ``interface``, ``script_if_tracing``, ``script_method``
  return what they decorate; ``annotate`` and ``Attribute`` return the value; ``Final`` is
  ``typing.Final``;
- ``fork`` runs the function at once and returns a completed ``Future``; ``wait`` returns its
  value;
- ``freeze`` / ``optimize_for_inference`` return the module (torch's error when it is not a
  module, or not in eval mode for ``freeze``); the fuser switches are context managers doing
  nothing; ``save`` calls the module's own ``save`` (torch's AttributeError for a plain
  module); ``load`` raises torch's ValueError for a missing file and a RuntimeError naming the
  gap for a TorchScript archive.
"""

import builtins
import contextlib
import os
import typing
import warnings

from ..futures import Future
from ..nn.modules.module import Module

__all__ = ["Attribute", "CompilationUnit", "Error", "Final", "Future", "ScriptFunction",
           "ScriptModule", "RecursiveScriptModule", "TracedModule", "TopLevelTracedModule",
           "ScriptWarning", "TracerWarning", "TracingCheckError", "annotate",
           "enable_onednn_fusion", "export", "fork", "freeze", "fuser", "ignore", "interface",
           "is_scripting", "is_tracing", "isinstance", "load", "onednn_fusion_enabled",
           "optimize_for_inference", "optimized_execution", "save", "script",
           "script_if_tracing", "script_method", "set_fusion_strategy", "strict_fusion",
           "trace", "trace_module", "unused", "wait"]

Final = typing.Final


class Error(Exception):
    """torch.jit.Error (an Exception, not a RuntimeError, as in torch)."""


class ScriptWarning(Warning):
    pass


class TracerWarning(Warning):
    pass


class TracingCheckError(Exception):
    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        super().__init__(f"Tracing failed sanity checks!\n{extra_msg or ''}"
                         f"{graph_diff_error or ''}{tensor_compare_error or ''}")


class ScriptModule(Module):
    """torch's base class of compiled modules. ndgrad's ``script`` never makes one, so
    ``isinstance(m, ScriptModule)`` is False for every module (as for an eager module in torch);
    subclassing it gives an ordinary Module."""


class RecursiveScriptModule(ScriptModule):
    pass


class TracedModule(ScriptModule):
    pass


class TopLevelTracedModule(TracedModule):
    pass


class ScriptFunction:
    """torch's compiled function type; ndgrad's ``script`` returns the function itself."""


class CompilationUnit:
    def __init__(self, lang=None, _frames_up=0):
        raise RuntimeError("torch.jit.CompilationUnit compiles TorchScript source; ndgrad has "
                           "no TorchScript compiler (write the functions in Python)")


def is_scripting():
    """False: ndgrad code always runs eagerly (torch answers False outside TorchScript)."""
    return False


def is_tracing():
    """False: ndgrad never traces through ``torch.jit.trace``."""
    return False


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Returns `obj` unchanged: a function or module runs eagerly with torch's numbers."""
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with "
                      "torch.jit.optimized_execution()` instead", FutureWarning, stacklevel=2)
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Returns `func` unchanged (a traced function computes what `func` computes on the
    example's shapes; the eager function computes it on every shape)."""
    if not callable(func):
        raise RuntimeError(f"Type '{type(func)}' cannot be traced. Only Tensors and (possibly "
                           "nested) Lists, Dicts, and Tuples of Tensors can be traced")
    return func


def trace_module(mod, inputs, *args, **kwargs):
    """Returns the module unchanged (see :func:`trace`)."""
    if not builtins.isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    return mod


def ignore(drop=False, **kwargs):
    """``@ignore`` / ``@ignore(drop=True)``: returns the function (eager code calls it)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """Returns `fn` (it only matters to the TorchScript compiler)."""
    return fn


def export(fn):
    """Returns `fn` (it only matters to the TorchScript compiler)."""
    return fn


def interface(obj):
    """Returns the class (TorchScript interfaces are ordinary classes in eager code)."""
    return obj


def script_if_tracing(fn):
    """Returns `fn` (ndgrad never traces)."""
    return fn


def script_method(fn):
    """Returns `fn`."""
    return fn


def annotate(the_type, the_value):
    """Returns `the_value` (the type is for the TorchScript compiler)."""
    return the_value


def Attribute(value, type):  # noqa: N802  (torch's name)
    """Returns `value` (the type is for the TorchScript compiler)."""
    return value


def fork(func, *args, **kwargs):
    """Runs ``func(*args, **kwargs)`` now; a completed Future of its result (or exception)."""
    fut = Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as e:  # noqa: BLE001  (raised again by wait(), as torch does)
        fut.set_exception(e)
    return fut


def wait(future):
    """The value of a Future from :func:`fork`."""
    return future.wait()


def _require_module(mod, what):
    if not builtins.isinstance(mod, Module):
        raise RuntimeError(f"{what} expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Returns the module (already as fast as it gets eagerly); torch's errors otherwise."""
    _require_module(mod, "Freezing")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    """Returns the module in eval mode."""
    _require_module(mod, "optimize_for_inference")
    return mod.eval()


def save(m, f, _extra_files=None):
    """Calls ``m.save`` as torch does (AttributeError for a plain module, as in torch)."""
    return m.save(f) if _extra_files is None else m.save(f, _extra_files=_extra_files)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """torch's ValueError for a missing file; TorchScript archives cannot be run by ndgrad."""
    if builtins.isinstance(f, (str, os.PathLike)) and not os.path.exists(f):
        raise ValueError(f"The provided filename {os.fspath(f)} does not exist")
    if builtins.isinstance(f, (str, os.PathLike)) and os.path.isdir(f):
        raise ValueError(f"The provided filename {os.fspath(f)} is a directory")
    raise RuntimeError("ndgrad cannot load TorchScript archives (torch.jit.load): they hold "
                       "compiled TorchScript code; save the state_dict with torch.save instead")


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """A context doing nothing (there is no graph executor to switch)."""
    yield


@contextlib.contextmanager
def fuser(name):
    """A context doing nothing (no fuser); torch's error for an unknown fuser name."""
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002 (torch's)
    yield


class strict_fusion:  # noqa: N801  (torch's name)
    """A context doing nothing outside TorchScript (as in eager torch)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def set_fusion_strategy(strategy):
    """Accepts torch's strategy list; returns the previous one (there is no fuser)."""
    global _fusion_strategy
    previous, _fusion_strategy = _fusion_strategy, list(strategy)
    return previous


_fusion_strategy = [("STATIC", 2), ("DYNAMIC", 10)]


def enable_onednn_fusion(enabled):
    """Does nothing (no oneDNN graph fuser)."""


def onednn_fusion_enabled():
    return False


def _check_container_args(target_type):
    origin = typing.get_origin(target_type)
    if target_type in (list, dict, tuple):
        raise RuntimeError(f"Attempted to use {target_type.__name__} without a contained "
                           f"type. Please add a contained type, e.g. {target_type.__name__}[int]")
    return origin


def isinstance(obj, target_type):  # noqa: A001  (torch's name)
    """``isinstance`` with typing's containers (``List[int]``, ``Dict[str, Tensor]``,
    ``Optional[T]``, ``Tuple[...]``), checked element by element as torch does eagerly."""
    origin = _check_container_args(target_type)
    args = typing.get_args(target_type)
    if origin is None:
        return builtins.isinstance(obj, target_type)
    if origin is typing.Union:
        return any(isinstance(obj, t) for t in args)
    if origin is list:
        return builtins.isinstance(obj, list) and all(isinstance(x, args[0]) for x in obj)
    if origin is dict:
        return builtins.isinstance(obj, dict) and all(
            isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        return (builtins.isinstance(obj, tuple) and len(obj) == len(args)
                and all(isinstance(x, t) for x, t in zip(obj, args)))
    return builtins.isinstance(obj, origin)
