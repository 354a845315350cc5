"""``ndgrad.save`` / ``ndgrad.load`` in torch's checkpoint format, so files move both ways
between ndgrad and torch.

The file is torch's zip archive: under one folder (the file's stem, or ``archive`` for a
buffer), ``data.pkl`` is the pickled object with each storage replaced by a persistent id,
``data/<key>`` holds each storage's raw bytes (stored uncompressed, 64-byte aligned),
``byteorder``, ``version``, ``.format_version``, ``.storage_alignment`` and
``.data/serialization_id`` are torch's bookkeeping records. The pickle half (how tensors and
dtypes are spelled) lives in ``_torch_pickle``; the restricted unpickler in
``_weights_only_unpickler``.

``load`` reads torch's files without torch: with ``weights_only=True`` (the default, as in
torch 2.6+) only tensors, containers, primitive types and allowlisted globals load, and nothing
else is imported or called; with ``weights_only=False`` any object loads, torch's classes being
replaced by ndgrad's equivalents. torch's pre-1.6 format (a stream of pickles followed by the
storages' bytes), files written by earlier ndgrad versions (``.npz``) and, when the
``safetensors`` package is installed, ``.safetensors`` files load too.

Invariants: ``save`` pickles the whole object before touching the destination, so a failed
save writes nothing; ``load`` reads at most the bytes the file holds (every size field is
checked against the archive before anything is allocated) and raises torch's exception class
for a damaged or hostile file.
"""

import contextlib
import enum
import hashlib
import importlib
import io
import shutil
import tempfile
import threading
import mmap as _mmap
import os
import pickle
import struct
import sys
import warnings
import zipfile

import numpy as np

from . import _torch_pickle
from ._torch_pickle import Storage, StorageType, TorchPickler, torch_globals
from ._weights_only_unpickler import Unpickler as _WeightsOnlyUnpickler
from ._weights_only_unpickler import (add_safe_globals, clear_safe_globals,  # noqa: F401
                                      get_safe_globals, safe_globals)
from ._device import device
from ._tensor import Tensor, _from_array
from ._npz_format import is_npz_checkpoint, load_npz
from .nn.parameter import Parameter
from ._weights_only_unpickler import _RENAMED_MODULES, _ndgrad_spelling, user_allowed_globals

__all__ = ["save", "load"]  # re-exported by `import ndgrad`
# torch.serialization's further public names (not re-exported at top level):
# LoadEndianness, get/set_default_load_endianness, get/set_crc32_options,
# get/set_default_mmap_options, skip_data, SourceChangeWarning, default_restore_location,
# location_tag, normalize_storage_type, storage_to_tensor_type, mkdtemp.

DEFAULT_PROTOCOL = 2
_STORAGE_ALIGNMENT = 64
_FORMAT_VERSION = b"3\n"

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only if "
    "you got the file from a trusted source.")
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
_CORRUPT = (". This is an internal miniz error. If you are seeing this error, there is a high "
            "likelihood that your checkpoint file is corrupted. This can happen if the "
            "checkpoint was not saved properly, was transferred incorrectly, or the file was "
            "modified after saving.")


# ------------------------------------------------------------------------------------ save
def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Save `obj` (tensors, state dicts, nested containers, or any picklable object such as an
    ``nn.Module``) to `f`, a path or a writable binary file, in torch's format.

    ``torch.load`` reads the file (with ``weights_only=True`` when `obj` holds only tensors,
    containers and primitive values). Tensors sharing memory share one storage record.

    Example::

        >>> ndgrad.save({"w": ndgrad.ones(2), "step": 3}, "ckpt.pt")
        >>> ndgrad.load("ckpt.pt")
        {'w': tensor([1., 1.]), 'step': 3}
    """
    if not _use_new_zipfile_serialization:
        raise RuntimeError("ndgrad.save writes torch's zip format only "
                           "(_use_new_zipfile_serialization=False is not supported)")
    if isinstance(f, (str, os.PathLike)):
        _check_dir_exists(f)
    buf = io.BytesIO()
    pickler = TorchPickler(buf, protocol=pickle_protocol)
    pickler.dump(obj)
    records = [("data.pkl", buf.getvalue()), (".format_version", b"1"),
               (".storage_alignment", str(_STORAGE_ALIGNMENT).encode())]
    if not _disable_byteorder_record:
        records.append(("byteorder", sys.byteorder.encode()))
    skip = getattr(_tls, "skip_data", False)
    records += [(f"data/{s.key}", bytes(memoryview(s.region).nbytes) if skip else s.region)
                for s in pickler.storages]
    records.append(("version", _FORMAT_VERSION))
    digest = hashlib.sha1(records[0][1]).digest()
    records.append((".data/serialization_id", str(int.from_bytes(digest, "big")).zfill(
        40)[:40].encode()))
    if isinstance(f, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        with open(f, "wb") as fh:
            _write_archive(fh, name, records)
    else:
        _write_archive(f, "archive", records)


def _check_dir_exists(f):
    parent = os.path.dirname(os.path.abspath(os.fspath(f)))
    if not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    if os.path.isdir(f):  # torch's class (its writer's enforce), before anything is pickled
        raise RuntimeError(f"open file failed with strerror: Is a directory: {os.fspath(f)!r}")


def _write_archive(fh, folder, records):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, data in records:
            info = zipfile.ZipInfo(f"{folder}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            view = memoryview(data).cast("B")
            info.file_size = view.nbytes
            zip64 = view.nbytes * 1.05 > zipfile.ZIP64_LIMIT
            # Pad the local header's extra field so the record's bytes start 64-byte aligned
            # (torch maps them in place with mmap=True).
            start = zf.fp.tell() + 30 + len(info.filename.encode("utf-8")) + 4 + \
                (20 if zip64 else 0)
            pad = (-start) % _STORAGE_ALIGNMENT
            info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad
            with zf.open(info, "w") as out:
                out.write(view)


# ------------------------------------------------------------------------------------ load
def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load an object saved with :func:`save` or ``torch.save`` from a path or binary file.

    ``weights_only=True`` (the default) admits tensors, containers, primitive types and the
    globals allowed with :func:`add_safe_globals`; anything else raises
    ``pickle.UnpicklingError`` without running it. ``map_location`` (a device, a string, a
    dict of location tags or a callable ``(storage, location)``) must resolve to the CPU.
    ``mmap=True`` maps the file's storages instead of reading them (copy on write).
    """
    weights_only = _weights_only_from_environment(weights_only, pickle_module)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors"):
        return _load_safetensors(os.fspath(f), map_location)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_file(fh, f, map_location, pickle_module, weights_only, mmap,
                              pickle_load_args)
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load_file(f, None, map_location, pickle_module, weights_only, mmap,
                      pickle_load_args)


_TRUE_SPELLINGS = ("1", "y", "yes", "true")


def _weights_only_from_environment(weights_only, pickle_module):
    """The ``weights_only`` that ``load`` uses, after torch's two environment switches.

    ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` forces ``True`` even over an explicit argument;
    ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` forces ``False`` only when the caller passed none (with
    torch's warning). Both set is torch's RuntimeError. Read at every call, as torch does.
    """
    unset = weights_only is None
    if unset:
        weights_only = pickle_module is None
    force_on = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_SPELLINGS
    force_off = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_SPELLINGS
    if force_on and force_off:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force_on:
        return True
    if force_off and unset:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the"
                      "`weights_only` argument was not explicitly passed to `torch.load`, forcing "
                      "weights_only=False.", UserWarning, stacklevel=3)
        return False
    return weights_only


def _load_file(fh, path, map_location, pickle_module, weights_only, mmap, pickle_load_args):
    start = fh.tell()
    magic = fh.read(4)
    fh.seek(start)
    if magic != b"PK\x03\x04":
        if mmap:
            shown = f"{path}, " if isinstance(path, str) else ""
            raise RuntimeError("mmap can only be used with files saved with "
                               f"`torch.save({shown}_use_new_zipfile_serialization=True), "
                               "please torch.save your checkpoint with this option in order "
                               "to use mmap.")
        return _load_legacy(fh, map_location, pickle_module, weights_only, pickle_load_args)
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct.error) as e:
        why = "failed finding central directory" if "not a zip" in str(e) else str(e)
        raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {why}"
                           f"{_CORRUPT}") from None
    with zf:
        names = zf.namelist()
        if is_npz_checkpoint(names):
            fh.seek(start)
            return load_npz(fh.read(), path if path is not None else fh)
        if mmap and path is None:
            raise ValueError("f must be a file path in order to use the mmap argument")
        reader = _ArchiveReader(zf, fh, path if mmap else None)
        if reader.has("constants.pkl"):
            raise RuntimeError("ndgrad cannot load TorchScript archives (torch.jit.save); "
                               "save a state dict with torch.save instead")
        data = reader.read_record("data.pkl")
        loader = _StorageLoader(reader, map_location)
        if weights_only:
            try:
                return _WeightsOnlyUnpickler(
                    data, torch_globals(), loader.persistent_load,
                    build_types=_build_types(),
                    encoding=pickle_load_args.get("encoding", "utf-8")).load()
            except pickle.UnpicklingError as e:
                raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
        unpickler = _full_unpickler(pickle_module, io.BytesIO(data), **pickle_load_args)
        unpickler.persistent_load = loader.persistent_load
        return unpickler.load()


def get_unsafe_globals_in_checkpoint(f):
    """The ``module.name`` globals in a checkpoint's ``data.pkl`` that a weights-only load would
    refuse (neither built in nor allowlisted). Nothing is unpickled: the opcodes are only
    scanned."""
    import pickletools
    safe = set(torch_globals()) | set(user_allowed_globals())
    opened = open(f, "rb") if isinstance(f, (str, os.PathLike)) else f
    try:
        if opened.read(4) != b"PK\x03\x04":
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        opened.seek(-4, os.SEEK_CUR)
        try:
            zf = zipfile.ZipFile(opened)
        except zipfile.BadZipFile:
            raise ValueError("Expected input to be a checkpoint returned by torch.save") \
                from None
        with zf:
            reader = _ArchiveReader(zf, opened, None)
            if reader.has("constants.pkl"):
                raise ValueError("Expected input to be a checkpoint returned by torch.save but "
                                 "got a torchscript checkpoint")
            data = reader.read_record("data.pkl")
    finally:
        if opened is not f:
            opened.close()
    found, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif op.name == "GLOBAL":
            module, name = arg.split(" ", 1)
            found.add((module, name))
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            found.add((strings[-2], strings[-1]))
    out = []
    for module, name in found:
        path = f"{_RENAMED_MODULES.get(module, module)}.{name}"
        if path not in safe and _ndgrad_spelling(path) not in safe:
            out.append(path)
    return out


def _build_types():
    return (Tensor, Parameter)


def _weights_only_message(message):
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load "
                "with `weights_only=True` please check the recommended steps in the following "
                f"error message.\n\tWeightsUnpickler error: {message}{_DOCS_MESSAGE}")
    out = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        out += ("Please file an issue with the following so that we can make `weights_only=True`"
                " compatible with your use case: WeightsUnpickler error: ")
    return out + "\n\n" + message + _DOCS_MESSAGE


_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001


def _load_legacy(fh, map_location, pickle_module, weights_only, pickle_load_args):
    """torch's pre-1.6 format (``_use_new_zipfile_serialization=False``): four pickles (magic
    number, protocol version, system info, the object), the storage keys, then each storage
    as an int64 element count and its bytes. Anything else raises what torch raises."""
    data = fh.read()
    if not data:
        raise EOFError("Ran out of input")
    loader = _LegacyStorages(data, map_location)
    encoding = pickle_load_args.get("encoding", "utf-8")
    if weights_only:
        reader = _WeightsOnlyUnpickler(data, torch_globals(), loader.persistent_load,
                                       build_types=_build_types(), encoding=encoding)
        try:
            header = [reader.load()]
            if header[0] != _LEGACY_MAGIC:
                raise RuntimeError("Invalid magic number; corrupt file?")
            header += [reader.load(), reader.load()]
            _check_legacy_header(header)
            result = reader.load()
            keys = reader.load()
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
        end = reader.pos
    else:
        stream = io.BytesIO(data)
        header = [pickle_module.load(stream, **pickle_load_args)]
        if header[0] != _LEGACY_MAGIC:
            raise RuntimeError("Invalid magic number; corrupt file?")
        header += [pickle_module.load(stream, **pickle_load_args) for _ in range(2)]
        _check_legacy_header(header)
        unpickler = _full_unpickler(pickle_module, stream, **pickle_load_args)
        unpickler.persistent_load = loader.persistent_load
        result = unpickler.load()
        keys = pickle_module.load(stream, **pickle_load_args)
        end = stream.tell()
    if not isinstance(keys, list):
        raise RuntimeError("corrupt legacy checkpoint: no list of storage keys")
    little = header[2].get("little_endian", True) if isinstance(header[2], dict) else True
    loader.fill(keys, end, swap=little != (sys.byteorder == "little"))
    return result


def _unexpected_eof(missing):
    return RuntimeError(f"unexpected EOF, expected {missing} more bytes. The file might be "
                        f"corrupted.")


def _check_legacy_header(header):
    if header[1] != _LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {header[1]}")


class _LegacyStorages:
    """Storages of a legacy file: made (zeroed, bounded by the file's size) when the pickle
    names them, filled from the bytes after it."""

    def __init__(self, data, map_location):
        self.data = data
        self.map_location = map_location
        self.roots = {}
        self.views = {}

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and len(pid) == 4 and _ascii(pid[0]) == "module":
            return pid[1]            # a module class whose source torch saved (not compared)
        if not isinstance(pid, tuple) or len(pid) != 6 or _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError("unsupported persistent id in a legacy checkpoint")
        _, storage_type, key, location, numel, view = pid
        if not isinstance(storage_type, StorageType) or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError("unsupported persistent id in a legacy checkpoint")
        found = self.roots.get(key)
        if found is None:
            if numel * storage_type.file_itemsize > len(self.data):
                raise RuntimeError(f"storage {key!r} claims {numel} elements, more than the "
                                   f"file holds")
            storage = _restore(Storage(np.zeros(numel, storage_type.dtype.np)),
                               _ascii(location), self.map_location)
            found = self.roots[key] = (storage_type, storage)
        if view is None:
            return found[1]
        view_key, offset, size = view
        if view_key not in self.views:
            root = found[1]._array
            if offset < 0 or size < 0 or offset + size > root.size:
                raise RuntimeError(f"storage view {view_key!r} lies outside its storage")
            self.views[view_key] = Storage(root[offset:offset + size])
        return self.views[view_key]

    def fill(self, keys, pos, swap):
        data = self.data
        for key in keys:
            if key not in self.roots:
                raise RuntimeError(f"storage key {key!r} not found in deserialized_objects")
            storage_type, storage = self.roots[key]
            if pos + 8 > len(data):
                raise _unexpected_eof(pos + 8 - len(data))
            numel = struct.unpack("<q", data[pos:pos + 8])[0]
            nbytes = numel * storage_type.file_itemsize
            pos += 8
            if numel != storage._array.size:
                raise RuntimeError(f"storage {key!r} holds {numel} elements in the file, "
                                   f"{storage._array.size} in its record")
            if pos + nbytes > len(data):
                raise _unexpected_eof(pos + nbytes - len(data))
            raw = np.frombuffer(data, np.uint8, nbytes, pos)
            pos += nbytes
            if storage_type.bfloat16:
                bits = raw.view(np.uint16)
                bits = bits.byteswap() if swap else bits
                storage._array[...] = (bits.astype(np.uint32) << 16).view(np.float32)
            else:
                values = raw.view(storage.dtype.np)
                storage._array[...] = values.byteswap() if swap else values


class _ArchiveReader:
    """Records of a torch zip archive, by their name under the archive's folder."""

    def __init__(self, zf, fh, mmap_path):
        self.zf = zf
        self.fh = fh
        infos = zf.infolist()
        if not infos:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: failed finding "
                               f"central directory{_CORRUPT}")
        first = infos[0].filename
        self.folder = first.split("/", 1)[0] if "/" in first else ""
        for info in infos:
            if not info.filename.startswith(self.folder + "/"):
                raise RuntimeError(f"file in archive is not in a subdirectory {self.folder}/: "
                                   f"{info.filename}")
        self.infos = {i.filename: i for i in infos}
        fh.seek(0, os.SEEK_END)
        self.file_size = fh.tell()
        self.mmap = None
        if mmap_path is not None:
            shared = _mmap_flags == _mmap.MAP_SHARED
            with open(mmap_path, "r+b" if shared else "rb") as raw:
                self.mmap = _mmap.mmap(raw.fileno(), 0, access=_mmap.ACCESS_WRITE if shared
                                       else _mmap.ACCESS_COPY)
        if self.has("byteorder"):
            byteorder = self.read_record("byteorder")
        elif _load_endianness == LoadEndianness.BIG:
            byteorder = b"big"
        elif _load_endianness == LoadEndianness.NATIVE:
            byteorder = sys.byteorder.encode()
        else:                   # None or LITTLE: files without the record are little-endian
            byteorder = b"little"
        if byteorder not in (b"little", b"big"):
            raise ValueError("Unknown endianness type: " + byteorder.decode("utf-8", "replace"))
        self.swap = byteorder.decode() != sys.byteorder
        self.skip_data = getattr(_tls, "skip_data", False)

    def _info(self, name):
        info = self.infos.get(f"{self.folder}/{name}")
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               f"found")
        return info

    def has(self, name):
        return f"{self.folder}/{name}" in self.infos

    def _check_size(self, info, name):
        # A record can hold at most what the file holds (deflate expands at most ~1032x).
        limit = self.file_size if info.compress_type == zipfile.ZIP_STORED \
            else 1100 * max(info.compress_size, 1)
        if info.file_size > limit or info.compress_size > self.file_size:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: record size "
                               f"{info.file_size} exceeds the archive{_CORRUPT}")

    def read_record(self, name):
        info = self._info(name)
        self._check_size(info, name)
        try:
            return self.zf.read(info)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, struct.error) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: {e}"
                               f"{_CORRUPT}") from None

    def read_array(self, name, nbytes):
        """The record's bytes as a writable uint8 array (a copy-on-write map with mmap)."""
        info = self._info(name)
        self._check_size(info, name)
        if info.file_size != nbytes:
            raise RuntimeError(f"record size ({info.file_size} bytes) does not match expected "
                               f"size ({nbytes} bytes) of {name}")
        if self.skip_data:
            return np.zeros(nbytes, np.uint8)       # skip_data: storages are not populated
        if self.mmap is not None:
            if info.compress_type != zipfile.ZIP_STORED:
                raise RuntimeError(f"mmap=True needs uncompressed records; {name} is "
                                   f"compressed")
            offset = self._data_offset(info)
            if offset + nbytes > len(self.mmap):
                raise RuntimeError(f"PytorchStreamReader failed reading file {name}{_CORRUPT}")
            return np.frombuffer(self.mmap, np.uint8, nbytes, offset)
        out = np.empty(nbytes, np.uint8)
        if info.compress_type == zipfile.ZIP_STORED:
            # the bytes as stored, without a CRC check: torch does not verify storage records
            # either (a file written through load(mmap=True) with MAP_SHARED has a stale CRC)
            offset = self._data_offset(info)
            if offset + nbytes > self.file_size:
                raise RuntimeError(f"PytorchStreamReader failed reading file {name}: truncated"
                                   f"{_CORRUPT}")
            self.fh.seek(offset)
            got = self.fh.readinto(memoryview(out)) if nbytes else 0
            if got != nbytes:
                raise RuntimeError(f"PytorchStreamReader failed reading file {name}: truncated"
                                   f"{_CORRUPT}")
            return out
        try:
            with self.zf.open(info) as src:
                got = src.readinto(memoryview(out)) if nbytes else 0
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, struct.error) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: {e}"
                               f"{_CORRUPT}") from None
        if got != nbytes:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: truncated"
                               f"{_CORRUPT}")
        return out

    def _data_offset(self, info):
        self.fh.seek(info.header_offset)
        header = self.fh.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise RuntimeError(f"PytorchStreamReader failed reading file {info.filename}"
                               f"{_CORRUPT}")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        return info.header_offset + 30 + name_len + extra_len


class _StorageLoader:
    """``persistent_load`` for storage ids: each record read once, mapped to the CPU."""

    def __init__(self, reader, map_location):
        self.reader = reader
        self.map_location = map_location
        self.loaded = {}

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) != 5:
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        typename, storage_type, key, location, numel = pid
        if _ascii(typename) != "storage" or not isinstance(storage_type, StorageType):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        key, location = _ascii(key), _ascii(location)
        if type(key) is not str or type(location) is not str or type(numel) is not int \
                or numel < 0:
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        found = self.loaded.get(key)
        if found is not None:
            return found
        raw = self.reader.read_array(f"data/{key}", numel * storage_type.file_itemsize)
        if storage_type.bfloat16:
            bits = raw.view(np.uint16)
            if self.reader.swap:
                bits = bits.byteswap()
            array = (bits.astype(np.uint32) << 16).view(np.float32)
        else:
            array = raw.view(storage_type.dtype.np)
            if self.reader.swap:
                array = array.byteswap()
        storage = _restore(Storage(array), location, self.map_location)
        self.loaded[key] = storage
        return storage


def _restore(storage, location, ml):
    """`storage` (loaded on the CPU, tagged `location`) put where `ml` (map_location) says."""
    if ml is None:
        target = location
    elif isinstance(ml, dict):
        target = ml.get(location, location)
    elif isinstance(ml, (str, bytes)):
        target = _ascii(ml)
    elif callable(ml) and not _is_device(ml):
        result = ml(storage, location)
        if result is not None:
            if not isinstance(result, Storage):
                raise TypeError(f"map_location should return a storage or None, got "
                                f"{type(result).__name__}")
            return result
        target = location
    else:
        target = str(ml)
    return _default_restore(storage, str(target))


def _is_device(x):
    return isinstance(x, device)


def _default_restore(storage, location):
    kind = location.split(":", 1)[0]
    if kind == "cpu":
        return storage
    if kind == "cuda":
        raise RuntimeError(_torch_pickle._CUDA_MISSING)
    raise RuntimeError(f"don't know how to restore data location of "
                       f"torch.storage.UntypedStorage (tagged with {location})")


def _ascii(x):
    return x.decode("ascii") if isinstance(x, bytes) else x


# Module paths torch once used and that checkpoints still name.
_MODULE_ALIASES = {"torch.tensor": "torch._tensor"}


def _full_unpickler(pickle_module, file, **kwargs):
    """``weights_only=False``: `pickle_module`'s unpickler, torch globals resolved to ndgrad's."""
    table = torch_globals()

    class Unpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            module = _MODULE_ALIASES.get(module, module)
            found = table.get(f"{module}.{name}")
            if found is not None:
                return found
            if module == "torch" or module.startswith("torch."):
                return _ndgrad_equivalent(module, name)
            return super().find_class(module, name)

    return Unpickler(file, **kwargs)


def _ndgrad_equivalent(module, name):
    import importlib
    target = "ndgrad" + module[len("torch"):]
    try:
        obj = importlib.import_module(target)
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj
    except (ImportError, AttributeError):
        pass
    raise pickle.UnpicklingError(f"the checkpoint names {module}.{name}, which ndgrad does not "
                                 f"have (looked for {target}.{name})")


# ------------------------------------------------------------------------------ safetensors
def _load_safetensors(path, map_location):
    try:
        from safetensors.numpy import load_file
    except ImportError as e:
        raise RuntimeError("Attempting to load a safetensors file but safetensors is not "
                           "installed. Please install safetensors with: pip install "
                           "safetensors") from e
    if isinstance(map_location, dict):
        raise RuntimeError("Loading safetensors file with dict map_location is not supported. "
                           "Use a device string or torch.device instead.")
    if map_location is not None and callable(map_location) and not _is_device(map_location):
        raise RuntimeError("Loading safetensors file with callable map_location is not "
                           "supported. Use a device string or torch.device instead.")
    if map_location is not None:
        _default_restore(None, str(map_location))
    return {k: _from_array(np.array(v)) for k, v in load_file(path).items()}



# ------------------------------------------------------------------------- configuration
# torch.serialization's switches and helpers. Process-wide like torch's, except skip_data
# (per thread, as torch's _serialization_tls).
_tls = threading.local()


class LoadEndianness(enum.Enum):
    """The byte order ``load`` assumes for a file without a ``byteorder`` record."""
    NATIVE = 1
    LITTLE = 2
    BIG = 3


_load_endianness = None
_crc32 = True
_mmap_flags = _mmap.MAP_PRIVATE


def get_default_load_endianness():
    """The byte order assumed for files without a byteorder record (None: little-endian)."""
    return _load_endianness


def set_default_load_endianness(endianness):
    global _load_endianness
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _load_endianness = endianness


def get_crc32_options():
    """Whether ``save`` computes the CRC-32 of each record (ndgrad's zip writer always does;
    the switch only saves time in torch)."""
    return _crc32


def set_crc32_options(compute_crc32):
    global _crc32
    _crc32 = bool(compute_crc32)


def get_default_mmap_options():
    """The flags ``load(mmap=True)`` maps files with: ``mmap.MAP_PRIVATE`` (copy on write,
    the default) or ``mmap.MAP_SHARED`` (writes to the tensors reach the file)."""
    return _mmap_flags


class set_default_mmap_options:
    """Set the mmap flags of ``load(mmap=True)``; as a context manager, restore them after."""

    def __init__(self, flags):
        global _mmap_flags
        if flags != _mmap.MAP_PRIVATE and flags != _mmap.MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, expected "
                             f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = _mmap_flags
        _mmap_flags = flags

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        global _mmap_flags
        _mmap_flags = self.prev


class skip_data:
    """Inside it, ``save`` writes every storage record as zero bytes of its size and ``load``
    does not read storage bytes (tensors come back zero-filled, with their shapes and
    dtypes). ``materialize_fake_tensors`` is accepted for torch's signature (ndgrad has no
    fake tensors)."""

    def __init__(self, materialize_fake_tensors=False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._old = getattr(_tls, "skip_data", False)
        _tls.skip_data = True

    def __exit__(self, *exc):
        _tls.skip_data = self._old


class SourceChangeWarning(Warning):
    """torch's warning for a pickled module whose source changed since it was saved."""


def default_restore_location(storage, location):
    """`storage` restored to `location` ('cpu'; any other device raises torch's error)."""
    return _default_restore(storage, str(location))


def location_tag(storage):
    """The location string torch records for `storage` (or a tensor): 'cpu'."""
    dev = storage.device
    if str(dev).split(":")[0] == "cpu":
        return "cpu"
    raise RuntimeError(f"don't know how to determine data location of "
                       f"{type(storage).__module__}.{type(storage).__qualname__}")


def normalize_storage_type(storage_type):
    """The class of ndgrad's namespace with `storage_type`'s name."""
    # torch looks the name up in torch; the facade is loaded by the time anyone calls this
    return getattr(sys.modules[__name__.split(".")[0]], storage_type.__name__)


def storage_to_tensor_type(storage):
    """The legacy tensor type of a typed storage (``FloatStorage`` -> ``FloatTensor``), looked
    up in the storage class's module as torch does."""
    storage_type = type(storage)
    module = importlib.import_module(storage_type.__module__)
    return getattr(module, storage_type.__name__.replace("Storage", "Tensor"))


@contextlib.contextmanager
def mkdtemp():
    """A temporary directory for the block, removed afterwards."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)
