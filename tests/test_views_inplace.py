"""Foundation: version counters, saved-tensor checks, in-place ops on leaves, non-leaves and
views (CopySlices), and view semantics, against torch."""

import numpy as np
import pytest
import torch

import ndgrad
from _diff import same, raises_same, arr, t


# ----------------------------------------------------------------------------- versions
def test_version_counter_shared_by_views_and_detach():
    def f(lib):
        x = lib.zeros(3, 4)
        v = x[0]
        d = x.detach()
        x.add_(1)
        v.mul_(2)
        d[1, 1] = 5
        return [x._version, v._version, d._version, x, x.data._version]
    same(f)


def test_saved_output_modified_error():
    def f(lib):
        a = t(lib, [1.0, 2.0, 3.0], True, dtype=lib.float32)
        b = a.exp()
        b.add_(1)
        b.sum().backward()
    raises_same(f)


def test_saved_input_modified_error():
    def f(lib):
        a = t(lib, [1.0, 2.0, 3.0], True, dtype=lib.float32)
        c = a * 2
        d = c * c
        c.add_(1)
        d.sum().backward()
    raises_same(f)


def test_saved_leaf_modified_error():
    def f(lib):
        a = t(lib, [1.0, 2.0, 3.0], True, dtype=lib.float32)
        w = lib.ones(3)
        d = a * w
        w.add_(1)
        d.sum().backward()
    raises_same(f)


def test_inplace_on_leaf_errors():
    raises_same(lambda lib: t(lib, [1.0], True).add_(1))
    raises_same(lambda lib: t(lib, [1.0, 2.0], True)[0].mul_(2))


def test_inplace_on_leaf_allowed_under_no_grad():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        with lib.no_grad():
            x.mul_(3)
        (x * x).sum().backward()
        return [x, x.grad, x.is_leaf, x._version]
    same(f)


def test_failed_inplace_leaves_tensor_unchanged():
    def f(lib):
        x = lib.tensor([1, 2, 3])
        try:
            x.mul_(1.5)
        except RuntimeError as e:
            return [x, x._version, str(e)]
    same(f)
    raises_same(lambda lib: lib.ones(3).add_(lib.ones(2, 3)))


# ----------------------------------------------------------------------------- non-leaf
@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_", "pow_", "clamp_", "exp_",
                                "neg_", "relu_", "zero_", "fill_", "copy_", "masked_fill_",
                                "sigmoid_", "tanh_"])
def test_inplace_ops_on_non_leaf_give_torch_gradients(op):
    def f(lib):
        x = t(lib, arr(5, 2, 3), True)
        w = t(lib, arr(6, 3) * 0.5 + 1.5, True)
        h = x * 1.5
        args = {"add_": (w,), "sub_": (w,), "mul_": (w,), "div_": (w,), "pow_": (2,),
                "clamp_": (-0.5, 0.5), "exp_": (), "neg_": (), "relu_": (), "zero_": (),
                "fill_": (2.0,), "copy_": (w,), "masked_fill_": (h.detach() > 0, 3.0),
                "sigmoid_": (), "tanh_": ()}[op]
        out = getattr(h, op)(*args)
        assert out is h
        (h * h.detach().sin()).sum().backward()
        return [h, x.grad, w.grad, h.grad_fn.name(), h._version]
    same(f)


def test_augmented_assignment_records_history():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = x * 2
        y += x
        y *= x
        y -= 1
        y /= 2
        y.sum().backward()
        return [x.grad, y.grad_fn.name()]
    same(f)


def test_inplace_self_is_other():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = x * 1
        y.mul_(y)
        y.sum().backward()
    raises_same(f)


# ----------------------------------------------------------------------------- views
def test_view_ops_share_memory_and_report_base():
    def f(lib):
        x = lib.arange(24.0).reshape(2, 3, 4)
        views = [x.view(6, 4), x.reshape(4, 6), x.transpose(0, 1), x.permute(2, 0, 1),
                 x[0].t(), x[0].T, x.mT, x[:, :1].expand(2, 5, 4), x.unsqueeze(1).squeeze(1),
                 x.narrow(2, 1, 2), x.select(1, 2), x[:, 1:], x.unbind(0)[1],
                 x.split(1, 2)[2], x.chunk(2, 2)[1], x.diagonal(0, 1, 2), x.flatten(1),
                 x.unflatten(2, (2, 2))]
        out = []
        for v in views:
            out.append([v._is_view(), v._base is x, v.shape])
        x.add_(1)
        out.append([v.sum() for v in views])
        r = lib.arange(3.0)
        parts = r.unbind()
        r.mul_(10)
        out.append([p.item() for p in parts])
        return out
    same(f)


def test_view_and_base_see_each_others_writes():
    def f(lib):
        x = lib.zeros(3, 4)
        v = x[1:, 2:]
        v.fill_(7)
        x[2, 3] = -1
        t2 = x.t()
        t2[0, 0] = 9
        return [x, v, t2]
    same(f)


def test_reshape_copies_when_it_must():
    def f(lib):
        x = lib.arange(6.0).reshape(2, 3)
        r = x.t().reshape(6)
        return [r._is_view(), r, x.reshape(3, 2)._is_view()]
    same(f)
    raises_same(lambda lib: lib.arange(6.0).reshape(2, 3).t().view(6))


def test_inplace_on_view_of_non_leaf_rebases_base():
    def f(lib):
        a = t(lib, arr(7, 3, 4), True)
        b = a * 1
        v = b[0]
        v.mul_(2)
        w = b[1]
        names = [v.grad_fn.name(), b.grad_fn.name(), w.grad_fn.name(),
                 v.grad_fn.next_functions[0][0].name()]
        (b * b).sum().backward()
        return [a.grad, names]
    same(f)


def test_inplace_on_base_regenerates_view_history():
    def f(lib):
        a = t(lib, arr(8, 3, 4), True)
        b = a * 1
        c = b.t()
        b.add_(1)
        name = c.grad_fn.name()
        (c * c).sum().backward()
        return [a.grad, name]
    same(f)


def test_write_leaf_into_slice_of_plain_tensor():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        z = lib.zeros(3)
        z[:2] = x * 3
        z[2] = x[0]
        (z * z).sum().backward()
        return [z, z.requires_grad, z.grad_fn.name(), x.grad]
    same(f)


def test_base_modified_after_view_creation_makes_view_require_grad():
    def f(lib):
        zz = lib.zeros(3)
        vv = zz[:2]
        src = t(lib, [1.0, 2.0, 3.0], True)
        zz.copy_(src * 2)
        (vv * vv).sum().backward()
        return [vv.requires_grad, vv.grad_fn.name(), src.grad]
    same(f)


def test_expanded_view_used_after_base_written():
    def f(lib):
        b = t(lib, [0.5, -1.0, 2.0], True)
        c = b * 1
        e = c[:1].expand(4)
        c.add_(1)
        (g,) = lib.autograd.grad((e * e * c[1]).sum(), b, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), b)
        return [e.grad_fn.name(), g, gg]
    same(f)


def test_repr_of_copyslices_and_invalid_views():
    def f(lib):
        a = t(lib, [1.0, 2.0, 3.0], True)
        z = lib.zeros(3, dtype=lib.float64)
        z[:2] = a[:2]
        b = a * 1
        xs = b.unbind()
        with lib.no_grad():
            b.add_(1)
        return [repr(z), repr(xs[0]), xs[0].requires_grad]
    same(f)


def test_chained_views_and_setitem_with_advanced_index():
    def f(lib):
        a = t(lib, arr(9, 4, 5), True)
        b = a.clone()
        b[:, 1:3][1:, 0] = 0.0
        b[[0, 2], [4, 4]] = a[1, :2] * 10
        b.sum().backward()
        return [b, a.grad]
    same(f)


def test_repeated_advanced_index_accumulates():
    def f(lib):
        a = t(lib, [1.0, 2.0, 3.0], True)
        idx = lib.tensor([0, 2, 0, 0])
        (a[idx] * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        return a.grad
    same(f)


def test_double_backward_through_copyslices():
    def f(lib):
        x = t(lib, [0.5, -1.0, 2.0], True)
        b = x * x
        b[1:].mul_(x[:2])
        (g,) = lib.autograd.grad(b.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return [g, gg]
    same(f)


def test_detach_and_detach_inplace():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        y = x * 2
        d = y.detach()
        d.zero_()
        z = x * 3
        z.detach_()
        return [y, d.requires_grad, z.requires_grad, z.is_leaf, z.grad_fn is None,
                d._version, y._version]
    same(f)
    raises_same(lambda lib: (t(lib, [1.0, 2.0], True) * 2)[0].detach_())


def test_data_attribute():
    def f(lib):
        x = t(lib, [1.0, 2.0], True)
        d = x.data
        d.mul_(2)
        x.data = lib.tensor([5.0, 6.0, 7.0])
        return [d.requires_grad, x.shape, x._version, x.requires_grad]
    same(f)


def test_empty_and_zero_dim_views():
    def f(lib):
        x = lib.zeros(0, 3)
        s = lib.tensor(3.0)
        return [x.t().shape, x.reshape(3, 0).shape, s.reshape(1).shape, s.view(1, 1).shape,
                s.unsqueeze(0).shape, lib.ones(1, 1).squeeze().shape]
    same(f)


def test_view_of_expanded_cannot_be_written():
    def f(lib):
        x = lib.zeros(1, 3).expand(2, 3)
        x.add_(1)
    err = raises_same(f)
    assert "single memory location" in str(err)


_ = np


@pytest.mark.parametrize("view", ["select_slice", "transpose", "diagonal", "unbind",
                                  "as_strided", "view_as_real"])
def test_copyslices_plain_backward_matches_the_recorded_one_and_torch(view):
    # A backward that records nothing replays the view on arrays (a multi-output or
    # read-only view falls back to the general path); create_graph runs ndgrad ops. Both
    # give the same bits, and torch's values.
    rng = np.random.default_rng(11)
    base0 = rng.standard_normal((4, 4))
    src0 = rng.standard_normal(4)

    def run(lib, create_graph):
        w = lib.tensor(base0, requires_grad=True)
        s = lib.tensor(src0, requires_grad=True)
        b = w * 1.5
        if view == "view_as_real":
            b = lib.complex(b, b * 0.5)
            lib.view_as_real(b)[1:3, 0].mul_(s[:2])
            loss = (lib.view_as_real(b) ** 2).sum()
        else:
            if view == "select_slice":
                v = b[1][1:3]
            elif view == "transpose":
                v = b.t()[2]
            elif view == "diagonal":
                v = b.diagonal()
            elif view == "unbind":
                v = b.unbind(0)[2]
            else:
                v = b.as_strided((2, 2), (4, 1), 5)
            v.mul_(s[:v.shape[0]].reshape((-1,) + (1,) * (v.dim() - 1)))
            loss = (b * b).sum()
        return [g.detach().numpy() for g in
                lib.autograd.grad(loss, (w, s), create_graph=create_graph)]

    if view == "unbind":
        with pytest.raises(RuntimeError):
            run(ndgrad, False)
        return
    plain, recorded, ref = run(ndgrad, False), run(ndgrad, True), run(torch, False)
    for a, b, r in zip(plain, recorded, ref):
        assert np.array_equal(a, b)
        np.testing.assert_allclose(a, r, rtol=1e-12, atol=1e-12)
