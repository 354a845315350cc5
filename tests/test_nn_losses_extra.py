"""glu, prelu, group_norm and the soft / multi-class margin losses against torch 2.13: values,
grad_fn names (and double-backward node names), gradients for every reduction, second
derivatives, and torch's errors."""

import zlib

import numpy as np
import pytest
import torch
from _helpers import check, check_error, check_gradgrad

import ndgrad

RNG = np.random.default_rng(7)
REDUCTIONS = ("mean", "sum", "none")


@pytest.fixture(autouse=True)
def _seeded(request):
    """Each test draws the same data however the tests are distributed."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(request.node.name.encode()))


def _arr(*shape, dtype=np.float64):
    return RNG.uniform(-2, 2, size=shape).astype(dtype)


def _sign(*shape):
    return np.where(RNG.uniform(size=shape) < 0.5, -1.0, 1.0)


def _idx(*values):
    return np.array(values, dtype=np.int64)


def _grad_graph(lib, out, xs):
    """grad_fn names of the create_graph gradients of ``out.sum()`` w.r.t. `xs`."""
    gs = lib.autograd.grad(out.sum(), xs, create_graph=True)
    return [None if g.grad_fn is None else type(g.grad_fn).__name__ for g in gs]


def _same_graph(fn, *arrays):
    names = []
    for lib in (torch, ndgrad):
        xs = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        out = fn(lib, *xs)
        names.append((type(out.grad_fn).__name__,
                      _grad_graph(lib, out, [x for x in xs if x.requires_grad])))
    assert names[0] == names[1]
    return names[1]


# ---------------------------------------------------------------------------- soft margin
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", (np.float32, np.float64))
def test_soft_margin_loss(reduction, dtype):
    x, t = _arr(3, 4, dtype=dtype), _sign(3, 4).astype(dtype)
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    check(lambda lib, x: lib.nn.functional.soft_margin_loss(x, lib.tensor(t),
                                                             reduction=reduction),
          x, rtol=rtol, atol=1e-7 if dtype == np.float32 else 1e-14)
    check_gradgrad(lambda lib, x: lib.nn.functional.soft_margin_loss(
        x, lib.tensor(t), reduction=reduction), x.astype(np.float64))
    assert _same_graph(lambda lib, x: lib.nn.functional.soft_margin_loss(
        x, lib.tensor(t), reduction=reduction), x.astype(np.float64)) == \
        ("SoftMarginLossBackward0", ["SoftMarginLossBackwardBackward0"])


def test_soft_margin_loss_edges():
    # extreme margins (inf / nan as torch's log1p(exp(.)) gives), broadcast target, legacy args
    x = np.array([-100.0, 100.0, 1e4, -1e4, 0.0], dtype=np.float32)
    check(lambda lib, x: lib.nn.functional.soft_margin_loss(x, lib.ones(5), reduction="none"),
          x)
    t4 = _arr(4)
    check(lambda lib, x: lib.nn.functional.soft_margin_loss(x, lib.tensor(t4)), _arr(3, 4))
    check(lambda lib, x: lib.nn.functional.soft_margin_loss(x, lib.ones(3, 4),
                                                             size_average=False), _arr(3, 4))
    check(lambda lib, x: lib.nn.SoftMarginLoss(reduce=False)(x, lib.ones(3, 4)), _arr(3, 4))
    check(lambda lib, x: lib.nn.functional.soft_margin_loss(x, lib.ones(0)), np.zeros(0))
    gg = lambda lib, x, t: lib.nn.functional.soft_margin_loss(x, t, reduction="sum")
    check_gradgrad(lambda lib, x: gg(lib, x, lib.tensor(_sign(4))), _arr(3, 4))


def test_soft_margin_loss_errors():
    for fn, args in [
        (lambda lib, x, t: lib.nn.functional.soft_margin_loss(x, t), (_arr(3, 4), _arr(3, 5))),
        (lambda lib, x, t: lib.nn.functional.soft_margin_loss(x, t), (_arr(4), _arr(3, 4))),
        (lambda lib, x, t: lib.nn.functional.soft_margin_loss(x, t, reduction="foo"),
         (_arr(3), _arr(3))),
        (lambda lib, x, t: lib.nn.functional.soft_margin_loss(x, t), (_idx(1, 2), _idx(1, 2))),
        (lambda lib, x, t: lib.nn.functional.soft_margin_loss(x, t), (_idx(1, 2), _arr(2))),
        (lambda lib, x, t: lib.nn.functional.soft_margin_loss(x, t),
         (_idx(1, 2), _arr(2).astype(np.float32))),
        (lambda lib, x, t: lib.nn.functional.soft_margin_loss(x, t),
         (np.ones(2, bool), _arr(2))),
        (lambda lib, x, t: lib.nn.functional.soft_margin_loss(x, t.requires_grad_()),
         (_arr(3), _arr(3))),
    ]:
        check_error(fn, *args)


# ---------------------------------------------------------------------------- glu
@pytest.mark.parametrize("shape,dim", [((3, 4), -1), ((2, 6, 3), 1), ((4, 2), 0), ((0, 4), 1)])
@pytest.mark.parametrize("dtype", (np.float32, np.float64))
def test_glu(shape, dim, dtype):
    x = _arr(*shape, dtype=dtype)
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    check(lambda lib, x: lib.nn.functional.glu(x, dim), x, rtol=rtol)
    check(lambda lib, x: lib.nn.GLU(dim)(x), x, rtol=rtol)
    check_gradgrad(lambda lib, x: lib.nn.functional.glu(x, dim), x.astype(np.float64))


def test_glu_graph_and_errors():
    assert _same_graph(lambda lib, x: lib.nn.functional.glu(x, 1), _arr(3, 4)) == \
        ("GluBackward0", ["GluBackwardBackward0"])
    for fn, args in [
        (lambda lib, x: lib.nn.functional.glu(x), (np.array(1.0),)),
        (lambda lib, x: lib.nn.functional.glu(x), (_arr(3, 5),)),
        (lambda lib, x: lib.nn.functional.glu(x, -2), (_arr(3, 4),)),
        (lambda lib, x: lib.nn.functional.glu(x, 5), (_arr(3, 4),)),
        (lambda lib, x: lib.nn.functional.glu(x), (_idx(1, 2),)),
    ]:
        check_error(fn, *args)


# ---------------------------------------------------------------------------- prelu
@pytest.mark.parametrize("xshape,wshape", [((3, 4), (4,)), ((2, 3, 4), (3,)), ((2, 3, 4), (1,)),
                                           ((3, 4), ()), ((5,), (1,)), ((), (1,)), ((), ())])
def test_prelu(xshape, wshape):
    x, w = _arr(*xshape), _arr(*wshape)
    check(lambda lib, x, w: lib.nn.functional.prelu(x, w), x, w, rtol=1e-12, chain=True)
    check(lambda lib, x, w: lib.nn.functional.prelu(x, w), x.astype(np.float32),
          w.astype(np.float32))
    check_gradgrad(lambda lib, x, w: lib.nn.functional.prelu(x, w), x, w)


def test_prelu_at_zero_and_graph():
    # x == 0 takes the negative branch (weight * x), as torch's kernel
    x = np.array([[-1.0, 0.0, 2.0, 0.0]])
    check(lambda lib, x, w: lib.nn.functional.prelu(x, w), x, np.array([0.25]))
    check_gradgrad(lambda lib, x, w: lib.nn.functional.prelu(x, w), x, np.array([0.25, 0.5,
                                                                                  1.5, -1.0]))
    check(lambda lib, x: lib.nn.PReLU(4, 0.3)(x), _arr(2, 4).astype(np.float32))
    graph = _same_graph(lambda lib, x, w: lib.nn.functional.prelu(x, w), _arr(3, 4), _arr(4))
    assert graph == ("PreluKernelBackward0", ["PreluKernelBackwardBackward0", "ViewBackward0"])


def test_prelu_errors():
    prelu = lambda lib, x, w: lib.nn.functional.prelu(x, w)  # noqa: E731
    for args in [(_arr(3, 4), _arr(2, 2)), (_arr(3, 4), _arr(3)), (_arr(4), _arr(4)),
                 (np.array(1.0), _arr(2)), (_arr(3, 4), np.zeros(0)),
                 (_idx(1, 2), _idx(1)), (_arr(3, 4).astype(np.float32), _arr(1))]:
        check_error(prelu, *args)


# ---------------------------------------------------------------------------- group norm
@pytest.mark.parametrize("shape,groups", [((2, 4, 3), 2), ((3, 6), 3), ((2, 4, 2, 3), 4),
                                          ((1, 4, 5), 1), ((0, 4, 3), 2)])
@pytest.mark.parametrize("affine", ("both", "none", "weight", "bias"))
def test_group_norm(shape, groups, affine):
    c = shape[1]
    w = _arr(c) if affine in ("both", "weight") else None
    b = _arr(c) if affine in ("both", "bias") else None
    args = [a for a in (w, b) if a is not None]

    def fn(lib, x, *wb, eps=1e-5):
        it = iter(wb)
        return lib.nn.functional.group_norm(x, groups, next(it) if w is not None else None,
                                            next(it) if b is not None else None, eps=eps)

    x = _arr(*shape)
    # torch 2.13 cannot differentiate a group norm with a bias and no weight ("tensor does
    # not have a device"): there ndgrad's gradients are checked by finite differences
    grad = affine != "bias"
    check(fn, x, *args, rtol=1e-10, atol=1e-12, grad=grad)
    check(fn, x.astype(np.float32), *[a.astype(np.float32) for a in args], rtol=1e-5,
          atol=1e-5, grad=grad)
    check(lambda lib, *a: fn(lib, *a, eps=0.5), x, *args, rtol=1e-10, atol=1e-12, grad=grad)
    if shape[0] and grad:
        check_gradgrad(fn, x, *args)
    elif shape[0]:
        xs = [ndgrad.tensor(a, requires_grad=True) for a in (x, *args)]
        assert ndgrad.autograd.gradcheck(lambda *t: fn(ndgrad, *t), xs)
        assert ndgrad.autograd.gradgradcheck(lambda *t: fn(ndgrad, *t), xs)


def test_group_norm_module_and_graph():
    check(lambda lib, x: lib.nn.GroupNorm(2, 4)(x), _arr(2, 4, 3).astype(np.float32),
          rtol=1e-5, atol=1e-6)
    check(lambda lib, x: lib.nn.GroupNorm(2, 4, affine=False)(x), _arr(2, 4, 3), rtol=1e-10)
    # float16 input with float32 parameters (torch's mixed type)
    check(lambda lib, x: lib.nn.functional.group_norm(x, 2, lib.ones(4), lib.zeros(4)),
          _arr(2, 4, 3).astype(np.float16), rtol=2e-3, atol=2e-3, grad=False)
    # constant groups: the eps alone keeps the output finite (all zeros)
    check(lambda lib, x: lib.nn.functional.group_norm(x, 2, eps=0.5), np.ones((2, 4, 3)))
    name, grads = _same_graph(lambda lib, x, w, b: lib.nn.functional.group_norm(x, 2, w, b),
                              _arr(2, 4, 3), _arr(4), _arr(4))
    assert name == "NativeGroupNormBackward0" and grads[:2] == ["ViewBackward0",
                                                                "ViewBackward0"]


def test_group_norm_errors():
    gn = lambda lib, x, g, *wb: lib.nn.functional.group_norm(x, g, *wb)  # noqa: E731
    for args in [(_arr(2, 6, 3), 4), (_arr(6), 2), (_arr(2, 6, 3), 2, _arr(5)),
                 (_arr(2, 6, 3), 2, None, _arr(5)), (_arr(2, 6, 3), 2, _arr(6), _arr(5)),
                 (_arr(2, 6, 3), 2, _arr(6, 1)), (_idx(1, 2, 3, 4).reshape(1, 4, 1) + 0, 2),
                 (_arr(2, 6), 0), (_arr(2, 6), -2), (_arr(1, 2), 2),
                 (_arr(2, 4, 3).astype(np.float32), 2, _arr(4)),
                 (_arr(2, 4, 3), 2, _arr(4).astype(np.float32), _arr(4).astype(np.float32)),
                 (_arr(2, 4, 3), 2, _arr(4).astype(np.float32), _arr(4)),
                 (_arr(2, 4, 3).astype(np.float16), 2, _arr(4), _arr(4))]:
        check_error(gn, *args)


# ---------------------------------------------------------------------------- multi margin
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", (1, 2))
@pytest.mark.parametrize("weighted", (False, True))
def test_multi_margin_loss(reduction, p, weighted):
    x, tgt = _arr(4, 5), _idx(0, 3, 1, 4)
    w = np.abs(_arr(5)) + 0.1 if weighted else None

    def fn(lib, x, margin=1.0, dtype=None):
        return lib.nn.functional.multi_margin_loss(
            x, lib.tensor(tgt), p=p, margin=margin, reduction=reduction,
            weight=None if w is None else lib.tensor(w.astype(dtype or np.float64)))

    check(fn, x, rtol=1e-12, atol=1e-14)
    check(lambda lib, x: fn(lib, x, 0.3), x, rtol=1e-12, atol=1e-14)
    check(lambda lib, x: fn(lib, x, dtype=np.float32), x.astype(np.float32))
    check(lambda lib, x: lib.nn.MultiMarginLoss(p, 0.7, None if w is None else lib.tensor(w),
                                                reduction=reduction)(x, lib.tensor(tgt)), x)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multi_margin_loss_shapes(reduction):
    for x, t in [(_arr(5), _idx(2)), (_arr(5), np.array(2)), (np.array(0.5), np.array(0)),
                 (np.array(0.5), _idx(0)), (np.zeros((3, 2)), _idx(0, 1, 1))]:
        check(lambda lib, x: lib.nn.functional.multi_margin_loss(x, lib.tensor(t), p=2,
                                                                 reduction=reduction), x)
    # legacy arguments
    check(lambda lib, x: lib.nn.functional.multi_margin_loss(x, lib.tensor(_idx(0, 2)),
                                                             reduce=False), _arr(2, 3))
    check(lambda lib, x: lib.nn.MultiMarginLoss(size_average=False)(x, lib.tensor(_idx(1))),
          _arr(1, 3))


def test_multi_margin_loss_double_backward_is_torchs_not_implemented():
    for lib in (torch, ndgrad):
        x = lib.tensor(_arr(3, 4), requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.multi_margin_loss(
            x, lib.tensor(_idx(0, 3, 1)), p=2), x, create_graph=True)
        assert type(g.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::multi_margin_loss_backward "
                                               "is not implemented"):
            g.sum().backward()


def test_multi_margin_loss_errors():
    mml = lambda lib, x, t, **kw: lib.nn.functional.multi_margin_loss(x, t, **kw)  # noqa
    f32 = _arr(3, 4).astype(np.float32)
    for args, kw in [((_arr(3, 4), _idx(0, 1, 2)), {"p": 3}),
                     ((_arr(3, 4), _idx(0, 1)), {}), ((_arr(3, 4), _idx(0, 1, 2)[None]), {}),
                     ((_arr(3, 4), _idx(0, 1, 4)), {}), ((_arr(3, 4), _idx(0, 1, -1)), {}),
                     ((_arr(2, 3, 4), _idx(0, 1)), {}), ((np.zeros((3, 0)), _idx(0, 1, 2)), {}),
                     ((np.zeros(0), _idx(0)), {}), ((_arr(3, 4), _arr(3)), {}),
                     ((_arr(3, 4), _idx(0, 1, 2).astype(np.int32)), {}),
                     ((_idx(1, 2, 3).reshape(1, 3), _idx(0)), {}),
                     ((_arr(3, 4), _idx(0, 1, 2)), {"reduction": "foo"}),
                     ((f32.astype(np.float16), _idx(0, 1, 2)), {})]:
        check_error(lambda lib, x, t, kw=kw: mml(lib, x, t, **kw), *args)
    for weight in (np.ones(3), np.ones((1, 4)), np.array(2.0)):
        check_error(lambda lib, x, w: mml(lib, x, lib.tensor(_idx(0, 1, 2)), weight=w),
                    _arr(3, 4), weight)
    check_error(lambda lib, x, w: mml(lib, x, lib.tensor(_idx(0, 1, 2)), weight=w), f32,
                np.ones(4))
    check_error(lambda lib, x, w: mml(lib, x, lib.tensor(_idx(0, 1, 2)),
                                      weight=w.requires_grad_()), _arr(3, 4), np.ones(4))
    check_error(lambda lib, w: lib.nn.MultiMarginLoss(weight=w), np.ones((2, 2)))
    check_error(lambda lib: lib.nn.MultiMarginLoss(p=3))


# ---------------------------------------------------------------------------- multilabel margin
MULTILABEL_TARGETS = np.array([[0, 3, -1, 1], [2, -1, 0, 0], [1, 2, 3, 0], [-1, 1, 2, 3]])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", (np.float32, np.float64))
def test_multilabel_margin_loss(reduction, dtype):
    x = _arr(4, 4, dtype=dtype)
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    fn = lambda lib, x: lib.nn.functional.multilabel_margin_loss(  # noqa: E731
        x, lib.tensor(MULTILABEL_TARGETS), reduction=reduction)
    check(fn, x, rtol=rtol)
    check(lambda lib, x: lib.nn.MultiLabelMarginLoss(reduction=reduction)(
        x, lib.tensor(MULTILABEL_TARGETS)), x, rtol=rtol)
    # ties (z == 0 is not counted) and 1-d / 0-d inputs
    check(fn, np.zeros((4, 4), dtype) + np.eye(4, dtype=dtype))
    for xx, t in [(_arr(4), _idx(1, 2, -1, 0)), (np.array(1.0), np.array(0)),
                  (np.array(1.0), _idx(-1)), (_arr(4), _idx(-1, 1, 2, 3))]:
        check(lambda lib, x: lib.nn.functional.multilabel_margin_loss(
            x, lib.tensor(t), reduction=reduction), xx)


def test_multilabel_margin_loss_legacy_and_double_backward():
    t = MULTILABEL_TARGETS
    check(lambda lib, x: lib.nn.functional.multilabel_margin_loss(x, lib.tensor(t),
                                                                  size_average=False),
          _arr(4, 4))
    check(lambda lib, x: lib.nn.MultiLabelMarginLoss(reduce=False)(x, lib.tensor(t)),
          _arr(4, 4))
    for lib in (torch, ndgrad):
        x = lib.tensor(_arr(4, 4), requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.multilabel_margin_loss(x, lib.tensor(t)), x,
                                 create_graph=True)
        assert type(g.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::multilabel_margin_loss_"
                                               "backward is not implemented"):
            g.sum().backward()


def test_multilabel_margin_loss_errors():
    mlml = lambda lib, x, t: lib.nn.functional.multilabel_margin_loss(x, t)  # noqa: E731
    for args in [(_arr(3, 4), np.zeros((3, 3), np.int64)), (_arr(3, 4), np.zeros((3, 4))),
                 (_arr(3, 4), np.full((3, 4), 5)), (_arr(3, 4), np.full((3, 4), 4)),
                 (_arr(3, 4), np.full((3, 4), -2)),
                 (_arr(3, 4), np.array([[0, -1, -2, 1]] * 3)),
                 (_arr(2, 3, 4), np.zeros((2, 3, 4), np.int64)),
                 (_arr(4), np.zeros((1, 4), np.int64)),
                 (np.zeros((3, 0)), np.zeros((3, 0), np.int64)),
                 (_arr(3, 4), np.zeros((3, 4), np.int32)),
                 (_idx(1, 2), _idx(0, 1)),
                 (_arr(2, 2).astype(np.float16), np.zeros((2, 2), np.int64))]:
        check_error(mlml, *args)
    check_error(lambda lib, x, t: lib.nn.functional.multilabel_margin_loss(x, t, reduction="x"),
                _arr(3, 4), np.zeros((3, 4), np.int64))


# ---------------------------------------------------------------------------- multilabel soft
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", (False, True))
def test_multilabel_soft_margin_loss(reduction, weighted):
    x, t = _arr(3, 4), (RNG.uniform(size=(3, 4)) > 0.5).astype(np.float64)
    args = (x, t, _arr(4)) if weighted else (x, t)

    def fn(lib, x, t, *w):
        return lib.nn.functional.multilabel_soft_margin_loss(x, t, *w, reduction=reduction)

    check(fn, *args, rtol=1e-12, chain=True)
    check_gradgrad(fn, *args)
    check(lambda lib, x, t, *w: lib.nn.MultiLabelSoftMarginLoss(*w, reduction=reduction)(x, t),
          *args, rtol=1e-12)
    check(fn, *(a.astype(np.float32) for a in args))


def test_multilabel_soft_margin_loss_legacy_and_errors():
    x, t = _arr(3, 4), np.ones((3, 4))
    check(lambda lib, x, t: lib.nn.functional.multilabel_soft_margin_loss(x, t, reduce=False),
          x, t)
    check(lambda lib, x, t: lib.nn.functional.multilabel_soft_margin_loss(x, t), _arr(4),
          np.ones(4))
    check_error(lambda lib, x, t: lib.nn.functional.multilabel_soft_margin_loss(x, t), x,
                np.ones((3, 5)))
    check_error(lambda lib, x, t: lib.nn.functional.multilabel_soft_margin_loss(
        x, t, reduction="foo"), x, t)


def test_module_reprs():
    for make in (lambda nn: nn.MultiMarginLoss(p=2, margin=0.5), lambda nn: nn.MultiMarginLoss(),
                 lambda nn: nn.MultiLabelMarginLoss(), lambda nn: nn.MultiLabelSoftMarginLoss(),
                 lambda nn: nn.SoftMarginLoss()):
        assert repr(make(ndgrad.nn)) == repr(make(torch.nn))
    m, tm = ndgrad.nn.MultiMarginLoss(size_average=False), torch.nn.MultiMarginLoss(
        size_average=False)
    assert (m.reduction, m.p, m.margin) == (tm.reduction, tm.p, tm.margin)
    assert ndgrad.nn.MultiLabelSoftMarginLoss(reduce=False).reduction == \
        torch.nn.MultiLabelSoftMarginLoss(reduce=False).reduction
