"""Faster forms of a few ops for the generated programs, each computing bitwise the arrays the
op's own kernel computes (same IEEE operations on the same values, fewer NumPy calls or
Python steps), and the peephole pass choosing them.

The rules, by op (conditions fixed at trace time from shapes, dtypes and parameters; values
the trace cannot know are checked at run time, with the op's own kernels as the fallback):

- ``relu`` on float32/float64: ``np.maximum(0, x)`` with a 0-d zero of x's dtype (NumPy
  converts the Python 0 to that same zero, through a slower path), written into x when x is
  a fresh temporary of the program that nothing else reads (a linear layer's output);
- ``threshold_backward`` (relu's backward) on float32/float64: ``where(x > t, g, 0)`` on g's
  bits, read as integers and multiplied by the mask (1 keeps the bits, 0 makes +0.0's), which
  is exactly what ``np.where`` selects; a threshold of 0 is compared as a 0-d zero of x's dtype
  (the same comparison as with the Python 0, through a faster path);
- ``t`` (its kernel is ``x.T``), ``linear_addmm`` (``x @ wt`` then ``+= b``) and, for
  float32/float64, ``linear_addmm_backward`` (the bias gradient's row sum, ``g @ wt.T``,
  ``(g.T @ x).T``, each only when wanted): the kernels' own expressions written inline, without
  the call, the mask tests and the tuple;
- ``log_softmax`` over the last dim of a fresh temporary nobody else reads: its kernel's
  expressions inline, the first subtraction written into the input's buffer;
- ``nll_loss`` of a 2-D float32/float64 input without class weights, reduction mean or sum,
  ``ignore_index`` outside the classes: the pick and sum of the op's kernel without its
  checks; a negative target (ignored or out of range) or a target past the classes takes the
  op's own kernel (which raises torch's error for a bad one);
- ``nll_loss_backward`` followed by ``log_softmax_backward_data`` of its result (the
  backward of cross-entropy) with no class weights, reduction mean or sum, a 2-D input of at
  least two classes and an ``ignore_index`` outside the classes: the one-hot gradient is
  never built. With ``c`` the value eager writes at each row's target (``-(g / N)`` or
  ``-g``), each row's sum of the one-hot row is ``c + 0.0`` (the +0.0 entries turn a -0.0
  into +0.0, and change nothing else), so the result is ``0.0 - e * s`` off the targets and
  ``c - e * s`` on them, ``e = exp(y)``, ``s = c + 0.0``: eager's operations, element by
  element. A target below 0 (an ignored one) takes the op's own kernels.

Invariants: a rule never changes which kernels produce a value the user or the backward sees,
only how the same IEEE operations are reached; a form's code depends on ranks, dtypes and
parameters, never on sizes (sizes are read from the arrays at run time: a region may run for
other sizes, see :mod:`.dynamic`); tests/test_compile_fast.py checks each rule
bitwise against eager on special values (signed zeros, infinities, NaN; a NaN's sign and
payload are not fixed, even between eager's own kernels).
"""

import numpy as np

from .._ops.activations import LOG_SOFTMAX, LOG_SOFTMAX_BW, _log_softmax_bw_fwd
from .._ops.linear import LINEAR, LINEAR_BW
from .._ops.losses import NLL_LOSS, NLL_LOSS_BW, _nll_bw_fwd, _nll_fwd
from .._ops.pointwise import RELU, THRESHOLD_BW
from .._ops.shape import T_OP

__all__ = ["plan", "emit_fast"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_FLOATS = (_F32, _F64)
_ZERO = {_F32: np.zeros((), _F32), _F64: np.zeros((), _F64)}
_INT_OF = {_F32: np.dtype(np.int32), _F64: np.dtype(np.int64)}
_min_reduce = np.minimum.reduce
_exp = np.exp
_multiply = np.multiply
_subtract = np.subtract
_less_equal = np.less_equal
_invert = np.invert
# Producers whose output array is always new and owned by the program (never a view of
# another value): an op on it may write into it when nothing else reads it.
_FRESH = frozenset([LINEAR])


# ----------------------------------------------------------------------------- kernels
def _threshold_bw32(g, x, threshold):  # (eager's _threshold_bw_fwd: NaN x passes g)
    return _multiply(g.view(np.int32), _invert(_less_equal(x, threshold))).view(_F32)


def _threshold_bw64(g, x, threshold):
    return _multiply(g.view(np.int64), _invert(_less_equal(x, threshold))).view(_F64)


def _make_ce_backward(dtype, reduction, nll_params, dim):
    """The fused backward of nll_loss(log_softmax(x)) for (N, C) inputs; N is read from the
    arrays at each call (the region may run for other batch sizes, see .dynamic)."""
    to_dtype = dtype.type
    zero = _ZERO[dtype]
    mean = reduction == "mean"
    rows_of = _rows_cache()

    def kernel(g, y, t):
        if _min_reduce(t) < 0:  # an ignored target: eager's kernels
            proxy = np.broadcast_to(zero, y.shape)
            gy = _nll_bw_fwd(g, proxy, t, None, nll_params)
            return _log_softmax_bw_fwd(gy, y, dim)
        n = y.shape[0]
        # c and s as Python floats holding values of y's dtype (NumPy's fastest scalar
        # operand, converted exactly): c is -(g / N) rounded to the dtype (a float32
        # quotient taken in float64 and rounded again is the float32 quotient: 53 >= 2*24+2)
        c = float(to_dtype(-(float(g) / n))) if mean else -float(g)
        s = c + 0.0
        rows = rows_of(n)
        e = _exp(y)
        _multiply(e, s, out=e)
        on = c - e[rows, t]
        _subtract(zero, e, out=e)
        e[rows, t] = on
        return e
    return kernel


def _rows_cache():
    """``rows(n)``: a read-only ``arange(n)``, kept for the last n asked."""
    last = [np.arange(0)]

    def rows(n):
        r = last[0]
        if r.shape[0] != n:
            r = np.arange(n)
            r.flags.writeable = False
            last[0] = r
        return r
    return rows


def _make_nll(dtype, params):
    """nll_loss of (N, C) inputs, no weights: the op's fast path without its checks (N read
    from the arrays at each call)."""
    to_dtype = dtype.type
    mean = params[0] == "mean"
    add_reduce = np.add.reduce
    asarray = np.asarray
    rows_of = _rows_cache()

    def kernel(x, t):
        if _min_reduce(t) < 0:
            return _nll_fwd(x, t, None, params)
        n = x.shape[0]
        try:
            picked = x[rows_of(n), t]
        except IndexError:
            return _nll_fwd(x, t, None, params)   # raises torch's error
        total = add_reduce(-picked, None, dtype)
        if mean:
            return asarray(total / to_dtype(n))   # (a scalar of the dtype divided by one)
        return asarray(total)
    return kernel


# ----------------------------------------------------------------------------- planning
def _uses(insts):
    """slot -> number of instructions reading it."""
    n = {}
    for inst in insts:
        for a in inst.args:
            if type(a) is str:
                n[a] = n.get(a, 0) + 1
    return n


def plan(insts, keep):
    """Which instructions of `insts` take a fast form: a dict index -> (kind, data), and the
    indices whose value another rule computes (skipped). `keep`: slots read after the
    program (its outputs, values saved for the backward, results)."""
    uses = _uses(insts)
    producer = {}
    rules = {}
    skip = set()
    for k, inst in enumerate(insts):
        op = inst.op
        if inst.inplace:
            continue
        for o in inst.outs:
            producer[o] = inst
        if inst.symbolic():
            continue  # sizes evaluated per call: the op's own form
        if op is RELU and type(inst.meta[0]) is tuple and inst.meta[0][1] in _FLOATS \
                and len(inst.meta[0][0]) > 0:
            x = inst.args[0]
            src = producer.get(x)
            into = (src is not None and src.op in _FRESH and uses.get(x) == 1
                    and x not in keep)
            rules[k] = ("relu", into)
        elif op is THRESHOLD_BW and len(inst.meta) == 2 and type(inst.meta[0]) is tuple \
                and type(inst.meta[1]) is tuple and inst.meta[0] == inst.meta[1] \
                and inst.meta[0][1] in _FLOATS and len(inst.meta[0][0]) > 0 \
                and type(inst.params) in (int, float):
            rules[k] = ("threshold_bw", None)
        elif op is T_OP:
            rules[k] = ("t", None)
        elif op is LINEAR and len(inst.meta[1][0]) == 2:
            rules[k] = ("linear", None)
        elif op is LINEAR_BW and inst.meta[0][1] in _FLOATS:
            rules[k] = ("linear_bw", [uses.get(o, 0) > 0 or o in keep for o in inst.outs])
        elif op is LOG_SOFTMAX and inst.meta[0][1] in _FLOATS and len(inst.meta[0][0]) == 2 \
                and inst.params in (1, -1):
            x = inst.args[0]
            src = producer.get(x)
            rules[k] = ("log_softmax", src is not None and src.op in _FRESH
                        and uses.get(x) == 1 and x not in keep)
        elif op is NLL_LOSS and _nll_ok(inst):
            rules[k] = ("nll", _make_nll(inst.meta[0][1], inst.params))
        elif op is LOG_SOFTMAX_BW and k > 0:
            ce = _ce_rule(insts[k - 1], inst, uses, keep)
            if ce is not None:
                rules[k] = ("ce_bw", ce)
                skip.add(k - 1)
    return rules, skip


def _nll_ok(inst):
    x, t, w = inst.meta
    if type(x) is not tuple or type(t) is not tuple or w is not type(None):
        return False
    shape, dtype = x
    reduction, ignore_index = inst.params
    return (len(shape) == 2 and dtype in _FLOATS and reduction in ("mean", "sum")
            and shape[0] > 0 and not 0 <= ignore_index < shape[1] and t[0] == shape[:1]
            and t[1].kind in "iu")


def _ce_rule(nll, lsm, uses, keep):
    """The fused cross-entropy backward's kernel and arguments, or None."""
    if nll.op is not NLL_LOSS_BW or nll.inplace or lsm.inplace:
        return None
    g, _, t, w = nll.args
    b0 = nll.outs[0]
    if lsm.args[0] != b0 or uses.get(b0) != 1 or b0 in keep or type(w) is str:
        return None
    if type(g) is not str or type(t) is not str or type(lsm.args[1]) is not str:
        return None
    shape, dtype = nll.out_meta[0]
    reduction, ignore_index = nll.params
    if len(shape) != 2 or dtype not in _FLOATS or reduction not in ("mean", "sum"):
        return None
    n, c = shape
    if n == 0 or c < 2 or 0 <= ignore_index < c or lsm.params not in (1, -1):
        return None
    if lsm.meta[1] != (shape, dtype) or nll.meta[0] != ((), dtype) \
            or nll.meta[2][1].kind not in "iu" or nll.meta[2][0] != (n,):
        return None
    kernel = _make_ce_backward(dtype, reduction, nll.params, lsm.params)
    return kernel, (g, lsm.args[1], t)


# ----------------------------------------------------------------------------- emitting
def emit_fast(prog, inst, rule):
    """Append the lines of `inst` in its fast form `rule` (from :func:`plan`); returns the
    slots they read."""
    kind, data = rule
    out = inst.outs[0]
    if kind == "relu":
        x = inst.args[0]
        z = prog.bind(_ZERO[inst.meta[0][1]], "c")
        mx = prog.bind(np.maximum, "f")
        if data:
            prog.lines.append(f"{out} = {mx}({z}, {x}, out={x})")
        else:
            prog.lines.append(f"{out} = {mx}({z}, {x})")
    elif kind == "threshold_bw":
        dt = inst.meta[0][1]
        k = prog.bind(_threshold_bw32 if dt == _F32 else _threshold_bw64, "f")
        g, x = inst.args
        th = inst.params
        th = prog.bind(_ZERO[dt], "c") if th == 0 else prog.const(th)
        prog.lines.append(f"{out} = {k}({g}, {x}, {th})")
    elif kind == "t":
        prog.lines.append(f"{out} = {inst.args[0]}.T")
    elif kind == "linear":
        b, x, wt = inst.args
        prog.lines.append(f"{out} = {x} @ {wt}")
        prog.lines.append(f"{out} += {b}")
    elif kind == "linear_bw":
        g, x, wt = inst.args
        mask, bias_2d = inst.params
        gb, gx, gw = inst.outs
        if data[0]:
            if not mask[0]:
                prog.lines.append(f"{gb} = {prog.bind(_ZERO[inst.meta[0][1]], 'c')}.copy()")
            elif bias_2d:
                prog.lines.append(f"{gb} = {g}.copy()")
            else:
                prog.lines.append(f"{gb} = {prog.bind(np.add.reduce, 'f')}({g}, 0)")
        if data[1]:
            z = f"{prog.bind(_ZERO[inst.meta[0][1]], 'c')}.copy()"
            prog.lines.append(f"{gx} = {g} @ {wt}.T" if mask[1] else f"{gx} = {z}")
        if data[2]:
            z = f"{prog.bind(_ZERO[inst.meta[0][1]], 'c')}.copy()"
            prog.lines.append(f"{gw} = ({g}.T @ {x}).T" if mask[2] else f"{gw} = {z}")
    elif kind == "log_softmax":
        x = inst.args[0]
        ax = inst.params
        mr = prog.bind(np.maximum.reduce, "f")
        ar = prog.bind(np.add.reduce, "f")
        sub = prog.bind(np.subtract, "f")
        into = f", out={x}" if data else ""
        prog.lines.append(f"{out} = {sub}({x}, {mr}({x}, axis={ax}, keepdims=True){into})")
        prog.lines.append(f"{out} -= {prog.bind(np.log, 'f')}({ar}("
                          f"{prog.bind(np.exp, 'f')}({out}), axis={ax}, keepdims=True))")
    elif kind == "nll":
        x, t, _ = inst.args
        prog.lines.append(f"{out} = {prog.bind(data, 'f')}({x}, {t})")
    elif kind == "ce_bw":
        kernel, (g, y, t) = data
        k = prog.bind(kernel, "f")
        prog.lines.append(f"{out} = {k}({g}, {y}, {t})")
        return (g, y, t)
    else:  # pragma: no cover - plan() makes only the kinds above
        raise AssertionError(kind)
    return [a for a in inst.args if type(a) is str]
