"""``device``: ndgrad computes on the CPU only; the object exists so torch code that names
devices runs unchanged. Also the default device (``set_default_device``), which can only be
the CPU in practice: any other raises, as torch's CPU build does, where a tensor is made.

The meta device is here too: a meta tensor is a Tensor whose ``_data`` is a :class:`MetaArray`,
a read-only zero-strided view of one zero with the tensor's shape and dtype (no storage). What
makes one: ``Tensor.to("meta")``, ``Module.to("meta")``, ``empty/zeros/ones/full(...,
device="meta")``; ``Module.to_empty(device="cpu")`` gives real (uninitialised) memory back.
Reading data (``item``, ``tolist``, ``numpy``, ``to("cpu")``) raises torch's errors; printing
shows ``tensor(..., device='meta', size=...)``. Invariant: only these paths make a MetaArray;
ops on meta tensors are not shape-only (see docs/func.md, known gaps)."""

import numpy as np

__all__ = ["device", "set_default_device", "get_default_device"]

# torch's device types, in the order its error message lists them.
_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
          "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
          "privateuseone")
# Device types whose use raises torch's "not compiled with ... enabled" AssertionError.
_NOT_COMPILED = {"cuda": "CUDA", "xpu": "XPU", "hip": "CUDA"}


class device:
    """A compute device. Only ``cpu`` exists; other types raise when tensors are moved there."""

    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        if ":" in type:
            type, _, idx = type.partition(":")
            index = int(idx)
        if type not in _TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of "
                               f"device string: {type}")
        self.type = type
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


cpu = device("cpu")
meta = device("meta")


class MetaArray(np.ndarray):
    """The data of a meta tensor: shape, dtype and strides, no storage (all zero strides)."""


def meta_array(shape, dtype):
    return np.broadcast_to(np.zeros((), dtype), tuple(shape)).view(MetaArray)


def is_meta_array(a):
    return type(a) is MetaArray


_default = None


def set_default_device(d):
    """``torch.set_default_device``: later factory calls without ``device=`` use `d` (None or
    the CPU; another device makes them raise, as torch's CPU build does)."""
    global _default
    _default = None if d is None else (d if isinstance(d, device) else device(d))


def get_default_device():
    return _default if _default is not None else cpu


def check_device(d, meta_ok=False):
    """Raise for a device ndgrad cannot use (anything but the CPU, and the meta device where
    `meta_ok`); None means the default. Returns True for the meta device."""
    if d is None:
        d = _default
        if d is None:
            return None
    d = device(d) if not isinstance(d, device) else d
    if d.type == "cpu":
        return None
    if d.type == "meta" and meta_ok:
        return True
    if d.type in _NOT_COMPILED:
        raise AssertionError(f"Torch not compiled with {_NOT_COMPILED[d.type]} enabled")
    raise RuntimeError(f"ndgrad runs on the CPU only; cannot use device '{d}'")
