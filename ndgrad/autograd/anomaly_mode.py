"""Anomaly detection: where in the forward pass did a failing backward node come from?

While on (``detect_anomaly()`` / ``set_detect_anomaly(True)``) every node records the Python
stack of the forward call that created it; an error raised while running a node is preceded
by torch's warning "Error detected in MulBackward0. Traceback of forward call that caused the
error: ..." (the same text is attached to the exception as a note), and with ``check_nan``
a node returning NaN raises "Function 'DivBackward0' returned nan values in its 0th output.".

ndgrad additions, all opt-in:
- ``check_inf=True``: infinities count as anomalies too: backward raises for a node returning
  inf, and the forward pass raises at the first op whose output holds NaN or inf although its
  inputs were finite, naming that op (torch only ever looks at backward outputs);
- ``record_inplace=True`` (or ``set_record_inplace(True)`` on its own): each in-place op
  records the file and line that called it, and the "modified by an inplace operation" error
  names the call that bumped the version.

Off, none of this costs anything beyond the dispatcher's one read of ``_state.special``.
"""

import os
import sys
import traceback
import warnings
from collections import OrderedDict

import numpy as np

from .. import _graph_core, _state
from .._ops.registry import special_hooks
from . import engine as _engine
from .profiler import aten_name

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_record_inplace", "set_anomaly_enabled"]

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# Current settings (process-wide, as torch's anomaly mode).
_enabled = False
_check_nan = True
_check_inf = False
_record_inplace = False       # as part of anomaly mode
_record_inplace_alone = False  # set_record_inplace(True)


def is_anomaly_enabled():
    """True while anomaly detection is on."""
    return _enabled


def is_anomaly_check_nan_enabled():
    """True while anomaly detection checks backward outputs for NaN (torch's default)."""
    return _check_nan


# ------------------------------------------------------------------ stacks
def _user_stack(skip_internal=True):
    """The current Python stack as ``(file, line, function)`` tuples, outermost first, without
    ndgrad's own innermost frames. Raw tuples: cheap to take for every node; source lines are
    only read when a stack is printed."""
    f = sys._getframe(1)
    if skip_internal:
        while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
            f = f.f_back
    out = []
    while f is not None:
        code = f.f_code
        out.append((code.co_filename, f.f_lineno, code.co_name))
        f = f.f_back
    out.reverse()
    return out


def _user_stacklevel():
    """The ``stacklevel`` that makes a warning point at the first caller outside ndgrad."""
    level = 2
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
        level += 1
    return level


def _format_stack(stack):
    frames = [traceback.FrameSummary(fn, line, name) for fn, line, name in stack]
    return "".join(traceback.StackSummary.from_list(frames).format())


# ------------------------------------------------------------------ observers
_tls_nodes = __import__("threading").local()


def _running_node():
    stack = getattr(_tls_nodes, "stack", None)
    return stack[-1] if stack else None


class _AnomalyHook:
    """Dispatcher observer: stacks for new nodes, and the forward NaN/inf check."""

    def before(self, op, args, params):
        return None

    def after(self, op, args, params, outputs, token):
        outs = outputs if type(outputs) is tuple else (outputs,)
        stack = None
        parent = _running_node()
        for o in outs:
            fn = getattr(o, "_grad_fn", None)
            if fn is None:
                continue
            ex = fn._extras()
            if "stack" in ex:
                continue
            if stack is None:
                stack = _user_stack()
            ex["stack"] = stack
            if parent is not None:
                ex["parent"] = parent
        if _check_inf and parent is None:  # forward ops only, not those run by backward
            _check_forward(op, args, outs)


def _nonfinite_kind(d):
    if d.dtype.kind not in "fc" or d.size == 0:
        return None
    if np.isfinite(d).all():
        return None
    return "nan" if np.isnan(d).any() else "inf"


def _check_forward(op, args, outs):
    for i, o in enumerate(outs):
        d = getattr(o, "_data", None)
        if d is None:
            continue
        kind = _nonfinite_kind(d)
        if kind is None:
            continue
        for a in args:
            ad = getattr(a, "_data", None)
            if ad is not None and _nonfinite_kind(ad) is not None:
                return  # not the first op: its inputs already held NaN or inf
        fn = getattr(o, "_grad_fn", None)
        node = f" (grad_fn {fn.name()})" if fn is not None else ""
        raise RuntimeError(
            f"Function '{aten_name(op)}'{node} returned {kind} values in its {i}th output "
            "in the forward pass, although all its inputs were finite. (ndgrad anomaly "
            "detection with check_inf=True stops at the first op producing NaN or inf.)")


class _AnomalyObserver:
    """Engine observer: remembers the running node, checks outputs, reports errors."""

    def around(self, node, run):
        stack = getattr(_tls_nodes, "stack", None)
        if stack is None:
            stack = _tls_nodes.stack = []
        stack.append(node)
        try:
            return run()
        finally:
            stack.pop()

    def check(self, node, gx):
        if not (_check_nan or _check_inf) or type(node).__name__ == "AccumulateGrad":
            return gx
        seq = gx if isinstance(gx, (tuple, list)) else (gx,)
        for i, g in enumerate(seq):
            d = getattr(g, "_data", None)
            if d is None or d.dtype.kind not in "fc":
                continue
            if _check_nan and np.isnan(d).any():
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                                   "output.")
            if _check_inf and np.isinf(d).any():
                raise RuntimeError(f"Function '{node.name()}' returned inf values in its {i}th "
                                   "output.")
        return gx

    def on_error(self, node, exc):
        if getattr(exc, "_ndgrad_anomaly_reported", False):
            return
        text = _describe(node)
        try:
            warnings.warn(text, UserWarning, stacklevel=_user_stacklevel())
        except Warning as w:
            # warnings turned into errors: as torch, the backward's own error is what
            # propagates; the warning goes to stderr instead
            sys.stderr.write(f"{type(w).__name__}: {w}\n")
        try:
            exc._ndgrad_anomaly_reported = True
            exc.add_note(text)
        except (AttributeError, TypeError):
            pass


def _describe(node):
    ex = node._extra or {}
    stack = ex.get("stack")
    if stack is None:
        text = (f"Error detected in {node.name()}. No forward pass information available. "
                "Enable detect anomaly during forward pass for more information.")
    else:
        text = (f"Error detected in {node.name()}. Traceback of forward call that caused the "
                f"error:\n{_format_stack(stack)}")
    parent = ex.get("parent")
    while parent is not None:
        pex = parent._extra or {}
        pstack = pex.get("stack")
        if pstack is None:
            break
        text += (f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of "
                 f"forward call that induced the previous calculation:\n{_format_stack(pstack)}")
        parent = pex.get("parent")
    return text


# ------------------------------------------------------------------ in-place call sites
# id(version counter) -> (counter, {version: (op name, FrameSummary)}); the counter is held
# so its id cannot be reused while the entry lives. Bounded (least recently bumped dropped).
_inplace_sites = OrderedDict()
_MAX_COUNTERS = 4096
_MAX_VERSIONS = 16


class _InplaceRecorder:
    """Dispatcher observer recording the caller of every in-place op (nothing else)."""

    def before(self, op, args, params):
        return None

    def after(self, op, args, params, outputs, token):
        if not hasattr(op, "op") or not args:
            return
        vc = args[0]._vc
        f = sys._getframe(1)
        while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
            f = f.f_back
        if f is None:
            return
        site = traceback.FrameSummary(f.f_code.co_filename, f.f_lineno, f.f_code.co_name,
                                      lookup_line=False)
        entry = _inplace_sites.get(id(vc))
        if entry is None:
            entry = _inplace_sites[id(vc)] = (vc, {})
            if len(_inplace_sites) > _MAX_COUNTERS:
                _inplace_sites.popitem(last=False)
        else:
            _inplace_sites.move_to_end(id(vc))
        versions = entry[1]
        versions[vc[0]] = (aten_name(op), site)
        if len(versions) > _MAX_VERSIONS:
            del versions[min(versions)]


def _explain_version_error(msg, saved):
    """The version-mismatch message under anomaly mode and/or in-place recording."""
    if _enabled:
        i = msg.find(" Hint:")
        if i >= 0:
            msg = msg[:i] + (" Hint: the backtrace further above shows the operation that "
                             "failed to compute its gradient. The variable in question was "
                             "changed in there or anywhere later. Good luck!")
    entry = _inplace_sites.get(id(saved._vc))
    if entry is not None and entry[0] is saved._vc:
        versions = entry[1]
        bumps = [v for v in sorted(versions) if v > saved._version]
        if bumps:
            name, site = versions[bumps[0]]
            line = (site.line or "").strip()
            msg += (f" The in-place operation that changed it after it was saved (version "
                    f"{bumps[0] - 1} -> {bumps[0]}) was {name} at {site.filename}:{site.lineno}"
                    f" in {site.name}" + (f": {line}" if line else "") + ".")
            if len(bumps) > 1:
                later = ", ".join(f"{versions[v][0]} at {versions[v][1].filename}:"
                                  f"{versions[v][1].lineno}" for v in bumps[1:])
                msg += f" Later in-place changes: {later}."
    return msg


# SavedTensor's version check asks this module for its message while a special mode is on.
_graph_core.version_error_explainers.append(_explain_version_error)


# ------------------------------------------------------------------ switching

_hook = _AnomalyHook()
_observer = _AnomalyObserver()
_recorder = _InplaceRecorder()


def _install(obj, where, on):
    present = any(x is obj for x in where)
    if on and not present:
        where.append(obj)
        _state.enter_special()
    elif not on and present:
        where.remove(obj)
        _state.exit_special()


def _check_flags(mode, check_nan):
    """torch's argument check of ``set_anomaly_enabled`` (before any setting changes)."""
    for pos, (arg, v) in enumerate((("enabled", mode), ("check_nan", check_nan)), 1):
        if type(v) is not bool:
            raise TypeError(f"set_anomaly_enabled(): argument '{arg}' (position {pos}) must be "
                            f"bool, not {type(v).__name__}")


def _apply(mode, check_nan, check_inf, record_inplace):
    global _enabled, _check_nan, _check_inf, _record_inplace
    _check_flags(mode, check_nan)
    _enabled = bool(mode)
    _check_nan = bool(check_nan)
    _check_inf = bool(check_inf) and _enabled
    _record_inplace = bool(record_inplace) and _enabled
    hooks = special_hooks
    _install(_hook, hooks, _enabled)
    _install(_observer, _engine.node_observers, _enabled)
    _install(_recorder, hooks, _record_inplace or _record_inplace_alone)
    if not (_record_inplace or _record_inplace_alone):
        _inplace_sites.clear()


def _current():
    return (_enabled, _check_nan, _check_inf, _record_inplace)


def set_anomaly_enabled(enabled, check_nan=True):
    """torch's global switch (``torch.set_anomaly_enabled``): anomaly mode on or off, keeping
    ndgrad's opt-in check_inf / record_inplace settings only while it stays on."""
    _check_flags(enabled, check_nan)
    _apply(enabled, check_nan, _check_inf and enabled, _record_inplace and enabled)


def set_record_inplace(mode):
    """Record the file:line of every in-place op, so version-mismatch errors can name it.

    Independent of anomaly mode (and much cheaper: only in-place ops do any work). Returns the
    previous setting.
    """
    global _record_inplace_alone
    prev = _record_inplace_alone
    _record_inplace_alone = bool(mode)
    _apply(*_current())
    return prev


class _Decorating:
    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            prev = _current()
            _apply(*self._settings)
            try:
                return func(*args, **kwargs)
            finally:
                _apply(*prev)
        return wrapper


class detect_anomaly(_Decorating):
    """Context manager (and decorator) enabling anomaly detection for its block.

    Args:
        check_nan: raise when a backward node returns NaN (torch's default, True).
        check_inf: ndgrad: also raise for inf in backward, and stop the forward pass at the
            first op producing NaN or inf from finite inputs.
        record_inplace: ndgrad: version-mismatch errors name the in-place call that bumped
            the version (file and line).

    Example::

        >>> with ndgrad.autograd.detect_anomaly():
        ...     y = x / x
        ...     y.sum().backward()   # RuntimeError: Function 'DivBackward0' returned nan ...
    """

    def __init__(self, check_nan=True, *, check_inf=False, record_inplace=False):
        self._settings = (True, check_nan, check_inf, record_inplace)
        self.check_nan = check_nan
        self.check_inf = check_inf
        self.record_inplace = record_inplace
        self.prev = _current()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", UserWarning,
                      stacklevel=2)

    def __enter__(self):
        self.prev = _current()
        _apply(True, self.check_nan, self.check_inf, self.record_inplace)
        return self

    def __exit__(self, *exc):
        _apply(*self.prev)


class set_detect_anomaly(_Decorating):
    """Turn anomaly detection on or off: a plain call, a context manager or a decorator.

    ``set_detect_anomaly(mode, check_nan=True, *, check_inf=False, record_inplace=False)``;
    the keyword-only options are ndgrad's (see ``detect_anomaly``). As a context manager the
    previous settings come back on exit.
    """

    def __init__(self, mode, check_nan=True, *, check_inf=False, record_inplace=False):
        self._settings = (mode, check_nan, check_inf, record_inplace)
        self.prev = _current()
        _apply(mode, check_nan, check_inf, record_inplace)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _apply(*self.prev)
