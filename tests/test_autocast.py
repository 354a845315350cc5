"""Autocast's casting policy on the CPU, differential against torch 2.13's
``torch.autocast("cpu", dtype=torch.float16)``: output dtypes and values of the listed ops, an
MLP's forward and backward, nesting, disabling, and state restored after an exception."""

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad.amp import _policy
from tests._diff import assert_same, to_np

LIBS = {"ndgrad": ndgrad, "torch": torch}
RNG = np.random.default_rng(0)


def _a(*shape, dtype=np.float32, spd=False, positive=False):
    x = RNG.standard_normal(shape).astype(dtype)
    if spd:
        x = (x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)
    if positive:
        x = (np.abs(x) + 0.1).astype(dtype)
    return x


def _run(lib, fn, arrays, region=True):
    ts = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
    F = lib.nn.functional
    if region:
        with lib.autocast("cpu", dtype=lib.float16):
            return fn(lib, F, *ts)
    return fn(lib, F, *ts)


def _same(fn, arrays, rtol, atol):
    a = to_np(_run(ndgrad, fn, arrays))
    b = to_np(_run(torch, fn, arrays))
    assert_same(a, b, rtol=rtol, atol=atol)


f32, f16 = np.float32, np.float16
# (id, fn(lib, F, *tensors), inputs): lower-precision ops get float32 inputs (cast to float16)
LOWER = [
    ("mm", lambda t, F, a, b: t.mm(a, b), [_a(3, 4), _a(4, 5)]),
    ("Tensor.mm", lambda t, F, a, b: a.mm(b), [_a(3, 4), _a(4, 5)]),
    ("bmm", lambda t, F, a, b: t.bmm(a, b), [_a(2, 3, 4), _a(2, 4, 5)]),
    ("matmul", lambda t, F, a, b: t.matmul(a, b), [_a(2, 3, 4), _a(4, 5)]),
    ("@", lambda t, F, a, b: a @ b, [_a(3, 4), _a(4)]),
    ("addmm", lambda t, F, c, a, b: t.addmm(c, a, b), [_a(3, 5), _a(3, 4), _a(4, 5)]),
    ("Tensor.addmm", lambda t, F, c, a, b: c.addmm(a, b, beta=0.5), [_a(3, 5), _a(3, 4),
                                                                     _a(4, 5)]),
    ("addbmm", lambda t, F, c, a, b: t.addbmm(c, a, b), [_a(3, 5), _a(2, 3, 4), _a(2, 4, 5)]),
    ("baddbmm", lambda t, F, c, a, b: t.baddbmm(c, a, b), [_a(2, 3, 5), _a(2, 3, 4),
                                                           _a(2, 4, 5)]),
    ("linear", lambda t, F, x, w, b: F.linear(x, w, b), [_a(3, 4), _a(5, 4), _a(5)]),
    ("conv1d", lambda t, F, x, w, b: F.conv1d(x, w, b, padding=1), [_a(2, 3, 7), _a(4, 3, 3),
                                                                    _a(4)]),
    ("conv2d", lambda t, F, x, w: t.conv2d(x, w, stride=2), [_a(1, 2, 6, 6), _a(3, 2, 3, 3)]),
    ("conv_transpose1d", lambda t, F, x, w: F.conv_transpose1d(x, w), [_a(2, 3, 5),
                                                                       _a(3, 2, 3)]),
    ("conv_transpose2d", lambda t, F, x, w: F.conv_transpose2d(x, w, stride=2),
     [_a(1, 2, 4, 4), _a(2, 3, 3, 3)]),
    ("prelu", lambda t, F, x, w: F.prelu(x, w), [_a(2, 3, 4), _a(3)]),
    ("scaled_dot_product_attention", lambda t, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
     [_a(2, 3, 4), _a(2, 5, 4), _a(2, 5, 4)]),
    ("linalg.vecdot", lambda t, F, a, b: t.linalg.vecdot(a, b), [_a(3, 4), _a(3, 4)]),
]

_cls = RNG.integers(0, 4, size=5)
# float32-list ops get float16 inputs (cast to float32)
FP32 = [
    ("mse_loss", lambda t, F, a, b: F.mse_loss(a, b), [_a(5, 4, dtype=f16), _a(5, 4, dtype=f16)]),
    ("l1_loss", lambda t, F, a, b: F.l1_loss(a, b), [_a(5, 4, dtype=f16), _a(5, 4, dtype=f16)]),
    ("smooth_l1_loss", lambda t, F, a, b: F.smooth_l1_loss(a, b),
     [_a(5, 4, dtype=f16), _a(5, 4, dtype=f16)]),
    ("huber_loss", lambda t, F, a, b: F.huber_loss(a, b, delta=0.5),
     [_a(5, 4, dtype=f16), _a(5, 4, dtype=f16)]),
    ("nll_loss", lambda t, F, a, y: F.nll_loss(a, t.tensor(_cls)), [_a(5, 4, dtype=f16), None]),
    ("cross_entropy", lambda t, F, a, y: F.cross_entropy(a, t.tensor(_cls)),
     [_a(5, 4, dtype=f16), None]),
    ("binary_cross_entropy", lambda t, F, p, y: F.binary_cross_entropy(t.sigmoid(p), y),
     [_a(6, dtype=f16), (RNG.random(6) > 0.5).astype(f16)]),
    ("binary_cross_entropy_with_logits",
     lambda t, F, p, y: F.binary_cross_entropy_with_logits(p, y),
     [_a(6, dtype=f16), (RNG.random(6) > 0.5).astype(f16)]),
    ("kl_div", lambda t, F, a, b: F.kl_div(a, b, reduction="batchmean"),
     [_a(5, 4, dtype=f16), _a(5, 4, dtype=f16, positive=True)]),
    ("soft_margin_loss", lambda t, F, a, b: F.soft_margin_loss(a, t.sign(b)),
     [_a(6, dtype=f16), _a(6, dtype=f16)]),
    ("margin_ranking_loss", lambda t, F, a, b, y: F.margin_ranking_loss(a, b, t.sign(y)),
     [_a(6, dtype=f16), _a(6, dtype=f16), _a(6, dtype=f16)]),
    ("cosine_embedding_loss", lambda t, F, a, b: F.cosine_embedding_loss(
        a, b, t.tensor([1, -1, 1])), [_a(3, 4, dtype=f16), _a(3, 4, dtype=f16)]),
    ("poisson_nll_loss", lambda t, F, a, b: F.poisson_nll_loss(a, b),
     [_a(6, dtype=f16), _a(6, dtype=f16, positive=True)]),
    ("cdist", lambda t, F, a, b: t.cdist(a, b), [_a(3, 4, dtype=f16), _a(5, 4, dtype=f16)]),
    ("prod", lambda t, F, a: t.prod(a, 1), [_a(3, 4, dtype=f16)]),
    ("Tensor.prod", lambda t, F, a: a.prod(), [_a(5, dtype=f16)]),
    ("trace", lambda t, F, a: t.trace(a), [_a(4, 4, dtype=f16)]),
    ("inverse", lambda t, F, a: t.inverse(a), [_a(3, 3, dtype=f16, spd=True)]),
    ("cholesky", lambda t, F, a: t.linalg.cholesky(a), [_a(3, 3, dtype=f16, spd=True)]),
    ("linalg.inv", lambda t, F, a: t.linalg.inv(a), [_a(3, 3, dtype=f16, spd=True)]),
    ("linalg.solve", lambda t, F, a, b: t.linalg.solve(a, b),
     [_a(3, 3, dtype=f16, spd=True), _a(3, 2, dtype=f16)]),
    ("linalg.eigvalsh", lambda t, F, a: t.linalg.eigvalsh(a), [_a(3, 3, dtype=f16, spd=True)]),
    ("linalg.svdvals", lambda t, F, a: t.linalg.svdvals(a), [_a(4, 3, dtype=f16)]),
    ("fft.fft", lambda t, F, a: t.fft.fft(a), [_a(8, dtype=f16)]),
    ("fft.rfft", lambda t, F, a: t.fft.rfft(a), [_a(8, dtype=f16)]),
    ("fft.irfft", lambda t, F, a: t.fft.irfft(a), [_a(8, dtype=f16)]),
]
# ops of neither list run in their inputs' dtypes (float16 stays float16, float32 stays)
OTHER = [
    ("add", lambda t, F, a, b: a + b, [_a(3, dtype=f16), _a(3, dtype=f16)]),
    ("relu", lambda t, F, a: F.relu(a), [_a(3, 4)]),
    ("softmax", lambda t, F, a: t.softmax(a, 1), [_a(3, 4, dtype=f16)]),
    ("sum", lambda t, F, a: a.sum(), [_a(3, 4)]),
    ("cat", lambda t, F, a, b: t.cat([a, b]), [_a(3, dtype=f16), _a(2)]),
    ("stack", lambda t, F, a, b: t.stack([a, b]), [_a(3, dtype=f16), _a(3)]),
]


@pytest.mark.parametrize("name,fn,arrays", LOWER, ids=[c[0] for c in LOWER])
def test_lower_precision_ops_run_in_float16(name, fn, arrays):
    out = _run(ndgrad, fn, arrays)
    assert out.dtype is ndgrad.float16
    _same(fn, arrays, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name,fn,arrays", FP32, ids=[c[0] for c in FP32])
def test_float32_ops_run_in_float32(name, fn, arrays):
    out = _run(ndgrad, fn, arrays)
    assert out.dtype in (ndgrad.float32, ndgrad.complex64)
    _same(fn, arrays, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,fn,arrays", OTHER, ids=[c[0] for c in OTHER])
def test_other_ops_keep_their_dtypes(name, fn, arrays):
    _same(fn, arrays, rtol=1e-3, atol=1e-3)


def test_float64_and_integer_inputs_are_not_cast():
    a64, b64 = _a(3, 4, dtype=np.float64), _a(4, 2, dtype=np.float64)
    _same(lambda t, F, a, b: t.mm(a, b), [a64, b64], rtol=1e-12, atol=1e-12)
    _same(lambda t, F, a, b: F.mse_loss(a, b), [a64, a64], rtol=1e-12, atol=1e-12)
    ai = RNG.integers(-3, 3, (3, 4)).astype(np.int64)
    _same(lambda t, F, a: t.prod(a), [ai], rtol=0, atol=0)


def test_mixed_dtypes_in_a_lower_precision_op():
    _same(lambda t, F, a, b: t.matmul(a, b), [_a(3, 4, dtype=f16), _a(4, 2)], 1e-2, 1e-2)


def _mlp(lib, seed_arrays, x, y):
    w1, b1, w2, b2 = (lib.tensor(a, requires_grad=True) for a in seed_arrays)
    F = lib.nn.functional
    with lib.autocast("cpu", dtype=lib.float16):
        h = F.relu(F.linear(lib.tensor(x), w1, b1))
        out = F.linear(h, w2, b2)
        loss = F.mse_loss(out, lib.tensor(y))
    loss.backward()
    names = [h.grad_fn.name(), out.grad_fn.name(), loss.grad_fn.name()]
    return (out.dtype, loss.dtype, names, to_np(out), to_np(loss),
            [to_np(p.grad) for p in (w1, b1, w2, b2)], [p.grad.dtype for p in (w1, b1, w2, b2)])


def test_mlp_forward_and_backward():
    params = [_a(8, 4), _a(8), _a(3, 8), _a(3)]
    x, y = _a(6, 4), _a(6, 3)
    a, b = _mlp(ndgrad, params, x, y), _mlp(torch, params, x, y)
    assert str(a[0]) == str(b[0]) == "torch.float16"
    assert str(a[1]) == str(b[1]) == "torch.float32"
    assert a[2] == b[2]
    assert_same(a[3], b[3], rtol=1e-2, atol=1e-2)
    assert_same(a[4], b[4], rtol=1e-2, atol=1e-2)
    assert_same(a[5], b[5], rtol=2e-2, atol=2e-2)
    assert [str(d) for d in a[6]] == [str(d) for d in b[6]] == ["torch.float32"] * 4


def test_modules_follow_the_policy():
    def fn(lib, F, x):
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 3)
        conv = lib.nn.Conv1d(1, 2, 3)
        with lib.autocast("cpu", dtype=lib.float16):
            return lin(x).dtype, conv(x.unsqueeze(1)).dtype
    assert [str(d) for d in fn(ndgrad, None, ndgrad.tensor(_a(2, 4)))] == \
        [str(d) for d in fn(torch, None, torch.tensor(_a(2, 4)))] == ["torch.float16"] * 2


def _nesting(lib):
    a, b = lib.tensor(_a(2, 3)), lib.tensor(_a(3, 2))
    seen = []
    with lib.autocast("cpu", dtype=lib.float16):
        seen.append(lib.mm(a, b).dtype)
        with lib.autocast("cpu", enabled=False):
            seen.append(lib.mm(a, b).dtype)
            seen.append(lib.is_autocast_enabled("cpu"))
            with lib.autocast("cpu", dtype=lib.float16):
                seen.append(lib.mm(a, b).dtype)
            seen.append(lib.mm(a, b).dtype)
        seen.append(lib.mm(a, b).dtype)
        with lib.amp.autocast("cpu", dtype=lib.float16):
            seen.append(lib.mm(a, b).dtype)
        seen.append(lib.mm(a, b).dtype)
    seen.append(lib.mm(a, b).dtype)
    seen.append(lib.is_autocast_enabled("cpu"))
    return [str(s) for s in seen]


def test_nesting_and_disabling():
    assert _nesting(ndgrad) == _nesting(torch)


def test_decorator_and_deprecated_spelling():
    def run(lib):
        @lib.autocast("cpu", dtype=lib.float16)
        def f(a, b):
            return lib.mm(a, b)
        a, b = lib.tensor(_a(2, 3)), lib.tensor(_a(3, 2))
        with pytest.warns(FutureWarning):
            ctx = lib.cpu.amp.autocast(dtype=lib.float16)
        with ctx:
            inner = lib.mm(a, b).dtype
        return str(f(a, b).dtype), str(inner)
    assert run(ndgrad) == run(torch) == ("torch.float16", "torch.float16")


def test_default_bfloat16_region_stays_disabled():
    a, b = ndgrad.tensor(_a(2, 3)), ndgrad.tensor(_a(3, 2))
    with pytest.warns(UserWarning, match="bfloat16"):
        ctx = ndgrad.autocast("cpu")
    with ctx:
        assert not ndgrad.is_autocast_enabled("cpu")
        assert ndgrad.mm(a, b).dtype is ndgrad.float32


def test_state_restored_after_an_exception():
    for lib in (ndgrad, torch):
        a = lib.tensor(_a(2, 3))
        with pytest.raises(RuntimeError), lib.autocast("cpu", dtype=lib.float16):
            lib.mm(a, a)  # shape mismatch raises inside the region
        assert not lib.is_autocast_enabled("cpu")
        assert lib.mm(a, a.t()).dtype is lib.float32
    # an op raising inside the region leaves the region enabled for the next op
    a = ndgrad.tensor(_a(2, 3))
    with ndgrad.autocast("cpu", dtype=ndgrad.float16):
        with pytest.raises(RuntimeError):
            ndgrad.mm(a, a)
        assert ndgrad.is_autocast_enabled("cpu")
        assert ndgrad.mm(a, a.t()).dtype is ndgrad.float16


def test_cast_is_differentiable_to_the_original_dtype():
    xa, xb = _a(2, 3), _a(3, 2)

    def run(lib):
        a = lib.tensor(xa, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.float16):
            out = lib.mm(a, lib.tensor(xb))
        out.float().sum().backward()
        return str(a.grad.dtype), to_np(a.grad), out.grad_fn.next_functions[0][0].name()
    x, y = run(ndgrad), run(torch)
    assert x[0] == y[0] == "torch.float32" and x[2] == y[2] == "ToCopyBackward0"
    assert_same(x[1], y[1], rtol=1e-2, atol=1e-2)


def test_cache_enabled_is_accepted():
    a = ndgrad.tensor(_a(2, 3))
    with ndgrad.autocast("cpu", dtype=ndgrad.float16, cache_enabled=False):
        assert ndgrad.mm(a, a.t()).dtype is ndgrad.float16


def test_covered_functions_are_the_listed_ones():
    cov = _policy.covered()
    assert cov["ndgrad.nn.functional"]["linear"] == "lower"
    assert cov["ndgrad.nn.functional"]["cross_entropy"] == "fp32"
    assert ndgrad.nn.functional.linear.__name__ == "linear"
    # every wrapped name that torch also lists behaves as torch's under autocast (dtype check)
    tested = {c[0].split(".")[-1] for c in LOWER + FP32}
    assert {"mm", "bmm", "matmul", "addmm", "addbmm", "baddbmm", "linear", "conv1d", "conv2d",
            "conv_transpose1d", "conv_transpose2d", "prelu", "scaled_dot_product_attention",
            "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss",
            "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
            "kl_div", "cdist", "prod", "trace", "inverse"} <= tested


def _custom_fwd_run(lib, cast_inputs, xa, xb):
    seen = []

    class MyMM(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, a, b):
            seen.append((str(a.dtype), str(b.dtype), lib.is_autocast_enabled("cpu")))
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            seen.append(lib.is_autocast_enabled("cpu"))
            return g.mm(b.t()), a.t().mm(g)

    a = lib.tensor(xa, requires_grad=True)
    with lib.autocast("cpu", dtype=lib.float16):
        out = MyMM.apply(a, lib.tensor(xb))
    out.sum().backward()
    return seen, str(out.dtype), str(a.grad.dtype), to_np(out)


@pytest.mark.parametrize("cast", [None, "float32", "float16"])
def test_custom_fwd_and_custom_bwd(cast):
    xa, xb = _a(2, 3, dtype=f16), _a(3, 2)
    a = _custom_fwd_run(ndgrad, cast and getattr(ndgrad, cast), xa, xb)
    b = _custom_fwd_run(torch, cast and getattr(torch, cast), xa, xb)
    assert a[:3] == b[:3]
    assert_same(a[3], b[3], rtol=1e-2, atol=1e-2)
