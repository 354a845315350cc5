"""Generic suites over every entry of the op database (``ndgrad.testing.opdb``).

Each suite is differential against torch 2.13 or against finite differences:

- forward: values, dtype, shape, requires_grad and grad_fn name equal torch's for every sample
  and dtype; when torch raises, ndgrad raises the same exception type;
- method / inplace: the Tensor method equals the function; the in-place variant returns self
  and matches torch's in-place result (or raises the same exception type as torch);
- ref: values equal the entry's NumPy reference (float64);
- grad: reverse mode equals central finite differences (float64), and equals torch's
  gradient for the same random cotangent; gradgrad: the recorded backward graph
  differentiated again equals finite differences; complex_grad: the same in complex128
  (torch's conjugate-Wirtinger convention);
- forward_ad / fwgrad_bwgrad: run only when ``ndgrad.autograd.forward_ad`` provides
  dual_level/make_dual/unpack_dual; output tangents (and tangents of gradients) equal torch's;
- no_mutation: forward and backward leave every input's values and version unchanged;
- grad_dtype: gradients of float32/float16 inputs keep the input dtype, as in torch;
- unsupported: ops declared non-differentiable give outputs that do not require grad (as
  torch), and modes declared unsupported raise RuntimeError;
- alias: every alias exists in ndgrad and torch and computes the same values;
- errors: inputs torch rejects raise the same exception type and message in ndgrad.
"""

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad.testing import opdb
from ndgrad.testing._comparison import default_tolerances
from ndgrad.testing._gradcheck import check_gradgrads, check_grads

DB = opdb.load()
F64 = ndgrad.float64


def _id(entry):
    return entry.full_name


def _entry_dtypes():
    return [pytest.param(e, d, id=f"{e.full_name}-{d.name}") for e in DB for d in e.dtypes]


# --------------------------------------------------------------------------- helpers
def _map(x, leaf):
    """``x`` with lists, tuples and dict values rebuilt and every other value v as leaf(v)."""
    if isinstance(x, list):
        return [_map(v, leaf) for v in x]
    if isinstance(x, tuple):
        return tuple(_map(v, leaf) for v in x)
    if isinstance(x, dict):
        return {k: _map(v, leaf) for k, v in x.items()}
    return leaf(x)


def _torch_leaf(x):
    if isinstance(x, ndgrad.Tensor):
        t = torch.from_numpy(np.array(x._data))
        if x.requires_grad:
            t.requires_grad_(True)
        return t
    if isinstance(x, ndgrad.dtype):
        return getattr(torch, x.name)
    return x


def to_torch(x):
    """An independent torch copy of a sample value (tensors keep requires_grad)."""
    return _map(x, _torch_leaf)


def _tensors(obj, cls):
    """Every instance of ``cls`` in nested lists, tuples and dict values, in order."""
    found = []
    _map(obj, lambda x: found.append(x) if isinstance(x, cls) else None)
    return found


def tensors_of(sample):
    """Every ndgrad tensor in a sample, in a fixed order (input, args, kwargs)."""
    return _tensors((sample.input, sample.args, sample.kwargs), ndgrad.Tensor)


def rebuild(sample, replace):
    """(input, args, kwargs) with each tensor t replaced by replace(t)."""
    def leaf(x):
        return replace(x) if isinstance(x, ndgrad.Tensor) else x
    return _map(sample.input, leaf), _map(sample.args, leaf), _map(sample.kwargs, leaf)


def _skip_unless_supported(entry, mode, *dtype):
    reason = entry.skip_reason(mode, *dtype)
    if reason:
        pytest.skip(reason)


def call_torch(entry, sample):
    inp, args, kwargs = to_torch(sample.input), to_torch(sample.args), to_torch(sample.kwargs)
    return entry.torch_op(inp, *args, **kwargs), (inp, args, kwargs)


def call_nd(entry, sample):
    return entry.op(sample.input, *sample.args, **sample.kwargs)


REFUSED = object()


def call_nd_or_refuse(entry, sample):
    """ndgrad's result, or REFUSED where ndgrad raises (an error sample) and torch raises an
    exception of the same type too."""
    try:
        return call_nd(entry, sample)
    except Exception as exc:  # noqa: BLE001 - an error sample: torch refuses too
        with pytest.raises(type(exc)):
            call_torch(entry, sample)
        return REFUSED


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _grad_outputs(entry, sample, out):
    fn = sample.output_process_fn_grad or entry.output_process_fn_grad
    if fn is not None:
        out = fn(out)
    return [o for o in _as_tuple(out)
            if isinstance(o, (ndgrad.Tensor, torch.Tensor)) and
            (o.dtype.is_floating_point or o.dtype.is_complex)]


def _tols(entry, dtype):
    if entry.atol is not None:
        return entry.rtol, entry.atol
    if dtype.name == "float16":
        return 1e-3, 1e-3
    r, a = default_tolerances(dtype)
    # Our kernels are float64 NumPy; torch's float32 kernels differ by a few ulps.
    return max(r, 1e-6 if dtype.name in ("float32", "complex64") else 1e-12), \
        max(a, 1e-6 if dtype.name in ("float32", "complex64") else 1e-12)


def assert_matches_torch(nd, th, entry, dtype, where, check_grad_fn=True):
    if isinstance(th, torch.Tensor):
        assert isinstance(nd, ndgrad.Tensor), f"{where}: expected a Tensor, got {type(nd)}"
        assert tuple(nd.shape) == tuple(th.shape), f"{where}: shape {nd.shape} vs {th.shape}"
        assert str(nd.dtype) == str(th.dtype), f"{where}: dtype {nd.dtype} vs {th.dtype}"
        rtol, atol = _tols(entry, nd.dtype)
        a = nd.detach()._data
        b = th.detach().resolve_conj().numpy()
        if a.dtype.kind == "b" or a.dtype.kind in "iu":
            np.testing.assert_array_equal(a, b, err_msg=where)
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=where)
            # The sign of zero and infinities must agree too.
            np.testing.assert_array_equal(np.isinf(a), np.isinf(b), err_msg=where)
        assert nd.requires_grad == th.requires_grad, \
            f"{where}: requires_grad {nd.requires_grad} vs torch {th.requires_grad}"
        if check_grad_fn and th.grad_fn is not None:
            assert type(nd.grad_fn).__name__ == th.grad_fn.name(), \
                f"{where}: grad_fn {type(nd.grad_fn).__name__} vs torch {th.grad_fn.name()}"
    elif isinstance(th, (tuple, list)):
        assert isinstance(nd, (tuple, list)) and len(nd) == len(th), f"{where}: {nd!r}"
        for k, (x, y) in enumerate(zip(nd, th)):
            assert_matches_torch(x, y, entry, dtype, f"{where}[{k}]", check_grad_fn)
    else:
        assert type(nd) is type(th) and nd == th, f"{where}: {nd!r} vs torch {th!r}"


def _np(t):
    """A torch tensor's values (torch returns efficient ZeroTensors for some zero grads)."""
    t = t.detach()
    if t._is_zerotensor():
        return np.zeros(tuple(t.shape), dtype=torch.empty(0, dtype=t.dtype).numpy().dtype)
    return t.resolve_conj().resolve_neg().numpy()


def _differentiable_dtype(dtype):
    return dtype.is_floating_point or dtype.is_complex


# --------------------------------------------------------------------------- integrity
def test_database_loads_and_is_consistent():
    """Every family file imports, names are unique, resolve in ndgrad and torch, skips say why."""
    assert opdb.import_errors == {}
    assert len(DB) > 0
    names = [e.full_name for e in DB]
    assert len(names) == len(set(names))
    for e in DB:
        assert callable(e.op), e.full_name
        assert callable(e.torch_op), e.full_name
        for s in e.skips:
            assert s.test in opdb.SUITES and s.reason


# Public functions of the pointwise modules that are not ops of their own.
_NOT_OPS = {"tanh_backward": "fused kernel behind tanh's double backward (torch.ops.aten only)",
            "sigmoid_backward": "fused kernel behind sigmoid's double backward",
            "threshold_backward": "fused kernel behind relu's double backward"}


def test_every_pointwise_function_has_an_entry():
    from ndgrad._ops import arithmetic, comparison, pointwise
    covered = {e.name for e in DB} | {a for e in DB for a in e.aliases}
    missing = [n for mod in (arithmetic, comparison, pointwise) for n in mod.__all__
               if n not in covered and n not in _NOT_OPS]
    assert missing == []


# --------------------------------------------------------------------------- forward
@pytest.mark.parametrize("entry,dtype", _entry_dtypes())
def test_forward(entry, dtype):
    _skip_unless_supported(entry, "forward", dtype)
    rg = entry.supports_autograd and _differentiable_dtype(dtype)
    samples = entry.sample_inputs(dtype, requires_grad=rg)
    assert samples, "an entry needs at least one sample"
    for sample in samples:
        where = f"{entry.full_name} {sample!r}"
        try:
            expected, _ = call_torch(entry, sample)
        except Exception as exc:  # noqa: BLE001 - torch refuses: ndgrad must too
            with pytest.raises(type(exc)):
                call_nd(entry, sample)
            continue
        actual = call_nd(entry, sample)
        assert_matches_torch(actual, expected, entry, dtype, where, entry.check_grad_fn)


@pytest.mark.parametrize("entry", [e for e in DB if e.error_inputs_func is not None], ids=_id)
def test_error_inputs_match_torch(entry):
    """Inputs torch rejects: ndgrad raises the same exception type with the same message."""
    samples = entry.error_inputs()
    assert samples
    for sample in samples:
        with pytest.raises(Exception) as t_exc:
            call_torch(entry, sample)
        with pytest.raises(type(t_exc.value)) as n_exc:
            call_nd(entry, sample)
        assert str(n_exc.value) == str(t_exc.value), f"{entry.full_name} {sample!r}"


@pytest.mark.parametrize("entry,dtype", [p for p in _entry_dtypes()
                                          if p.values[0].method or p.values[0].inplace])
def test_method_and_inplace(entry, dtype):
    for sample in entry.sample_inputs(dtype, requires_grad=False):
        if not isinstance(sample.input, ndgrad.Tensor):
            continue
        where = f"{entry.full_name} {sample!r}"
        expected = call_nd_or_refuse(entry, sample)
        if expected is REFUSED:
            continue
        if entry.method and entry.skip_reason("method", dtype) is None:
            got = getattr(sample.input, entry.method)(*sample.args, **sample.kwargs)
            assert_matches_torch(got, to_torch(expected), entry, dtype, where + " method")
        if entry.inplace and entry.skip_reason("method", dtype) is None:
            base = sample.input.clone()
            t_base = to_torch(base)
            try:
                t_res = getattr(t_base, entry.inplace)(*to_torch(sample.args),
                                                       **to_torch(sample.kwargs))
            except Exception as exc:  # noqa: BLE001 - ndgrad must raise the same
                before = base._data.copy()
                with pytest.raises(type(exc)):
                    getattr(base, entry.inplace)(*sample.args, **sample.kwargs)
                np.testing.assert_array_equal(base._data, before, err_msg=where)
                continue
            assert t_res is t_base
            res = getattr(base, entry.inplace)(*sample.args, **sample.kwargs)
            assert res is base, f"{where}: {entry.inplace} must return self"
            assert_matches_torch(base, t_base, entry, dtype, where + " inplace")


@pytest.mark.parametrize("entry", [e for e in DB if e.ref is not None], ids=_id)
def test_reference_numpy(entry):
    dtypes = [d for d in entry.dtypes if d in (F64, ndgrad.int64)] or [entry.dtypes[0]]
    for dtype in dtypes:
        for sample in entry.sample_inputs(dtype, requires_grad=False):
            inp, args, kwargs = rebuild(sample, lambda t: np.array(t._data))
            actual = call_nd_or_refuse(entry, sample)
            if actual is REFUSED:
                continue
            expected = entry.ref(inp, *args, **kwargs)
            a = actual._data if isinstance(actual, ndgrad.Tensor) else actual
            a = np.asarray(a)
            # float32 results (integer inputs of float ops) agree to float32 precision.
            tol = 1e-6 if a.dtype in (np.float32, np.complex64) else 1e-10
            with np.errstate(all="ignore"):
                np.testing.assert_allclose(a, np.asarray(expected), rtol=tol, atol=tol,
                                           equal_nan=True,
                                           err_msg=f"{entry.full_name} {sample!r}")


# --------------------------------------------------------------------------- gradients
def _grad_entries(flag):
    return [e for e in DB if getattr(e, flag)]


def _diff_inputs(sample):
    return [t for t in tensors_of(sample) if t.requires_grad]


def _fn_of(entry, sample, inputs):
    """f(*tensors) calling the op with `inputs` (by identity) swapped for the arguments."""
    ids = [id(t) for t in inputs]

    def fn(*xs):
        table = dict(zip(ids, xs))
        inp, args, kwargs = rebuild(sample, lambda t: table.get(id(t), t))
        return tuple(_grad_outputs(entry, sample, entry.op(inp, *args, **kwargs)))
    return fn


def _grad_dtype(entry):
    """float64 for gradient checks; complex128 for complex-only ops (view_as_real, imag)."""
    if F64 in entry.dtypes or ndgrad.complex128 not in entry.dtypes:
        return F64
    return ndgrad.complex128


def _grad_samples(entry, dtype=None):
    dtype = _grad_dtype(entry) if dtype is None else dtype
    out = []
    for sample in entry.sample_inputs(dtype, requires_grad=True):
        inputs = _diff_inputs(sample)
        if inputs and all(t.numel() for t in inputs):
            out.append((sample, inputs))
    return out


# Finite differences use the public ndgrad.autograd.gradcheck/gradgradcheck when present (so
# the whole database also exercises them), else the small checker in ndgrad.testing.
_PUBLIC_GRADCHECK = hasattr(ndgrad.autograd, "gradcheck") and \
    hasattr(ndgrad.autograd, "gradgradcheck")


def _gradcheck(fn, inputs, entry):
    if _PUBLIC_GRADCHECK:
        assert ndgrad.autograd.gradcheck(fn, tuple(inputs), eps=entry.grad_eps,
                                         atol=entry.grad_atol, rtol=entry.grad_rtol)
    else:
        check_grads(fn, inputs, eps=entry.grad_eps, atol=entry.grad_atol, rtol=entry.grad_rtol)


def _gradgradcheck(fn, inputs, entry):
    if _PUBLIC_GRADCHECK:
        assert ndgrad.autograd.gradgradcheck(fn, tuple(inputs), eps=entry.grad_eps,
                                             atol=entry.grad_atol, rtol=entry.grad_rtol)
    else:
        check_gradgrads(fn, inputs, eps=entry.grad_eps, atol=entry.grad_atol,
                        rtol=entry.grad_rtol)


def _finite(entry, samples):
    """Samples whose outputs are finite: finite differences mean nothing at NaN/inf (those
    samples are still compared with torch's gradients by test_grad_vs_torch)."""
    keep = []
    for sample, inputs in samples:
        with ndgrad.no_grad():
            outs = _grad_outputs(entry, sample, call_nd(entry, sample))
        if all(np.isfinite(o._data).all() for o in outs):
            keep.append((sample, inputs))
    return keep


@pytest.mark.parametrize("entry", _grad_entries("supports_autograd"), ids=_id)
def test_grad_finite_differences(entry):
    _skip_unless_supported(entry, "grad")
    samples = _grad_samples(entry)
    assert samples, "a differentiable entry needs a float64 sample with a non-empty input"
    for sample, inputs in _finite(entry, samples):
        _gradcheck(_fn_of(entry, sample, inputs), inputs, entry)


def _vjp_vs_torch(entry, dtype):
    rng = np.random.default_rng(0)
    for sample, inputs in _grad_samples(entry, dtype):
        where = f"{entry.full_name} {sample!r}"
        outs = _grad_outputs(entry, sample, call_nd(entry, sample))
        t_out, (t_inp, t_args, t_kwargs) = call_torch(entry, sample)
        t_outs = _grad_outputs(entry, sample, t_out)
        t_inputs = [t for t in _torch_tensors((t_inp, t_args, t_kwargs)) if t.requires_grad]
        assert len(t_inputs) == len(inputs)
        vs = [_random(tuple(o.shape), o.detach().resolve_conj().numpy().dtype, rng) for o in t_outs]
        pairs = [(o, t, v) for o, t, v in zip(outs, t_outs, vs) if t.requires_grad]
        if not pairs:
            continue
        g_t = torch.autograd.grad([p[1] for p in pairs], t_inputs,
                                  [torch.from_numpy(p[2]) for p in pairs], allow_unused=True)
        g_n = ndgrad.autograd.grad([p[0] for p in pairs], inputs,
                                   [ndgrad.tensor(p[2]) for p in pairs], allow_unused=True)
        for k, (a, b) in enumerate(zip(g_n, g_t)):
            if b is None:
                assert a is None or not np.any(a._data), f"{where}: grad {k} should be None/0"
                continue
            if a is None:
                assert not np.any(_np(b)), f"{where}: grad {k} is None, torch {b}"
                continue
            assert str(a.dtype) == str(b.dtype), f"{where}: grad dtype {a.dtype} vs {b.dtype}"
            np.testing.assert_allclose(a._data, _np(b), rtol=1e-7, atol=1e-9,
                                       equal_nan=True, err_msg=f"{where}: grad {k}")


def _torch_tensors(obj):
    return _tensors(obj, torch.Tensor)


@pytest.mark.parametrize("entry", _grad_entries("supports_autograd"), ids=_id)
def test_grad_vs_torch(entry):
    _skip_unless_supported(entry, "grad")
    _vjp_vs_torch(entry, _grad_dtype(entry))


@pytest.mark.parametrize("entry", _grad_entries("supports_gradgrad"), ids=_id)
def test_gradgrad_finite_differences(entry):
    _skip_unless_supported(entry, "gradgrad")
    for sample, inputs in _finite(entry, _grad_samples(entry))[:2]:
        _gradgradcheck(_fn_of(entry, sample, inputs), inputs, entry)


@pytest.mark.parametrize("entry", _grad_entries("supports_complex_autograd"), ids=_id)
def test_complex_grad(entry):
    """complex128: finite differences in torch's convention, and equal to torch's gradient."""
    _skip_unless_supported(entry, "complex_grad")
    samples = _grad_samples(entry, ndgrad.complex128)
    assert samples
    for sample, inputs in _finite(entry, samples)[:2]:
        _gradcheck(_fn_of(entry, sample, inputs), inputs, entry)
    _vjp_vs_torch(entry, ndgrad.complex128)


# --------------------------------------------------------------------------- forward mode
def _forward_ad():
    fwd = getattr(ndgrad.autograd, "forward_ad", None)
    if fwd is None or not all(hasattr(fwd, n) for n in ("dual_level", "make_dual",
                                                        "unpack_dual")):
        pytest.skip("ndgrad.autograd.forward_ad does not provide dual_level/make_dual/"
                    "unpack_dual yet: the forward-mode suites check JVPs against torch's "
                    "forward AD once it does")
    return fwd


def _random(shape, dtype, rng):
    v = np.asarray(rng.standard_normal(shape))
    if np.dtype(dtype).kind == "c":
        v = v + 1j * np.asarray(rng.standard_normal(shape))
    return np.asarray(v, dtype=dtype)


def _assert_tangents(nd_t, th_t, where):
    """ndgrad's tangents equal torch's; None (a zero tangent) matches None or zeros."""
    for a, b in zip(nd_t, th_t):
        if b is None or a is None:
            assert (a is None or not np.any(a._data)) and \
                (b is None or not np.any(_np(b))), f"{where}: tangent {a} vs torch {b}"
            continue
        np.testing.assert_allclose(a._data, _np(b), rtol=1e-7, atol=1e-9,
                                   equal_nan=True, err_msg=where)


def _jvp_pair(entry, sample, inputs, rng):
    """(ndgrad tangents of outputs, torch tangents of outputs) for the same input tangents."""
    fwd = _forward_ad()
    tfwd = torch.autograd.forward_ad
    tangents = [_random(t._data.shape, t._data.dtype, rng) for t in inputs]
    ids = [id(t) for t in inputs]
    with fwd.dual_level():
        duals = [fwd.make_dual(t.detach(), ndgrad.tensor(v)) for t, v in zip(inputs, tangents)]
        table = dict(zip(ids, duals))
        inp, args, kwargs = rebuild(sample, lambda t: table.get(id(t), t.detach()))
        outs = _grad_outputs(entry, sample, entry.op(inp, *args, **kwargs))
        nd_t = [fwd.unpack_dual(o).tangent for o in outs]
    t_table = {}
    with tfwd.dual_level():
        for t, v in zip(inputs, tangents):
            t_table[id(t)] = tfwd.make_dual(torch.from_numpy(np.array(t._data)),
                                            torch.from_numpy(v))
        inp, args, kwargs = rebuild(sample, lambda t: t_table.get(id(t)) if id(t) in t_table
                                    else to_torch(t.detach()))
        outs = _grad_outputs(entry, sample, entry.torch_op(inp, *args, **kwargs))
        th_t = [tfwd.unpack_dual(o).tangent for o in outs]
    return nd_t, th_t


@pytest.mark.parametrize("entry", [e for e in DB if e.supports_autograd], ids=_id)
def test_forward_ad(entry):
    """JVP of every sample equals torch's forward AD (or the op raises, if it says so)."""
    _forward_ad()
    _skip_unless_supported(entry, "forward_ad")
    rng = np.random.default_rng(0)
    for sample, inputs in _grad_samples(entry):
        if not entry.supports_forward_ad:
            with pytest.raises(RuntimeError):
                _jvp_pair(entry, sample, inputs, rng)
            return
        _assert_tangents(*_jvp_pair(entry, sample, inputs, rng), f"{entry.full_name} {sample!r}")


@pytest.mark.parametrize("entry", [e for e in DB if e.supports_fwgrad_bwgrad], ids=_id)
def test_fwgrad_bwgrad(entry):
    """Forward-over-backward: the tangent of the gradient equals torch's (a Hessian-vector
    product)."""
    fwd = _forward_ad()
    _skip_unless_supported(entry, "fwgrad_bwgrad")
    tfwd = torch.autograd.forward_ad
    rng = np.random.default_rng(1)
    for sample, inputs in _grad_samples(entry)[:1]:
        tangents = [_random(t._data.shape, t._data.dtype, rng) for t in inputs]
        ids = [id(t) for t in inputs]
        with fwd.dual_level():
            duals = [fwd.make_dual(t.detach().requires_grad_(True), ndgrad.tensor(v))
                     for t, v in zip(inputs, tangents)]
            table = dict(zip(ids, duals))
            inp, args, kwargs = rebuild(sample, lambda t, tb=table: tb.get(id(t), t.detach()))
            outs = _grad_outputs(entry, sample, entry.op(inp, *args, **kwargs))
            vs = [np.ones(tuple(o.shape), dtype=o._data.dtype) for o in outs]
            gs = ndgrad.autograd.grad(outs, duals, [ndgrad.tensor(v) for v in vs],
                                      create_graph=True, allow_unused=True)
            nd_t = [None if g is None else fwd.unpack_dual(g).tangent for g in gs]
        with tfwd.dual_level():
            t_duals = [tfwd.make_dual(torch.from_numpy(np.array(t._data)).requires_grad_(True),
                                      torch.from_numpy(v)) for t, v in zip(inputs, tangents)]
            table = dict(zip(ids, t_duals))
            inp, args, kwargs = rebuild(sample, lambda t, tb=table: tb[id(t)] if id(t) in tb
                                        else to_torch(t.detach()))
            outs = _grad_outputs(entry, sample, entry.torch_op(inp, *args, **kwargs))
            gs = torch.autograd.grad(outs, t_duals, [torch.from_numpy(v) for v in vs],
                                     create_graph=True, allow_unused=True)
            th_t = [None if g is None else tfwd.unpack_dual(g).tangent for g in gs]
        _assert_tangents(nd_t, th_t, entry.full_name)


# --------------------------------------------------------------------------- hygiene
@pytest.mark.parametrize("entry", _grad_entries("supports_autograd"), ids=_id)
def test_no_input_mutation(entry):
    """Forward and backward leave every input tensor's values and version unchanged."""
    for sample in entry.sample_inputs(_grad_dtype(entry), requires_grad=True):
        ts = tensors_of(sample)
        before = [(t._data.copy(), t._version) for t in ts]
        out = call_nd(entry, sample)
        outs = [o for o in _grad_outputs(entry, sample, out) if o.requires_grad]
        inputs = _diff_inputs(sample)
        if outs and inputs:
            ndgrad.autograd.grad(outs, inputs, [ndgrad.ones_like(o) for o in outs],
                                 allow_unused=True)
        for t, (data, ver) in zip(ts, before):
            np.testing.assert_array_equal(t._data, data, err_msg=f"{entry.full_name} mutated "
                                          f"an input: {sample!r}")
            assert t._version == ver, f"{entry.full_name} bumped an input's version"


@pytest.mark.parametrize("entry,dtype", [
    pytest.param(e, d, id=f"{e.full_name}-{d.name}") for e in DB if e.supports_autograd
    for d in e.dtypes if d.name in ("float32", "float16")])
def test_grad_keeps_dtype(entry, dtype):
    """Gradients of float32/float16 inputs have the input's dtype (as torch's)."""
    for sample in entry.sample_inputs(dtype, requires_grad=True):
        inputs = _diff_inputs(sample)
        outs = [o for o in _grad_outputs(entry, sample, call_nd(entry, sample))
                if o.requires_grad]
        if not inputs or not outs:
            continue
        gs = ndgrad.autograd.grad(outs, inputs, [ndgrad.ones_like(o) for o in outs],
                                  allow_unused=True)
        for t, g in zip(inputs, gs):
            if g is not None:
                assert g.dtype == t.dtype, f"{entry.full_name} {sample!r}: grad {g.dtype} " \
                                           f"for input {t.dtype}"


@pytest.mark.parametrize("entry", [e for e in DB if not e.supports_autograd or
                                   not e.supports_gradgrad], ids=_id)
def test_unsupported_modes_are_clear(entry):
    """Non-differentiable ops give outputs without grad (as torch); ops declaring backward or
    double backward unsupported raise RuntimeError in that mode instead of wrong numbers."""
    fdt = [d for d in entry.dtypes if d.is_floating_point] or [None]
    if fdt[0] is None:  # integer/bool-only op: nothing can require grad
        sample = entry.sample_inputs(entry.dtypes[0])[0]
        assert not any(o.requires_grad for o in _as_tuple(call_nd(entry, sample))
                       if isinstance(o, ndgrad.Tensor))
        return
    for sample in entry.sample_inputs(fdt[0], requires_grad=True):
        for t in tensors_of(sample):
            if t.is_floating_point() and t.is_leaf and not t.requires_grad:
                t.requires_grad_(True)
        out = call_nd(entry, sample)
        if not entry.differentiable:
            t_out, _ = call_torch(entry, sample)
            for a, b in zip(_as_tuple(out), _as_tuple(t_out)):
                if isinstance(b, torch.Tensor):
                    assert a.requires_grad == b.requires_grad, \
                        f"{entry.full_name}: requires_grad {a.requires_grad} vs torch"
                    assert a.grad_fn is None
            continue
        outs = [o for o in _grad_outputs(entry, sample, out) if o.requires_grad]
        inputs = _diff_inputs(sample)
        if not outs:
            continue
        if not entry.supports_autograd:
            with pytest.raises(RuntimeError):
                ndgrad.autograd.grad(outs, inputs, [ndgrad.ones_like(o) for o in outs])
        else:
            gs = ndgrad.autograd.grad(outs, inputs, [ndgrad.ones_like(o) for o in outs],
                                      create_graph=True, allow_unused=True)
            gs = [g for g in gs if g is not None and g.requires_grad]
            if gs:
                with pytest.raises(RuntimeError):
                    ndgrad.autograd.grad(gs, inputs, [ndgrad.ones_like(g) for g in gs],
                                         allow_unused=True)


@pytest.mark.parametrize("entry", [e for e in DB if e.aliases], ids=_id)
def test_aliases(entry):
    dtype = entry.dtypes[0]
    for alias in entry.aliases:
        nd_fn = opdb._resolve(ndgrad, alias)
        assert callable(opdb._resolve(torch, alias)), f"torch has no {alias}"
        for sample in entry.sample_inputs(dtype)[:2]:
            a = nd_fn(sample.input, *sample.args, **sample.kwargs)
            b = call_nd(entry, sample)
            np.testing.assert_array_equal(a._data, b._data, err_msg=alias)


# --------------------------------------------------------------------------- testing utilities
_CLOSE_CASES = {
    "values": lambda L: (L.tensor([1.0, 2, 3]), L.tensor([1.0, 2.1, 3])),
    "shape": lambda L: (L.tensor([1.0, 2]), L.tensor([1.0, 2, 3])),
    "dtype": lambda L: (L.tensor([1.0, 2]), L.tensor([1.0, 2], dtype=L.float64)),
    "int": lambda L: (L.tensor([1, 2, 3]), L.tensor([1, 3, 3])),
    "bool": lambda L: (L.tensor([True, False]), L.tensor([True, True])),
    "nan": lambda L: (L.tensor([1.0, float("nan")]), L.tensor([1.0, float("nan")])),
    "inf": lambda L: (L.tensor([float("inf")]), L.tensor([float("-inf")])),
    "2d": lambda L: (L.tensor([[1.0, 2], [3, 4]]), L.tensor([[1.0, 2], [3, 5]])),
    "0-d": lambda L: (L.tensor(1.0), L.tensor(2.0)),
    "f16": lambda L: (L.tensor([1.0], dtype=L.float16), L.tensor([1.01], dtype=L.float16)),
    "scalar": lambda L: (1.0, 1.1),
    "scalar-int": lambda L: (1, 2),
    "seq-len": lambda L: ([L.tensor([1.0])], [L.tensor([1.0]), L.tensor([2.0])]),
    "seq-item": lambda L: ([L.tensor([1.0]), L.tensor([2.0])], [L.tensor([1.0]), L.tensor([3.0])]),
    "dict": lambda L: ({"a": L.tensor([1.0])}, {"a": L.tensor([2.0])}),
    "dict-keys": lambda L: ({"a": L.tensor([1.0])}, {"b": L.tensor([1.0])}),
    "type": lambda L: (L.tensor([1.0]), 1.0),
    "close-enough": lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0 + 1e-7])),
}


@pytest.mark.parametrize("kwargs", [{}, {"equal_nan": True}, {"check_dtype": False},
                                    {"rtol": 0.1, "atol": 0.1}], ids=str)
@pytest.mark.parametrize("case", sorted(_CLOSE_CASES))
def test_assert_close_matches_torch_testing(case, kwargs):
    """Same verdict, exception type and message as torch.testing.assert_close."""
    results = []
    for lib, fn in ((torch, torch.testing.assert_close), (ndgrad, ndgrad.testing.assert_close)):
        actual, expected = _CLOSE_CASES[case](lib)
        try:
            fn(actual, expected, **kwargs)
            results.append(None)
        except (AssertionError, TypeError) as exc:
            results.append((type(exc), str(exc).replace("torch.Tensor", "Tensor")
                            .replace("ndgrad._tensor.Tensor", "Tensor")))
    assert results[1] == results[0]


def test_assert_close_msg_and_tolerance_arguments():
    with pytest.raises(AssertionError, match="^custom$"):
        ndgrad.testing.assert_close(ndgrad.tensor([1.0]), ndgrad.tensor([2.0]), msg="custom")
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        ndgrad.testing.assert_close(ndgrad.tensor([1.0]), ndgrad.tensor([1.0]), rtol=0.1)
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        torch.testing.assert_close(torch.tensor([1.0]), torch.tensor([1.0]), rtol=0.1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "uint8", "bool",
                                   "complex64"])
def test_make_tensor(dtype):
    dt = getattr(ndgrad, dtype)
    t = ndgrad.testing.make_tensor(3, 4, dtype=dt)
    ref = torch.testing.make_tensor(3, 4, dtype=getattr(torch, dtype), device="cpu")
    assert tuple(t.shape) == tuple(ref.shape) == (3, 4) and str(t.dtype) == str(ref.dtype)
    if dt.is_floating_point or dt.is_complex:
        vals = np.concatenate([t._data.real.ravel(), t._data.imag.ravel()]) if dt.is_complex \
            else t._data.ravel()
        assert vals.min() >= -9 and vals.max() <= 9
        low = ndgrad.testing.make_tensor((50,), dtype=dt, low=0.5, high=1.0)
        assert low._data.real.min() >= 0.5 and low._data.real.max() <= 1.0
        nc = ndgrad.testing.make_tensor((2, 3), dtype=dt, noncontiguous=True, requires_grad=True)
        assert not nc._data.flags.c_contiguous and nc.requires_grad and nc.is_leaf
    elif dtype != "bool":
        assert t._data.min() >= (0 if dtype == "uint8" else -9) and t._data.max() <= 9
        nz = ndgrad.testing.make_tensor((200,), dtype=dt, exclude_zero=True)
        assert (nz._data != 0).all()
        with pytest.raises(ValueError):
            ndgrad.testing.make_tensor(2, dtype=dt, requires_grad=True)
    ndgrad.manual_seed(3)
    a = ndgrad.testing.make_tensor(5, dtype=dt)
    ndgrad.manual_seed(3)
    b = ndgrad.testing.make_tensor(5, dtype=dt)
    np.testing.assert_array_equal(a._data, b._data)
