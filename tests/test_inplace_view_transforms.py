"""In-place view ops (transpose_, t_, swapdims_, unsqueeze_, squeeze_, as_strided_) under the
transforms, differential against torch: vmap rebinds the batched value, forward AD applies
the same in-place view op to the tangent, reverse mode records torch's *Backward1 nodes."""

import numpy as np
import pytest
import torch

import ndgrad

fw = ndgrad.autograd.forward_ad
tfw = torch.autograd.forward_ad

# (name, shape of one sample, the in-place op); each op is applied to a fresh copy.
OPS = [
    ("transpose_", (2, 4), lambda t: t.transpose_(0, 1)),
    ("transpose_neg", (2, 1, 4), lambda t: t.transpose_(-1, 0)),
    ("t_", (2, 4), lambda t: t.t_()),
    ("t_1d", (4,), lambda t: t.t_()),
    ("swapdims_", (2, 3, 4), lambda t: t.swapdims_(0, 2)),
    ("swapaxes_", (2, 3, 4), lambda t: t.swapaxes_(1, 2)),
    ("unsqueeze_", (2, 4), lambda t: t.unsqueeze_(0)),
    ("unsqueeze_last", (2, 4), lambda t: t.unsqueeze_(-1)),
    ("squeeze_", (2, 1, 4, 1), lambda t: t.squeeze_()),
    ("squeeze_dim", (2, 1, 4), lambda t: t.squeeze_(1)),
    ("squeeze_dims", (1, 2, 1, 4), lambda t: t.squeeze_((0, 2))),
    ("squeeze_noop", (2, 4), lambda t: t.squeeze_(0)),
]
IDS = [o[0] for o in OPS]


def _inputs(shape, seed, extra=(3,)):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(tuple(extra) + tuple(shape))
    return ndgrad.tensor(a), torch.tensor(a)


def _body(op):
    def f(t):
        u = t * 1
        r = op(u)
        assert r is u
        return u * 2  # u itself now has the view's shape
    return f


def _close(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,shape,op", OPS, ids=IDS)
@pytest.mark.parametrize("in_dim", [0, 1])
def test_vmap(name, shape, op, in_dim):
    x, tx = _inputs(shape, 1)
    if in_dim == 1:
        x, tx = x.movedim(0, 1).contiguous(), tx.movedim(0, 1).contiguous()
    _close(ndgrad.vmap(_body(op), in_dims=in_dim)(x), torch.vmap(_body(op), in_dims=in_dim)(tx))


@pytest.mark.parametrize("name,shape,op", OPS, ids=IDS)
def test_nested_vmap(name, shape, op):
    x, tx = _inputs(shape, 2, extra=(3, 2))
    _close(ndgrad.vmap(ndgrad.vmap(_body(op)))(x), torch.vmap(torch.vmap(_body(op)))(tx))


def test_vmap_write_through_inplace_view_reaches_the_original():
    x, tx = _inputs((2, 4), 3)

    def f(lib):
        def g(t):
            u = t * 1
            v = u[0]          # a view of u
            v.unsqueeze_(0)   # still a view of u, now [1, 4]
            v.mul_(10)
            return u, v
        return g
    for a, b in zip(ndgrad.vmap(f(ndgrad))(x), torch.vmap(f(torch))(tx)):
        _close(a, b)


@pytest.mark.parametrize("name,shape,op", OPS, ids=IDS)
def test_forward_ad(name, shape, op):
    x, tx = _inputs(shape, 4, extra=())
    v, tv = _inputs(shape, 5, extra=())
    with fw.dual_level():
        y = op(fw.make_dual(x, v) * 2)
        p, t = fw.unpack_dual(y)
    with tfw.dual_level():
        ty = op(tfw.make_dual(tx, tv) * 2)
        tp, tt = tfw.unpack_dual(ty)
    _close(p, tp)
    _close(t, tt)


@pytest.mark.parametrize("name,shape,op", OPS, ids=IDS)
def test_forward_ad_view_tangent(name, shape, op):
    """`self` is a view of a dual tensor: its tangent is a view of the base's tangent; after
    the op both see the new layout and a later write through the view reaches the base."""
    x, tx = _inputs(shape, 6, extra=(2,))
    v, tv = _inputs(shape, 7, extra=(2,))

    def run(lib, f, x, v):
        with f.dual_level():
            b = f.make_dual(x, v) * 1
            w = b[1]
            op(w)
            w.mul_(w.detach() + 3)
            return [f.unpack_dual(w).primal, f.unpack_dual(w).tangent,
                    f.unpack_dual(b).primal, f.unpack_dual(b).tangent]
    for a, b in zip(run(ndgrad, fw, x, v), run(torch, tfw, tx, tv)):
        _close(a, b)


def test_forward_ad_as_strided_():
    x, tx = _inputs((4,), 8, extra=(3,))
    v, tv = _inputs((4,), 9, extra=(3,))
    with fw.dual_level():
        y = (fw.make_dual(x, v) * 2).as_strided_((2, 3), (1, 4), 1)
        p, t = fw.unpack_dual(y)
    with tfw.dual_level():
        ty = (tfw.make_dual(tx, tv) * 2).as_strided_((2, 3), (1, 4), 1)
        tp, tt = tfw.unpack_dual(ty)
    _close(p, tp)
    _close(t, tt)


def test_forward_ad_tangent_leaf_requiring_grad_is_refused():
    x, tx = _inputs((2, 4), 10)
    v, tv = _inputs((2, 4), 11)
    v.requires_grad_()
    tv.requires_grad_()
    with tfw.dual_level():
        with pytest.raises(RuntimeError) as te:
            tfw.make_dual(tx, tv).transpose_(0, 1)
    with fw.dual_level():
        with pytest.raises(RuntimeError) as ne:
            fw.make_dual(x, v).transpose_(0, 1)
    assert str(ne.value) == str(te.value)


@pytest.mark.parametrize("name,shape,op", OPS, ids=IDS)
def test_grad_of_vmap(name, shape, op):
    x, tx = _inputs(shape, 12)
    w, tw = _inputs(shape, 13)

    def loss(lib, w):
        def f(t):
            u = (t * 1)
            op(u)
            return (u.sin() * u).sum()
        return lambda t: (lib.vmap(f)(t * w)).sum()
    _close(ndgrad.func.grad(loss(ndgrad, w))(x), torch.func.grad(loss(torch, tw))(tx))


@pytest.mark.parametrize("name,shape,op", OPS, ids=IDS)
def test_reverse_mode_unchanged(name, shape, op):
    x, tx = _inputs(shape, 14, extra=())
    x.requires_grad_()
    tx.requires_grad_()
    res = []
    for lib, a in ((ndgrad, x), (torch, tx)):
        u = a * 1
        ver = u._version
        op(u)
        res.append((u, type(u.grad_fn).__name__, u._base, u._version - ver))
        g = lib.arange(float(u.numel()), dtype=u.dtype).reshape(u.shape)
        (u * u.detach().cos() * g).sum().backward()
    (u, name_n, base_n, dv_n), (tu, name_t, base_t, dv_t) = res
    assert name_n == name_t and dv_n == dv_t
    assert (base_n is None) == (base_t is None)
    _close(u, tu)
    _close(x.grad, tx.grad)


def test_reverse_mode_view_of_view():
    x, tx = _inputs((4,), 15)
    x.requires_grad_()
    tx.requires_grad_()
    out = []
    for a in (x, tx):
        b = a * 1
        v = b[1:]
        v.t_()
        v.mul_(3)
        out.append((v, type(v.grad_fn).__name__, v._base is b, b))
        b.sum().backward()
    (v, n, isb, b), (tv, tn, tisb, tb) = out
    assert (n, isb) == (tn, tisb)
    _close(v, tv)
    _close(b, tb)
    _close(x.grad, tx.grad)


@pytest.mark.parametrize("how", ["jacfwd", "jacobian_forward_vectorized", "jacrev"])
def test_jacobians(how):
    x, tx = _inputs((3, 2), 16, extra=())

    def f(t):
        return (t * t).transpose_(0, 1).unsqueeze_(0)
    if how == "jacfwd":
        _close(ndgrad.func.jacfwd(f)(x), torch.func.jacfwd(f)(tx))
    elif how == "jacrev":
        _close(ndgrad.func.jacrev(f)(x), torch.func.jacrev(f)(tx))
    else:
        # torch 2.13's vectorized forward-mode Jacobian misplaces the entries of transpose_
        # (its batched tangent is transposed over the wrong dims; its reverse-mode Jacobian
        # and jacfwd agree with each other): the oracle is torch's reverse-mode Jacobian.
        _close(ndgrad.autograd.functional.jacobian(f, x, vectorize=True,
                                                   strategy="forward-mode"),
               torch.autograd.functional.jacobian(f, tx))
