"""ndgrad.save / ndgrad.load: round trips of tensors, state dicts and nested containers
(compared with what torch.save/torch.load give back for the same object), safety (no pickle,
no code execution), clear errors for corrupt or foreign files."""

import io
import math
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ndgrad


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
        "big": 2 ** 62, "neg": -7, "f": 0.1,
    }


def describe(x):
    """A comparable description of a loaded object (type names normalised to torch's)."""
    if hasattr(x, "detach") and hasattr(x, "requires_grad"):
        return ("T", str(x.dtype), tuple(x.shape), x.detach().numpy().tolist(), x.requires_grad)
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


def roundtrip(lib, obj, tmp_path, name):
    path = os.path.join(tmp_path, name)
    lib.save(obj, path)
    return lib.load(path, weights_only=False)


def test_round_trip_matches_torch(tmp_path):
    t = roundtrip(torch, sample(torch), tmp_path, "t.pt")
    n = roundtrip(ndgrad, sample(ndgrad), tmp_path, "n.pt")
    assert describe(n) == describe(t)
    assert n["w"] is n["w_again"] and t["w"] is t["w_again"]
    assert n["w"]._data.dtype == np.float32 and n["half"]._data.dtype == np.float16


def test_file_object_and_plain_name_without_extension(tmp_path):
    buf = io.BytesIO()
    ndgrad.save([ndgrad.ones(3), {"k": 1}], buf)
    buf.seek(0)
    out = ndgrad.load(buf)
    assert out[0].tolist() == [1.0, 1.0, 1.0] and out[1] == {"k": 1}
    p = os.path.join(tmp_path, "ckpt")          # no ".npz" gets appended
    ndgrad.save(ndgrad.tensor([1, 2]), p)
    assert os.path.exists(p) and ndgrad.load(p).tolist() == [1, 2]


def test_optimizer_state_dict_round_trip(tmp_path):
    p = ndgrad.tensor([1.0, -1.0], requires_grad=True)
    opt = ndgrad.optim.Adam([p], lr=0.1, amsgrad=True)
    p.grad = ndgrad.tensor([0.5, 0.25])
    opt.step()
    sd = roundtrip(ndgrad, opt.state_dict(), tmp_path, "opt.pt")
    assert list(sd["state"]) == [0] and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    opt2 = ndgrad.optim.Adam([ndgrad.tensor([1.0, -1.0], requires_grad=True)])
    opt2.load_state_dict(sd)
    st = opt2.state[opt2.param_groups[0]["params"][0]]
    assert st["exp_avg"].tolist() == opt.state[p]["exp_avg"].tolist()
    assert st["step"].item() == 1.0 and opt2.param_groups[0]["lr"] == 0.1


def test_module_state_dict_round_trip(tmp_path):
    lin = ndgrad.nn.Linear(3, 2)
    out = roundtrip(ndgrad, lin.state_dict(), tmp_path, "m.pt")
    assert type(out) is type(lin.state_dict()) and list(out) == ["weight", "bias"]
    lin2 = ndgrad.nn.Linear(3, 2)
    lin2.load_state_dict(out)
    assert lin2.weight.tolist() == lin.weight.tolist()


def test_parameters_come_back_as_parameters_like_torch(tmp_path):
    def go(lib):
        out = roundtrip(lib, {"p": lib.nn.Parameter(lib.ones(2)),
                              "q": lib.nn.Parameter(lib.ones(1), requires_grad=False)},
                        tmp_path, "p.pt")
        return [(type(v).__name__, v.requires_grad) for v in out.values()]
    assert go(ndgrad) == go(torch)


def test_refuses_objects_it_cannot_store_safely(tmp_path):
    class Thing:
        pass
    with pytest.raises(TypeError, match="ndgrad.save can store tensors"):
        ndgrad.save({"x": Thing()}, io.BytesIO())
    with pytest.raises(TypeError):
        ndgrad.save(lambda: 1, io.BytesIO())


def test_archive_has_no_pickles(tmp_path):
    buf = io.BytesIO()
    ndgrad.save(sample(ndgrad), buf)
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as z:
        for name in z.files:
            assert z[name].dtype != object


def _err(data):
    with pytest.raises(RuntimeError, match="is not a valid file written by ndgrad.save") as e:
        ndgrad.load(io.BytesIO(data))
    return str(e.value)


def test_foreign_and_corrupt_files_raise_clearly(tmp_path):
    good = io.BytesIO()
    ndgrad.save({"a": ndgrad.ones(3), "b": [1, 2]}, good)
    data = good.getvalue()
    assert "not a zip archive" in _err(b"garbage bytes")
    assert "not a zip archive" in _err(pickle.dumps({"a": 1}))
    tpath = os.path.join(tmp_path, "torch.pt")
    torch.save({"a": torch.ones(2)}, tpath)           # a torch zip whose payload is a pickle
    with pytest.raises(RuntimeError, match="torch.save are pickles"):
        ndgrad.load(tpath)
    _err(data[: len(data) // 2])                      # truncated archive
    # a plain npz without our structure record
    plain = io.BytesIO()
    np.savez(plain, x=np.ones(2))
    assert "no ndgrad structure record" in _err(plain.getvalue())
    # structure referencing a missing array, and a structure that is not JSON
    for struct in [b'{"format": "ndgrad.save", "version": 1, "obj": {"T": "t9"}}', b"{nope"]:
        bad = io.BytesIO()
        np.savez(bad, __ndgrad__=np.frombuffer(struct, np.uint8))
        _err(bad.getvalue())


def test_pickle_inside_npz_is_never_unpickled(tmp_path):
    """An object array (which np.load would have to unpickle) is refused."""
    marker = os.path.join(tmp_path, "pwned")

    class Evil:
        def __reduce__(self):
            return (open, (marker, "w"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        arr = io.BytesIO()
        np.save(arr, np.array([Evil()], dtype=object), allow_pickle=True)
        z.writestr("t0.npy", arr.getvalue())
        s = io.BytesIO()
        np.save(s, np.frombuffer(b'{"format": "ndgrad.save", "version": 1, "obj": {"T": "t0"}}',
                                 np.uint8))
        z.writestr("__ndgrad__.npy", s.getvalue())
    _err(buf.getvalue())
    assert not os.path.exists(marker)
