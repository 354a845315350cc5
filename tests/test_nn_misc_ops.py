"""Differential tests against torch 2.13 for the issue-16 nn additions: grid_sample,
embedding_bag/EmbeddingBag, ctc_loss/CTCLoss, AdaptiveLogSoftmaxWithLoss, gumbel_softmax,
triplet_margin_with_distance_loss, multi_head_attention_forward, the F helpers and the
top-level torch forms of nn functions. Values, gradients, grad_fn names and errors."""

import itertools
import warnings

import numpy as np
import pytest
import torch

import ndgrad

LIBS = (torch, ndgrad)


def _np(t):
    return None if t is None else t.detach().numpy()


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(_np(b) if not isinstance(b, np.ndarray) else b,
                               _np(a) if not isinstance(a, np.ndarray) else a,
                               rtol=tol, atol=tol)


def _raises_like(fn):
    """Call fn(torch) and fn(ndgrad): same exception class and message."""
    errs = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            fn(lib)
        errs.append(info.value)
    assert type(errs[1]) is type(errs[0]), (errs[0], errs[1])
    assert str(errs[1]) == str(errs[0])


# ============================================================================ grid_sample
def _grid_run(lib, x, g, w, **kw):
    tx = lib.tensor(x, requires_grad=True)
    tg = lib.tensor(g, requires_grad=True)
    out = lib.nn.functional.grid_sample(tx, tg, **kw)
    gx, gg = lib.autograd.grad((out * lib.tensor(w)).sum(), (tx, tg), create_graph=True)
    second = lib.autograd.grad((gx ** 2).sum() + (gg ** 2).sum(), (tx, tg), allow_unused=True)
    return out, gx, gg, second


@pytest.mark.parametrize("mode,pad,ac", list(itertools.product(
    ["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"], [False, True])))
def test_grid_sample_2d(mode, pad, ac):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 5))
    g = rng.uniform(-1.3, 1.3, (2, 3, 2, 2))
    w = rng.standard_normal((2, 3, 3, 2))
    a = _grid_run(torch, x, g, w, mode=mode, padding_mode=pad, align_corners=ac)
    b = _grid_run(ndgrad, x, g, w, mode=mode, padding_mode=pad, align_corners=ac)
    assert b[0].grad_fn.name() == a[0].grad_fn.name() == "GridSampler2DBackward0"
    for p, q in zip(a[:3], b[:3]):
        _close(p, q)
    if mode != "nearest":
        for p, q in zip(a[3], b[3]):
            _close(p, q, 1e-9)


@pytest.mark.parametrize("mode,pad,ac", list(itertools.product(
    ["bilinear", "nearest"], ["zeros", "border", "reflection"], [False, True])))
def test_grid_sample_3d(mode, pad, ac):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2, 3, 4, 3))
    g = rng.uniform(-1.2, 1.2, (2, 2, 3, 2, 3))
    w = rng.standard_normal((2, 2, 2, 3, 2))
    a = _grid_run(torch, x, g, w, mode=mode, padding_mode=pad, align_corners=ac)
    b = _grid_run(ndgrad, x, g, w, mode=mode, padding_mode=pad, align_corners=ac)
    assert b[0].grad_fn.name() == "GridSampler3DBackward0"
    for p, q in zip(a[:3], b[:3]):
        _close(p, q)


@pytest.mark.parametrize("mode,pad,ac,dims,dtype", [
    (m, p, a, d, t) for m, p, a, d, t in itertools.product(
        ["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"], [False, True],
        [2, 3], ["float32", "float64"]) if not (m == "bicubic" and d == 3)])
def test_grid_sample_plain_backward_is_the_rule_bitwise(mode, pad, ac, dims, dtype):
    # A backward that records nothing computes on arrays (points as rows); with
    # create_graph it runs the rule in ndgrad ops. Both must give the same bits, and torch's
    # values. More grid points than input pixels: many points share taps (scatter order).
    rng = np.random.default_rng(7)
    spatial, out = ((4, 5), (7, 6)) if dims == 2 else ((3, 4, 3), (4, 5, 3))
    x = rng.standard_normal((2, 3) + spatial).astype(dtype)
    g = rng.uniform(-1.3, 1.3, (2,) + out + (dims,)).astype(dtype)
    w = rng.standard_normal((2, 3) + out).astype(dtype)
    kw = dict(mode=mode, padding_mode=pad, align_corners=ac)
    grads = []
    for create_graph in (False, True):
        tx = ndgrad.tensor(x, requires_grad=True)
        tg = ndgrad.tensor(g, requires_grad=True)
        y = ndgrad.nn.functional.grid_sample(tx, tg, **kw)
        grads.append([r.detach().numpy() for r in ndgrad.autograd.grad(
            (y * ndgrad.tensor(w)).sum(), (tx, tg), create_graph=create_graph)])
    for plain, rule in zip(*grads):
        assert plain.dtype == rule.dtype and np.array_equal(plain, rule)
    tx = torch.tensor(x, requires_grad=True)
    tg = torch.tensor(g, requires_grad=True)
    ty = torch.nn.functional.grid_sample(tx, tg, **kw)
    ref = torch.autograd.grad((ty * torch.tensor(w)).sum(), (tx, tg))
    tol = 1e-4 if dtype == "float32" else 1e-10
    for r, p in zip(ref, grads[0]):
        np.testing.assert_allclose(p, r.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(ndgrad.nn.functional.grid_sample(
        ndgrad.tensor(x), ndgrad.tensor(g), **kw).numpy(), ty.detach().numpy(), rtol=tol,
        atol=tol)


def test_grid_sampler_top_level_and_float32():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    g = rng.uniform(-1, 1, (1, 3, 3, 2)).astype(np.float32)
    for fn in ("grid_sampler", "grid_sampler_2d"):
        outs = [getattr(lib, fn)(lib.tensor(x), lib.tensor(g), 2, 1, True) for lib in LIBS]
        assert outs[1].dtype == ndgrad.float32
        _close(outs[0], outs[1], 1e-5)


def test_grid_sample_no_forward_ad():
    x = ndgrad.randn(1, 1, 2, 2)
    with ndgrad.autograd.forward_ad.dual_level():
        dx = ndgrad.autograd.forward_ad.make_dual(x, ndgrad.ones_like(x))
        with pytest.raises(NotImplementedError, match="grid_sampler_2d"):
            ndgrad.nn.functional.grid_sample(dx, ndgrad.zeros(1, 1, 1, 2), align_corners=False)


@pytest.mark.parametrize("case", range(9))
def test_grid_sample_errors(case):
    def call(lib):
        F = lib.nn.functional
        x, g = lib.ones(1, 2, 3, 4), lib.zeros(1, 2, 2, 2)
        return [lambda: F.grid_sample(x, g, mode="foo"),
                lambda: F.grid_sample(x, g, padding_mode="foo"),
                lambda: F.grid_sample(x, g.double(), align_corners=False),
                lambda: F.grid_sample(x, lib.zeros(2, 2, 2, 2), align_corners=False),
                lambda: F.grid_sample(x, lib.zeros(1, 2, 2, 3), align_corners=False),
                lambda: F.grid_sample(lib.ones(1, 2, 0, 4), g, align_corners=False),
                lambda: F.grid_sample(x.unsqueeze(2), lib.zeros(1, 1, 2, 2, 3),
                                      mode="bicubic", align_corners=False),
                lambda: lib.grid_sampler_3d(x, g, 0, 0, False),
                lambda: F.grid_sample(x.long(), g.long(), align_corners=False)][case]()
    _raises_like(call)


def test_grid_sample_default_align_corners_warns():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ndgrad.nn.functional.grid_sample(ndgrad.ones(1, 1, 2, 2), ndgrad.zeros(1, 1, 1, 2))
    assert any("align_corners=False since 1.3.0" in str(r.message) for r in rec)


# ============================================================================ embedding_bag
def _bag_run(lib, w, idx, off, psw=None, **kw):
    tw = lib.tensor(w, requires_grad=True)
    tp = None if psw is None else lib.tensor(psw, requires_grad=True)
    out = lib.nn.functional.embedding_bag(lib.tensor(idx), tw,
                                          None if off is None else lib.tensor(off),
                                          per_sample_weights=tp, **kw)
    weights = lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(out.shape) * 0.1)
    (out * weights).sum().backward()
    return out, tw.grad, None if tp is None else tp.grad


BAG_CASES = [dict(mode=m, padding_idx=p, include_last_offset=i, scale_grad_by_freq=f)
             for m in ("sum", "mean", "max") for p in (None, 2) for i in (False, True)
             for f in ((False,) if m == "max" else (False, True))]


@pytest.mark.parametrize("kw", BAG_CASES, ids=lambda kw: "-".join(str(v) for v in kw.values()))
def test_embedding_bag_offsets(kw):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((6, 3))
    idx, off = np.array([0, 2, 1, 2, 5, 3, 3]), np.array([0, 2, 2, 5])
    a, b = _bag_run(torch, w, idx, off, **kw), _bag_run(ndgrad, w, idx, off, **kw)
    assert b[0].grad_fn.name() == "EmbeddingBagBackward0"
    _close(a[0], b[0])
    _close(a[1], b[1])


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 3}, {"scale_grad_by_freq": True}])
def test_embedding_bag_per_sample_weights(kw):
    rng = np.random.default_rng(4)
    w, psw = rng.standard_normal((6, 3)), rng.uniform(size=7)
    idx, off = np.array([0, 2, 1, 2, 5, 3, 3]), np.array([0, 2, 2, 5])
    a = _bag_run(torch, w, idx, off, psw, mode="sum", **kw)
    b = _bag_run(ndgrad, w, idx, off, psw, mode="sum", **kw)
    for p, q in zip(a, b):
        _close(p, q)


def test_embedding_bag_2d_and_module_and_top_level():
    rng = np.random.default_rng(5)
    w = rng.standard_normal((6, 3))
    idx = np.array([[0, 2, 2], [1, 5, 4]])
    a = _bag_run(torch, w, idx, None, mode="mean", padding_idx=2)
    b = _bag_run(ndgrad, w, idx, None, mode="mean", padding_idx=2)
    _close(a[0], b[0])
    _close(a[1], b[1])
    mods = []
    for lib in LIBS:
        lib.manual_seed(0)
        mods.append(lib.nn.EmbeddingBag(6, 3, mode="max", padding_idx=1))
    _close(mods[0].weight, mods[1].weight)
    outs = [m(lib.tensor(idx)) for m, lib in zip(mods, LIBS)]
    _close(outs[0], outs[1])
    assert repr(mods[1]) == repr(mods[0])
    for mode in (0, 1, 2):
        res = [lib.embedding_bag(lib.tensor(w), lib.tensor(idx.reshape(-1)),
                                 lib.tensor([0, 2, 2]), False, mode, False, None, False, None)
               for lib in LIBS]
        for p, q in zip(res[0], res[1]):
            np.testing.assert_array_equal(_np(q), _np(p))


@pytest.mark.parametrize("case", range(10))
def test_embedding_bag_errors(case):
    def call(lib):
        F = lib.nn.functional
        w = lib.ones(5, 3)
        idx, off = lib.tensor([0, 2, 1, 2, 4, 3]), lib.tensor([0, 2, 2, 5])
        return [lambda: F.embedding_bag(idx.view(2, 3), w, off),
                lambda: F.embedding_bag(idx, w),
                lambda: F.embedding_bag(idx, w, off, mode="foo"),
                lambda: F.embedding_bag(idx, w, off, mode="mean",
                                        per_sample_weights=lib.ones(6)),
                lambda: F.embedding_bag(idx, w, off, per_sample_weights=lib.ones(5)),
                lambda: F.embedding_bag(idx, w, lib.tensor([1, 2])),
                lambda: F.embedding_bag(lib.tensor([0, 7]), w, lib.tensor([0])),
                lambda: F.embedding_bag(idx.float(), w, off),
                lambda: F.embedding_bag(idx, w, off, padding_idx=7),
                lambda: F.embedding_bag(idx, w, off, mode="max",
                                        scale_grad_by_freq=True)][case]()
    _raises_like(call)


# ============================================================================ ctc_loss
def _ctc_run(lib, x, targets, il, tl, **kw):
    t = lib.tensor(x, requires_grad=True)
    out = lib.nn.functional.ctc_loss(t.log_softmax(2), lib.tensor(targets), lib.tensor(il),
                                     lib.tensor(tl), **kw)
    w = lib.tensor(np.arange(1, out.numel() + 1, dtype=np.float64).reshape(out.shape))
    (out * w).sum().backward()
    return out, t.grad


@pytest.mark.parametrize("reduction,zero_inf,flat", list(itertools.product(
    ["none", "mean", "sum"], [False, True], [False, True])))
def test_ctc_loss(reduction, zero_inf, flat):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((7, 3, 5))
    tg = np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]])
    il, tl = np.array([7, 6, 3]), np.array([3, 2, 3])  # the last one cannot align: inf
    if flat:
        tg = np.concatenate([tg[b, :tl[b]] for b in range(3)])
    if not zero_inf:
        il = np.array([7, 6, 5])
    a = _ctc_run(torch, x, tg, il, tl, reduction=reduction, zero_infinity=zero_inf)
    b = _ctc_run(ndgrad, x, tg, il, tl, reduction=reduction, zero_infinity=zero_inf)
    assert b[0].grad_fn.name() == a[0].grad_fn.name()
    _close(a[0], b[0])
    _close(a[1], b[1])


def test_ctc_loss_blank_unbatched_module_and_double_backward():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 4))
    res = []
    for lib in LIBS:
        t = lib.tensor(x, requires_grad=True)
        loss = lib.nn.CTCLoss(blank=3, reduction="sum")(t.log_softmax(1), lib.tensor([1, 0]),
                                                        lib.tensor(6), lib.tensor(2))
        g, = lib.autograd.grad(loss, t, create_graph=True)
        res.append((loss, g))
        with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not "
                                               "implemented"):
            lib.autograd.grad(g.sum(), t)
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])
    top = [lib.ctc_loss(lib.tensor(x).log_softmax(1), lib.tensor([1, 0]), [6], [2], 3, 0, False)
           for lib in LIBS]
    _close(top[0], top[1])


@pytest.mark.parametrize("case", range(8))
def test_ctc_loss_errors(case):
    def call(lib):
        F = lib.nn.functional
        lp = lib.zeros(6, 2, 4)
        tg, il, tl = lib.ones(2, 3, dtype=lib.int64), lib.tensor([6, 5]), lib.tensor([3, 2])
        return [lambda: F.ctc_loss(lp[0, 0], tg, il, tl),
                lambda: F.ctc_loss(lp, tg, lib.tensor([6]), tl),
                lambda: F.ctc_loss(lp, tg, il, lib.tensor([3])),
                lambda: F.ctc_loss(lp, tg, lib.tensor([7, 5]), tl),
                lambda: F.ctc_loss(lp, tg, il, lib.tensor([4, 2])),
                lambda: F.ctc_loss(lp, tg, il, tl, blank=4),
                lambda: F.ctc_loss(lp, tg.reshape(-1)[:4], il, tl),
                lambda: F.ctc_loss(lp, tg, il, tl, reduction="foo")][case]()
    _raises_like(call)


# ============================================================================ modules, composites
def test_adaptive_log_softmax_with_loss():
    rng = np.random.default_rng(8)
    x, target = rng.standard_normal((6, 8)), np.array([0, 3, 5, 9, 12, 14])
    res = []
    for lib in LIBS:
        lib.manual_seed(0)
        m = lib.nn.AdaptiveLogSoftmaxWithLoss(8, 15, [4, 10], div_value=2.0).double()
        xt = lib.tensor(x, requires_grad=True)
        out = m(xt, lib.tensor(target))
        out.loss.backward()
        res.append((out.output, out.loss, xt.grad, m.tail[1][0].weight.grad, m.log_prob(xt),
                    m.predict(xt), m(xt[0], lib.tensor(target[0])).output))
    for p, q in zip(*res):
        _close(p, q)
    _raises_like(lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 15, [10, 4]))
    _raises_like(lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 15, [4])(
        lib.zeros(2, 8), lib.tensor([1, 15])))


def test_gumbel_softmax_same_stream():
    x = np.random.default_rng(9).standard_normal((4, 5))
    res = []
    for lib in LIBS:
        lib.manual_seed(3)
        t = lib.tensor(x, requires_grad=True)
        soft = lib.nn.functional.gumbel_softmax(t, tau=0.5)
        hard = lib.nn.functional.gumbel_softmax(t, hard=True, dim=0)
        ((soft + hard) * lib.tensor(x)).sum().backward()
        res.append((soft, hard, t.grad))
    for p, q in zip(*res):
        _close(p, q)


@pytest.mark.parametrize("swap,reduction", [(False, "mean"), (True, "none"), (True, "sum")])
def test_triplet_margin_with_distance_loss(swap, reduction):
    rng = np.random.default_rng(10)
    a, p, n = (rng.standard_normal((3, 4)) for _ in range(3))
    res = []
    for lib in LIBS:
        ts = [lib.tensor(v, requires_grad=True) for v in (a, p, n)]
        loss = lib.nn.TripletMarginWithDistanceLoss(margin=2.0, swap=swap, reduction=reduction)
        out = loss(*ts)
        out.sum().backward()
        res.append([out] + [t.grad for t in ts])
    for x, y in zip(*res):
        _close(x, y)
    _raises_like(lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        lib.zeros(2), lib.zeros(2, 2), lib.zeros(2)))
    _raises_like(lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=0))


def test_multi_head_attention_forward_matches_torch():
    rng = np.random.default_rng(11)
    E, H = 4, 2
    arrays = [rng.standard_normal(s) for s in ((3, 2, E), (5, 2, E), (5, 2, E), (3 * E, E),
                                               (3 * E,), (E, E), (E,), (1, 1, E), (1, 1, E))]
    kpm = np.array([[False, False, True, False, False], [False, False, False, False, True]])
    res = []
    for lib in LIBS:
        q, k, v, w, b, wo, bo, bk, bv = (lib.tensor(a, requires_grad=True) for a in arrays)
        out, weights = lib.nn.functional.multi_head_attention_forward(
            q, k, v, E, H, w, b, bk, bv, True, 0.0, wo, bo, key_padding_mask=lib.tensor(kpm),
            average_attn_weights=False)
        out.sum().backward()
        res.append((out, weights, q.grad, w.grad, bk.grad))
    for x, y in zip(*res):
        _close(x, y)


def test_functional_helpers():
    F = ndgrad.nn.functional
    x = ndgrad.ones(2)
    assert F.has_torch_function((x,)) is False
    assert F.has_torch_function_unary(x) is False
    assert F.has_torch_function_variadic(x, x) is False
    assert F.handle_torch_function(lambda a, b: a + b, (x,), 1, 2) == 3
    fn = F.boolean_dispatch("flag", 1, False, lambda a, flag=False: "yes",
                            lambda a, flag=False: "no", None, "pick")
    assert (fn(1), fn(1, True), fn(1, flag=True), fn.__name__) == ("no", "yes", "yes", "pick")
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == torch.nn.functional.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == torch.nn.functional.GRID_SAMPLE_PADDING_MODES
    assert set(F.reproducibility_notes) == set(torch.nn.functional.reproducibility_notes)
    _raises_like(lambda lib: lib.nn.functional.assert_int_or_pair((1, 2, 3), "k", "{} bad"))
    assert F.BroadcastingList2[int] is int


def test_inplace_forms_and_native_channel_shuffle():
    x = np.linspace(-2, 2, 24).reshape(2, 6, 2)
    for name, args in (("celu_", (0.5,)), ("selu_", ()), ("threshold_", (0.1, -3.0))):
        outs = []
        for lib in LIBS:
            t = lib.tensor(x)
            r = getattr(lib.nn.functional, name)(t, *args)
            assert r is t
            outs.append(t)
        _close(outs[0], outs[1])
    outs = []
    for lib in LIBS:
        t = lib.tensor(x, requires_grad=True)
        r = lib.nn.functional.native_channel_shuffle(t, 3)
        assert type(r.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="native_channel_shuffle is not implemented"):
            r.sum().backward()
        outs.append(r)
    _close(outs[0], outs[1])


def test_upsample_aliases_warn_and_match():
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    for name, kw in (("upsample", {"scale_factor": 2, "mode": "bilinear",
                                   "align_corners": False}),
                     ("upsample_nearest", {"size": (5, 6)}),
                     ("upsample_bilinear", {"scale_factor": 2})):
        outs = []
        for lib in LIBS:
            with pytest.warns(UserWarning, match="deprecated"):
                outs.append(getattr(lib.nn.functional, name)(lib.tensor(x), **kw))
        _close(outs[0], outs[1])


def test_top_level_nn_forms():
    rng = np.random.default_rng(12)
    x, y = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    t = np.sign(rng.standard_normal((2, 3, 4)))
    calls = [
        lambda l, T: l.kl_div(T(x), T(np.exp(y)), 2),
        lambda l, T: l.binary_cross_entropy_with_logits(T(x), T((t + 1) / 2), None, None, 0),
        lambda l, T: l.hinge_embedding_loss(T(x), T(t), 0.5, 2),
        lambda l, T: l.margin_ranking_loss(T(x), T(y), T(t), 0.1, 1),
        lambda l, T: l.triplet_margin_loss(T(x), T(y), T(2 * x), 1.0, 2, 1e-6, True, 0),
        lambda l, T: l.cosine_embedding_loss(T(x[0]), T(y[0]), T(t[0, :, 0]), 0.1, 1),
        lambda l, T: l.poisson_nll_loss(T(x), T(np.abs(y)), True, True, 1e-8, 1),
        lambda l, T: l.native_layer_norm(T(x), [4], None, None, 1e-5),
        lambda l, T: l.native_group_norm(T(x), None, None, 2, 3, 4, 3, 1e-5),
        lambda l, T: l.native_batch_norm(T(x), None, None, None, None, True, 0.1, 1e-5),
        lambda l, T: l.instance_norm(T(x), None, None, None, None, True, 0.1, 1e-5, False),
        lambda l, T: l.pixel_shuffle(T(x.reshape(1, 4, 3, 2)), 2),
        lambda l, T: l.pixel_unshuffle(T(x.reshape(1, 1, 4, 6)), 2),
        lambda l, T: l.channel_shuffle(T(x.reshape(1, 6, 4)), 2),
        lambda l, T: l.rms_norm(T(x), [4], None, 1e-6),
        lambda l, T: l.threshold(T(x), 0.1, 2.0),
        lambda l, T: l.rrelu(T(x)),
        lambda l, T: l.affine_grid_generator(T(x[0, :2, :3].reshape(1, 2, 3)), [1, 1, 2, 3],
                                             False),
    ]
    for call in calls:
        res = []
        for lib in LIBS:
            out = call(lib, lambda a, lib=lib: lib.tensor(a))
            res.append(out if isinstance(out, tuple) else (out,))
        for p, q in zip(*res):
            _close(p, q)
    for name in ("feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
        outs = []
        for lib in LIBS:
            lib.manual_seed(0)
            outs.append(getattr(lib, name)(lib.tensor(x), 0.5, True))
        _close(outs[0], outs[1])


# ============================================================================ fractional pooling
@pytest.mark.parametrize("k,shape,kernel,outs", [
    (2, (2, 3, 7, 9), 2, (4, 5)), (2, (3, 8, 8), (3, 2), (4, 4)),
    (3, (1, 2, 5, 6, 7), 2, (3, 3, 4)), (3, (2, 4, 5, 6), (2, 3, 2), (2, 2, 4))])
def test_fractional_max_pool_given_samples(k, shape, kernel, outs):
    rng = np.random.default_rng(13)
    x = rng.standard_normal(shape)
    n = shape[0] if len(shape) == k + 2 else 1
    samples = rng.uniform(size=(n, shape[-k - 1], k))
    res = []
    for lib in LIBS:
        t = lib.tensor(x, requires_grad=True)
        fn = getattr(lib.nn.functional, f"fractional_max_pool{k}d")
        out, idx = fn(t, kernel, output_size=outs, return_indices=True,
                      _random_samples=lib.tensor(samples))
        g, = lib.autograd.grad(out, t, lib.tensor(np.arange(out.numel(), dtype=float)
                                                  .reshape(out.shape)), create_graph=True)
        gg, = lib.autograd.grad((g * t).sum(), t)
        res.append((out, idx, g, gg, out.grad_fn.name()))
    assert res[1][4] == res[0][4] == f"FractionalMaxPool{k}DBackward0"
    for p, q in zip(res[0][:2], res[1][:2]):
        np.testing.assert_array_equal(_np(q), _np(p))  # exact, as the issue requires
    _close(res[0][2], res[1][2])
    _close(res[0][3], res[1][3])


@pytest.mark.parametrize("k", [2, 3])
def test_fractional_max_pool_generator_stream_and_module(k):
    x = np.random.default_rng(14).standard_normal((2, 3) + (8,) * k).astype(np.float32)
    res = []
    for lib in LIBS:
        lib.manual_seed(5)
        fn = getattr(lib.nn.functional, f"fractional_max_pool{k}d")
        a = fn(lib.tensor(x), 2, output_ratio=(0.5,) * k)
        mod = getattr(lib.nn, f"FractionalMaxPool{k}d")(3, output_size=4, return_indices=True)
        b, idx = mod(lib.tensor(x))
        res.append((a, b, idx, lib.rand(2)))
    for p, q in zip(*res):
        np.testing.assert_array_equal(_np(q), _np(p))


@pytest.mark.parametrize("case", range(5))
def test_fractional_max_pool_errors(case):
    def call(lib):
        F, x = lib.nn.functional, lib.ones(1, 2, 5, 6)
        return [lambda: F.fractional_max_pool2d(x, 2),
                lambda: F.fractional_max_pool2d(x, 4, output_size=3),
                lambda: F.fractional_max_pool2d(x, 2, output_size=2,
                                                _random_samples=lib.rand(1, 2, 3)),
                lambda: F.fractional_max_pool3d(x.unsqueeze(2).expand(1, 2, 3, 5, 6), 2,
                                                output_size=(2, 7, 2)),
                lambda: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5)][case]()
    _raises_like(call)


def test_fractional_max_pool_forward_ad():
    x = np.random.default_rng(15).standard_normal((1, 2, 6, 6))
    tan = np.random.default_rng(16).standard_normal((1, 2, 6, 6))
    samples = np.array([[[0.3, 0.7], [0.1, 0.5]]])
    res = []
    for lib in LIBS:
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            d = fwad.make_dual(lib.tensor(x), lib.tensor(tan))
            out = lib.nn.functional.fractional_max_pool2d(d, 2, output_size=3,
                                                          _random_samples=lib.tensor(samples))
            res.append(fwad.unpack_dual(out).tangent)
    _close(res[0], res[1])


# ============================================================================ interpolate
def _interp_cases():
    cases = []
    for shape, modes in (((1, 2, 5), ["nearest", "nearest-exact", "linear", "area"]),
                         ((1, 2, 5, 6), ["nearest", "nearest-exact", "bilinear", "bicubic",
                                         "area"]),
                         ((1, 2, 3, 5, 6), ["nearest", "nearest-exact", "trilinear", "area"])):
        k = len(shape) - 2
        for mode in modes:
            for spec in ({"scale_factor": 2}, {"scale_factor": 0.7}, {"size": (7,) * k},
                         {"scale_factor": 1.5, "recompute_scale_factor": True}):
                for ac in ([None] if mode in ("nearest", "nearest-exact", "area")
                           else [False, True]):
                    cases.append((shape, dict(mode=mode, align_corners=ac, **spec)))
    for mode in ["bilinear", "bicubic"]:
        for ac in [False, True]:
            for spec in ({"size": (3, 4)}, {"size": (9, 11)}, {"scale_factor": 0.4}):
                cases.append(((1, 2, 7, 8), dict(mode=mode, align_corners=ac, antialias=True,
                                                 **spec)))
    cases.append(((1, 2, 7, 8), dict(mode="lanczos", antialias=True, size=(3, 4))))
    return cases


@pytest.mark.parametrize("shape,kw", _interp_cases(), ids=str)
def test_interpolate_modes(shape, kw):
    x = np.random.default_rng(17).standard_normal(shape)
    res = []
    for lib in LIBS:
        t = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.interpolate(t, **kw)
        w = lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(out.shape) / 7.0)
        g, = lib.autograd.grad((out * w).sum(), t)
        res.append((out, g, out.grad_fn.name()))
    assert res[1][2] == res[0][2]
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])


@pytest.mark.parametrize("case", range(9))
def test_interpolate_errors(case):
    def call(lib):
        F = lib.nn.functional
        x3, x4, x5 = lib.ones(1, 1, 4), lib.ones(1, 1, 4, 4), lib.ones(1, 1, 2, 4, 4)
        return [lambda: F.interpolate(x4, size=2, scale_factor=2),
                lambda: F.interpolate(x4, size=(2, 3, 4)),
                lambda: F.interpolate(x4, scale_factor=2, mode="nearest", align_corners=True),
                lambda: F.interpolate(x5, scale_factor=2, mode="bilinear"),
                lambda: F.interpolate(x3, scale_factor=2, mode="trilinear"),
                lambda: F.interpolate(x5, scale_factor=2, mode="bicubic"),
                lambda: F.interpolate(x3, scale_factor=2, mode="linear", antialias=True),
                lambda: F.interpolate(x4, size=2, mode="lanczos"),
                lambda: F.interpolate(x4, size=3, recompute_scale_factor=True)][case]()
    _raises_like(call)


# ============================================================================ conv_tbc, linear CE
@pytest.mark.parametrize("pad", [0, 1, 2])
def test_conv_tbc(pad):
    rng = np.random.default_rng(18)
    arrays = rng.standard_normal((5, 2, 3)), rng.standard_normal((3, 3, 4)), \
        rng.standard_normal(4)
    res = []
    for lib in LIBS:
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.nn.functional.conv_tbc(*ts, pad)
        w = lib.tensor(np.arange(out.numel()).reshape(out.shape) * 0.1)
        grads = lib.autograd.grad((out * w).sum(), ts, create_graph=True)
        second = lib.autograd.grad((grads[0] ** 2).sum() + (grads[1] ** 2).sum(), ts[:2])
        res.append((out, *grads, *second))
        assert out.grad_fn.name() == "ConvTbcBackward0"
    for p, q in zip(*res):
        _close(p, q, 1e-9)


@pytest.mark.parametrize("case", range(6))
def test_conv_tbc_errors(case):
    def call(lib):
        x, w, b = lib.ones(5, 2, 3), lib.ones(3, 3, 4), lib.ones(4)
        return [lambda: lib.conv_tbc(x[0], w, b, 0), lambda: lib.conv_tbc(x, w[0], b, 0),
                lambda: lib.conv_tbc(x, w, b[None], 0),
                lambda: lib.conv_tbc(x, lib.ones(3, 2, 4), b, 0),
                lambda: lib.conv_tbc(x, w, lib.ones(3), 0),
                lambda: lib.conv_tbc(x, lib.ones(8, 3, 4), b, 0)][case]()
    _raises_like(call)


@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.1, "reduction": "sum"},
                                {"ignore_index": 2, "reduction": "none"}])
def test_linear_cross_entropy(kw):
    rng = np.random.default_rng(19)
    x, w = rng.standard_normal((4, 5)), rng.standard_normal((3, 5))
    w3, b3 = rng.standard_normal((3, 2, 5)), rng.standard_normal((3, 2))
    t, t3 = np.array([0, 2, 1, 2]), np.array([[0, 2], [1, 1], [2, 0], [1, 2]])
    res = []
    for lib in LIBS:
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w3, requires_grad=True)
        F = lib.nn.functional
        a = F.linear_cross_entropy(xt, lib.tensor(w), lib.tensor(t), **kw)
        b = F.linear_cross_entropy(xt, wt, lib.tensor(t3), linear_bias=lib.tensor(b3), **kw)
        (a.sum() + b.sum()).backward()
        res.append((a, b, xt.grad, wt.grad))
    for p, q in zip(*res):
        _close(p, q)
    _raises_like(lambda lib: lib.nn.functional.linear_cross_entropy(
        lib.ones(5), lib.ones(3, 2, 5), lib.tensor([0])))
    _raises_like(lambda lib: lib.nn.LinearCrossEntropyLoss(5, 3, label_smoothing=2.0))
    mods = []
    for lib in LIBS:
        lib.manual_seed(0)
        mods.append(lib.nn.LinearCrossEntropyLoss(5, 3, out_features=(2,), bias=True))
    outs = [m(lib.tensor(x).float(), lib.tensor(t3)) for m, lib in zip(mods, LIBS)]
    _close(outs[0], outs[1], 1e-6)
    assert mods[1].extra_repr() == mods[0].extra_repr()


# ============================================================================ small nn names
def test_nn_grad_conv_gradients():
    rng = np.random.default_rng(20)
    x, w = rng.standard_normal((2, 4, 7, 5)), rng.standard_normal((6, 2, 3, 2))
    gout = rng.standard_normal((2, 6, 4, 3))
    res = []
    for lib in LIBS:
        kw = {"stride": 2, "padding": 1, "groups": 2}
        go = lib.tensor(gout)
        res.append((lib.nn.grad.conv2d_input(x.shape, lib.tensor(w), go, **kw),
                    lib.nn.grad.conv2d_weight(lib.tensor(x), w.shape, go, **kw)))
    for p, q in zip(*res):
        _close(p, q)


def test_sync_batchnorm_container_factory_kwargs_attention():
    x = np.random.default_rng(21).standard_normal((4, 3, 2)).astype(np.float32)
    res = []
    for lib in LIBS:
        m = lib.nn.SyncBatchNorm(3)
        out = m(lib.tensor(x))
        res.append((out, m.running_mean, m.running_var))
        conv = lib.nn.SyncBatchNorm.convert_sync_batchnorm(
            lib.nn.Sequential(lib.nn.BatchNorm1d(3)))
        assert type(conv[0]).__name__ == "SyncBatchNorm"
        with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
            c = lib.nn.Container(a=lib.nn.ReLU())
        assert list(dict(c.named_children())) == ["a"]
        assert lib.nn.factory_kwargs({"dtype": 1, "factory_kwargs": {"device": "cpu"}}) == \
            {"device": "cpu", "dtype": 1}
        with lib.nn.attention.sdpa_kernel(lib.nn.attention.SDPBackend.MATH):
            pass
        assert issubclass(lib.nn.GRUCell, lib.nn.RNNCellBase)
    for p, q in zip(*res):
        _close(p, q, 1e-6)
    _raises_like(lambda lib: lib.nn.SyncBatchNorm(3)(lib.ones(3)))
    _raises_like(lambda lib: lib.nn.factory_kwargs({"dtype": 1, "factory_kwargs": {"dtype": 2}}))


def test_top_level_inplace_dropouts_and_rrelu():
    x = np.random.default_rng(22).standard_normal((3, 4, 2))
    for name, args in (("alpha_dropout_", (0.3, True)), ("feature_alpha_dropout_", (0.3, True)),
                       ("feature_dropout_", (0.3, True)), ("rrelu_", (0.1, 0.3, True))):
        outs = []
        for lib in LIBS:
            lib.manual_seed(1)
            t = lib.tensor(x)
            r = getattr(lib, name)(t, *args)
            assert r is t
            outs.append(t)
        _close(outs[0], outs[1], 1e-12)


@pytest.mark.parametrize("p,train", [(0.5, True), (0.5, False), (1.0, True), (0.0, True)])
def test_native_dropout(p, train):
    x = np.random.default_rng(23).standard_normal((3, 4))
    res = []
    for lib in LIBS:
        lib.manual_seed(0)
        t = lib.tensor(x, requires_grad=True)
        out, mask = lib.native_dropout(t, p, train)
        assert out.grad_fn.name() == "NativeDropoutBackward0" and mask.dtype == lib.bool
        g, = lib.autograd.grad((out * out).sum(), t, create_graph=True)
        res.append((out, mask, g))
    for a, b in zip(*res):
        np.testing.assert_array_equal(_np(b), _np(a))
