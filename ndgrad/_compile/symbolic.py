"""Symbolic sizes for dynamic shapes: ``SymInt``, the sizes read while a region is traced,
and the guards that decisions on them leave.

While a function compiled with ``dynamic`` other than False is traced, two kinds of size are
:class:`SymInt`: ints of the traced value that also carry an *expression* saying where the
size comes from, in terms of the shapes of the trace's slots (``@v3[0]``: dim 0 of the value
in slot v3; see :mod:`.tracer` for slots). The programs evaluate these expressions on the
arrays of each call, so a size computed from a shape follows the shape.

- sizes that *user code* reads from a traced tensor (``x.shape``, ``x.size()``, ``x.size(d)``,
  ``len(x)``, ``x.numel()``; code inside ndgrad gets plain ints);
- the input shapes the ops' nodes keep for their backward (``node._shape``, the shapes in
  ``node._meta`` that the engine sums a broadcast gradient back to, pooling's ``x_shape`` and
  cat's ``sizes`` extras), while the joint graph is traced (see ``Tracer.tag``);
- sizes an op's function passes as the size itself (``registry.size_expr``: an open slice's
  end, the last index).

A factory (``zeros``, ``ones``, ``full``) given a SymInt size makes an instruction of the
program instead of a constant (``tracer.FactoryOp``).

Sizes 0 and 1 stay plain ints: they are never generalised. Arithmetic with ints keeps the
expression (``+ - * // %``, ``-x``, ``abs``). A comparison (``== != < <= > >=``, ``bool``)
that *user code* makes is a decision, recorded on the tracer as a *guard*: its expression
and its outcome in the trace. Anything else that turns a size into a plain value in user code
(``int()``, ``float()``, ``/``, ``**``, mixing with a float) *specialises* it: the guard says
the expression equals its traced value. A dynamic entry checks them all (see
:mod:`.dynamic`). Decisions ndgrad's own code takes on sizes are not recorded: the entry is
generalised only when two traces took the same ones (the same program).

Invariants: a SymInt is an int of the traced value in every respect that reaches NumPy or
printing; nothing is recorded when no tracer is active on the thread (a size kept after the
trace is an ordinary int).
"""

import re
import sys
import threading

import numpy as np

from .._size import Size
from .._tensor import Tensor

__all__ = ["SymInt", "install", "uninstall", "guard_source", "symbolic_dims", "has_sym",
           "holds", "active", "SLOT_DIM"]

# a size in an expression: ``@v3[0]`` is dim 0 of the value in slot v3
SLOT_DIM = re.compile(r"@([ievbg]\d+)\[(\d+)\]")

_PACKAGE_DIR = __file__.rsplit("/", 2)[0]
_NUMPY_DIR = np.__file__.rsplit("/", 1)[0]
# .tracer sets `tracer` here while a symbolic trace runs on the thread
active = threading.local()


def _tracer():
    return getattr(active, "tracer", None)


def _from_user(depth):
    """Whether the frame `depth` levels above the caller is the user's: outside ndgrad, and
    for NumPy's own Python code, called from outside ndgrad."""
    f = sys._getframe(depth + 1)
    while f is not None and f.f_code.co_filename.startswith(_NUMPY_DIR):
        f = f.f_back
    return f is not None and not f.f_code.co_filename.startswith(_PACKAGE_DIR)


def _expr(v):
    return v.expr if type(v) is SymInt else repr(int(v))


class SymInt(int):
    """An int (its traced value) with the expression it was computed by."""

    def __new__(cls, value, expr):
        self = int.__new__(cls, value)
        self.expr = expr
        return self

    # -------------------------------------------------------------- keeps the expression
    def _arith(self, other, op, fn, reflected=False):
        if type(other) is bool or not isinstance(other, int):
            self._specialise(3)
            v = int.__int__(self)
            return fn(other, v) if reflected else fn(v, other)
        a, b = (other, self) if reflected else (self, other)
        value = fn(int.__int__(a) if type(a) is SymInt else a,
                   int.__int__(b) if type(b) is SymInt else b)
        return SymInt(value, f"({_expr(a)} {op} {_expr(b)})")

    def __add__(self, o):
        return self._arith(o, "+", lambda a, b: a + b)

    def __radd__(self, o):
        return self._arith(o, "+", lambda a, b: a + b, True)

    def __sub__(self, o):
        return self._arith(o, "-", lambda a, b: a - b)

    def __rsub__(self, o):
        return self._arith(o, "-", lambda a, b: a - b, True)

    def __mul__(self, o):
        return self._arith(o, "*", lambda a, b: a * b)

    def __rmul__(self, o):
        return self._arith(o, "*", lambda a, b: a * b, True)

    def __floordiv__(self, o):
        return self._arith(o, "//", lambda a, b: a // b)

    def __rfloordiv__(self, o):
        return self._arith(o, "//", lambda a, b: a // b, True)

    def __mod__(self, o):
        return self._arith(o, "%", lambda a, b: a % b)

    def __rmod__(self, o):
        return self._arith(o, "%", lambda a, b: a % b, True)

    def __neg__(self):
        return SymInt(-int.__int__(self), f"(-{self.expr})")

    def __pos__(self):
        return self

    def __abs__(self):
        return SymInt(abs(int.__int__(self)), f"abs({self.expr})")

    # -------------------------------------------------------------- decisions: guards
    def _decide(self, other, op, fn):
        v = int.__int__(self)
        if type(other) is SymInt:
            result = fn(v, int.__int__(other))
            rhs = other.expr
        elif type(other) is int or type(other) is bool:
            result = fn(v, other)
            rhs = repr(int(other))
        elif type(other) is float and other == other and abs(other) != float("inf"):
            result = fn(v, other)
            rhs = repr(other)
        else:
            self._specialise(3)
            return fn(v, other)
        tr = _tracer()
        if tr is not None and _from_user(2):
            tr.sym_guards.append((f"({self.expr} {op} {rhs})", bool(result)))
        return result

    def __eq__(self, o):
        return self._decide(o, "==", lambda a, b: a == b)

    def __ne__(self, o):
        return self._decide(o, "!=", lambda a, b: a != b)

    def __lt__(self, o):
        return self._decide(o, "<", lambda a, b: a < b)

    def __le__(self, o):
        return self._decide(o, "<=", lambda a, b: a <= b)

    def __gt__(self, o):
        return self._decide(o, ">", lambda a, b: a > b)

    def __ge__(self, o):
        return self._decide(o, ">=", lambda a, b: a >= b)

    def __bool__(self):
        return self._decide(0, "!=", lambda a, b: a != b)

    # Python turns a size into text or a hash key only to decide on it later (a dict or set
    # lookup, a string comparison): from user code, that specialises.
    def __hash__(self):
        self._specialise()
        return int.__hash__(self)

    def __format__(self, spec):
        self._specialise()
        return int.__format__(int.__int__(self), spec)

    # -------------------------------------------------------------- leaving: specialise
    def _specialise(self, depth=2):
        tr = _tracer()
        if tr is not None and _from_user(depth):
            tr.sym_guards.append((f"({self.expr} == {int.__int__(self)})", True))

    def __int__(self):
        self._specialise()
        return int.__int__(self)

    def __float__(self):
        self._specialise()
        return float(int.__int__(self))

    def __truediv__(self, o):
        self._specialise()
        return int.__int__(self) / o

    def __rtruediv__(self, o):
        self._specialise()
        return o / int.__int__(self)

    def __pow__(self, o, mod=None):
        self._specialise()
        return pow(int.__int__(self), o, mod)

    def __rpow__(self, o):
        self._specialise()
        return o ** int.__int__(self)

    def __repr__(self):
        self._specialise()
        return int.__repr__(self)

    def __str__(self):
        self._specialise()
        return int.__repr__(self)

    def __reduce__(self):
        return (int, (int.__int__(self),))


def guard_source(guards):
    """The conjunction of recorded guards (expression, outcome) as one Python expression."""
    parts = []
    for expr, outcome in dict.fromkeys(guards):
        parts.append(expr if outcome else f"not {expr}")
    return " and ".join(parts) or "True"


def holds(obj, leaf_type, depth=4):
    """Whether `obj` or the tuples, lists and dicts in it (`depth` levels) hold a value of
    exactly `leaf_type`."""
    t = type(obj)
    if t is leaf_type:
        return True
    if depth and (t is tuple or t is list):
        return any(holds(o, leaf_type, depth - 1) for o in obj)
    if depth and t is dict:
        return any(holds(o, leaf_type, depth - 1) for o in obj.values())
    return False


def has_sym(obj):
    """Whether `obj` (a constant or an op's parameters) holds a SymInt."""
    return holds(obj, SymInt)


def _sym(v, slot, d):
    return SymInt(v, f"@{slot}[{d}]") if v >= 2 else v


def symbolic_dims(dims, slot):
    """`dims` (a shape) with each size of 2 or more a SymInt of dim d of `slot`."""
    return tuple(_sym(v, slot, d) for d, v in enumerate(dims))


# ------------------------------------------------------------------ sizes read by user code
def _user_slot(t):
    """The slot of tensor `t` when user code reads its sizes in a symbolic trace, else None."""
    tr = _tracer()
    if tr is None or not _from_user(2):
        return None
    return tr.by_tensor.get(id(t)) or tr.by_array.get(id(t._data))


def _shape(self):
    slot = _user_slot(self)
    dims = self._data.shape
    return Size(dims if slot is None else symbolic_dims(dims, slot))


def _make_size(original):
    def size(self, dim=None):
        out = original(self, dim)
        slot = _user_slot(self)
        if slot is None:
            return out
        if dim is None:
            return Size(symbolic_dims(out, slot))
        return _sym(out, slot, dim + self._data.ndim if dim < 0 else dim)
    size.__wrapped__ = original
    return size


def _make_len(original):
    def length(self):
        out = original(self)
        slot = _user_slot(self)
        if slot is not None and out >= 2:
            # len() hands Python a plain int (it strips an int subclass): specialise
            _sym(out, slot, 0)._specialise()
        return out
    length.__wrapped__ = original
    return length


def _make_numel(original):
    def numel(self):
        out = original(self)
        slot = _user_slot(self)
        if slot is None:
            return out
        n = 1
        for d in symbolic_dims(self._data.shape, slot):
            n = n * d
        return n
    numel.__wrapped__ = original
    return numel


_saved = {}


def install():
    """Patch the size readers of Tensor (done by the tracer's patching, under its lock)."""
    _saved["shape"] = Tensor.__dict__["shape"]
    Tensor.shape = property(_shape)
    for name, make in (("size", _make_size), ("__len__", _make_len), ("numel", _make_numel),
                       ("nelement", _make_numel)):
        original = Tensor.__dict__[name]
        _saved[name] = original
        setattr(Tensor, name, make(original))


def uninstall():
    for name, original in _saved.items():
        setattr(Tensor, name, original)
    _saved.clear()
