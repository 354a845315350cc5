"""torch's CPU random number generator, reimplemented on NumPy.

This module holds :class:`Generator` (becomes ``ndgrad.Generator``), the process-wide
``default_generator`` and the module-level helpers ``manual_seed``, ``seed``,
``initial_seed``, ``get_rng_state``, ``set_rng_state`` and ``fork_rng``.  It is
standalone: it imports NumPy and the standard library only, and its samplers return
plain NumPy arrays (the core wraps them into tensors).

The aim is bit-for-bit agreement with PyTorch 2.13 on CPU after the same seed.

Engine
    torch's ``CPUGeneratorImpl`` is an mt19937 seeded with ``init_genrand`` from the
    low 32 bits of the 64-bit seed.  NumPy's ``MT19937`` bit generator is the same
    engine; we compute the ``init_genrand`` key ourselves, install it as NumPy's state
    and draw raw 32-bit words at C speed through ``Generator.integers`` over the full
    uint32 range (which returns the raw words unchanged).  A 64-bit draw is two 32-bit
    draws, the first one being the high half.

How each sampler turns raw words into values (torch's DistributionsHelper.h,
TransformationHelper.h and cpu/DistributionTemplates.h):

* ``uniform`` (rand, uniform_): float32 and float16 (computed in float32) use the low
  24 bits of one word times 2**-24, float64 the low 53 bits of a 64-bit draw times
  2**-53; then ``fma(x, to - from, from)`` (the compiler contracts it), rounded to the
  output dtype, and a result equal to ``to`` after rounding is replaced by ``from``.
* ``normal`` (randn, normal_): for 16 or more elements (contiguous) torch fills the
  output with uniforms, runs Box-Muller on blocks of 16 (``u1 = 1 - d[j]``,
  ``u2 = d[j + 8]`` for j < 8) and, when the size is not a multiple of 16, draws 16 fresh
  uniforms for the last 16 outputs.  float32 and float16 use the AVX2 kernel
  (``log256_ps`` / ``sincos256_ps`` from avx_mathfun.h, cephes polynomials) that GCC
  compiled with FMA contraction; we emulate it exactly in float32 with an exact
  emulated FMA.  float64 uses libm log/sin/cos and ``fma(r * cos, std, mean)``; NumPy's
  float64 ``log`` / ``log1p`` run their own SIMD code on AVX-512 CPUs, 1 ulp away from libm
  for a few values in a thousand, so ``log`` and ``log1p`` are libm's own (:func:`_libm`).
  Fewer than 16 elements use the scalar double Box-Muller (``r = sqrt(-2 log1p(-u2))``,
  ``theta = 2 pi u1``) which returns the cosine sample and caches the sine sample in the
  generator for the next call.
* ``randint``: ``(draw % range) + low``, a 64-bit draw when ``range >= 2**28`` else a
  32-bit one.
* ``randperm``: for ``n < 2**32 / 20`` the swap shuffle ``swap(a[i], a[i + w % (n-i)])``
  with 32-bit words, otherwise the "inside-out" Fisher-Yates with 64-bit words.
* ``bernoulli``: scalar p and float64 tensor p compare a 53-bit double uniform with p;
  float32 / float16 tensor p compare a 24-bit float uniform with ``float(p)``.
* ``exponential``: ``-1 / lambda * log1p(-u)`` in double from a 53-bit uniform.
* ``multinomial``: without replacement (or one sample) it is torch's exponential trick
  ``argmax / topk(p / Exp(1))``; with replacement a cumulative sum in the input dtype,
  normalised, last bucket forced to 1 and a left binary search per 53-bit uniform.

State (``get_state`` / ``set_state``)
    A uint8 array byte-identical to torch's 5056-byte ``CPUGeneratorImplState``:
    the 64-bit seed, ``left``, ``seeded``, ``next``, the 624 words (as uint64), three
    unused doubles of which ``normal_y`` holds the cached double normal sample, the
    valid flag, then the cached float normal sample and its flag.  States from
    ``torch.get_rng_state()`` can be loaded here and vice versa.

Known gaps (documented, tested where they hold)
    * float64 ``normal`` with ``std != 1`` or ``mean != 0`` uses an emulated double FMA
      (Dekker product + TwoSum) that can differ from a true FMA by 1 ulp in rare
      double-rounding cases.
    * bfloat16 is not supported (NumPy has no such dtype).
    * ``randperm`` runs its shuffle as a Python loop (~0.15 s per million elements);
      the large-n branch (n >= 214748364) is implemented from torch's source but not
      tested against torch (it needs gigabytes of memory).
    * ``multinomial`` without replacement uses a stable descending sort where torch
      uses topk; results differ only if two of ``p / Exp(1)`` tie exactly.
    * The small-size (n < 16) normal path uses ``math`` per element (fast enough for
      15 values).
    * Speed: 1M float32 randn takes ~60 ms (torch ~5 ms): the exact AVX2 emulation costs
      about twenty emulated FMAs per pair; 1M rand takes ~10 ms.

Seeding
    ``Generator()`` starts from torch's default seed 67280421310721.  Like torch 2.13,
    ``default_generator`` is seeded non-deterministically at import; call
    ``manual_seed`` for reproducible streams.
"""

import contextlib
import math
import os

import numpy as np

__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed",
    "get_rng_state", "set_rng_state", "fork_rng", "dropout_mask", "dropout_noise",
]

# torch's default_rng_seed_val, used by every freshly constructed torch.Generator().
_DEFAULT_SEED = 67280421310721
_MT_N = 624
_STATE_BYTES = 5056
_U64_MASK = (1 << 64) - 1

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)

# Byte layout of torch's CPUGeneratorImplState (x86-64, natural alignment):
#   0 u64 the_initial_seed | 8 i32 left | 12 i32 seeded | 16 u64 next
#   24 u64[624] state | 5016 f64 normal_x | 5024 f64 normal_y | 5032 f64 normal_rho
#   5040 i32 normal_is_valid | 5044 pad | 5048 f32 next_float_normal_sample
#   5052 bool is_next_float_normal_sample_valid | 5053 pad to 5056
_STATE_DTYPE = np.dtype({
    "names": ["seed", "left", "seeded", "next", "state", "normal_x", "normal_y",
              "normal_rho", "normal_is_valid", "next_float", "next_float_valid"],
    "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", _MT_N), "<f8", "<f8", "<f8", "<i4",
                "<f4", "u1"],
    "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
    "itemsize": _STATE_BYTES,
})


def _init_genrand(seed32):
    """mt19937 ``init_genrand``: the 624-word key for a 32-bit seed."""
    key = [0] * _MT_N
    key[0] = x = seed32
    for j in range(1, _MT_N):
        x = (1812433253 * (x ^ (x >> 30)) + j) & 0xFFFFFFFF
        key[j] = x
    return np.array(key, dtype=np.uint32)


def _numel(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


# ---------------------------------------------------------------------------------------
# Exact float32 fused multiply-add on NumPy.
#
# torch's AVX2 Box-Muller kernel was compiled by GCC with -mfma and its default
# -ffp-contract=fast, so `a * b + c` written with _mm256_mul_ps/_mm256_add_ps became one
# FMA with a single rounding.  For float32 inputs the product a*b is exact in float64
# (24 + 24 bits <= 53), so s = a*b + c in float64 has one rounding; rounding s again to
# float32 is then correct unless s sits exactly on a float32 rounding boundary (a
# "double rounding" tie: the 29 low mantissa bits of s are 1 followed by 28 zeros).
# Only for those rare lanes do we recover the exact residual with TwoSum and nudge s
# one double-ulp towards the true value ("round to odd"), after which rounding to
# float32 is correct.
# ---------------------------------------------------------------------------------------

_TIE_MASK = np.int64((1 << 29) - 1)
_TIE_BITS = np.int64(1 << 28)


def _fma32(a, b, c):
    """float32 fma(a, b, c) for float64 arrays/scalars holding float32 values.

    Returns the float32 result as float64 (so chained polynomials stay in float64)."""
    p = a * b
    s = p + c
    ties = (s.view(np.int64) & _TIE_MASK) == _TIE_BITS
    if ties.any():
        s = s.copy()
        pp = np.broadcast_to(p, s.shape)[ties]
        cc = np.broadcast_to(c, s.shape)[ties]
        ss = s[ties]
        bb = ss - pp
        err = (pp - (ss - bb)) + (cc - bb)          # exact residual of pp + cc (TwoSum)
        bits = ss.view(np.int64).copy()
        inexact = err != 0
        # move |s| up when the residual has the sign of s, down otherwise
        step = np.where((err > 0) == (ss > 0), 1, -1)
        bits[inexact] += step[inexact]
        s[ties] = bits.view(np.float64)
    return s.astype(np.float32).astype(np.float64)


def _r32(x):
    """Round a float64 array to float32 precision, keeping float64 storage."""
    return x.astype(np.float32).astype(np.float64)


def _libm(fn, x):
    """``fn`` (a ``math`` function: the C library's, which torch's CPU kernels call) on every
    element of the float64 array ``x``. NumPy's own float64 ``log`` / ``log1p`` are 1 ulp away
    from libm for some values on AVX-512 CPUs; a C-level map keeps libm's bits (~50 ns each)."""
    x = np.asarray(x, np.float64)
    return np.fromiter(map(fn, x.ravel().tolist()), np.float64, x.size).reshape(x.shape)


def _exp(v):
    """libm's exp with its overflow to inf (``math.exp`` raises instead)."""
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _log(v):
    """libm's log with log(0) = -inf (``math.log`` raises instead)."""
    return math.log(v) if v > 0.0 else -math.inf


def _fma64(a, b, c):
    """double fma(a, b, c) via Dekker's exact product and TwoSum.

    Correctly rounded except in rare double-rounding cases (then within 1 ulp)."""
    p = a * b
    split = 134217729.0                               # 2**27 + 1 (Veltkamp split)
    t = split * a
    ah = t - (t - a)
    al = a - ah
    t = split * b
    bh = t - (t - b)
    bl = b - bh
    perr = ((ah * bh - p) + ah * bl + al * bh) + al * bl   # a*b == p + perr exactly
    s = p + c
    bb = s - p
    serr = (p - (s - bb)) + (c - bb)                      # p + c == s + serr exactly
    return s + (serr + perr)


# ---------------------------------------------------------------------------------------
# avx_mathfun.h (log256_ps, sincos256_ps) emulated in float32, with the FMA contraction
# GCC applied.  All arrays are float64 holding float32 values; _r32 rounds a plain
# product/sum (one float32 rounding), _fma32 a contracted one.
# ---------------------------------------------------------------------------------------

def _c32(v):
    return float(np.float32(v))


_LOG_P = [_c32(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                            -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                            2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]
_LOG_Q1 = _c32(-2.12194440e-4)
_LOG_Q2 = _c32(0.693359375)
_SQRTHF = _c32(0.707106781186547524)
_FOPI = _c32(1.27323954473516)                      # 4 / pi
_DP = [_c32(v) for v in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8)]
_SINCOF = [_c32(v) for v in (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1)]
_COSCOF = [_c32(v) for v in (2.443315711809948E-005, -1.388731625493765E-003,
                             4.166664568298827E-002)]
_TWO_PI_F = _c32(2.0 * math.pi)


def _log256(x32):
    """log256_ps on a float32 array (inputs here are in (0, 1]); returns float64."""
    bits = x32.view(np.int32)
    # exponent and mantissa split: x = m * 2**e with m in [0.5, 1)
    e = ((bits >> 23) - 0x7F).astype(np.float64) + 1.0
    m = ((bits & ~0x7F800000) | 0x3F000000).view(np.float32).astype(np.float64)
    small = m < _SQRTHF
    # if m < sqrt(1/2): e -= 1, x = m + m - 1 else x = m - 1 (each step rounded)
    x = m - 1.0
    e = e - small
    x = _r32(x + np.where(small, m, 0.0))
    z = _r32(x * x)
    y = np.full_like(x, _LOG_P[0])
    for coef in _LOG_P[1:]:
        y = _fma32(y, x, coef)                      # y = y * x + p_k, contracted
    y = _r32(y * x)
    y = _fma32(y, z, _r32(e * _LOG_Q1))             # y * z + e * q1: the first mul fuses
    y = _fma32(z, -0.5, y)                          # y - z * 0.5
    x = _r32(x + y)
    return _fma32(e, _LOG_Q2, x)                    # x + e * q2


def _sincos256(x):
    """sincos256_ps for float32 values x >= 0 (held in float64); returns (sin, cos)."""
    j = (_r32(x * _FOPI)).astype(np.int32)
    j = (j + 1) & ~1                                # j = (j + 1) & ~1, as in cephes
    y = j.astype(np.float64)
    swap_sin = (j & 4) != 0
    poly_sin = (j & 2) == 0                         # which polynomial gives the sine
    neg_cos = ((~(j - 2)) & 4) != 0
    # extended precision modular arithmetic: x = ((x - y*DP1) - y*DP2) - y*DP3
    for dp in _DP:
        x = _fma32(y, dp, x)
    z = _r32(x * x)
    yc = _fma32(np.full_like(z, _COSCOF[0]), z, _COSCOF[1])
    yc = _fma32(yc, z, _COSCOF[2])
    yc = _r32(yc * z)
    yc = _fma32(yc, z, -_r32(z * 0.5))              # y * z - z * 0.5
    yc = _r32(yc + 1.0)
    ys = _fma32(np.full_like(z, _SINCOF[0]), z, _SINCOF[1])
    ys = _fma32(ys, z, _SINCOF[2])
    ys = _r32(ys * z)
    ys = _fma32(ys, x, x)                           # y2 * x + x
    s = np.where(poly_sin, ys, yc)
    c = np.where(poly_sin, yc, ys)
    return np.where(swap_sin, -s, s), np.where(neg_cos, -c, c)


_CHUNK = 1 << 16    # values per pass: keeps the ~100 temporaries of a pass in cache


def _box_muller_avx2(u, mean, std):
    """torch's NormalFill16 AVX2 kernel on rows of 16 float32 uniforms -> float32."""
    if u.size > _CHUNK:
        return np.concatenate([_box_muller_avx2(u[i:i + _CHUNK], mean, std)
                               for i in range(0, u.size, _CHUNK)])
    u = u.reshape(-1, 16)
    u1 = (np.float32(1.0) - u[:, :8])
    u2 = u[:, 8:].astype(np.float64)
    radius = np.sqrt(_r32(-2.0 * _log256(u1))).astype(np.float32).astype(np.float64)
    theta = _r32(_TWO_PI_F * u2)
    s, c = _sincos256(theta)
    n1 = _r32(radius * c)
    n2 = _r32(radius * s)
    mean = _c32(mean)
    std = _c32(std)
    out = np.empty(u.shape, np.float32)
    if std == 1.0 and mean == 0.0:
        out[:, :8] = n1
        out[:, 8:] = n2
    else:
        out[:, :8] = _fma32(n1, std, mean)          # _mm256_fmadd_ps(n, std, mean)
        out[:, 8:] = _fma32(n2, std, mean)
    return out.reshape(-1)


def _box_muller_f64(u, mean, std):
    """torch's scalar NormalFill16<double> on rows of 16 double uniforms."""
    u = u.reshape(-1, 16)
    u1 = 1.0 - u[:, :8]
    u2 = u[:, 8:]
    radius = np.sqrt(-2.0 * _libm(math.log, u1))
    theta = (2.0 * math.pi) * u2
    n1 = radius * np.cos(theta)
    n2 = radius * np.sin(theta)
    out = np.empty(u.shape, np.float64)
    if std == 1.0 and mean == 0.0:
        out[:, :8] = n1
        out[:, 8:] = n2
    else:
        out[:, :8] = _fma64(n1, std, mean)
        out[:, 8:] = _fma64(n2, std, mean)
    return out.reshape(-1)


def _cast_from_double(x, dtype):
    """static_cast<scalar_t>(double): Half goes through float (two roundings)."""
    if dtype == _F16:
        return x.astype(np.float32).astype(np.float16)
    return x.astype(dtype)


_SCALAR_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                 "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                 "complex128": "ComplexDouble", "float16": "Half", "float32": "Float",
                 "float64": "Double"}


def _scalar_name(dtype):
    """torch's C++ scalar-type name of a NumPy dtype (as its "not implemented for" errors)."""
    return _SCALAR_NAMES.get(np.dtype(dtype).name, np.dtype(dtype).name)


class Generator:
    """A CPU random number generator drawing the same numbers as ``torch.Generator``."""

    def __init__(self, device="cpu"):
        if str(device) != "cpu":
            raise RuntimeError(f"ndgrad.Generator only supports the cpu device, got {device}")
        self.device = "cpu"
        self._bitgen = np.random.MT19937(0)
        self._np = np.random.Generator(self._bitgen)
        self.manual_seed(_DEFAULT_SEED)

    # ------------------------------------------------------------------ seeding / state
    def manual_seed(self, seed):
        seed = int(seed)
        if seed < 0:
            # torch accepts negative seeds and reinterprets them as uint64
            if seed < -(1 << 63):
                raise RuntimeError("Overflow when unpacking long long")
            seed &= _U64_MASK
        elif seed > _U64_MASK:
            raise RuntimeError("Overflow when unpacking long long")
        self._seed = seed
        self._set_key(_init_genrand(seed & 0xFFFFFFFF), 624)
        # torch keeps next_ = 0, left_ = 1 right after seeding; we remember that so
        # get_state() is byte-identical (the pair is otherwise derived from pos).
        self._fresh = True
        self._next_double = None
        self._next_float = None
        return self

    def seed(self):
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def _set_key(self, key, pos):
        self._bitgen.state = {"bit_generator": "MT19937",
                              "state": {"key": key, "pos": int(pos)}}

    def get_state(self):
        st = self._bitgen.state["state"]
        rec = np.zeros((), dtype=_STATE_DTYPE)
        rec["seed"] = self._seed
        rec["seeded"] = 1
        pos = int(st["pos"])
        # torch's engine: operator() does `if (--left == 0) twist(); return temper(s[next++])`
        # so after k draws since the last twist, next == k and left == 625 - k.  NumPy's
        # pos plays the role of next (pos == 624 means "twist before the next draw").
        if self._fresh:
            rec["left"], rec["next"] = 1, 0
        else:
            rec["left"], rec["next"] = 625 - pos, pos
        rec["state"] = st["key"].astype(np.uint64)
        if self._next_double is not None:
            rec["normal_is_valid"] = 1
            rec["normal_y"] = self._next_double
        if self._next_float is not None:
            rec["next_float_valid"] = 1
            rec["next_float"] = self._next_float
        return np.frombuffer(rec.tobytes(), dtype=np.uint8).copy()

    def set_state(self, new_state):
        arr = np.asarray(new_state)
        if arr.dtype != np.uint8 or arr.size != _STATE_BYTES:
            raise RuntimeError(
                f"Expected either a THGeneratorState of size 5048 or a CPUGeneratorImplState "
                f"of size {_STATE_BYTES} but found the input RNG state size to be {arr.size}")
        rec = np.frombuffer(np.ascontiguousarray(arr).tobytes(), dtype=_STATE_DTYPE)[0]
        left, nxt = int(rec["left"]), int(rec["next"])
        self._seed = int(rec["seed"])
        self._fresh = (left == 1 and nxt == 0)
        pos = 624 if left == 1 else nxt
        self._set_key(rec["state"].astype(np.uint32), pos)
        self._next_double = float(rec["normal_y"]) if rec["normal_is_valid"] else None
        self._next_float = float(rec["next_float"]) if rec["next_float_valid"] else None
        return self

    def clone_state(self):
        return self.get_state()

    # ------------------------------------------------------------------ raw draws
    def _words(self, n):
        """n raw mt19937 outputs as uint32."""
        if n <= 0:
            return np.empty(0, np.uint32)
        self._fresh = False
        # integers() over the full uint32 range hands back the raw words unchanged
        return self._np.integers(0, 0xFFFFFFFF, size=n, dtype=np.uint32, endpoint=True)

    def _raw32(self, n):
        """n raw mt19937 outputs as uint64 (values < 2**32)."""
        return self._words(n).astype(np.uint64)

    def _u53_below(self, n, p):
        """``self._u53(n) < p`` for a float p in [0, 1], from the raw words in uint32 passes.
        u = k * 2**-53 is exact for the 53-bit integer k = (hi & 0x1FFFFF) << 32 | lo of a
        random64 (hi its first word), so u < p iff k < T = ceil(p * 2**53) (p * 2**53 is
        exact): iff hi' < T >> 32, or hi' == T >> 32 and lo < T's low word."""
        w = self._words(2 * n)
        t = math.ceil(p * 2.0 ** 53)
        th, tl = t >> 32, t & 0xFFFFFFFF
        hi = np.bitwise_and(w[0::2], np.uint32(0x1FFFFF))
        mask = hi < np.uint32(th) if th <= 0x1FFFFF else np.ones(n, bool)
        if th <= 0x1FFFFF:
            tie = np.flatnonzero(hi == np.uint32(th))   # (one draw in 2**21)
            if tie.size:
                mask[tie] = w[1::2][tie] < np.uint32(tl)
        return mask

    def _raw64(self, n):
        """n torch random64() values: (first word << 32) | second word."""
        w = self._raw32(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def _u24(self, n):
        """n float32 uniforms in [0, 1): low 24 bits of a word times 2**-24 (exact)."""
        return (self._raw32(n) & np.uint64(0xFFFFFF)).astype(np.float32) * np.float32(2**-24)

    def _u53(self, n):
        """n double uniforms in [0, 1): low 53 bits of a 64-bit draw times 2**-53."""
        return (self._raw64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0**-53

    # ------------------------------------------------------------------ samplers
    def uniform(self, shape, dtype, low=0.0, high=1.0):
        dtype = np.dtype(dtype)
        n = _numel(shape)
        if dtype == _F64:
            # x * (to - from) + from, contracted to one fma by the compiler
            out = _fma64(self._u53(n), float(high) - float(low), float(low))
        elif dtype in (_F32, _F16):
            # float16 computes in its opmath type float32, then rounds to half
            frm, to = np.float32(low), np.float32(high)
            out = _fma32(self._u24(n).astype(np.float64), float(to - frm), float(frm))
        else:
            raise NotImplementedError(
                f'"check_uniform_bounds" not implemented for {_scalar_name(dtype)!r}')
        out = out.astype(dtype)
        # torch: if rounding to the output dtype produced `to`, return `from` instead
        out[out == dtype.type(high)] = dtype.type(low)
        return out.reshape(shape)

    def _normal_scalar(self, n, mean, std):
        """torch's normal_distribution<double>, one value at a time (n < 16)."""
        out = np.empty(n, np.float64)
        for i in range(n):
            if self._next_double is not None:
                ret, self._next_double = self._next_double, None
            else:
                u = self._u53(2)
                u1, u2 = float(u[0]), float(u[1])
                r = math.sqrt(-2.0 * math.log1p(-u2))
                theta = 2.0 * math.pi * u1
                self._next_double = r * math.sin(theta)
                ret = r * math.cos(theta)
            out[i] = ret
        if std == 1.0 and mean == 0.0:
            return out
        return _fma64(out, std, mean)       # ret * std + mean, contracted to an fma

    def normal(self, shape, dtype, mean=0.0, std=1.0):
        dtype = np.dtype(dtype)
        if dtype not in (_F16, _F32, _F64):
            raise NotImplementedError(
                f'"normal_kernel_cpu" not implemented for {_scalar_name(dtype)!r}')
        mean, std = float(mean), float(std)
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        n = _numel(shape)
        if n < 16:
            return _cast_from_double(self._normal_scalar(n, mean, std), dtype).reshape(shape)
        full = n // 16 * 16
        tail = n != full
        if dtype == _F64:
            u = self._u53(n)
            out = np.empty(n, np.float64)
            out[:full] = _box_muller_f64(u[:full], mean, std)
            if tail:
                out[n - 16:] = _box_muller_f64(self._u53(16), mean, std)
            return out.reshape(shape)
        # float32 draws n uniforms (+16 for the tail); the float16 kernel uses a 16-wide
        # buffer per block, so it draws only 16 * (n // 16) (+16 for the tail).
        u = self._u24(n if dtype == _F32 else full)
        out = np.empty(n, np.float32)
        out[:full] = _box_muller_avx2(u[:full], mean, std)
        if tail:
            out[n - 16:] = _box_muller_avx2(self._u24(16), mean, std)
        return out.astype(dtype, copy=False).reshape(shape)

    def randint(self, low, high, shape, dtype=np.int64):
        low, high = int(low), int(high)
        if low >= high:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        dtype = np.dtype(dtype)
        n = _numel(shape)
        rng = high - low
        v = self._raw64(n) if rng >= (1 << 28) else self._raw32(n)
        vals = (v % np.uint64(rng)).astype(np.int64) + np.int64(low)
        if dtype == np.bool_:
            return (vals != 0).reshape(shape)
        return vals.astype(dtype).reshape(shape)   # static_cast<T>(int64): integers wrap

    def randperm(self, n, dtype=np.int64):
        n = int(n)
        if n < 0:
            raise RuntimeError(f"n must be non-negative, got{n}")
        if n < 0xFFFFFFFF // 20:
            # swap shuffle: for i < n-1 swap a[i] with a[i + word % (n - i)]
            z = self._raw32(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)
            jz = (z + np.arange(n - 1, dtype=np.uint64)).tolist()
            a = list(range(n))
            for i, j in enumerate(jz):
                a[i], a[j] = a[j], a[i]
        else:
            # inside-out Fisher-Yates with 64-bit words (no initialisation pass)
            z = (self._raw64(n) % np.arange(1, n + 1, dtype=np.uint64)).tolist()
            a = [0] * n
            for i, j in enumerate(z):
                a[i] = a[j]
                a[j] = i
        return np.array(a, dtype=np.int64).astype(np.dtype(dtype))

    def bernoulli(self, p, shape, dtype):
        dtype = np.dtype(dtype)
        n = _numel(shape)
        if isinstance(p, np.ndarray):
            # tensor p: iterate the output in C order with p broadcast to its shape
            p = np.broadcast_to(p, shape).reshape(-1)
            if not np.issubdtype(p.dtype, np.floating):
                raise RuntimeError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{p.dtype}'")
            if p.dtype == _F64:
                mask = self._u53(n) < p
            else:
                mask = self._u24(n) < p.astype(np.float32)
        else:
            p = float(p)
            if not 0.0 <= p <= 1.0:
                raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
            mask = self._u53_below(n, p)
        return mask.astype(dtype).reshape(shape)

    def exponential(self, shape, dtype, lambd=1.0):
        dtype = np.dtype(dtype)
        lambd = float(lambd)
        if not lambd > 0.0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
        n = _numel(shape)
        x = (-1.0 / lambd) * _libm(math.log1p, -self._u53(n))
        return _cast_from_double(x, dtype).reshape(shape)

    def cauchy(self, shape, dtype, median=0.0, sigma=1.0):
        """torch's cauchy_: ``median + sigma * tan(pi * (u - 0.5))`` in double per element,
        u a 53-bit uniform."""
        dtype = np.dtype(dtype)
        median, sigma = float(median), float(sigma)
        if not sigma > 0.0:
            raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
        u = self._u53(_numel(shape))
        x = median + sigma * _libm(math.tan, math.pi * (u - 0.5))
        return _cast_from_double(x, dtype).reshape(shape)

    def log_normal(self, shape, dtype, mean=1.0, std=2.0):
        """torch's log_normal_: ``exp`` of the scalar double normal (Box-Muller per pair, the
        sine half cached in the generator), element by element."""
        dtype = np.dtype(dtype)
        mean, std = float(mean), float(std)
        if not std > 0.0:
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
        z = self._normal_scalar(_numel(shape), mean, std)
        return _cast_from_double(_libm(_exp, z), dtype).reshape(shape)

    def geometric(self, shape, dtype, p):
        """torch's geometric_: ``ceil(log(u) / log1p(-p))`` in double, u a 53-bit uniform."""
        dtype = np.dtype(dtype)
        p = float(p)
        if not 0.0 < p < 1.0:
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
        u = self._u53(_numel(shape))
        x = np.ceil(_libm(_log, u) / math.log1p(-p))
        if dtype.kind in "iu":
            return x.astype(np.int64).astype(dtype).reshape(shape)
        return _cast_from_double(x, dtype).reshape(shape)

    def multinomial(self, probs, num_samples, replacement=False):
        probs = np.asarray(probs)
        if probs.ndim not in (1, 2):
            raise RuntimeError("prob_dist must be 1 or 2 dim")
        if not np.issubdtype(probs.dtype, np.floating):
            raise RuntimeError(f"multinomial only supports floating-point dtypes for input, "
                               f"got: {probs.dtype}")
        num_samples = int(num_samples)
        if num_samples <= 0:
            raise RuntimeError("cannot sample n_sample <= 0 samples")
        n_cat = probs.shape[-1]
        if not replacement and num_samples > n_cat:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        rows = probs.reshape(-1, n_cat)
        if not replacement or num_samples == 1:
            if not (np.all(rows >= 0) and np.all(rows < np.inf)):
                raise RuntimeError("probability tensor contains either `inf`, `nan` or "
                                   "element < 0")
            if np.any(rows.sum(-1) <= 0):
                raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
            # Gumbel-max in exponential form: argmax / topk of p / q with q ~ Exp(1),
            # q drawn in probs' dtype over the whole input (row-major)
            q = self.exponential(rows.shape, rows.dtype, 1.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                key = rows / q
            if num_samples == 1:
                idx = np.argmax(key, axis=-1)[:, None]
            else:
                idx = np.argsort(-key, axis=-1, kind="stable")[:, :num_samples]
        else:
            acc = np.float32 if probs.dtype == _F16 else probs.dtype
            idx = np.empty((rows.shape[0], num_samples), np.int64)
            for r in range(rows.shape[0]):
                row = rows[r].astype(acc)
                if np.any(row < 0):
                    raise RuntimeError(
                        "invalid multinomial distribution (encountering probability entry < 0)")
                if not np.all(np.isfinite(row)):
                    raise RuntimeError("invalid multinomial distribution (encountering "
                                       "probability entry = infinity or NaN)")
                cum = np.cumsum(row, dtype=acc)           # sequential sum in the acc dtype
                total = cum[-1]
                if not total > 0:
                    raise RuntimeError(
                        "invalid multinomial distribution (sum of probabilities <= 0)")
                cum = cum / total
                cum[-1] = 1
                # torch's binary search returns the first slot with cum >= u
                idx[r] = np.searchsorted(cum.astype(np.float64), self._u53(num_samples),
                                         side="left")
        idx = idx.astype(np.int64)
        return idx[0] if probs.ndim == 1 else idx


def dropout_mask(shape, p, dtype, generator=None):
    """The 0/1 keep-mask ``torch.nn.functional.dropout(x, p, training=True)`` draws on CPU.

    torch's ``_dropout_impl`` does ``noise = empty_like(x).bernoulli_(1 - p)`` (a scalar
    bernoulli, one 53-bit double uniform per element) and returns ``x * (noise / (1 - p))``.
    It draws nothing when ``p == 0`` (returns x) or ``p == 1`` (returns zeros) or when x
    is empty.  Returns ``None`` for those cases where torch draws nothing.
    """
    gen = default_generator if generator is None else generator
    p = float(p)
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0.0 or p == 1.0 or _numel(shape) == 0:
        return None
    return gen.bernoulli(1.0 - p, shape, dtype)


def dropout_noise(shape, p, dtype, generator=None):
    """The multiplier torch's CPU dropout applies: ``bernoulli(1-p) / (1-p)`` in ``dtype``.

    ``F.dropout(x, p, True)`` equals ``x * dropout_noise(x.shape, p, x.dtype)``; for
    ``p == 0`` (or empty x) this is all ones and for ``p == 1`` all zeros (no draws)."""
    dtype = np.dtype(dtype)
    mask = dropout_mask(shape, p, dtype, generator)
    if mask is None:
        return np.full(shape, 0.0 if float(p) == 1.0 else 1.0, dtype=dtype)
    # mask / (1 - p) in dtype: each element is 1 / (1 - p) rounded, or 0 / (1 - p) = +0.0
    scale = dtype.type(1) / dtype.type(1.0 - float(p))
    return np.multiply(mask, scale, out=mask) if dtype.kind == "f" else mask / \
        dtype.type(1.0 - float(p))


# torch seeds its default CPU generator non-deterministically at import (2.13 behaviour:
# torch.initial_seed() differs between processes); we do the same.
default_generator = Generator()
default_generator.seed()


def manual_seed(seed):
    """Seed the default generator; returns it (like ``torch.manual_seed``)."""
    return default_generator.manual_seed(seed)


def seed():
    """Seed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cpu"):
    """Restore the default generator's state on exit (devices are ignored: CPU only)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
