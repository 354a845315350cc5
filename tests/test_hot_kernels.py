"""Fast forms of hot kernels (issue 26's real-model profiles) give torch's numbers bitwise:
each is compared with torch 2.13 over ordinary values and the special ones (zeros of both
signs, infinities, NaN, subnormals, huge and tiny magnitudes)."""

import numpy as np
import pytest
import torch

import ndgrad


def _values(dtype, n=20000, seed=0):
    rng = np.random.RandomState(seed)
    fi = np.finfo(dtype)
    x = np.concatenate([
        rng.randn(n) * 3,
        rng.randn(n) * 1e-20,
        rng.randn(200) * float(fi.max) ** 0.5,
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, float(fi.tiny), -float(fi.tiny),
                  float(fi.smallest_subnormal), float(fi.max), -float(fi.max), 1.0, -1.0]),
    ])
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("e", [3.0, 3, -2.0, -2, 2.0, 2])
def test_pow_scalar_matches_torch_bitwise(dtype, e):
    """The exponents torch's CPU kernel multiplies for (minGPT's tanh GELU takes x ** 3)."""
    x = _values(dtype)
    want = torch.pow(torch.tensor(x), e).numpy()
    got = ndgrad.pow(ndgrad.tensor(x), e).numpy()
    np.testing.assert_array_equal(got, want)
    # 0-d too
    w0 = torch.pow(torch.tensor(x[3]), e).numpy()
    np.testing.assert_array_equal(ndgrad.pow(ndgrad.tensor(x[3]), e).numpy(), w0)


@pytest.mark.parametrize("e", [3.0, 3])
def test_pow_scalar_backward_matches_torch(e):
    x = _values(np.float32)[:20000]
    x = x[x != 0]
    g = np.random.RandomState(1).randn(x.size).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    torch.pow(tx, e).backward(torch.tensor(g))
    nx = ndgrad.tensor(x, requires_grad=True)
    ndgrad.pow(nx, e).backward(ndgrad.tensor(g))
    np.testing.assert_array_equal(nx.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("shape", [(64, 24, 24, 64), (32, 26, 26, 64), (7, 5, 3, 17),
                                   (3, 700, 300), (16, 10, 10, 256), (40, 40, 40, 1000)])
def test_conv_batch_to_front_is_the_plain_transpose(shape):
    """conv's blocked (C, *S, N) -> (N, C, *S) copy equals NumPy's plain one (which it
    replaces above 1 MB), shapes with a partial last block included."""
    from ndgrad._ops.conv_pool import _batch_to_front
    a = np.random.RandomState(0).rand(*shape).astype(np.float32)
    got = _batch_to_front(a)
    assert got.flags.c_contiguous
    np.testing.assert_array_equal(got, np.ascontiguousarray(np.moveaxis(a, -1, 0)))


def test_mnist_conv_step_matches_torch():
    """The MNIST CNN's second convolution (32 -> 64 channels, 3x3, batch 64: the blocked
    copies' case), forward and both gradients, against torch (float32 GEMM sums: close)."""
    rng = np.random.RandomState(0)
    x = rng.randn(64, 32, 26, 26).astype(np.float32)
    w = (rng.randn(64, 32, 3, 3) * 0.05).astype(np.float32)
    g = rng.randn(64, 64, 24, 24).astype(np.float32)
    res = []
    for tm in (torch, ndgrad):
        tx, tw = tm.tensor(x, requires_grad=True), tm.tensor(w, requires_grad=True)
        out = tm.nn.functional.conv2d(tx, tw)
        out.backward(tm.tensor(g))
        res.append([out.detach().numpy(), tx.grad.numpy(), tw.grad.numpy()])
    for a, b in zip(*res):
        # float32 sums of up to 36864 products in different orders: relative to the scale
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=2e-5 * np.abs(a).max())


_ACTIVATIONS = {
    "gelu": lambda F, x: F.gelu(x), "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "elu": lambda F, x: F.elu(x, 0.7), "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, 1.3), "leaky_relu": lambda F, x: F.leaky_relu(x, 0.02),
    "hardtanh": lambda F, x: F.hardtanh(x, -2.0, 3.0), "softplus": lambda F, x: F.softplus(x),
    "silu": lambda F, x: F.silu(x), "mish": lambda F, x: F.mish(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x), "hardswish": lambda F, x: F.hardswish(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
}


def _act_run(name, x, g):
    t = ndgrad.tensor(x, requires_grad=True)
    y = _ACTIVATIONS[name](ndgrad.nn.functional, t)
    y.backward(ndgrad.tensor(g))
    return y.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(_ACTIVATIONS))
def test_blockwise_activation_equals_declaration(name, dtype, monkeypatch):
    """The activations' kernels run block by block (activations._blockwise); forward and
    backward give the declared formula's bits (the blocks switched off), on an array of
    several blocks with a partial last one, specials included; and torch's values."""
    from ndgrad._ops import activations
    x = _values(dtype, n=25000)[:50211].reshape(-1, 3)[:, :2].copy()   # 33,474 values
    g = np.random.RandomState(2).randn(*x.shape).astype(dtype)
    fast = _act_run(name, x, g)
    monkeypatch.setattr(activations, "_BLOCK", 10 ** 12)
    decl = _act_run(name, x, g)
    for a, b in zip(fast, decl):
        np.testing.assert_array_equal(a, b)
    tx = torch.tensor(x, requires_grad=True)
    ty = _ACTIVATIONS[name](torch.nn.functional, tx)
    ty.backward(torch.tensor(g))
    ok = np.abs(x) < 50
    # (torch's float32 exact GELU is off by up to ~1e-6 absolute below -1: its erf's
    # cancellation in 1 + erf)
    np.testing.assert_allclose(fast[0][ok], ty.detach().numpy()[ok], rtol=2e-6, atol=3e-6)


@pytest.mark.parametrize("p", [0.0, 1.0, 0.9, 0.5, 0.75, 0.1, 2.0 ** -53, 1 - 2.0 ** -53,
                               0.3, 0.123456789, 3 * 2.0 ** -30])
def test_bernoulli_on_words_equals_uniform_comparison(p):
    """bernoulli's scalar-p mask from the raw words (integer comparisons) equals the
    declaration, a 53-bit uniform compared with p, on the same draws; crafted words hit the
    tie branch (the high 21 bits equal to p's)."""
    from ndgrad._random import Generator
    a, b = Generator().manual_seed(7), Generator().manual_seed(7)
    n = 50001
    np.testing.assert_array_equal(a._u53_below(n, p), b._u53(n) < p)
    t = int(np.ceil(p * 2.0 ** 53))
    th, tl = t >> 32, t & 0xFFFFFFFF
    if th <= 0x1FFFFF:
        rng = np.random.RandomState(0)
        words = rng.randint(0, 2 ** 32, size=2 * 64, dtype=np.uint64).astype(np.uint32)
        words[0::2] = (words[0::2] & np.uint32(0xFFE00000)) | np.uint32(th)  # ties
        words[1::4] = np.uint32(tl)                                         # equal too
        words[3::8] = np.uint32(max(tl - 1, 0))
        c, d = Generator(), Generator()
        c._words = lambda m: words[:m].copy()
        d._words = lambda m: words[:m].copy()
        np.testing.assert_array_equal(c._u53_below(64, p), d._u53(64) < p)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dropout_matches_torch_bitwise(dtype):
    x = np.random.RandomState(0).randn(12, 64, 513)
    for p in (0.1, 0.5, 0.2):
        torch.manual_seed(3)
        want = torch.nn.functional.dropout(torch.tensor(x, dtype=dtype), p).numpy()
        ndgrad.manual_seed(3)
        nd_dtype = ndgrad.float32 if dtype == torch.float32 else ndgrad.float64
        got = ndgrad.nn.functional.dropout(ndgrad.tensor(x, dtype=nd_dtype), p).numpy()
        np.testing.assert_array_equal(got, want)


def _adam_run(cls, kwargs, shapes, steps=4):
    rng = np.random.RandomState(0)
    params = [ndgrad.nn.Parameter(ndgrad.tensor(rng.randn(*s).astype(np.float32)))
              for s in shapes]
    opt = cls(params, **kwargs)
    for i in range(steps):
        for p in params:
            p.grad = ndgrad.tensor(rng.randn(*p.shape).astype(np.float32))
        opt.step()
    return [p.detach().numpy().copy() for p in params] + \
        [opt.state[p][k]._data.copy() for p in params for k in sorted(opt.state[p])]


@pytest.mark.parametrize("cls,kwargs", [
    ("Adam", {}), ("Adam", {"weight_decay": 0.1}), ("Adam", {"amsgrad": True}),
    ("AdamW", {"weight_decay": 0.1, "betas": (0.9, 0.95)}), ("Adam", {"maximize": True}),
    ("Adadelta", {"lr": 1.0}), ("Adadelta", {"weight_decay": 0.01})])
def test_blockwise_adam_equals_whole_arrays(cls, kwargs, monkeypatch):
    """Adam's (and Adadelta's) update on blocks of large parameters (optim._kernels.blocks) gives the bits of
    the update on whole arrays, over several steps; sizes straddle the block edges (the
    exact-fma threshold included) and the VAE's 784x400 weight."""
    from ndgrad.optim import _kernels
    shapes = [(400, 784), (49152,), (49153,), (3, 16384), (32767,), (1000,), (7,)]
    opt_cls = getattr(ndgrad.optim, cls)
    fast = _adam_run(opt_cls, kwargs, shapes)
    monkeypatch.setattr(_kernels, "BLOCK", 10 ** 12)
    whole = _adam_run(opt_cls, kwargs, shapes)
    assert len(fast) == len(whole)
    for a, b in zip(fast, whole):
        np.testing.assert_array_equal(a, b)


def test_blockwise_adam_matches_torch():
    rng = np.random.RandomState(1)
    w0 = rng.randn(400, 784).astype(np.float32)
    grads = [rng.randn(400, 784).astype(np.float32) for _ in range(3)]
    out = []
    for tm in (torch, ndgrad):
        p = tm.nn.Parameter(tm.tensor(w0.copy()))
        opt = tm.optim.AdamW([p], lr=1e-2, weight_decay=0.1)
        for g in grads:
            p.grad = tm.tensor(g)
            opt.step()
        out.append(p.detach().numpy())
    # (the large-tensor fma rounds twice: within an ulp or so of torch's fused one)
    np.testing.assert_allclose(out[1], out[0], rtol=1e-6, atol=1e-7)
