"""The samplers torch runs in dedicated CPU kernels (``_standard_gamma``, ``poisson``,
``_sample_dirichlet``), driven by ndgrad's default generator, and the implicit
reparameterisation gradient of the gamma sample.

Gamma draws follow torch's kernel element by element in C order (Marsaglia-Tsang with
torch's double uniforms and cached double normals, the ``alpha < 1`` boost, the result
clamped to the dtype's smallest normal), so the stream equals torch's after the same seed.
Kernels read the generator's uniforms through ``_Draws``, which draws them in blocks and
afterwards rewinds the generator and advances it by exactly what was used (restoring it
untouched if the kernel raises).
The Poisson sampler (product of uniforms below rate 10, Hormann's transformed rejection
above, one double uniform per step) gives torch's stream too, and so does the binomial one
(inversion or BTRS, as torch's kernel). ``poisson`` and ``binomial`` are torch's top-level
functions on them (their recorded nodes live with the random fills in ``_ops``).

The gradient of a gamma sample ``x`` with respect to its concentration ``a`` is
``dx/da = -(dP(a, x)/da) / p(x; a)`` (implicit differentiation of the CDF ``P`` held fixed);
``dP/da`` is a central difference of ndgrad's float64 incomplete gamma, which is accurate
to about 1e-8 relative, well inside torch's own approximation error. The Dirichlet (and
Beta) gradient follows torch's ``_dirichlet_grad`` convention: ``dx/dalpha`` of the marginal
``Beta(alpha, total - alpha)`` at fixed ``total - alpha``, over ``1 - x``, from a central
difference of the incomplete beta (its continued fraction, in float64)."""

import math
import warnings

import numpy as np

import ndgrad as torch
from ndgrad import _random, _state
from ndgrad._ops import random_fills as _RF
from ndgrad._ops.bessel import igamma, igammac

_THIRD_F32 = float(np.float32(1.0) / np.float32(3.0))
_C0331_F32 = float(np.float32(0.0331))


def _gen():
    return _random.default_generator


class _Draws:
    """The generator's double uniforms and cached double normals for one kernel call, read
    from blocks drawn ahead. ``commit`` rewinds the generator and advances it by exactly
    what was consumed (so the next call continues torch's stream); ``abort`` restores it."""

    _BLOCK = 2048

    def __init__(self, g):
        self.g = g
        self.state = g.get_state()
        self.next_double = g._next_double
        self.buf, self.pos, self.used = [], 0, 0

    def uniform(self):
        if self.pos == len(self.buf):
            self.buf, self.pos = self.g._u53(self._BLOCK).tolist(), 0
        self.pos += 1
        self.used += 1
        return self.buf[self.pos - 1]

    def normal(self):
        # torch's normal_distribution<double>: Box-Muller, the sine half cached
        if self.next_double is not None:
            ret, self.next_double = self.next_double, None
            return ret
        u1, u2 = self.uniform(), self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self.next_double = r * math.sin(theta)
        return r * math.cos(theta)

    def commit(self):
        self.g.set_state(self.state)
        self.g._u53(self.used)
        self.g._next_double = self.next_double

    def abort(self):
        self.g.set_state(self.state)


def _run(kernel, values, generator=None):
    """``kernel(v, draws)`` for each value in C order, as one generator transaction."""
    draws = _Draws(generator if generator is not None else _gen())
    try:
        out = [kernel(v, draws) for v in values]
    except BaseException:
        draws.abort()
        raise
    draws.commit()
    return out


def _gamma_one(alpha, is_f32, draws):
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        inv = float(np.float32(1.0) / np.float32(alpha)) if is_f32 else 1.0 / alpha
        scale *= math.pow(1.0 - draws.uniform(), inv)
        alpha = float(np.float32(alpha) + np.float32(1.0)) if is_f32 else alpha + 1.0
    d = float(np.float32(alpha) - np.float32(_THIRD_F32)) if is_f32 else alpha - _THIRD_F32
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = draws.normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - draws.uniform()
        xx = x * x
        if u < 1.0 - _C0331_F32 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def standard_gamma_array(alpha, generator=None):
    """Gamma(alpha, 1) draws for a float array ``alpha`` (torch's ``_standard_gamma``)."""
    is_f32 = alpha.dtype != np.float64
    flat = np.ascontiguousarray(alpha).reshape(-1).tolist()
    out = np.array(_run(lambda a, d: _gamma_one(a, is_f32, d), flat, generator),
                   dtype=np.float64)
    out = out.astype(alpha.dtype)
    return np.maximum(out, np.finfo(alpha.dtype).tiny).reshape(alpha.shape)


def dirichlet_array(alpha, generator=None):
    """Dirichlet draws: gamma draws normalised over the last dim (``_sample_dirichlet``)."""
    gam = standard_gamma_array(alpha.astype(np.float64), generator).astype(np.float64)
    out = gam / gam.sum(-1, keepdims=True)
    tiny = np.finfo(alpha.dtype).tiny
    return np.clip(out.astype(alpha.dtype), tiny, 1 - np.finfo(alpha.dtype).eps / 2)


def _poisson_one(lam, draws):
    if lam >= 10.0:
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            U = draws.uniform() - 0.5
            V = draws.uniform()
            us = 0.5 - abs(U)
            k = math.floor((2 * a / us + b) * U + lam + 0.43)
            if us >= 0.07 and V <= vr:
                return k
            if k < 0 or (us < 0.013 and V > us):
                continue
            if (math.log(V) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1)):
                return k
    if lam == 0.0:
        return 0.0
    enlam = math.exp(-lam)
    k, prod = 0, 1.0
    while True:
        prod *= draws.uniform()
        if prod > enlam:
            k += 1
        else:
            return k


def poisson_array(rate, generator=None):
    flat = np.ascontiguousarray(rate).reshape(-1).tolist()
    out = np.array(_run(_poisson_one, flat, generator), dtype=np.float64)
    return out.astype(rate.dtype).reshape(rate.shape)


# ----------------------------------------------------------------------------- binomial
# torch's sample_binomial (after TensorFlow's): inversion by geometric jumps below
# count * min(p, 1 - p) = 10, Hormann's BTRS above. `f` rounds to the kernel's scalar type
# where torch computes in it (float32 for float32 input), double uniforms throughout.
_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    if k <= 9:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(count, prob, f, draws):
    logprob = f(math.log1p(-prob))
    geom_sum, num = 0.0, 0.0
    while True:
        u = draws.uniform()
        geom = math.ceil(math.log(u) / logprob) if u > 0 else math.inf
        geom_sum += geom
        if geom_sum > count:
            return num
        num = f(num + 1)


def _btrs(count, prob, f, draws):
    stddev = f(math.sqrt(f(f(count * prob) * f(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = f(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    r = f(prob / f(1 - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(f(f(count + 1) * prob))
    while True:
        u = draws.uniform() - 0.5
        v = draws.uniform()
        us = 0.5 - abs(u)
        k = f(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b)) if v > 0 else -math.inf
        bound = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                 + f(count + 1) * math.log((count - m + 1) / f(f(count - k) + 1))
                 + (k + 0.5) * math.log(r * f(f(count - k) + 1) / f(k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(f(count - k)))
        if v <= bound:
            return k


def _binomial_one(count, prob, f, draws):
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if f(count * prob) >= 10.0:
            return _btrs(count, prob, f, draws)
        return _binomial_inversion(count, prob, f, draws)
    if prob > 0.5:
        q = f(1.0 - prob)
        if f(count * q) >= 10.0:
            return f(count - _btrs(count, q, f, draws))
        return f(count - _binomial_inversion(count, q, f, draws))
    return math.nan


def binomial_array(count, prob, generator=None):
    """Binomial(count, prob) draws, element by element in C order (torch's ``binomial``)."""
    if count.dtype == np.float64:
        f = float
    else:
        def f(v):
            return float(np.float32(v))
    pairs = list(zip(np.ascontiguousarray(count).reshape(-1).tolist(),
                     np.ascontiguousarray(prob).reshape(-1).tolist()))
    with np.errstate(over="ignore", invalid="ignore"):
        out = _run(lambda cp, d: _binomial_one(cp[0], cp[1], f, d), pairs, generator)
    return np.array(out, dtype=np.float64).astype(count.dtype).reshape(count.shape)


# ----------------------------------------------------------------------------- torch.poisson
def _type_name(t):
    return t.type().split(".")[-1][:-len("Tensor")]


@_state.random_rule("op")
def poisson(input, generator=None):
    """Poisson draws with rates `input` (torch's stream; ``PoissonBackward0``, zero grad)."""
    if not isinstance(input, torch.Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dtype not in (torch.float16, torch.float32, torch.float64):
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_type_name(input)}'")
    rate = input.detach().numpy()
    if not np.all(rate >= 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _RF.POISSON.call(input, params=poisson_array(rate, generator))


@_state.random_rule("op")
def binomial(count, prob, generator=None):
    """Binomial(count, prob) draws (torch's stream; not differentiable, as torch)."""
    for arg, v, pos in (("count", count, 1), ("prob", prob, 2)):
        if not isinstance(v, torch.Tensor):
            raise TypeError(f"binomial(): argument '{arg}' (position {pos}) must be Tensor, "
                            f"not {type(v).__name__}")
    if not count.is_floating_point():
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{_type_name(count)}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {_type_name(prob)} but expected {_type_name(count)}")
    if tuple(prob.shape) != tuple(count.shape):
        c, p = torch.broadcast_tensors(count.detach(), prob.detach())
        if tuple(c.shape) != tuple(count.shape):
            # torch's kernel resizes its count-shaped output, with this warning
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(count.shape)}, which does not match the required output shape "
                          f"{list(c.shape)}. This behavior is deprecated, and in a future "
                          "PyTorch release outputs will not be resized unless they have zero "
                          "elements. You can explicitly reuse an out tensor t by resizing it, "
                          "inplace, to zero elements with t.resize_(0).", UserWarning,
                          stacklevel=2)
    else:
        c, p = count.detach(), prob.detach()
    vals = binomial_array(c.numpy(), p.numpy(), generator)
    return _RF.BINOMIAL.call(count, prob, params=vals)


def standard_gamma_grad_array(x, alpha):
    """d x / d alpha for gamma samples x of concentration alpha (float64 internally)."""
    a = alpha.astype(np.float64)
    xs = x.astype(np.float64)
    h = 1e-5 * np.maximum(a, 1e-3)
    A = torch.from_numpy(np.concatenate([a + h, a - h]).reshape(2, *a.shape))
    X = torch.from_numpy(np.broadcast_to(xs, (2,) + a.shape).copy())
    upper = xs > a
    P = igamma(A, X).numpy()
    Q = igammac(A, X).numpy()
    dP = np.where(upper, -(Q[0] - Q[1]), P[0] - P[1]) / (2 * h)
    with np.errstate(all="ignore"):
        log_pdf = (a - 1) * np.log(xs) - xs - np.vectorize(math.lgamma)(a)
        grad = -dP / np.exp(log_pdf)
    return grad.astype(x.dtype)


class _StandardGamma(torch.autograd.Function):
    @staticmethod
    def forward(ctx, alpha):
        x = torch.from_numpy(standard_gamma_array(alpha.detach().numpy()))
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        x, alpha = ctx.saved_tensors
        g = standard_gamma_grad_array(x.detach().numpy(), alpha.detach().numpy())
        return grad_output * torch.from_numpy(g)


def standard_gamma(alpha):
    """Gamma(alpha, 1) draws differentiable in ``alpha`` (implicit reparameterisation)."""
    if alpha.requires_grad and torch.is_grad_enabled():
        return _StandardGamma.apply(alpha)
    return torch.from_numpy(standard_gamma_array(alpha.detach().numpy()))


def _betacf(a, b, x):
    """The continued fraction of the regularised incomplete beta (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = np.where(np.abs(d) < tiny, tiny, d)
    d = 1.0 / d
    h = d.copy()
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        h = h * d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        step = d * c
        h = h * step
        if np.all(np.abs(step - 1.0) < 1e-16):
            break
    return h


def _lbeta(a, b):
    lg = np.vectorize(math.lgamma, otypes=[np.float64])
    return lg(a) + lg(b) - lg(a + b)


def _betainc(a, b, x, flip):
    """I_x(a, b); where ``flip`` it is evaluated as ``1 - I_{1-x}(b, a)``."""
    aa, bb, xx = np.where(flip, b, a), np.where(flip, a, b), np.where(flip, 1 - x, x)
    front = np.exp(aa * np.log(xx) + bb * np.log1p(-xx) - _lbeta(aa, bb))
    val = front * _betacf(aa, bb, xx) / aa
    return np.where(flip, 1.0 - val, val)


def dirichlet_grad_array(x, alpha, total):
    """torch's ``_dirichlet_grad``: for the marginal ``x ~ Beta(alpha, total - alpha)``,
    ``d x / d alpha`` at fixed ``total - alpha`` divided by ``1 - x``."""
    xs, a, t = (np.asarray(v, np.float64) for v in np.broadcast_arrays(x, alpha, total))
    b = t - a
    flip = xs > (a + 1.0) / (a + b + 2.0)
    h = 1e-5 * np.maximum(a, 1e-3)
    dI = (_betainc(a + h, b, xs, flip) - _betainc(a - h, b, xs, flip)) / (2 * h)
    with np.errstate(all="ignore"):
        pdf = np.exp((a - 1) * np.log(xs) + (b - 1) * np.log1p(-xs) - _lbeta(a, b))
        grad = -dI / pdf / (1.0 - xs)
    return grad.astype(np.result_type(x))


class _Dirichlet(torch.autograd.Function):
    @staticmethod
    def forward(ctx, concentration):
        x = torch.from_numpy(dirichlet_array(concentration.detach().numpy()))
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        c = concentration.detach().numpy()
        total = np.broadcast_to(c.sum(-1, keepdims=True), c.shape)
        g = torch.from_numpy(dirichlet_grad_array(x.detach().numpy(), c, total))
        return g * (grad_output - (x * grad_output).sum(-1, True))


def sample_dirichlet(concentration):
    """Dirichlet draws differentiable in ``concentration`` (torch's ``_Dirichlet``)."""
    if concentration.requires_grad and torch.is_grad_enabled():
        return _Dirichlet.apply(concentration)
    return torch.from_numpy(dirichlet_array(concentration.detach().numpy()))


@_state.random_rule("op")
def _standard_gamma(input, generator=None):
    """``torch._standard_gamma``: Gamma(input, 1) draws (not recorded for autograd here;
    ``standard_gamma`` is the differentiable sampler the distributions use)."""
    return torch.from_numpy(standard_gamma_array(input.detach().numpy(), generator))


@_state.random_rule("op")
def _sample_dirichlet(input, generator=None):
    """``torch._sample_dirichlet``: Dirichlet draws with concentrations `input` (last dim)."""
    return torch.from_numpy(dirichlet_array(input.detach().numpy(), generator))
