"""Foundation: leaves and their attributes, tensor hooks, retain_grad, and the grad modes
(no_grad, enable_grad, set_grad_enabled, inference_mode), against torch."""

import threading
import warnings

import pytest

import ndgrad
from _diff import same, raises_same, t


# ----------------------------------------------------------------------------- leaves
def test_leaf_flags():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = x * 2
        c = lib.ones(2)
        return [x.is_leaf, y.is_leaf, c.is_leaf, x.requires_grad, y.requires_grad,
                c.requires_grad, x.grad_fn is None, y.grad_fn.name(),
                y.grad_fn.next_functions[0][0].name(), x.detach().requires_grad,
                x.detach().is_leaf, c.requires_grad_().requires_grad]
    same(f)


def test_requires_grad_errors():
    def non_leaf(lib):
        y = t(lib, [1.0], True) * 2
        y.requires_grad = False
    raises_same(non_leaf)
    raises_same(lambda lib: lib.ones(2, dtype=lib.int64).requires_grad_())


def test_non_leaf_grad_access_warns():
    for lib in (ndgrad, __import__("torch")):
        y = t(lib, [1.0], True) * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert y.grad is None
        assert any("is not a leaf Tensor" in str(m.message) for m in w)


def test_grad_assignment_checks():
    raises_same(lambda lib: setattr(t(lib, [1.0, 2.0], True), "grad", lib.ones(3)))
    raises_same(lambda lib: setattr(t(lib, [1.0, 2.0], True, dtype=lib.float32), "grad",
                                    lib.ones(2, dtype=lib.float64)))
    raises_same(lambda lib: setattr(t(lib, [1.0, 2.0], True), "grad", 3))


def test_retain_grad():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = x * x
        y.retain_grad()
        z = y.exp()
        z.retain_grad()
        (z * 2).sum().backward()
        (z * 3).sum().backward() if False else None
        return [y.grad, z.grad, y.retains_grad, x.retains_grad]
    same(f)
    raises_same(lambda lib: lib.ones(2).retain_grad())


def test_register_hook_can_replace_gradient():
    def f(lib):
        seen = []
        x = t(lib, [1.0, 2.0], True)
        y = x * 3
        h1 = y.register_hook(lambda g: g * 10)
        y.register_hook(lambda g: seen.append(g.clone()))
        x.register_hook(lambda g: g + 1)
        y.sum().backward()
        h1.remove()
        x.grad = None
        y2 = x * 3
        y2.sum().backward()
        return [x.grad, seen]
    same(f)
    raises_same(lambda lib: lib.ones(2).register_hook(lambda g: g))


def test_hook_runs_before_retain_grad():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = x * 3
        y.retain_grad()
        y.register_hook(lambda g: g * 2)
        y.sum().backward()
        return [y.grad, x.grad]
    same(f)


def test_post_accumulate_grad_hook():
    def f(lib):
        calls = []
        x = t(lib, [1.0, 2.0], True)
        h = x.register_post_accumulate_grad_hook(lambda p: calls.append(p.grad.clone()))
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        h.remove()
        (x * 4).sum().backward()
        return [calls, x.grad]
    same(f)
    raises_same(lambda lib: (t(lib, [1.0], True) * 2).register_post_accumulate_grad_hook(
        lambda p: None))


def test_hooks_of_untargeted_leaves_do_not_run():
    def f(lib):
        log = []
        a = t(lib, [1.0, 2.0], True)
        b = t(lib, [3.0, 4.0], True)
        a.register_hook(lambda g: log.append("a"))
        b.register_hook(lambda g: log.append("b"))
        y = (a * b).sum()
        y.backward(inputs=[a], retain_graph=True)
        lib.autograd.grad(y, [b])
        return [log, a.grad, b.grad]
    same(f)


def test_hooks_in_autograd_grad():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = x * x
        y.register_hook(lambda g: g * 0.5)
        return list(lib.autograd.grad(y.sum(), [x, y]))
    same(f)


# ----------------------------------------------------------------------------- grad modes
def test_no_grad_and_enable_grad():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        with lib.no_grad():
            a = x * 2
            with lib.enable_grad():
                b = x * 2
            c = x * 2
        return [a.requires_grad, b.requires_grad, c.requires_grad, lib.is_grad_enabled()]
    same(f)


def test_set_grad_enabled_as_function_and_context():
    def f(lib):
        x = t(lib, [1.0], True)
        lib.set_grad_enabled(False)
        a = x * 2
        lib.set_grad_enabled(True)
        with lib.set_grad_enabled(False):
            b = x * 2
        return [a.requires_grad, b.requires_grad, lib.is_grad_enabled()]
    same(f)


def test_decorators_including_generators():
    def f(lib):
        x = t(lib, [1.0], True)

        @lib.no_grad()
        def g():
            return x * 2

        @lib.no_grad()
        def gen():
            yield (x * 2).requires_grad
            yield lib.is_grad_enabled()

        @lib.enable_grad()
        def inner():
            return (x * 2).requires_grad

        @lib.inference_mode()
        def inf():
            return lib.is_inference_mode_enabled()

        with lib.no_grad():
            e = inner()
        return [g().requires_grad, list(gen()), lib.is_grad_enabled(), e, inf(),
                lib.is_inference_mode_enabled()]
    same(f)


def test_grad_mode_is_thread_local():
    results = {}

    def worker():
        results["thread"] = ndgrad.is_grad_enabled()
        with ndgrad.no_grad():
            results["inner"] = ndgrad.is_grad_enabled()

    with ndgrad.no_grad():
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        assert not ndgrad.is_grad_enabled()
    assert results == {"thread": True, "inner": False}


def test_inference_mode_tensors():
    def f(lib):
        with lib.inference_mode():
            it = lib.ones(2)
            v = it * 2
            flags = [lib.is_inference_mode_enabled(), lib.is_grad_enabled(),
                     v.requires_grad]
        return [flags, lib.is_inference_mode_enabled(), (it * 3).requires_grad,
                v.is_inference()]
    same(f)


def test_inference_tensor_errors():
    def saved(lib):
        with lib.inference_mode():
            it = lib.ones(2)
        (it * t(lib, [1.0, 2.0], True)).sum().backward()
    raises_same(saved)

    def inplace(lib):
        with lib.inference_mode():
            it = lib.ones(2)
        it.add_(1)
    raises_same(inplace)


def test_inference_mode_false_is_a_no_op():
    def f(lib):
        x = t(lib, [1.0], True)
        with lib.inference_mode(False):
            y = x * 2
        return [y.requires_grad, lib.is_inference_mode_enabled()]
    same(f)


_ = pytest
