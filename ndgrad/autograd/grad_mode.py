"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local, each a
context manager and a decorator, generator functions included)."""

import functools
import inspect
import warnings

from .. import _state
from .._ops.registry import special_hooks
from .._tensor import Tensor

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled", "is_view_replay_enabled",
           "_force_original_view_tracking", "is_multithreading_enabled",
           "_unsafe_preserve_version_counter"]

_tls = _state.tls


def is_grad_enabled():
    """True when operations record history for autograd on this thread."""
    return _tls.grad_enabled


def is_inference_mode_enabled():
    return _tls.inference


def is_view_replay_enabled():
    """True when in-place writes through views regenerate the views' own grad_fns."""
    return _tls.view_replay


_CLASS_DECORATION_WARNING = (
    "Decorating classes is deprecated and will be disabled in future versions. You should only "
    "decorate functions or methods. To preserve the current behavior of class decoration, you "
    "can directly decorate the `__init__` method and nothing else.")


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generator functions)."""

    def __call__(self, func):
        if inspect.isclass(func):
            # torch still accepts it, with a warning: the class is built inside the mode
            # (its methods are not decorated)
            warnings.warn(_CLASS_DECORATION_WARNING, FutureWarning, stacklevel=2)
            cls = func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return decorated

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def generator(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as e:
                        with self.clone():
                            response = gen.throw(e)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as e:
                return e.value
        return generator

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """A mode that also decorates without parentheses: ``@no_grad`` as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable gradient recording on this thread."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _tls.grad_enabled
        _tls.grad_enabled = False

    def __exit__(self, *exc):
        _tls.grad_enabled = self.prev


class enable_grad(_NoParamDecoratorContextManager):
    """Enable gradient recording on this thread (inside no_grad)."""

    def __enter__(self):
        self.prev = _tls.grad_enabled
        _tls.grad_enabled = True

    def __exit__(self, *exc):
        _tls.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off; takes effect at once, and as a context manager restores it."""

    def __init__(self, mode):
        if type(mode) is not bool:
            raise TypeError("set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self.prev = _tls.grad_enabled
        self.mode = mode
        _tls.grad_enabled = mode

    def __enter__(self):
        _tls.grad_enabled = self.mode

    def __exit__(self, *exc):
        _tls.grad_enabled = self.prev

    def __call__(self, func):
        # as a decorator the mode applies inside the function only: construction set it,
        # so put the caller's back (torch does the same)
        _tls.grad_enabled = self.prev
        return super().__call__(func)

    def clone(self):
        return self.__class__(self.mode)


class _force_original_view_tracking(_DecoratorContextManager):
    """Turn view replay on or off: as torch's, it takes effect at construction (so it also
    works as a plain call) and, used as a context manager, restores the previous state."""

    def __init__(self, mode):
        self.prev = _tls.view_replay
        self.mode = mode
        _tls.view_replay = bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _tls.view_replay = self.prev

    def __call__(self, func):
        # decorating: the switch holds inside the function only
        _tls.view_replay = self.prev
        return super().__call__(func)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and tensors created inside are inference tensors: using them later in
    recorded computations or updating them in place outside inference mode raises."""

    def __init__(self, mode=True):
        self.mode = mode

    def __new__(cls, mode=True):
        if isinstance(mode, bool) or mode is None:
            return super().__new__(cls)
        # used as @inference_mode without parentheses
        return cls()(mode)

    def __enter__(self):
        self.prev = (_tls.grad_enabled, _tls.inference)
        if self.mode:
            _install_marker()
            _tls.grad_enabled = False
            _tls.inference = True
            # Ops take the dispatcher's slow path while inside, so their outputs get marked.
            # (counted per thread too, so that a backward can undo a mode a hook left open)
            _state.enter_special()
            _tls.inference_specials += 1
        else:
            _tls.inference = False

    def __exit__(self, *exc):
        prev = self.prev  # an exit without an enter raises here (AttributeError), changing nothing
        if self.mode:
            _state.exit_special()
            _tls.inference_specials -= 1
        _tls.grad_enabled, _tls.inference = prev

    def clone(self):
        return self.__class__(self.mode)


class _InferenceMarker:
    """Marks the new tensors made by ops run inside inference_mode as inference tensors."""

    def before(self, op, args, params):
        return None

    def after(self, op, args, params, outputs, token):
        if not _tls.inference:
            return
        for o in (outputs if isinstance(outputs, tuple) else (outputs,)):
            if not hasattr(o, "_extras"):
                continue
            # as torch: an in-place op keeps its tensor's kind, a view has its base's kind;
            # only new tensors made inside the mode are inference tensors
            if any(o is a for a in args):
                continue
            base = o._base
            if base is not None and not base.is_inference():
                # a view of a normal tensor stays normal (its creation meta "inference",
                # set when it was made, refuses an in-place write outside the mode)
                continue
            o._extras()["inference"] = True


_marker = None


def _install_marker():
    global _marker
    if _marker is None:
        _marker = _InferenceMarker()
        special_hooks.append(_marker)


def is_multithreading_enabled():
    return _tls.multithreading


class set_multithreading_enabled(_DecoratorContextManager):
    """torch's switch for multithreaded backward: it only matters with accelerator devices,
    so here it is remembered (per thread) and the backward always runs on the calling thread.
    As torch's, it takes effect at construction and restores the previous value on exit."""

    def __init__(self, mode):
        self.prev = _tls.multithreading
        self.mode = mode
        _tls.multithreading = bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _tls.multithreading = self.prev

    def clone(self):
        return self.__class__(self.mode)


class _unsafe_preserve_version_counter(_DecoratorContextManager):
    """Hide in-place writes from autograd: the version counters of `tensors` (a tensor or a
    tuple of them) read at construction are put back on exit, whatever happened inside (an
    exception included). As torch warns: the saved-tensor checks then cannot see the writes."""

    def __init__(self, tensors):
        self.tensors = (tensors,) if isinstance(tensors, Tensor) else tensors
        if not isinstance(self.tensors, tuple):
            raise AssertionError("Expected tensors to be a tuple")
        self.prev_versions = tuple(t._version for t in self.tensors)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        for t, v in zip(self.tensors, self.prev_versions):
            t._vc[0] = v  # the counter is shared with t's views, as torch's is
    # no clone(): as torch's, used as a decorator it fails when the function is called
