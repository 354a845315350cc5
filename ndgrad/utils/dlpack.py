"""DLPack exchange, through NumPy's DLPack support: ``to_dlpack`` / ``from_dlpack`` and the
``Tensor.__dlpack__`` / ``__dlpack_device__`` protocol, so tensors move to and from torch, NumPy
and any other DLPack library without a copy.

Invariants: exported and imported tensors share memory with their source; a capsule can be
consumed once; a tensor that requires grad is not exported (as in torch). A read-only array
(e.g. an expanded tensor's broadcast view) cannot be signalled as read-only through an
unversioned capsule, so it is exported as a copy.
"""

import numpy as np

from .._tensor import Tensor

__all__ = ["to_dlpack", "from_dlpack"]

_CPU = 1  # DLPack's kDLCPU


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if dl_device is not None and tuple(dl_device)[0] != _CPU:
        raise BufferError(f"ndgrad tensors are on the CPU; cannot export to device "
                          f"{tuple(dl_device)}")
    arr = self._data
    kwargs = {} if max_version is None else {"max_version": max_version, "copy": copy}
    try:
        return arr.__dlpack__(**kwargs)
    except BufferError:
        if arr.flags.writeable:
            raise
        return np.array(arr).__dlpack__(**kwargs)


def _dlpack_device(self):
    return (_CPU, 0)


Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device


class _Capsule:
    """A bare DLPack capsule presented through the protocol NumPy reads."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (_CPU, 0)


def to_dlpack(tensor):
    """A DLPack capsule sharing `tensor`'s memory (consumable once)."""
    return tensor.__dlpack__()


def from_dlpack(ext_tensor):
    """A tensor sharing memory with `ext_tensor`: an object with ``__dlpack__`` (a torch
    tensor, a NumPy array, ...) or a DLPack capsule."""
    from .._creation import _finish
    if hasattr(ext_tensor, "__dlpack__"):
        device = ext_tensor.__dlpack_device__()
        if int(device[0]) != _CPU:
            raise RuntimeError(f"ndgrad runs on the CPU only; cannot import a tensor on DLPack "
                               f"device {tuple(int(d) for d in device)}")
        source = ext_tensor
    else:
        source = _Capsule(ext_tensor)
    try:
        arr = np.from_dlpack(source)
    except (TypeError, ValueError, BufferError) as e:
        if source is ext_tensor:
            raise RuntimeError(f"from_dlpack could not import the tensor: {e}") from None
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor "
                           "capsules can be consumed only once, so you might have already "
                           "constructed a tensor from it once.") from None
    return _finish(arr)
