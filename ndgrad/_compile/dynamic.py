"""Dynamic shapes: when one compiled entry may serve calls whose input sizes differ.

As torch's *automatic dynamic shapes*: the first call of a signature is traced with every size
fixed. When a later call differs from an earlier traced one only in some input sizes (same
ranks, dtypes, requires_grad, constants; each changed size 2 or more in both), and the two
traces are **the same program** -- the same primitives in the same order with equal
arguments, parameters and constants, outputs of the same ranks and dtypes, the same
externals, modules and backward -- the program did not depend on those sizes, and the newer
entry is also registered as a *dynamic* entry for every size of those dims. Sizes 0 and 1
are never generalised (they change broadcasting and emptiness, as in torch).

A dynamic entry runs for new sizes only when these guards hold, so that the eager call would
have traced the same program:

- every input size that did not change between the two traces has its traced value;
- every changed size is 2 or more and is none of the *constant sizes* of the traces (a size
  seen in both traces, e.g. a layer's width): a size equal to one may take another path in
  shape checks, and is traced on its own;
- input sizes equal in the newer trace are equal, and sizes that differed still differ;
- every decision the user's code took on a symbolic size (``if x.size(0) > 8``, see
  :mod:`.symbolic`) comes out as it did in the newer trace.

Sizes that reach the program as values (``x.view(x.size(0), -1)``, a tensor made with a
size, ``mean``'s divisor in a backward rule) make the two traces differ: those regions stay
specialised, one entry per size, up to the cache limit. So does code whose decisions on sizes
happen in Python without a comparison on a size user code read (e.g. a dict lookup by
size).

Invariant: an entry is generalised only from two traces that produced the same program; the
programs read every size from the arrays they are given (see :mod:`.fast`).
"""

import builtins
import math

import numpy as np

from .._tensor import Tensor
from .state import Place
from .symbolic import SLOT_DIM, SymInt, guard_source

__all__ = ["erase_sizes", "make_check", "relativise", "same_program"]


def erase_sizes(key):
    """The signature `key` with each tensor argument's shape replaced by its rank."""
    out = []
    for item in key:
        if type(item) is tuple and len(item) == 3 and type(item[0]) is tuple \
                and isinstance(item[1], np.dtype):
            out.append((len(item[0]),) + item[1:])
        else:
            out.append(item)
    return tuple(out)


# ------------------------------------------------------------------------- same program
def _same(a, b, depth=0):
    """Equal as constants of a program (types, values, float signs and NaNs alike)."""
    if a is b:
        return True
    ta = type(a)
    if ta is not type(b) or depth > 8:
        return False
    if ta is SymInt:  # evaluated per call: the same where it comes from
        return a.expr == b.expr
    if ta is int or ta is bool or ta is str:
        return a == b
    if ta is float:
        if a != a:
            return b != b
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if ta is tuple or ta is list:
        return len(a) == len(b) and all(_same(x, y, depth + 1) for x, y in zip(a, b))
    if ta is dict:
        return a.keys() == b.keys() and all(_same(a[k], b[k], depth + 1) for k in a)
    if ta is np.ndarray or isinstance(a, np.generic):
        return (a.dtype == b.dtype and a.shape == b.shape
                and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")))
    if isinstance(a, Tensor):
        return _same(a._data, b._data, depth + 1) and bool(a._rg) == bool(b._rg)
    if ta is slice:
        return _same((a.start, a.stop, a.step), (b.start, b.stop, b.step), depth + 1)
    try:
        r = a == b
    except Exception:  # noqa: BLE001 - incomparable objects are different constants
        return False
    return r is True or (type(r) is np.bool_ and bool(r))


def _same_meta(a, b):
    if type(a) is not tuple or type(b) is not tuple:
        return a is b
    (sa, da), (sb, db) = a, b
    if da != db or len(sa) != len(sb):
        return False
    return all(x == y or (x >= 2 and y >= 2) for x, y in zip(sa, sb))


def _same_insts(xs, ys, relative=()):
    """Whether two traces' instructions are the same program; `relative`: the indices of
    `ys` whose forced sizes relativise() made expressions against `xs` (already checked)."""
    if len(xs) != len(ys):
        return False
    for k, (a, b) in enumerate(zip(xs, ys)):
        if a.op is not b.op or a.inplace != b.inplace or a.outs != b.outs \
                or len(a.args) != len(b.args) or len(a.meta) != len(b.meta):
            return False
        for x, y in zip(a.args, b.args):
            if type(x) is str or type(y) is str:
                if x != y:
                    return False
            elif not _same(x[1], y[1]):
                return False
        if not _same(a.params, b.params) and k not in relative:
            return False
        if not all(_same_meta(x, y) for x, y in zip(a.meta, b.meta)):
            return False
        if len(a.out_meta) != len(b.out_meta) or \
                not all(_same_meta(x, y) for x, y in zip(a.out_meta, b.out_meta)):
            return False
    return True


# --------------------------------------------------------------------- forced sizes
def _forced(op):
    from .._ops.shape import EXPAND, RESHAPE_ALIAS, UNSAFE_VIEW, VIEW
    if op is VIEW or op is UNSAFE_VIEW or op is RESHAPE_ALIAS:
        return "view"
    if op is EXPAND:
        return "expand"
    return None


def _relative_params(a, b):
    """Parameters of `b` (an instruction of a later trace at other sizes) with the sizes
    that differ from `a`'s, and that its input's array forces, as expressions in that input's
    shape; None when a differing size is not forced. A view's target shape with one size
    differing: that size is the input's element count over the others (numel conservation);
    an expand's target size where the input's dim is that size (2 or more) in both traces:
    the input's dim (expand keeps it)."""
    kind = _forced(b.op)
    pa, pb = a.params, b.params
    if type(pa) is tuple:  # (an earlier rewrite's expressions: their traced values)
        pa = tuple(int.__int__(v) if type(v) is SymInt else v for v in pa)
    if kind is None or a.op is not b.op or type(pa) is not tuple or type(pb) is not tuple \
            or len(pa) != len(pb) or type(b.args[0]) is not str \
            or not all(type(v) is int for v in pa + pb):
        return None
    diff = [k for k in range(len(pb)) if pa[k] != pb[k]]
    src = b.args[0]
    (sa, _), (sb, _) = a.meta[0], b.meta[0]
    if not diff or len(sa) != len(sb):
        return None
    out = list(pb)
    if kind == "view":
        k = diff[0]
        rest = 1
        for j, v in enumerate(pb):
            if j != k:
                rest *= v
        if len(diff) != 1 or pa[k] < 2 or pb[k] < 2 or rest < 1:
            return None
        numel = " * ".join(f"@{src}[{j}]" for j in range(len(sb))) or "1"
        out[k] = SymInt(pb[k], f"(({numel}) // {rest})")
        return tuple(out)
    lead = len(pb) - len(sb)
    for k in diff:
        j = k - lead
        if j < 0 or sa[j] != pa[k] or sb[j] != pb[k] or pa[k] < 2 or pb[k] < 2:
            return None
        out[k] = SymInt(pb[k], f"@{src}[{j}]")
    return tuple(out)


def relativise(like, fwd, bwd):
    """Rewrite, in the instructions `fwd` and `bwd` of a new trace, the sizes of views and
    expands that differ from the region `like` traced at other sizes and that the arrays force
    (see _relative_params). Returns the set of (forward?, index) rewritten; nothing is
    rewritten unless the two traces have the same ops in the same order."""
    pairs = ((True, like.insts, fwd), (False, like.bwd_insts, bwd))
    if any(len(xs) != len(ys) or any(x.op is not y.op for x, y in zip(xs, ys))
           for _, xs, ys in pairs):
        return frozenset()
    done = set()
    for forward, xs, ys in pairs:
        for k, (a, b) in enumerate(zip(xs, ys)):
            if _forced(b.op) is not None and not _same(a.params, b.params):
                p = _relative_params(a, b)
                if p is not None:
                    b.params = p
                    done.add((forward, k))
    return frozenset(done)


def same_program(ea, eb):
    """Whether entries `ea` and `eb` (traced at different sizes) hold the same program."""
    if ea.fixed_sizes or eb.fixed_sizes:
        return False
    ra, rb = ea.region, eb.region
    rel = rb.relative if rb.relative_to is ra else frozenset()
    if not _same_insts(ra.insts, rb.insts, {k for f, k in rel if f}) or \
            not _same_insts(ra.bwd_insts, rb.bwd_insts, {k for f, k in rel if not f}):
        return False
    if not _same(ra.out_spec, rb.out_spec):
        return False
    for name in ("out_slots", "out_rg", "grad_inputs", "ret_plan", "bwd_tensors",
                 "has_backward", "n_inputs", "stores"):
        if getattr(ra, name) != getattr(rb, name):
            return False
    if len(ra.grad_meta) != len(rb.grad_meta) or not all(
            x[0] == y[0] and _same_meta(x[1:], y[1:])
            for x, y in zip(ra.grad_meta, rb.grad_meta)):
        return False
    if len(ea.ext) != len(eb.ext) or len(ea.mods) != len(eb.mods):
        return False
    if any(m is not n for m, n in zip(ea.mods, eb.mods)) or ea.training != eb.training:
        return False
    n_in = ra.n_inputs
    if ra.reads != rb.reads:
        return False
    for k, ((oa, ka, sa, da, ga), (ob, kb, sb, db, gb)) in enumerate(zip(ea.ext, eb.ext)):
        if oa is None and ob is None and n_in + k not in rb.reads:
            continue  # a constant no program reads (a shape proxy a fast form replaced)
        if (oa is not ob and not (type(oa) is Place and oa == ob)) or sa != sb or \
                da != db or ga != gb:
            return False
        if ka is not kb and not (oa is None and _same(ka, kb)) and not (
                oa is not None and ka == kb):
            return False
    return True


def _sizes_of(insts):
    out = set()
    for inst in insts:
        for m in (*inst.meta, *inst.out_meta):
            if type(m) is tuple:
                out.update(m[0])
    return out


def make_check(ea, eb):
    """The guards of a dynamic entry made from entries `ea` and `eb` (the newer), traced with
    different input sizes, or None when the two do not allow one. Returns ``(check,
    value_guards)``: ``check(tensors)`` is True when the entry may run for the input tensors'
    sizes; `value_guards`, the user code's decisions on sizes of values the region computes,
    are checked by its forward program (see Region.forward_program)."""
    changed = []
    fixed = []
    for i, (sa, sb) in enumerate(zip(ea.shapes, eb.shapes)):
        for d, (x, y) in enumerate(zip(sa, sb)):
            if x == y:
                fixed.append((i, d, y))
            elif x < 2 or y < 2:
                return None
            else:
                changed.append((i, d, y))
    if not changed:
        return None
    constant = (_sizes_of(ea.region.insts) | _sizes_of(ea.region.bwd_insts)) & \
        (_sizes_of(eb.region.insts) | _sizes_of(eb.region.bwd_insts))
    constant.update(v for _, _, v in fixed)
    if any(v in constant for _, _, v in changed):
        return None
    on_inputs = []
    on_values = []
    for g in dict.fromkeys(eb.sym_guards):
        slots = {m.group(1) for m in SLOT_DIM.finditer(g[0])}
        (on_inputs if all(sl[0] == "i" for sl in slots) else on_values).append(g)
    lines = ["def check(T):"]
    for i in sorted({i for i, _, _ in changed + fixed}):
        lines.append(f"    d{i} = T[{i}]._data.shape")
    for i, d, v in fixed:
        lines.append(f"    if d{i}[{d}] != {v}: return False")
    groups = {}
    for i, d, v in changed:
        groups.setdefault(v, []).append(f"d{i}[{d}]")
    reps = []
    for v, dims in groups.items():
        lines.append(f"    a = {dims[0]}")
        lines.append("    if a < 2 or a in _CONST: return False")
        for other in dims[1:]:
            lines.append(f"    if {other} != a: return False")
        reps.append(dims[0])
    if len(reps) > 1:
        lines.append(f"    if len({{{', '.join(reps)}}}) != {len(reps)}: return False")
    cond = SLOT_DIM.sub(lambda m: f"T[{m.group(1)[1:]}]._data.shape[{m.group(2)}]",
                         guard_source(on_inputs))
    lines.append(f"    return {cond}")
    env = {"_CONST": frozenset(constant)}
    src = "\n".join(lines) + "\n"
    exec(builtins.compile(src, "<ndgrad.compile dynamic guards>", "exec"), env)
    check = env["check"]
    check.__source__ = src
    return check, tuple(on_values)
