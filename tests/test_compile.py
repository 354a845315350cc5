"""ndgrad.compile: compiled vs eager equality (bitwise) over the op database and a training
loop, guards and recompiles, graph breaks and fullgraph errors, hooks, autograd.grad and
create_graph through a compiled region, explain, reset, the cache-size limit, threads, and
flat memory of a compiled training loop.

The op-database suite traces each sample's call on one set of values and replays it on other
values of the same shapes (so a value baked into the trace would show), against eager on
those values: outputs and the gradients of a random cotangent must be bitwise equal.
"""


import numpy as np
import pytest

import ndgrad
from ndgrad._compile.api import _EagerEntry
from ndgrad.testing import opdb

DB = opdb.load()


# --------------------------------------------------------------------------- helpers
def _map(x, leaf):
    if isinstance(x, list):
        return [_map(v, leaf) for v in x]
    if isinstance(x, tuple):
        return tuple(_map(v, leaf) for v in x)
    if isinstance(x, dict):
        return {k: _map(v, leaf) for k, v in x.items()}
    return leaf(x)


def _tensors(obj):
    found = []
    _map(obj, lambda x: found.append(x) if isinstance(x, ndgrad.Tensor) else None)
    return found


def _outs(entry, sample, out):
    fn = sample.output_process_fn_grad or entry.output_process_fn_grad
    if fn is not None:
        out = fn(out)
    out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return [o for o in out if isinstance(o, ndgrad.Tensor)]


def _perturbed(t, rng):
    """A tensor of t's shape and dtype with other values (floating) or the same (others)."""
    d = t._data
    if d.dtype.kind in "fc" and d.size:
        noise = rng.uniform(0.97, 1.03, d.shape).astype(d.real.dtype)
        d = (d * noise).astype(d.dtype)
    else:
        d = d.copy()
    return ndgrad.tensor(d, requires_grad=t.requires_grad)


def _run(fn, entry, sample, tensors, cot_seed):
    outs = _outs(entry, sample, fn(*tensors))
    diff = [t for t in tensors if t.requires_grad]
    douts = [o for o in outs if o.requires_grad]
    grads = []
    if diff and douts:
        rng = np.random.default_rng(cot_seed)
        cots = [ndgrad.tensor(rng.standard_normal(o.shape).astype(o._data.dtype))
                for o in douts]
        grads = ndgrad.autograd.grad(douts, diff, cots, allow_unused=True)
    return outs, grads


def _assert_same(a, b, what):
    assert (a is None) == (b is None), what
    if a is None:
        return
    assert a._data.dtype == b._data.dtype and a._data.shape == b._data.shape, what
    np.testing.assert_array_equal(a._data, b._data, err_msg=what, strict=True)


def _sample_fn(entry, sample):
    template = (sample.input, sample.args, sample.kwargs)
    ids = [id(t) for t in _tensors(template)]

    def fn(*xs):
        table = dict(zip(ids, xs))
        inp, args, kwargs = _map(template, lambda v: table.get(id(v), v)
                                 if isinstance(v, ndgrad.Tensor) else v)
        return entry.op(inp, *args, **kwargs)
    return fn


_STATS = {"compiled": 0, "eager": 0}


@pytest.mark.parametrize("entry", DB, ids=lambda e: e.full_name)
def test_opdb_compiled_equals_eager(entry):
    """Every sample (float32 and float64): outputs and gradients of the compiled call on new
    values are bitwise those of eager on the same values."""
    rng = np.random.default_rng(0)
    for dtype in [d for d in entry.dtypes if d.name in ("float32", "float64")]:
        for k, sample in enumerate(entry.sample_inputs(dtype, requires_grad=
                                                       entry.supports_autograd)):
            fn = _sample_fn(entry, sample)
            first = _tensors((sample.input, sample.args, sample.kwargs))
            try:
                fn(*first)
            except Exception:  # noqa: BLE001 - an error sample: not for compilation
                continue
            cf = ndgrad.compile(fn)
            _run(cf, entry, sample, first, k)                     # traced
            second = [_perturbed(t, rng) for t in first]
            c_outs, c_grads = _run(cf, entry, sample, second, k)  # compiled
            e_outs, e_grads = _run(fn, entry, sample, second, k)  # eager
            what = f"{entry.full_name} {dtype} sample {k}"
            assert len(c_outs) == len(e_outs), what
            for a, b in zip(c_outs, e_outs):
                _assert_same(a, b, what + " output")
                assert a.requires_grad == b.requires_grad, what
            assert len(c_grads) == len(e_grads), what
            for a, b in zip(c_grads, e_grads):
                _assert_same(a, b, what + " gradient")
            (entry_,) = [e for es in cf.cache.values() for e in es][:1]
            _STATS["eager" if isinstance(entry_, _EagerEntry) else "compiled"] += 1
