"""ndgrad.compile: compiled vs eager equality (bitwise) over the op database and a training
loop, guards and recompiles, graph breaks and fullgraph errors, hooks, autograd.grad and
create_graph through a compiled region, explain, reset, the cache-size limit, threads, and
flat memory of a compiled training loop.

The op-database suite traces each sample's call on one set of values and replays it on other
values of the same shapes (so a value baked into the trace would show), against eager on
those values: outputs and the gradients of a random cotangent must be bitwise equal.
"""

import gc
import logging
import tracemalloc

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad import _dynamo
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


# --------------------------------------------------------------------------- the chain
def _chain(x, w, b, n=30):
    y = x
    for _ in range(n // 3):
        y = y * w
        y = y + b
        y = ndgrad.tanh(y)
    return y.sum()


def _chain_inputs(seed=0, dtype=ndgrad.float32):
    ndgrad.manual_seed(seed)
    return (ndgrad.randn(16, dtype=dtype, requires_grad=True), ndgrad.randn(16, dtype=dtype),
            ndgrad.randn(16, dtype=dtype, requires_grad=True))


def _grads_of(fn, *xs):
    for x in xs:
        x.grad = None
    out = fn(*xs)
    out.backward()
    return out, [None if x.grad is None else x.grad._data.copy() for x in xs]


def test_chain_bitwise_equal_and_one_node():
    cf = ndgrad.compile(_chain)
    xs = _chain_inputs()
    for _ in range(3):  # trace, then twice compiled
        c_out, c_grads = _grads_of(cf, *xs)
        e_out, e_grads = _grads_of(_chain, *xs)
        np.testing.assert_array_equal(c_out._data, e_out._data, strict=True)
        for a, b in zip(c_grads, e_grads):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_array_equal(a, b, strict=True)
    assert c_out.grad_fn.name() == "CompiledFunctionBackward"
    assert c_out.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    # against torch: the same math
    tx, tw, tb = (torch.from_numpy(t._data.copy()) for t in xs)
    tx.requires_grad_(True)
    tb.requires_grad_(True)
    y = tx
    for _ in range(10):
        y = torch.tanh(y * tw + tb)
    y.sum().backward()
    np.testing.assert_allclose(c_grads[0], tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_decorator_forms_and_kwargs():
    @ndgrad.compile
    def f(x, scale=2.0):
        return (x * scale).exp()

    @ndgrad.compile(fullgraph=True, dynamic=False)
    def g(x):
        return x.sin()

    x = ndgrad.randn(4, requires_grad=True)
    for _ in range(2):
        np.testing.assert_array_equal(f(x, scale=3.0)._data, (x * 3.0).exp()._data)
        np.testing.assert_array_equal(g(x)._data, x.sin()._data)


# --------------------------------------------------------------------------- training loops
def _train(model, forward, steps_data, opt):
    losses = []
    for x, y in steps_data:
        opt.zero_grad()
        out = forward(x)
        if isinstance(out, tuple):
            out = out[0]
        loss = ndgrad.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]),
                                                  y.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss._data.copy())
    return losses, [p._data.copy() for p in model.parameters()]


def _example(name):
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), os.pardir, "examples", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_ex_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _make(name):
    ndgrad.manual_seed(0)
    g = ndgrad.Generator().manual_seed(0)
    if name == "mlp_classifier":
        mod = _example(name)
        model = mod.build_model(16)
        data = [(ndgrad.randn(b, 2, generator=g), ndgrad.randint(0, 3, (b,), generator=g))
                for b in (32, 32, 32, 8, 32)]
    elif name == "small_cnn":
        mod = _example(name)
        model = mod.SmallCNN()
        s = mod.SIZE
        data = [(ndgrad.randn(b, 1, s, s, generator=g), ndgrad.randint(0, 4, (b,), generator=g))
                for b in (8, 8, 4)]
    else:
        mod = _example(name)
        model = mod.CharModel(11, 8, 16)
        data = [(ndgrad.randint(0, 11, (6, 4), generator=g),
                 ndgrad.randint(0, 11, (6, 4), generator=g)) for _ in range(3)]
    opt = ndgrad.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    return model, data, opt


@pytest.mark.parametrize("name", ["mlp_classifier", "small_cnn", "char_lstm"])
@pytest.mark.parametrize("how", ["compile(model)", "Module.compile()"])
def test_example_training_loops_bitwise(name, how):
    model, data, opt = _make(name)
    e_losses, e_params = _train(model, model, data, opt)
    model, data, opt = _make(name)
    if how == "compile(model)":
        forward = ndgrad.compile(model)
    else:
        model.compile()
        forward = model
    c_losses, c_params = _train(model, forward, data, opt)
    for a, b in zip(c_losses + c_params, e_losses + e_params):
        np.testing.assert_array_equal(a, b, strict=True)


@pytest.mark.parametrize("name", ["mlp_classifier", "small_cnn", "char_lstm"])
def test_example_training_loops_with_changing_sizes_bitwise(name):
    """Batch sizes (and the LSTM's sequence length) changing every step: the default
    (automatic dynamic shapes) trains bitwise as eager mode."""
    sizes = {"mlp_classifier": (32, 24, 17, 9, 40, 13, 32),
             "small_cnn": (8, 6, 5, 3, 7, 6),
             "char_lstm": (6, 5, 7, 9, 5, 11)}[name]

    def make():
        model, _, opt = _make(name)
        g = ndgrad.Generator().manual_seed(1)
        if name == "mlp_classifier":
            data = [(ndgrad.randn(b, 2, generator=g), ndgrad.randint(0, 3, (b,), generator=g))
                    for b in sizes]
        elif name == "small_cnn":
            s = _example(name).SIZE
            data = [(ndgrad.randn(b, 1, s, s, generator=g),
                     ndgrad.randint(0, 4, (b,), generator=g)) for b in sizes]
        else:
            data = [(ndgrad.randint(0, 11, (t, 4), generator=g),
                     ndgrad.randint(0, 11, (t, 4), generator=g)) for t in sizes]
        return model, data, opt
    model, data, opt = make()
    e_losses, e_params = _train(model, model, data, opt)
    model, data, opt = make()
    c_losses, c_params = _train(model, ndgrad.compile(model), data, opt)
    for a, b in zip(c_losses + c_params, e_losses + e_params):
        np.testing.assert_array_equal(a, b, strict=True)


def test_mlp_compiled_step_matches_torch():
    nn = ndgrad.nn
    ndgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))
    tmodel = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    with torch.no_grad():
        for p, tp in zip(model.parameters(), tmodel.parameters()):
            tp.copy_(torch.from_numpy(p._data.copy()))
    cmodel = ndgrad.compile(model)
    opt = ndgrad.optim.SGD(model.parameters(), lr=0.1)
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(4):
        x = rng.standard_normal((5, 8)).astype(np.float32)
        y = rng.integers(0, 3, 5)
        for m, o, lib in ((cmodel, opt, ndgrad), (tmodel, topt, torch)):
            o.zero_grad()
            lib.nn.functional.cross_entropy(m(lib.tensor(x)), lib.tensor(y)).backward()
            o.step()
    for p, tp in zip(model.parameters(), tmodel.parameters()):
        np.testing.assert_allclose(p._data, tp.detach().numpy(), rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- guards
def _entries(cf):
    return [e for es in cf.cache.values() for e in es]


def test_guards_recompile_on_shape_dtype_requires_grad_grad_mode_and_constants():
    calls = []

    def f(x, k):
        calls.append(1)
        return x * k + 1

    cf = ndgrad.compile(f)
    x = ndgrad.randn(3, requires_grad=True)
    cf(x, 2.0)
    cf(x, 2.0)
    assert len(calls) == 1 and len(_entries(cf)) == 1        # the second call replayed
    variants = [(ndgrad.randn(4, requires_grad=True), 2.0),   # shape
                (ndgrad.randn(3, dtype=ndgrad.float64), 2.0),  # dtype, requires_grad
                (ndgrad.randn(3), 2.0),                        # requires_grad
                (x, 3.0)]                                      # a constant the trace used
    for i, (v, k) in enumerate(variants):
        out = cf(v, k)
        np.testing.assert_array_equal(out._data, (v * k + 1)._data)
        assert out.requires_grad == v.requires_grad
        assert len(_entries(cf)) == i + 2
    with ndgrad.no_grad():                                     # grad mode
        out = cf(x, 2.0)
    assert not out.requires_grad and len(_entries(cf)) == 6
    n = len(calls)
    cf(x, 3.0)
    assert len(calls) == n                                     # all cached now


def test_guards_parameter_identity_and_training_flag():
    nn = ndgrad.nn
    model = nn.Sequential(nn.Linear(3, 2), nn.Dropout(0.5))
    model.eval()
    cm = ndgrad.compile(model)
    x = ndgrad.randn(4, 3)
    cm(x)
    # optimizer-style in-place update: read live, no recompile
    with ndgrad.no_grad():
        model[0].weight.mul_(2.0)
    np.testing.assert_array_equal(cm(x)._data, model(x)._data)
    assert len(_entries(cm._compiled)) == 1
    # a new parameter object: read where the module holds it (guarded on shape, dtype,
    # requires_grad; a new shape recompiles)
    model[0].weight = nn.Parameter(ndgrad.randn(2, 3))
    np.testing.assert_array_equal(cm(x)._data, model(x)._data)
    assert len(_entries(cm._compiled)) == 1
    model[0].weight = nn.Parameter(ndgrad.randn(2, 3, dtype=ndgrad.float64))
    with pytest.raises(RuntimeError) as e1:
        cm(x)
    with pytest.raises(RuntimeError) as e2:
        model(x)
    assert str(e1.value) == str(e2.value)
    model[0].weight = nn.Parameter(ndgrad.randn(2, 3))
    # train(): dropout's noise is an instruction of the program (recompiled on the flag),
    # drawn afresh at every call from the same stream as eager
    model.train()
    for seed in (1, 2):
        ndgrad.manual_seed(seed)
        a = cm(x)
        ndgrad.manual_seed(seed)
        b = model(x)
        np.testing.assert_array_equal(a._data, b._data)
    assert not isinstance(_entries(cm._compiled)[-1], _EagerEntry)
    ndgrad.manual_seed(1)
    first = cm(x)
    second = cm(x)
    assert not np.array_equal(first._data, second._data)  # fresh noise, not replayed


def test_cache_size_limit_warns_and_runs_eagerly(caplog):
    _dynamo.config.cache_size_limit = 2
    try:
        cf = ndgrad.compile(lambda x: x.cos())
        with caplog.at_level(logging.WARNING, logger="ndgrad._dynamo"):
            for n in (1, 2, 3, 4):
                x = ndgrad.randn(n)
                np.testing.assert_array_equal(cf(x)._data, x.cos()._data)
        assert len(_entries(cf)) == 2
        msgs = [r.getMessage() for r in caplog.records]
        assert len(msgs) == 1 and "hit config.cache_size_limit (2)" in msgs[0]
    finally:
        _dynamo.config.cache_size_limit = 8


def test_reset_clears_caches():
    cf = ndgrad.compile(lambda x: x + 1)
    cf(ndgrad.ones(2))
    assert _entries(cf)
    ndgrad.compiler.reset()
    assert not _entries(cf)
    cf(ndgrad.ones(2))
    _dynamo.reset()
    assert not _entries(cf)


# --------------------------------------------------------------------------- graph breaks
def test_item_control_flow_falls_back_to_eager_and_fullgraph_raises():
    def f(x):
        if x.sum().item() > 0:
            return x * 2
        return x * 3

    cf = ndgrad.compile(f)
    for v in (1.0, -1.0, 1.0):
        x = ndgrad.full((3,), v)
        np.testing.assert_array_equal(cf(x)._data, f(x)._data)
    assert all(isinstance(e, _EagerEntry) for e in _entries(cf))
    with pytest.raises(_dynamo.exc.Unsupported, match=r"Tensor.item\(\)"):
        ndgrad.compile(f, fullgraph=True)(ndgrad.ones(3))
    assert issubclass(_dynamo.exc.Unsupported, RuntimeError)
    assert not ndgrad._state.special  # tracing state restored after the error


@pytest.mark.parametrize("body,reason", [
    (lambda x: x * float(x.sum()), "float(tensor)"),
    (lambda x: ndgrad.tensor(np.asarray(x) * 2), "np.asarray(tensor)"),
    (lambda x: ndgrad.isclose(x, x * 1.0), "computed outside ndgrad's ops"),
    (lambda x: (x * 2).register_hook(lambda g: g) and None or x * 2, "tensor hook registered"),
])
def test_graph_break_reasons(body, reason):
    x = ndgrad.randn(4, requires_grad=True)
    out = _dynamo.explain(body)(x)
    assert out.graph_count == 0 and out.graph_break_count >= 1
    assert any(reason in b.reason for b in out.break_reasons)
    with pytest.raises(_dynamo.exc.Unsupported):
        ndgrad.compile(body, fullgraph=True)(x)


def test_explain_reports_ops_and_user_stack():
    out = _dynamo.explain(_chain)(*_chain_inputs())
    assert out.graph_count == 1 and out.graph_break_count == 0
    assert out.ops_per_graph[0][:3] == ["mul", "add", "tanh"] and out.op_count == 31
    text = str(out)
    assert "Graph Count: 1" in text and "Ops per Graph:" in text

    def f(x):
        y = x * 2
        print(y)
        return y

    out = _dynamo.explain(f)(ndgrad.ones(2))
    assert out.graph_break_count == 1
    assert "printing a tensor" in out.break_reasons[0].reason
    assert any(fr.name == "f" for fr in out.break_reasons[0].user_stack)


def test_inplace_write_to_input_is_replayed():
    def f(x, buf):
        buf.add_(1.0)
        return x * buf

    cf = ndgrad.compile(f)
    x = ndgrad.randn(3, requires_grad=True)
    buf1 = ndgrad.zeros(3)
    buf2 = ndgrad.zeros(3)
    for _ in range(3):
        a = cf(x, buf1)
        b = f(x, buf2)
        np.testing.assert_array_equal(a._data, b._data)
        np.testing.assert_array_equal(buf1._data, buf2._data)
        assert buf1._version == buf2._version


# --------------------------------------------------------------------------- autograd
def test_hooks_on_region_inputs_and_outputs():
    cf = ndgrad.compile(lambda x, w: (x * w).tanh())
    x = ndgrad.randn(3, requires_grad=True)
    w = ndgrad.randn(3, requires_grad=True)
    cf(x, w)
    seen = []
    out = cf(x, w)
    out.register_hook(lambda g: seen.append(("out", g._data.copy())) or g * 2)
    x.register_hook(lambda g: seen.append(("x", g._data.copy())))
    out.sum().backward()
    eager = (x.detach() * w.detach()).tanh()
    np.testing.assert_array_equal(seen[0][1], np.ones(3, np.float32))
    np.testing.assert_allclose(seen[1][1], 2 * (1 - eager._data ** 2) * w._data, rtol=1e-6)
    np.testing.assert_array_equal(x.grad._data, seen[1][1])


def test_autograd_grad_non_leaf_inputs_and_unused():
    def f(a, b, c):
        return (a * b).sum(), (a + 1)

    cf = ndgrad.compile(f)
    x = ndgrad.randn(3, requires_grad=True)
    b = ndgrad.randn(3, requires_grad=True)
    c = ndgrad.randn(3, requires_grad=True)
    for fn in (cf, cf, f):
        a = x * 2                       # a non-leaf input of the region
        s, _ = fn(a, b, c)
        ga, gb, gc = ndgrad.autograd.grad(s, (a, b, c), allow_unused=True)
        (gx,) = ndgrad.autograd.grad(fn(x * 2, b, c)[0], x)
        if fn is cf:
            res = (ga._data, gb._data, gc, gx._data)
    np.testing.assert_array_equal(res[0], b._data)
    np.testing.assert_array_equal(res[1], (x * 2)._data)
    assert res[2] is None
    np.testing.assert_array_equal(res[3], (b * 2)._data)


def test_create_graph_through_region_falls_back_to_eager():
    def f(x, w):
        return (ndgrad.sin(x) * w).sum()

    cf = ndgrad.compile(f)
    x = ndgrad.randn(5, dtype=ndgrad.float64, requires_grad=True)
    w = ndgrad.randn(5, dtype=ndgrad.float64, requires_grad=True)
    cf(x, w)
    res = []
    for fn in (cf, f):
        (g,) = ndgrad.autograd.grad(fn(x, w), x, create_graph=True)
        (gg,) = ndgrad.autograd.grad(g.sum(), (x,))
        res.append((g._data, gg._data))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    np.testing.assert_allclose(res[0][1], -np.sin(x._data) * w._data)


def test_version_check_backward_twice_and_retain_graph():
    cf = ndgrad.compile(lambda x, w: (x * w).sum())
    x = ndgrad.randn(3, requires_grad=True)
    w = ndgrad.randn(3)
    cf(x, w)
    out = cf(x, w)
    out.backward(retain_graph=True)
    out.backward()
    np.testing.assert_array_equal(x.grad._data, 2 * w._data)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        out.backward()
    out = cf(x, w)
    eager = (x * w).sum()
    with ndgrad.no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as e1:
        out.backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as e2:
        eager.backward()
    assert "is at version 1; expected version 0" in str(e1.value)
    assert "is at version 1; expected version 0" in str(e2.value)


def test_special_modes_run_eagerly():
    cf = ndgrad.compile(lambda x: x.exp())
    x = ndgrad.randn(3, requires_grad=True)
    cf(x)
    with ndgrad.autograd.detect_anomaly():
        out = cf(x)
    assert out.grad_fn.name() == "ExpBackward0"
    assert not ndgrad.compiler.is_compiling()


# --------------------------------------------------------------------------- memory, threads
def test_compiled_training_loop_memory_is_flat():
    model, data, opt = _make("mlp_classifier")
    cm = ndgrad.compile(model)
    x, y = data[0]

    def step():
        opt.zero_grad()
        ndgrad.nn.functional.cross_entropy(cm(x), y).backward()
        opt.step()
    for _ in range(20):
        step()
    gc.collect()
    tracemalloc.start()
    for _ in range(50):
        step()
    gc.collect()
    base, _ = tracemalloc.get_traced_memory()
    for _ in range(300):
        step()
    gc.collect()
    now, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert now - base < 20_000, f"memory grew by {now - base} bytes over 300 steps"


def test_threads():
    n = ndgrad.get_num_threads()
    assert n >= 1
    for bad, msg in ((0, "expects a positive integer"), (-1, "expects a positive integer"),
                     (1.5, "expects an int, but got float")):
        with pytest.raises(RuntimeError, match=msg):
            ndgrad.set_num_threads(bad)
        with pytest.raises(RuntimeError, match=msg):
            torch.set_num_threads(bad)
    ndgrad.set_num_threads(1)
    assert ndgrad.get_num_threads() == 1
    ndgrad.set_num_threads(n)
    assert ndgrad.get_num_threads() == n


def test_kernel_errors_are_eager_errors():
    cf = ndgrad.compile(lambda a: ndgrad.linalg.cholesky(a))
    good = ndgrad.eye(2, dtype=ndgrad.float64)
    cf(good)
    bad = ndgrad.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=ndgrad.float64)
    with pytest.raises(Exception) as e1:
        cf(bad)
    with pytest.raises(Exception) as e2:
        ndgrad.linalg.cholesky(bad)
    assert type(e1.value) is type(e2.value) and str(e1.value) == str(e2.value)


def test_view_outputs_run_eagerly():
    cf = ndgrad.compile(lambda x: x.t())
    x = ndgrad.randn(2, 3, requires_grad=True)
    y = x * 1
    for _ in range(2):
        out = cf(y)
        assert out._base is y
    assert isinstance(_entries(cf)[0], _EagerEntry)


def test_view_of_internal_value_is_compiled():
    f = lambda x: (x * 2).view(-1)  # noqa: E731
    cf = ndgrad.compile(f)
    x = ndgrad.randn(2, 3, requires_grad=True)
    for _ in range(2):
        np.testing.assert_array_equal(cf(x)._data, f(x)._data)
    assert not isinstance(_entries(cf)[0], _EagerEntry)


def test_writes_outside_the_ops_break():
    nn = ndgrad.nn
    bn = nn.BatchNorm1d(3)
    cbn = ndgrad.compile(bn)
    bn2 = nn.BatchNorm1d(3)
    x = ndgrad.randn(4, 3)
    for _ in range(3):
        np.testing.assert_array_equal(cbn(x)._data, bn2(x)._data)
    np.testing.assert_array_equal(bn.running_mean._data, bn2.running_mean._data)
    assert bn.running_mean._version == bn2.running_mean._version
    out = _dynamo.explain(bn)(x)
    assert any("written outside ndgrad's ops" in b.reason for b in out.break_reasons)


def test_two_views_of_one_internal_value_run_eagerly():
    def f(x):
        y = x * 2
        return y[0], y[1]

    cf = ndgrad.compile(f)
    x = ndgrad.randn(2, 3, requires_grad=True)
    for _ in range(2):
        a, b = cf(x)
        assert a._base is b._base and a._base is not None


def test_module_hooks_keep_running():
    nn = ndgrad.nn
    seen = []
    model = nn.Sequential(nn.Linear(3, 2))
    model.register_forward_hook(lambda m, i, o: seen.append("root"))
    model[0].register_forward_hook(lambda m, i, o: seen.append("inner"))
    cm = ndgrad.compile(model)          # hooks inside the region: eager calls
    x = ndgrad.randn(4, 3)
    for _ in range(2):
        np.testing.assert_array_equal(cm(x)._data, model[0](x)._data)
    assert seen.count("root") == 2 and seen.count("inner") >= 2
    seen.clear()
    plain = nn.Linear(3, 2)
    plain.register_forward_hook(lambda m, i, o: seen.append("around"))
    plain.compile()                     # forward compiled, its hooks run around it
    for _ in range(3):
        plain(x)
    assert seen == ["around"] * 3
    assert plain(x).grad_fn.name() == "CompiledFunctionBackward"


def test_errors_in_the_traced_call_leave_no_state():
    def f(x):
        x * 2  # noqa: B018 - an op runs before the error
        raise ValueError("boom")

    cf = ndgrad.compile(f)
    # (observers installed for good by earlier tests, e.g. inference mode's marker, stay)
    hooks_before = list(ndgrad._ops.registry.special_hooks)
    with pytest.raises(ValueError, match="boom"):
        cf(ndgrad.ones(2))
    assert not _entries(cf)
    assert not ndgrad._state.special
    assert ndgrad._ops.registry.special_hooks == hooks_before
    assert ndgrad.Tensor.item is ndgrad.Tensor.__dict__["item"]
    assert not hasattr(ndgrad.Tensor.__dict__["item"], "__wrapped__")
    assert ndgrad.tensor(2.5).item() == 2.5


def test_backward_results_new_shared_and_passed_through_and_unused_outputs():
    # The node's results: new arrays, one gradient reaching two inputs, an output gradient
    # passed through unchanged, and outputs that get no gradient (zeros fed in).
    def f(lib, a, b, c):
        s = a + b          # the same gradient reaches a and b
        return (s * c).sum(), c * 3, c + 0

    res = {}
    for name, lib in (("torch", torch), ("ndgrad", ndgrad)):
        rng = np.random.default_rng(5)
        vals = [rng.standard_normal(4).astype(np.float32) for _ in range(3)]
        out = []
        for compiled in (False, True):
            a, b, c = (lib.tensor(v, requires_grad=True) for v in vals)
            fn = (lambda *t: f(lib, *t))
            if compiled and lib is ndgrad:
                fn = ndgrad.compile(fn)
            for _ in range(2):  # the second call runs the compiled region
                a.grad = b.grad = c.grad = None
                loss, _, _ = fn(a, b, c)
                loss.backward()
            out.append([a.grad.numpy().copy(), b.grad.numpy().copy(), c.grad.numpy().copy()])
            a.grad = b.grad = c.grad = None
            _, y, z = fn(a, b, c)
            (y.sum() + (z * 2).sum()).backward()
            out.append([c.grad.numpy().copy()])
        res[name] = out
    for k in range(4):
        for x, y in zip(res["torch"][k], res["ndgrad"][k]):
            assert x.tobytes() == y.tobytes()


def test_inputs_reached_only_by_outputs_without_gradient_get_none():
    """An input whose only path runs through an output that got no gradient keeps .grad None,
    as in eager mode and torch (the compiled program would compute zeros for it)."""
    def f(lib, a, c):
        return (a * c).sum(), c * 3

    seen = {}
    for name, lib in (("torch", torch), ("eager", ndgrad), ("compiled", ndgrad)):
        fn = (lambda a, c: f(ndgrad, a, c)) if name != "compiled" else \
            ndgrad.compile(lambda a, c: f(ndgrad, a, c))
        if name == "torch":
            fn = lambda a, c: f(torch, a, c)  # noqa: E731
        for _ in range(3):  # first call traces, later ones replay
            a = lib.ones(3, requires_grad=True)
            c = lib.ones(3, requires_grad=True)
            fn(a, c)[1].sum().backward()
        seen[name] = (a.grad, c.grad.numpy())
    for name in ("eager", "compiled"):
        assert seen[name][0] is None and seen["torch"][0] is None
        np.testing.assert_array_equal(seen[name][1], seen["torch"][1])


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_backward_replays_ties_and_nans(name):
    """The backward of max()/min() over all elements splits the gradient among the ties (or
    the NaNs): a compiled backward traced without ties must count them on each call."""
    def f(x):
        return getattr(x, name)() * 3
    cf = ndgrad.compile(f, dynamic=False)
    first = True
    for vals in ([1.0, 3.0, 2.0], [3.0, 3.0, -1.0], [-1.0, -1.0, -1.0],
                 [float("nan"), 2.0, float("nan")], [2.0, 5.0, 2.0]):
        x = ndgrad.tensor(vals, requires_grad=True)
        out = cf(x)
        out.backward()
        t = torch.tensor(vals, requires_grad=True)
        (getattr(t, name)() * 3).backward()
        np.testing.assert_array_equal(out._data, (getattr(t, name)() * 3).detach().numpy())
        np.testing.assert_array_equal(x.grad._data, t.grad.numpy())
        if not first:
            assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
        first = False


_VALUE_CASES = {
    # name: (function, trace values, replay values) -- the replay changes a decision that
    # ndgrad's code takes on the values (a compiled program would replay the trace's)
    "int_tensor_index": (lambda x, i: x[i] * 2, [1.0, 3.0, 2.0], [1.0, 3.0, 2.0]),
    "prod_zero": (lambda x, i: x.prod() * 1, [1.0, 3.0, 2.0], [0.0, 3.0, 2.0]),
    "prod_dim_zero": (lambda x, i: x.view(2, 2).prod(0).sum(), [1.0, 3.0, 2.0, 4.0],
                      [0.0, 3.0, 2.0, 0.0]),
    "cumprod_zero": (lambda x, i: x.cumprod(0).sum(), [1.0, 2.0, 3.0], [1.0, 0.0, 2.0]),
    "median_ties": (lambda x, i: x.median() * 3, [1.0, 3.0, 2.0], [2.0, 2.0, 3.0]),
    "nanmedian_ties": (lambda x, i: x.nanmedian() * 3, [1.0, 3.0, 2.0, 5.0],
                       [1.0, 1.0, 1.0, 2.0]),
    "median_nan": (lambda x, i: x.median() * 3, [1.0, 3.0, 2.0], [2.0, float("nan"), 3.0]),
    "tensor_of_tensor": (lambda x, i: x * ndgrad.tensor(x.detach()), [1.0, 2.0],
                         [3.0, 2.0]),
    "allclose": (lambda x, i: x * 2 if ndgrad.allclose(x, x.detach() * 0 + 1) else x * 3,
                 [1.0, 1.0], [5.0, 1.0]),
    "equal": (lambda x, i: x * 2 if ndgrad.equal(x, x.detach() * 0 + 1) else x * 3,
              [1.0, 1.0], [5.0, 1.0]),
    "complex": (lambda x, i: x * complex(x.sum()).real, [1.0, 2.0], [3.0, 2.0]),
    "tensor_split_indices": (lambda x, i: x.tensor_split(i + 1)[0].sum(),
                             [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]),
}


@pytest.mark.parametrize("name", sorted(_VALUE_CASES))
def test_values_read_into_python_break_the_graph(name):
    """Code reading a tensor's values into Python (a decision, an int) where the tracer
    cannot see a Tensor method is a graph break: the replay on other values matches eager."""
    fn, a, b = _VALUE_CASES[name]
    cf = ndgrad.compile(fn, dynamic=False)
    for vals, i in ((a, 0), (b, 2 if name != "tensor_split_indices" else 1)):
        idx = ndgrad.tensor(i)
        x = ndgrad.tensor(vals, requires_grad=True)
        out = cf(x, idx)
        out.sum().backward()
        xe = ndgrad.tensor(vals, requires_grad=True)
        ref = fn(xe, idx)
        ref.sum().backward()
        np.testing.assert_array_equal(out._data, ref._data)
        np.testing.assert_array_equal(x.grad._data, xe.grad._data)
