"""The fast forms of ndgrad.compile's generated code (ndgrad/_compile/fast.py) are bitwise
eager: relu into its input's buffer, relu's backward as a bit mask, the fused cross-entropy
backward; on ordinary values and on signed zeros, infinities and NaN, for float32 and float64,
with the fallbacks (ignored targets) and the cases the rules must leave alone.

Bitwise here means the same bytes, signed zeros included, with NaN at the same places (the
sign and payload of a NaN are not fixed even between eager's own kernels: NumPy's SIMD loops
and BLAS pick either operand's NaN).
"""

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad._compile import fast
from ndgrad._ops.pointwise import _threshold_bw_fwd

nn = ndgrad.nn
F = nn.functional


def _bytes_equal(a, b, what):
    assert a.dtype == b.dtype and a.shape == b.shape, what
    a, b = np.asarray(a), np.asarray(b)
    nan = np.isnan(a)
    assert (nan == np.isnan(b)).all(), f"{what}: NaN places {a!r} != {b!r}"
    assert a[~nan].tobytes() == b[~nan].tobytes(), f"{what}: {a!r} != {b!r}"


def _special(rng, shape, dtype):
    a = rng.standard_normal(shape).astype(dtype)
    flat = a.reshape(-1)
    k = flat.size
    picks = rng.choice(k, size=min(k, 12), replace=False)
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1e38, -1e38, 0.0, -0.0]
    flat[picks] = np.array(vals[:len(picks)], dtype)
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threshold", [0, 0.5, -1.0])
def test_threshold_backward_bit_mask_is_torchs(dtype, threshold):
    """The bit mask against torch's threshold_backward (``x <= threshold ? 0 : g``: a NaN x
    passes g through) and against eager ndgrad's kernel."""
    rng = np.random.default_rng(1)
    g = _special(rng, (7, 9), dtype)
    x = _special(rng, (7, 9), dtype)
    x[0, :4] = [threshold, np.nextafter(dtype(threshold), dtype(9)), -0.0, np.nan]
    g[0, 3] = -0.0   # a signed zero passed through at the NaN x
    kernel = fast._threshold_bw32 if dtype == np.float32 else fast._threshold_bw64
    got = kernel(g.copy(), x, threshold)
    want = torch.ops.aten.threshold_backward(torch.from_numpy(g), torch.from_numpy(x),
                                             threshold).numpy()
    _bytes_equal(got, want, "threshold_backward")
    _bytes_equal(got, _threshold_bw_fwd(g, x, threshold), "eager threshold_backward")


def _mlp(dtype, seed=0):
    ndgrad.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(),
                          nn.Linear(8, 5))
    return model.to(dtype)


def _step(fn, model, x, t, gscale):
    for p in model.parameters():
        p.grad = None
    x.grad = None
    loss = fn(x, t)
    loss.backward(ndgrad.tensor(gscale, dtype=loss.dtype))
    return [loss._data.copy(), x.grad._data.copy()] + \
        [p.grad._data.copy() for p in model.parameters()]


def _source(cf):
    (entry,) = [e for es in cf.cache.values() for e in es]
    return entry.region.forward.__source__, entry.region.backward.__source__


def _called(fn):
    """Names of the functions a generated program refers to."""
    return {getattr(v, "__qualname__", None) or getattr(v, "__name__", "")
            for v in fn.__globals__.values() if callable(v)}


@pytest.mark.parametrize("dtype", [ndgrad.float32, ndgrad.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_mlp_cross_entropy_fast_forms_bitwise(dtype, reduction):
    """Linear-ReLU x2 + cross-entropy: compiled (fast forms) and eager give the same bytes for
    the loss, the input's and every parameter's gradient, on special logits and output
    gradients (zero, negative zero, negative, infinite, NaN)."""
    model = _mlp(dtype)

    def loss_fn(x, t):
        return F.cross_entropy(model(x), t, reduction=reduction)

    cf = ndgrad.compile(loss_fn)
    rng = np.random.default_rng(3)
    npdt = np.float32 if dtype is ndgrad.float32 else np.float64
    for k, gscale in enumerate([1.0, -2.5, 0.0, -0.0, np.inf, np.nan, 3.0]):
        xa = rng.standard_normal((4, 6)).astype(npdt)
        if k >= 4:
            xa = _special(rng, (4, 6), npdt)
        t = ndgrad.tensor(rng.integers(0, 5, 4))
        got = _step(cf, model, ndgrad.tensor(xa, requires_grad=True), t, gscale)
        want = _step(loss_fn, model, ndgrad.tensor(xa, requires_grad=True), t, gscale)
        for j, (a, b) in enumerate(zip(got, want)):
            _bytes_equal(a, b, f"call {k} (grad {gscale}) value {j}")
    (entry,) = [e for es in cf.cache.values() for e in es]
    fwd, bwd = entry.region.forward, entry.region.backward
    assert "maximum" in _called(fwd) and ", out=" in fwd.__source__  # relu into its input
    names = _called(bwd)
    assert "_make_ce_backward.<locals>.kernel" in names
    assert {"_threshold_bw32", "_threshold_bw64"} & names
    assert not {n for n in names if "nll" in n or "log_softmax" in n}


def test_cross_entropy_fast_backward_is_taken_and_matches_torch():
    """The fused kernel is the one the program calls, and its values are torch's."""
    ndgrad.manual_seed(0)
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((6, 4)).astype(np.float32)
    t = rng.integers(0, 4, 6)
    cf = ndgrad.compile(lambda x, t: F.cross_entropy(x, t))
    for _ in range(2):
        x = ndgrad.tensor(logits, requires_grad=True)
        cf(x, ndgrad.tensor(t)).backward()
    (entry,) = [e for es in cf.cache.values() for e in es]
    kernels = [v for v in entry.region.backward.__globals__.values()
               if getattr(v, "__qualname__", "").startswith("_make_ce_backward")]
    assert len(kernels) == 1
    tx = torch.tensor(logits, requires_grad=True)
    torch.nn.functional.cross_entropy(tx, torch.tensor(t)).backward()
    np.testing.assert_allclose(x.grad._data, tx.grad.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("ignore_index", [-100, 2, 7])
def test_cross_entropy_ignored_targets_bitwise(ignore_index):
    """Targets equal to ignore_index: inside the classes the rule is not taken; outside (-100,
    7 > C) an ignored target makes the kernel fall back to the op's own kernels."""
    rng = np.random.default_rng(5)

    def f(x, t):
        return F.cross_entropy(x, t, ignore_index=ignore_index)

    cf = ndgrad.compile(f)
    for k in range(4):
        xa = rng.standard_normal((5, 4)).astype(np.float32)
        ta = rng.integers(0, 4, 5)
        if k >= 2 and ignore_index == -100:
            ta[1] = -100
        res = []
        for fn in (cf, f):
            x = ndgrad.tensor(xa, requires_grad=True)
            loss = fn(x, ndgrad.tensor(ta))
            loss.backward()
            res.append((loss._data, x.grad._data))
        for a, b in zip(*res):
            _bytes_equal(a, b, f"ignore_index {ignore_index} call {k}")


def test_relu_in_place_only_into_a_dead_temporary():
    """relu writes into a linear layer's output only when nothing else reads it: a returned
    or reused pre-activation keeps its values."""
    model = _mlp(ndgrad.float32)
    lin = model[0]

    def f(x):
        h = lin(x)
        return F.relu(h), h * 2

    cf = ndgrad.compile(f)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = ndgrad.tensor(rng.standard_normal((3, 6)).astype(np.float32))
        for a, b in zip(cf(x), f(x)):
            _bytes_equal(a._data, b._data, "relu and its input")
    fwd, _ = _source(cf)
    assert ", out=" not in fwd


def test_logits_returned_beside_the_loss_keep_their_values():
    """log_softmax writes into a linear output only when nothing else reads it: logits the
    region returns (or reuses) keep their values; the loss and gradients stay eager's."""
    model = _mlp(ndgrad.float64, seed=4)

    def f(x, t):
        logits = model(x)
        return F.cross_entropy(logits, t), logits

    cf = ndgrad.compile(f)
    rng = np.random.default_rng(4)
    for k in range(3):
        xa = rng.standard_normal((3, 6))
        t = ndgrad.tensor(rng.integers(0, 5, 3))
        res = []
        for fn in (cf, f):
            for p in model.parameters():
                p.grad = None
            loss, logits = fn(ndgrad.tensor(xa), t)
            (loss + logits.sum()).backward()
            res.append([loss._data, logits._data] + [p.grad._data for p in model.parameters()])
        for j, (a, b) in enumerate(zip(*res)):
            _bytes_equal(a, b, f"call {k} value {j}")


@pytest.mark.parametrize("bad", [5, -3])
def test_bad_targets_raise_eager_errors(bad):
    """A target past the classes, or negative and not ignore_index, raises eager's (torch's)
    IndexError from the compiled program as from eager, and nothing is left half done."""
    def f(x, t):
        return F.cross_entropy(x, t)

    cf = ndgrad.compile(f)
    rng = np.random.default_rng(6)
    xa = rng.standard_normal((4, 5)).astype(np.float32)
    ta = rng.integers(0, 5, 4)
    for _ in range(2):
        cf(ndgrad.tensor(xa, requires_grad=True), ndgrad.tensor(ta)).backward()
    ta[2] = bad
    msgs = []
    for fn in (cf, f, lambda x, t: torch.nn.functional.cross_entropy(x, t)):
        lib = torch if fn not in (cf, f) else ndgrad
        with pytest.raises(IndexError) as ei:
            fn(lib.tensor(xa, requires_grad=True), lib.tensor(ta))
        msgs.append(str(ei.value))
    assert msgs[0] == msgs[1] == msgs[2]


@pytest.mark.parametrize("frozen", ["weight", "bias", "input", "none"])
def test_linear_backward_inline_with_frozen_parts(frozen):
    """The inline linear backward computes only the wanted gradients; each one is eager's."""
    model = _mlp(ndgrad.float32, seed=7)
    lin = model[2]
    if frozen in ("weight", "bias"):
        getattr(lin, frozen).requires_grad_(False)

    def f(x):
        return model(x).tanh().sum()

    cf = ndgrad.compile(f)
    rng = np.random.default_rng(7)
    for k in range(3):
        xa = rng.standard_normal((4, 6)).astype(np.float32)
        res = []
        for fn in (cf, f):
            for p in model.parameters():
                p.grad = None
            x = ndgrad.tensor(xa, requires_grad=frozen != "input")
            fn(x).backward()
            res.append([None if x.grad is None else x.grad._data] +
                       [None if p.grad is None else p.grad._data for p in model.parameters()])
        for j, (a, b) in enumerate(zip(*res)):
            assert (a is None) == (b is None), j
            if a is not None:
                _bytes_equal(a, b, f"{frozen} call {k} value {j}")
