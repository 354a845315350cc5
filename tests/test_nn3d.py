"""3-d convolution, pooling, unpooling, padding and dropout, the *_with_indices forms,
conv_tbc / torch.convolution and the small legacy layers (Softmax2d, NLLLoss2d, Container,
CrossMapLRN2d) against torch 2.13: values, indices, grad_fn names, gradients, double backward,
forward-mode tangents, module initialisation under a seed and argument errors."""

import warnings

import numpy as np
import pytest
import torch
from _helpers import check, check_error, check_gradgrad

import ndgrad


def _rng(seed):
    return np.random.default_rng(seed)


def check_gradgrad_go(fn, x, seed=2):
    """Double backward through the cotangent: d/d(go) <d fn(x)/dx (go), v> against torch
    (for piecewise-linear ops, whose second derivative in x is zero)."""
    res = []
    for L in (torch, ndgrad):
        r = np.random.default_rng(seed)
        xt = L.tensor(x, requires_grad=True)
        out = fn(L, xt)
        out = out[0] if isinstance(out, tuple) else out
        go = L.tensor(r.standard_normal(tuple(out.shape)), requires_grad=True)
        (g,) = L.autograd.grad(out, xt, go, create_graph=True)
        v = L.tensor(r.standard_normal(x.shape))
        (gg,) = L.autograd.grad((g * v).sum(), go)
        res.append(gg.detach().numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-10, atol=1e-12)


def _distinct(shape, seed=0):
    """Distinct values (no ties in any pooling window), shuffled."""
    n = int(np.prod(shape))
    return _rng(seed).permutation(np.linspace(-3, 3, n)).reshape(shape)


# ============================================================================ convolution
CONV3D_CASES = [
    ((2, 4, 5, 6, 5), (6, 2, 2, 3, 2), dict(stride=(1, 2, 1), padding=(1, 0, 2),
                                             dilation=(2, 1, 1), groups=2)),
    ((1, 3, 4, 4, 4), (2, 3, 3, 3, 3), dict(padding="same")),
    ((1, 3, 4, 5, 4), (2, 3, 2, 2, 3), dict(padding="same", dilation=(1, 2, 1))),
    ((2, 3, 4, 4, 4), (2, 3, 2, 2, 2), dict(padding="valid", stride=2)),
    ((3, 4, 4, 5), (2, 3, 2, 2, 2), dict()),                      # unbatched
]


@pytest.mark.parametrize("xs,ws,kw", CONV3D_CASES)
def test_conv3d(xs, ws, kw):
    r = _rng(1)
    x, w, b = r.standard_normal(xs), r.standard_normal(ws), r.standard_normal(ws[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # torch's 'same' with an even kernel warns
        check(lambda L, x, w, b: L.nn.functional.conv3d(x, w, b, **kw), x, w, b, rtol=1e-10,
              atol=1e-12)
        check_gradgrad(lambda L, x, w, b: L.nn.functional.conv3d(x, w, b, **kw), x, w, b)


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1, output_padding=(1, 0, 1), groups=2),
                                dict(dilation=(2, 1, 1), padding=(1, 0, 0)),
                                dict(stride=(1, 3, 2), output_padding=(0, 2, 1))])
def test_conv_transpose3d(kw):
    r = _rng(2)
    x, w, b = r.standard_normal((2, 4, 3, 2, 3)), r.standard_normal((4, 3, 2, 3, 2)), \
        r.standard_normal(3 * kw.get("groups", 1))
    if kw.get("groups", 1) == 1:
        w = r.standard_normal((4, 3, 2, 3, 2))
    f = (lambda L, x, w, b: L.nn.functional.conv_transpose3d(x, w, b, **kw))
    check(f, x, w, b, rtol=1e-10, atol=1e-12)
    check_gradgrad(f, x, w, b)
    check(lambda L, x, w, b: L.conv_transpose3d(x, w, b, **kw), x, w, b, rtol=1e-10,
          atol=1e-12)


def test_conv3d_float32_and_top_level():
    r = _rng(3)
    x = r.standard_normal((2, 3, 5, 4, 6)).astype(np.float32)
    w = r.standard_normal((4, 3, 3, 2, 3)).astype(np.float32)
    check(lambda L, x, w: L.conv3d(x, w, None, 1, 1), x, w, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("args", [
    ((1, 1, 1), (0, 1, 0), (1, 1, 1), False, (0, 0, 0), 2),
    ((2, 1, 1), (1, 0, 1), (1, 2, 1), True, (1, 0, 0), 1),
])
def test_torch_convolution_3d(args):
    r = _rng(4)
    x = r.standard_normal((1, 4, 4, 5, 4))
    w = r.standard_normal((4, 2, 2, 2, 2)) if args[3] else r.standard_normal((4, 2, 2, 2, 2))
    b = r.standard_normal(4 if not args[3] else 2)
    f = (lambda L, x, w, b: L.convolution(x, w, b, *args))
    check(f, x, w, b, rtol=1e-10, atol=1e-12)
    check_gradgrad(f, x, w, b)


def test_torch_convolution_1d_2d():
    r = _rng(5)
    x1, w1 = r.standard_normal((2, 3, 7)), r.standard_normal((4, 3, 3))
    check(lambda L, x, w: L.convolution(x, w, None, [2], [1], [1], False, [0], 1), x1, w1)
    x2, w2 = r.standard_normal((1, 2, 4, 4)), r.standard_normal((2, 3, 2, 2))
    check(lambda L, x, w: L.convolution(x, w, None, [2, 1], [0, 1], [1, 1], True, [1, 0], 1),
          x2, w2)


@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc(pad):
    r = _rng(6)
    x, w, b = r.standard_normal((6, 2, 3)), r.standard_normal((3, 3, 4)), r.standard_normal(4)
    f = (lambda L, x, w, b: L.conv_tbc(x, w, b, pad))
    check(f, x, w, b, rtol=1e-10, atol=1e-12)
    check_gradgrad(f, x, w, b)
    check(lambda L, x, w, b: L.nn.functional.conv_tbc(x, w, b, pad), x, w, b)


def test_conv_tbc_has_no_forward_ad_like_torch():
    r = _rng(7)
    x, w, b = r.standard_normal((5, 2, 3)), r.standard_normal((2, 3, 4)), r.standard_normal(4)
    msgs = []
    for L in (torch, ndgrad):
        fwAD = L.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(L.tensor(x), L.tensor(np.ones_like(x)))
            with pytest.raises(NotImplementedError if L is ndgrad else RuntimeError) as e:
                L.conv_tbc(d, L.tensor(w), L.tensor(b))
            msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_conv3d_forward_ad_matches_torch():
    r = _rng(8)
    x, w = r.standard_normal((1, 2, 4, 3, 4)), r.standard_normal((3, 2, 2, 2, 2))
    tx, tw = r.standard_normal(x.shape), r.standard_normal(w.shape)
    outs = []
    for L in (torch, ndgrad):
        fwAD = L.autograd.forward_ad
        with fwAD.dual_level():
            out = L.nn.functional.conv3d(fwAD.make_dual(L.tensor(x), L.tensor(tx)),
                                         fwAD.make_dual(L.tensor(w), L.tensor(tw)), stride=2,
                                         padding=1)
            outs.append(fwAD.unpack_dual(out).tangent.detach().numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-10, atol=1e-12)


# ============================================================================ pooling
MAX3D = [dict(kernel_size=2), dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0)),
         dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
         dict(kernel_size=2, dilation=(1, 2, 2), ceil_mode=True),
         dict(kernel_size=(1, 2, 3), stride=1)]


@pytest.mark.parametrize("kw", MAX3D)
@pytest.mark.parametrize("batched", [True, False])
def test_max_pool3d(kw, batched):
    x = _distinct((2, 3, 5, 6, 7) if batched else (3, 5, 6, 7))
    f = (lambda L, x: L.nn.functional.max_pool3d(x, return_indices=True, **kw))
    check(f, x)
    check_gradgrad_go(f, x)
    check(lambda L, x: L.max_pool3d(x, kw["kernel_size"], kw.get("stride", ()),
                                    kw.get("padding", 0), kw.get("dilation", 1),
                                    kw.get("ceil_mode", False)), x)


def test_max_pool3d_nan_and_ties_like_torch():
    x = np.zeros((1, 1, 4, 4, 4))
    x[0, 0, 1, 1, 1] = np.nan
    x[0, 0, 2, 3, 2] = np.nan
    x[0, 0, 3, 0, 0] = 5.0
    x[0, 0, 3, 1, 1] = 5.0
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1)):
        to, ti = torch.nn.functional.max_pool3d(torch.tensor(x), return_indices=True, **kw)
        no, ni = ndgrad.nn.functional.max_pool3d(ndgrad.tensor(x), return_indices=True, **kw)
        np.testing.assert_array_equal(ni.numpy(), ti.numpy())
        np.testing.assert_array_equal(no.numpy(), to.numpy())


AVG3D = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
         dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
         dict(kernel_size=(2, 3, 2), stride=(2, 1, 3), padding=(1, 1, 0), ceil_mode=True),
         dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
         dict(kernel_size=2, divisor_override=3)]


@pytest.mark.parametrize("kw", AVG3D)
@pytest.mark.parametrize("batched", [True, False])
def test_avg_pool3d(kw, batched):
    x = _rng(9).standard_normal((2, 3, 5, 6, 7) if batched else (3, 5, 6, 7))
    f = (lambda L, x: L.nn.functional.avg_pool3d(x, **kw))
    check(f, x, rtol=1e-10, atol=1e-12)
    check_gradgrad_go(f, x)


@pytest.mark.parametrize("size", [(2, 3, 4), 3, (None, 2, 5), (1, 1, 1), (5, 6, 7)])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_pools_3d(size, batched):
    x = _distinct((2, 3, 5, 6, 7) if batched else (3, 5, 6, 7), seed=3)
    check(lambda L, x: L.nn.functional.adaptive_avg_pool3d(x, size), x, rtol=1e-10,
          atol=1e-12)
    f = (lambda L, x: L.nn.functional.adaptive_max_pool3d(x, size, return_indices=True))
    check(f, x)
    check_gradgrad_go(f, x)
    check_gradgrad_go(lambda L, x: L.nn.functional.adaptive_avg_pool3d(x, size), x)
    check(lambda L, x: L.nn.functional.adaptive_max_pool3d_with_indices(x, size), x)


def test_lp_pool3d():
    x = _rng(10).uniform(0.2, 2.0, (2, 3, 4, 5, 4))
    for args, kw in (((2.0, 2), {}), ((1.5, (2, 3, 1)), {"stride": 1}),
                     ((3.0, 2), {"stride": 2, "ceil_mode": True})):
        f = (lambda L, x: L.nn.functional.lp_pool3d(x, *args, **kw))
        check(f, x, rtol=1e-10, atol=1e-12)
        check_gradgrad(f, x)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(2, 1, 2), stride=1,
                                                          padding=(1, 0, 0))])
def test_max_unpool3d(kw):
    x = _distinct((2, 3, 4, 4, 6))
    ta = torch.nn.functional.max_pool3d(torch.tensor(x), return_indices=True, **kw)
    sizes = [None, tuple(x.shape[2:]), list(x.shape)]
    for size in sizes:
        f = (lambda L, v, i: L.nn.functional.max_unpool3d(v, i, output_size=size, **kw))
        check(f, ta[0].numpy(), ta[1].numpy())
        check_gradgrad_go(lambda L, v, f=f: f(L, v, L.tensor(ta[1].numpy())), ta[0].numpy())
    # unbatched, through the module
    check(lambda L, v, i: L.nn.MaxUnpool3d(**kw)(v, i), ta[0][0].numpy(), ta[1][0].numpy())


def test_with_indices_forms_and_top_level_names():
    x1, x2, x3 = _distinct((2, 3, 9)), _distinct((2, 3, 6, 7)), _distinct((1, 2, 4, 5, 6))
    F = "nn.functional."

    def fn(name, *args, **kw):
        def f(L, x):
            obj = L
            for part in name.split("."):
                obj = getattr(obj, part)
            return obj(x, *args, **kw)
        return f
    for f, x in [(fn(F + "max_pool1d_with_indices", 3, 2, 1), x1),
                 (fn(F + "max_pool2d_with_indices", 2, 1, 1, ceil_mode=True), x2),
                 (fn(F + "max_pool3d_with_indices", 2), x3),
                 (fn(F + "adaptive_max_pool1d_with_indices", 4), x1),
                 (fn(F + "adaptive_max_pool2d_with_indices", (3, 4)), x2),
                 (fn(F + "max_pool1d", 2, return_indices=True), x1),
                 (fn(F + "adaptive_max_pool1d", 4, True), x1),
                 (fn("max_pool1d_with_indices", 3, 2, 1), x1),
                 (fn("adaptive_max_pool1d", 4), x1),
                 (fn("max_pool3d", 2, 1), x3),
                 (fn(F + "max_pool1d_with_indices", 3), x1[0]),
                 (fn(F + "max_pool2d", 2), x2[0]),
                 (fn(F + "adaptive_max_pool2d", 2, True), x2[0])]:
        check(f, x)


def test_3d_pad_modes():
    x = _rng(11).standard_normal((1, 2, 3, 4, 5))
    for mode in ("reflect", "replicate", "circular", "constant"):
        f = (lambda L, x: L.nn.functional.pad(x, (1, 2, 2, 1, 0, 2), mode=mode))
        check(f, x, names=False)
        check_gradgrad_go(f, x)
    for cls, args in [("ReflectionPad3d", (1,)), ("ReplicationPad3d", ((1, 0, 2, 1, 0, 1),)),
                      ("CircularPad3d", (2,)), ("ZeroPad3d", ((1, 2, 0, 1, 1, 0),)),
                      ("ConstantPad3d", (1, 3.5))]:
        t, n = getattr(torch.nn, cls)(*args), getattr(ndgrad.nn, cls)(*args)
        assert repr(n) == repr(t)
        check(lambda L, x: getattr(L.nn, cls)(*args)(x), x, names=False)
        check(lambda L, x: getattr(L.nn, cls)(*args)(x), x[0], names=False)


# ============================================================================ modules
def test_conv3d_modules_init_and_forward_like_torch():
    x = _rng(12).standard_normal((2, 4, 5, 4, 6)).astype(np.float32)
    for cls, args, kw in [("Conv3d", (4, 6, (2, 3, 2)), dict(stride=2, padding=1, groups=2)),
                          ("Conv3d", (4, 2, 3), dict(padding="same", padding_mode="reflect")),
                          ("Conv3d", (4, 2, 3), dict(padding=1, padding_mode="circular",
                                                     bias=False)),
                          ("ConvTranspose3d", (4, 6, 2), dict(stride=2, output_padding=1,
                                                              dilation=1, groups=2)),
                          ("ConvTranspose3d", (4, 3, (2, 1, 3)), dict(dilation=2))]:
        mods = []
        for L in (torch, ndgrad):
            L.manual_seed(7)
            mods.append(getattr(L.nn, cls)(*args, **kw))
        t, n = mods
        assert repr(n) == repr(t)
        for (kt, vt), (kn, vn) in zip(t.state_dict().items(), n.state_dict().items()):
            assert kt == kn
            np.testing.assert_array_equal(vn.numpy(), vt.numpy())
        to, no = t(torch.tensor(x)), n(ndgrad.tensor(x))
        np.testing.assert_allclose(no.detach().numpy(), to.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
    outs = []
    for L in (torch, ndgrad):   # ConvTranspose3d with output_size
        L.manual_seed(3)
        m = L.nn.ConvTranspose3d(4, 2, 3, stride=2)
        outs.append(m(L.tensor(x), output_size=(12, 10, 14)).detach().numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-5)


def test_pooling_modules_like_torch():
    x = _distinct((2, 3, 5, 6, 4))
    for cls, args, kw in [("MaxPool3d", (2,), {}),
                          ("MaxPool3d", ((2, 1, 2),), dict(stride=1, padding=(1, 0, 1),
                                                            return_indices=True,
                                                            ceil_mode=True)),
                          ("AvgPool3d", (2,), {}),
                          ("AvgPool3d", ((2, 2, 1), 1, (1, 1, 0), True, False, 3), {}),
                          ("AdaptiveAvgPool3d", ((2, None, 3),), {}),
                          ("AdaptiveMaxPool3d", (2, True), {}),
                          ("LPPool3d", (2, 2), {}), ("LPPool3d", (1.5, (2, 2, 1), 1, True), {})]:
        assert repr(getattr(ndgrad.nn, cls)(*args, **kw)) == \
            repr(getattr(torch.nn, cls)(*args, **kw))
        xx = np.abs(x) + 0.1 if cls.startswith("LP") else x
        check(lambda L, x: getattr(L.nn, cls)(*args, **kw)(x), xx, rtol=1e-10, atol=1e-12)
    assert repr(ndgrad.nn.MaxUnpool3d((2, 2, 1), 1, (1, 0, 0))) == \
        repr(torch.nn.MaxUnpool3d((2, 2, 1), 1, (1, 0, 0)))


def test_dropout3d_draws_like_torch():
    x = _rng(13).standard_normal((3, 4, 2, 3, 2)).astype(np.float32)
    for shape, p in [((3, 4, 2, 3, 2), 0.5), ((4, 2, 3, 2), 0.3), ((3, 4, 2, 3, 2), 1.0)]:
        xs = x.reshape(-1)[:int(np.prod(shape))].reshape(shape)
        outs = []
        for L in (torch, ndgrad):
            L.manual_seed(5)
            m = L.nn.Dropout3d(p)
            a = m(L.tensor(xs, requires_grad=True))
            b = L.nn.functional.dropout3d(L.tensor(xs), p, training=False)
            nxt = L.rand(3)
            outs.append((a.detach().numpy(), b.numpy(), nxt.numpy(), type(a.grad_fn).__name__))
        for a, b in zip(*outs):
            if isinstance(a, str):
                assert a == b
            else:
                np.testing.assert_array_equal(b, a)
    # inplace and the deprecation warning for other ranks
    for L in (torch, ndgrad):
        L.manual_seed(1)
        t = L.tensor(np.ones((2, 3, 4)))
        with pytest.warns(UserWarning, match="Received a 3-D input to dropout3d"):
            L.nn.functional.dropout3d(t, 0.5, inplace=True)
        outs.append(t.numpy())
    np.testing.assert_array_equal(outs[-1], outs[-2])
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        ndgrad.nn.functional.dropout3d(ndgrad.ones(1, 1, 1, 1, 1), 1.5)


def test_softmax2d_nllloss2d_container():
    x = _rng(14).standard_normal((2, 3, 4, 5))
    check(lambda L, x: L.nn.Softmax2d()(x), x, rtol=1e-10, atol=1e-12)
    check(lambda L, x: L.nn.Softmax2d()(x), x[0], rtol=1e-10, atol=1e-12)
    check_error(lambda L, x: L.nn.Softmax2d()(x), x[0, 0])
    target = _rng(15).integers(0, 3, (2, 4, 5))
    for L in (torch, ndgrad):
        with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
            L.nn.NLLLoss2d()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda L, x: L.nn.NLLLoss2d(ignore_index=1)(x.log_softmax(1), L.tensor(target)),
              x, rtol=1e-10, atol=1e-12)
        assert repr(ndgrad.nn.NLLLoss2d()) == repr(torch.nn.NLLLoss2d())
    reprs = []
    for L in (torch, ndgrad):
        with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
            c = L.nn.Container(a=L.nn.Linear(2, 3), b=L.nn.ReLU())
        reprs.append((repr(c), [k for k, _ in c.named_parameters()]))
    assert reprs[0] == reprs[1]


@pytest.mark.parametrize("size,channels", [(3, 6), (5, 7), (4, 3), (2, 5), (7, 4)])
def test_cross_map_lrn2d(size, channels):
    x = _rng(16).standard_normal((2, channels, 3, 2))
    for args in ((size,), (size, 0.5, 0.6, 2.0)):
        check(lambda L, x: L.nn.CrossMapLRN2d(*args)(x), x, rtol=1e-10, atol=1e-12)
    assert repr(ndgrad.nn.CrossMapLRN2d(5, 1e-3, 0.5, 2)) == \
        repr(torch.nn.CrossMapLRN2d(5, 1e-3, 0.5, 2))
    check_error(lambda L, x: L.nn.CrossMapLRN2d(3)(x), x[0])


# ============================================================================ errors
ERRORS = [
    lambda L: L.nn.functional.conv3d(L.ones(2, 4, 4), L.ones(1, 2, 2, 2, 2)),
    lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(1, 2, 2, 2)),
    lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(1, 3, 2, 2, 2)),
    lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(1, 2, 5, 2, 2)),
    lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(1, 2, 2, 2, 2), stride=0),
    lambda L: L.nn.functional.conv_transpose3d(L.ones(1, 2, 4, 4, 4), L.ones(3, 1, 2, 2, 2)),
    lambda L: L.nn.functional.conv_transpose3d(L.ones(1, 2, 4, 4, 4), L.ones(2, 1, 2, 2, 2),
                                               output_padding=1),
    lambda L: L.nn.functional.conv_transpose1d(L.ones(1, 2, 4), L.ones(2, 1, 2),
                                               output_padding=1),
    lambda L: L.nn.functional.conv_transpose2d(L.ones(4, 4), L.ones(2, 1, 2, 2)),
    lambda L: L.nn.functional.max_pool3d(L.ones(4, 4, 4), 2),
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 4, 4, 4), 5),
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 4, 4, 4), 2, padding=2),
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 4, 4, 4), (2, 2)),
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 4, 4, 4), 2, (2, 2)),
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 4, 4, 4), 2, 2, (0, 0)),
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 4, 4, 4), 2, 2, 0, (1, 1)),
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 4, 4, 4), -1),
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 4, 4, 4), 2, dilation=0),
    lambda L: L.nn.functional.max_pool2d(L.ones(4, 4), 2),
    lambda L: L.nn.functional.max_pool2d(L.ones(1, 4, 4, 4), (2, 2, 2)),
    lambda L: L.nn.functional.max_pool1d(L.ones(4), 2),
    lambda L: L.nn.functional.avg_pool3d(L.ones(4, 4, 4), 2),
    lambda L: L.nn.functional.avg_pool3d(L.ones(1, 2, 4, 4, 4), 5),
    lambda L: L.nn.functional.avg_pool3d(L.ones(1, 2, 4, 4, 4), (2, 2)),
    lambda L: L.nn.functional.avg_pool3d(L.ones(1, 2, 4, 4, 4), 2, (2, 2)),
    lambda L: L.nn.functional.avg_pool3d(L.ones(1, 2, 4, 4, 4), 2, 2, (0, 0)),
    lambda L: L.nn.functional.avg_pool3d(L.ones(1, 2, 4, 4, 4), 2, divisor_override=0),
    lambda L: L.nn.functional.avg_pool2d(L.ones(1, 4, 4, 4), 5),
    lambda L: L.nn.functional.adaptive_avg_pool3d(L.ones(4, 4), 2),
    lambda L: L.nn.functional.adaptive_avg_pool3d(L.ones(1, 2, 4, 4, 4), (2, 2)),
    lambda L: L.nn.functional.adaptive_avg_pool3d(L.ones(1, 2, 4, 4, 4), -1),
    lambda L: L.nn.functional.adaptive_max_pool3d(L.ones(4, 4), 2),
    lambda L: L.nn.functional.adaptive_max_pool3d(L.ones(1, 2, 4, 4, 4), (2, 2)),
    lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(4), 2),
    lambda L: L.nn.functional.adaptive_avg_pool2d(L.ones(4), 2),
    lambda L: L.nn.functional.adaptive_max_pool1d_with_indices(L.ones(4), 2),
    lambda L: L.nn.functional.lp_pool3d(L.ones(4, 4), 2, 2),
    lambda L: L.nn.functional.max_unpool3d(L.ones(2, 2, 2), L.zeros(2, 2, 2, dtype=L.int64), 2),
    lambda L: L.nn.functional.max_unpool3d(L.ones(1, 1, 2, 2, 2),
                                           L.full((1, 1, 2, 2, 2), 100, dtype=L.int64), 2),
    lambda L: L.nn.functional.max_unpool3d(L.ones(1, 1, 2, 2, 2), L.zeros(1, 1, 2, 2, 2), 2),
    lambda L: L.nn.functional.max_unpool3d(L.ones(1, 1, 2, 2, 2),
                                           L.zeros(1, 1, 2, 2, 1, dtype=L.int64), 2),
    lambda L: L.nn.functional.max_unpool3d(L.ones(1, 1, 2, 2, 2),
                                           L.zeros(1, 1, 2, 2, 2, dtype=L.int64), 2,
                                           output_size=(9, 4, 4)),
    lambda L: L.conv_tbc(L.ones(2, 3), L.ones(3, 3, 4), L.ones(4)),
    lambda L: L.conv_tbc(L.ones(5, 2, 3), L.ones(3, 4), L.ones(4)),
    lambda L: L.conv_tbc(L.ones(5, 2, 3), L.ones(3, 3, 4), L.ones(2)),
    lambda L: L.conv_tbc(L.ones(5, 2, 3), L.ones(3, 2, 4), L.ones(4)),
    lambda L: L.nn.functional.pad(L.ones(1, 1, 2, 2, 2), (2, 2, 0, 0, 0, 0), mode="reflect"),
    lambda L: L.nn.functional.max_pool2d(L.ones(1, 2, 4, 4), -1),
    lambda L: L.nn.functional.max_pool2d(L.ones(1, 2, 4, 4), 2, dilation=(1, -1)),
    lambda L: L.nn.functional.avg_pool3d(L.ones(1, 2, 4, 4, 4), 0),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 4), 0),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 4), 2, 0),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 4), (2, 2)),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 4), 2, (1, 1)),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 4), 2, 1, (1, 1)),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 4), 2, 1, 0, (1, 1)),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 4), 2, 1, -1),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 4), 2, 1, 0, 0),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 4), 2, 1, 2),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 4), 5),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 0), 1),
    lambda L: L.nn.functional.max_pool2d(L.ones(1, 2, 0, 4), 1),
    lambda L: L.nn.functional.avg_pool2d(L.ones(1, 2, 4, 0), 1),
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 0, 4, 4), 1),
    lambda L: L.nn.functional.max_pool3d(L.ones(2, 0, 4, 4), 1),
    lambda L: L.nn.functional.avg_pool3d(L.ones(1, 2, 4, 0, 4), 1),
    lambda L: L.nn.functional.adaptive_max_pool3d(L.ones(1, 2, 0, 4, 4), 1),
    lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(1, 2, 0, 4), 1),
    lambda L: L.nn.functional.avg_pool1d(L.ones(1, 2, 4), (2, 2)),
    lambda L: L.nn.functional.avg_pool1d(L.ones(1, 2, 4), 2, (2, 2)),
    lambda L: L.nn.functional.avg_pool1d(L.ones(4), 2),
    lambda L: L.nn.functional.avg_pool1d(L.ones(1, 2, 4), 5),
    lambda L: L.nn.functional.adaptive_avg_pool1d(L.ones(4), 2),
    lambda L: L.nn.functional.adaptive_avg_pool1d(L.ones(1, 2, 4), (2, 2)),
    lambda L: L.nn.functional.lp_pool1d(L.ones(4), 2, 2),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_like_torch(i):
    check_error(lambda L: ERRORS[i](L))


@pytest.mark.parametrize("fn", [
    lambda L, x: L.nn.functional.conv3d(x, L.ones(1, 2, 2, 2, 2, dtype=L.float64)),
    lambda L, x: L.nn.functional.conv_transpose3d(x, L.ones(2, 1, 2, 2, 2, dtype=L.float64)),
    lambda L, x: L.nn.functional.max_pool3d(x, 2, return_indices=True),
    lambda L, x: L.nn.functional.avg_pool3d(x, 2),
    lambda L, x: L.nn.functional.adaptive_max_pool3d(x, 2, return_indices=True),
    lambda L, x: L.nn.functional.adaptive_avg_pool3d(x, 2),
])
def test_empty_batch(fn):
    check(fn, np.zeros((0, 2, 4, 4, 4)))


def test_empty_batch_unpool():
    idx = np.zeros((0, 2, 2, 2, 2), np.int64)
    check(lambda L, v: L.nn.functional.max_unpool3d(v, L.tensor(idx), 2),
          np.zeros((0, 2, 2, 2, 2)))


def test_failed_call_leaves_input_untouched():
    x = ndgrad.ones(1, 2, 4, 4, 4, requires_grad=True)
    v = x._version
    with pytest.raises(RuntimeError):
        ndgrad.nn.functional.max_pool3d(x, 5)
    with pytest.raises(RuntimeError):
        ndgrad.nn.functional.conv3d(x, ndgrad.ones(1, 3, 2, 2, 2))
    assert x._version == v and x.grad is None and x.grad_fn is None
    np.testing.assert_array_equal(x.detach().numpy(), np.ones((1, 2, 4, 4, 4)))


def test_vmap_conv3d_and_pool3d_equal_loops():
    r = _rng(17)
    xs = ndgrad.tensor(r.standard_normal((3, 1, 2, 4, 4, 3)))
    w = ndgrad.tensor(r.standard_normal((2, 2, 2, 2, 2)))

    def f(x):
        y = ndgrad.nn.functional.conv3d(x, w, padding=1)
        return ndgrad.nn.functional.max_pool3d(y, 2) + \
            ndgrad.nn.functional.adaptive_avg_pool3d(y, 2)
    got = ndgrad.vmap(f)(xs)
    want = ndgrad.stack([f(xs[i]) for i in range(3)])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_autocast_casts_the_3d_family_like_torch():
    r = _rng(18)
    x = r.random((1, 2, 4, 4, 4)).astype(np.float32)
    w = r.random((3, 2, 2, 2, 2)).astype(np.float32)
    xt, wt = r.random((5, 2, 3)).astype(np.float32), r.random((2, 3, 4)).astype(np.float32)
    res = []
    for L in (torch, ndgrad):
        L.manual_seed(0)
        m = L.nn.Conv3d(2, 3, 2)
        with L.autocast("cpu", dtype=L.float16):
            outs = [L.conv3d(L.tensor(x), L.tensor(w)),
                    L.nn.functional.conv_transpose3d(L.tensor(x), L.tensor(w).transpose(0, 1)),
                    L.conv_tbc(L.tensor(xt), L.tensor(wt), L.ones(4)), m(L.tensor(x)),
                    L.convolution(L.tensor(x), L.tensor(w), None, [1, 1, 1], [0, 0, 0],
                                  [1, 1, 1], False, [0, 0, 0], 1),
                    L.nn.functional.max_pool3d(L.tensor(x), 2)]
        res.append(outs)
    for t, n in zip(*res):
        assert str(n.dtype) == str(t.dtype)
        np.testing.assert_allclose(n.detach().numpy().astype(np.float64),
                                   t.detach().numpy().astype(np.float64), rtol=2e-3, atol=2e-3)
