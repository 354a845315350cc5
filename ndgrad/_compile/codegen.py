"""From traced instructions to Python source: straight-line NumPy calling the ops' kernels.

Each :class:`~ndgrad._compile.tracer.Inst` becomes one or two lines on arrays that do what the
op's dispatcher did to arrays in eager mode, and nothing else (no Tensor, no Node):

- unary ops: ``fwd(x)`` (with the default-dtype cast of ``float_only`` ops on integers),
- binary ops: the same path the dispatcher takes for these argument kinds (same-dtype
  tensors, tensor and Python number, or the general path with torch's type promotion and
  its casts), including the final cast to the result dtype,
- general primitives: ``fwd(*arrays, params)``,
- anything else (another maker, in-place ops): the op's own implementation on temporary
  tensors with grad mode off (slower, same arrays).

Shapes, dtypes and every decision taken from them are fixed at trace time; the compiled region
guards them. Sizes that are :class:`~ndgrad._compile.symbolic.SymInt` in a parameter or a
constant become expressions evaluated on the program's arrays at each call (``v3.shape[0]``,
or ``sh_v3[0]`` for a forward value's shape passed to the backward). Same kernels, same
order, same casts: the results are bitwise those of eager.
"""

import math
import re

import numpy as np

from .. import _dtype, _state
from .._ops import registry
from .._tensor import _from_array
from .symbolic import SLOT_DIM, SymInt, has_sym

__all__ = ["Program", "emit"]

_INTS = frozenset(np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64,
                                        np.uint8))
_tls = _state.tls
# The dispatcher's promotion helpers for binary ops; without them binary ops take the generic
# form.
_PROMOTE = (getattr(registry, "_promote2", None), getattr(registry, "_scalar_promote", None))
_PROMOTE = None if None in _PROMOTE else _PROMOTE


class Program:
    """Source lines and the names they refer to (kernels, params, constants)."""

    def __init__(self):
        self.env = {"_asarray": np.asarray, "_copyto": np.copyto}
        self.lines = []
        self._n = 0
        self._bound = {}
        self.n_inputs = 0
        # symbolic sizes: how a slot's dim reads here, and the slots whose shapes were read
        self.sym_render = lambda slot, d: f"{slot}.shape[{d}]"
        self.sym_reads = set()

    def tensor_index(self, slot):
        """Position in the region's tensor tuple of input or external `slot`."""
        k = int(slot[1:])
        return k if slot[0] == "i" else self.n_inputs + k

    def bind(self, value, prefix="k"):
        key = (prefix, id(value))
        name = self._bound.get(key)
        if name is None:
            name = f"_{prefix}{self._n}"
            self._n += 1
            self.env[name] = value
            self._bound[key] = name
        return name

    def const(self, value):
        t = type(value)
        if value is None or t is bool or t is int:
            return repr(value)
        if t is float and math.isfinite(value):
            return repr(value)
        if has_sym(value):
            return self.literal(value)
        return self.bind(value, "c")

    def value(self, value, prefix):
        """Source for a constant or an op's parameters: bound once, or, when it holds
        symbolic sizes, a literal evaluating them on this call's arrays."""
        return self.literal(value) if has_sym(value) else self.bind(value, prefix)

    def literal(self, value):
        t = type(value)
        if t is SymInt:
            return self.expr(value.expr)
        if t is tuple:
            items = [self.literal(v) for v in value]
            return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
        if t is list:
            return f"[{', '.join(self.literal(v) for v in value)}]"
        if t is dict:
            return "{" + ", ".join(f"{self.literal(k)}: {self.literal(v)}"
                                   for k, v in value.items()) + "}"
        return self.const(value)

    def expr(self, source):
        """A size expression of .symbolic (``@v3[0]``) in this program's terms: the shape of
        a value it holds (forward), or of a forward value passed in (``sh_v3``, backward)."""
        def slot_dim(m):
            slot, d = m.group(1), m.group(2)
            self.sym_reads.add(slot)
            return self.sym_render(slot, d)
        return SLOT_DIM.sub(slot_dim, source)

    def function(self, name, params, returns, lines=None):
        src = f"def {name}({', '.join(params)}):\n"
        body = _with_frees(self.lines if lines is None else lines, returns) or ["pass"]
        src += "".join(f"    {line}\n" for line in body)
        src += f"    return {returns}\n"
        env = dict(self.env)
        env["__name__"] = __name__  # its warnings are ndgrad's (see _ops/__init__.py)
        exec(compile(src, f"<ndgrad.compile {name}>", "exec"), env)
        fn = env[name]
        fn.__source__ = src
        return fn


_SLOT_NAME = re.compile(r"\b[vbgie]\d+\b")


def _with_frees(lines, returns):
    """`lines` with ``del`` of each slot right after the last line naming it (slots the
    return expression names excepted): a value dies where eager's would (its last reader
    ran), so later temporaries reuse warm memory instead of adding to a peak of every
    intermediate of the program. Slot names are whole tokens (``v3``, never ``sh_v3`` or
    ``_k3``); the lines are single statements."""
    if any(line.endswith(":") or line[:1].isspace() for line in lines):
        return list(lines)
    last = {}
    for k, line in enumerate(lines):
        for slot in _SLOT_NAME.findall(line):
            last[slot] = k
    for slot in _SLOT_NAME.findall(returns):
        last.pop(slot, None)
    frees = {}
    for slot, k in last.items():
        frees.setdefault(k, []).append(slot)
    out = []
    for k, line in enumerate(lines):
        out.append(line)
        if k in frees:
            out.append("del " + ", ".join(frees[k]))
    return out


# --------------------------------------------------------------------------- op forms
_CODES = {}


def _closure(fn):
    """The variables a registry-made function reads: its closure, or for code the registry
    generates from a template (no closure), the namespace it was generated in."""
    if fn.__code__.co_freevars:
        return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
    return fn.__globals__


def _form(op):
    """("unary"|"binary"|"general", closure variables) of an op made by the registry's
    makers, or ("generic", None) for anything else (replayed through its implementation)."""
    form = _CODES.get(op)
    if form is not None:
        return form
    form = ("generic", None)
    try:
        cv = _closure(op.impl)
        if op.kind == "unary" and {"fwd", "params", "float_only"} <= cv.keys():
            form = ("unary", cv)
        elif op.kind == "binary" and {"fwd", "fast_fwd", "params", "to_float",
                                      "compare"} <= cv.keys() and _PROMOTE is not None:
            form = ("binary", cv)
        elif op.kind == "general" and "run" in cv:
            rv = _closure(cv["run"])
            if {"fwd", "n_out"} <= rv.keys():
                form = ("general", rv)
    except (AttributeError, TypeError, ValueError):
        form = ("generic", None)
    _CODES[op] = form
    return form


def _ref(prog, a):
    return a if type(a) is str else prog.const(a[1])


def _zero_d(call, meta):
    return f"_asarray({call})" if len(meta[0]) == 0 else call


def emit(prog, inst):
    """Append the lines computing `inst` to `prog`."""
    if inst.inplace:
        return _emit_inplace(prog, inst)
    kind, cv = _form(inst.op)
    if kind == "unary" and type(inst.meta[0]) is tuple:
        return _emit_unary(prog, inst, cv)
    if kind == "binary":
        return _emit_binary(prog, inst, cv)
    if kind == "general":
        return _emit_general(prog, inst, cv)
    return _emit_generic(prog, inst)


def _emit_unary(prog, inst, cv):
    x = inst.args[0]
    dt = inst.meta[0][1]
    if cv["float_only"] and dt in _INTS:
        x = f"{x}.astype({prog.bind(_dtype.get_default_dtype().np, 'd')})"
    f = prog.bind(cv["fwd"], "f")
    call = f"{f}({x}, {prog.value(inst.params, 'p')})" if cv["params"] else f"{f}({x})"
    prog.lines.append(f"{inst.outs[0]} = {_zero_d(call, inst.out_meta[0])}")


def _emit_binary(prog, inst, cv):
    (a, b), (ma, mb) = inst.args, inst.meta
    p = inst.params
    ta = type(ma) is tuple
    tb = type(mb) is tuple
    out = inst.outs[0]
    to_float = cv["to_float"]
    compare = cv["compare"]
    fast = prog.bind(cv["fast_fwd"], "f")
    if ta and tb and p is None and ma[1] is mb[1] and not (to_float and ma[1].kind in "biu"):
        prog.lines.append(f"{out} = {_zero_d(f'{fast}({a}, {b})', inst.out_meta[0])}")
        return
    if ta and mb in (float, int) and p is None and ma[1].kind == "f":
        call = _zero_d(f"{fast}({a}, {_ref(prog, b)})", inst.out_meta[0])
        prog.lines.append(f"{out} = {call}")
        if not compare:
            _cast_to(prog, out, ma[1])
        return
    # The dispatcher's general path: torch's promotion, casts in, the kernel, a cast out.
    if ta and tb:
        rd = ma[1]
        if rd is not mb[1] and rd != mb[1]:
            rd = _PROMOTE[0](_probe(ma), _probe(mb))
    elif ta:
        rd = _PROMOTE[1](ma[1], b[1])
    else:
        rd = _PROMOTE[1](mb[1], a[1])
    if to_float and rd.kind in "biu":
        rd = _dtype.get_default_dtype().np
    args = []
    for r, m, t in ((a, ma, ta), (b, mb, tb)):
        if not t:
            args.append(_ref(prog, r))
        elif m[1] is not rd and m[1] != rd:
            args.append(f"{r}.astype({prog.bind(rd, 'd')})")
        else:
            args.append(r)
    f = prog.bind(cv["fwd"], "f")
    if cv["params"]:
        args.append(prog.value(p, "p"))
    call = _zero_d(f"{f}({', '.join(args)})", inst.out_meta[0])
    prog.lines.append(f"{out} = {call}")
    if not compare:
        _cast_to(prog, out, rd)


def _probe(meta):
    shape, dt = meta
    return _from_array(np.empty((0,) * len(shape), dt))


def _cast_to(prog, out, rd):
    d = prog.bind(rd, "d")
    prog.lines.append(f"if {out}.dtype != {d}: {out} = {out}.astype({d})")


def _emit_general(prog, inst, rv):
    f = prog.bind(rv["fwd"], "f")
    args = [_ref(prog, a) for a in inst.args]
    args.append(prog.value(inst.params, "p"))
    call = f"{f}({', '.join(args)})"
    if rv["n_out"] == 1:
        prog.lines.append(f"{inst.outs[0]} = {_zero_d(call, inst.out_meta[0])}")
        return
    prog.lines.append(f"{', '.join(inst.outs)}, = {call}")
    for o, m in zip(inst.outs, inst.out_meta):
        if len(m[0]) == 0:
            prog.lines.append(f"{o} = _asarray({o})")


def _generic_kernel(inst, symbolic=False):
    """A function of the tensor arguments' arrays running the op's own implementation
    (`symbolic`: of the parameters and the constants too, evaluated by the program)."""
    op = inst.op
    p = inst.params
    template = [a for a in inst.args]

    def run(p, consts, arrays):
        it = iter(arrays)
        cs = iter(consts)
        args = [_from_array(next(it)) if type(a) is str else next(cs) for a in template]
        prev = _tls.grad_enabled
        _tls.grad_enabled = False
        try:
            out = op.impl(*args, p, _plain=True)
        finally:
            _tls.grad_enabled = prev
        if type(out) is tuple:
            return tuple(o._data for o in out)
        return out._data

    if symbolic:
        return lambda p, consts, *arrays: run(p, consts, arrays)
    consts = tuple(a[1] for a in template if type(a) is not str)

    def kernel(*arrays):  # parameters and constants fixed at trace time
        return run(p, consts, arrays)
    return kernel


def _generic_call(prog, inst):
    tensors = [a for a in inst.args if type(a) is str]
    if inst.symbolic():
        k = prog.bind(_generic_kernel(inst, True), "g")
        consts = prog.literal(tuple(a[1] for a in inst.args if type(a) is not str))
        return f"{k}({prog.value(inst.params, 'p')}, {consts}, {', '.join(tensors)})"
    k = prog.bind(_generic_kernel(inst), "g")
    return f"{k}({', '.join(tensors)})"


def _emit_generic(prog, inst):
    call = _generic_call(prog, inst)
    if len(inst.outs) == 1:
        prog.lines.append(f"{inst.outs[0]} = {call}")
    else:
        prog.lines.append(f"{', '.join(inst.outs)}, = {call}")


def _emit_inplace(prog, inst):
    target = inst.args[0]
    call = _generic_call(prog, inst)
    prog.lines.append(f"_copyto({target}, {call}, casting='unsafe')")
    if target[0] in "ie":
        prog.lines.append(f"_T[{prog.tensor_index(target)}]._vc[0] += 1")
