"""ndgrad.save / ndgrad.load against torch 2.13: files written by either library load in the
other (weights_only=True and False), state dicts and optimizer states round-trip with every
dtype, views sharing storage stay shared, whole modules pickle under ndgrad's names, and
hostile or damaged files raise torch's exception class without running or writing anything."""

import io
import math
import os
import pathlib
import pickle
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ndgrad

DATA = os.path.join(os.path.dirname(__file__), "data")


def sample(lib):
    w = lib.arange(6, dtype=lib.float32).reshape(2, 3)
    return {
        "w": w, "w_again": w, "b": lib.tensor([1.5, -2.0], dtype=lib.float64),
        "i": lib.tensor([[1, 2]], dtype=lib.int64), "flag": lib.tensor(True),
        "scalar": lib.tensor(3.25), "half": lib.ones(2, dtype=lib.float16),
        "empty": lib.zeros(0, 4), "rg": lib.ones(2, requires_grad=True),
        "nested": OrderedDict([("a", [1, 2.5, "x", None, True]), ("b", (1, (2, 3)))]),
        3: "int key", (1, 2): "tuple key", "inf": math.inf, "ninf": -math.inf,
        "cplx": 1 + 2j, "dtype": lib.float64, "size": lib.Size([2, 3]),
        "big": 2 ** 62, "neg": -7, "f": 0.1, "bytes": b"\x00\xffab", "set": {1, 2},
    }


def odd_dtypes(lib):
    base = lib.arange(12, dtype=lib.float64).reshape(3, 4)
    return {
        "bool": lib.tensor([True, False, True]), "int8": lib.tensor([-128, 0, 127],
                                                                    dtype=lib.int8),
        "uint8": lib.tensor([0, 255], dtype=lib.uint8), "int16": lib.tensor([-300, 300],
                                                                            dtype=lib.int16),
        "int32": lib.tensor([2 ** 31 - 1], dtype=lib.int32),
        "float16": lib.tensor([0.5, -65504.0], dtype=lib.float16),
        "c64": lib.tensor([1 + 2j, -3j], dtype=lib.complex64),
        "c128": lib.tensor([[1 - 1j]], dtype=lib.complex128),
        "zero_d": lib.tensor(7, dtype=lib.int64), "empty": lib.zeros(2, 0, dtype=lib.int16),
        "base": base, "transposed": base.t(), "column": base[:, 1], "row": base[2],
        "stepped": base[:, ::2],
    }


def describe(x):
    """A comparable description of a loaded object (type names normalised to torch's)."""
    if hasattr(x, "detach") and hasattr(x, "requires_grad"):
        return (type(x).__name__, str(x.dtype), tuple(x.shape), tuple(x.stride()),
                x.detach().numpy().tolist(), x.requires_grad)
    if isinstance(x, OrderedDict):
        return ("O", [(describe(k), describe(v)) for k, v in x.items()])
    if isinstance(x, dict):
        return ("D", [(describe(k), describe(v)) for k, v in x.items()])
    if isinstance(x, tuple) and type(x).__name__ == "Size":
        return ("S", list(x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [describe(v) for v in x])
    if type(x).__name__ == "dtype":
        return ("dtype", str(x))
    return (type(x).__name__, x)


def to_torch(obj):
    """The same object built with torch (tensors copied through NumPy)."""
    if isinstance(obj, ndgrad.Tensor):
        return torch.from_numpy(obj.detach().numpy().copy()).requires_grad_(obj.requires_grad)
    return obj


def save_load(writer, reader, obj, path, **kw):
    writer.save(obj, path)
    return reader.load(path, **kw)


# ------------------------------------------------------------------------ both directions
@pytest.mark.parametrize("weights_only", [True, False])
def test_ndgrad_writes_torch_reads_and_back(tmp_path, weights_only):
    p = str(tmp_path / "n.pt")
    n = save_load(ndgrad, torch, sample(ndgrad), p, weights_only=weights_only)
    t = save_load(torch, torch, sample(torch), str(tmp_path / "t.pt"),
                  weights_only=weights_only)
    assert describe(n) == describe(t)
    assert n["w"] is n["w_again"]
    back = ndgrad.load(p, weights_only=weights_only)
    assert describe(back) == describe(t)
    assert back["w"] is back["w_again"] and back["half"]._data.dtype == np.float16


@pytest.mark.parametrize("weights_only", [True, False])
def test_torch_writes_ndgrad_reads(tmp_path, weights_only):
    p = str(tmp_path / "t.pt")
    t = save_load(torch, torch, sample(torch), p, weights_only=weights_only)
    n = ndgrad.load(p, weights_only=weights_only)
    assert describe(n) == describe(t)
    assert n["w"] is n["w_again"] and isinstance(n["dtype"], ndgrad.dtype)


@pytest.mark.parametrize("direction", ["ndgrad->torch", "torch->ndgrad"])
def test_odd_dtypes_strides_and_views(tmp_path, direction):
    p = str(tmp_path / "x.pt")
    if direction == "ndgrad->torch":
        ndgrad.save(odd_dtypes(ndgrad), p)
        loaded, lib = torch.load(p), torch
    else:
        torch.save(odd_dtypes(torch), p)
        loaded, lib = ndgrad.load(p), ndgrad
    expected = odd_dtypes(torch)
    assert describe(loaded) == describe(expected)
    # the views were saved with their base's storage, once, and share memory again
    with zipfile.ZipFile(p) as z:
        records = [n for n in z.namelist() if "/data/" in n]
    torch.save(expected, str(tmp_path / "ref.pt"))
    with zipfile.ZipFile(str(tmp_path / "ref.pt")) as z:
        assert len(records) == len([n for n in z.namelist() if "/data/" in n])
    with lib.no_grad():
        loaded["base"][1, 0] = 100.0
    assert loaded["transposed"][0, 1].item() == 100.0 and loaded["row"][0].item() == 8.0
    assert loaded["column"].tolist() == [1.0, 5.0, 9.0]
    loaded["column"].add_(1)
    assert loaded["base"][:, 1].tolist() == [2.0, 6.0, 10.0]


def test_model_state_dict_both_ways(tmp_path):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3),
                             torch.nn.Flatten(), torch.nn.Linear(12, 4))
    tm(torch.randn(5, 2, 4, 4))           # running stats and num_batches_tracked move
    tm.eval()
    nm = ndgrad.nn.Sequential(ndgrad.nn.Conv2d(2, 3, 3), ndgrad.nn.BatchNorm2d(3),
                              ndgrad.nn.Flatten(), ndgrad.nn.Linear(12, 4))
    nm.eval()
    torch.save(tm.state_dict(), str(tmp_path / "t.pt"))
    sd = ndgrad.load(str(tmp_path / "t.pt"))
    assert type(sd) is OrderedDict and list(sd) == list(tm.state_dict())
    assert sd._metadata == tm.state_dict()._metadata
    nm.load_state_dict(sd)
    x = np.random.RandomState(0).randn(2, 2, 4, 4).astype(np.float32)
    want = tm(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(nm(ndgrad.from_numpy(x)).detach().numpy(), want, rtol=1e-5,
                               atol=1e-6)
    # and back: ndgrad's state dict loads into a fresh torch model
    ndgrad.save(nm.state_dict(), str(tmp_path / "n.pt"))
    tm2 = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3),
                              torch.nn.Flatten(), torch.nn.Linear(12, 4)).eval()
    tm2.load_state_dict(torch.load(str(tmp_path / "n.pt")))
    np.testing.assert_allclose(tm2(torch.from_numpy(x)).detach().numpy(), want, rtol=1e-6)


def _adam_after_a_step(lib):
    p = lib.tensor([1.0, -1.0, 0.5], requires_grad=True)
    opt = lib.optim.Adam([p], lr=0.1, amsgrad=True)
    p.grad = lib.tensor([0.5, 0.25, -1.0])
    opt.step()
    return p, opt


def test_optimizer_state_dict_both_ways(tmp_path):
    _, nopt = _adam_after_a_step(ndgrad)
    tp, topt = _adam_after_a_step(torch)
    ndgrad.save(nopt.state_dict(), str(tmp_path / "n.pt"))
    torch.save(topt.state_dict(), str(tmp_path / "t.pt"))
    from_n = torch.load(str(tmp_path / "n.pt"))
    from_t = ndgrad.load(str(tmp_path / "t.pt"))
    assert describe(from_n) == describe(topt.state_dict())
    assert describe(from_t) == describe(topt.state_dict())
    # a torch optimizer resumes from ndgrad's state (and vice versa) with the same next step
    p2 = torch.tensor(tp.detach().numpy().copy(), requires_grad=True)
    opt2 = torch.optim.Adam([p2], lr=0.1, amsgrad=True)
    opt2.load_state_dict(from_n)
    np2 = ndgrad.tensor(tp.detach().numpy().copy(), requires_grad=True)
    nopt2 = ndgrad.optim.Adam([np2], lr=0.1, amsgrad=True)
    nopt2.load_state_dict(from_t)
    for p, opt, lib in ((p2, opt2, torch), (np2, nopt2, ndgrad)):
        p.grad = lib.tensor([0.1, 0.2, 0.3])
        opt.step()
    np.testing.assert_allclose(np2.detach().numpy(), p2.detach().numpy(), rtol=1e-6)


# ------------------------------------------------------------------------ whole objects
def test_whole_module_pickles_under_ndgrad_names(tmp_path):
    m = ndgrad.nn.Sequential(ndgrad.nn.Linear(3, 2), ndgrad.nn.Tanh())
    p = str(tmp_path / "m.pt")
    ndgrad.save(m, p)
    with zipfile.ZipFile(p) as z:
        pkl = z.read("m/data.pkl")
    assert b"ndgrad.nn.modules.container" in pkl and b"torch.nn" not in pkl
    m2 = ndgrad.load(p, weights_only=False)
    x = ndgrad.ones(1, 3)
    assert type(m2) is type(m) and m2(x).tolist() == m(x).tolist()
    assert isinstance(m2[0].weight, ndgrad.nn.Parameter)
    tm = torch.load(p, weights_only=False)           # torch can read it (ndgrad classes)
    assert type(tm).__module__ == "ndgrad.nn.modules.container"
    assert tm[0].weight.detach().numpy().tolist() == m[0].weight.tolist()


def test_whole_torch_module_loads_as_ndgrad_module(tmp_path):
    torch.manual_seed(1)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    p = str(tmp_path / "t.pt")
    torch.save(tm, p)
    nm = ndgrad.load(p, weights_only=False)
    assert type(nm) is ndgrad.nn.Sequential and type(nm[0]) is ndgrad.nn.Linear
    x = np.random.RandomState(0).randn(5, 3).astype(np.float32)
    np.testing.assert_allclose(nm(ndgrad.from_numpy(x)).detach().numpy(),
                               tm(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)


def test_whole_module_refused_under_weights_only_like_torch(tmp_path):
    ndgrad.save(ndgrad.nn.Linear(2, 2), str(tmp_path / "n.pt"))
    torch.save(torch.nn.Linear(2, 2), str(tmp_path / "t.pt"))
    with pytest.raises(pickle.UnpicklingError) as ne:
        ndgrad.load(str(tmp_path / "n.pt"))
    with pytest.raises(pickle.UnpicklingError) as te:
        torch.load(str(tmp_path / "t.pt"))
    assert str(ne.value) == str(te.value).replace("torch.nn.modules.linear",
                                                  "ndgrad.nn.modules.linear")


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


def test_safe_globals_allowlist(tmp_path):
    for lib in (torch, ndgrad):
        lib.serialization.clear_safe_globals()
    p = str(tmp_path / "pt.pt")
    ndgrad.save({"pt": Point(1, ndgrad.ones(2))}, p)
    for lib in (torch, ndgrad):
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL test_serialization.Point was "
                                                         "not an allowed global"):
            lib.load(p)
        with lib.serialization.safe_globals([Point]):
            assert lib.serialization.get_safe_globals() == [Point]
            out = lib.load(p)
        assert out["pt"].x == 1 and out["pt"].y.tolist() == [1.0, 1.0]
        assert lib.serialization.get_safe_globals() == []
        lib.serialization.add_safe_globals([(Point, "test_serialization.Point")])
        assert lib.load(p)["pt"].x == 1
        lib.serialization.clear_safe_globals()
        assert lib.serialization.get_safe_globals() == []


# ------------------------------------------------------------------------ how files are given
def test_paths_file_objects_and_buffers(tmp_path):
    obj = {"a": ndgrad.arange(4)}
    ndgrad.save(obj, tmp_path / "p.pt")                       # pathlib.Path
    assert ndgrad.load(pathlib.Path(tmp_path / "p.pt"))["a"].tolist() == [0, 1, 2, 3]
    with open(tmp_path / "f.pt", "wb") as fh:                 # open file object
        ndgrad.save(obj, fh)
    with open(tmp_path / "f.pt", "rb") as fh:
        assert torch.load(fh)["a"].tolist() == [0, 1, 2, 3]
    buf = io.BytesIO()
    ndgrad.save(obj, buf)
    buf.seek(0)
    assert torch.load(buf)["a"].tolist() == [0, 1, 2, 3]
    buf.seek(0)
    assert ndgrad.load(buf)["a"].tolist() == [0, 1, 2, 3]
    p = str(tmp_path / "ckpt")                                # no extension appended
    ndgrad.save(obj, p)
    assert os.path.exists(p) and torch.load(p)["a"].tolist() == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="Parent directory"):
        ndgrad.save(obj, str(tmp_path / "missing" / "x.pt"))
    with pytest.raises(RuntimeError, match="Parent directory"):
        torch.save(torch.ones(1), str(tmp_path / "missing" / "x.pt"))


def test_pickle_load_args_warn_under_weights_only(tmp_path):
    p = str(tmp_path / "t.pt")
    torch.save({"a": torch.ones(1)}, p)
    for lib in (torch, ndgrad):
        with pytest.warns(UserWarning, match="pickle_load_args only works if"):
            lib.load(p, encoding="latin1")
        with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                               "pickle_module is specified"):
            lib.load(p, pickle_module=pickle, weights_only=True)
        assert lib.load(p, pickle_module=pickle)["a"].tolist() == [1.0]


def test_map_location_forms(tmp_path):
    p = str(tmp_path / "t.pt")
    torch.save({"a": torch.arange(3.0)}, p)
    seen = []

    def keep(storage, location):
        seen.append((location, storage.dtype, storage.size()))
        return storage
    for ml in ("cpu", ndgrad.device("cpu"), {"cpu": "cpu"}, keep, lambda s, loc: None,
               b"cpu"):
        assert ndgrad.load(p, map_location=ml)["a"].tolist() == [0.0, 1.0, 2.0]
    assert seen == [("cpu", ndgrad.float32, 3)]
    for ml in ("cuda", "cuda:1", {"cpu": "cuda:0"}, ndgrad.device("cuda")):
        with pytest.raises(RuntimeError) as ne:
            ndgrad.load(p, map_location=ml)
        with pytest.raises(RuntimeError) as te:
            torch.load(p, map_location=torch.device(str(ml)) if isinstance(ml, ndgrad.device)
                       else ml)
        assert str(ne.value) == str(te.value)
    # (torch 2.13's CPU build fails inside storage.cuda() with a TypeError; ndgrad raises the
    # message above)
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA"):
        ndgrad.load(p, map_location=lambda s, loc: s.cuda())


def test_mmap_shares_the_file_copy_on_write(tmp_path):
    p = str(tmp_path / "t.pt")
    torch.save({"a": torch.arange(6.0).reshape(2, 3), "b": torch.ones(2, dtype=torch.int64)}, p)
    before = open(p, "rb").read()
    out = ndgrad.load(p, mmap=True)
    assert out["a"].tolist() == [[0, 1, 2], [3, 4, 5]] and out["b"].dtype == ndgrad.int64
    out["a"].add_(1)                                          # private: the file is unchanged
    assert out["a"][0, 0].item() == 1.0 and open(p, "rb").read() == before
    buf = io.BytesIO(before)
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
        ndgrad.load(buf, mmap=True)
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
        torch.load(io.BytesIO(before), mmap=True)


def test_files_of_the_earlier_ndgrad_format_still_load():
    out = ndgrad.load(os.path.join(DATA, "ndgrad_npz_v1.pt"))
    assert out["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert out["i"].dtype == ndgrad.int64 and type(out["p"]) is ndgrad.nn.Parameter
    assert out["od"] == OrderedDict([("a", [1, 2.5, None])]) and out["t"] == (1, "x")
    assert out["dt"] is ndgrad.float64 and out["s"] == ndgrad.Size([2, 3])


def test_safetensors_files(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    p = str(tmp_path / "w.safetensors")
    st.save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3),
                  "i": np.array([1, 2], dtype=np.int64)}, p)
    n, t = ndgrad.load(p), torch.load(p)
    assert describe(n) == describe(t)
    with pytest.raises(RuntimeError) as ne:
        ndgrad.load(p, map_location={"cpu": "cpu"})
    with pytest.raises(RuntimeError) as te:
        torch.load(p, map_location={"cpu": "cpu"})
    assert str(ne.value) == str(te.value)


def test_bfloat16_storages_load_widened_to_float32(tmp_path):
    p = str(tmp_path / "b.pt")
    t = torch.tensor([1.5, -2.25, 3e38, 1e-3], dtype=torch.bfloat16)
    torch.save({"t": t, "view": t[1:3]}, p)
    out = ndgrad.load(p)
    assert out["t"].dtype == ndgrad.float32
    assert out["t"].tolist() == t.float().tolist() and out["view"].tolist() == t[1:3].tolist()


# ------------------------------------------------------------------------ failures
def test_failed_save_writes_nothing(tmp_path):
    p = str(tmp_path / "x.pt")
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        ndgrad.save({"f": lambda: 1, "t": ndgrad.ones(2)}, p)
    assert not os.path.exists(p)


def _archive(pkl, records=(), folder="archive"):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(f"{folder}/data.pkl", pkl)
        z.writestr(f"{folder}/byteorder", "little")
        for name, data in records:
            z.writestr(name if name.startswith(("/", ".")) else f"{folder}/{name}", data)
        z.writestr(f"{folder}/version", "3\n")
    return buf.getvalue()


def _both_raise(data, cls):
    """Both libraries refuse `data` with exception class `cls`; returns the two messages."""
    with pytest.raises(cls) as te:
        torch.load(io.BytesIO(data))
    with pytest.raises(cls) as ne:
        ndgrad.load(io.BytesIO(data))
    return str(ne.value), str(te.value)


class RunsCommand:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class OpensFile:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_code_in_a_pickle_is_never_run(tmp_path):
    marker = str(tmp_path / "pwned")
    for evil in (RunsCommand(marker), OpensFile(marker)):
        buf = io.BytesIO()
        torch.save({"x": torch.ones(1), "evil": evil}, buf)
        n, t = _both_raise(buf.getvalue(), pickle.UnpicklingError)
        assert n == t and n.startswith("Weights only load failed")
        assert not os.path.exists(marker)
    assert "whose module posix is blocked" in _both_raise(
        _archive(pickle.dumps(RunsCommand(marker), protocol=2)), pickle.UnpicklingError)[0]
    # blocked even when a user allowlists it
    with ndgrad.serialization.safe_globals([os.system]), \
            pytest.raises(pickle.UnpicklingError, match="is blocked"):
        ndgrad.load(io.BytesIO(_archive(pickle.dumps(RunsCommand(marker), protocol=2))))
    assert not os.path.exists(marker)


@pytest.mark.parametrize("weights_only", [True, False])
def test_torch_legacy_format_loads(tmp_path, weights_only):
    p = str(tmp_path / "legacy.pt")
    obj = odd_dtypes(torch)
    obj["bf16"] = torch.tensor([1.5, -2.25], dtype=torch.bfloat16)
    obj["param"] = torch.nn.Parameter(torch.ones(2))
    obj["nested"] = OrderedDict([("a", [1, (2.5, "x")])])
    torch.save(obj, p, _use_new_zipfile_serialization=False)
    n, t = ndgrad.load(p, weights_only=weights_only), torch.load(p, weights_only=weights_only)
    t["bf16"] = t["bf16"].float()
    assert describe(n) == describe(t)
    n["base"][0, 1] = -1.0                               # views share their storage again
    assert n["column"][0].item() == -1.0 and n["transposed"][1, 0].item() == -1.0


def test_torch_legacy_whole_module_and_refusal(tmp_path):
    p = str(tmp_path / "legacy_model.pt")
    torch.manual_seed(0)
    tm = torch.nn.Linear(3, 2)
    torch.save(tm, p, _use_new_zipfile_serialization=False)
    nm = ndgrad.load(p, weights_only=False)
    assert type(nm) is ndgrad.nn.Linear
    assert nm.weight.tolist() == tm.weight.tolist()
    with pytest.raises(pickle.UnpicklingError) as ne:
        ndgrad.load(p)
    with pytest.raises(pickle.UnpicklingError) as te:
        torch.load(p)
    assert str(ne.value) == str(te.value)
    data = open(p, "rb").read()
    for cut in (len(data) - 3, len(data) - 20, len(data) - 40, 100):
        for wo in (True, False):
            with pytest.raises(Exception) as te:
                torch.load(io.BytesIO(data[:cut]), weights_only=wo)
            with pytest.raises(Exception) as ne:
                ndgrad.load(io.BytesIO(data[:cut]), weights_only=wo)
            assert type(ne.value) is type(te.value)
            if type(te.value) is RuntimeError:
                assert str(ne.value) == str(te.value)


def test_truncated_empty_and_garbage_files(tmp_path):
    buf = io.BytesIO()
    torch.save({"a": torch.ones(100)}, buf)
    data = buf.getvalue()
    for cut in (len(data) // 2, len(data) - 30, 10):
        n, t = _both_raise(data[:cut], RuntimeError)
        assert n.split(":")[0] == t.split(":")[0]
    _both_raise(b"", EOFError)
    n, t = _both_raise(b"garbage bytes that are no pickle", pickle.UnpicklingError)
    assert n.startswith("Weights only load failed") and t.startswith("Weights only load failed")


def _long(v):
    return b"\x8a\x08" + struct.pack("<q", v)


def _storage_pickle(key, numel, size, stride, offset=0, storage="FloatStorage"):
    """A protocol-2 pickle of one tensor record, written opcode by opcode so every field can
    be hostile: _rebuild_tensor_v2(persistent("storage", Type, key, "cpu", numel), offset,
    size, stride, False, OrderedDict())."""
    return b"".join([
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((",
        b"X\x07\x00\x00\x00storage", f"ctorch\n{storage}\n".encode(),
        b"X" + struct.pack("<I", len(key)) + key.encode(), b"X\x03\x00\x00\x00cpu",
        _long(numel), b"tQ", _long(offset),
        b"(" + b"".join(_long(v) for v in size) + b"t",
        b"(" + b"".join(_long(v) for v in stride) + b"t",
        b"\x89ccollections\nOrderedDict\n)RtR.",
    ])


def test_crafted_storage_ids_sizes_and_names(tmp_path):
    four = np.arange(4, dtype=np.float32).tobytes()
    ok = _archive(_storage_pickle("0", 4, (2, 2), (2, 1)), [("data/0", four)])
    assert torch.load(io.BytesIO(ok)).tolist() == [[0, 1], [2, 3]]
    assert ndgrad.load(io.BytesIO(ok)).tolist() == [[0, 1], [2, 3]]
    before = sorted(os.listdir(tmp_path))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        cases = [
            # a storage key escaping the archive folder, and a member named outside it
            _archive(_storage_pickle("../../evil", 4, (4,), (1,)),
                     [("data/0", four), ("../../evil", four)]),
            # a record smaller than the storage the pickle claims, and an absurd storage
            _archive(_storage_pickle("0", 8, (8,), (1,)), [("data/0", four)]),
            _archive(_storage_pickle("0", 2 ** 60, (4,), (1,)), [("data/0", four)]),
            # sizes/strides/offsets reaching outside the storage
            _archive(_storage_pickle("0", 4, (2 ** 40, 2 ** 40), (1, 1)), [("data/0", four)]),
            _archive(_storage_pickle("0", 4, (2,), (1,), offset=3), [("data/0", four)]),
        ]
        for data in cases:
            _both_raise(data, RuntimeError)
    finally:
        os.chdir(cwd)
    assert sorted(os.listdir(tmp_path)) == before


def test_zip_header_claiming_an_absurd_size():
    buf = io.BytesIO()
    torch.save({"a": torch.ones(4)}, buf)
    data = bytearray(buf.getvalue())
    # the central-directory entry of the storage record claims ~4 GB
    pos = data.find(b"PK\x01\x02archive/data/0"[:4])
    while data[pos + 46:pos + 46 + 14] != b"archive/data/0":
        pos = data.find(b"PK\x01\x02", pos + 4)
    data[pos + 20:pos + 28] = struct.pack("<II", 0xFFFFFFF0, 0xFFFFFFF0)
    _both_raise(bytes(data), RuntimeError)


def test_allowed_globals_cannot_be_made_to_allocate():
    huge = (10 ** 12).to_bytes(6, "little")
    data = _archive(b"\x80\x02c__builtin__\nbytearray\n\x8a\x06" + huge + b"\x85R.")
    with pytest.raises(pickle.UnpicklingError, match="bytearray is only allowed from data"):
        ndgrad.load(io.BytesIO(data))


def test_records_are_aligned_so_torch_can_map_them(tmp_path):
    p = str(tmp_path / "n.pt")
    obj = {"a": ndgrad.arange(10.0), "b": ndgrad.ones(3, 3, dtype=ndgrad.float64),
           "c": ndgrad.tensor([1, 2, 3], dtype=ndgrad.int16)}
    ndgrad.save(obj, p)
    with open(p, "rb") as fh, zipfile.ZipFile(p) as z:
        for info in z.infolist():
            fh.seek(info.header_offset + 26)
            name_len, extra_len = struct.unpack("<HH", fh.read(4))
            start = info.header_offset + 30 + name_len + extra_len
            if "/data/" in info.filename:
                assert start % 64 == 0 and info.compress_type == zipfile.ZIP_STORED
    out = torch.load(p, mmap=True)
    assert describe(out) == describe({k: to_torch(v) for k, v in obj.items()})


def test_unsafe_globals_in_checkpoint_and_allowlisted_whole_modules(tmp_path):
    for lib in (torch, ndgrad):
        lib.serialization.clear_safe_globals()
    tp, np_ = str(tmp_path / "t.pt"), str(tmp_path / "n.pt")
    torch.save({"m": torch.nn.Linear(2, 2), "pt": Point(1, 2)}, tp)
    ndgrad.save({"m": ndgrad.nn.Linear(2, 2), "pt": Point(1, 2)}, np_)
    want = sorted(torch.serialization.get_unsafe_globals_in_checkpoint(tp))
    assert sorted(ndgrad.serialization.get_unsafe_globals_in_checkpoint(tp)) == want
    assert sorted(ndgrad.serialization.get_unsafe_globals_in_checkpoint(np_)) == sorted(
        w.replace("torch.nn", "ndgrad.nn") for w in want)
    torch.save({"w": torch.ones(2)}, tp)
    assert ndgrad.serialization.get_unsafe_globals_in_checkpoint(tp) == [] == \
        torch.serialization.get_unsafe_globals_in_checkpoint(tp)
    with pytest.raises(ValueError, match="Expected input to be a checkpoint"):
        ndgrad.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(b"garbage"))
    # allowlisting ndgrad's Linear admits torch's spelling of it too
    torch.save(torch.nn.Linear(2, 3), tp)
    with ndgrad.serialization.safe_globals([ndgrad.nn.Linear]):
        m = ndgrad.load(tp)
        assert ndgrad.serialization.get_unsafe_globals_in_checkpoint(tp) == []
    assert type(m) is ndgrad.nn.Linear and m(ndgrad.ones(1, 2)).shape == (1, 3)


def test_tensor_attributes_travel_both_ways(tmp_path):
    for writer, reader in ((ndgrad, torch), (torch, ndgrad), (ndgrad, ndgrad)):
        t = writer.arange(3.0)
        t.tag = "input"
        t.scale = 2.5
        p = str(tmp_path / "a.pt")
        writer.save({"t": t, "plain": writer.ones(1)}, p)
        out = reader.load(p)
        assert type(out["t"]).__name__ == "Tensor" and out["t"].tolist() == [0.0, 1.0, 2.0]
        assert (out["t"].tag, out["t"].scale) == ("input", 2.5)
        assert not hasattr(out["plain"], "tag")


def test_mutated_checkpoints_fail_only_with_torchs_exception_classes(tmp_path, monkeypatch):
    """Random byte changes to a checkpoint (archive or pickle) load or raise RuntimeError,
    UnpicklingError, EOFError or TypeError (a wrong call of an allowed global, as in torch);
    nothing else escapes and nothing is written."""
    import random
    buf = io.BytesIO()
    base = ndgrad.arange(12.0).reshape(3, 4)
    ndgrad.save({"w": base, "v": base[:, 1], "i": ndgrad.tensor([1, 2]),
                 "n": {"a": [1, 2.5, "x"]}}, buf)
    good = buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(good)) as z:
        records = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    rng = random.Random(0)
    monkeypatch.chdir(tmp_path)
    for trial in range(400):
        if trial % 2:
            data = bytearray(good)
        else:
            data = bytearray(records[0][1])                  # archive/data.pkl
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if not trial % 2:
            out = io.BytesIO()
            with zipfile.ZipFile(out, "w") as z:
                z.writestr(records[0][0], bytes(data))
                for name, payload in records[1:]:
                    z.writestr(name, payload)
            data = out.getvalue()
        try:
            ndgrad.load(io.BytesIO(bytes(data)))
        except (RuntimeError, pickle.UnpicklingError, EOFError, TypeError):
            pass
    assert os.listdir(tmp_path) == []
