"""Foundation: the reverse-mode engine (backward, grad, retain/create graph, inputs=,
allow_unused, materialize_grads, broadcasting, scheduling, accumulation), against torch."""

import gc
import sys
import weakref

import numpy as np
import pytest

import ndgrad
from _diff import same, raises_same, arr, t


def grads(lib, *tensors):
    return [x.grad for x in tensors]


# ----------------------------------------------------------------------------- corners
def test_same_tensor_twice():
    def f(lib):
        x = t(lib, [1.0, 2.0, -3.0], True)
        (x * x).sum().backward()
        return [x.grad, (x * x).grad_fn.name()]
    same(f)


def test_reused_non_leaf_and_diamond():
    def f(lib):
        a = t(lib, arr(0, 3), True)
        b = a + a
        c = b + b
        d = (c * b.exp()).sum()
        e = a.sin()
        y = (e * e.cos() + e.tanh()).sum() + d
        y.backward()
        return a.grad
    same(f)


@pytest.mark.parametrize("sa,sb", [((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((1,), (5, 1)),
                                   ((), (2, 2)), ((2, 1, 3), (2, 4, 1))])
def test_broadcast_gradients_sum_back(sa, sb):
    def f(lib):
        a = t(lib, arr(1, *sa), True)
        b = t(lib, arr(2, *sb), True)
        y = (a * b + a / (b * b + 1) - b).sum()
        y.backward()
        return [a.grad, b.grad]
    same(f)


def test_zero_dim_and_empty():
    def f(lib):
        x = t(lib, 2.0, True)
        e = t(lib, np.zeros((0, 3)), True)
        y = x * x * 3 + (e * 2).sum()
        y.backward()
        return [x.grad, e.grad, y.shape]
    same(f)


def test_float16_gradients_keep_dtype():
    def f(lib):
        x = t(lib, [0.5, 1.5], True, dtype=lib.float16)
        y = (x * x).sum()
        y.backward()
        return [x.grad, str(x.grad.dtype)]
    same(f, rtol=1e-3, atol=1e-3)


def test_mixed_dtype_gradients_cast_back():
    def f(lib):
        a = t(lib, [1.0, 2.0], True, dtype=lib.float32)
        b = t(lib, [3.0, 4.0], True, dtype=lib.float64)
        (a * b).sum().backward()
        return [a.grad, b.grad, str(a.grad.dtype), str(b.grad.dtype)]
    same(f)


def test_long_chain_has_no_recursion_limit():
    x = ndgrad.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_training_loop_memory_stays_flat():
    w = ndgrad.randn(16, 16, requires_grad=True)
    xs = ndgrad.randn(4, 16)

    def step():
        y = (xs @ w).tanh()
        loss = (y * y).mean()
        loss.backward()
        with ndgrad.no_grad():
            w.sub_(w.grad * 0.01)
        w.grad = None

    for _ in range(500):
        step()
    gc.collect()
    objects = len(gc.get_objects())
    rss = _rss_bytes()
    for _ in range(10_000):
        step()
    gc.collect()
    assert len(gc.get_objects()) - objects < 100
    # A leaked graph per step would hold several KB: 10 000 steps would add tens of MB.
    assert _rss_bytes() - rss < 4_000_000


def test_graph_freed_without_gc():
    gc.disable()
    try:
        x = ndgrad.randn(10, requires_grad=True)
        y = (x.exp() * 2).tanh()
        ref = weakref.ref(y.grad_fn)
        del y
        assert ref() is None, "a reference cycle keeps the graph alive"
    finally:
        gc.enable()


# ----------------------------------------------------------------------------- errors
def test_implicit_gradient_only_for_scalars():
    raises_same(lambda lib: (t(lib, [1.0, 2.0], True) * 2).backward())
    raises_same(lambda lib: lib.ones(2).sum().backward())


def test_second_backward_through_freed_graph():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = (x * x).sum()
        y.backward()
        y.backward()
    raises_same(f)


def test_nodes_without_saved_values_allow_second_backward():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = (x + 1).sum()
        y.backward()
        y.backward()
        return x.grad
    same(f)


def test_retain_graph():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = (x * x.exp()).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad
    same(f)


def test_grad_output_shape_mismatch():
    raises_same(lambda lib: (t(lib, [1.0, 2.0, 3.0], True) * 2).backward(lib.ones(2)))


def test_grad_errors():
    def unused(lib):
        x = t(lib, [1.0], True)
        z = t(lib, [2.0], True)
        lib.autograd.grad((x * 2).sum(), [x, z])
    raises_same(unused)

    def no_grad_input(lib):
        x = t(lib, [1.0], True)
        lib.autograd.grad((x * 2).sum(), [lib.ones(1)])
    raises_same(no_grad_input)


# ----------------------------------------------------------------------------- grad()
def test_grad_allow_unused_and_materialize():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        z = t(lib, [3.0], True)
        y = (x ** 3).sum()
        g1 = lib.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
        g2 = lib.autograd.grad(y, [x, z], materialize_grads=True)
        return [g1[0], g1[1], g2[0], g2[1], x.grad]
    same(f)


def test_grad_of_non_leaf_and_multiple_outputs():
    def f(lib):
        x = t(lib, arr(3, 4), True)
        h = x.tanh()
        y1 = (h * 2).sum()
        y2 = (h ** 2).sum()
        return list(lib.autograd.grad([y1, y2], [h, x], grad_outputs=[t(lib, 1.0),
                                                                         t(lib, 0.5)]))
    same(f)


def test_grad_does_not_touch_dot_grad():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        lib.autograd.grad((x * x).sum(), x)
        return x.grad
    same(f)


@pytest.mark.parametrize("order", [2, 3, 4])
def test_higher_order_gradients(order):
    def f(lib):
        x = t(lib, [0.3, -0.7, 1.1], True)
        y = (x.sin() * x.exp() + x ** 3).sum()
        out = []
        g = y
        for _ in range(order):
            (g,) = lib.autograd.grad(g.sum() if g.dim() else g, x, create_graph=True)
            out.append(g)
        return out
    same(f, rtol=1e-5, atol=1e-6)


def test_create_graph_grad_has_history_and_backward_accumulates():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = (x ** 3).sum()
        y.backward(create_graph=True)
        g = x.grad
        name = g.grad_fn.name() if g.grad_fn is not None else None
        x.grad = None
        g.sum().backward()
        return [g, x.grad, g.requires_grad, name is not None]
    same(f)


def test_backward_inputs_limits_accumulation():
    def f(lib):
        a = t(lib, [1.0, 2.0], True)
        b = t(lib, [3.0, 4.0], True)
        h = a * b
        y = (h * h).sum()
        y.backward(inputs=[a], retain_graph=True)
        y.backward(inputs=[h])
        return [a.grad, b.grad, h.grad]
    same(f)


def test_autograd_backward_function():
    def f(lib):
        a = t(lib, [1.0, 2.0], True)
        y1 = (a * 2).sum()
        y2 = a * a
        lib.autograd.backward([y1, y2], [None, lib.ones(2)])
        return a.grad
    same(f)


# ----------------------------------------------------------------------------- scheduling
def test_hooks_fire_newest_node_first():
    def f(lib):
        order = []
        x = t(lib, [1.0, 2.0], True)
        a = x * 2
        b = x * 3
        c = a * b
        a.register_hook(lambda g: order.append("a"))
        b.register_hook(lambda g: order.append("b"))
        c.register_hook(lambda g: order.append("c"))
        x.register_hook(lambda g: order.append("x"))
        c.sum().backward()
        return order
    same(f)


def test_accumulation_across_backwards_is_in_place():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        (x * 2).sum().backward()
        g = x.grad
        (x * 3).sum().backward()
        return [x.grad, g is x.grad, x.grad._version > 0]
    same(f)


def test_grad_layout_follows_parameter_strides():
    def f(lib):
        w = lib.tensor(arr(4, 3, 5)).t().detach().requires_grad_()
        (w * 2).sum().backward()
        return [w.grad.stride(), w.stride()]
    same(f)


def test_shared_gradient_is_not_aliased_between_leaves():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = t(lib, [3.0, 4.0], True)
        (x + y).sum().backward()
        x.grad.add_(10)
        return [x.grad, y.grad]
    same(f)


def test_user_gradient_is_not_stolen():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        g = lib.ones(2)
        (x * 1).backward(g)
        x.grad.add_(5)
        return [g, x.grad]
    same(f)


def test_recursion_limit_untouched():
    assert sys.getrecursionlimit() <= 10_000


# ------------------------------------------- loss.backward() and hook-free leaves (fast paths)
def test_scalar_backward_retain_graph_then_freed():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = (x * x.exp()).sum()
        y.backward(retain_graph=True)
        y.backward()
        return [x.grad]
    same(f)

    def g(lib):
        x = t(lib, [1.0, 2.0], True)
        y = (x * x.exp()).sum()
        y.backward()
        y.backward()
    raises_same(g)


def test_scalar_backward_of_view_half_and_leaf_hooks():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        w = t(lib, [0.5, -1.0], True)
        seen = []
        w.register_hook(lambda g: g * 3)
        w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
        (x * w).sum().view(1).view(()).backward()       # a view: the general path
        (x * w).sum().half().backward()                  # float16 scalar
        (x.double() * 2).sum().backward()
        return [x.grad, w.grad, seen[0], len(seen)]
    same(f)


def test_scalar_backward_rejects_what_backward_rejects():
    raises_same(lambda lib: t(lib, [1.0, 2.0], True).sum().int().backward())
    raises_same(lambda lib: t(lib, [1.0, 2.0], False).sum().backward())
    raises_same(lambda lib: (t(lib, [1.0, 2.0], True) * 2).backward())


def test_transposed_gradients_become_grad_without_aliasing():
    # A leaf reached through t() gets a transposed view of a fresh array: it may become
    # .grad as is when nothing else holds that array; views of one array given to two
    # leaves must not end up sharing memory.
    def f(lib):
        a = t(lib, arr(0, 3, 4), True)
        b = t(lib, arr(1, 3, 4), True)
        w = t(lib, arr(2, 4, 3), True)
        s = a.t() + b.t()
        (s * w).sum().backward()
        a.grad.add_(1)
        (w.t() * 3).sum().backward()
        w.grad.mul_(2)
        return [a.grad, b.grad, w.grad, a.grad.stride(), b.grad.stride(), w.grad.stride(),
                w.grad.is_contiguous()]
    same(f)


def test_mm_gradient_of_a_transposed_operand_follows_its_layout():
    # mm's backward computes a transposed operand's gradient transposed (column-major), as
    # torch does, so the leaf below gets a row-major gradient: the hook sees torch's strides,
    # and .grad is that gradient itself (same memory) when nothing else holds it.
    def f(lib):
        w = t(lib, arr(0, 5, 3), True)
        v = t(lib, arr(1, 4, 2), True)
        x = t(lib, arr(2, 4, 3), True)
        seen = []

        def note(g):
            seen.append((g.stride(), g.data_ptr()))
        wt, vt = w.t(), v.transpose(0, 1)
        wt.register_hook(note)
        vt.register_hook(note)
        (vt @ (x @ wt)).sum().backward()
        (w_stride, w_ptr), (v_stride, v_ptr) = seen[1], seen[0]
        return [w.grad, v.grad, x.grad, w_stride, v_stride, w.grad.stride(), v.grad.stride(),
                w.grad.data_ptr() == w_ptr, v.grad.data_ptr() == v_ptr, x.grad.stride()]
    same(f)


def test_mm_transposed_operand_gradient_double_backward():
    # the transposed form of the rule is built from ndgrad ops too (create_graph)
    def f(lib):
        w = t(lib, arr(3, 5, 3), True)
        x = t(lib, arr(4, 4, 3), True)
        y = (x @ w.t()).tanh().sum()
        gw, gx = lib.autograd.grad(y, (w, x), create_graph=True)
        (gw.pow(2).sum() + gx.sum()).backward()
        return [gw, gx, w.grad, x.grad, gw.grad_fn.name()]
    same(f)


def test_linear_weight_grad_layout_and_accumulation():
    def f(lib):
        lin = lib.nn.Linear(4, 3)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(arr(3, 3, 4)))
            lin.bias.copy_(lib.tensor(arr(4, 3)))
        x = lib.tensor(arr(5, 2, 4, dtype=np.float32))
        lin(x).sum().backward()
        g1 = lin.weight.grad.clone()
        lin(x * 2).sum().backward()
        return [g1, lin.weight.grad, lin.weight.grad.stride(), lin.bias.grad]
    same(f)
