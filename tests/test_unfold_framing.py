"""One ``unfold``: Tensor.unfold (a view, ``UnfoldBackward0``) and its adjoint
``unfold_backward`` (``UnfoldBackwardBackward0``) in ``_ops/reshaping.py``; stft frames with
the view, istft overlap-adds with ``unfold_backward`` (as torch's). Every check is against
torch 2.13; stft's graph differs from torch's only in the nodes docs/decisions.md lists."""

import itertools
import warnings

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad._ops import registry


def _chain(y, n=9):
    """grad_fn names along the first input of each node, from the output."""
    f, out = y.grad_fn, []
    while f is not None and len(out) < n:
        out.append(type(f).__name__)
        f = f.next_functions[0][0] if f.next_functions else None
    return out


# stft's node named differently from torch's (docs/decisions.md): torch frames with as_strided
_STFT_NAMES = {"AsStridedBackward0": "UnfoldBackward0"}


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize("dim,size,step", [(1, 4, 3), (0, 2, 1), (1, 3, 5), (-1, 10, 1),
                                           (1, 0, 2)])
def test_tensor_unfold_view_grad_and_double_backward(dim, size, step):
    rng = np.random.default_rng(0)
    xn = rng.standard_normal((3, 10))
    res = []
    for m in (torch, ndgrad):
        x = m.tensor(xn, requires_grad=True)
        u = x.unfold(dim, size, step)
        assert u._base is x and type(u.grad_fn).__name__ == "UnfoldBackward0"
        (g,) = m.autograd.grad((u * u * u).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        res.append((_np(u).copy(), type(g.grad_fn).__name__, _np(g), _np(gg)))
    (u1, n1, g1, gg1), (u2, n2, g2, gg2) = res
    assert n1 == n2 == "UnfoldBackwardBackward0"
    np.testing.assert_allclose(u2, u1)
    np.testing.assert_allclose(g2, g1, rtol=1e-12)
    np.testing.assert_allclose(gg2, gg1, rtol=1e-12)


def test_unfold_of_a_0d_tensor():
    for m in (torch, ndgrad):
        s = m.tensor(3.0, requires_grad=True)
        v = s.unfold(0, 1, 1)
        assert tuple(v.shape) == (1,)
        assert m.autograd.grad((v * v).sum(), s)[0].item() == 6.0


def test_overlap_add_is_torch_unfold_backward():
    from ndgrad._ops.reshaping import overlap_add
    rng = np.random.default_rng(1)
    gn = rng.standard_normal((2, 3, 4))
    want = torch.ops.aten.unfold_backward(torch.tensor(gn), [2, 10], 1, 4, 3)
    got = overlap_add(ndgrad.tensor(gn), (2, 10), 1, 4, 3)
    np.testing.assert_allclose(_np(got), want.numpy())


def test_unfold_is_declared_once():
    names = [op.name for op in registry.declared_ops()]
    assert names.count("unfold") == 1 and names.count("unfold_backward") == 1
    assert registry.all_ops()["unfold"].view


# (torch refuses return_complex=False for a complex signal; test_fft checks that error)
_CONFIGS = [c for c in itertools.product([(64,), (2, 64)], [False, True], [True, False],
                                         [True, False], [None, 12], [False, True])
            if c[3] or not c[1]]


@pytest.mark.parametrize("shape,complex_,center,return_complex,win,transposed", _CONFIGS)
def test_stft_graph_values_and_grads_match_torch(shape, complex_, center, return_complex, win,
                                                 transposed):
    rng = np.random.default_rng(2)
    xshape = shape[::-1] if transposed else shape
    xn = rng.standard_normal(xshape) + (1j * rng.standard_normal(xshape) if complex_ else 0)
    res = []
    for m in (torch, ndgrad):
        x = m.tensor(xn, requires_grad=True)
        xx = x.t() if transposed and len(shape) == 2 else x  # a non-contiguous signal
        w = None if win is None else m.hann_window(win, dtype=m.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = m.stft(xx, 16, 4, win_length=win, window=w, center=center,
                       return_complex=return_complex)
        (g,) = m.autograd.grad((y.abs() if y.is_complex() else y).pow(2).sum(), x)
        res.append((_chain(y), _np(y), _np(g)))
    (n1, y1, g1), (n2, y2, g2) = res
    assert n2 == [_STFT_NAMES.get(n, n) for n in n1]
    assert "UnfoldBackward0" in n2
    np.testing.assert_allclose(y2, y1, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g2, g1, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("batched", [False, True])
def test_istft_graph_values_and_grads_match_torch(batched):
    rng = np.random.default_rng(3)
    shape = (2, 9, 13) if batched else (9, 13)
    sn = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    res = []
    for m in (torch, ndgrad):
        s = m.tensor(sn, requires_grad=True)
        y = m.istft(s, 16, 4, window=m.hann_window(16, dtype=m.float64))
        (g,) = m.autograd.grad((y * y).sum(), s)
        res.append((_chain(y), _np(y), _np(g)))
    (n1, y1, g1), (n2, y2, g2) = res
    k = n1.index("UnfoldBackwardBackward0")  # the overlap-add, after slicing and dividing
    assert n2[:k + 3] == n1[:k + 3]
    np.testing.assert_allclose(y2, y1, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g2, g1, rtol=1e-10, atol=1e-12)


def test_matmul_squeeze_is_its_own_op_and_not_a_view():
    # torch squeezes matmul's (1, n) product in place: SqueezeBackward4, no view; shape.py's
    # squeeze_ (squeeze_dim_) is the in-place view op of the same node name
    rng = np.random.default_rng(4)
    an, bn = rng.standard_normal(3), rng.standard_normal((3, 4))
    res = []
    for m in (torch, ndgrad):
        a, b = m.tensor(an, requires_grad=True), m.tensor(bn, requires_grad=True)
        y = m.matmul(a, b)
        ga, gb = m.autograd.grad((y * y).sum(), (a, b))
        z = m.tensor(np.ones((1, 4)), requires_grad=True) * 1
        z.squeeze_(0)
        res.append((type(y.grad_fn).__name__, y._base is None, y._is_view(),
                    type(z.grad_fn).__name__, _np(y), _np(ga), _np(gb)))
    for a, b in zip(*res):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(b, a)
        else:
            assert a == b
    names = [op.name for op in registry.declared_ops()]
    assert names.count("squeeze_dim_") == 1 and names.count("matmul_squeeze") == 1
    assert registry.all_ops()["squeeze_dim_"].view and not registry.all_ops()["matmul_squeeze"].view
