"""``assert_close``, ``make_tensor`` and the deprecated ``assert_allclose``, as
``torch.testing`` has them.

``assert_close`` compares tensors, numbers, NumPy arrays and (nested) sequences/mappings of
them with dtype-dependent default tolerances (``|a - e| <= atol + rtol * |e|``), checks
shape, dtype and device, and raises an AssertionError whose message says how many elements
mismatch and where the greatest differences are (torch's wording).

``make_tensor`` draws from ndgrad's global generator (so ``ndgrad.manual_seed`` makes it
reproducible) with torch's defaults: floats uniform in [-9, 9), integers in [-9, 10).
"""

import collections.abc
import math
import warnings

import numpy as np
from .. import _creation, _dtype
from .._tensor import Tensor

__all__ = ["assert_close", "assert_allclose", "default_tolerances", "make_tensor"]

# (rtol, atol) by NumPy dtype name, as torch.testing._comparison's table.
_TOLS = {
    "float16": (1e-3, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def default_tolerances(*dtypes):
    """The loosest default (rtol, atol) over ndgrad dtypes / NumPy dtypes (0, 0 for exact ones)."""
    rtol = atol = 0.0
    for dt in dtypes:
        name = dt.name if hasattr(dt, "is_floating_point") else np.dtype(dt).name
        r, a = _TOLS.get(name, (1.6e-2, 1e-5) if name == "bfloat16" else (0.0, 0.0))
        rtol, atol = max(rtol, r), max(atol, a)
    return rtol, atol


def _is_tensor(x):
    return isinstance(x, Tensor)


class _Fail(Exception):
    """A mismatch: becomes an AssertionError with torch's message."""


class _TypeFail(Exception):
    """Inputs no comparison handles: becomes a TypeError (as torch)."""


def _no_pair(actual, expected):
    return _TypeFail(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                     f"{type(expected)}.")


def _tensor_like(x):
    """(array, dtype-like, kind) for comparable leaves; None for anything else."""
    if _is_tensor(x):
        return x._data, x.dtype, "tensor"
    if isinstance(x, np.ndarray):
        return x, x.dtype, "array"
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return np.asarray(x), None, "number"
    return None


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Assert `actual` and `expected` are close (see ``torch.testing.assert_close``).

    >>> import ndgrad
    >>> ndgrad.testing.assert_close(ndgrad.tensor([1.0, 2.0]), ndgrad.tensor([1.0, 2.0 + 1e-7]))
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    try:
        _compare(actual, expected, (), rtol, atol, equal_nan, check_dtype, allow_subclasses)
    except _TypeFail as exc:
        raise TypeError(str(exc)) from None
    except _Fail as exc:
        text = str(exc)
        if msg is not None:
            text = msg(text) if callable(msg) else msg
        raise AssertionError(text) from None


def _compare(actual, expected, path, rtol, atol, equal_nan, check_dtype, allow_subclasses):
    a = _tensor_like(actual)
    e = _tensor_like(expected)
    if a is not None and e is not None:
        if a[2] != e[2] and (not allow_subclasses or {a[2], e[2]} != {"tensor", "array"}):
            raise _no_pair(actual, expected)
        if a[2] == "number" and type(actual) is not type(expected) and \
                not (isinstance(actual, np.generic) or isinstance(expected, np.generic)):
            raise _Fail(f"The values for attribute 'type' do not match: {type(actual)} != "
                        f"{type(expected)}." + _where(path))
        _compare_arrays(a, e, path, rtol, atol, equal_nan, check_dtype, actual, expected)
        return
    if isinstance(actual, str) or isinstance(expected, str):
        raise _no_pair(actual, expected)
    if isinstance(actual, collections.abc.Mapping) and \
            isinstance(expected, collections.abc.Mapping):
        ka, ke = set(actual.keys()), set(expected.keys())
        if ka != ke:
            raise _Fail(f"The keys of the mappings do not match:\n"
                        f"Missing keys in the actual mapping: {sorted(map(str, ke - ka))}\n"
                        f"Additional keys in the actual mapping: {sorted(map(str, ka - ke))}"
                        + _where(path))
        for k in actual:
            _compare(actual[k], expected[k], (*path, k), rtol, atol, equal_nan, check_dtype,
                     allow_subclasses)
        return
    if isinstance(actual, collections.abc.Sequence) and \
            isinstance(expected, collections.abc.Sequence):
        if len(actual) != len(expected):
            raise _Fail(f"The length of the sequences mismatch: {len(actual)} != "
                        f"{len(expected)}" + _where(path))
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare(x, y, (*path, i), rtol, atol, equal_nan, check_dtype, allow_subclasses)
        return
    if actual is None and expected is None:
        return
    raise _no_pair(actual, expected)


def _where(path):
    if not path:
        return ""
    return "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)


def _compare_arrays(a, e, path, rtol, atol, equal_nan, check_dtype, actual, expected):
    ad, adt, akind = a
    ed, edt, ekind = e
    if ad.shape != ed.shape:
        raise _Fail(f"The values for attribute 'shape' do not match: "
                    f"{_shape(ad.shape, akind)} != {_shape(ed.shape, ekind)}." + _where(path))
    if check_dtype and akind != "number" and ad.dtype != ed.dtype:
        raise _Fail(f"The values for attribute 'dtype' do not match: "
                    f"{_dtype_repr(adt, ad)} != {_dtype_repr(edt, ed)}." + _where(path))
    if rtol is None:
        rtol, atol = default_tolerances(ad.dtype, ed.dtype)
    common = np.result_type(ad.dtype, ed.dtype)
    if common.kind in "biu":
        common = np.dtype(np.int64)  # torch compares bools and integers exactly, as integers
    x = ad.astype(common)
    y = ed.astype(common)
    with np.errstate(all="ignore"):
        ok = x == y
        if common.kind in "iu":
            if rtol or atol:
                ok |= np.abs(x - y) <= atol + rtol * np.abs(y)
        else:
            # Unequal values are close only when both are finite (inf vs -inf never is).
            both_finite = np.isfinite(x) & np.isfinite(y)
            ok |= both_finite & (np.abs(x - y) <= atol + rtol * np.abs(y))
            if equal_nan:
                ok |= _isnan(x) & _isnan(y)
    if ok.all():
        return
    scalar = akind == "number" or ad.ndim == 0
    raise _Fail(_mismatch(x, y, ok, rtol, atol, scalar, common, actual, expected)
                + _where(path))


def _isnan(v):
    return np.isnan(v.real) | np.isnan(v.imag) if v.dtype.kind == "c" else np.isnan(v)


def _shape(shape, kind):
    return f"torch.Size({list(shape)})" if kind == "tensor" else str(tuple(shape))


def _dtype_repr(dt, arr):
    if dt is None:
        return str(arr.dtype)
    return repr(dt) if hasattr(dt, "is_floating_point") else str(dt)


def _index(flat_i, shape):
    idx = np.unravel_index(flat_i, shape) if shape else ()
    return "(" + ", ".join(str(int(i)) for i in idx) + ("," if len(idx) == 1 else "") + ")"


def _first_max(v):
    """torch.max semantics: a NaN wins (the first one), else the first maximum."""
    flat = v.reshape(-1)
    nans = np.flatnonzero(np.isnan(flat)) if flat.dtype.kind == "f" else ()
    k = int(nans[0]) if len(nans) else int(np.argmax(flat))
    return flat[k], k


def _num(v, integral):
    return str(int(v)) if integral else repr(float(v))


def _mismatch(x, y, ok, rtol, atol, scalar, common, actual, expected):
    integral = common.kind in "iu"
    exact = rtol == 0 and atol == 0
    verb = "equal" if exact else "close"
    with np.errstate(all="ignore"):
        abs_diff = np.abs(x - y)
        if integral:
            # torch divides integer differences in its default float dtype (float32).
            rel_diff = abs_diff.astype(np.float32) / np.abs(y).astype(np.float32)
        else:
            rel_diff = abs_diff / np.abs(y)
    max_abs, i_abs = _first_max(abs_diff)
    max_rel, i_rel = _first_max(rel_diff)
    a_tol = "" if exact else f" (up to {atol} allowed)"
    r_tol = "" if exact else f" (up to {rtol} allowed)"
    if scalar:
        got = actual.item() if _is_tensor(actual) else actual
        want = expected.item() if _is_tensor(expected) else expected
        return (f"Scalars are not {verb}!\n\nExpected {want} but got {got}.\n"
                f"Absolute difference: {_num(max_abs, integral)}{a_tol}\n"
                f"Relative difference: {float(max_rel)!r}{r_tol}")
    bad = int((~ok).sum())
    total = ok.size
    return (f"Tensor-likes are not {verb}!\n\n"
            f"Mismatched elements: {bad} / {total} ({100.0 * bad / total:.1f}%)\n"
            f"Greatest absolute difference: {_num(max_abs, integral)} at index "
            f"{_index(i_abs, ok.shape)}{a_tol}\n"
            f"Greatest relative difference: {float(max_rel)!r} at index "
            f"{_index(i_rel, ok.shape)}{r_tol}")


# --------------------------------------------------------------------------- make_tensor
def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A random tensor of `shape` and `dtype` (see ``torch.testing.make_tensor``).

    Floats/complex parts are uniform in [low, high) (default [-9, 9)); integers in
    [low, high) (default [-9, 10), clipped to the dtype's range); bools are fair coins.
    `noncontiguous` returns a strided view of a twice-as-large tensor; `exclude_zero`
    replaces zeros with the dtype's tiny (floats) or 1 (integers).

    >>> import ndgrad
    >>> ndgrad.testing.make_tensor(2, 3, dtype=ndgrad.float32, low=0, high=1).shape
    torch.Size([2, 3])
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)) or \
            (len(shape) == 1 and hasattr(shape[0], "__iter__")):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"make_tensor: requires_grad=True is not supported for {dtype}")
    for v, n in ((low, "low"), (high, "high")):
        if v is not None and isinstance(v, float) and math.isnan(v):
            raise ValueError(f"`{n}` cannot be NaN, but got {n}={v}")
    alloc = shape[:-1] + (shape[-1] * 2,) if noncontiguous and shape and shape[-1] > 0 \
        else shape
    n = int(np.prod(alloc)) if alloc else 1
    npdt = dtype.np
    if npdt.kind == "b":
        arr = _creation.rand(n, dtype=_dtype.float64)._data < 0.5
    elif npdt.kind in "iu":
        info = np.iinfo(npdt)
        lo = max(-9 if low is None else math.ceil(low), int(info.min))
        hi = min(10 if high is None else math.ceil(high), int(info.max) + 1)
        if lo >= hi:
            raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
        u = _creation.rand(n, dtype=_dtype.float64)._data
        arr = np.minimum(lo + np.floor(u * (hi - lo)), hi - 1).astype(npdt)
    else:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        if lo > hi:
            raise ValueError(f"`low` must be less than or equal to `high`, but got {low} > "
                             f"{high}")
        real = np.dtype(np.float32 if npdt == np.complex64 else
                        np.float64 if npdt == np.complex128 else npdt)
        finfo = np.finfo(real)
        lo, hi = max(lo, float(finfo.min)), min(hi, float(finfo.max))

        def draw():
            u = _creation.rand(n, dtype=_dtype.float64)._data
            return (lo + u * (hi - lo)).astype(real)
        arr = draw() if npdt.kind == "f" else (draw() + 1j * draw()).astype(npdt)
    arr = arr.reshape(alloc)
    if exclude_zero:
        if npdt.kind in "iu" or npdt.kind == "b":
            arr[arr == 0] = 1
        else:
            tiny = np.finfo(arr.real.dtype).tiny
            arr[arr == 0] = tiny
    if noncontiguous and alloc != shape:
        arr = arr[..., ::2]
    t = Tensor(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


# torch.testing.assert_allclose: the pre-1.12 form, looser float tolerances, dtypes not checked
_ALLCLOSE_TOLS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated: ``assert_close`` with torch's old defaults (dtype not compared, NaN equal)."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed "
                  "in a future release. Please use `torch.testing.assert_close()` instead. You "
                  "can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = _creation.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _creation.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLS.get(t._data.dtype.name, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
