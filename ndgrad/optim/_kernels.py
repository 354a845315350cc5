"""NumPy kernels that round exactly like ATen's CPU kernels the torch optimizers call.

The optimizers update ``param._data`` and their state arrays in place with these helpers, so a
step costs a few NumPy passes and no autograd bookkeeping. Each helper reproduces the
floating-point order of the ATen op it stands for (measured against torch 2.13, AVX2 build):

* ``add_(x, y, alpha)``  (``x.add_(y, alpha=a)``)      -> ``fma(a, y, x)``
* ``addcmul_(x, a, b, v)``                             -> ``fma(v * a, b, x)``
* ``addcdiv_(x, a, b, v)``                             -> ``x + (v * a) / b``  (no fma)
* ``lerp_(x, end, w)`` with ``|w| < 0.5``              -> ``fma(w, end - x, x)``
  otherwise                                            -> ``fma(w - 1, end - x, end)``
* a Python scalar meets a tensor after being rounded to the tensor's dtype.

float32 fma is computed in float64 (the product of two float32 values is exact there) with a
round-to-odd fix for float32 ties; float64 fma uses Dekker's exact product, TwoSum and
round-to-odd (Boldo & Melquiond). Both are correctly rounded. Tensors larger than
EXACT_FMA_MAX take a fast two-rounding path (see there).
"""

import threading

import numpy as np

from .._tensor import Tensor

_f32 = np.dtype(np.float32)
_f64 = np.dtype(np.float64)
_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's splitting constant for doubles


_f16 = np.dtype(np.float16)


def scalar(x, s):
    """The Python scalar ``s`` as ATen's kernels see it next to array ``x``: rounded to the
    op-math type (float32 for float16 tensors, else the tensor's own dtype)."""
    if x.dtype == _f16:
        return np.float32(s)
    return x.dtype.type(s)


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _nudge_odd(s, err):
    """Round-to-odd correction: where the sum was inexact and ``s`` has an even last bit,
    move ``s`` one ulp towards the lost residual ``err``."""
    bits = s.view(np.int64)
    fix = (err != 0) & ((bits & 1) == 0)
    if fix.any():
        step = np.where((err > 0) == (s > 0), 1, -1)
        bits[fix] += step[fix]
    return s


def _fma64(a, b, c):
    """Correctly rounded double fma (Boldo & Melquiond: exact product, TwoSum, round-to-odd
    of the low parts, then one round-to-nearest)."""
    uh = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl   # a*b == uh + ul exactly
    th, tl = _two_sum(c, uh)
    v, e = _two_sum(tl, ul)
    return th + _nudge_odd(v, e)


_TIE_MASK = np.int64((1 << 29) - 1)
_TIE = np.int64(1 << 28)


# Above this many elements fma_into rounds twice (a*b, then + c) in the array's own dtype,
# which is several times faster than the emulation (2 NumPy calls instead of 6, no float64
# temporaries). Tensors that large are weights of real layers whose gradients come from a BLAS
# matmul whose summation order differs from torch's MKL anyway, so an exact fma could not make
# their trajectories bit-identical; the difference it leaves is at most 1 ulp per update.
# Set it to a huge number to always round exactly like torch.
EXACT_FMA_MAX = 1024
_count_nonzero = np.count_nonzero


def fma_into(out, a, b, c):
    """``out[...] = fma(a, b, c)`` rounded to ``out.dtype``; a, b, c arrays or scalars of that
    dtype. Correctly rounded (like torch's fused multiply-add) up to EXACT_FMA_MAX elements."""
    dt = out.dtype
    if out.size > EXACT_FMA_MAX:
        np.add(np.multiply(a, b), c, out=out)
        return out
    if dt == _f64:
        a, b, c = (np.array(np.broadcast_to(v, out.shape), np.float64, ndmin=1)
                   for v in (a, b, c))
        out[...] = _fma64(a, b, c).reshape(out.shape)
        return out
    return _fma32(out, a, b, c)


def _fma32(out, a, b, c):
    """fma_into's correctly rounded path for float32 (and float16) ``out``, any size."""
    dt = out.dtype
    # float32 (and float16, whose opmath is float32): the float64 product is exact, and the
    # sum rounded to float64 then to float32 is correct unless the float64 sum sits exactly on
    # a float32 tie; there round-to-odd (from the TwoSum residual) decides.
    s = np.multiply(a, b, dtype=np.float64)
    if not s.ndim:
        s = np.asarray(s)   # 0-d out: ufuncs hand back a scalar, which out= cannot take
    if s.shape == out.shape:
        np.add(s, c, out=s)
    else:
        s = np.add(s, c, dtype=np.float64)
    ties = np.bitwise_and(s.view(np.int64), _TIE_MASK) == _TIE
    if _count_nonzero(ties):    # (cheaper than ties.any() on small arrays)
        shape = s.shape
        pp = np.broadcast_to(np.multiply(a, b, dtype=np.float64), shape)[ties]
        cs = np.broadcast_to(np.asarray(c, np.float64), shape)[ties]
        ss, err = _two_sum(pp, cs)
        s[ties] = _nudge_odd(ss, err)
    if dt != _f32:
        s = s.astype(np.float32)    # float16: torch rounds the float32 fma result to half
    out[...] = s    # (the unsafe cast np.copyto does, without its dispatch)
    return out


def add_(x, y, alpha=1.0):
    """``x.add_(y, alpha=alpha)``."""
    if alpha == 1:
        np.add(x, y, out=x)
        return x
    return fma_into(x, scalar(x, alpha), y, x)


def add_many_(xs, ys, alpha):
    """``x.add_(y, alpha=alpha)`` for each pair (a real alpha; complex arrays are updated as
    their real views). The small float32 ones (each would take the
    exact fma path) go through one fma over their concatenation: the fma is elementwise, so
    every value is the same as updating them one by one, at a fraction of the NumPy calls.
    Only arrays that own their memory and appear once are fused (no aliasing between them)."""
    if alpha == 1:
        for x, y in zip(xs, ys):
            np.add(x, y, out=x)
        return
    small_x, small_y = [], []
    f32 = _f32
    a = np.array(alpha, f32)   # (a 0-d array: NumPy's ufuncs take it faster than a scalar)
    for x, y in zip(xs, ys):
        if x.dtype == f32 and y.dtype == f32 and x.shape == y.shape:
            if x.size > EXACT_FMA_MAX:
                np.add(np.multiply(a, y), x, out=x)   # fma_into's two-rounding path
            elif x.base is None:
                small_x.append(x)
                small_y.append(y)
            else:
                add_(x, y, alpha)
        elif x.dtype.kind == "c":   # a real alpha: the same fma on the real and imaginary parts
            add_(real(x), real(y), alpha)
        else:
            add_(x, y, alpha)
    n = len(small_x)
    if n < 2 or len(set(map(id, small_x))) != n:
        for x, y in zip(small_x, small_y):
            add_(x, y, alpha)
        return
    # _fma32 on the concatenations, kept in float64 until each array's part is written back
    # (the same float64 values, rounded to float32 by the same cast)
    s, c, bits, ties, parts = _fused_scratch(small_x)
    np.concatenate(small_y, axis=None, out=s)
    np.multiply(s, float(a), out=s)   # (float32 alpha as a Python float: exact, and faster)
    np.concatenate(small_x, axis=None, out=c)
    np.add(s, c, out=s)
    np.bitwise_and(s.view(np.int64), _TIE_MASK0, out=bits)
    np.equal(bits, _TIE0, out=ties)
    if _count_nonzero(ties):
        pp = np.multiply(a, np.concatenate(small_y, axis=None), dtype=np.float64)[ties]
        ss, err = _two_sum(pp, c[ties])
        s[ties] = _nudge_odd(ss, err)
    for x, part in zip(small_x, parts):
        x[...] = part


_TIE_MASK0 = np.array(_TIE_MASK)
_TIE0 = np.array(_TIE)
# Per thread: the scratch arrays of add_many_'s fused update, by the shapes it fuses (a
# training loop updates the same parameters every step); at most 8 sets, and only sets of up
# to SCRATCH_MAX elements are kept (25 bytes each), larger ones are allocated per call.
_scratch = threading.local()
SCRATCH_MAX = 1 << 16


def _fused_scratch(xs):
    """(float64 sums, float64 addends, int64 bits, bool ties, per array its part of the sums
    shaped like it) for the concatenation of `xs`; reused between calls. The arrays never
    leave add_many_, so reusing them is invisible."""
    key = tuple([x.shape for x in xs])
    cache = _scratch.__dict__.setdefault("by_shapes", {})
    found = cache.get(key)
    if found is None:
        n = sum(x.size for x in xs)
        s = np.empty(n, np.float64)
        parts = []
        off = 0
        for x in xs:
            parts.append(s[off:off + x.size].reshape(x.shape))
            off += x.size
        found = (s, np.empty(n, np.float64), np.empty(n, np.int64), np.empty(n, np.bool_),
                 tuple(parts))
        if n <= SCRATCH_MAX:
            if len(cache) >= 8:
                cache.clear()
            cache[key] = found
    return found


# Elements per block of blocks(): float32 blocks of 64 KB keep an update's temporaries in
# the caches (fresh arrays of a few MB per step cost a page fault per 4 KB).
BLOCK = 16384


def blocks(arrays):
    """Yield `arrays` (a tuple; None entries stay None) whole, or as matching flat blocks of
    at least BLOCK elements each (the last one takes the remainder, up to 2 * BLOCK), for an
    elementwise in-place update. Every block is larger than EXACT_FMA_MAX, as the whole array
    is, so fma_into rounds the same way: the update gives the same numbers block by block.
    Whole when the arrays are small, not all C-contiguous or not of one shape."""
    a0 = arrays[0]
    n = a0.size
    if n < 2 * BLOCK or any(a is not None and (a.shape != a0.shape or
                                               not a.flags.c_contiguous) for a in arrays):
        yield arrays
        return
    flat = [None if a is None else a.reshape(-1) for a in arrays]
    stops = list(range(BLOCK, n - BLOCK + 1, BLOCK))
    stops[-1] = n
    start = 0
    for stop in stops:
        yield tuple(None if f is None else f[start:stop] for f in flat)
        start = stop


def add(x, y, alpha=1.0):
    """``x.add(y, alpha=alpha)`` (a new array)."""
    out = np.empty_like(x)
    if alpha == 1:
        np.add(x, y, out=out)
        return out
    return fma_into(out, scalar(x, alpha), y, x)


def addcmul_(x, a, b, value=1.0):
    """``x.addcmul_(a, b, value=value)``."""
    va = a * scalar(x, value) if value != 1 else a
    return fma_into(x, va, b, x)


def addcdiv_(x, a, b, value=1.0):
    """``x.addcdiv_(a, b, value=value)``."""
    va = a * scalar(x, value) if value != 1 else a.copy()
    np.divide(va, b, out=va)
    np.add(x, va, out=x)
    return x


def lerp_(x, end, weight):
    """``x.lerp_(end, weight)`` with a scalar weight."""
    w = scalar(x, weight)
    diff = end - x
    if abs(float(w)) < 0.5:
        return fma_into(x, w, diff, x)
    return fma_into(x, w - w.dtype.type(1), diff, end)


def mul_(x, s):
    """``x.mul_(s)`` with a Python scalar."""
    np.multiply(x, scalar(x, s), out=x)
    return x


def real(a):
    """A complex array seen as interleaved real numbers (``torch.view_as_real``)."""
    if a.dtype.kind == "c":
        return a.view(a.real.dtype)
    return a


def unreal(r, like):
    """Undo :func:`real` for an array shaped like ``like``."""
    if like.dtype.kind == "c":
        return r.view(like.dtype)
    return r


def zeros(p):
    return Tensor(np.zeros_like(p._data))
