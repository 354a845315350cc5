"""A view remembers how it was made (torch's creation meta: no_grad, inference mode, a
multi-output op, a custom Function), a view of a view inherits it, and an in-place write to
the view, or reading the grad_fn of a view whose base was written, is refused with torch's
message for that meta. Differential against torch 2.13: the same script runs in both, the
outcome (value, or exception class and message) must be equal, and a refused write changes
nothing."""

import pytest
import torch

import ndgrad


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return (type(e).__name__, str(e))


def _both(make):
    return [_outcome(lambda L=L: make(L)) for L in (torch, ndgrad)]


def _view_of_view_written(L, mode):
    x = L.zeros(2)
    with (L.no_grad() if mode == "no_grad" else L.inference_mode()):
        y = x.view(2)
    y.requires_grad_(True)
    z = y.view(2)
    try:
        z /= 2
    finally:
        assert x.tolist() == [0.0, 0.0] and z._version == 0  # nothing written
    return x.tolist()


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_view_of_a_view_inherits_the_no_grad_or_inference_meta(mode):
    t, n = _both(lambda L: _view_of_view_written(L, mode))
    assert t[0] == "RuntimeError" and "a view of a view which was created in" in t[1]
    assert n == t


def _custom_view(L, rg_input, inplace_arg_rg):
    class ViewFn(L.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.view_as(inp)

        @staticmethod
        def backward(ctx, g):
            return g

    a = L.tensor([[1.0, 2.0]], requires_grad=rg_input)
    base = a * 1 if rg_input else a
    out = ViewFn.apply(base)
    other = L.tensor([3.0], requires_grad=inplace_arg_rg)
    before = base.tolist()
    try:
        out.add_(other)
    finally:
        assert base.tolist() == before or not (rg_input or inplace_arg_rg)
    return out.tolist()


@pytest.mark.parametrize("rg_input,inplace_arg_rg", [(True, False), (False, True),
                                                     (False, False)])
def test_view_returned_by_a_custom_function_is_not_written_in_place(rg_input, inplace_arg_rg):
    t, n = _both(lambda L: _custom_view(L, rg_input, inplace_arg_rg))
    assert n == t
    if rg_input or inplace_arg_rg:
        assert "This view was created inside a custom Function" in t[1]


def test_view_of_an_intermediate_returned_by_a_custom_function():
    def make(L, no_grad):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()[:1]

            @staticmethod
            def backward(ctx, g):
                return g

        x = L.ones(2, requires_grad=True)
        if no_grad:
            with L.no_grad():
                o = F.apply(x)
        else:
            o = F.apply(x)
        o.mul_(3)
        return o.tolist()

    for no_grad in (False, True):
        t, n = _both(lambda L: make(L, no_grad))
        assert n == t
    assert t[0] == "ok"  # under no_grad nothing requires grad: the write is allowed


def _multi_output_view_written(L):
    a = L.rand(1, 2)
    b = L.rand(1, requires_grad=True)
    v = a.unbind()[0]
    v.copy_(b)


def test_multi_output_view_of_a_tensor_not_requiring_grad():
    t, n = _both(_multi_output_view_written)
    assert t[0] == "RuntimeError" and "returns multiple views" in t[1]
    assert n == t


def _no_grad_view_of_plain_base(L):
    x = L.zeros(2)
    with L.no_grad():
        v = x[:]
    v.add_(L.ones(2, requires_grad=True))


def test_no_grad_view_written_with_an_operand_requiring_grad():
    t, n = _both(_no_grad_view_of_plain_base)
    assert t[0] == "RuntimeError" and "created in no_grad mode" in t[1]
    assert n == t


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_grad_fn_of_a_view_whose_base_was_written(mode):
    def make(L):
        a = L.ones(3, requires_grad=True).clone()
        with (L.no_grad() if mode == "no_grad" else L.inference_mode()):
            v = a[:]
        a.add_(1)
        return v.grad_fn

    t, n = _both(make)
    assert t[0] == "RuntimeError" and "its base or another view of its base" in t[1]
    assert n == t


def test_in_place_view_op_on_views_made_in_each_mode():
    # an in-place view op (t_, unsqueeze_) keeps the meta of the view it is applied to
    def make(L, grad_view, grad_iview, rg):
        base = L.rand(2, 3, requires_grad=rg).clone()
        with L.set_grad_enabled(grad_view):
            inp = base.unbind()[0]
        with L.set_grad_enabled(grad_iview):
            inp.unsqueeze_(0)
        inp.add_(1)
        return inp.shape

    for grad_view in (True, False):
        for grad_iview in (True, False):
            for rg in (True, False):
                t, n = _both(lambda L: make(L, grad_view, grad_iview, rg))
                assert n[0] == t[0], (grad_view, grad_iview, rg, t, n)
                if t[0] != "ok":
                    assert n[1] == t[1]


def test_allowed_uses_still_work():
    # a view written inside its no_grad block, and normal views in grad mode
    def make(L):
        a = L.ones(3, requires_grad=True).clone()
        with L.no_grad():
            v = a[:2]
            v.mul_(2)
        w = a[1:]
        w.mul_(3)
        a.sum().backward()
        return a.tolist()

    t, n = _both(make)
    assert t[0] == "ok" and n == t
