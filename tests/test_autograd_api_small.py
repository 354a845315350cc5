"""Small pieces of torch.autograd's and Tensor's API that PyTorch's own autograd tests reach
(test/test_autograd.py), each compared with torch 2.13: deleting autograd attributes,
``Tensor.type`` with a legacy typed class, and the small autograd helpers."""

import warnings

import pytest
import torch

import ndgrad

from _diff import arr, raises_same, same, t


# ----------------------------------------------------------------- deleting attributes
# (del t._grad_fn is not refused: a Tensor.__delattr__ would slow every attribute assignment)
@pytest.mark.parametrize("name", ["_backward_hooks", "requires_grad", "data"])
def test_deleting_autograd_state_raises_like_torch(name):
    def scenario(lib):
        x = t(lib, arr(0, 3), requires_grad=True)
        delattr(x, name)
    raises_same(scenario)


def test_failed_delete_leaves_tensor_usable():
    def scenario(lib):
        x = t(lib, arr(1, 3), requires_grad=True)
        y = x * 2
        with pytest.raises(RuntimeError):
            del y.requires_grad
        y.sum().backward()
        return [x.grad, y.grad_fn.name(), y.requires_grad]
    same(scenario)


def test_deleting_grad_and_plain_attributes_works():
    def scenario(lib):
        x = t(lib, arr(2, 3), requires_grad=True)
        x.sum().backward()
        del x.grad
        x.note = 1
        del x.note
        return [x.grad is None, hasattr(x, "note")]
    same(scenario)


# ----------------------------------------------------------------- Tensor.type
@pytest.mark.parametrize("cls", ["DoubleTensor", "FloatTensor", "IntTensor", "ByteTensor",
                                 "LongTensor"])
def test_type_with_legacy_class(cls):
    def scenario(lib):
        x = t(lib, arr(3, 2, 3) * 3, dtype=lib.float32)
        y = x.type(getattr(lib, cls))
        return [y, str(y.dtype), isinstance(y, getattr(lib, cls)),
                x.type(y.dtype).dtype is y.dtype]
    same(scenario)


def test_type_same_class_returns_self_and_keeps_grad_path():
    def scenario(lib):
        x = t(lib, arr(4, 3), requires_grad=True, dtype=lib.float32)
        same_obj = x.type(lib.FloatTensor) is x
        x.type(lib.DoubleTensor).sum().backward()
        return [same_obj, x.grad, str(x.grad.dtype)]
    same(scenario)


@pytest.mark.parametrize("bad", [int, type(None), 3, "torch.Nothing"])
def test_type_rejects_non_types_like_torch(bad):
    raises_same(lambda lib: t(lib, arr(5, 2)).type(bad))


# ----------------------------------------------------------------- autograd helpers
def test_autograd_module_reaches_the_package():
    assert ndgrad.autograd.torch is ndgrad
    assert torch.autograd.torch is torch


def test_saved_tensor_handle_class_and_forbidden_constructor():
    raises_same(lambda lib: lib.autograd.SavedTensor())

    def scenario(lib):
        x = t(lib, arr(6, 3), requires_grad=True)
        y = x.sin()
        raw = y.grad_fn._raw_saved_self
        return [isinstance(raw, lib.autograd.SavedTensor), raw.unpack()]
    same(scenario)


def test_profiler_enabled_inside_profile_only():
    def scenario(lib):
        seen = [lib.autograd._profiler_enabled()]
        with lib.autograd.profiler.profile():
            seen.append(lib.autograd._profiler_enabled())
        seen.append(lib.autograd._profiler_enabled())
        with lib.profiler.profile():
            seen.append(lib.autograd._profiler_enabled())
        try:
            with lib.autograd.profiler.profile():
                raise ValueError
        except ValueError:
            pass
        seen.append(lib.autograd._profiler_enabled())
        return seen
    assert same(scenario) == [False, True, False, True, False]


@pytest.mark.parametrize("batched", [False, True])
def test_calculate_shape(batched):
    def scenario(lib):
        out = t(lib, arr(7, 4, 3), requires_grad=True)
        grad = t(lib, arr(8, 2, 4, 3) if batched else arr(8, 3, 4))
        shapes = lib.autograd._calculate_shape(out, grad, batched)
        return [tuple(s) for s in shapes] + [type(s).__name__ for s in shapes]
    same(scenario)


def test_calculate_shape_batched_gradient_edge_raises():
    def scenario(lib):
        x = t(lib, arr(9, 3), requires_grad=True)
        edge = lib.autograd.graph.get_gradient_edge(x * 2)
        lib.autograd._calculate_shape(edge, t(lib, arr(10, 2, 3)), True)
    raises_same(scenario)


def test_unsafe_preserve_version_counter():
    def scenario(lib):
        x = t(lib, arr(11, 4), requires_grad=True).clone()
        x.add_(1)
        y = t(lib, arr(12, 4)).clone()
        v = y[1:]
        seen = [x._version]
        with lib.autograd._unsafe_preserve_version_counter(x):
            x.mul_(2)
            x.mul_(3)
        seen.append(x._version)
        with lib.autograd._unsafe_preserve_version_counter((x, y)):
            x.mul_(2)
            v.add_(1)  # through a view: the shared counter is restored
        seen += [x._version, y._version, v._version]
        try:
            with lib.autograd._unsafe_preserve_version_counter(y):
                y.add_(1)
                raise ValueError
        except ValueError:
            pass
        seen.append(y._version)
        return seen + [x, y]
    same(scenario)


def test_unsafe_preserve_version_counter_as_decorator_fails_like_torch():
    def scenario(lib):
        y = lib.ones(2)

        @lib.autograd._unsafe_preserve_version_counter(y)
        def bump():
            y.add_(1)
        bump()
    raises_same(scenario)


def test_unsafe_preserve_version_counter_rejects_a_list():
    raises_same(lambda lib: lib.autograd._unsafe_preserve_version_counter([lib.ones(2)]))


# ----------------------------------------------------------------- Function ctx
def test_saved_variables_warns_and_returns_saved_tensors():
    def scenario(lib):
        seen = []

        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * b

            @staticmethod
            def backward(ctx, g):
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    a, b = ctx.saved_variables
                seen.extend((str(x.message), x.category.__name__, x.filename == __file__)
                            for x in w)
                return g * b, g * a

        x = t(lib, arr(13, 3), requires_grad=True)
        y = t(lib, arr(14, 3), requires_grad=True)
        Mul.apply(x, y).sum().backward()
        return [seen, x.grad, y.grad]
    same(scenario)


# ----------------------------------------------------------------- copy_ real into complex
@pytest.mark.parametrize("src_dtype", ["float64", "float32"])
def test_copy_real_into_complex_backward_no_warning(src_dtype):
    def scenario(lib):
        out = lib.zeros(3, 2, dtype=lib.cdouble)
        x = t(lib, arr(15, 3, 2), requires_grad=True, dtype=getattr(lib, src_dtype))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out.copy_(x)
            s = (out * (1 + 2j)).sum()
            s.abs().backward()
            gg = lib.autograd.grad((out * 1j).sum().real, x, create_graph=True)[0]
        return [[str(m.message) for m in w], x.grad, str(x.grad.dtype), gg, str(gg.dtype)]
    same(scenario, rtol=1e-5)


def _saving_function(lib, save):
    class Keep(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            if save:
                ctx.save_for_backward(x, None)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            x, _ = ctx.saved_tensors
            return g * x
    return Keep


def _error_of(fn):
    try:
        fn()
    except Exception as e:  # the class and the message's first line (reprs differ)
        return type(e).__name__, str(e).splitlines()[0]
    return None


def test_function_raw_saved_tensors():
    def scenario(lib):
        a = t(lib, arr(16, 4), requires_grad=True)
        y = _saving_function(lib, True).apply(a)
        raw = y.grad_fn._raw_saved_tensors
        seen = [len(raw), [isinstance(r, lib.autograd.SavedTensor) for r in raw]]
        seen.append(_error_of(lambda: raw[1].register_hooks(lambda x: x, lambda x: x)))
        seen.append(_error_of(lambda: raw[0].register_hooks(lambda x: x)))
        seen.append(_error_of(lambda: raw[0].register_hooks(1, 1)))
        calls = []
        raw[0].register_hooks(lambda x: calls.append("pack") or x * 10,
                              lambda x: calls.append("unpack") or x)
        seen.append(_error_of(lambda: raw[0].register_hooks(lambda x: x, lambda x: x)))
        y.sum().backward()
        seen += [calls, a.grad]
        seen.append(_error_of(lambda: y.grad_fn._raw_saved_tensors))
        z = _saving_function(lib, False).apply(a)
        seen.append(z.grad_fn._raw_saved_tensors)
        return seen
    same(scenario)


# ----------------------------------------------------------------- anomaly mode warnings
def test_anomaly_warning_as_error_goes_to_stderr(capsys):
    def scenario(lib):
        with pytest.raises(RuntimeError) as info:
            with warnings.catch_warnings(record=True) as w:
                with lib.autograd.detect_anomaly():
                    warnings.simplefilter("error")
                    a = t(lib, arr(17, 5), requires_grad=True)
                    d1 = a + 1
                    d2 = d1 ** 2
                    d1 += 1
                    lib.autograd.grad(d2.sum(), a)
        err = capsys.readouterr().err
        return [[str(m.message)[:35] for m in w], str(info.value).split(":")[0],
                err.startswith("UserWarning: Error detected in PowBackward0. Traceback"),
                lib.is_anomaly_enabled()]
    same(scenario)


# ----------------------------------------------------------------- post-accumulate-grad hooks
@pytest.mark.parametrize("returned", ["grad", "number", "none"])
@pytest.mark.parametrize("anomaly", [False, True])
def test_post_accumulate_grad_hook_must_return_none(returned, anomaly):
    def scenario(lib):
        x = t(lib, arr(18, 2, 3), requires_grad=True)
        ret = {"grad": lambda v: v.grad, "number": lambda v: 0, "none": lambda v: None}
        x.register_post_accumulate_grad_hook(ret[returned])
        with lib.autograd.set_detect_anomaly(anomaly):
            err = _error_of(lambda: (x * 3).sum().backward())
        return [err, x.grad]
    same(scenario)


# ----------------------------------------------------------------- hooks vs captured gradients
def _hooked_chain(lib, log):
    a = t(lib, arr(19, 3), requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: log.append("tensor") or g * 3)
    b.grad_fn.register_prehook(lambda gs: log.append("pre") or tuple(g * 5 for g in gs))
    b.grad_fn.register_hook(lambda gi, go: log.append("post"))
    c = (b * b).sum()
    return a, b, c


@pytest.mark.parametrize("inputs", ["b", "a,b", "a"])
def test_autograd_grad_capture_and_hooks_of_a_non_leaf(inputs):
    """A captured node that does not run: its tensor hooks run, then the capture, and neither
    its pre- nor post-hooks; one that runs: the capture before any of its hooks."""
    def scenario(lib):
        log = []
        a, b, c = _hooked_chain(lib, log)
        ins = [{"a": a, "b": b}[n] for n in inputs.split(",")]
        gs = lib.autograd.grad(c, ins)
        return [list(gs), log]
    same(scenario)


@pytest.mark.parametrize("inputs", ["b", "a,b"])
def test_backward_inputs_non_leaf_retains_grad_after_tensor_hooks(inputs):
    def scenario(lib):
        log = []
        a, b, c = _hooked_chain(lib, log)
        ins = [{"a": a, "b": b}[n] for n in inputs.split(",")]
        c.backward(inputs=ins, retain_graph=True)
        seen = [b.grad, a.grad, b.retains_grad, list(log)]
        c.backward()  # retains_grad stays on: .grad accumulates
        return seen + [b.grad, a.grad]
    same(scenario)


# ----------------------------------------------------------------- hooks on gradient-less outputs
def test_tensor_hook_of_an_output_without_gradient_is_called_with_none():
    def scenario(lib):
        x = t(lib, arr(20, 3), requires_grad=True)
        xs = x.unbind()
        seen = []
        xs[0].register_hook(lambda g: seen.append(None if g is None else g.tolist()))
        xs[2].register_hook(lambda g: seen.append(("2", g)))
        xs[1].retain_grad()
        xs[1].backward()
        first = [list(seen), x.grad, xs[1].grad]
        seen.clear()
        a, b = (x * 2).split(2)
        a.register_hook(lambda g: seen.append(g))
        a.retain_grad()
        gs = lib.autograd.grad(b.sum(), (x, a), allow_unused=True)
        return first + [list(seen), list(gs), a.grad]
    same(scenario)


@pytest.mark.parametrize("ret", ["tensor", "number"])
def test_tensor_hook_replacing_a_none_gradient_raises(ret):
    def scenario(lib):
        x = t(lib, arr(21, 3), requires_grad=True)
        xs = x.unbind()
        xs[0].register_hook(lambda g: lib.ones(()) if ret == "tensor" else 1)
        err = _error_of(lambda: xs[1].backward())
        return [err, x.grad]
    same(scenario)


# ----------------------------------------------------------------- retain_grad across in-place
def test_retain_grad_follows_inplace_ops():
    def scenario(lib):
        out = []
        for n in (1, 2):
            a = t(lib, arr(22, 3), requires_grad=True).clone()
            a.retain_grad()
            for _ in range(n):
                a.mul_(2)
            (a * a).sum().backward()
            out.append(a.grad)
        x = t(lib, arr(23, 3), requires_grad=True).clone()
        x.retain_grad()
        x[:2].mul_(3)  # through a view: x's history becomes a CopySlices
        (x * x).sum().backward()
        return out + [x.grad]
    same(scenario)


def test_retain_grad_on_views_after_inplace_through_one():
    def scenario(lib):
        base = t(lib, arr(25, 4), requires_grad=True).clone()
        view, view2 = base[:], base[1:]
        view.retain_grad()
        view2.retain_grad()
        view.mul_(2)
        (view * 3 + view2.sum()).sum().backward()
        return [view.grad, view2.grad]
    same(scenario)


def test_retain_grad_on_multi_output_then_inplace_on_one():
    def scenario(lib):
        b = t(lib, arr(26, 3, 3), requires_grad=True)
        var, mean = lib.var_mean(b, dim=0)
        var.retain_grad()
        mean.retain_grad()
        var.mul_(2)
        (var * mean).sum().backward()
        return [var.grad, mean.grad, b.grad]
    same(scenario)
