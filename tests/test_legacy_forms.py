"""Legacy call forms torch 2.13 still accepts, differential against torch: the legacy
constructors (``torch.Tensor(...)``, ``FloatTensor(...)``...) for every kind of input, the
deprecated scalar-first overloads (``addcmul_(value, t1, t2)``, ``add(x, value, other)``...),
``size=`` keywords of the factories, ``Tensor.tile(int)`` and ``cat`` with legacy empty
tensors."""

import warnings

import numpy as np
import pytest
import torch

import ndgrad
from _helpers import error_of

LIBS = (torch, ndgrad)


def _outcome(fn):
    """(dtype name, shape, values) of fn()'s tensor, or (exception class name, message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001  (the exception is the result compared)
            return type(e).__name__, str(e).split("\n")[0]
    return str(r.dtype), tuple(r.shape), r.tolist()


def _alike(fn):
    got = [_outcome(lambda L=L: fn(L)) for L in LIBS]
    assert got[1] == got[0]
    return got[0]


# ----------------------------------------------------------------------- legacy constructors
_CONSTRUCTORS = ["Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor",
                 "BoolTensor", "HalfTensor", "ByteTensor"]
_DATA = {
    "ndarray_f64": lambda L: (np.arange(3.0) + 0.5,),
    "ndarray_f32": lambda L: (np.arange(3, dtype=np.float32),),
    "ndarray_i64": lambda L: (np.arange(3),),
    "ndarray_2d": lambda L: (np.ones((2, 3)),),
    "list_int": lambda L: ([1, 2, 3],),
    "list_float": lambda L: ([[1.5, 2.0]],),
    "sizes": lambda L: (2, 3),
    "size_object": lambda L: (L.Size([4]),),
    "nothing": lambda L: (),
    "tensor_f32": lambda L: (L.arange(3.0),),
    "tensor_f64": lambda L: (L.arange(3.0, dtype=L.float64),),
    "tensor_i64": lambda L: (L.arange(3),),
    "untyped_storage": lambda L: (L.arange(4.0, dtype=L.float64).untyped_storage(),),
    "typed_storage_f32": lambda L: (L.arange(4.0).storage(),),
    "typed_storage_f64": lambda L: (L.arange(4.0, dtype=L.float64).storage(),),
}


@pytest.mark.parametrize("kind", sorted(_DATA))
@pytest.mark.parametrize("name", _CONSTRUCTORS)
def test_legacy_constructor_dtype_and_values(name, kind):
    def make(L):
        r = getattr(L, name)(*_DATA[kind](L))
        return r if kind not in ("sizes", "size_object") else L.zeros_like(r)  # uninitialised
    _alike(make)


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_tensor_constructor_follows_the_default_dtype(default):
    for L in LIBS:
        old = L.get_default_dtype()
        L.set_default_dtype(getattr(L, default))
        try:
            got = [L.Tensor(np.ones(2, dtype=np.float32)).dtype, L.Tensor([1]).dtype,
                   L.Tensor(np.arange(2)).dtype, L.FloatTensor(np.ones(2)).dtype]
        finally:
            L.set_default_dtype(old)
        assert [str(d) for d in got] == [f"torch.{default}", f"torch.{default}",
                                         f"torch.{default}", "torch.float32"]


def test_tensor_constructor_memory_sharing_as_torch():
    """An ndarray of the default dtype, a tensor and a storage are shared; others copied."""
    def shares(L):
        a32, a64 = np.zeros(2, dtype=np.float32), np.zeros(2)
        t = L.arange(2.0, dtype=L.float64)
        made = [L.Tensor(a32), L.Tensor(a64), L.Tensor(t), L.DoubleTensor(t.untyped_storage())]
        a32[0] = a64[0] = 7
        t[1] = 9
        return [m.tolist() for m in made]
    assert shares(ndgrad) == shares(torch)


def test_tensor_constructor_matmul_after_float64_ndarray():
    """The case libraries hit: Tensor(float64 data) @ a float32 parameter works."""
    def run(L):
        L.manual_seed(0)
        lin = L.nn.Linear(3, 2)
        with L.no_grad():
            lin.weight.copy_(L.arange(6.0).reshape(2, 3))
            lin.bias.zero_()
        return lin(L.Tensor(np.arange(6.0).reshape(2, 3) / 7))
    assert _outcome(lambda: run(ndgrad)) == _outcome(lambda: run(torch))


def test_legacy_constructor_refusals():
    for fn in (lambda L: L.Tensor(1, 2, dtype=L.float64),
               lambda L: L.FloatTensor(L.ones(2, dtype=L.float64)),
               lambda L: L.Tensor([1, 2], [3]),
               lambda L: L.FloatTensor(L.ones(2, dtype=L.float64).storage())):
        errs = [error_of(lambda L=L: fn(L)) for L in LIBS]
        assert errs[0] is not None and errs[1] is not None
        assert errs[1][0] is errs[0][0] or errs[1][0].__name__ == errs[0][0].__name__
