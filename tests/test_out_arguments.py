"""``out=`` swept over torch's op database, differential against torch 2.13: for every OpInfo
that supports ``out=`` and calls a public function of ``torch``, ``torch.linalg``,
``torch.special`` or ``torch.fft`` that ndgrad has, its first samples are run with an out of
the result's shape and dtype, an out of another shape (resized, with torch's warning unless
it was empty), an out of a wider or of an integer dtype (written with a cast, or refused with
torch's error), and inputs that require grad (refused under grad mode, accepted under
no_grad). Outcomes must agree: the values written, the dtype and shape of out, that out itself
is returned, whether the resize warned, or the exception class and message.

Beside the sweep: the factories (``zeros``, ``arange``...), which op_db gives no out samples,
and a few cases by hand (aliasing out, tuple outs, a non-tensor out).
"""

import functools
import itertools
import warnings

import numpy as np
import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import _torch_opdb as H
import ndgrad

_SPACES = ("torch", "torch.linalg", "torch.special", "torch.fft")
_N = 3  # samples per op


def _public_name(op):
    hits = H._reverse_index().get(id(op.op)) or []
    return next((f"{p}.{n}" for p, n in hits if p in _SPACES), None)


@functools.lru_cache(None)
def _out_ops():
    chosen = {}
    for op in op_db:
        if not op.supports_out or H.skip_reason(op) or _public_name(op) is None:
            continue
        if isinstance(H.nd_of(op.op), H.Missing):
            continue  # ndgrad does not have the function (a gap the coverage doc counts)
        chosen.setdefault(op.full_name, op)
    return [chosen[k] for k in sorted(chosen)]


def _dtype(op):
    dts = op.supported_dtypes("cpu")
    return next((d for d in (torch.float32, torch.float64, torch.int64, torch.bool)
                 if d in dts), None)


def _results(r):
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


def _make_outs(lib, ref, variant):
    """Out tensors for `ref` (torch's result without out) in library `lib`."""
    def one(t):
        dt = getattr(lib, str(t.dtype).split(".")[1])
        shape = tuple(t.shape)
        if variant == "resize":
            return lib.zeros(t.numel() + 2, dtype=dt)
        if variant == "empty":
            return lib.empty(0, dtype=dt)
        if variant == "wider" and t.dtype in (torch.float32, torch.int64):
            dt = lib.float64 if t.dtype == torch.float32 else lib.float32
        if variant == "integer":
            dt = lib.int64 if t.dtype != torch.int64 else lib.int32
        return lib.zeros(shape, dtype=dt)
    outs = tuple(one(t) for t in _results(ref))
    return outs if isinstance(ref, (tuple, list)) else outs[0]


def _message(e):
    """An error's class and text, with the name torch puts first (often an internal op's:
    ``_linalg_solve_ex():``) left out."""
    text = str(e).split("\n")[0]
    head, sep, tail = text.partition("(): ")
    return type(e).__name__, (tail if sep and " " not in head else text)


def _outcome(lib, fn, args, kwargs, variant, ref, grad_mode=True):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = _make_outs(lib, ref, variant)
            with lib.set_grad_enabled(grad_mode):
                got = fn(*args, **kwargs, out=out)
        except Exception as e:  # noqa: BLE001  (the refusal is the outcome compared)
            return _message(e)
    resized = any("was resized" in str(w.message) for w in caught)
    outs = _results(out)
    returned = all(a is b for a, b in zip(_results(got), outs)) and \
        len(_results(got)) == len(outs)
    return "ok", returned, resized, [(str(o.dtype), tuple(o.shape)) for o in outs], \
        [H.to_np(o)[2] for o in outs]


def _compare(th, nd, values, where, wording=True):
    """Same outcome; a refusal's message too when `wording` (torch words its dtype refusals
    per kernel, in some twenty ways: for those the exception class is compared)."""
    if th[0] != "ok" or nd[0] != "ok":
        assert nd[:2 if wording else 1] == th[:2 if wording else 1], where
        return
    assert nd[:4] == th[:4], where
    if values:
        for a, b in zip(nd[4], th[4]):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True,
                                       err_msg=where)


def _with_grad(s_args):
    """The sample's arguments with its first floating tensor requiring grad (or None)."""
    ti, ta, tk = s_args
    if isinstance(ti, torch.Tensor) and ti.dtype.is_floating_point:
        return (ti.detach().clone().requires_grad_(), ta, tk)
    return None


_VARIANTS = ("same", "resize", "empty", "wider", "integer")

# Known differences: in each of these ops some sample differs from torch (asserted, so that a
# fixed one fails until it is removed here).
_SAMPLE_DEPENDENT = "torch's out= rule (exact dtype or cast, grad refusal or not) depends on " \
    "the sample (composite out= kernels), ndgrad's on the op only"
KNOWN = {
    "diff": _SAMPLE_DEPENDENT, "inner": _SAMPLE_DEPENDENT,
    "linalg.matrix_power": _SAMPLE_DEPENDENT, "linalg.norm": _SAMPLE_DEPENDENT,
    "linalg.norm.subgradients_at_zero": _SAMPLE_DEPENDENT, "linalg.pinv": _SAMPLE_DEPENDENT,
    "norm.nuc": _SAMPLE_DEPENDENT, "scatter": _SAMPLE_DEPENDENT,
    "lu": "torch.lu's Python out= path writes even when A requires grad",
    "matmul": "torch resizes one of matmul's outs with a warning where the shapes agree",
    "native_batch_norm": "native_batch_norm's saved statistics are empty in ndgrad",
    "linalg.eig": "eigenvectors are unique up to a phase: the values differ",
    "fft.ihfftn": "one sample's values differ from torch's ihfftn with out=",
}


@pytest.mark.parametrize("op", _out_ops(), ids=lambda op: op.full_name)
def test_out_argument_as_torch(op):
    dtype = _dtype(op)
    if dtype is None:
        pytest.fail(f"{op.full_name}: no dtype among float32, float64, int64, bool")
    values = op.name not in H.RANDOM_OPS and op.name not in H.UNINITIALIZED_OPS
    nd_fn = H.nd_of(op.op)
    torch.manual_seed(0)
    with torch.no_grad():
        samples = list(itertools.islice(op.sample_inputs("cpu", dtype), _N))
    assert samples
    differed = set()
    for i, s in enumerate(samples):
        s_args = H._clone_sample(s)
        ti, ta, tk = s_args
        try:
            ref = op.op(ti, *ta, **tk)
        except Exception:  # noqa: BLE001  (torch refuses the sample without out too)
            continue
        if not all(isinstance(t, torch.Tensor) for t in _results(ref)):
            continue
        cases = [(v, s_args, True) for v in _VARIANTS]
        grad_args = _with_grad(s_args)
        if grad_args is not None:
            cases += [("same", grad_args, True), ("same", grad_args, False)]
        for variant, (ti, ta, tk), grad_mode in cases:
            nd_args = (H.to_nd(ti), H.to_nd(ta), H.to_nd(tk))
            torch.manual_seed(1)
            th = _outcome(torch, op.op, (ti,) + tuple(ta), tk, variant, ref, grad_mode)
            ndgrad.manual_seed(1)
            nd = _outcome(ndgrad, nd_fn, (nd_args[0],) + tuple(nd_args[1]), nd_args[2],
                          variant, ref, grad_mode)
            where = f"{op.full_name} sample {i} {variant} grad_mode={grad_mode}: torch " \
                    f"{th[:2]} ndgrad {nd[:2]}"
            try:
                _compare(th, nd, values, where, wording=variant not in ("wider", "integer"))
            except AssertionError:
                if op.full_name not in KNOWN:
                    raise
                differed.add(op.full_name)
    if op.full_name in KNOWN:
        assert differed, f"{op.full_name} agrees with torch now: remove it from KNOWN"


# ------------------------------------------------------------------------------ factories
_FACTORIES = {
    "zeros": lambda L, out: L.zeros(2, 3, out=out),
    "ones": lambda L, out: L.ones((2, 3), out=out),
    "full": lambda L, out: L.full((2,), 1.5, out=out),
    "arange": lambda L, out: L.arange(0, 5, 2, out=out),
    "range": lambda L, out: L.range(0, 4, out=out),
    "linspace": lambda L, out: L.linspace(0, 1, 5, out=out),
    "logspace": lambda L, out: L.logspace(0, 1, 4, out=out),
    "eye": lambda L, out: L.eye(3, out=out),
    "empty": lambda L, out: L.empty(2, 2, out=out).zero_(),
    "rand_shape": lambda L, out: L.rand(2, 5, out=out).mul(0),
    "randn_shape": lambda L, out: L.randn(4, out=out).mul(0),
    "randint_shape": lambda L, out: L.randint(3, (4,), out=out).mul(0),
    "randperm_shape": lambda L, out: L.randperm(4, out=out).sort().values,
}


@pytest.mark.parametrize("variant", ["same_float", "resize", "empty", "double", "long"])
@pytest.mark.parametrize("name", sorted(_FACTORIES))
def test_factory_out_argument_as_torch(name, variant):
    def run(L):
        dt = {"double": L.float64, "long": L.int64}.get(variant, L.float32)
        if name in ("randint_shape", "randperm_shape") and variant == "same_float":
            dt = L.int64
        n = {"resize": 1, "empty": 0}.get(variant)
        out = L.zeros(n, dtype=dt) if n is not None else L.zeros(0, dtype=dt)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                got = _FACTORIES[name](L, out)
            except Exception as e:  # noqa: BLE001
                return _message(e)
        return (got is out or name.endswith("_shape") or name == "empty",
                any("was resized" in str(w.message) for w in caught), str(out.dtype),
                tuple(out.shape), got.tolist())
    assert run(ndgrad) == run(torch)


# ---------------------------------------------------------------------------- by hand
def test_out_aliasing_an_input_and_version_counter():
    def run(L):
        x = L.arange(4.0)
        v = x._version
        y = L.rsqrt(x + 1, out=x)
        z = L.add(x, x, out=x)
        return y is x and z is x, x._version - v, x.tolist()
    assert run(ndgrad) == run(torch)


def test_out_that_is_a_view_writes_through():
    def run(L):
        base = L.zeros(2, 3)
        L.exp(L.zeros(3), out=base[1])
        L.neg(L.ones(2), out=base[:, 0])
        return base.tolist()
    assert run(ndgrad) == run(torch)


@pytest.mark.parametrize("bad", ["int", "list_for_tensor", "tensor_for_tuple", "short_tuple"])
def test_out_of_the_wrong_kind_is_a_type_error(bad):
    def run(L):
        x = L.arange(6.0).reshape(2, 3)
        calls = {"int": lambda: L.tanh(x, out=3),
                 "list_for_tensor": lambda: L.sigmoid(x, out=[L.empty(2, 3)]),
                 "tensor_for_tuple": lambda: L.sort(x, out=L.empty(2, 3)),
                 "short_tuple": lambda: L.sort(x, out=(L.empty(2, 3),))}
        try:
            calls[bad]()
        except Exception as e:  # noqa: BLE001
            return type(e).__name__
        return "accepted"
    assert run(ndgrad) == run(torch) == "TypeError"


def test_refused_out_changes_nothing():
    for L in (ndgrad, torch):
        x = L.ones(3, requires_grad=True)
        out = L.full((2,), 7.0)
        v = out._version
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            L.tanh(x, out=out)
        with pytest.raises(RuntimeError, match="can't be cast"):
            L.tanh(x.detach(), out=L.zeros(3, dtype=L.int64))
        assert out.tolist() == [7.0, 7.0] and out._version == v and x.grad is None
