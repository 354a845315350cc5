"""The autograd profiler, differential against torch 2.13: event names, backward events linked
by sequence number, nesting, shapes, FLOPs, memory, the table layout and the chrome trace."""

import json
import re
import warnings

import numpy as np
import pytest
import torch
from _helpers import backward_garbage
from torch.autograd import profiler as tprof

import ndgrad
from ndgrad import _state
from ndgrad.autograd import profiler as nprof

LIBS = ((torch, tprof), (ndgrad, nprof))


def _program(lib, prof_mod, **kw):
    a = lib.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, requires_grad=True)
    b = lib.tensor(np.ones((3, 4), dtype=np.float32), requires_grad=True)
    with prof_mod.profile(**kw) as prof:
        with prof_mod.record_function("my_block"):
            y = (a * b + a).tanh()
            s = y.sum()
        s.backward()
    return prof


@pytest.fixture(scope="module")
def profs():
    out = {}
    for lib, mod in LIBS:
        out[lib] = _program(lib, mod, record_shapes=True, with_flops=True, profile_memory=True)
    assert _state.special == 0
    return out


def _by_name(prof, name):
    return [e for e in prof.function_events if e.name == name]


def test_forward_op_and_backward_node_names_match_torch(profs):
    names = {lib: {e.name for e in p.function_events} for lib, p in profs.items()}
    expected = {"my_block", "aten::mul", "aten::add", "aten::tanh", "aten::sum",
                "aten::tanh_backward", "MulBackward0", "AddBackward0", "TanhBackward0",
                "SumBackward0", "autograd::engine::evaluate_function: MulBackward0",
                "autograd::engine::evaluate_function: TanhBackward0"}
    assert expected <= names[torch]
    assert expected <= names[ndgrad]
    # Every event ndgrad records is one torch records for the same program.
    assert names[ndgrad] - names[torch] <= {"[memory]"}


def test_backward_events_linked_by_sequence_number(profs):
    for lib, p in profs.items():
        seq = {n: _by_name(p, n)[0].sequence_nr for n in
               ("aten::mul", "aten::add", "aten::tanh", "aten::sum")}
        assert sorted(seq.values()) == [seq["aten::mul"] + k for k in range(4)], lib
        for fwd, bwd in (("aten::mul", "MulBackward0"), ("aten::add", "AddBackward0"),
                         ("aten::tanh", "TanhBackward0"), ("aten::sum", "SumBackward0")):
            assert _by_name(p, bwd)[0].sequence_nr == seq[fwd]
            outer = _by_name(p, "autograd::engine::evaluate_function: " + bwd)[0]
            assert outer.sequence_nr == seq[fwd]
            assert _by_name(p, bwd)[0].cpu_parent is outer
        assert _by_name(p, "my_block")[0].sequence_nr == -1


def test_nesting_matches_torch(profs):
    for lib, p in profs.items():
        block = _by_name(p, "my_block")[0]
        assert {e.name for e in block.cpu_children} >= {"aten::mul", "aten::add", "aten::tanh",
                                                       "aten::sum"}
        tb = _by_name(p, "aten::tanh_backward")[0]
        assert tb.cpu_parent.name == "TanhBackward0"
        muls = [e for e in _by_name(p, "aten::mul") if e.cpu_parent is not None
                and e.cpu_parent.name == "MulBackward0"]
        assert len(muls) == 2
        for e in p.function_events:
            assert e.self_cpu_time_total <= e.cpu_time_total + 1e-9
            assert e.time_range.start <= e.time_range.end


def test_shapes_flops_memory_match_torch(profs):
    for key, getter in (("shapes", lambda e: e.input_shapes[:2]),
                        ("flops", lambda e: e.flops),
                        ("mem", lambda e: e.cpu_memory_usage)):
        for name in ("aten::mul", "aten::tanh"):
            vals = {lib: getter(_by_name(p, name)[0]) for lib, p in profs.items()}
            assert vals[ndgrad] == vals[torch], (key, name, vals)
    t = _by_name(profs[ndgrad], "aten::mul")[0]
    assert t.input_shapes == [[3, 4], [3, 4]] and t.flops == 12
    assert _by_name(profs[ndgrad], "aten::sum")[0].cpu_memory_usage == 4


def test_key_averages_counts_and_totals(profs):
    for lib, p in profs.items():
        avg = {e.key: e for e in p.key_averages()}
        assert avg["aten::mul"].count == 3
        assert avg["aten::tanh"].count == 1
        assert avg["aten::mul"].flops == 36
        total = p.total_average()
        assert total.key == "Total"
        assert total.self_cpu_time_total == pytest.approx(p.self_cpu_time_total)
        assert p.self_cpu_time_total == pytest.approx(
            sum(e.self_cpu_time_total for e in p.function_events))
        grouped = p.key_averages(group_by_input_shape=True)
        shapes = {(e.key, str(e.input_shapes)) for e in grouped}
        assert ("aten::tanh", "[[3, 4]]") in shapes


def _header(table):
    lines = table.splitlines()
    assert set(lines[0].replace(" ", "")) == {"-"}
    return [h for h in re.split(r"\s{2,}", lines[1].strip())], lines


@pytest.mark.parametrize("kwargs", [dict(), dict(group_by_input_shape=True)])
def test_table_columns_match_torch(profs, kwargs):
    heads = {}
    for lib, p in profs.items():
        table = p.key_averages(**kwargs).table(sort_by="self_cpu_time_total", row_limit=4)
        head, lines = _header(table)
        heads[lib] = head
        assert len(lines) == 3 + 4 + 2  # sep, header, sep, 4 rows, sep, footer
        assert lines[-1].startswith("Self CPU time total: ")
        assert lines[-2] == lines[0] == lines[2]
        # rows sorted by Self CPU, descending
        rows = [re.split(r"\s{2,}", r.strip()) for r in lines[3:7]]
        values = [_us(r[2]) for r in rows]
        assert values == sorted(values, reverse=True)
    assert heads[ndgrad] == heads[torch]


def test_table_plain_columns_match_torch():
    heads = {}
    for lib, mod in LIBS:
        p = _program(lib, mod)
        heads[lib] = _header(p.key_averages().table(sort_by="cpu_time_total", row_limit=2))[0]
        assert heads[lib] == _header(p.table(row_limit=2))[0]
    assert heads[ndgrad] == heads[torch] == ["Name", "Self CPU %", "Self CPU", "CPU total %",
                                             "CPU total", "CPU time avg", "# of Calls"]


def _us(text):
    for unit, f in (("ms", 1e3), ("us", 1.0), ("s", 1e6)):
        if text.endswith(unit):
            return float(text[:-len(unit)]) * f
    raise ValueError(text)


def test_chrome_trace(profs, tmp_path):
    path = tmp_path / "trace.json"
    profs[ndgrad].export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    events = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert {"aten::mul", "MulBackward0", "my_block"} <= {e["name"] for e in events}
    for e in events:
        assert {"ts", "dur", "pid", "tid", "args", "name"} <= set(e)
        assert e["dur"] >= 0
    flows = [e for e in data["traceEvents"] if e.get("cat") == "fwdbwd"]
    assert {e["ph"] for e in flows} == {"s", "f"}


def test_record_function_decorator_and_enabled_false():
    @nprof.record_function("decorated")
    def f(x):
        return x * 2

    x = ndgrad.ones(2)
    with nprof.profile() as p:
        f(x)
    ev = _by_name(p, "decorated")[0]
    assert [c.name for c in ev.cpu_children] == ["aten::mul"]
    with nprof.profile(enabled=False):
        assert _state.special == 0
        f(x)
    assert _state.special == 0
    with pytest.raises(RuntimeError):
        nprof.profile().function_events


def test_nested_profilers_both_record():
    x = ndgrad.ones(2, requires_grad=True)
    with nprof.profile() as outer:
        (x * 3).sum()
        with nprof.profile() as inner:
            x.exp()
    assert [e.name for e in inner.function_events] == ["aten::exp"]
    assert [e.name for e in outer.function_events] == ["aten::mul", "aten::sum", "aten::exp"]
    assert _state.special == 0


def test_with_stack_records_caller():
    x = ndgrad.ones(2)
    with nprof.profile(with_stack=True) as p:
        x * 2
    ev = _by_name(p, "aten::mul")[0]
    assert ev.stack[0].startswith(__file__ + "(")
    assert ev.stack[0].endswith("test_with_stack_records_caller")
    table = p.table()
    assert "Source Location" in table


def test_emit_nvtx_and_itt_say_so_once():
    nprof._said.clear()
    for cls in (nprof.emit_nvtx, nprof.emit_itt):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with cls():
                pass
            with cls(record_shapes=True):
                pass
        assert len(w) == 1 and "does nothing" not in str(w[0].message)
        assert "records nothing" in str(w[0].message)


# ------------------------------------------------------------------ torch.profiler's API
def test_schedule_actions_match_torch():
    import torch.profiler as tp

    import ndgrad.profiler as np_
    for kw in (dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=2),
               dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3)):
        ts, ns = tp.schedule(**kw), np_.schedule(**kw)
        assert [ns(i).name for i in range(20)] == [ts(i).name for i in range(20)], kw


def test_scheduled_windows_match_torch():
    import torch.profiler as tp

    import ndgrad.profiler as np_
    out = {}
    for lib, mod in ((torch, tp), (ndgrad, np_)):
        ready = []
        x = lib.ones(3, requires_grad=True)
        with mod.profile(activities=[mod.ProfilerActivity.CPU],
                         schedule=mod.schedule(wait=1, warmup=1, active=2, repeat=2),
                         on_trace_ready=lambda p: ready.append(
                             (p.step_num, sorted({e.key for e in p.key_averages()
                                                  if e.key.startswith("aten::mul")})))) as p:
            for _ in range(10):
                (x * 2).sum().backward()
                p.step()
        out[lib] = ready
    assert out[ndgrad] == out[torch]
    assert [s for s, _ in out[ndgrad]] == [4, 8]


def test_recording_creates_no_garbage_cycles():
    x = ndgrad.ones(3, requires_grad=True)
    with nprof.profile(profile_memory=True):
        garbage = backward_garbage(x)
    assert garbage == 0


def test_failed_op_does_not_swallow_later_events_and_nesting_like_torch():
    parents = {}
    for lib, mod in LIBS:
        x = lib.ones(2, requires_grad=True)
        with mod.profile() as p:
            try:
                lib.ones(2) + lib.ones(3)
            except RuntimeError:
                pass
            y = x * 1
            y.mul_(x)  # saves the old self: a clone nested in the in-place op, as in torch
        parents[lib] = {(e.name, e.cpu_parent.name if e.cpu_parent else None)
                        for e in p.function_events}
        assert all(e.cpu_time_total >= 0 for e in p.function_events)
    wanted = {("aten::mul", None), ("aten::mul_", None), ("aten::clone", "aten::mul_")}
    assert wanted <= parents[torch]
    assert wanted <= parents[ndgrad]
    assert ("aten::mul", "aten::add") not in parents[ndgrad]


# ------------------------------------------------------------------ AccumulateGrad events
_ACC = "torch::autograd::AccumulateGrad"
_EVAL_ACC = "autograd::engine::evaluate_function: " + _ACC


def _subtree(e):
    return (e.name, e.sequence_nr, str(e.input_shapes), tuple(_subtree(c) for c in e.cpu_children))


def _leaf_trees(events):
    """The AccumulateGrad evaluations of a profile, as (name, seq, shapes, children) trees,
    in a canonical order (the engine's order among leaves is not compared)."""
    return sorted(_subtree(e) for e in events if e.name == _EVAL_ACC)


def _leaf_program(lib, steps):
    """Each step: (name, fn(a, b, c)) profiled; leaves a and b (3, 4) and c (2,)."""
    a = lib.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, requires_grad=True)
    b = lib.tensor(np.ones((3, 4), dtype=np.float32), requires_grad=True)
    c = lib.tensor(np.array([1.0, -2.0], dtype=np.float32), requires_grad=True)
    mod = tprof if lib is torch else nprof
    out = {}
    for name, fn in steps:
        with mod.profile(record_shapes=True) as p:
            fn(lib, a, b, c)
        out[name] = p
    return out


_LEAF_STEPS = (
    # fresh gradients: stolen (aten::detach); c's expanded one is copied
    ("first", lambda lib, a, b, c: ((a * b + a).tanh().sum() + c.sum()).backward()),
    # every .grad exists: added in place
    ("accumulate", lambda lib, a, b, c: ((a * b + a).tanh().sum() + c.sum()).backward()),
    # autograd.grad: the leaf is evaluated (captured) but its AccumulateGrad does not run
    ("grad", lambda lib, a, b, c: lib.autograd.grad((a * b).sum(), [a])),
    # backward(inputs=): only the chosen leaf is evaluated
    ("inputs", lambda lib, a, b, c: (a * b).sum().backward(inputs=[b])),
)


def test_accumulate_grad_events_match_torch():
    profs = {lib: _leaf_program(lib, _LEAF_STEPS) for lib, _ in LIBS}
    for name, _ in _LEAF_STEPS:
        trees = {lib: _leaf_trees(profs[lib][name].function_events) for lib in profs}
        assert trees[ndgrad] == trees[torch], name
    first = _leaf_trees(profs[ndgrad]["first"].function_events)
    kernels = sorted(t[3][0][3][0][0] for t in first)
    assert kernels == ["aten::detach", "aten::detach", "aten::new_empty_strided"]
    assert [len(t[3]) for t in _leaf_trees(profs[ndgrad]["grad"].function_events)] == [0]


def test_accumulate_grad_in_key_averages_and_tables_match_torch():
    """A tiny model's key_averages rows for the leaves, with both profiler APIs."""
    import torch.profiler as tp

    import ndgrad.profiler as np_
    rows = {}
    for lib, mod, new_api in ((torch, tprof, False), (ndgrad, nprof, False),
                              (torch, tp, True), (ndgrad, np_, True)):
        w = lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 10, requires_grad=True)
        x = lib.tensor(np.ones((4, 3), dtype=np.float32))
        got = []
        for _ in range(2):  # the first backward steals the gradients, the second adds
            with mod.profile(record_shapes=True) as p:
                (x * w.sum(0)).tanh().sum().backward()
                w.sum().backward()
            events = p.events() if new_api else p.function_events
            avg = p.key_averages()
            got.append(({e.key: e.count for e in avg if e.key in
                         (_EVAL_ACC, _ACC, "aten::detach", "detach", "aten::add_",
                          "aten::new_empty_strided", "aten::copy_")},
                        [e.sequence_nr for e in events if e.name in (_EVAL_ACC, _ACC)],
                        _ACC in p.key_averages().table(), _EVAL_ACC[:52] in avg.table()))
        rows[lib, new_api] = got
    for new_api in (False, True):
        assert rows[ndgrad, new_api] == rows[torch, new_api]
    first, second = rows[ndgrad, False]
    assert first[0][_ACC] == 2 and second[0]["aten::add_"] == 2
    assert set(first[1]) == {-1}


def test_accumulate_grad_nests_hooks_like_torch():
    """Tensor hooks and node pre/post hooks run in the evaluation, post-accumulate-grad hooks
    inside AccumulateGrad; an undefined gradient still runs the node (shapes [[]])."""
    parents = {}
    trees = {}
    for lib, mod in LIBS:
        x = lib.ones(2, requires_grad=True)
        x.register_hook(lambda g: g * 3)
        def scale_grad(t):
            t.grad.mul_(1)

        x.register_post_accumulate_grad_hook(scale_grad)
        y = x * 2
        y.grad_fn.next_functions[0][0].register_prehook(lambda gi: (gi[0].neg(),))

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, u, v):
                return u * 1 + v

            @staticmethod
            def backward(ctx, g):
                return g, None

        z = lib.ones(2, requires_grad=True)
        with mod.profile(record_shapes=True) as p:
            F.apply(y, z).sum().backward()
        parents[lib] = {(e.name, e.cpu_parent.name if e.cpu_parent else None)
                        for e in p.function_events}
        trees[lib] = [t for t in _leaf_trees(p.function_events) if t[3][0][2] == "[[]]"]
        assert x.grad.tolist() == [-6.0, -6.0] and z.grad is None
    wanted = {("aten::mul", _EVAL_ACC), ("aten::neg", _EVAL_ACC), ("aten::mul_", _ACC),
              (_ACC, _EVAL_ACC)}
    assert wanted <= parents[torch]
    assert wanted <= parents[ndgrad]
    assert trees[ndgrad] == trees[torch] == [(_EVAL_ACC, -1, "[]", ((_ACC, -1, "[[]]", ()),))]


def test_accumulate_grad_memory_and_trace_match_torch(tmp_path):
    mem, args = {}, {}
    for lib, mod in LIBS:
        x = lib.ones(100, requires_grad=True)
        with mod.profile(profile_memory=True) as p:
            x.sum().backward()  # the expanded gradient is copied into a new .grad
        mem[lib] = {e.key: (e.cpu_memory_usage, e.self_cpu_memory_usage)
                    for e in p.key_averages() if e.key in (_EVAL_ACC, _ACC,
                                                           "aten::new_empty_strided")}
        path = tmp_path / f"{lib.__name__}.json"
        p.export_chrome_trace(str(path))
        trace = json.loads(path.read_text())["traceEvents"]
        args[lib] = {}
        for e in trace:  # the first event of each name
            if e.get("ph") == "X" and e["name"] in (_ACC, _EVAL_ACC, "aten::sum", "SumBackward0"):
                args[lib].setdefault(e["name"], sorted(set(e["args"]) & {"Sequence number",
                                                                         "Fwd thread id"}))
    assert mem[ndgrad] == mem[torch] == {_EVAL_ACC: (400, 0), _ACC: (400, 0),
                                         "aten::new_empty_strided": (400, 0)}
    assert args[ndgrad] == args[torch]
    assert args[ndgrad][_ACC] == [] and args[ndgrad]["aten::sum"] == ["Fwd thread id",
                                                                      "Sequence number"]


def test_accumulate_grad_under_profiler_steals_as_without_it():
    """The profiled engine path keeps the plain path's results, and the stolen gradient."""
    grads = []
    for profiled in (False, True):
        x = ndgrad.ones(3, requires_grad=True)
        y = x * 2
        with nprof.profile(enabled=profiled):
            y.tanh().sum().backward()
            grads.append(x.grad.tolist())
            x.grad.add_(1)  # a stolen .grad is writable and owns its memory
        assert x.grad._data.base is None and x.grad._data.flags.writeable
    assert grads[0] == grads[1]
    assert _state.special == 0
