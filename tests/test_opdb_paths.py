"""Generic suites over every differentiable op-database entry that exercise the dispatch
paths the per-op suites (test_opdb.py) do not reach:

- batched: ``autograd.grad(..., is_grads_batched=True)`` equals the loop of plain
  ``autograd.grad`` calls, one per batch element (the batched VJP rules or the per-element
  fallback of the batched engine);
- observed: the outputs and gradients computed with the profiler on, and with anomaly mode
  on (the ``_state.special`` path of the dispatcher, which takes the general path and calls
  the observers), equal those computed with neither (the fast paths); where a gradient is
  NaN, anomaly mode raises instead;
- parameter: with every differentiable input an ``nn.Parameter`` (the fast-path tensor
  subclass), the outputs, grad_fn and gradients equal those of plain tensors.

Each suite compares ndgrad with itself (float64), bitwise but for the batched gradients
(1e-12: a batched matrix product sums in another order): the per-op suites already compare
the plain path with torch and finite differences.
"""

import warnings

import numpy as np
import pytest

import ndgrad
from test_opdb import DB, _grad_outputs, _grad_samples, _id, _random, rebuild

BATCH = 3

# (suite, entry full name) -> why the entry fails that suite. Each is a real gap, named in the
# report of the change that listed it; the xfail is strict, so a fix shows up as a failure
# here and its line is then removed.
EXPECTED_FAILURES = {
}


def _entries(suite):
    out = []
    for e in DB:
        if not e.supports_autograd or e.skip_reason("grad") is not None:
            continue
        reason = EXPECTED_FAILURES.get((suite, e.full_name))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(e, id=_id(e), marks=marks))
    return out


def _samples(entry):
    """Every float64 (complex128 for complex-only ops) gradient sample of the entry: the whole
    file runs in about 25 s on 2 workers, most of it setup, so no sampling is needed."""
    return _grad_samples(entry)


def _outputs(entry, sample, table):
    """The differentiable outputs of the op on `sample`, its inputs swapped per `table`."""
    inp, args, kwargs = rebuild(sample, lambda t: table.get(id(t), t))
    outs = _grad_outputs(entry, sample, entry.op(inp, *args, **kwargs))
    return [o for o in outs if o.requires_grad]


def _fresh(inputs, cls=None):
    """New leaves sharing the values of `inputs` (as `cls`, e.g. nn.Parameter, if given)."""
    leaves = [t.detach().requires_grad_(True) for t in inputs]
    return [cls(t) for t in leaves] if cls is not None else leaves


def _assert_same(a, b, where, tol=0.0):
    """Two results of ndgrad's own paths: the same tensors (None and zeros agree), bitwise
    unless `tol` (a relative and absolute tolerance) is given."""
    if a is None or b is None:
        for t in (a, b):
            assert t is None or not np.any(t._data), f"{where}: {a} vs {b}"
        return
    assert a.dtype == b.dtype and a.shape == b.shape, \
        f"{where}: {a.dtype}{tuple(a.shape)} vs {b.dtype}{tuple(b.shape)}"
    if tol:
        np.testing.assert_allclose(a._data, b._data, rtol=tol, atol=tol, equal_nan=True,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(a._data, b._data, err_msg=where)


def _forward_backward(entry, sample, orig, seed, cls=None):
    """(outputs, grad_fn names, gradients) of the op on new leaves with `orig`'s values, for
    cotangents drawn from `seed`."""
    inputs = _fresh(orig, cls)
    outs = _outputs(entry, sample, dict(zip(map(id, orig), inputs)))
    rng = np.random.default_rng(seed)
    vs = [ndgrad.tensor(_random(tuple(o.shape), o._data.dtype, rng)) for o in outs]
    grads = ndgrad.autograd.grad(outs, inputs, vs, allow_unused=True) if outs else ()
    # An output that is an input itself (real, atleast_1d, ...: torch returns the Parameter
    # too) by position; any other output must be a plain Tensor.
    kinds = [next((i for i, x in enumerate(inputs) if x is o), type(o).__name__) for o in outs]
    return outs, [(type(o.grad_fn).__name__, k) for o, k in zip(outs, kinds)], list(grads)


def _compare(entry, sample, got, want, what):
    where = f"{entry.full_name} {sample!r} ({what})"
    (o1, n1, g1), (o2, n2, g2) = got, want
    assert n1 == n2, f"{where}: (grad_fn, output type or input it is) {n1} vs {n2}"
    assert len(o1) == len(o2) and len(g1) == len(g2), where
    for k, (a, b) in enumerate(zip(o1, o2)):
        _assert_same(a, b, f"{where} output {k}")
    for k, (a, b) in enumerate(zip(g1, g2)):
        _assert_same(a, b, f"{where} grad {k}")


# --------------------------------------------------------------------------- batched
@pytest.mark.parametrize("entry", _entries("batched"))
def test_batched_backward_equals_per_sample_loop(entry):
    rng = np.random.default_rng(0)
    for sample, orig in _samples(entry):
        where = f"{entry.full_name} {sample!r}"
        inputs = _fresh(orig)
        outs = _outputs(entry, sample, dict(zip(map(id, orig), inputs)))
        if not outs:
            continue
        vs = [_random((BATCH,) + tuple(o.shape), o._data.dtype, rng) for o in outs]
        batched = ndgrad.autograd.grad(outs, inputs, [ndgrad.tensor(v) for v in vs],
                                       retain_graph=True, allow_unused=True,
                                       is_grads_batched=True)
        for b in range(BATCH):
            plain = ndgrad.autograd.grad(outs, inputs, [ndgrad.tensor(v[b]) for v in vs],
                                         retain_graph=True, allow_unused=True)
            for k, (gb, gp) in enumerate(zip(batched, plain)):
                # A batched matrix product sums in another order than B single ones.
                _assert_same(gb[b] if gb is not None else None, gp, f"{where} grad {k}[{b}]",
                             tol=1e-12)


# --------------------------------------------------------------------------- observed
@pytest.mark.parametrize("entry", _entries("observed"))
def test_gradients_equal_with_profiler_and_anomaly_mode(entry):
    for seed, (sample, orig) in enumerate(_samples(entry)):
        plain = _forward_backward(entry, sample, orig, seed)
        with ndgrad.autograd.profiler.profile():
            profiled = _forward_backward(entry, sample, orig, seed)
        _compare(entry, sample, profiled, plain, "profiler")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with ndgrad.autograd.detect_anomaly():
                if any(g is not None and np.isnan(g._data).any() for g in plain[2]):
                    # (var with no degree of freedom, ...): a node returned NaN
                    with pytest.raises(RuntimeError, match="returned nan values"):
                        _forward_backward(entry, sample, orig, seed)
                    continue
                anomaly = _forward_backward(entry, sample, orig, seed)
        _compare(entry, sample, anomaly, plain, "anomaly mode")


# --------------------------------------------------------------------------- parameter
@pytest.mark.parametrize("entry", _entries("parameter"))
def test_parameter_inputs_equal_plain_tensors(entry):
    for seed, (sample, orig) in enumerate(_samples(entry)):
        plain = _forward_backward(entry, sample, orig, seed)
        params = _forward_backward(entry, sample, orig, seed, ndgrad.nn.Parameter)
        _compare(entry, sample, params, plain, "nn.Parameter inputs")
