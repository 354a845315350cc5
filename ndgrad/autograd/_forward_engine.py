"""The forward-mode AD engine: where tangents live and how they flow through every op.

While a dual level is active, ``_state.special`` is raised and an observer sits in
``registry.special_hooks``. After each op it looks at the inputs' tangents and, when any is
set, computes the outputs' tangents by, in this order of preference:

1. the op's own rule ``op.jvp(ctx, *tangents)`` (``ctx.inputs``, ``ctx.outputs``,
   ``ctx.params``, ``ctx.node``), declared in the op's module next to its VJP;
2. the ``linear`` flag: the op applied to the tangents (zeros for inputs without one,
   the primal value for non-differentiable inputs such as indices and masks);
3. the generic fallback, the JVP derived from the differentiable VJP ("double vjp"): with a
   dummy cotangent ``g`` that requires grad, ``gx = vjp(g)`` is linear in ``g``, so the
   gradient of ``<gx, t>`` with respect to ``g`` is ``J t``. It is right for every op whose
   VJP is written in ndgrad ops.

Tangent storage: ``t._extra["fw_grad"] = {level: (tangent, src)}``. A view's tangent is a view
of its base's tangent (``src`` is that base tangent); when the base gets a new tangent the
view's tangent is re-derived by replaying the view chain (``registry.replay_view``). In-place
ops update the existing tangent in place, as torch does, so views of it see the change; an
in-place view op (``transpose_``) applies itself to the tangent. Tensors given a tangent are
registered (weakly) and lose it when the level exits.

The raw path (ops declaring ``OpDef.jvp_raw``, see "raw fast path" below) stores its results'
tangents as ``(array, token)``: the bare array, wrapped in a Tensor (and registered) on first
read, and the level's token, a new object per activation. Such a result is not registered:
once its level exits, the token no longer matches and the entry is no tangent (dropped when
next looked at). A surviving result whose tangent was never read thus keeps the array until
it dies or is looked at again (docs/decisions.md).

Tangent computations are ordinary ndgrad ops, recorded by autograd when grad mode is on, which
gives reverse-over-forward. They run with propagation switched off (``_busy``): tangents never
carry tangents of their own level, and rules may use dual primals without recursing.
"""

import weakref

import numpy as np

from .. import _state
from .._creation import ones_like, zeros, zeros_like
from .._dtype import from_np
from .._ops import registry
from .._ops.broadcast import align_batched, reduce_grads
from .._ops.inplace import Inplace, apply_inplace_view
from .._ops.joins import stack
from .._ops.shape import CLONE
from .._tensor import Tensor, _from_array
from . import function
from ._backward import grad as autograd_grad
from .function import run_jvp

__all__ = ["activate", "deactivate", "get_tangent", "repr_suffixes", "set_tangent"]

_tls = _state.tls
_ndarray = np.ndarray
_asarray = np.asarray
_ref = weakref.ref

# The active dual level (-1: none), tensors holding a tangent at it (weak references, their
# tangents cleared on exit; see _track), and whether a tangent computation is running (no
# propagation inside one). The raw path's results are not tracked: their entries carry the
# level's token instead (a new object per activation), and an entry with another token is
# no tangent (see _entry).
_level = -1
_token = None
_live = []
_live_limit = 256  # _live is compacted when it grows past this (see _track)
_busy = False
# B while tangents carry a leading batch dimension (vectorized forward-mode Jacobian).
_batch = 0
# torch's private switch (forward_ad._set_fwd_grad_enabled): when off, ops make no tangents.
fw_grad_enabled = True


class Unbatchable(Exception):
    """Raised in batched mode by what it cannot vectorise (in-place ops, view aliasing)."""


# --------------------------------------------------------------------------- storage
def _entry(t, fw, level):
    """``fw[level]`` (`fw` is tensor `t`'s "fw_grad" dict) with its tangent as a Tensor. A
    tangent the raw path stored as a bare array, ``(array, level token)``, is wrapped on
    first read, once (later reads see the same Tensor), and `t` is tracked from then on; one
    left by an exited level (another token) is dropped here, as exiting would have."""
    entry = fw.get(level)
    if entry is not None and type(entry[0]) is _ndarray:
        if entry[1] is not _token:
            del fw[level]
            if not fw:
                del t._extra["fw_grad"]
            return None
        entry = fw[level] = (_from_array(entry[0]), None)
        _track(t)
    return entry


def get_tangent(t, level=None):
    """The tangent of `t` at `level` (the active one by default), or None."""
    if level is None:
        level = _level
    if level < 0:
        return None
    if _deferred:
        _resolve_deferred(strict=True)
    ex = t._extra
    own = None
    if ex is not None:
        fw = ex.get("fw_grad")
        if fw is not None:
            own = _entry(t, fw, level)
    base = t._base
    if base is None:
        if own is not None:
            return own[0]
        fn = t._grad_fn
        if fn is not None and fn._extra is not None:
            # A saved output unpacked for backward is a new tensor of the same value: its
            # tangent is the one the node's output had (torch saves fw_grad likewise).
            fo = fn._extra.get("fw_out")
            if fo is not None and fo[0] == level:
                return fo[1].get(t._output_nr)
        return None
    bex = base._extra
    bt = None
    if bex is not None:
        bfw = bex.get("fw_grad")
        if bfw is not None:
            entry = _entry(base, bfw, level)
            if entry is not None:
                bt = entry[0]
    if bt is None:
        return own[0] if own is not None else None
    if own is not None and own[1] is bt:
        return own[0]
    # The base got (another) tangent since this view's was made: the view's tangent is the
    # same view of the base's tangent.
    if _batch:
        raise Unbatchable("view of a dual tensor's base")
    vt = _without_propagation(registry.replay_view, t._view, bt)
    set_tangent(t, vt, level, src=bt)
    return vt


def set_tangent(t, tangent, level=None, src=None):
    """Attach `tangent` to `t` at `level` (None removes it)."""
    if level is None:
        level = _level
    ex = t._extras()
    fw = ex.get("fw_grad")
    if tangent is None:
        if fw is not None:
            fw.pop(level, None)
        return
    if fw is None:
        fw = ex["fw_grad"] = {}
    fw[level] = (tangent, src)
    _track(t)


_live_nodes = weakref.WeakSet()


def _remember_on_node(t, tangent):
    """Keep the tangent of output `t` on its grad_fn, for saved outputs unpacked later."""
    fn = t._grad_fn
    if fn is None:
        return
    ex = fn._extras()
    fo = ex.get("fw_out")
    if fo is None or fo[0] != _level:
        fo = ex["fw_out"] = (_level, {})
        _live_nodes.add(fn)
    fo[1][t._output_nr] = tangent


def mark_primal(t, level):
    """Record that view `t` has no tangent even though its base has one."""
    bt = _base_tangent(t)
    if bt is not None:
        t._extras().setdefault("fw_grad", {})[level] = (None, bt)
        _track(t)


def _base_tangent(t):
    base = t._base
    if base is None or base._extra is None:
        return None
    fw = base._extra.get("fw_grad")
    entry = _entry(base, fw, _level) if fw is not None else None
    return entry[0] if entry is not None else None


def _track(t):
    """Remember `t` for cleanup at exit. A plain weak reference, no callback (a callback per
    tensor cost a microsecond per op): dead references and repeats are dropped when the list
    doubles past what survived the last compaction, so it stays within a constant factor of
    the tensors alive with a tangent (amortised O(1) per op)."""
    _live.append(_ref(t))
    if len(_live) > _live_limit:
        _compact_live()


def _compact_live():
    global _live_limit
    seen = set()
    keep = []
    for r in _live:
        t = r()
        if t is not None and id(t) not in seen:
            seen.add(id(t))
            keep.append(r)
    _live[:] = keep
    _live_limit = max(256, 2 * len(keep))


def _without_propagation(fn, *args):
    global _busy
    prev = _busy
    _busy = True
    try:
        return fn(*args)
    finally:
        _busy = prev


def repr_suffixes(t):
    """``("tangent=...",)`` for a dual tensor's repr, as torch prints it."""
    if _level < 0:
        return ()
    tan = get_tangent(t)
    if tan is None:
        return ()
    return (f"tangent={tan}",)


Tensor._fw_repr_suffixes = repr_suffixes  # read by Tensor.__repr__ while a mode is special


# --------------------------------------------------------------------------- level switch
def activate(level):
    global _level, _token
    _level = level
    _token = object()
    function._forward_ad_hook = _function_hook
    registry.set_forward_fast(_fast_unary, _fast_binary)
    registry.special_hooks.append(_OBSERVER)
    _state.enter_special()


def deactivate(level):
    global _level, _live_limit, _token
    registry.set_forward_fast(None, None)
    try:
        registry.special_hooks.remove(_OBSERVER)
    except ValueError:
        pass
    else:
        _state.exit_special()
    for ref in list(_live):
        t = ref()
        if t is None:
            continue
        ex = t._extra
        if ex is not None:
            fw = ex.get("fw_grad")
            if fw is not None:
                fw.pop(level, None)
                if not fw:
                    del ex["fw_grad"]
    _live.clear()
    _live_limit = 256
    _undo_open_tokens()
    for node in list(_live_nodes):
        if node._extra is not None:
            node._extra.pop("fw_out", None)
    _live_nodes.clear()
    _pending.clear()
    for d in _deferred:
        if d.forced:
            for o in d.outs:
                if isinstance(o, Tensor) and o._grad_fn is not None and \
                        type(o._grad_fn)._op is d.op:
                    o._grad_fn = None
                    o._rg = False
    _deferred.clear()
    _level = -1
    _token = None


# --------------------------------------------------------------------------- observer
class JvpContext:
    """What a jvp rule gets: the primal ``inputs``, ``outputs``, ``params`` and the ``node``
    recorded for reverse mode (None when no input required grad)."""

    __slots__ = ("inputs", "node", "outputs", "params")

    def __init__(self, inputs, outputs, params, node):
        self.inputs = inputs
        self.outputs = outputs
        self.params = params
        self.node = node


def _input_tangents(args):
    tans = None
    for i, a in enumerate(args):
        if isinstance(a, Tensor) and (a._extra is not None or a._base is not None or (
                a._grad_fn is not None and a._grad_fn._extra is not None)):
            tan = get_tangent(a)
            if tan is not None:
                if tans is None:
                    tans = [None] * len(args)
                tans[i] = tan
    return tans


class _Observer:
    """Computes output tangents after every op while a dual level is active."""

    __slots__ = ()

    def before(self, op, args, params):
        if _busy or not fw_grad_enabled:
            return None
        if _open_tokens:
            _undo_open_tokens()
        if _pending:
            _flush()
        if _deferred:
            _resolve_deferred(strict=False)
        if type(op) is not Inplace:
            if op.jvp is not None or op.linear or _batch:
                return None
            return _maybe_force_record(args)
        tans = _input_tangents(args)
        if tans is None:
            return None
        if _batch:
            raise Unbatchable("in-place op")
        if op.op.view:
            return (None, tans)  # the tangent takes the same in-place view op (torch's)
        # The rule needs the value of self before the write: keep a (recorded) copy.
        old = _without_propagation(CLONE.call, args[0]) \
            if args[0]._data.dtype.kind in "fc" else args[0]
        return (old, tans)

    def after(self, op, args, params, out, token):
        global _busy
        if _busy:
            return
        if not fw_grad_enabled and type(op) is not Inplace and token is None:
            return
        if type(op) is Inplace:
            if token is None:
                return
            old, tans = token
            _busy = True
            try:
                if op.op.view:
                    if tans[0] is not None:
                        apply_inplace_view(op.op, tans[0], params)
                    return
                args = (old,) + tuple(args[1:])
                nt = compute_tangents(op.op, args, params, (out,), tans)
                nt = nt[0] if nt else None
                if nt is not None:
                    _assign_inplace(out, nt)
                    if out._grad_fn is not None and out._base is None:
                        _remember_on_node(out, get_tangent(out))
                elif tans[0] is not None:
                    tans[0].zero_()  # the write made self constant
            finally:
                _busy = False
            return
        forced = False
        if token is not None:
            if _open_tokens and _open_tokens[-1] is token:
                _open_tokens.pop()
            _undo_force(token)
            forced = True
        tans = _input_tangents(args)
        if tans is None:
            return
        outs = out if type(out) is tuple else (out,)
        for o in outs:
            if isinstance(o, Tensor) and o._data.dtype.kind in "fc":
                break
        else:
            return  # integer/bool results (comparisons, indices) carry no tangent
        if op.jvp is None and not op.linear and not _batch:
            # The generic rule runs the op's VJP, which may need facts the op's public
            # wrapper attaches to the node after this call returns: defer it (resolved before
            # the next op, or when the tangent is read).
            if forced:
                # requires_grad is right at once; grad_fn stays until the op's wrapper has
                # attached its facts to the node (cleared when the tangent is resolved).
                for o in outs:
                    if isinstance(o, Tensor) and o._grad_fn is not None:
                        o._rg = False
            d = _Deferred(op, args, params, outs, tans, forced)
            for o in _diff_outputs(op, outs):
                set_tangent(o, d, src=_base_tangent(o) if o._base is not None else None)
            _deferred.append(d)
            return
        _busy = True
        # The tangent ops take the dispatcher's fast path when this observer alone raised the
        # special counter: with _busy set it ignores them anyway (same kernels, same nodes).
        quiet = _state.special == 1 and len(registry.special_hooks) == 1 and \
            registry.vmap_dispatch is None
        if quiet:
            _state.exit_special()
        try:
            res = compute_tangents(op, args, params, outs, tans)
            _attach(op, outs, res)
        finally:
            _busy = False
            if quiet:
                _state.enter_special()


# --------------------------------------------------------------------------- raw fast path
# Unary and binary ops declaring a raw-array JVP (``OpDef.jvp_raw``) skip the observer when
# its general path would record nothing: while a level is active the dispatch code calls
# ``_fast_unary`` / ``_fast_binary`` first (``registry.set_forward_fast``), which run the
# op's kernel, then the raw rule on the arrays, and store the tangent's array in the
# output's entry with the level's token, wrapped in a Tensor only when someone reads it
# (``_entry``; see "Tangent storage" in the module docstring). Same kernels
# in the same order as the Tensor-level rule, so bitwise the same tangents
# (tests/test_forward_ad_raw.py); any other case returns NotImplemented before the op runs
# (a failing kernel included: the general path then raises torch's error).
_GENERAL = object()  # "this operand needs the general path" (see _operand_tangent)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_FAST_TYPES = registry._FAST_TYPES
_needs_grad = registry._needs_grad


def _operand_tangent(x, level, grad, dt):
    """The array of tensor `x`'s tangent for the raw path (`x` of dtype `dt`), None when it
    has none, _GENERAL when only the general path may go on: get_tangent's general lookup
    must answer (a view whose base has a tangent, a saved output's tangent kept on its node,
    a tangent still to be computed), or the tangent computation would be recorded (the
    tangent requires grad in grad mode), or the tangent has another dtype."""
    base = x._base
    if base is not None:
        bex = base._extra
        if bex is not None and "fw_grad" in bex:
            return _GENERAL
    ex = x._extra
    entry = None
    if ex is not None:
        fw = ex.get("fw_grad")
        if fw is not None:
            entry = fw.get(level)
    if entry is None:
        fn = x._grad_fn
        return None if fn is None or fn._extra is None else _GENERAL
    t = entry[0]
    if type(t) is _ndarray:  # a raw result not read yet, the common case
        if entry[1] is not _token:
            return _GENERAL  # left by an exited level (get_tangent drops it)
    elif t is None:
        return None
    elif type(t) is not Tensor or (grad and t._rg):
        return _GENERAL
    else:
        t = t._data
    return t if t.dtype is dt else _GENERAL


def _fast_unary(op, x):
    """Run unary `op` (which has a raw JVP; params None) and its tangent on arrays when the
    general path would record and convert nothing: forward AD is the only special mode, no
    tangent computation is pending, neither `x` nor its tangent needs grad, and `x` is a
    plain real float32/float64 tensor with a tangent of its dtype. The primal is the
    dispatch fast path's kernel call (``op.fast_fwd``). Otherwise NotImplemented, with
    nothing changed."""
    if _busy or _open_tokens or _pending or _deferred or not fw_grad_enabled or _batch or \
            _state.special != 1:
        return NotImplemented
    fwd = op.fast_fwd
    if fwd is None or type(x) not in _FAST_TYPES:
        return NotImplemented
    grad = _tls.grad_enabled
    # (a stale view is refreshed first, as the general path's recording does in grad mode)
    if grad and (x._rg or (x._base is not None and x._view_ver != x._vc[0] and
                           _needs_grad(x))):
        return NotImplemented
    xd = x._data
    dt = xd.dtype
    if dt is not _F32 and dt is not _F64:
        return NotImplemented
    level = _level
    tx = _operand_tangent(x, level, grad, dt)
    if tx is _GENERAL:
        return NotImplemented
    od = fwd(xd)
    if type(od) is not _ndarray:
        od = _asarray(od)
    out = _from_array(od)
    if tx is None:
        return out
    if od.dtype is not dt:
        _OBSERVER.after(op, (x,), None, out, None)
        return out
    r = op.jvp_raw(xd, tx, od)
    if r is None:
        return out
    if r is NotImplemented:
        _OBSERVER.after(op, (x,), None, out, None)
        return out
    if type(r) is not _ndarray or r.shape != od.shape or r.dtype is not dt or r is tx:
        out._extra = {"fw_grad": {level: (_tangent_tensor(r, tx, None, (x,), out, level),
                                          None)}}
        _track(out)
        return out
    # a new array of the output's layout (the common case) is kept bare, wrapped when read
    out._extra = {"fw_grad": {level: (r, _token)}}
    return out


def _fast_binary(op, a, b):
    """``_fast_unary`` for binary `op`: `a` and `b` plain real tensors of one dtype (`b` may
    be a Python float or int), with tangents of that dtype."""
    if _busy or _open_tokens or _pending or _deferred or not fw_grad_enabled or _batch or \
            _state.special != 1:
        return NotImplemented
    fwd = op.fast_fwd
    if fwd is None or type(a) not in _FAST_TYPES:
        return NotImplemented
    grad = _tls.grad_enabled
    if grad and (a._rg or (a._base is not None and a._view_ver != a._vc[0] and
                           _needs_grad(a))):
        return NotImplemented
    ad = a._data
    dt = ad.dtype
    if dt is not _F32 and dt is not _F64:
        return NotImplemented
    level = _level
    ta = _operand_tangent(a, level, grad, dt)
    if ta is _GENERAL:
        return NotImplemented
    if type(b) is float or type(b) is int:
        bd = b
        tb = None
    elif type(b) in _FAST_TYPES and not (grad and (b._rg or (
            b._base is not None and b._view_ver != b._vc[0] and _needs_grad(b)))):
        bd = b._data
        if bd.dtype is not dt:
            return NotImplemented
        tb = _operand_tangent(b, level, grad, dt)
        if tb is _GENERAL:
            return NotImplemented
    else:
        return NotImplemented
    try:
        od = fwd(ad, bd)
    except (ValueError, TypeError):
        return NotImplemented  # the general path raises torch's error
    if type(od) is not _ndarray:
        od = _asarray(od)
    if od.dtype is not dt:
        return NotImplemented
    out = _from_array(od)
    if ta is None and tb is None:
        return out
    r = op.jvp_raw(ad, bd, ta, tb, od)
    if r is None:
        return out
    if r is NotImplemented:
        _OBSERVER.after(op, (a, b), None, out, None)
        return out
    if type(r) is not _ndarray or r.shape != od.shape or r.dtype is not dt or r is ta or \
            r is tb:
        out._extra = {"fw_grad": {level: (_tangent_tensor(r, ta, tb, (a, b), out, level),
                                          None)}}
        _track(out)
        return out
    out._extra = {"fw_grad": {level: (r, _token)}}
    return out


def _tangent_tensor(r, tx, ty, args, out, level):
    """The Tensor the general path gives as tangent for the raw rule's result `r`."""
    if r is tx:  # the rule passed an input's tangent on: the output's is that Tensor
        tan = get_tangent(args[0], level)
    elif r is ty:
        tan = get_tangent(args[1], level)
    else:
        tan = _from_array(r if type(r) is _ndarray else _asarray(r))
    if tan._data.shape != out._data.shape or tan._data.dtype is not out._data.dtype:
        tan = _without_propagation(_fit, tan, out)
    return tan


def _diff_outputs(op, outs):
    diff = op.diff_outs
    return [o for k, o in enumerate(outs) if isinstance(o, Tensor) and
            (diff is None or diff[k]) and o._data.dtype.kind in "fc"]


def _attach(op, outs, res):
    diff = op.diff_outs
    for k, o in enumerate(outs):
        tan = res[k] if k < len(res) else None
        if not isinstance(o, Tensor) or (diff is not None and not diff[k]) or \
                o._data.dtype.kind not in "fc":
            continue
        if tan is None:
            set_tangent(o, None)
            continue
        tan = _fit(tan, o)
        src = _base_tangent(o) if o._base is not None else None
        set_tangent(o, tan, src=src)
        if o._grad_fn is not None and o._base is None:
            _remember_on_node(o, tan)


def _maybe_force_record(args):
    """For an op with the generic rule and inputs needing no grad: make it record a node
    anyway (tangent inputs flagged requires_grad for the call), so the op's wrapper attaches
    the facts its VJP needs. The output is detached again when its tangent is resolved."""
    if _tls.grad_enabled:
        for a in args:
            if isinstance(a, Tensor) and registry._needs_grad(a):
                return None  # a real node is recorded anyway
    tans = _input_tangents(args)
    if tans is None:
        return None
    forced = [a for a, t in zip(args, tans) if t is not None and not a._rg]
    for a in forced:
        a._rg = True
    prev = _tls.grad_enabled
    _tls.grad_enabled = True
    token = (forced, prev)
    # The dispatcher calls `after` only when the op succeeds: a failed op leaves its token
    # here, and the next hook call (or leaving the level) undoes it.
    _open_tokens.append(token)
    return token


_open_tokens = []


def _undo_force(token, grad_mode=True):
    forced_inputs, prev = token
    for a in forced_inputs:
        a._rg = False
    if grad_mode:
        _tls.grad_enabled = prev


def _undo_open_tokens():
    # Grad mode is left alone here: a no_grad block the failure propagated out of has
    # already restored its own value, which must not be overwritten.
    while _open_tokens:
        _undo_force(_open_tokens.pop(), grad_mode=False)


class _Deferred:
    """A generic-rule tangent computation waiting for the op's node facts."""

    __slots__ = ("args", "done", "forced", "op", "outs", "params", "tans")

    def __init__(self, op, args, params, outs, tans, forced):
        self.op = op
        self.args = args
        self.params = params
        self.outs = outs
        self.tans = tans
        self.forced = forced
        self.done = False


_deferred = []


class MissingFact(KeyError):
    """The VJP of an op asked for a node fact nobody attached."""


def _resolve_deferred(strict):
    items = list(_deferred)
    _deferred.clear()
    for d in items:
        if d.done:
            continue
        try:
            _resolve(d)
        except MissingFact as e:
            if strict:
                raise RuntimeError(
                    f"forward AD: the generic rule for '{d.op.name}' needs the node fact "
                    f"{e.args[0]!r}, which the op's wrapper did not attach; give the op a jvp "
                    "rule (OP.def_jvp)") from None
            _deferred.append(d)


def _resolve(d):
    global _busy
    prev = _busy
    _busy = True
    try:
        res = _fallback(d.op, d.args, d.params, d.outs, d.tans)
    finally:
        _busy = prev
    d.done = True
    if d.forced:
        for o in d.outs:
            if isinstance(o, Tensor) and o._grad_fn is not None and \
                    type(o._grad_fn)._op is d.op:
                o._grad_fn = None
                o._rg = False
    _attach(d.op, d.outs, res)


_OBSERVER = _Observer()


def _function_hook(ctx, args, outputs):
    """Tangents of a custom Function's outputs from its ``jvp`` (see function.py)."""
    global _busy
    if _busy or _level < 0:
        return
    tans = [get_tangent(a) if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tans):
        return
    if _batch:
        raise Unbatchable("custom Function")
    _busy = True
    try:
        if getattr(ctx, "materialize_grads", True):
            # torch hands zeros (not None) to jvp for tensor inputs without a tangent.
            tans = [zeros_like(a) if t is None and isinstance(a, Tensor) and
                    a._data.dtype.kind in "fc" else t for a, t in zip(args, tans)]
        res = run_jvp(ctx, tans)
        for o, tan in zip(outputs, res):
            if not isinstance(o, Tensor) or o._data.dtype.kind not in "fc":
                continue
            if tan is None:
                set_tangent(o, None)
                continue
            tan = _fit(tan, o)
            set_tangent(o, tan, src=_base_tangent(o) if o._base is not None else None)
            if o._grad_fn is not None and o._base is None:
                _remember_on_node(o, tan)
    finally:
        _busy = False


def _fit(tan, o):
    """Give a tangent its primal's shape (broadcast) and floating dtype."""
    od = o._data
    td = tan._data
    if td.dtype != od.dtype and od.dtype.kind in "fc" and not (
            td.dtype.kind == "c" and od.dtype.kind == "f"):
        tan = tan.to(from_np(od.dtype))
    shape = od.shape if not _batch else (_batch,) + od.shape
    if tan._data.shape != shape:
        tan = tan.expand(shape)
    return tan


def _assign_inplace(self, nt):
    """Make `nt` the tangent of `self` after an in-place op, updating tangents in place."""
    cur = get_tangent(self)
    if cur is not None:
        cur.copy_(nt)
        return
    if self._base is not None:
        base = self._base
        bt = zeros_like(base)
        set_tangent(base, bt)
        vt = registry.replay_view(self._view, bt)
        vt.copy_(nt)
        set_tangent(self, vt, src=bt)
        return
    set_tangent(self, _fit(nt, self))


# --------------------------------------------------------------------------- rules
def compute_tangents(op, args, params, outs, tans):
    """Output tangents (a list, None = zero) of `op` for input tangents `tans`."""
    if _batch:
        return _compute_batched(op, args, params, outs, tans)
    jvp = op.jvp
    if jvp is not None:
        node = outs[0]._grad_fn if outs and outs[0]._grad_fn is not None and \
            type(outs[0]._grad_fn)._op is op else None
        res = jvp(JvpContext(args, outs, params, node), *tans)
        return list(res) if type(res) is tuple or type(res) is list else [res]
    if op.linear:
        return _linear(op, args, params, tans, outs)
    return _fallback(op, args, params, outs, tans)


def call_op(op, args, params):
    """Run primitive `op` on `args` through its public call (any kind of op)."""
    kind = op.kind
    if kind == "unary":
        return op.call(args[0], params)
    if kind == "binary":
        return op.call(args[0], args[1], params)
    return op.call(*args, params=params)


_RESHAPES = ("view", "_reshape_alias", "_unsafe_view")


def _in_layout_of(t, a):
    """`t` (same shape as `a`) copied into `a`'s dim order (dims by decreasing stride), so that
    a reshape that is a view of `a` is a view of the result."""
    order = sorted(range(a.dim()), key=lambda d: -a._data.strides[d])
    inverse = sorted(range(len(order)), key=order.__getitem__)
    return t.permute(order).contiguous().permute(inverse)


def _linear(op, args, params, tans, outs):
    targs = []
    for a, t in zip(args, tans):
        if t is not None:
            if op.view and not t._data.flags.c_contiguous and a._data.flags.c_contiguous:
                # a view of a contiguous primal (a reshape) need not exist on a strided
                # tangent: apply it to the tangent's contiguous copy (same values)
                t = t.contiguous()
            elif op.name in _RESHAPES and t._data.strides != a._data.strides:
                # a reshape that is a view of a strided primal: the tangent (laid out
                # otherwise, e.g. batched by jacfwd) gets the primal's dim order first
                t = _in_layout_of(t, a)
            targs.append(t)
        elif isinstance(a, Tensor) and a._data.dtype.kind in "fc":
            targs.append(zeros_like(a))
        elif type(a) in (float, complex, int):
            # A number operand is a constant: its tangent is zero (dims and such live in
            # params, never in the operands).
            targs.append(type(a)(0))
        else:
            targs.append(a)
    res = call_op(op, targs, params)
    res = list(res) if type(res) is tuple else [res]
    for k, r in enumerate(res):
        node = r._grad_fn if isinstance(r, Tensor) else None
        if node is not None and type(node)._op is op:
            fill_extras(node, op, args, params, outs[k] if k < len(outs) else None)
    return res


# Per-node facts that public wrappers attach after the primitive ran (input shape, source
# dtype, cat sizes). Nodes recorded for tangents get them here; the real node's values are
# copied over once the wrapper has set them (see `_flush`).
_pending = []


def fill_extras(node, op, args, params, real_out=None):
    ex = node._extras()
    a0 = args[0] if args and isinstance(args[0], Tensor) else None
    if a0 is not None:
        if getattr(node, "_shape", None) is None:
            node._shape = a0._data.shape
        if op.name in ("real", "imag"):
            ex.setdefault("dtype", from_np(a0._data.dtype))
        else:
            ex.setdefault("dtype", a0._data.dtype)
        # The names the nn kernels use for the same facts about input 0.
        ex.setdefault("x_shape", a0._data.shape)
        ex.setdefault("x_meta", (a0._data.shape, a0._data.dtype))
        ex.setdefault("hw", a0._data.shape[2:])
    if op.name == "cat":
        ex.setdefault("sizes", [a._data.shape[params] for a in args])
    _pending.append((node, real_out))


def _flush():
    """Copy wrapper-set extras from the real nodes to the nodes made for tangents."""
    items = list(_pending)
    _pending.clear()
    for node, real_out in items:
        if real_out is None:
            continue
        real = real_out._grad_fn
        if real is None or real is node or type(real) is not type(node):
            continue
        shape = getattr(real, "_shape", None)
        if shape is not None:
            node._shape = shape
        if real._extra:
            ex = node._extras()
            for key, val in real._extra.items():
                if key in ("dtype", "sizes"):
                    ex[key] = val


# Node extras that are hooks or forward-AD state, not facts about the op call.
_NOT_FACTS = frozenset(("hooks", "pre_hooks", "tensor_pre_hooks", "retain_hooks", "metadata",
                        "fw_out", "post_acc_hooks"))


def _fallback(op, args, params, outs, tans):
    """JVP from the VJP: ``J t = d/dg <vjp(g), t>`` for a dummy cotangent g."""
    grad_on = _tls.grad_enabled
    edges = []
    saved_rgs = []
    dummy_keep = []
    real_rg = False
    for a, t in zip(args, tans):
        if not isinstance(a, Tensor):
            edges.append(None)
            saved_rgs.append(False)
            continue
        if grad_on and registry._needs_grad(a):
            edges.append(a._edge())
            saved_rgs.append(True)
            real_rg = True
        elif t is not None:
            # A stand-in edge: the vjp must compute this input's gradient.
            stand_in = Tensor(a._data)
            dummy_keep.append(stand_in)
            edges.append((stand_in._accumulator(), 0))
            saved_rgs.append(True)
        else:
            edges.append(None)
            saved_rgs.append(False)
    _tls.grad_enabled = True
    try:
        node = op.node(tuple(edges), registry._save(op, args, outs, saved_rgs)
                       if op.save else (), params)
        meta = registry._meta_for(args, outs[0]._data)
        if meta is not None:
            node._meta = meta
        real = outs[0]._grad_fn
        if real is not None and type(real)._op is op and getattr(real, "_shape", None) is not None:
            node._shape = real._shape
        if real is not None and type(real)._op is op and real._extra:
            ex = node._extras()
            for key, val in real._extra.items():
                if key not in _NOT_FACTS:
                    ex[key] = val
        fill_extras(node, op, args, params, outs[0])
        diff = op.diff_outs
        gs = []
        for k, o in enumerate(outs):
            if (diff is None or diff[k]) and o._data.dtype.kind in "fc":
                # Any cotangent works (the VJP is linear in it); ones keep formulas that take
                # log|g| (logcumsumexp) finite where zeros would not.
                gs.append(ones_like(o).requires_grad_())
            else:
                gs.append(None)
        try:
            gx = reduce_grads(node, node._apply(gs))
        except KeyError as e:
            raise MissingFact(e.args[0] if e.args else None) from None
    finally:
        _tls.grad_enabled = grad_on
    wrt = [g for g in gs if g is not None]
    pairs = [(g, t) for g, t in zip(gx, tans) if g is not None and t is not None]
    if not pairs or not wrt:
        return [None] * len(outs)
    # A graph for the tangent only when something it depends on requires grad.
    create = grad_on and (real_rg or any(t.requires_grad for t in tans if t is not None))
    ys = [g for g, _ in pairs]
    vs = [t.to(g.dtype) if t._data.dtype != g._data.dtype else t for g, t in pairs]
    keep = [y for y in ys if y.requires_grad]
    if not keep:
        return [None] * len(outs)
    vs = [v for y, v in zip(ys, vs) if y.requires_grad]
    res = autograd_grad(keep, wrt, vs, create_graph=create, allow_unused=True)
    it = iter(res)
    out = []
    for g in gs:
        out.append(next(it) if g is not None else None)
    del dummy_keep
    return out



# --------------------------------------------------------------------------- batched tangents
def _compute_batched(op, args, params, outs, tans):
    """Tangents with a leading batch dimension B: batched rules, broadcasting rules of
    elementwise ops, or the op's unbatched rule once per batch element."""
    rule = op.batched_jvp
    ctx = JvpContext(args, outs, params, None)
    if rule is not None:
        res = rule(ctx, *tans)
    elif op.kind == "unary" and (op.jvp is not None or op.linear):
        # Elementwise rules multiply t by values of the primal's shape: NumPy broadcasting
        # carries the batch dimension.
        res = op.jvp(ctx, *tans) if op.jvp is not None else call_op(op, tans, params)
    elif op.jvp is not None and (op.kind == "binary" or op.name == "where"):
        nd = outs[0]._data.ndim
        res = op.jvp(ctx, *[align_batched(t, a, nd) for t, a in zip(tans, args)])
    else:
        try:
            return _per_sample(op, args, params, outs, tans)
        except MissingFact:
            raise Unbatchable(op.name) from None
    return list(res) if type(res) is tuple or type(res) is list else [res]


def _per_sample(op, args, params, outs, tans):
    global _batch
    B = _batch
    _batch = 0
    try:
        cols = [compute_tangents(op, args, params, outs,
                                 [None if t is None else t[b] for t in tans]) for b in range(B)]
    finally:
        _batch = B
    res = []
    for k, o in enumerate(outs):
        col = [c[k] if k < len(c) else None for c in cols]
        if all(c is None for c in col):
            res.append(None)
            continue
        col = [_fit_unbatched(c, o) if c is not None else zeros(o.shape, dtype=o.dtype)
               for c in col]
        res.append(stack(col, 0))
    return res


def _fit_unbatched(t, o):
    if t._data.shape != o._data.shape:
        t = t.expand(o._data.shape)
    return t
