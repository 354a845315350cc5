"""ndgrad.nn.functional against torch 2.13: values, gradients, grad_fn names and errors."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as tF
from _helpers import each_raises_alike

import ndgrad
import ndgrad.nn.functional as nF

RNG = np.random.default_rng(0)


def _arr(*shape, dtype=np.float64, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


class NoGrad:
    """Marks an input array that must not require grad (e.g. a class weight)."""

    def __init__(self, a):
        self.a = a


def _tensors(lib, arrays, grad):
    out = []
    for a in arrays:
        if isinstance(a, NoGrad):
            out.append(lib.tensor(a.a.copy()))
        elif isinstance(a, np.ndarray):
            t = lib.tensor(a.copy())
            if grad and a.dtype.kind == "f":
                t.requires_grad_(True)
            out.append(t)
        else:
            out.append(a)
    return out


def compare(fn, *arrays, grad=True, atol=1e-6, rtol=1e-5, names=True):
    """Run fn(lib, F, *tensors) in torch and ndgrad; compare outputs, grads, node names."""
    tt = _tensors(torch, arrays, grad)
    nt = _tensors(ndgrad, arrays, grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        to = fn(torch, tF, *tt)
        no = fn(ndgrad, nF, *nt)
    if isinstance(to, tuple):
        to, no = to[0], no[0]
    np.testing.assert_allclose(no.detach().numpy(), to.detach().numpy(), atol=atol, rtol=rtol)
    assert no.dtype.__repr__() == to.dtype.__repr__()
    if not grad or not to.requires_grad:
        return
    if names:
        assert no.grad_fn.name() == to.grad_fn.name()
    g = RNG.standard_normal(to.shape).astype(to.detach().numpy().dtype)
    to.backward(torch.tensor(g))
    no.backward(ndgrad.tensor(g))
    for a, b in zip(tt, nt):
        if isinstance(a, torch.Tensor) and a.requires_grad:
            assert (a.grad is None) == (b.grad is None)
            if a.grad is not None:
                np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), atol=atol * 10,
                                           rtol=rtol * 10)


X = _arr(3, 5)
ACTS = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {}),
    ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 1.5}), ("gelu", {}),
    ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}), ("softplus", {}),
    ("softplus", {"beta": 2.0, "threshold": 1.0}), ("softsign", {}), ("hardtanh", {}),
    ("hardsigmoid", {}), ("hardswish", {}), ("sigmoid", {}), ("tanh", {}), ("logsigmoid", {}),
    ("tanhshrink", {}),
]


@pytest.mark.parametrize("name,kw", ACTS, ids=[f"{a}-{i}" for i, (a, _) in enumerate(ACTS)])
def test_activations(name, kw):
    x = _arr(4, 6, lo=-5, hi=5)
    compare(lambda lib, F, t: getattr(F, name)(t, **kw), x,
            names=name not in ("tanhshrink", "softsign"))


@pytest.mark.parametrize("name", ["gelu", "elu", "silu", "softplus", "mish", "logsigmoid",
                                  "hardswish", "selu"])
def test_activation_double_backward(name):
    x = _arr(7, lo=-3, hi=3)
    res = []
    for lib, F in ((torch, tF), (ndgrad, nF)):
        t = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad(getattr(F, name)(t).sum(), t, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), t)
        res.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0], atol=1e-7)
    np.testing.assert_allclose(res[1][1], res[0][1], atol=1e-6)


def test_float32_gelu_and_softmax():
    x = _arr(4, 9, dtype=np.float32)
    compare(lambda lib, F, t: F.gelu(t), x, atol=1e-6)
    compare(lambda lib, F, t: F.softmax(t, 1), x, atol=1e-6)


def test_prelu_glu_threshold():
    compare(lambda lib, F, t, w: F.prelu(t, w), _arr(2, 3, 4), _arr(3), names=False)
    compare(lambda lib, F, t: F.glu(t, 1), _arr(2, 4), names=False)
    compare(lambda lib, F, t: F.threshold(t, 0.3, -1.0), _arr(2, 4), names=False)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_family(fn, dim):
    compare(lambda lib, F, t: getattr(F, fn)(t, dim=dim), _arr(3, 4, 5))


def test_softmax_stable_and_dtype():
    big = np.array([[1000.0, 0.0, -1000.0]])
    compare(lambda lib, F, t: F.log_softmax(t, 1), big)
    compare(lambda lib, F, t: F.softmax(t, 1, dtype=lib.float32), _arr(2, 3))


def test_linear_and_bilinear():
    compare(lambda lib, F, x, w, b: F.linear(x, w, b), _arr(4, 3), _arr(5, 3), _arr(5))
    compare(lambda lib, F, x, w: F.linear(x, w), _arr(4, 3), _arr(5, 3))
    compare(lambda lib, F, x, w, b: F.linear(x, w, b), _arr(2, 4, 3), _arr(5, 3), _arr(5))
    compare(lambda lib, F, a, b, w, c: F.bilinear(a, b, w, c), _arr(4, 3), _arr(4, 2),
            _arr(5, 3, 2), _arr(5), names=False)


def test_linear_double_backward():
    xa, wa, ba = _arr(4, 3), _arr(5, 3), _arr(5)
    res = []
    for lib, F in ((torch, tF), (ndgrad, nF)):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (xa, wa, ba))
        y = F.linear(x, w, b)
        gs = lib.autograd.grad((y ** 3).sum(), (x, w, b), create_graph=True)
        s = sum((g * g).sum() for g in gs)
        res.append([t.numpy() for t in lib.autograd.grad(s, (x, w, b))])
    for a, b in zip(res[0], res[1]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("bias_2d", [False, True])
def test_linear_complex_gradients_like_torch(bias_2d):
    """Complex F.linear (and an RNN step's 2-D-bias form): first and second derivatives and
    batched gradients use the conjugate operands, as torch's addmm."""
    rng = np.random.default_rng(31)

    def c(*shape):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    xa, wa, ba, ga, gba = c(4, 3), c(5, 3), c(4, 5) if bias_2d else c(5), c(4, 5), c(2, 4, 5)
    res = []
    for lib in (torch, ndgrad):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (xa, wa, ba))
        if lib is torch:
            y = torch.addmm(b, x, w.t()) if bias_2d else tF.linear(x, w, b)
        else:
            y = ndgrad._ops.linear.LINEAR.call(b, x, w.t(), params=bias_2d)
        assert type(y.grad_fn).__name__ == "AddmmBackward0"
        gs = lib.autograd.grad(y, (x, w, b), lib.tensor(ga), create_graph=True)
        second = lib.autograd.grad(sum((g.abs() ** 2).sum() for g in gs[:2]), (x, w))
        batched = lib.autograd.grad(y, (x, w, b), lib.tensor(gba), is_grads_batched=True)
        res.append([t.detach().resolve_conj().numpy() for t in gs + second + batched])
    for a, b in zip(res[0], res[1]):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_softmax_double_backward():
    xa = _arr(3, 5)
    res = []
    for lib, F in ((torch, tF), (ndgrad, nF)):
        x = lib.tensor(xa, requires_grad=True)
        y = F.softmax(x, 1)
        (g,) = lib.autograd.grad((y ** 3).sum(), x, create_graph=True)
        res.append(lib.autograd.grad((g * g).sum(), x)[0].numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-6, atol=1e-9)


def test_linear_graph_matches_torch():
    x = ndgrad.randn(4, 3)
    w = ndgrad.randn(5, 3, requires_grad=True)
    b = ndgrad.randn(5, requires_grad=True)
    y = nF.linear(x, w, b)
    assert y.grad_fn.name() == "AddmmBackward0"
    names = [None if f is None else f.name() for f, _ in y.grad_fn.next_functions]
    ty = tF.linear(torch.randn(4, 3), torch.randn(5, 3, requires_grad=True),
                   torch.randn(5, requires_grad=True))
    assert names == [None if f is None else f.name() for f, _ in ty.grad_fn.next_functions]


def test_dropout_matches_torch_stream():
    x = _arr(6, 7)
    for p in (0.0, 0.3, 1.0):
        torch.manual_seed(3)
        ndgrad.manual_seed(3)
        compare(lambda lib, F, t: F.dropout(t, p, True), x, names=p != 0.0)
    compare(lambda lib, F, t: F.dropout(t, 0.5, False) * 1, x)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nF.dropout(ndgrad.ones(2), 1.5)
    torch.manual_seed(5)
    ndgrad.manual_seed(5)
    compare(lambda lib, F, t: F.dropout2d(t, 0.5, True), _arr(2, 3, 4, 4))


CONV_CASES = [
    dict(), dict(stride=2), dict(padding=1), dict(dilation=2), dict(padding=(1, 2), stride=(2, 1)),
    dict(padding="same"), dict(padding="valid"), dict(groups=2),
]


@pytest.mark.parametrize("kw", CONV_CASES, ids=[str(c) for c in CONV_CASES])
def test_conv2d(kw):
    g = kw.get("groups", 1)
    compare(lambda lib, F, x, w, b: F.conv2d(x, w, b, **kw), _arr(2, 4, 7, 6),
            _arr(6, 4 // g, 3, 2), _arr(6), atol=1e-5)


def test_conv2d_same_even_kernel_and_no_bias():
    compare(lambda lib, F, x, w: F.conv2d(x, w, padding="same"), _arr(1, 2, 5, 5),
            _arr(3, 2, 2, 4), atol=1e-5, names=False)
    compare(lambda lib, F, x, w: F.conv2d(x, w), _arr(3, 6, 6), _arr(2, 3, 3, 3), atol=1e-5)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2), dict(padding=2, dilation=2),
                                dict(groups=3, padding="same")])
def test_conv1d(kw):
    g = kw.get("groups", 1)
    compare(lambda lib, F, x, w, b: F.conv1d(x, w, b, **kw), _arr(2, 3, 9),
            _arr(6, 3 // g, 3), _arr(6), atol=1e-5)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2), dict(stride=2, padding=1,
                                                             output_padding=1),
                                dict(dilation=2, groups=2), dict(stride=(2, 3), padding=(0, 1))])
def test_conv_transpose2d(kw):
    g = kw.get("groups", 1)
    compare(lambda lib, F, x, w, b: F.conv_transpose2d(x, w, b, **kw), _arr(2, 4, 5, 4),
            _arr(4, 6 // g, 3, 3), _arr(6), atol=1e-5)


def test_conv_transpose1d():
    compare(lambda lib, F, x, w: F.conv_transpose1d(x, w, stride=2), _arr(2, 3, 5),
            _arr(3, 2, 3), atol=1e-5)


def test_conv_double_backward():
    xa, wa = _arr(2, 2, 5, 5), _arr(3, 2, 3, 3)
    res = []
    for lib, F in ((torch, tF), (ndgrad, nF)):
        x = lib.tensor(xa, requires_grad=True)
        w = lib.tensor(wa, requires_grad=True)
        y = F.conv2d(x, w, stride=2, padding=1)
        gx, gw = lib.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        s = (gx * gx).sum() + (gw ** 3).sum()
        res.append([t.numpy() for t in lib.autograd.grad(s, (x, w))])
    for a, b in zip(res[0], res[1]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


def test_conv_errors():
    with pytest.raises(RuntimeError, match="expected input\\[3, 6, 6\\] to have 3 channels, "
                                           "but got 6 channels instead"):
        nF.conv1d(ndgrad.randn(3, 6, 6), ndgrad.randn(4, 3, 3))
    # torch's functional raises RuntimeError here (its Conv2d constructor a ValueError)
    for F, lib in ((tF, torch), (nF, ndgrad)):
        with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
            F.conv2d(lib.randn(1, 1, 4, 4), lib.randn(1, 1, 3, 3), stride=2, padding="same")
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        ndgrad.nn.Conv2d(1, 1, 3, stride=2, padding="same")


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=2, dilation=2), dict(kernel_size=3, stride=2,
                                                                      ceil_mode=True),
                                dict(kernel_size=(2, 3), stride=(1, 2))])
def test_max_pool2d(kw):
    x = _arr(2, 3, 7, 8)
    compare(lambda lib, F, t: F.max_pool2d(t, **kw), x)
    idx_t = tF.max_pool2d(torch.tensor(x), return_indices=True, **kw)[1]
    idx_n = nF.max_pool2d(ndgrad.tensor(x), return_indices=True, **kw)[1]
    np.testing.assert_array_equal(idx_n.numpy(), idx_t.numpy())


def test_max_pool1d_and_avg_pool1d():
    compare(lambda lib, F, t: F.max_pool1d(t, 3, 2, 1), _arr(2, 3, 9))
    compare(lambda lib, F, t: F.avg_pool1d(t, 3, 2, 1), _arr(2, 3, 9))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1,
                                     count_include_pad=False),
                                dict(kernel_size=3, stride=2, ceil_mode=True),
                                dict(kernel_size=2, divisor_override=3)])
def test_avg_pool2d(kw):
    compare(lambda lib, F, t: F.avg_pool2d(t, **kw), _arr(2, 3, 7, 8))


@pytest.mark.parametrize("size", [3, (2, 4), (7, 8), (5, 3)])
def test_adaptive_pools(size):
    compare(lambda lib, F, t: F.adaptive_avg_pool2d(t, size), _arr(2, 3, 7, 8))
    compare(lambda lib, F, t: F.adaptive_max_pool2d(t, size), _arr(2, 3, 7, 8))


def test_batch_norm_training_and_eval():
    x = _arr(4, 3, 5)
    for training in (True, False):
        rm_t, rv_t = torch.tensor(_arr(3)), torch.tensor(_arr(3, lo=0.5, hi=2))
        rm_n, rv_n = ndgrad.tensor(rm_t.numpy().copy()), ndgrad.tensor(rv_t.numpy().copy())
        stats = {torch: (rm_t, rv_t), ndgrad: (rm_n, rv_n)}
        compare(lambda lib, F, t, w, b: F.batch_norm(t, *stats[lib], w, b, training, 0.2),
                x, _arr(3), _arr(3))
        np.testing.assert_allclose(rm_n.numpy(), rm_t.numpy(), atol=1e-12)
        np.testing.assert_allclose(rv_n.numpy(), rv_t.numpy(), atol=1e-12)


def test_batch_norm_double_backward():
    xa = _arr(4, 3)
    res = []
    for lib, F in ((torch, tF), (ndgrad, nF)):
        x = lib.tensor(xa, requires_grad=True)
        y = F.batch_norm(x, None, None, training=True)
        (g,) = lib.autograd.grad((y ** 3).sum(), x, create_graph=True)
        res.append(lib.autograd.grad((g * g).sum(), x)[0].numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-6, atol=1e-8)


def test_norms():
    compare(lambda lib, F, t, w, b: F.layer_norm(t, (4,), w, b), _arr(3, 2, 4), _arr(4), _arr(4))
    compare(lambda lib, F, t, w, b: F.layer_norm(t, (2, 4), w, b), _arr(3, 2, 4), _arr(2, 4),
            _arr(2, 4))
    compare(lambda lib, F, t: F.layer_norm(t, (4,)), _arr(3, 4))
    compare(lambda lib, F, t, w, b: F.group_norm(t, 2, w, b), _arr(3, 4, 5), _arr(4), _arr(4),
            names=False)
    compare(lambda lib, F, t: F.instance_norm(t), _arr(3, 4, 5))
    compare(lambda lib, F, t: F.normalize(t, dim=1), _arr(3, 4))
    compare(lambda lib, F, t: F.normalize(t, p=1, dim=0), _arr(3, 4), names=False)


def test_embedding_and_one_hot():
    idx = np.array([[0, 2, 1], [2, 2, 3]])
    compare(lambda lib, F, w: F.embedding(lib.tensor(idx), w), _arr(4, 3))
    compare(lambda lib, F, w: F.embedding(lib.tensor(idx), w, padding_idx=2), _arr(4, 3))
    compare(lambda lib, F, w: F.embedding(lib.tensor(idx), w, scale_grad_by_freq=True),
            _arr(4, 3))
    np.testing.assert_array_equal(nF.one_hot(ndgrad.tensor([0, 2, 1])).numpy(),
                                  tF.one_hot(torch.tensor([0, 2, 1])).numpy())
    assert nF.one_hot(ndgrad.tensor([1]), 4).shape == (1, 4)
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        nF.one_hot(ndgrad.tensor([1.0]))


@pytest.mark.parametrize("mode,pads", [("constant", (1, 2)), ("constant", (1, 0, 2, 1)),
                                       ("constant", (-1, 1)), ("reflect", (2, 1)),
                                       ("reflect", (1, 2, 2, 1)), ("replicate", (2, 3)),
                                       ("replicate", (1, 2, 0, 3)), ("circular", (1, 2))])
def test_pad(mode, pads):
    x = _arr(2, 3, 4, 5) if len(pads) == 4 else _arr(2, 3, 5)
    compare(lambda lib, F, t: F.pad(t, pads, mode=mode), x, names=mode != "circular")
    compare(lambda lib, F, t: F.pad(t, (1, 1), value=2.5), x)


def test_pad_errors():
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 4D"):
        nF.pad(ndgrad.zeros(1, 1, 3, 3), (1, 1), mode="reflect")


@pytest.mark.parametrize("kw", [dict(scale_factor=2), dict(size=(5, 7)),
                                dict(scale_factor=2, mode="bilinear"),
                                dict(size=(5, 3), mode="bilinear"),
                                dict(size=(6, 9), mode="bilinear", align_corners=True),
                                dict(scale_factor=0.5, mode="bilinear")])
def test_interpolate(kw):
    compare(lambda lib, F, t: F.interpolate(t, **kw), _arr(2, 3, 4, 6))


def test_unfold_fold():
    compare(lambda lib, F, t: F.unfold(t, 2, padding=1, stride=2), _arr(2, 3, 5, 4))
    compare(lambda lib, F, t: F.fold(t, (4, 5), 2, dilation=1, padding=0, stride=1),
            _arr(2, 12, 12))


def test_distances_and_attention():
    compare(lambda lib, F, a, b: F.cosine_similarity(a, b), _arr(3, 4), _arr(3, 4), names=False)
    compare(lambda lib, F, a, b: F.pairwise_distance(a, b), _arr(3, 4), _arr(3, 4), names=False)
    q, k, v = _arr(2, 3, 4), _arr(2, 5, 4), _arr(2, 5, 6)
    compare(lambda lib, F, a, b, c: F.scaled_dot_product_attention(a, b, c), q, k, v,
            names=False)
    mask = RNG.uniform(size=(3, 5)) > 0.3
    mask[:, 0] = True
    compare(lambda lib, F, a, b, c: F.scaled_dot_product_attention(
        a, b, c, attn_mask=lib.tensor(mask)), q, k, v, names=False)
    compare(lambda lib, F, a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True),
            q, k, v, names=False)
    compare(lambda lib, F, a, b, c, m: F.scaled_dot_product_attention(a, b, c, attn_mask=m),
            q, k, v, _arr(3, 5), names=False)
    compare(lambda lib, F, a, b, c: F.scaled_dot_product_attention(a, b, c, enable_gqa=True,
                                                                   scale=0.3),
            _arr(1, 4, 3, 2), _arr(1, 2, 5, 2), _arr(1, 2, 5, 3), names=False)


REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_indices(reduction):
    x, t = _arr(5, 4), np.array([0, 3, 1, 1, 2])
    w = NoGrad(_arr(4, lo=0.2, hi=2))
    compare(lambda lib, F, a: F.cross_entropy(a, lib.tensor(t), reduction=reduction), x)
    compare(lambda lib, F, a, ww: F.cross_entropy(a, lib.tensor(t), weight=ww,
                                                  reduction=reduction), x, w)
    t2 = np.array([0, -100, 1, 1, -100])
    compare(lambda lib, F, a: F.cross_entropy(a, lib.tensor(t2), reduction=reduction), x)
    compare(lambda lib, F, a, ww: F.cross_entropy(a, lib.tensor(t2), weight=ww,
                                                  label_smoothing=0.2, reduction=reduction),
            x, w, names=False)
    compare(lambda lib, F, a: F.cross_entropy(a, lib.tensor(t), label_smoothing=0.1,
                                              reduction=reduction), x, names=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probabilities_and_nd(reduction):
    x = _arr(3, 4)
    p = RNG.dirichlet(np.ones(4), size=3)
    compare(lambda lib, F, a, b: F.cross_entropy(a, b, reduction=reduction), x, p, names=False)
    compare(lambda lib, F, a, b, w: F.cross_entropy(a, b, weight=w, label_smoothing=0.3,
                                                    reduction=reduction),
            x, p, _arr(4, lo=0.1, hi=1), names=False)
    t = RNG.integers(0, 4, size=(2, 3, 5))
    compare(lambda lib, F, a: F.cross_entropy(a, lib.tensor(t), reduction=reduction),
            _arr(2, 4, 3, 5), names=False)
    compare(lambda lib, F, a: F.cross_entropy(a, lib.tensor(2)), _arr(4))


def test_nll_loss_and_errors():
    x, t = _arr(4, 3), np.array([2, 0, 1, 1])
    compare(lambda lib, F, a: F.nll_loss(a, lib.tensor(t)), x)
    compare(lambda lib, F, a: F.nll_loss(a, lib.tensor(t), ignore_index=1, reduction="sum"), x)
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        nF.nll_loss(ndgrad.tensor(x), ndgrad.tensor([3, 0, 1, 1]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(4\) to match target "
                                         r"batch_size \(2\)\."):
        nF.nll_loss(ndgrad.tensor(x), ndgrad.tensor([1, 0]))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        nF.mse_loss(ndgrad.tensor(x), ndgrad.tensor(x), reduction="foo")


def test_cross_entropy_double_backward():
    xa, t = _arr(3, 4), np.array([1, 0, 3])
    res = []
    for lib, F in ((torch, tF), (ndgrad, nF)):
        x = lib.tensor(xa, requires_grad=True)
        (g,) = lib.autograd.grad(F.cross_entropy(x, lib.tensor(t)), x, create_graph=True)
        res.append(lib.autograd.grad((g ** 2).sum(), x)[0].numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses(reduction):
    a, b = _arr(3, 4), _arr(3, 4)
    for name, kw in (("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}),
                     ("smooth_l1_loss", {"beta": 0.5}), ("huber_loss", {}),
                     ("huber_loss", {"delta": 0.4})):
        compare(lambda lib, F, x, y: getattr(F, name)(x, y, reduction=reduction, **kw), a, b,
                names=name != "l1_loss")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_losses(reduction):
    p, t = _arr(3, 4, lo=0.05, hi=0.95), _arr(3, 4, lo=0, hi=1)
    w = NoGrad(_arr(3, 4, lo=0.1, hi=2))
    compare(lambda lib, F, x, y: F.binary_cross_entropy(x, y, reduction=reduction), p, t)
    compare(lambda lib, F, x, y, ww: F.binary_cross_entropy(x, y, ww, reduction=reduction),
            p, t, w)
    z = _arr(3, 4, lo=-4, hi=4)
    compare(lambda lib, F, x, y: F.binary_cross_entropy_with_logits(x, y, reduction=reduction),
            z, t)
    compare(lambda lib, F, x, y, pw: F.binary_cross_entropy_with_logits(
        x, y, pos_weight=pw, reduction=reduction), z, t, NoGrad(_arr(4, lo=0.5, hi=3)))
    compare(lambda lib, F, x, y, ww: F.binary_cross_entropy_with_logits(
        x, y, weight=ww, reduction=reduction), z, t, w)


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
def test_kl_div(reduction):
    x = np.log(RNG.dirichlet(np.ones(4), size=3))
    t = RNG.dirichlet(np.ones(4), size=3)
    compare(lambda lib, F, a, b: F.kl_div(a, b, reduction=reduction), x, t, names=False)
    t[0, 1] = 0.0
    compare(lambda lib, F, a, b: F.kl_div(a, b, reduction=reduction), x, NoGrad(t),
            names=False)
    compare(lambda lib, F, a, b: F.kl_div(a, b, reduction=reduction, log_target=True), x,
            np.log(t + 0.1), names=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_losses(reduction):
    y = np.array([1.0, -1.0, 1.0, -1.0])
    compare(lambda lib, F, a, b: F.margin_ranking_loss(a, b, lib.tensor(y), margin=0.3,
                                                       reduction=reduction),
            _arr(4), _arr(4), names=False)
    compare(lambda lib, F, a: F.hinge_embedding_loss(a, lib.tensor(y), margin=0.5,
                                                     reduction=reduction),
            _arr(4), names=False)
    compare(lambda lib, F, a, b: F.cosine_embedding_loss(a, b, lib.tensor(y), margin=0.1,
                                                         reduction=reduction),
            _arr(4, 3), _arr(4, 3), names=False)
    compare(lambda lib, F, a, b, c: F.triplet_margin_loss(a, b, c, reduction=reduction),
            _arr(4, 3), _arr(4, 3), _arr(4, 3), names=False)
    compare(lambda lib, F, a, b, c: F.triplet_margin_loss(a, b, c, swap=True, p=1,
                                                          reduction=reduction),
            _arr(4, 3), _arr(4, 3), _arr(4, 3), names=False)


def test_loss_double_backward_mse_bce():
    xa, ya = _arr(5, lo=0.1, hi=0.9), _arr(5, lo=0, hi=1)
    for name in ("mse_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
                 "smooth_l1_loss"):
        res = []
        for lib, F in ((torch, tF), (ndgrad, nF)):
            x = lib.tensor(xa, requires_grad=True)
            (g,) = lib.autograd.grad(getattr(F, name)(x, lib.tensor(ya)), x, create_graph=True)
            res.append(lib.autograd.grad((g ** 2).sum(), x)[0].numpy())
        np.testing.assert_allclose(res[1], res[0], rtol=1e-6, atol=1e-9)


def test_torch_namespace_aliases():
    x = _arr(3, 4)
    compare(lambda lib, F, t: lib.softmax(t, 1), x)
    compare(lambda lib, F, t: t.log_softmax(-1), x)
    compare(lambda lib, F, t, w, b: lib.layer_norm(t, (4,), w, b), x, _arr(4), _arr(4))
    compare(lambda lib, F, t, w, b: lib.batch_norm(t, w, b, None, None, True, 0.1, 1e-5, False),
            x, _arr(4), _arr(4))
    compare(lambda lib, F, w: lib.embedding(w, lib.tensor([[0, 2], [1, 1]])), _arr(3, 2))
    compare(lambda lib, F, t, w: lib.conv2d(t, w, padding=1), _arr(1, 2, 4, 4),
            _arr(3, 2, 3, 3), atol=1e-5)


def test_error_messages_match_torch():
    def cases(lib):
        F = lib.nn.functional
        return [
            lambda: F.linear(lib.ones(4, 3), lib.ones(5, 2)),
            lambda: F.cross_entropy(lib.ones(4, 3), lib.ones(4, 2)),
            lambda: F.cross_entropy(lib.ones(4, 3), lib.tensor([0, 1, 2, 3])),
            lambda: F.embedding(lib.tensor([5]), lib.ones(3, 2)),
            lambda: F.max_pool2d(lib.ones(1, 1, 4, 4), 2, padding=2),
            lambda: F.softmax(lib.tensor([1, 2]), 0),
            lambda: F.batch_norm(lib.ones(1, 3), None, None, training=True),
            lambda: F.layer_norm(lib.ones(2, 3), (4,)),
            lambda: F.mse_loss(lib.ones(2, 3), lib.ones(3, 3)),
            lambda: F.binary_cross_entropy(lib.ones(2) * 2, lib.ones(2)),
            lambda: F.group_norm(lib.ones(2, 3, 4), 2),
            lambda: F.glu(lib.ones(3)),
            lambda: F.pad(lib.ones(2, 2), (1,)),
            lambda: lib.nn.LSTM(3, 4)(lib.ones(5, 2, 2)),
            lambda: lib.nn.Dropout(2),
            lambda: lib.nn.Conv2d(3, 4, 3, groups=2),
            lambda: F.batch_norm(lib.ones(2, 3), None, None, training=False),
            lambda: F.batch_norm(lib.ones(2, 3), lib.zeros(4), lib.ones(4), training=False),
            lambda: F.layer_norm(lib.ones(2, 3), (3,), lib.ones(4)),
            lambda: lib.nn.Embedding(3, 2)(lib.ones(2)),
            lambda: lib.nn.MaxPool2d(5)(lib.ones(1, 1, 3, 3)),
            lambda: lib.nn.AvgPool2d(5)(lib.ones(1, 1, 3, 3)),
            lambda: F.cross_entropy(lib.ones(2, 3, 4), lib.zeros(2, 3, dtype=lib.long)),
            lambda: lib.nn.GroupNorm(3, 4),
        ]
    each_raises_alike(cases(torch), cases(ndgrad), quiet=True)


DOUBLE_BACKWARD = [
    ("conv_transpose2d", lambda lib, F, x, w: F.conv_transpose2d(x, w, stride=2, padding=1,
                                                                 output_padding=1, groups=2),
     [(1, 4, 3, 3), (4, 1, 3, 3)]),
    ("conv1d_groups", lambda lib, F, x, w: F.conv1d(x, w, padding=1, groups=2),
     [(2, 4, 6), (4, 2, 3)]),
    ("max_pool2d", lambda lib, F, x: F.max_pool2d(x, 3, 2, 1), [(1, 2, 5, 5)]),
    ("avg_pool2d", lambda lib, F, x: F.avg_pool2d(x, 2, 1, 1), [(1, 2, 4, 4)]),
    ("adaptive_avg", lambda lib, F, x: F.adaptive_avg_pool2d(x, (2, 3)), [(1, 2, 5, 5)]),
    ("bilinear_up", lambda lib, F, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
     [(1, 1, 3, 3)]),
    ("reflect_pad", lambda lib, F, x: F.pad(x, (1, 2), mode="reflect"), [(2, 5)]),
    ("constant_pad", lambda lib, F, x: F.pad(x, (1, -1, 2, 0)), [(3, 4)]),
    ("unfold", lambda lib, F, x: F.unfold(x, 2, stride=1), [(1, 2, 3, 3)]),
    ("layer_norm", lambda lib, F, x, w: F.layer_norm(x, (4,), w), [(3, 4), (4,)]),
    ("embedding", lambda lib, F, w: F.embedding(lib.tensor([0, 2, 0]), w, padding_idx=2),
     [(3, 2)]),
    ("nll", lambda lib, F, x: F.nll_loss(x, lib.tensor([1, 0, 2]), reduction="sum"), [(3, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", DOUBLE_BACKWARD, ids=[d[0] for d in DOUBLE_BACKWARD])
def test_double_backward_vs_torch(name, fn, shapes):
    arrays = [_arr(*s) for s in shapes]
    res = []
    for lib, F in ((torch, tF), (ndgrad, nF)):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = fn(lib, F, *ts)
        gs = lib.autograd.grad((y ** 3).sum(), ts, create_graph=True)
        s = sum((g * g).sum() for g in gs)
        res.append([None if t is None else t.numpy()
                    for t in lib.autograd.grad(s, ts, allow_unused=True)])
    for a, b in zip(res[0], res[1]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-8)


FORWARD_AD = [
    ("linear", lambda lib, F, x: F.linear(x, lib.tensor(np.ones((3, 4))),
                                         lib.tensor(np.arange(3.0))), (2, 4)),
    ("log_softmax", lambda lib, F, x: F.log_softmax(x, 1), (2, 4)),
    ("gelu", lambda lib, F, x: F.gelu(x), (2, 4)),
    ("cross_entropy", lambda lib, F, x: F.cross_entropy(x, lib.tensor([1, 3])), (2, 4)),
    ("conv2d", lambda lib, F, x: F.conv2d(x, lib.tensor(np.ones((2, 1, 2, 2)))), (1, 1, 4, 4)),
    ("max_pool2d", lambda lib, F, x: F.max_pool2d(x, 2), (1, 1, 4, 4)),
    ("batch_norm", lambda lib, F, x: F.batch_norm(x, None, None, training=True), (3, 4)),
    ("mse_loss", lambda lib, F, x: F.mse_loss(x, lib.zeros(3, 4)), (3, 4)),
    ("reflect_pad", lambda lib, F, x: F.pad(x, (1, 1), mode="reflect"), (3, 4)),
]


@pytest.mark.parametrize("name,fn,shape", FORWARD_AD, ids=[c[0] for c in FORWARD_AD])
def test_forward_ad_vs_torch(name, fn, shape):
    x, v = _arr(*shape), _arr(*shape)
    outs = []
    for lib in (torch, ndgrad):
        fwd = lib.autograd.forward_ad
        with fwd.dual_level():
            d = fwd.make_dual(lib.tensor(x), lib.tensor(v))
            out = fn(lib, lib.nn.functional, d)
            outs.append(fwd.unpack_dual(out).tangent.numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6, atol=1e-9)


def test_nearest_indices_exact_for_many_sizes():
    for n_in in range(1, 10):
        x = np.arange(n_in, dtype=np.float32).reshape(1, 1, 1, n_in)
        for kw in [dict(size=(1, n)) for n in range(1, 22)] + \
                [dict(scale_factor=(1, f)) for f in (0.3, 0.7, 1.3, 2.0, 2.5, 3.3)]:
            try:
                a = tF.interpolate(torch.tensor(x), **kw).numpy()
            except RuntimeError:
                continue
            b = nF.interpolate(ndgrad.tensor(x), **kw).numpy()
            np.testing.assert_array_equal(b, a, err_msg=str((n_in, kw)))


def test_max_pool_nan_and_ties_like_torch():
    x = np.array([[[[1.0, 1.0, 0.0, np.nan], [1.0, 0.5, np.nan, 2.0], [3.0, 3.0, 0.0, 0.0],
                    [3.0, 3.0, 0.0, 0.0]]]])
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1)):
        to, ti = tF.max_pool2d(torch.tensor(x), return_indices=True, **kw)
        no, ni = nF.max_pool2d(ndgrad.tensor(x), return_indices=True, **kw)
        np.testing.assert_array_equal(no.numpy(), to.numpy())
        np.testing.assert_array_equal(ni.numpy(), ti.numpy())
