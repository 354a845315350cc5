"""pixel_shuffle / pixel_unshuffle / channel_shuffle, rms_norm, local_response_norm,
lp_pool1d/2d, alpha_dropout / feature_alpha_dropout and their modules against torch 2.13:
values, gradients, grad_fn names, module reprs and errors."""

import numpy as np
import pytest
import torch
from _diff import arr, raises_same, same, t

import ndgrad


def _run(lib, fn, x0, *extra, seed=50):
    """fn(lib, x, *extra) with x requiring grad; returns output, grad_fn name, x.grad."""
    x = t(lib, x0, requires_grad=True)
    ex = [t(lib, e, requires_grad=True) for e in extra]
    y = fn(lib, x, *ex)
    (y * t(lib, arr(seed, *y.shape))).sum().backward()
    return [y, y.grad_fn.name(), x.grad] + [e.grad for e in ex]


@pytest.mark.parametrize("fn,shape", [
    (lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2), (2, 8, 3, 2)),
    (lambda lib, x: lib.nn.functional.pixel_shuffle(x, 3), (9, 2, 1)),
    (lambda lib, x: lib.nn.PixelShuffle(2)(x), (1, 2, 4, 3, 2)),
    (lambda lib, x: lib.nn.functional.pixel_unshuffle(x, 2), (2, 2, 4, 6)),
    (lambda lib, x: lib.nn.PixelUnshuffle(3)(x), (1, 3, 3)),
    (lambda lib, x: lib.nn.functional.channel_shuffle(x, 3), (2, 6, 2, 2)),
    (lambda lib, x: lib.nn.ChannelShuffle(2)(x), (2, 4, 3)),
    (lambda lib, x: lib.nn.functional.channel_shuffle(x, 2), (1, 4, 1, 2, 2)),
])
def test_channel_permutations(fn, shape):
    same(lambda lib: _run(lib, fn, arr(1, *shape)))


@pytest.mark.parametrize("case", [
    lambda lib: lib.nn.functional.pixel_shuffle(lib.zeros(2, 3), 2),
    lambda lib: lib.nn.functional.pixel_shuffle(lib.zeros(5, 2, 2), 2),
    lambda lib: lib.nn.functional.pixel_shuffle(lib.zeros(4, 2, 2), 0),
    lambda lib: lib.nn.functional.pixel_unshuffle(lib.zeros(2, 3), 2),
    lambda lib: lib.nn.functional.pixel_unshuffle(lib.zeros(1, 3, 2), 2),
    lambda lib: lib.nn.functional.pixel_unshuffle(lib.zeros(1, 2, 3), 2),
    lambda lib: lib.nn.functional.pixel_unshuffle(lib.zeros(1, 2, 2), -1),
    lambda lib: lib.nn.functional.channel_shuffle(lib.zeros(2, 5, 2), 2),
    lambda lib: lib.nn.functional.channel_shuffle(lib.zeros(2, 4, 2), 0),
    lambda lib: lib.nn.ChannelShuffle(2)(lib.zeros(2, 4)),
    lambda lib: lib.nn.functional.rms_norm(lib.zeros(2, 3), (4, 5)),
    lambda lib: lib.nn.functional.rms_norm(lib.zeros(2, 3), (3,), lib.ones(1, 3)),
    lambda lib: lib.nn.functional.rms_norm(lib.zeros(2, 3), 3),
    lambda lib: lib.nn.functional.local_response_norm(lib.zeros(2, 3), 2),
    lambda lib: lib.nn.functional.alpha_dropout(lib.zeros(2, 3), 1.5, True),
    lambda lib: lib.nn.functional.feature_alpha_dropout(lib.zeros(3), 0.5, True),
    lambda lib: lib.nn.AlphaDropout(-0.1),
])
def test_errors(case):
    raises_same(case)


def test_module_reprs_and_state():
    def scenario(lib):
        mods = [lib.nn.PixelShuffle(2), lib.nn.PixelUnshuffle(3), lib.nn.ChannelShuffle(4),
                lib.nn.RMSNorm((3, 4)), lib.nn.RMSNorm(3, eps=1e-3, elementwise_affine=False),
                lib.nn.LocalResponseNorm(3, k=2.0), lib.nn.LPPool2d(2, 3, stride=1),
                lib.nn.LPPool1d(1.5, 2), lib.nn.AlphaDropout(0.2),
                lib.nn.FeatureAlphaDropout(0.3, inplace=True)]
        return [repr(m) for m in mods] + [list(mods[3].state_dict()), mods[3].weight,
                                          mods[4].weight]

    same(scenario)


@pytest.mark.parametrize("shape,norm,eps,weight", [((2, 3, 4), (4,), None, False),
                                                    ((2, 3, 4), (3, 4), 1e-3, True),
                                                    ((5,), [5], None, True)])
def test_rms_norm(shape, norm, eps, weight):
    w = arr(2, *norm)

    def fn(lib, x, *ws):
        return lib.nn.functional.rms_norm(x, norm, ws[0] if ws else None, eps)

    same(lambda lib: _run(lib, fn, arr(1, *shape), *([w] if weight else [])), rtol=1e-10)


def test_rms_norm_module_and_float32_eps():
    def scenario(lib):
        m = lib.nn.RMSNorm(4)
        x = t(lib, arr(3, 2, 4).astype(np.float32) * 1e-4, requires_grad=True)
        y = m(x)
        y.sum().backward()
        return [y, x.grad, m.weight.grad, y.grad_fn.name()]

    same(scenario, rtol=1e-5)


@pytest.mark.parametrize("shape,size,kw", [((2, 5, 3), 3, {}),
                                           ((1, 6, 2, 3), 2, {"alpha": 0.5, "beta": 1.5}),
                                           ((2, 4, 2, 1, 2), 4, {"k": 2.0})])
def test_local_response_norm(shape, size, kw):
    def fn(lib, x):
        return lib.nn.LocalResponseNorm(size, **kw)(x)

    same(lambda lib: _run(lib, fn, arr(4, *shape)), rtol=1e-10)
    same(lambda lib: lib.nn.functional.local_response_norm(lib.zeros(0, 3, 2), 2))


@pytest.mark.parametrize("fn,shape", [
    (lambda lib, x: lib.nn.functional.lp_pool2d(x, 2.0, 2), (1, 2, 4, 5)),
    (lambda lib, x: lib.nn.functional.lp_pool2d(x, 3, (2, 3), stride=1, ceil_mode=True),
     (2, 1, 4, 5)),
    (lambda lib, x: lib.nn.LPPool2d(1.5, 2, stride=(1, 2))(x.abs() + 0.1), (1, 2, 3, 4)),
    (lambda lib, x: lib.nn.functional.lp_pool1d(x, 2, 3, stride=2), (2, 3, 7)),
    (lambda lib, x: lib.nn.LPPool1d(4, 2)(x), (3, 6)),
])
def test_lp_pool(fn, shape):
    same(lambda lib: _run(lib, fn, arr(5, *shape)), rtol=1e-9)


@pytest.mark.parametrize("feature", [False, True])
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_alpha_dropout_draws_and_gradients(feature, p):
    def scenario(lib):
        lib.manual_seed(11)
        f = lib.nn.functional.feature_alpha_dropout if feature else \
            lib.nn.functional.alpha_dropout
        x = t(lib, arr(6, 3, 4, 2), requires_grad=True)
        y = f(x, p, True)
        y.sum().backward() if y.requires_grad else None
        z = f(x, p, False)
        after = lib.rand(2)
        return [y, None if y.grad_fn is None else y.grad_fn.name(), x.grad, z is x, after]

    same(scenario, rtol=1e-6)


def test_alpha_dropout_modules_float32_and_inplace():
    def scenario(lib):
        lib.manual_seed(3)
        m = lib.nn.AlphaDropout(0.4)
        x = t(lib, arr(7, 5, 6).astype(np.float32))
        y1 = m(x)
        m.eval()
        y2 = m(x)
        f = lib.nn.FeatureAlphaDropout(0.5)
        y3 = f(t(lib, arr(8, 2, 3, 4).astype(np.float32)))
        x4 = t(lib, arr(9, 4, 3))
        y4 = lib.nn.functional.alpha_dropout(x4, 0.2, True, inplace=True)
        return [y1, y2 is x, y3, y4, x4, y4 is x4]

    same(scenario, rtol=1e-6)


def test_pixel_shuffle_forward_ad_matches_torch():
    x0, v0 = arr(12, 1, 4, 2, 2), arr(13, 1, 4, 2, 2)
    fwd, tfwd = ndgrad.autograd.forward_ad, torch.autograd.forward_ad
    with fwd.dual_level():
        y = ndgrad.nn.functional.pixel_shuffle(fwd.make_dual(ndgrad.tensor(x0),
                                                             ndgrad.tensor(v0)), 2)
        ours = fwd.unpack_dual(y).tangent.numpy()
    with tfwd.dual_level():
        y = torch.nn.functional.pixel_shuffle(tfwd.make_dual(torch.tensor(x0),
                                                             torch.tensor(v0)), 2)
        theirs = tfwd.unpack_dual(y).tangent.numpy()
    np.testing.assert_array_equal(ours, theirs)


def _one_bad(i):
    i = i.clone()
    i[0, 1, 1, 0] = 99
    return i


def _pooled(lib, shape, seed, one_d):
    x = t(lib, arr(seed, *shape))
    pool = lib.nn.functional.max_pool1d if one_d else lib.nn.functional.max_pool2d
    return pool(x, 2, return_indices=True)


@pytest.mark.parametrize("one_d,shape,kw", [
    (False, (2, 3, 4, 6), {}), (False, (3, 5, 4), {"output_size": (5, 5)}),
    (False, (1, 2, 4, 4), {"output_size": (1, 2, 5, 5)}),
    (True, (2, 3, 8), {}), (True, (3, 7), {"output_size": [7]})])
def test_max_unpool(one_d, shape, kw):
    def scenario(lib):
        y, idx = _pooled(lib, shape, 20, one_d)
        y = y.detach().requires_grad_(True)
        m = (lib.nn.MaxUnpool1d(2) if one_d else lib.nn.MaxUnpool2d(2))
        out = m(y, idx, **kw)
        (out * t(lib, arr(21, *out.shape))).sum().backward()
        return [out, out.grad_fn.name(), y.grad, repr(m)]

    same(scenario)


@pytest.mark.parametrize("case", [
    lambda lib, y, i: lib.nn.functional.max_unpool2d(y, i[:, :1], 2),
    lambda lib, y, i: lib.nn.functional.max_unpool2d(y, _one_bad(i), 2),
    lambda lib, y, i: lib.nn.functional.max_unpool2d(y, i, 2, output_size=(9, 9)),
    lambda lib, y, i: lib.nn.functional.max_unpool2d(y, i, 2, output_size=(5,)),
    lambda lib, y, i: lib.nn.functional.max_unpool2d(y, i.float(), 2),
    lambda lib, y, i: lib.nn.functional.max_unpool2d(y[0, 0], i[0, 0], 2),
    lambda lib, y, i: lib.nn.functional.adaptive_max_pool1d(y, 2),
    lambda lib, y, i: lib.nn.functional.adaptive_max_pool1d(y[0, 0, 0], 2),
    lambda lib, y, i: lib.nn.functional.adaptive_max_pool1d(y[0], (2, 3)),
])
def test_unpool_and_adaptive_max_pool1d_errors(case):
    def scenario(lib):
        y, i = _pooled(lib, (1, 2, 4, 4), 22, False)
        case(lib, y, i)

    raises_same(scenario)


@pytest.mark.parametrize("shape,size", [((2, 3, 9), 4), ((3, 7), [3]), ((1, 2, 5), 5)])
def test_adaptive_max_pool1d(shape, size):
    def scenario(lib):
        x = t(lib, arr(23, *shape), requires_grad=True)
        m = lib.nn.AdaptiveMaxPool1d(size, return_indices=True)
        out, idx = m(x)
        (out * t(lib, arr(24, *out.shape))).sum().backward()
        return [out, idx, out.grad_fn.name(), x.grad, repr(m),
                lib.nn.functional.adaptive_max_pool1d(x, size)]

    same(scenario)


@pytest.mark.parametrize("cls,kw,shape", [
    ("BatchNorm3d", {}, (2, 3, 2, 3, 2)),
    ("BatchNorm3d", {"affine": False, "momentum": None}, (3, 2, 2, 1, 2)),
    ("InstanceNorm3d", {}, (2, 3, 2, 3, 2)),
    ("InstanceNorm3d", {"affine": True, "track_running_stats": True}, (3, 2, 2, 2)),
])
def test_3d_norm_modules(cls, kw, shape):
    def scenario(lib):
        m = getattr(lib.nn, cls)(shape[1] if len(shape) == 5 else shape[0], **kw)
        m.double()
        out = _run(lib, lambda lib_, x: m(x), arr(30, *shape))
        m.eval()
        y = m(t(lib, arr(31, *shape)))
        return out + [y, repr(m), list(m.state_dict()),
                      [b for _, b in m.named_buffers()]]

    same(scenario, rtol=1e-9, atol=1e-10)
    raises_same(lambda lib: getattr(lib.nn, cls)(2)(lib.zeros(2, 2)))


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_functional_running_stats_and_grad_fn(use_input_stats):
    def scenario(lib):
        x = t(lib, arr(32, 2, 3, 4, 2), requires_grad=True)
        w = t(lib, arr(33, 3), requires_grad=True)
        b = t(lib, arr(34, 3), requires_grad=True)
        rm, rv = t(lib, arr(35, 3)), t(lib, np.abs(arr(36, 3)) + 0.5)
        y = lib.nn.functional.instance_norm(x, rm, rv, w, b, use_input_stats, 0.3, 1e-3)
        (y * t(lib, arr(37, *y.shape))).sum().backward()
        return [y, y.grad_fn.name(), x.grad, w.grad, b.grad, rm, rv]

    same(scenario, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("theta_shape,size,align", [
    ((2, 2, 3), (2, 3, 4, 5), False), ((2, 2, 3), (2, 1, 3, 1), True),
    ((1, 2, 3), (1, 1, 1, 4), False), ((2, 3, 4), (2, 1, 2, 3, 4), False),
    ((1, 3, 4), (1, 2, 3, 2, 2), True)])
def test_affine_grid(theta_shape, size, align):
    def scenario(lib):
        import warnings
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            out = _run(lib, lambda lib_, th: lib_.nn.functional.affine_grid(
                th, size, align_corners=align), arr(40, *theta_shape))
        return out + [[str(w.message) for w in rec]]

    same(scenario, rtol=1e-10, atol=1e-12)


def test_affine_grid_float32_default_align_and_double_backward():
    def scenario(lib):
        import warnings
        th = t(lib, arr(41, 2, 2, 3).astype(np.float32))
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            g = lib.nn.functional.affine_grid(th, [2, 1, 5, 3])
        return [g, [(w.category.__name__, str(w.message)) for w in rec]]

    same(scenario, rtol=1e-6, atol=1e-7)
    th = ndgrad.tensor(arr(42, 2, 3, 4), requires_grad=True)

    def fn(v):
        return ndgrad.nn.functional.affine_grid(v, (2, 1, 2, 2, 3), align_corners=False).pow(2)

    assert ndgrad.autograd.gradcheck(fn, (th,))
    assert ndgrad.autograd.gradgradcheck(fn, (th,))


@pytest.mark.parametrize("case", [
    lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3, dtype=lib.int64),
                                              (2, 1, 2, 2), align_corners=False),
    lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 3, 3), (2, 1, 2, 2),
                                              align_corners=False),
    lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3), (2, 1, 2, 2, 2),
                                              align_corners=False),
    lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3), (2, 1, 2),
                                              align_corners=False),
    lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3), (2, 1, 0, 2),
                                              align_corners=False),
    lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3), (3, 1, 2, 2),
                                              align_corners=False),
])
def test_affine_grid_errors(case):
    raises_same(case)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("training", [True, False])
def test_rrelu_draws_values_and_gradients(dtype, training):
    def scenario(lib):
        lib.manual_seed(21)
        x = t(lib, arr(50, 4, 5).astype(dtype), requires_grad=True)
        m = lib.nn.RReLU(0.1, 0.4)
        m.train(training)
        y = m(x)
        (y * t(lib, arr(51, 4, 5).astype(dtype))).sum().backward()
        y2 = lib.nn.functional.rrelu(x.detach(), training=training)
        return [y, y.grad_fn.name(), x.grad, y2, lib.rand(3), repr(m), repr(lib.nn.RReLU())]

    same(scenario, rtol=1e-6 if dtype == np.float32 else 1e-12)


def test_rrelu_inplace_and_forward_ad():
    def scenario(lib):
        lib.manual_seed(4)
        x = t(lib, arr(52, 6))
        y = lib.nn.functional.rrelu_(x, 0.2, 0.3, True)
        return [x, y]

    same(scenario)
    x0, v0 = arr(53, 5), arr(54, 5)
    fwd, tfwd = ndgrad.autograd.forward_ad, torch.autograd.forward_ad
    with fwd.dual_level():
        y = ndgrad.nn.functional.rrelu(fwd.make_dual(ndgrad.tensor(x0), ndgrad.tensor(v0)))
        ours = fwd.unpack_dual(y).tangent.numpy()
    with tfwd.dual_level():
        y = torch.nn.functional.rrelu(tfwd.make_dual(torch.tensor(x0), torch.tensor(v0)))
        theirs = tfwd.unpack_dual(y).tangent.numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("case", [
    lambda lib: lib.nn.functional.rrelu(lib.zeros(3), 0.5, 0.1, True),
    lambda lib: lib.nn.functional.rrelu(lib.zeros(3, dtype=lib.int64), training=True),
])
def test_rrelu_errors(case):
    raises_same(case)
