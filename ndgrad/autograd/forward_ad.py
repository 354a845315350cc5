"""Forward-mode AD with torch.autograd.forward_ad's API: dual levels, dual tensors.

A dual tensor is a tensor with a tangent attached at the active level. Ops on dual tensors
give dual results (the machinery is in ``_forward_engine``). Only one level may be active at a
time, as in torch; exiting it drops every tangent made at it.

Example::

    >>> import ndgrad as torch
    >>> import ndgrad.autograd.forward_ad as fwAD
    >>> x, v = torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0])
    >>> with fwAD.dual_level():
    ...     y = (fwAD.make_dual(x, v) ** 2).sum()
    ...     fwAD.unpack_dual(y).tangent
    tensor(2.)
"""

from collections import namedtuple

from .. import _state
from . import _forward_engine
from .grad_mode import _DecoratorContextManager
from .._creation import empty_like as _empty_like
from .._ops.shape import ALIAS as _ALIAS, VIEW as _VIEW

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]

# The current level, -1 when none is active (torch keeps the same module global).
_current_level = -1


def enter_dual_level():
    """Enter a new forward grad level and return it (nesting is not supported)."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    new_level = _current_level + 1
    _forward_engine.activate(new_level)
    _current_level = new_level
    return new_level


def exit_dual_level(*, level=None):
    """Exit the current forward grad level, deleting every tangent made at it."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    _forward_engine.deactivate(level)
    _current_level = level - 1


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` carrying `tangent` as its forward gradient at `level`.

    The tangent is kept as is when its layout matches the primal's, copied otherwise.
    Differentiable in reverse mode (the result is a view of `tensor`).
    """
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    td, pd = tangent._data, tensor._data
    if pd.dtype.kind not in "fc":
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if td.dtype.kind not in "fc":
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if level != _current_level:
        raise RuntimeError("Invalid level given to _make_dual")
    if _forward_engine.get_tangent(tensor, level) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    if _forward_engine.get_tangent(tangent, level) is not None:
        # torch's wording (no space before the level)
        raise RuntimeError("Setting a forward grad that itself has a forward gradient at the "
                           f"same level{level} is not supported.")
    if td.shape != pd.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"{list(pd.shape)} while the given forward gradient is of size "
            f"{list(td.shape)}.")
    if pd.size > 1 and td.strides != pd.strides and \
            [s // td.itemsize for s in td.strides] != [s // pd.itemsize for s in pd.strides]:
        # A different layout: copy into the primal's layout (differentiably).
        new = _empty_like(tensor, dtype=tangent.dtype)
        new.copy_(tangent)
        tangent = new
    # The view op itself (what tensor.view(tensor.shape) runs once its size is checked),
    # straight to its kernel when forward AD is the only special mode and no failed op left
    # requires_grad flags forced: its observer has nothing to do for a primal without
    # tangent (other modes' observers see the call).
    if _state.special == 1 and not _forward_engine._open_tokens:
        dual = _VIEW.impl(tensor, pd.shape)
    else:
        dual = _VIEW.call(tensor, params=pd.shape)
    _forward_engine.set_tangent(dual, tangent, level)
    return dual


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = ("Namedtuple returned by :func:`unpack_dual`: the ``primal`` "
                              "(a view without tangent) and the ``tangent`` (or None).")


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of a dual tensor: the primal is an alias without the tangent."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if level != _current_level:
        raise RuntimeError("Invalid level given to _fw_primal")
    if _forward_engine._pending:
        _forward_engine._flush()
    if _forward_engine._deferred:
        _forward_engine._resolve_deferred(strict=True)
    tan = _forward_engine.get_tangent(tensor, level)
    # Straight to the kernel: the alias must not inherit the tangent.
    primal = _ALIAS.impl(tensor, None)
    _forward_engine.mark_primal(primal, level)
    return UnpackedDualTensor(primal, tan)


class dual_level(_DecoratorContextManager):
    """Context manager (and decorator) for a forward AD level; ``as`` gives the level."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()

    def clone(self):
        return self.__class__()


# Private helpers torch also has (not for users).
def _is_fwd_grad_enabled():
    return _forward_engine.fw_grad_enabled


class _set_fwd_grad_enabled(_DecoratorContextManager):
    """Switch tangent propagation off (or on) from construction until exit."""

    def __init__(self, mode):
        self.prev = _forward_engine.fw_grad_enabled
        self.mode = bool(mode)
        _forward_engine.fw_grad_enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        _forward_engine.fw_grad_enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)
