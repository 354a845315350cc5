"""ndgrad.save / ndgrad.load in a safe format: a NumPy ``.npz`` archive plus a JSON structure.

What a file holds: one array per distinct tensor (``t0``, ``t1``, ...), and ``__ndgrad__``, the
UTF-8 JSON description of the saved object as a uint8 array. The JSON encodes dicts (with
their key types, and OrderedDict kept as such), lists, tuples, ``torch.Size``, dtypes, ints,
floats (inf/nan included), complex numbers, strings, bools and None; tensors are references to
the arrays with their ``requires_grad`` flag and whether they were ``nn.Parameter``s. A tensor
stored twice in the object is stored once and loads back as one tensor.

Loading never executes code: the archive is read with ``allow_pickle=False`` and the JSON is
interpreted by a fixed decoder. Anything else (a torch pickle, a corrupt archive, a missing
array) raises a RuntimeError before any object is returned, so nothing is partially loaded.
"""

import io
import json
import os
import zipfile
from collections import OrderedDict

import numpy as np

__all__ = ["save", "load"]

_FORMAT = "ndgrad.save"
_VERSION = 1
_STRUCT_KEY = "__ndgrad__"


def _contiguous(a):
    # (np.ascontiguousarray would turn a 0-d array into a 1-d one)
    return a if a.flags.c_contiguous else a.copy(order="C")


class _Encoder:
    def __init__(self):
        self.arrays = {}
        self.ids = {}

    def tensor(self, t):
        key = id(t)
        name = self.ids.get(key)
        if name is None:
            name = f"t{len(self.arrays)}"
            self.ids[key] = name
            self.arrays[name] = _contiguous(t._data)
        out = {"T": name}
        if t.requires_grad:
            out["rg"] = True
        if type(t).__name__ == "Parameter":
            out["param"] = True
        return out

    def enc(self, obj):
        from ._dtype import dtype as _dtype_cls
        from ._size import Size
        from ._tensor import Tensor
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return obj
        if isinstance(obj, float):
            if obj != obj or obj in (float("inf"), float("-inf")):
                return {"F": repr(obj)}
            return obj
        if isinstance(obj, Tensor):
            return self.tensor(obj)
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind not in "biufc":
                raise TypeError(f"ndgrad.save cannot store a NumPy array of dtype {obj.dtype}")
            name = f"t{len(self.arrays)}"
            self.arrays[name] = _contiguous(obj)
            return {"A": name}
        if isinstance(obj, np.generic):
            return self.enc(obj.item())
        if isinstance(obj, complex):
            return {"C": [obj.real, obj.imag]}
        if isinstance(obj, _dtype_cls):
            return {"D": str(obj)}
        if isinstance(obj, Size):
            return {"S": list(obj)}
        if isinstance(obj, OrderedDict):
            return {"O": [[self.enc(k), self.enc(v)] for k, v in obj.items()]}
        if isinstance(obj, dict):
            return {"M": [[self.enc(k), self.enc(v)] for k, v in obj.items()]}
        if isinstance(obj, tuple):
            return {"U": [self.enc(v) for v in obj]}
        if isinstance(obj, list):
            return [self.enc(v) for v in obj]
        raise TypeError(f"ndgrad.save can store tensors, numbers, strings, bools, None, dtypes "
                        f"and dicts, lists and tuples of them; got an object of type "
                        f"{type(obj).__module__}.{type(obj).__qualname__}")


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Save ``obj`` (a tensor, a state dict, or nested containers of them) to ``f``.

    ``f`` is a path or a writable binary file object. The file is a NumPy ``.npz`` archive; no
    Python objects are pickled.

    Example::

        >>> ndgrad.save({"w": ndgrad.ones(2), "step": 3}, "ckpt.pt")
        >>> ndgrad.load("ckpt.pt")
        {'w': tensor([1., 1.]), 'step': 3}
    """
    encoder = _Encoder()
    structure = {"format": _FORMAT, "version": _VERSION, "obj": encoder.enc(obj)}
    text = json.dumps(structure, allow_nan=False)
    arrays = dict(encoder.arrays)
    arrays[_STRUCT_KEY] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    if isinstance(f, (str, os.PathLike)):
        # write to an open handle: np.savez would append ".npz" to a bare file name
        with open(f, "wb") as fh:
            np.savez(fh, **arrays)
    else:
        np.savez(f, **arrays)


def _fail(f, why):
    name = f if isinstance(f, (str, os.PathLike)) else type(f).__name__
    return RuntimeError(f"ndgrad.load: {name!s} is not a valid file written by ndgrad.save "
                        f"({why}). Files written by torch.save are pickles and are not loaded: "
                        f"loading never executes code.")


class _Decoder:
    def __init__(self, arrays, f):
        self.arrays = arrays
        self.f = f
        self.tensors = {}

    def tensor(self, spec, name):
        from ._tensor import Tensor
        if not isinstance(name, str) or name not in self.arrays:
            raise _fail(self.f, f"missing array {name!r}")
        key = (name, bool(spec.get("rg")), bool(spec.get("param")))
        t = self.tensors.get(key)
        if t is not None:
            return t
        arr = self.arrays[name]
        if spec.get("param"):
            try:
                from .nn import Parameter
            except ImportError:
                Parameter = None
            if Parameter is not None:
                t = Parameter(Tensor(arr), requires_grad=bool(spec.get("rg")))
        if t is None:
            t = Tensor(arr)
            if spec.get("rg"):
                t.requires_grad_(True)
        self.tensors[key] = t
        return t

    def dec(self, node):
        if node is None or isinstance(node, (bool, str, int, float)):
            return node
        if isinstance(node, list):
            return [self.dec(v) for v in node]
        if not isinstance(node, dict) or len(node) == 0:
            raise _fail(self.f, "unexpected structure entry")
        if "T" in node:
            return self.tensor(node, node["T"])
        tag = next((k for k in node if k in ("A", "F", "C", "D", "S", "O", "M", "U")), None)
        val = node.get(tag)
        if tag == "A":
            if not isinstance(val, str) or val not in self.arrays:
                raise _fail(self.f, f"missing array {val!r}")
            return self.arrays[val]
        if tag == "F" and val in ("inf", "-inf", "nan"):
            return float(val)
        if tag == "C":
            return complex(float(val[0]), float(val[1]))
        if tag == "D":
            from . import _dtype
            name = str(val).replace("torch.", "")
            d = getattr(_dtype, name, None)
            if not isinstance(d, _dtype.dtype):
                raise _fail(self.f, f"unknown dtype {val!r}")
            return d
        if tag == "S":
            from ._size import Size
            return Size(int(v) for v in val)
        if tag in ("O", "M"):
            items = [(self._key(self.dec(k)), self.dec(v)) for k, v in val]
            return OrderedDict(items) if tag == "O" else dict(items)
        if tag == "U":
            return tuple(self.dec(v) for v in val)
        raise _fail(self.f, "unexpected structure entry")

    def _key(self, k):
        if isinstance(k, list):
            raise _fail(self.f, "a list cannot be a dict key")
        return k


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load an object written by :func:`save` from a path or a readable binary file object.

    ``map_location`` and ``weights_only`` are accepted for compatibility (everything loads on
    the CPU, and loading is always restricted to data). Raises RuntimeError for a file that is
    not a complete ndgrad archive; nothing is returned or modified in that case.
    """
    try:
        if isinstance(f, (str, os.PathLike)):
            with open(f, "rb") as fh:
                data = fh.read()
        else:
            data = f.read()
    except OSError:
        raise
    if not isinstance(data, (bytes, bytearray)):
        raise _fail(f, "the file object did not return bytes")
    if not data.startswith(b"PK"):
        raise _fail(f, "not a zip archive")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, KeyError) as e:
        raise _fail(f, f"unreadable archive: {e}") from None
    raw = arrays.pop(_STRUCT_KEY, None)
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
        raise _fail(f, "no ndgrad structure record")
    try:
        structure = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _fail(f, f"corrupt structure record: {e}") from None
    if (not isinstance(structure, dict) or structure.get("format") != _FORMAT
            or "obj" not in structure):
        raise _fail(f, "no ndgrad structure record")
    if structure.get("version") != _VERSION:
        raise _fail(f, f"unsupported format version {structure.get('version')!r}")
    try:
        return _Decoder(arrays, f).dec(structure["obj"])
    except RuntimeError:
        raise
    except (TypeError, ValueError, KeyError, IndexError) as e:
        raise _fail(f, f"corrupt structure record: {e}") from None
