"""Corners of torch.autograd's API that PyTorch's own autograd tests rely on, differential
against torch 2.13: the view-replay switch, engine callbacks, grad-mode decorators in all their
spellings, the create_graph warning, direct calls of a grad_fn, and the deprecated gradcheck
helpers' warnings.

Each scenario is one function of the library; it runs with ndgrad and with torch and the
observations (values, node names, warning and error texts) must be the same.
"""

import importlib
import warnings

import numpy as np
import pytest
import torch

import ndgrad

LIBS = (torch, ndgrad)


def _both(scenario):
    """Run `scenario(L)` for torch and ndgrad; return the two observations."""
    return [scenario(L) for L in LIBS]


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        fn()
    return [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
            for w in ws]


# ----------------------------------------------------------------------- view replay
def _write_through_view(L):
    x = L.ones(2, 2, requires_grad=True)
    out = x.clone().view(-1)
    out.mul_(3)
    return out


def test_view_replay_switch_names_the_regenerated_node_and_restores_state():
    def scenario(L):
        seen = [L.autograd.is_view_replay_enabled()]
        with L.autograd._force_original_view_tracking(True):
            out = _write_through_view(L)
            seen += [type(out.grad_fn).__name__, L.autograd.is_view_replay_enabled()]
        seen += [type(_write_through_view(L).grad_fn).__name__,
                 L.autograd.is_view_replay_enabled()]
        # a plain call switches at once; a context manager around it restores the outer state
        with L.autograd._force_original_view_tracking(False):
            L.autograd._force_original_view_tracking(True)
            seen.append(L.autograd.is_view_replay_enabled())
        seen.append(L.autograd.is_view_replay_enabled())
        out = _write_through_view(L)
        out.sum().backward()
        return seen, out.detach().numpy().tolist()

    t, n = _both(scenario)
    assert t == n
    assert t[0][1] == "ViewBackward0"


def test_view_replay_gradients_match_without_replay():
    def scenario(L):
        grads = []
        for mode in (True, False):
            x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
            with L.autograd._force_original_view_tracking(mode):
                base = x * 1
                v = base.view(-1)[1:3]
                v.mul_(L.tensor([5.0, 7.0]))
                (v * L.tensor([2.0, 3.0])).sum().backward()
            grads.append(x.grad.numpy().tolist())
        return grads

    t, n = _both(scenario)
    assert t == n


def test_view_replay_switch_as_decorator_applies_inside_only():
    def scenario(L):
        try:
            @L.autograd._force_original_view_tracking(True)
            def inside():
                return L.autograd.is_view_replay_enabled()

            before = L.autograd.is_view_replay_enabled()
            return before, inside(), L.autograd.is_view_replay_enabled()
        finally:
            L.autograd._force_original_view_tracking(False)

    t, n = _both(scenario)
    assert t == n == (False, True, False)
    assert not ndgrad.autograd.is_view_replay_enabled()


# ------------------------------------------------------------------- engine callbacks
def test_queued_callbacks_run_after_the_graph_including_ones_they_queue():
    def scenario(L):
        log = []

        def second():
            log.append("second")

        def first():
            log.append("first")
            L.autograd.Variable._execution_engine.queue_callback(second)

        class Mark(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                L.autograd.Variable._execution_engine.queue_callback(first)
                log.append("backward")
                return g * 2

        a = L.tensor([1.0, 2.0], requires_grad=True)

        def hook(g):
            log.append("leaf hook")
        a.register_hook(hook)
        Mark.apply(a).sum().backward()
        return log, a.grad.numpy().tolist()

    t, n = _both(scenario)
    assert t == n
    assert t[0] == ["backward", "leaf hook", "first", "second"]


def test_callbacks_queued_by_a_root_function_over_plain_leaves_run():
    # loss.backward() from one node whose edges reach hook-free leaves takes the engine's short
    # path; a callback its backward queues still runs once the graph is done, as in torch.
    def scenario(L):
        log = []

        class SumTwice(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return (x * 2 + y).sum()

            @staticmethod
            def backward(ctx, g):
                L.autograd.Variable._execution_engine.queue_callback(
                    lambda: log.append("callback"))
                log.append("backward")
                return g * 2 * L.ones(2), g * L.ones(2)

        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([3.0, 4.0], requires_grad=True)
        SumTwice.apply(a, b).backward()
        return log, a.grad.numpy().tolist(), b.grad.numpy().tolist()

    t, n = _both(scenario)
    assert t == n
    assert t[0] == ["backward", "callback"]


def test_callbacks_belong_to_the_backward_that_queued_them():
    def scenario(L):
        counts = {"outer": 0, "inner": 0}

        class Inner(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                L.autograd.Variable._execution_engine.queue_callback(
                    lambda: counts.__setitem__("inner", counts["inner"] + 1))
                return g

        class Outer(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                L.autograd.Variable._execution_engine.queue_callback(
                    lambda: counts.__setitem__("outer", counts["outer"] + 1))
                t = g.detach().requires_grad_()
                with L.enable_grad():
                    Inner.apply(t).sum().backward()
                # the inner backward already ran its own callback
                counts["seen_inner_before_outer_end"] = counts["inner"]
                return g

        x = L.rand(3, requires_grad=True)
        Outer.apply(x).sum().backward()
        return counts

    t, n = _both(scenario)
    assert t == n == {"outer": 1, "inner": 1, "seen_inner_before_outer_end": 1}


def test_queue_callback_outside_backward_raises_torchs_error():
    def scenario(L):
        with pytest.raises(RuntimeError) as e:
            L.autograd.Variable._execution_engine.queue_callback(lambda: None)
        return str(e.value)

    t, n = _both(scenario)
    assert t == n


# ------------------------------------------------------------------- grad-mode decorators
def test_no_grad_and_enable_grad_decorate_without_parentheses():
    def scenario(L):
        x = L.ones(2, requires_grad=True)

        @L.enable_grad
        def doubled(v):
            return v * 2

        @L.no_grad
        def tripled(v):
            return v * 3

        with L.no_grad():
            a = doubled(x).requires_grad
        b = tripled(x).requires_grad
        c = L.no_grad(lambda v: v + 1)(x).requires_grad
        return a, b, c, L.is_grad_enabled()

    t, n = _both(scenario)
    assert t == n == (True, False, False, True)


def test_decorating_a_class_warns_and_builds_it_inside_the_mode():
    def scenario(L):
        seen = []

        def build():
            @L.no_grad()
            class Thing:
                def __init__(self):
                    seen.append(("init", L.is_grad_enabled()))

                def method(self):
                    seen.append(("method", L.is_grad_enabled()))

            Thing().method()
        return _warnings_of(build), seen

    t, n = _both(scenario)
    assert t == n
    assert t[0][0][0] == "FutureWarning"


def test_set_grad_enabled_as_decorator_leaves_the_callers_mode_alone():
    def scenario(L):
        out = []
        with L.enable_grad():
            @L.set_grad_enabled(False)
            def inner(v):
                return v.sin()
            out.append(L.is_grad_enabled())
            out.append(inner(L.zeros(1, requires_grad=True)).requires_grad)
            out.append(L.is_grad_enabled())
            obj = L.set_grad_enabled(False)       # a plain call switches at once ...
            out.append(L.is_grad_enabled())
            wrapped = obj(lambda v: v * 2)        # ... and decorating gives it back
            out.append(L.is_grad_enabled())
            out.append(wrapped(L.zeros(1, requires_grad=True)).requires_grad)
        return out

    t, n = _both(scenario)
    assert t == n == [True, False, True, False, True, False]


# ------------------------------------------------------------------- create_graph warning
def test_backward_with_create_graph_warns_but_grad_does_not():
    def scenario(L):
        prev = L.is_warn_always_enabled()
        L.set_warn_always(True)
        try:
            b = L.tensor([1.0, 2.0, 3.0], requires_grad=True, dtype=L.double)
            c = b * b
            w_backward = _warnings_of(
                lambda: c.backward(L.ones_like(c), create_graph=True))
            b.grad = None
            w_grad = _warnings_of(
                lambda: L.autograd.grad(c, b, L.ones_like(c), create_graph=True))
        finally:
            L.set_warn_always(prev)
        return w_backward, w_grad

    t, n = _both(scenario)
    assert t == n
    assert len(t[0]) == 1 and t[1] == []


# ------------------------------------------------------------------- calling a grad_fn
@pytest.mark.parametrize("n_args", [0, 2])
def test_calling_a_grad_fn_with_the_wrong_number_of_gradients(n_args):
    def scenario(L):
        x = L.ones(1, requires_grad=True)
        y = x.exp()
        with pytest.raises(TypeError) as e:
            y.grad_fn(*([x.detach()] * n_args))
        return str(e.value)

    t, n = _both(scenario)
    assert t == n


def test_calling_a_grad_fn_with_the_right_number_of_gradients():
    def scenario(L):
        x = L.tensor([0.5, 1.5], requires_grad=True)
        y = x.exp()
        out = y.grad_fn(L.tensor([1.0, 2.0]))
        out = out[0] if isinstance(out, tuple) else out
        return out.detach().numpy()

    t, n = _both(scenario)
    np.testing.assert_allclose(n, t, rtol=1e-6)


# ------------------------------------------------------------------- deprecated helpers
def test_deprecated_jacobian_helpers_warn_as_torch():
    def scenario(L):
        gc = importlib.import_module(L.__name__ + ".autograd.gradcheck")
        a = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        out = []
        w = _warnings_of(lambda: out.append(
            gc.get_numerical_jacobian(lambda i: i[0] * 3, (a,), eps=1e-6)))
        w += _warnings_of(lambda: out.append(gc.get_analytical_jacobian((a,), a * 3)))
        return w, out[0][0].numpy(), out[1][0][0].numpy()

    (tw, tn, ta), (nw, nn_, na) = _both(scenario)
    assert tw == nw
    np.testing.assert_allclose(nn_, tn, rtol=1e-6)
    np.testing.assert_allclose(na, ta, rtol=1e-12)


# ------------------------------------------------------------------- inference mode kinds
def test_inference_mode_marks_only_new_tensors():
    # in-place ops keep a normal tensor normal, views take their base's kind, new tensors
    # (results of functional ops, factories) are inference tensors
    def scenario(L):
        seen = []
        s = L.ones(1, 2, 3, requires_grad=True)
        a = s.clone()
        out = a * a          # saved before the in-place update below
        with L.inference_mode():
            a.add_(2)
            seen.append(L.is_inference(a))
            seen.append(L.is_inference(a.view(-1)))
            a.transpose_(0, 1)
            seen.append(L.is_inference(a))
            fresh = L.ones(2)
            seen += [L.is_inference(fresh), L.is_inference(fresh.view(-1)),
                     L.is_inference(fresh * 2)]
            fresh.add_(1)
            seen.append(L.is_inference(fresh))
        seen.append(L.is_inference(a * 2))
        # a is still a normal tensor whose version moved: the saved value is stale
        with pytest.raises(RuntimeError) as e:
            out.backward(L.ones_like(out))
        seen.append(str(e.value).split(";")[0])
        return seen

    t, n = _both(scenario)
    assert t == n
    assert t[:7] == [False, False, False, True, True, True, True]


# ------------------------------------------------------------------- profiler events
def _profiler_util(L):
    return importlib.import_module(L.__name__ + ".autograd.profiler_util")


def test_event_list_nests_events_per_thread_as_torch():
    def scenario(L):
        pu = _profiler_util(L)
        events = pu.EventList()
        spans = [(1, 0, 1, 1), (1, 1, 2, 2), (0, 0, 2, 3), (0, 1, 2, 4), (0, 1, 3, 5),
                 (0, 4, 9, 6), (0, 5, 6, 7), (0, 5, 6, 8)]
        for thread, start, end, i in spans:
            events.append(pu.FunctionEvent(id=i, node_id=0, name=f"e{i}", thread=thread,
                                           start_us=start, end_us=end))
        events._populate_cpu_children()
        return ([[c.id for c in e.cpu_children] for e in events],
                [e.cpu_parent.id if e.cpu_parent is not None else None for e in events],
                [e.self_cpu_time_total for e in events])

    t, n = _both(scenario)
    assert t == n


def test_function_event_average_sums_counts_and_times():
    def scenario(L):
        pu = _profiler_util(L)
        avg = pu.FunctionEventAvg()
        avg.add(pu.FunctionEvent(id=0, node_id=0, name="foo", thread=0, start_us=10, end_us=15))
        avg.add(pu.FunctionEvent(id=1, node_id=0, name="foo", thread=0, start_us=20, end_us=30))
        avg.add(avg)
        return (avg.key, avg.count, avg.cpu_time_total, avg.self_cpu_time_total, avg.cpu_time,
                avg.device_time_total)

    t, n = _both(scenario)
    assert t == n


# ------------------------------------------------------------------- small API corners
def test_multithreading_switch_is_remembered_like_torch():
    def scenario(L):
        seen = []
        with L.autograd.set_multithreading_enabled(False):
            seen.append(L.autograd.is_multithreading_enabled())
        seen.append(L.autograd.is_multithreading_enabled())
        with L.autograd.set_multithreading_enabled(False):
            L.autograd.set_multithreading_enabled(True)
            seen.append(L.autograd.is_multithreading_enabled())
        seen.append(L.autograd.is_multithreading_enabled())
        L.autograd.set_multithreading_enabled(False)
        seen.append(L.autograd.is_multithreading_enabled())
        L.autograd.set_multithreading_enabled(True)
        seen.append(L.autograd.is_multithreading_enabled())
        return seen

    t, n = _both(scenario)
    assert t == n


def test_set_sequence_nr_reorders_the_backward():
    def scenario(L):
        x, y, z = (L.tensor([1.0, 2.0], requires_grad=True) for _ in range(3))
        a, b = x + y, y + z
        c = a + b
        a.grad_fn._set_sequence_nr(100)
        b.grad_fn._set_sequence_nr(99)
        c.grad_fn._set_sequence_nr(98)
        order = []
        for name, t in (("a", a), ("b", b), ("c", c)):
            t.register_hook(lambda g, name=name: order.append(name))
        c.sum().backward()
        return (order, a.grad_fn._sequence_nr(), y.grad.numpy().tolist())

    t, n = _both(scenario)
    assert t == n
    assert t[0] == ["c", "a", "b"]


def test_standard_basis_chunks_match_torch():
    def scenario(L):
        f = importlib.import_module(L.__name__ + ".autograd.functional")
        ins = (L.zeros(2), L.zeros([]), L.zeros(3, dtype=L.float64))
        return [(str(c.dtype).split(".")[-1], c.numpy().tolist())
                for c in f._construct_standard_basis_for(ins, (2, 1, 3))]

    t, n = _both(scenario)
    assert t == n


@pytest.mark.parametrize("fn", ["randn", "rand"])
def test_random_factories_refuse_integer_dtypes_with_torchs_error(fn):
    def scenario(L):
        with pytest.raises(NotImplementedError) as e:
            getattr(L, fn)(5, 5, dtype=L.long)
        return str(e.value)

    t, n = _both(scenario)
    assert t == n


# ------------------------------------------------------------------- allow mutation
def test_allow_mutation_clones_once_per_saved_tensor_and_forgets_with_the_graph():
    def scenario(L):
        counts = []
        with L.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            def n_cloned():
                return len(list(ctx.cloned.items()))

            x = L.tensor([0.5, 1.0, 2.0], requires_grad=True)
            a = x.clone()
            b = a ** 2
            c = a ** 2                   # same tensor, same version: one clone
            a.sin_()
            counts.append(n_cloned())
            d = a ** 2                   # a newer version of it
            a.sin_()
            counts.append(n_cloned())
            counts.append(len(list(ctx.tid_to_weakhandle.items())))
            del b, c
            counts.append(n_cloned())
            (g,) = L.autograd.grad(d.sum(), x)
            counts.append(n_cloned())
            del d
            counts.append(n_cloned())
        return counts, g.numpy().tolist()

    t, n = _both(scenario)
    assert t[0] == n[0]
    np.testing.assert_allclose(n[1], t[1], rtol=1e-6)


def test_numpy_of_a_tensor_requiring_grad_is_allowed_when_grad_mode_is_off():
    def scenario(L):
        x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * 2
        seen = []
        with pytest.raises(RuntimeError) as e:
            x.numpy()
        seen.append(str(e.value))
        with L.no_grad():
            seen.append(x.numpy().tolist())
            seen.append(y.numpy().tolist())
        with L.inference_mode():
            seen.append(y.numpy().tolist())
        return seen

    t, n = _both(scenario)
    assert t == n


def test_data_and_grad_assignment_refusals_match_torch():
    def scenario(L):
        seen = []
        x = L.ones(2, 2, requires_grad=True)
        for stmt in ("del x.data", "x.data = None", "x.grad = x",
                     "x.data = L.tensor([[1, 2], [3, 4]])"):
            try:
                exec(stmt, {"x": x, "L": L})
                seen.append((stmt, "ok"))
            except Exception as e:
                seen.append((stmt, type(e).__name__, str(e)))
        y = L.zeros(2)
        y.data = L.tensor([1, 2])            # allowed: y does not require grad
        seen.append((str(y.dtype).split(".")[-1], y.tolist()))
        seen.append((x.grad, x.dtype == L.float32, x.tolist()))   # nothing was changed
        return seen

    t, n = _both(scenario)
    assert t == n
