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


def _alike(fn, rtol=0.0):
    """Same dtype, shape and values (to `rtol`), or the same exception and message (for a
    TypeError only the class: torch's argument parser words those its own way)."""
    theirs, ours = (_outcome(lambda L=L: fn(L)) for L in LIBS)
    if theirs[0] == "TypeError" or len(theirs) == 2:
        assert ours[0] == theirs[0] and (theirs[0] == "TypeError" or ours == theirs), ours
    else:
        assert ours[:2] == theirs[:2]
        np.testing.assert_allclose(ours[2], theirs[2], rtol=rtol, atol=0)
    return theirs


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


# ------------------------------------------------------------------------- size= keywords
_SIZE_CALLS = {
    "zeros": lambda L: L.zeros(size=[2, 3]),
    "ones": lambda L: L.ones(size=(2,), dtype=L.float64),
    "empty": lambda L: L.zeros_like(L.empty(size=L.Size([3, 1]))),
    "rand": lambda L: (L.manual_seed(0), L.rand(size=[2, 2]))[1],
    "randn": lambda L: (L.manual_seed(0), L.randn(size=[4], dtype=L.float64))[1],
    "randn_generator": lambda L: L.randn(size=(3,), generator=L.Generator().manual_seed(3)),
    "randint": lambda L: (L.manual_seed(0), L.randint(5, size=(4,)))[1],
    "full": lambda L: L.full(size=[2], fill_value=1.5),
    "new_zeros": lambda L: L.ones(2, dtype=L.int64).new_zeros(size=(2, 2)),
    "new_ones": lambda L: L.ones(2).new_ones(size=[3]),
    "new_empty": lambda L: L.zeros_like(L.ones(2).new_empty(size=[3])),
    "new_full": lambda L: L.ones(2).new_full(size=(2,), fill_value=3),
    "new_zeros_requires_grad": lambda L: L.ones(1).new_zeros(2, requires_grad=True).requires_grad,
    "both": lambda L: L.zeros(2, size=(2,)),
    "both_randn": lambda L: L.randn(2, size=(2,)),
    "int_size": lambda L: L.zeros(size=3),
    "int_size_randn": lambda L: L.randn(size=3),
}


@pytest.mark.parametrize("case", sorted(_SIZE_CALLS))
def test_size_keyword(case):
    def run(L):
        r = _SIZE_CALLS[case](L)
        return r if isinstance(r, L.Tensor) else L.tensor(r)
    _alike(run)


# ------------------------------------------------------------------------------------ tile
_TILE = {
    "int": lambda L, x: x.tile(2), "ints": lambda L, x: x.tile(2, 3),
    "tuple": lambda L, x: x.tile((2,)), "list": lambda L, x: x.tile([1, 2, 2]),
    "empty": lambda L, x: x.tile(()), "dims_kw": lambda L, x: x.tile(dims=(2, 1)),
    "dims_kw_int": lambda L, x: x.tile(dims=2), "float": lambda L, x: x.tile(2.0),
    "function_tuple": lambda L, x: L.tile(x, (2,)), "function_int": lambda L, x: L.tile(x, 2),
}


@pytest.mark.parametrize("case", sorted(_TILE))
def test_tile_forms(case):
    def run(L):
        x = L.arange(6.0).reshape(2, 3).requires_grad_()
        y = _TILE[case](L, x)
        (y * L.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        return L.cat([y.detach().reshape(-1), x.grad.reshape(-1)])
    _alike(run)


# ------------------------------------------------------------------------- cat with empties
_CAT = {
    "0d": lambda L, x: L.cat([x, L.tensor(1.0)]),
    "0d_first": lambda L, x: L.cat([L.tensor(1.0), x]),
    "0d_with_1d": lambda L, x: L.cat([L.ones(2), L.tensor(1.0)]),
    "only_0d": lambda L, x: L.cat([L.tensor(1.0), L.tensor(2.0)]),
    "1d_empty": lambda L, x: L.cat([x, L.tensor([])]),
    "1d_empty_first": lambda L, x: L.cat([L.tensor([]), x]),
    "1d_empty_dim1": lambda L, x: L.cat([L.tensor([]), x, L.tensor([])], dim=1),
    "1d_empty_dim_neg": lambda L, x: L.cat([x, L.tensor([])], dim=-1),
    "1d_empty_int": lambda L, x: L.cat([x, L.tensor([], dtype=L.int64)]),
    "1d_empty_f64": lambda L, x: L.cat([x, L.empty(0, dtype=L.float64)]),
    "1d_nonempty": lambda L, x: L.cat([x, L.ones(3)]),
    "2d_empty": lambda L, x: L.cat([x, L.empty(0, 3)]),
    "2d_empty_wrong": lambda L, x: L.cat([x, L.empty(0, 2)]),
    "3d_empty": lambda L, x: L.cat([x, L.empty(0, 0, 0)]),
    "only_empty": lambda L, x: L.cat([L.tensor([]), L.tensor([], dtype=L.float64)]),
    "empty_dim_out_of_range": lambda L, x: L.cat([x, L.tensor([])], dim=5),
    "concat": lambda L, x: L.concat([x, L.tensor([])]),
    "concatenate_axis": lambda L, x: L.concatenate([L.tensor([]), x], axis=1),
}


@pytest.mark.parametrize("case", sorted(_CAT))
def test_cat_with_legacy_empty_tensors(case):
    def run(L):
        x = L.arange(6.0).reshape(2, 3).requires_grad_()
        y = _CAT[case](L, x)
        if not y.requires_grad:
            return y
        (y * L.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        return L.cat([y.detach().reshape(-1), x.grad.reshape(-1)])
    _alike(run)


# ------------------------------------------------------------- deprecated scalar-first forms
def _mats(L):
    a = L.arange(1.0, 5.0).reshape(2, 2)
    b = L.arange(2.0, 6.0).reshape(2, 2).requires_grad_()
    c = (L.ones(2, 2) * 3).requires_grad_()
    return a, b, c


_SCALAR_FIRST = {
    "add_function": lambda L, a, b, c: L.add(a, 2, b),
    "add_method": lambda L, a, b, c: a.add(2, b),
    "add_inplace": lambda L, a, b, c: a.add_(2, b),
    "add_tensor_alpha": lambda L, a, b, c: a.add(L.tensor(2.0), b),
    "add_number_other": lambda L, a, b, c: L.add(a, 2, 3),
    "add_out": lambda L, a, b, c: L.add(a, 2, b.detach(), out=L.empty(2, 2)),
    "sub_function": lambda L, a, b, c: L.sub(a, 2, b),
    "sub_method": lambda L, a, b, c: a.sub(0.5, b),
    "sub_inplace": lambda L, a, b, c: a.sub_(2, b),
    "addcmul_function": lambda L, a, b, c: L.addcmul(a, 2, b, c),
    "addcmul_method": lambda L, a, b, c: a.addcmul(0.5, b, c),
    "addcmul_inplace": lambda L, a, b, c: a.addcmul_(2, b, c),
    "addcmul_tensor_value": lambda L, a, b, c: a.addcmul(L.tensor(2.0), b, c),
    "addcdiv_function": lambda L, a, b, c: L.addcdiv(a, 2, b, c),
    "addcdiv_method": lambda L, a, b, c: a.addcdiv(2, b, c),
    "addcdiv_inplace": lambda L, a, b, c: a.addcdiv_(-1, b, c),
    "addcdiv_integer": lambda L, a, b, c: a.long().addcdiv(2, b.long(), c.long()),
    "addmm_function": lambda L, a, b, c: L.addmm(2, a, 3, b, c),
    "addmm_function_beta": lambda L, a, b, c: L.addmm(2, a, b, c),
    "addmm_method": lambda L, a, b, c: a.addmm(2, 3, b, c),
    "addmm_method_beta": lambda L, a, b, c: a.addmm(2, b, c),
    "addmm_inplace": lambda L, a, b, c: a.addmm_(2, 3, b, c),
    "addmm_inplace_beta": lambda L, a, b, c: a.addmm_(2, b, c),
    "addmm_out": lambda L, a, b, c: L.addmm(2, a, 3, b.detach(), c.detach(),
                                            out=L.empty(2, 2)),
    "addmv_function": lambda L, a, b, c: L.addmv(2, a[0], 3, b, c[0]),
    "addmv_method": lambda L, a, b, c: a[0].addmv(2, 3, b, c[0]),
    "addmv_inplace": lambda L, a, b, c: a[0].clone().addmv_(2, 3, b, c[0]),
    "addr_function": lambda L, a, b, c: L.addr(2, a, 3, b[0], c[0]),
    "addr_method": lambda L, a, b, c: a.addr(2, 3, b[0], c[0]),
    "addr_inplace": lambda L, a, b, c: a.addr_(2, b[0], c[0]),
    "addbmm_function": lambda L, a, b, c: L.addbmm(2, a, 3, b[None], c[None]),
    "addbmm_method": lambda L, a, b, c: a.addbmm(2, 3, b[None], c[None]),
    "addbmm_inplace": lambda L, a, b, c: a.addbmm_(2, 3, b[None], c[None]),
    "baddbmm_function": lambda L, a, b, c: L.baddbmm(2, a[None], 3, b[None], c[None]),
    "baddbmm_method": lambda L, a, b, c: a[None].baddbmm(2, 3, b[None], c[None]),
    "baddbmm_inplace": lambda L, a, b, c: a[None].clone().baddbmm_(2, b[None], c[None]),
    "refused_tensor_scalar": lambda L, a, b, c: L.add(a, b, c),
    "refused_twice": lambda L, a, b, c: a.addcmul(2, b, c, value=3),
}


@pytest.mark.parametrize("case", sorted(_SCALAR_FIRST))
def test_deprecated_scalar_first_overloads(case):
    """Values, the self of an in-place form afterwards, and the gradients of the tensors."""
    def run(L):
        a, b, c = _mats(L)
        y = _SCALAR_FIRST[case](L, a, b, c)
        parts = [y.detach().reshape(-1).double(), a.reshape(-1).double()]
        if y.requires_grad:
            (y * L.arange(float(y.numel())).reshape(y.shape)).sum().backward()
            parts += [t.grad.reshape(-1) for t in (b, c) if t.grad is not None]
        return L.cat(parts)
    _alike(run, rtol=1e-6)  # addcdiv's backward rounds its float32 quotient differently


_WARNING_SCRIPT = """
import warnings, sys
warnings.simplefilter("always")
import {lib} as L
a, b = L.ones(2, 2), L.ones(2, 2)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    {calls}
print(repr([str(x.message).split(" (Triggered")[0] for x in w]))
"""


@pytest.mark.parametrize("calls", ["a.addcmul_(2, b, b); a.add_(2, b)",
                                   "L.addmm(2, a, 3, b, b); a.addmm_(2, b, b)",
                                   "a.sub(2, b)", "a.addr_(2, 3, b[0], b[0])"])
def test_deprecated_overload_warns_once_per_process(calls):
    """torch warns at the first deprecated overload of the process only, in these words."""
    import subprocess
    import sys
    out = [subprocess.run([sys.executable, "-c", _WARNING_SCRIPT.format(lib=lib, calls=calls)],
                          capture_output=True, text=True, check=True).stdout
           for lib in ("torch", "ndgrad")]
    theirs, ours = (eval(o) for o in out)  # noqa: S307  (our own repr of a list of str)
    assert len(ours) == len(theirs) == 1
    assert ours[0].split("\n")[:2] == theirs[0].split("\n")[:2]
