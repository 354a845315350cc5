"""torch's 'batched grad' and 'batched forward grad' checks over every op-database entry.

For the first gradient samples (float64) of each differentiable entry:

- batched_grad: ``vmap(vjp_fn)`` over three cotangents equals the loop of ``vjp_fn`` calls;
- vmap_vjp: the op and its VJP under ``vmap`` over three perturbed copies of the inputs (and
  three cotangents) equal the per-sample loop, so every batching rule (or the fallback) and
  the backward through it are checked;
- batched_forward_grad: ``vmap`` of ``func.jvp`` over perturbed inputs and three tangents
  equals the per-sample loop (for entries supporting forward AD).

Perturbed copies scale each input by (1 - 0.05 b): samples differ (a rule mixing samples would
show) and stay in the op's domain for domains that are intervals around 0 or half-lines.
"""

import numpy as np
import pytest
from test_opdb import DB, _fn_of, _grad_samples, _id, _skip_unless_supported

import ndgrad
from ndgrad.func import jvp, vjp, vmap

N = 3
ENTRIES = [e for e in DB if e.supports_autograd]
# Known gaps (docs/func.md): wrappers that read a tensor's raw data or strides, which under
# vmap is a one-sample placeholder. strict: the day they pass, the entry must leave this list.
GAPS = {
    "view_as_complex": "reads the strides of its input (a zero-strided placeholder under vmap)",
    "linalg.lu_solve": "its wrapper reads the pivots' values",
    "as_strided": "reads the strides of its input (a zero-strided placeholder under vmap)",
    "istft": "its wrapper reads a value of the window envelope (.item())",
    "nn.functional.rrelu": "torch 2.13 refuses rrelu under vmap; ndgrad raises its error",
}


def _params(entries):
    return [pytest.param(e, id=e.full_name, marks=pytest.mark.xfail(
        strict=True, reason=f"known vmap gap: {GAPS[e.full_name]}"))
        if e.full_name in GAPS else pytest.param(e, id=e.full_name) for e in entries]


def _samples(entry):
    return _grad_samples(entry)[:2]


def _random(shape, dtype, rng):
    v = rng.standard_normal((N,) + tuple(shape))
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.standard_normal((N,) + tuple(shape))
    return ndgrad.tensor(v.astype(dtype))


def _perturbed(inputs):
    scale = ndgrad.tensor(1 - 0.05 * np.arange(N))
    out = []
    for x in inputs:
        s = scale.reshape((N,) + (1,) * x.dim()).to(x.dtype)
        out.append((x.detach().unsqueeze(0) * s).contiguous())
    return out


def _assert_close(a, b, where):
    a = [x for x in a if x is not None]
    b = [x for x in b if x is not None]
    assert len(a) == len(b), where
    for k, (x, y) in enumerate(zip(a, b)):
        assert tuple(x.shape) == tuple(y.shape), f"{where}: result {k} shape"
        np.testing.assert_allclose(x.detach()._data, y.detach()._data, rtol=1e-7, atol=1e-9,
                                   equal_nan=True, err_msg=f"{where}: result {k}")


def _loop(fn, *batches):
    """The per-sample loop: fn on each sample, results stacked."""
    rows = [fn(*[b[i] for b in batches]) for i in range(N)]
    return [ndgrad.stack([r[k] for r in rows]) for k in range(len(rows[0]))]


def _float_outputs(fn, inputs):
    outs = fn(*inputs)
    return [k for k, o in enumerate(outs) if o.is_floating_point() or o.is_complex()]


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
def test_batched_grad(entry):
    _skip_unless_supported(entry, "grad")
    rng = np.random.default_rng(0)
    for sample, inputs in _samples(entry):
        fn = _fn_of(entry, sample, inputs)
        keep = _float_outputs(fn, inputs)

        def f(*xs):
            outs = fn(*xs)
            return tuple(outs[k] for k in keep)
        xs = [x.detach() for x in inputs]
        outs, vjp_fn = vjp(f, *xs)
        cts = tuple(_random(o.shape, o._data.dtype, rng) for o in outs)
        batched = vmap(vjp_fn)(cts)
        loop = _loop(lambda *c: vjp_fn(tuple(c)), *cts)
        _assert_close(batched, loop, f"{entry.full_name} {sample!r}")


@pytest.mark.parametrize("entry", _params(ENTRIES))
def test_vmap_vjp(entry):
    _skip_unless_supported(entry, "grad")
    rng = np.random.default_rng(1)
    for sample, inputs in _samples(entry):
        fn = _fn_of(entry, sample, inputs)
        keep = _float_outputs(fn, inputs)
        n_in = len(inputs)

        def value_and_grads(*args):
            xs, cts = args[:n_in], args[n_in:]
            outs, vjp_fn = vjp(lambda *a: tuple(fn(*a)[k] for k in keep), *xs)
            return tuple(outs) + tuple(vjp_fn(tuple(cts)))
        xs = _perturbed(inputs)
        outs = [fn(*[x[0] for x in xs])[k] for k in keep]
        cts = [_random(o.shape, o._data.dtype, rng) for o in outs]
        batched = vmap(value_and_grads)(*xs, *cts)
        loop = _loop(value_and_grads, *xs, *cts)
        _assert_close(batched, loop, f"{entry.full_name} {sample!r}")


@pytest.mark.parametrize("entry", _params([e for e in ENTRIES if e.supports_forward_ad]))
def test_batched_forward_grad(entry):
    _skip_unless_supported(entry, "forward_ad")
    rng = np.random.default_rng(2)
    for sample, inputs in _samples(entry):
        fn = _fn_of(entry, sample, inputs)
        keep = _float_outputs(fn, inputs)
        n_in = len(inputs)

        def value_and_tangents(*args):
            xs, ts = args[:n_in], args[n_in:]
            out, tan = jvp(lambda *a: tuple(fn(*a)[k] for k in keep), tuple(xs), tuple(ts))
            return tuple(out) + tuple(tan)
        xs = _perturbed(inputs)
        ts = [_random(x.shape[1:], x._data.dtype, rng) for x in xs]
        batched = vmap(value_and_tangents)(*xs, *ts)
        loop = _loop(value_and_tangents, *xs, *ts)
        _assert_close(batched, loop, f"{entry.full_name} {sample!r}")
