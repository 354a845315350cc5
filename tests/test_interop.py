"""Array interop against torch 2.13: from_numpy / as_tensor / tensor with ndarray subclasses
(np.memmap keeps its dtype and memory), read-only arrays, objects torch does not read, and
DLPack both ways (ndgrad <-> torch, ndgrad <-> NumPy) sharing memory."""

import warnings

import numpy as np
import pytest
import torch

import ndgrad


class Sub(np.ndarray):
    pass


@pytest.fixture
def memmap(tmp_path):
    mm = np.memmap(str(tmp_path / "m.bin"), dtype=np.int64, mode="w+", shape=(2, 3))
    mm[:] = np.arange(6).reshape(2, 3)
    return mm


@pytest.mark.parametrize("factory", ["from_numpy", "as_tensor", "asarray"])
def test_memmap_and_subclasses_share_memory_and_keep_dtype(memmap, factory):
    for source in (memmap, np.arange(4.0).view(Sub)):
        n = getattr(ndgrad, factory)(source)
        t = getattr(torch, factory)(source)
        assert str(n.dtype) == str(t.dtype) and type(n) is ndgrad.Tensor
        source.flat[0] = 42
        assert n.tolist() == t.tolist() and n.flatten()[0].item() == 42
        n.view(-1)[1] = 7                          # and writes go back to the source
        assert source.flat[1] == 7
        source.flat[0] = 0
        source.flat[1] = 1


def test_tensor_copies_a_memmap(memmap):
    n, t = ndgrad.tensor(memmap), torch.tensor(memmap)
    memmap[0, 0] = 99
    assert n.tolist() == t.tolist() == [[0, 1, 2], [3, 4, 5]] and n.dtype == ndgrad.int64


def test_read_only_array_is_shared_with_torchs_warning():
    ro = np.arange(3.0)
    ro.flags.writeable = False
    ndgrad._creation._warned_not_writable = False
    with pytest.warns(UserWarning, match="The given NumPy array is not writable"):
        n = ndgrad.from_numpy(ro)
    assert n.tolist() == [0.0, 1.0, 2.0] and np.shares_memory(n.numpy(), ro)
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # once per process, as torch's
        ndgrad.from_numpy(ro)


class HasArray:
    def __array__(self, dtype=None, copy=None):
        return np.arange(3)


class HasInterface:
    def __init__(self):
        self.a = np.arange(3)
        self.__array_interface__ = self.a.__array_interface__


@pytest.mark.parametrize("make", [HasArray, HasInterface, object, lambda: {1: 2},
                                  lambda: {1, 2}, lambda: None, lambda: "abc",
                                  lambda: [1, "a"], lambda: [[1], [object()]]])
@pytest.mark.parametrize("factory", ["tensor", "as_tensor"])
def test_objects_torch_does_not_read_raise_its_error(make, factory):
    with pytest.raises(Exception) as te:
        getattr(torch, factory)(make())
    with pytest.raises(Exception) as ne:
        getattr(ndgrad, factory)(make())
    assert type(ne.value) is type(te.value) and str(ne.value) == str(te.value)


def test_numpy_reads_tensors_through_array_protocol():
    n = ndgrad.arange(6).reshape(2, 3)
    a = np.asarray(n)
    assert a.dtype == np.int64 and np.shares_memory(a, n.numpy())
    assert np.asarray(n, dtype=np.float32).dtype == np.float32
    assert np.array_equal(np.asarray(n), np.asarray(torch.arange(6).reshape(2, 3)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "uint8", "bool",
                                   "complex64", "float16"])
def test_dlpack_between_ndgrad_and_torch_shares_memory(dtype):
    src = np.arange(6).reshape(2, 3).astype(dtype)
    n = ndgrad.from_numpy(src.copy())
    t = torch.from_dlpack(n)                                   # protocol, ndgrad -> torch
    assert str(t.dtype) == str(n.dtype) and t.tolist() == n.tolist()
    assert t.data_ptr() == n.data_ptr()
    t2 = torch.from_numpy(src.copy())
    n2 = ndgrad.from_dlpack(t2)                                # protocol, torch -> ndgrad
    assert str(n2.dtype) == str(t2.dtype) and n2.data_ptr() == t2.data_ptr()
    n3 = ndgrad.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t2))   # capsules
    t3 = torch.utils.dlpack.from_dlpack(ndgrad.utils.dlpack.to_dlpack(n))
    assert n3.data_ptr() == t2.data_ptr() and t3.data_ptr() == n.data_ptr()
    assert n3.tolist() == t2.tolist() and t3.tolist() == n.tolist()


def test_dlpack_strides_devices_and_errors():
    n = ndgrad.arange(12.0).reshape(3, 4).t()
    t = torch.from_dlpack(n)
    assert t.stride() == n.stride() and t.tolist() == n.tolist()
    e = ndgrad.ones(3).expand(2, 3)
    assert torch.from_dlpack(e).tolist() == e.tolist()
    assert ndgrad.from_dlpack(torch.ones(3).expand(2, 3)).stride() == (0, 1)
    assert tuple(ndgrad.ones(1).__dlpack_device__()) == tuple(torch.ones(1).__dlpack_device__())
    for lib in (torch, ndgrad):
        with pytest.raises(BufferError, match="Can't export tensors that require gradient"):
            lib.ones(2, requires_grad=True).__dlpack__()
        cap = lib.utils.dlpack.to_dlpack(lib.ones(2))
        lib.utils.dlpack.from_dlpack(cap)
        with pytest.raises(RuntimeError, match="capsules can be consumed only once"):
            lib.utils.dlpack.from_dlpack(cap)
    a = np.arange(4.0)
    n = ndgrad.from_dlpack(a)
    a[0] = 9
    assert n[0].item() == 9.0 and np.from_dlpack(n)[0] == 9.0


@pytest.mark.parametrize("kw", [{}, {"count": 2, "offset": 4}, {"count": 5}, {"offset": 13},
                                {"offset": 2}, {"count": 0}, {"offset": -1}])
def test_frombuffer_like_torch(kw):
    def go(lib):
        ba = bytearray(np.array([1, 2, 3], dtype=np.int32).tobytes())
        try:
            t = lib.frombuffer(ba, dtype=lib.int32, **kw)
        except Exception as e:  # noqa: BLE001  (the exception is the observable)
            return type(e).__name__, str(e)
        ba[4] = 9                                       # shares the buffer's memory
        return str(t.dtype), t.tolist()
    assert go(ndgrad) == go(torch)


def test_frombuffer_read_only_and_empty():
    for lib in (torch, ndgrad):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")             # (torch warns once per process)
            t = lib.frombuffer(b"abcd", dtype=lib.uint8)
        assert t.tolist() == [97, 98, 99, 100]
        with pytest.raises(ValueError, match="must not be 0"):
            lib.frombuffer(bytearray(), dtype=lib.int32)
        with pytest.raises(ValueError, match="buffer protocol"):
            lib.frombuffer([1, 2], dtype=lib.int32)


def test_numpy_copies_and_views_like_torch():
    for lib in (torch, ndgrad):
        t = lib.arange(3.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)   # torch's __array__ lacks copy=
            copied = np.array(t)
            copied_f32 = np.array(t, dtype=np.float32)
            shared = np.asarray(t)
        copied[0] = 99.0
        copied_f32[1] = 99.0
        assert t.tolist() == [0.0, 1.0, 2.0]
        shared[2] = 5.0
        assert t.tolist() == [0.0, 1.0, 5.0]
