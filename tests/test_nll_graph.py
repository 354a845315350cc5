"""nll_loss's backward graph against torch 2.13 in every rank torch dispatches differently:
node names (NllLossBackward0 / NllLoss2DBackward0 and their double-backward nodes), the view
torch puts under a 3-d or 5-d input, next_functions (edges to the differentiable inputs only),
the ``_saved_*`` attributes ndgrad exposes, create_graph gradients, empty inputs and ignored
targets under a mean over nothing."""

import warnings

import numpy as np
import pytest
import torch

import ndgrad

SHAPES = [(4,), (3, 4), (2, 3, 4), (2, 3, 4, 5), (2, 3, 2, 2, 2)]


def _case(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    c = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    t = rng.integers(0, c, tshape)
    if t.size > 1:
        t.reshape(-1)[1] = 1
    w = rng.uniform(0.5, 2.0, c)
    return x, t, w


def _structure(fn, depth=3):
    """(name, next_functions' structure) down `depth` levels, AccumulateGrad as a leaf."""
    if fn is None:
        return None
    name = type(fn).__name__
    if name == "AccumulateGrad" or depth == 0:
        return name
    return (name, tuple(_structure(n, depth - 1) for n, _ in fn.next_functions))


def _run(lib, x, t, w, reduction, use_weight, ignore_index):
    xt = lib.tensor(x, requires_grad=True)
    wt = lib.tensor(w) if use_weight else None
    out = lib.nn.functional.nll_loss(xt, lib.tensor(t), wt, reduction=reduction,
                                     ignore_index=ignore_index)
    return xt, out


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("use_weight", [False, True])
def test_nodes_edges_saved_and_double_backward(shape, reduction, use_weight):
    x, t, w = _case(shape, 3)
    ignore_index = 1 if use_weight else -100
    res = {}
    for lib in (torch, ndgrad):
        xt, out = _run(lib, x, t, w, reduction, use_weight, ignore_index)
        node = out.grad_fn
        while type(node).__name__ == "ViewBackward0":
            node = node.next_functions[0][0]
        saved = {k: getattr(node, "_saved_" + k) for k in
                 ("target", "weight", "total_weight", "ignore_index", "reduction")}
        saved = {k: (v.detach().numpy() if hasattr(v, "detach") else v)
                 for k, v in saved.items()}
        g = np.random.default_rng(4).standard_normal(tuple(out.shape))
        gx, = lib.autograd.grad(out, xt, lib.tensor(g), create_graph=True)
        gg = np.random.default_rng(5).standard_normal(shape)
        ggx, = lib.autograd.grad(gx, xt, lib.tensor(gg), allow_unused=True)
        res[lib.__name__] = (_structure(out.grad_fn), _structure(gx.grad_fn),
                             gx.requires_grad, saved, out.detach().numpy(),
                             gx.detach().numpy(), None if ggx is None else ggx.numpy())
    tr, nd = res["torch"], res["ndgrad"]
    assert nd[:3] == tr[:3]
    for k, v in tr[3].items():
        if v is None:
            assert nd[3][k] is None, k
        elif isinstance(v, np.ndarray):
            np.testing.assert_allclose(nd[3][k], v, rtol=1e-12, err_msg=k)
            assert np.shape(nd[3][k]) == v.shape
        else:
            assert nd[3][k] == v and type(nd[3][k]) is type(v), k
    for a, b in zip(nd[4:], tr[4:]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_backward_of_backward_names_and_values():
    # the cotangent requiring grad: its gradient is nll_loss2d of the outer cotangent
    x, t, w = _case((2, 3, 4, 5), 6)
    res = []
    for lib in (torch, ndgrad):
        xt = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.nll_loss(xt, lib.tensor(t), lib.tensor(w), reduction="none")
        g = lib.tensor(np.random.default_rng(7).standard_normal(tuple(out.shape)),
                       requires_grad=True)
        gx, = lib.autograd.grad(out, xt, g, create_graph=True)
        ggx = lib.tensor(np.random.default_rng(8).standard_normal(x.shape))
        gg, = lib.autograd.grad(gx, g, ggx, create_graph=True)
        res.append((_structure(gg.grad_fn), gg.detach().numpy()))
    assert res[0][0] == res[1][0]
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-12)


@pytest.mark.parametrize("shape", [(0, 3, 4, 5), (0, 3, 4), (2, 3, 0, 5), (0, 3, 2, 2, 2),
                                   (0, 3)])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_empty_inputs_no_numpy_warning(shape, reduction):
    res = []
    for lib in (torch, ndgrad):
        x = lib.zeros(shape, requires_grad=True)
        t = lib.zeros((shape[0],) + shape[2:], dtype=lib.long)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = lib.nn.functional.nll_loss(x, t, reduction=reduction)
            out.sum().backward()
        res.append((type(out.grad_fn).__name__, tuple(out.shape), out.detach().numpy(),
                    tuple(x.grad.shape)))
    assert res[0][:2] == res[1][:2] and res[0][3] == res[1][3]
    np.testing.assert_array_equal(res[1][2], res[0][2])


@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 2, 2), (4,)])
def test_every_target_ignored_or_zero_weight(shape):
    # a mean over no counted target: the loss is nan; an ignored target's gradient row stays
    # zero while a zero-weight target's row is nan, as torch's
    c = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    w = np.ones(c)
    w[2] = 0.0
    for target, weight, ignore in ((1, None, 1), (2, w, -100)):
        res = []
        for lib in (torch, ndgrad):
            x = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
            t = lib.full(tshape, target, dtype=lib.long)
            out = lib.nn.functional.nll_loss(x, t, None if weight is None else lib.tensor(weight),
                                             ignore_index=ignore)
            out.backward()
            res.append((out.detach().numpy(), x.grad.numpy()))
        for a, b in zip(res[1], res[0]):
            np.testing.assert_array_equal(a, b)


def test_cross_entropy_kdim_graph_and_nll_loss2d_module():
    x, t, w = _case((2, 3, 4, 5), 9)
    res = []
    for lib in (torch, ndgrad):
        xt = lib.tensor(x, requires_grad=True)
        ce = lib.nn.functional.cross_entropy(xt, lib.tensor(t), lib.tensor(w), ignore_index=0)
        ce3 = lib.nn.functional.cross_entropy(xt[:, :, 0], lib.tensor(t[:, 0]), reduction="none")
        ce.backward()
        res.append((_structure(ce.grad_fn, 4), _structure(ce3.grad_fn, 4), ce.detach().numpy(),
                    xt.grad.numpy(), ce3.detach().numpy()))
    assert res[0][:2] == res[1][:2]
    for a, b in zip(res[1][2:], res[0][2:]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_target_dtype_errors_fall_back_from_the_fast_path():
    # cross_entropy's (N, C) fast path does not take an int32 target: torch's error
    for lib in (torch, ndgrad):
        x = lib.zeros(3, 4)
        with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, "
                                               "but got Int"):
            lib.nn.functional.cross_entropy(x, lib.zeros(3, dtype=lib.int32))
        out = lib.nn.functional.cross_entropy(x, lib.zeros(3, dtype=lib.uint8))
        assert float(out) == pytest.approx(np.log(4))


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 4), (2, 3, 4, 5), (2, 3, 1, 2, 2)])
def test_weight_requiring_grad_is_refused_under_grad_mode(shape):
    # torch's nll_loss has no derivative for weight: refused while grad mode is on (before the
    # kernel's own checks: a wrong-sized weight too), computed under no_grad
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    for c in (3, 4):
        msgs = []
        for lib in (torch, ndgrad):
            x = lib.zeros(shape)
            t = lib.zeros(tshape, dtype=lib.long)
            w = lib.ones(c, requires_grad=True)
            with pytest.raises(RuntimeError) as e:
                lib.nn.functional.nll_loss(x, t, w)
            msgs.append(str(e.value))
            with pytest.raises(RuntimeError):
                lib.nn.functional.cross_entropy(x, t, w, label_smoothing=0.1)
            if c == 3:
                with lib.no_grad():
                    assert float(lib.nn.functional.nll_loss(x, t, w)) == 0.0
        assert msgs[1] == msgs[0]


@pytest.mark.parametrize("case", [
    lambda F, L, rg: F.binary_cross_entropy(L.full((3,), 0.3), L.full((3,), 0.6),
                                            weight=L.ones(3, requires_grad=rg)),
    lambda F, L, rg: F.binary_cross_entropy(L.full((2, 3), 0.3), L.full((2, 3), 0.6),
                                            weight=L.ones(3, requires_grad=rg)),
    lambda F, L, rg: F.binary_cross_entropy_with_logits(L.zeros(3), L.ones(3),
                                                        weight=L.ones(3, requires_grad=rg)),
    lambda F, L, rg: F.binary_cross_entropy_with_logits(L.zeros(3), L.ones(3),
                                                        pos_weight=L.ones(3, requires_grad=rg)),
])
def test_bce_weights_requiring_grad_are_refused(case):
    # (the other weighted losses torch has no weight derivative for, as nll_loss's)
    msgs, values = [], []
    for L in (torch, ndgrad):
        with pytest.raises(RuntimeError) as e:
            case(L.nn.functional, L, True)
        msgs.append(str(e.value))
        values.append(case(L.nn.functional, L, False).numpy())
    assert msgs[1] == msgs[0] and "is not differentiable with respect to" in msgs[0]
    np.testing.assert_allclose(values[1], values[0], rtol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3)])
def test_cross_entropy_label_smoothing_graph(reduction, shape):
    # torch scales the two terms by C++ numbers (MulBackward1); values and gradients equal
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape)
    t = rng.integers(0, 4, (shape[0],) + shape[2:])
    res = []
    for lib in (torch, ndgrad):
        xt = lib.tensor(x, requires_grad=True)
        w = lib.tensor([1.0, 2, 3, 4], dtype=lib.float64)
        out = lib.nn.functional.cross_entropy(xt, lib.tensor(t), w, reduction=reduction,
                                              label_smoothing=0.2)
        out.sum().backward()
        res.append((_structure(out.grad_fn, 3), out.detach().numpy(), xt.grad.numpy()))
    assert res[1][0] == res[0][0]
    for a, b in zip(res[1][1:], res[0][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
