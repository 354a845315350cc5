"""In-place application of any primitive (``x.mul_(y)``, ``x += y``, ``x[idx] = v``).

The out-of-place kernel computes the result (so promotion and broadcasting stay in one place),
then the result is written into ``self``'s memory, the shared version counter is bumped, and
if autograd records, a node of the same op becomes ``self``'s new history (for a view: its
base gets a CopySlices node). The value of ``self`` before the write is cloned first when the
op's backward needs it (torch's ``original_self``).

A failed check raises before anything is written: the tensor, its version and its history
are left as they were.
"""

import numpy as np

from .. import _state
from .. import _dtype
from .._tensor import Tensor
from .registry import _needs_grad, _save, _meta_for, special_hooks
from .view_history import rebase_history, view_rebase_error
from .registry import _broadcast_error

__all__ = ["apply_inplace", "apply_inplace_view", "check_inplace", "Inplace"]

_tls = _state.tls
# Set by ``_functorch.batching`` while a vmap is active: runs an in-place op whose arguments
# include a BatchedTensor, else returns NotImplemented.
vmap_inplace = None


class Inplace:
    """What special-mode observers receive as `op` for an in-place call."""

    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op


def _rg_plain(t):
    """requires_grad without regenerating a stale view's history (torch's requires_grad())."""
    return t._rg or (t._base is not None and t._base._rg)


def check_inplace(t, others=()):
    """Raise torch's errors for an in-place write to `t` (with further inputs `others`) that
    autograd cannot allow."""
    ex = t._extra
    if ex is not None and ex.get("inference") and not _tls.inference:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            "make a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details.")
    if not _tls.grad_enabled:
        return
    base = t._base
    if (base is not None and t._data.dtype.kind in "fc"
            and (_rg_plain(t) or any(isinstance(o, Tensor) and _rg_plain(o) for o in others))):
        # torch's handle_view_on_rebase: the view's creation meta (no_grad, inference mode,
        # multi-output op, custom Function) may forbid the write
        err = view_rebase_error(t, False)
        if err is not None:
            raise err
    if base is None:
        if t._rg and t._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
    elif base._rg and t._grad_fn is None and t._view_ver == t._vc[0]:
        # A current view without history of a base requiring grad, not marked at creation
        # (a raw view): refused as a no_grad view, as torch's creation meta would.
        raise RuntimeError(_NO_GRAD_VIEW)
    elif base._rg and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace to "
    "be tracked).")


def _operand_mismatch(self, others):
    """torch's error for an operand of an in-place op that does not broadcast with `self`
    (a NumPy broadcasting failure inside the kernel never reaches the user)."""
    for o in others:
        if isinstance(o, Tensor):
            try:
                np.broadcast_shapes(self._data.shape, o._data.shape)
            except ValueError:
                return _broadcast_error(self._data, o._data)
    shapes = [self._data.shape] + [o._data.shape for o in others if isinstance(o, Tensor)]
    return RuntimeError(f"shapes {[list(s) for s in shapes]} are not broadcastable")


def _cast_error(res_dtype, self_dtype):
    return RuntimeError(f"result type {_dtype.from_np(res_dtype)._legacy[:-6]} can't be cast to "
                        f"the desired output type {_dtype.from_np(self_dtype)._legacy[:-6]}")


def apply_inplace(op, self, *others, params=None):
    """Run primitive `op` with ``self`` as first input and write the result into ``self``."""
    if not isinstance(self, Tensor):
        raise TypeError(f"in-place op expects a Tensor, got {type(self).__name__}")
    if _state.special:
        if vmap_inplace is not None:
            out = vmap_inplace(op, self, others, params)
            if out is not NotImplemented:
                return out
        tokens = [h.before(Inplace(op), (self,) + others, params) for h in special_hooks]
        out = _apply_inplace(op, self, others, params)
        for h, tok in zip(special_hooks, tokens):
            h.after(Inplace(op), (self,) + others, params, out, tok)
        return out
    return _apply_inplace(op, self, others, params)


def _apply_inplace(op, self, others, params):
    check_inplace(self, others)
    grad_on = _tls.grad_enabled
    # Out-of-place result, computed without recording.
    _tls.grad_enabled = False
    try:
        res = op.impl(self, *others, params, _plain=True)
    except ValueError as e:
        if "broadcast" not in str(e):
            raise
        raise _operand_mismatch(self, others) from None
    finally:
        _tls.grad_enabled = grad_on
    if type(res) is tuple:
        res = res[0]
    rd = res._data
    sd = self._data
    if rd.dtype != sd.dtype and not _dtype.can_cast(_dtype.from_np(rd.dtype),
                                                   _dtype.from_np(sd.dtype)):
        raise _cast_error(rd.dtype, sd.dtype)
    if rd.shape != sd.shape:
        raise RuntimeError(f"output with shape {list(sd.shape)} doesn't match the broadcast "
                           f"shape {list(rd.shape)}")
    if not sd.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")

    record = False
    if grad_on:
        self_rg = _needs_grad(self)
        rgs = [self_rg] + [isinstance(o, Tensor) and _needs_grad(o) for o in others]
        record = self_rg or any(rgs)
    if record:
        old_edge = self._edge() if self_rg else None
        inputs = (self,) + tuple(others)
        if any(what == 0 and (cond is None or rgs[cond]) for what, cond in op.save):
            inputs = (self.clone(),) + tuple(others)
        # Inputs are saved before the write, as torch does: saving `self` as another input
        # (x.mul_(x)) then fails the version check in backward, exactly like torch.
        saved = _save(op, inputs, (self,), rgs) if op.save else ()
    np.copyto(sd, rd, casting="unsafe")
    self._vc[0] += 1
    if record:
        for (what, _), s in zip(op.save, saved):
            if type(what) is str and s is not None:  # the result: saved at its new version
                s._version = self._vc[0]
        edges = (old_edge,) + tuple(o._edge() if rg else None for o, rg in zip(others, rgs[1:]))
        node = op.node(edges, saved, params)
        meta = _meta_for(inputs, rd)
        if meta is not None:
            node._meta = (None,) + meta[1:]
        rebase_history(self, node)
    return self


def apply_inplace_view(op, self, params=None):
    """A metadata-only in-place op (``t_``, ``transpose_``): `self` becomes what the view op
    `op` makes of it, sharing memory, with a new version and, when recorded, ``op``'s node
    (torch's ``TBackward1`` / ``TransposeBackward1``) on top of its previous history. A view
    stays a view of the same base, its replay chain extended by `op`."""
    if not isinstance(self, Tensor):
        raise TypeError(f"in-place op expects a Tensor, got {type(self).__name__}")
    if _state.special:
        # The transforms see it as any in-place op: vmap rebinds the batched value to the
        # batched view, forward AD applies the same in-place view op to the tangent.
        if vmap_inplace is not None:
            out = vmap_inplace(op, self, (), params)
            if out is not NotImplemented:
                return out
        tokens = [h.before(Inplace(op), (self,), params) for h in special_hooks]
        out = _apply_inplace_view(op, self, params)
        for h, tok in zip(special_hooks, tokens):
            h.after(Inplace(op), (self,), params, out, tok)
        return out
    return _apply_inplace_view(op, self, params)


def _apply_inplace_view(op, self, params):
    check_inplace(self)
    new = op.call(self, params=params)
    self._data = new._data
    if self._base is not None:
        self._view = new._view
    if _tls.grad_enabled and new._grad_fn is not None:
        self._grad_fn = new._grad_fn
        self._output_nr = new._output_nr
        self._rg = True
    self._vc[0] += 1
    if self._base is not None:
        self._view_ver = self._vc[0]   # its history was just set, not made stale
    return self
