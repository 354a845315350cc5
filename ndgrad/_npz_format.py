"""Reading files written by earlier ndgrad versions' ``ndgrad.save``: a NumPy ``.npz``
archive of plain arrays (``t0``, ``t1``, ...) plus ``__ndgrad__``, a UTF-8 JSON description of
the saved object (dicts with their key types, OrderedDicts, lists, tuples, ``Size``, dtypes,
numbers, strings, None; tensors as references to the arrays with their ``requires_grad`` flag
and whether they were Parameters).

Reading never executes code: the archive is opened with ``allow_pickle=False`` and the JSON is
interpreted by the fixed decoder below. A damaged file raises RuntimeError before any object is
returned. ``ndgrad.save`` now writes torch's format; this module only reads.
"""

import io
import json
import os
import zipfile
from collections import OrderedDict

import numpy as np
from . import _dtype
from ._size import Size
from ._tensor import Tensor
from .nn.parameter import Parameter

__all__ = ["is_npz_checkpoint", "load_npz"]

_FORMAT = "ndgrad.save"
_VERSION = 1
_STRUCT_KEY = "__ndgrad__"


def is_npz_checkpoint(names):
    """Whether a zip archive with these member names is an ndgrad ``.npz`` checkpoint."""
    return _STRUCT_KEY + ".npy" in names


def _fail(f, why):
    name = f if isinstance(f, (str, os.PathLike)) else type(f).__name__
    return RuntimeError(f"ndgrad.load: {name!s} is not a valid ndgrad .npz checkpoint "
                        f"({why})")


class _Decoder:
    def __init__(self, arrays, f):
        self.arrays = arrays
        self.f = f
        self.tensors = {}

    def tensor(self, spec, name):
        if not isinstance(name, str) or name not in self.arrays:
            raise _fail(self.f, f"missing array {name!r}")
        key = (name, bool(spec.get("rg")), bool(spec.get("param")))
        t = self.tensors.get(key)
        if t is not None:
            return t
        arr = self.arrays[name]
        if spec.get("param"):
            t = Parameter(Tensor(arr), requires_grad=bool(spec.get("rg")))
        else:
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
            name = str(val).replace("torch.", "")
            d = getattr(_dtype, name, None)
            if not isinstance(d, _dtype.dtype):
                raise _fail(self.f, f"unknown dtype {val!r}")
            return d
        if tag == "S":
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


def load_npz(data, f):
    """The object stored in the ndgrad ``.npz`` checkpoint whose bytes are `data`."""
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
