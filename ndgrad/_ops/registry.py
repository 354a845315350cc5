"""The op registry and dispatcher: one OpDef per differentiable primitive, and the code that
runs it (unwrap arrays -> forward kernel -> wrap -> record a Node when grad is needed).

An OpDef holds, in one place: the forward kernel on NumPy arrays, the backward rule (VJP)
written in ndgrad ops (so backward is itself differentiable and ``create_graph`` works), the
forward rule (JVP) or a flag that derives it, what to save for backward, and dtype behaviour.

How to declare a primitive (see ``pointwise.py`` for many)::

    exp = unary("exp", np.exp, save=(("out", None),), float_only=True)

    @exp.def_vjp
    def _(ctx, g):
        (result,) = ctx.saved
        return (g * result.conj(),)

VJP contract: ``vjp(ctx, g)`` gets the node (``ctx.saved``, ``ctx._params``, ``ctx._next``)
and the output gradient (a tuple for multi-output ops, with ``None`` for outputs that got no
gradient); it returns one gradient or ``None`` per input. Gradients may have the broadcast
shape of the output: the engine sums them back to the input's shape when ``node._meta`` says
the shapes differ.

JVP contract: ``jvp(ctx, tangents)`` gets a small object with ``inputs`` (primal tensors or
scalars), ``outputs`` (primal result tensors), ``params``, and the input tangents (``None`` for
a zero tangent); returns the output tangent (or a tuple for multi-output ops).

Every declaration is recorded with its home (``OpDef.module``, the declaring module, where its
rules must live too): ``all_ops()`` by name, ``declared_ops()`` in order. ``PRIMITIVES`` is the
by-name table for a module below an op's family, which may not import the family (see
docs/architecture.md); this module imports no op module.

Hot-path invariants: ``_state.special`` is read once per op; when zero no profiler, anomaly
mode or dual level is active and the generic slow path is skipped entirely. Each maker's
dispatch code (fast and general paths) is generated from its template with the recording
snippets of the "recording" section, the one place that says how a node is recorded.
"""

import functools
import itertools
import linecache
import os
import sys

import numpy as np

from .. import _dtype, _state
from .._tensor import Tensor, _from_array
from .._graph_core import Node, SavedTensor

__all__ = ["OpDef", "unary", "binary", "primitive", "wrap", "as_tensor_arg", "special_hooks",
           "unrecorded_float", "raw_view", "add_tangents", "jvp_from_parts", "bilinear_jvp",
           "elementwise_jvp", "record_input_shape", "PRIMITIVES", "sizes_decide",
           "size_expr", "reads_values"]

_ndarray = np.ndarray
_asarray = np.asarray
_tls = _state.tls
_FROM_NP = _dtype._FROM_NP
_SCALARS = (int, float, bool, complex)

# Observers called around every op while _state.special is non-zero. Each is an object with
# before(op, args) -> token and after(op, args, params, outputs, token). Forward AD, anomaly
# mode and the profiler register here.
special_hooks = []


class OpDef:
    """A differentiable primitive: kernels, rules and flags, declared once."""

    __slots__ = ("name", "node", "fwd", "vjp", "jvp", "save", "n_out", "diff_outs", "kind",
                 "linear", "view", "call", "inplace_call", "batched_vjp", "batched_jvp",
                 "batch_transparent", "vmap", "module", "rules_from", "jvp_raw", "fast_fwd",
                 "__dict__")

    def __init__(self, name, fwd, node_name, save=(), n_out=1, diff_outs=None, kind=None,
                 linear=False, view=False, elementwise=False):
        self.name = name
        self.fwd = fwd
        # One Node subclass per op so grad_fn prints as torch's (MulBackward0, ...).
        self.node = type(node_name, (Node,), {"__slots__": (), "_op": self})
        self.vjp = _no_vjp(name)
        self.jvp = None
        # The JVP on raw arrays (see ``def_jvp_raw``): the forward-AD engine's fast path.
        self.jvp_raw = None
        # unary/binary ops: the kernel the dispatch fast path calls on the arrays of tensors
        # of one dtype when params is None (``fast_fwd(*arrays)``); None for other ops.
        self.fast_fwd = None
        # Rules for gradients and tangents carrying a leading batch dimension B
        # (autograd.grad(is_grads_batched=True), vectorized Jacobians): None means the
        # batched engines run the plain rule once per batch element, unless
        # batch_transparent says the plain VJP already broadcasts over a leading dim.
        self.batched_vjp = None
        self.batched_jvp = None
        self.batch_transparent = kind in ("unary", "binary")
        # The batching rule under ``func.vmap`` (see ``def_vmap``); None: derived from
        # `kind` for elementwise ops, else the per-sample fallback (loop and stack).
        self.vmap = None
        # The op's home: the module that declared it (set by the maker), where every rule of
        # the op is declared too (tests/test_architecture.py checks it).
        self.module = None
        # For an op derived from another that takes that op's rules as they are (a view's
        # ``*_copy`` twin): the other op, whose module is where these rules live.
        self.rules_from = None
        self.save = tuple(save)
        self.n_out = n_out
        self.diff_outs = diff_outs
        self.kind = kind
        self.linear = linear
        self.view = view
        # primitives only (see record_input_shape): nodes store input 0's shape
        self.records_shape = False
        if elementwise:  # the JVP derived from the VJP (torch's auto_element_wise)
            self.jvp = elementwise_jvp(self)

    def def_vjp(self, fn):
        self.vjp = fn
        return fn

    def def_jvp(self, fn):
        self.jvp = fn
        return fn

    def def_jvp_parts(self, *parts):
        """Declare the JVP as a sum of per-input contributions ``part(ctx, t_i)`` (None for
        an input without a tangent rule): inputs with a zero tangent are skipped, so no part
        handles a missing tangent by hand (JAX's ``defjvp``)."""
        self.jvp = jvp_from_parts(parts)
        return self.jvp

    def def_jvp_raw(self, fn):
        """Declare the JVP of a unary or binary op on NumPy arrays: ``fn(x, t, out)`` or
        ``fn(a, b, ta, tb, out)`` -> the output tangent's array, or None for no tangent.
        Operands are arrays (`b` may be a Python float or int), tangents arrays or None
        (no tangent), `out` the output's array. The forward-AD engine calls it instead of
        ``jvp`` only where ``jvp`` would record and convert nothing (params None, one real
        float32/float64 dtype, no grad needed, no other special mode). It must compute
        bitwise what ``jvp`` computes: the same NumPy calls in the same order
        (tests/test_forward_ad_raw.py compares the two, and torch, for every op declaring
        one)."""
        self.jvp_raw = fn
        return fn

    def def_batched_vjp(self, fn):
        self.batched_vjp = fn
        return fn

    def def_batched_jvp(self, fn):
        self.batched_jvp = fn
        return fn

    def def_vmap(self, fn):
        """Declare the batching rule ``fn(batched, params, *args)`` used under ``func.vmap``:
        each tensor argument with ``batched[i]`` true carries its batch at dim 0 (the others
        are as the op got them); returns the outputs with their batch at dim 0, or
        NotImplemented to let the per-sample fallback run (``_functorch/batching.py``)."""
        self.vmap = fn
        return fn

    def __call__(self, *args, **kwargs):
        return self.call(*args, **kwargs)

    def __repr__(self):
        return f"<OpDef {self.name} -> {self.node.__name__}>"


def _no_vjp(name):
    def vjp(ctx, g):
        raise RuntimeError(f"the derivative for '{name}' is not implemented.")
    return vjp


def no_forward_ad(name):
    """A JVP rule raising torch's error for an op without a forward-mode formula."""
    def jvp(ctx, *tangents):
        raise NotImplementedError(
            f"Trying to use forward AD with {name} that does not support it because it has "
            "not been implemented yet.\nPlease file an issue to PyTorch at "
            "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so "
            "that we can prioritize its implementation or submit a PR adding the "
            "implementation to derivatives.yaml")
    return jvp


def add_tangents(a, b):
    """The sum of two partial tangents or gradients, either of which may be None (zero)."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def jvp_from_parts(parts):
    """A JVP rule summing ``part(ctx, t)`` over the inputs whose tangent is not None."""
    def jvp(ctx, *tangents):
        r = None
        for part, t in zip(parts, tangents):
            if t is not None and part is not None:
                r = add_tangents(r, part(ctx, t))
        return r
    return jvp


class _VjpArgs:
    """What a VJP reads from its node (saved values, params, the inputs whose gradient is
    needed), built from a JVP context, so a JVP can call the op's VJP without a node."""

    __slots__ = ("saved", "_saved", "_params", "_next", "_extra")

    def __init__(self, saved, params, needed):
        self.saved = self._saved = saved
        self._params = params
        self._next = needed
        self._extra = None


def _saved_picker(save):
    """``(inputs, outputs) -> saved values`` for a save spec (what the node would hold)."""
    where = tuple((True, 0) if w == "out" else (True, int(w[3:])) if type(w) is str
                  else (False, w) for w, _ in save)
    if len(where) == 1:
        out, k = where[0]
        return (lambda ins, outs: (outs[k],)) if out else (lambda ins, outs: (ins[k],))
    return lambda ins, outs: tuple([outs[k] if out else ins[k] for out, k in where])


def elementwise_jvp(op):
    """The JVP of a pointwise op whose VJP is ``g * conj(df/dx_i)`` for each input:
    ``conj(vjp(conj(t_i)))``, which is ``df/dx_i t_i`` for real and holomorphic functions
    alike (torch's auto_element_wise). A binary op's VJP is asked for one input's gradient at
    a time, and the registry sums the parts (``jvp_from_parts``)."""
    pick = None

    def part(i, n):
        needed = tuple(True if k == i else None for k in range(n))

        def tangent(ctx, t):
            nonlocal pick
            if pick is None:
                pick = _saved_picker(op.save)
            args = _VjpArgs(pick(ctx.inputs, ctx.outputs), ctx.params, needed)
            if t._data.dtype.kind == "c":
                r = op.vjp(args, t.conj())[i]
                return None if r is None else r.conj()
            r = op.vjp(args, t)[i]
            return r.conj() if r is not None and r._data.dtype.kind == "c" else r
        return tangent

    if op.kind == "binary":
        return jvp_from_parts((part(0, 2), part(1, 2)))
    return part(0, 1)


def bilinear_jvp(product):
    """The JVP of a product bilinear in its first two inputs: ``product(ta, b, ctx) +
    product(a, tb, ctx)``, skipping zero tangents."""
    return jvp_from_parts((lambda ctx, ta: product(ta, ctx.inputs[1], ctx),
                           lambda ctx, tb: product(ctx.inputs[0], tb, ctx)))


# --------------------------------------------------------------------------- helpers
def wrap(arr):
    """A new Tensor around a NumPy result (0-d results of NumPy come back as scalars)."""
    if type(arr) is not _ndarray:
        arr = _asarray(arr)
    return _from_array(arr)


def as_tensor_arg(x, name="input"):
    """Coerce an op argument to a Tensor: Tensors pass, numbers and arrays are wrapped."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, _SCALARS) or isinstance(x, (np.ndarray, np.generic)):
        if isinstance(x, _SCALARS):
            arr = np.asarray(x, dtype=_dtype.scalar_dtype(x).np)
        else:
            arr = np.asarray(x)
        return Tensor(arr)
    raise TypeError(f"expected Tensor as argument '{name}', but got {type(x).__name__}")


# --------------------------------------------------------------------------- recording
# How a node is recorded is written once, here, as source snippets; every dispatch path of
# every maker below (the fast and general paths of unary and binary, primitives of one, two
# or n inputs) is generated from its maker's template with them (``_compile``), so a change
# to recording is made here and reaches all paths. The concerns, per input:
#
# - requires grad: ``_rg``, refreshing first a view whose base changed in place;
# - edge: ``(grad_fn, output_nr)``, or the leaf's AccumulateGrad (``Tensor._edge``);
# - meta: ``(shape, dtype)`` when the gradient reaching the input must be summed back to its
#   shape (broadcasting ops) or cast back to its dtype, else None (``_meta_of``);
# - inference: nothing is recorded when every input is an inference tensor (torch leaves
#   autograd out then); saving one raises, in the savers (``_check_inference``).
#
# A snippet is told what is known about an input where it runs: "current" (a Tensor that is
# no view or a current view: no in-place change of its base since it was made, so
# Tensor._refresh_view would do nothing; the fast paths check this), "tensor" (a Tensor,
# maybe a stale view), "any" (a Tensor or a number) or "number".


def _needs_grad(t):
    """requires_grad of a tensor, refreshing a view whose base changed in place."""
    if t._rg:
        return True
    if t._base is not None:
        t._refresh_view()
        return t._rg
    return False


def _check_inference(t):
    ex = t._extra
    if ex is not None and ex.get("inference") and not _tls.inference:
        raise RuntimeError(
            "Inference tensors cannot be saved for backward. Please do not use Tensors created "
            "in inference mode in computation tracked by autograd. To work around this, you can "
            "make a clone to get a normal tensor and use it in autograd, or use "
            "`torch.no_grad()` instead of `torch.inference_mode()`.")


def _inference_only(inputs):
    """Every input is an inference tensor (numbers count as plain tensors, as torch wraps
    them)."""
    for x in inputs:
        if not isinstance(x, Tensor) or x._extra is None or not x._extra.get("inference"):
            return False
    return True


def _meta_of(inputs, rgs, out, broadcast):
    """Per input needing grad (all Tensors when `rgs` is None), ``(shape, dtype)`` when its
    gradient must be cast back to its floating dtype or (`broadcast`) summed back to its
    shape; None when no input needs either."""
    meta = None
    shape, dt = out.shape, out.dtype
    for i, x in enumerate(inputs):
        if (rgs[i] if rgs is not None else isinstance(x, Tensor)):
            d = x._data
            if (broadcast and d.shape != shape) or (d.dtype != dt and d.dtype.kind in "fc"):
                if meta is None:
                    meta = [None] * len(inputs)
                meta[i] = (d.shape, d.dtype)
    return tuple(meta) if meta is not None else None


def _meta_for(inputs, out_data):
    """``_meta_of`` for every Tensor input of a broadcasting op."""
    return _meta_of(inputs, None, out_data, True)


def _save(op, inputs, outputs, rgs):
    """The values an op node keeps: per spec ``(what, needed_if)``, None when not needed."""
    saved = []
    for what, cond in op.save:
        if cond is not None and not rgs[cond]:
            saved.append(None)
            continue
        if what == "out":
            saved.append(SavedTensor(outputs[0], True, 0))
        elif type(what) is str:  # "out1", "out2": later outputs
            k = int(what[3:])
            o = outputs[k]
            saved.append(SavedTensor(o, True, k) if o._grad_fn is not None else o)
        else:
            saved.append(_save_slow(inputs[what]))
    return tuple(saved)


def _save_slow(x):
    """Saving an input that is not a plain tensor: an inference tensor, or a number."""
    if isinstance(x, Tensor):
        if x._extra is not None:
            _check_inference(x)
        return SavedTensor(x)
    return x


def _rg_src(x, known):
    """Source: does input `x` need grad?"""
    if known == "number":
        return "False"
    if known == "current":
        return f"{x}._rg"
    rg = f"({x}._rg or ({x}._base is not None and _needs_grad({x})))"
    return f"(isinstance({x}, _T) and {rg})" if known == "any" else rg


def _edge_src(x, known):
    """Source: the edge through which a gradient reaches input `x` (which needs grad)."""
    direct = (f"((_fn, {x}._output_nr) if (_fn := {x}._grad_fn) is not None "
              f"else ({x}._accumulator(), 0))")
    return direct if known == "current" else f"({direct} if {x}._base is None else {x}._edge())"


def _recordable_src(xs, rgs):
    """Source: not every input is an inference tensor (None: known). An input needing grad
    with no extras is the cheap common proof."""
    if any(known == "number" for _, known, _ in xs):
        return None
    quick = " or ".join(f"({rg} and {x}._extra is None)" if known == "any" else
                        f"{x}._extra is None" for (x, known, _), rg in zip(xs, rgs))
    return f"({quick} or not _inference_only(({', '.join(x for x, _, _ in xs)},)))"


def _meta_src(xs, rgs, out, broadcast):
    """Source lines setting ``node._meta`` (see ``_meta_of``): a cheap screen on dtype
    identity and shapes, then the exact entries."""
    names = ", ".join(x for x, _, _ in xs)
    exact = f"    node._meta = _meta_of(({names},), ({', '.join(rgs)},), {out}, {broadcast})"
    if broadcast and len(xs) == 2 and all(k in ("current", "tensor") for _, k, _ in xs):
        # Two tensors: the output has their broadcast shape, so equal shapes need no sum.
        (_, _, a), (_, _, b) = xs
        return [f"_dt = {out}.dtype",
                f"if {a}.shape != {b}.shape or {a}.dtype is not _dt or {b}.dtype is not _dt:",
                exact]
    screens = []
    for (x, known, arr), rg in zip(xs, rgs):
        if rg == "False":
            continue
        c = f"{arr}.dtype is not _dt" + (f" or {arr}.shape != _shape" if broadcast else "")
        screens.append(f"({c})" if rg == "True" else f"({rg} and ({c}))")
    return [f"_dt = {out}.dtype"] + ([f"_shape = {out}.shape"] if broadcast else []) + [
        f"if {' or '.join(screens)}:", exact]


def _attach_src(res, n_out, diff_outs):
    """Source lines making `res` (the output, or the tuple of outputs: how many varies with
    the call for split, unbind, ...) results of `node`; with `diff_outs`, only the outputs
    the op's own ``diff_outs`` says are differentiable."""
    if n_out == 1:
        return [f"{res}._rg = True", f"{res}._grad_fn = node"]
    lines = [f"for k, o in enumerate({res}):"]
    pad = "    "
    if diff_outs:
        lines.append("    if diff_outs[k]:")
        pad = "        "
    return lines + [pad + "o._rg = True", pad + "o._grad_fn = node", pad + "o._output_nr = k"]


def _record_src(xs, *, out="out", res="res", save_out="res", broadcast=False, n_out=1,
                diff_outs=False, saver=True, after=(), when=None):
    """Source lines recording a node of `node_cls` for the inputs `xs` (pairs of name and
    what is known, see above, optionally with the expression of the input's array) when grad
    mode is on and an input needs grad. `out`: output 0's array; `res`: what the outputs
    are attached to; `save_out`: what the saver gets as outputs; `saver`: whether the op
    saves anything; `after`: lines run with the node made; `when`: a further condition
    for recording, read once an input needs grad; `n_out`, `diff_outs`: see
    ``_attach_src``."""
    xs = [(x[0], x[1], x[2] if len(x) > 2 else f"{x[0]}._data") for x in xs]
    lines, rgs, pre = [], [], []
    several = sum(known != "number" for _, known, _ in xs) > 1
    for x, known, _ in xs:
        rg = _rg_src(x, known)
        if known in ("tensor", "any"):
            lines.append(f"r_{x} = {rg}")
            rg = f"r_{x}"
        elif known == "current" and several:  # read once, used several times below
            pre.append(f"r_{x} = {rg}")
            rg = f"r_{x}"
        rgs.append(rg)
    live = [rg for rg in rgs if rg != "False"]
    # A stale view is refreshed only with grad mode on: read grad mode first then.
    cond = f"({' or '.join(live)})"
    if lines:
        lines = ["if _tls.grad_enabled:"] + ["    " + s for s in lines]
    else:
        cond += " and _tls.grad_enabled"
    if when:
        cond += f" and {when}"
    recordable = _recordable_src(xs, rgs)
    if recordable:
        cond += f" and {recordable}"
    if len(live) == 1:  # inside the block, the one input that may need grad does
        rgs = ["True" if rg != "False" else rg for rg in rgs]
    edges = []
    for (x, known, _), rg in zip(xs, rgs):
        e = _edge_src(x, known)
        edges.append("None" if rg == "False" else e if rg == "True" else f"({e} if {rg} else None)")
    names = ", ".join(x for x, _, _ in xs)
    saved = f"saver(({names},), {save_out}, ({', '.join(rgs)},))" if saver else "()"
    body = [f"node = node_cls(({', '.join(edges)},), {saved}, p)"]
    body += _meta_src(xs, rgs, out, broadcast)
    body += list(after) + _attach_src(res, n_out, diff_outs)
    block = [f"if {cond}:"] + ["    " + s for s in body]
    return pre + (lines + ["    " + s for s in block] if lines else block)


def _record_n_src(*, out, res, save_out, n_out, diff_outs, saver, after=()):
    """``_record_src`` for a tuple `inputs` of any length."""
    saved = f"saver(inputs, {save_out}, rgs)" if saver else "()"
    body = ["edges = []",
            "for x, r in zip(inputs, rgs):",
            f"    edges.append({_edge_src('x', 'tensor')} if r else None)",
            f"node = node_cls(tuple(edges), {saved}, p)",
            f"node._meta = _meta_of(inputs, rgs, {out}, False)"]
    body += list(after) + _attach_src(res, n_out, diff_outs)
    block = (["rgs = []", "for x in inputs:", f"    rgs.append({_rg_src('x', 'any')})",
              "if True in rgs and not _inference_only(inputs):"]
             + ["    " + s for s in body])
    return ["if _tls.grad_enabled:"] + ["    " + s for s in block]


_HERE = os.path.abspath(__file__)


def _compile(template, **blocks):
    """Compile `template` (source of one function, with lines ``@name`` standing for the
    lines of ``blocks[name]`` at that indentation). Makers cache the result per variant, so
    ops of one variant share a code object."""
    lines = []
    for line in template.splitlines():
        s = line.lstrip()
        if s.startswith("@"):
            pad = line[:len(line) - len(s)]
            lines += [pad + b for b in blocks[s[1:]]]
        else:
            lines.append(line)
    src = "\n".join(lines) + "\n"
    # Named inside the package (observers skip the library's own frames by path), and in
    # linecache so that tracebacks show the generated lines.
    name = f"{_HERE}<generated {next(_N_COMPILED)}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    return compile(src, name, "exec")


_N_COMPILED = itertools.count()


def _generate(code, env, name):
    """The function `name` that `code` defines, run in the namespace `env` plus the names the
    snippets use."""
    ns = dict(_SNIPPET_ENV, **env)
    ns["__name__"] = __name__  # its warnings are ndgrad's (see _ops/__init__.py)
    exec(code, ns)
    return ns[name]


def _broadcast_error(a, b):
    sa, sb = a.shape, b.shape
    n = max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + tuple(sa)
    pb = (1,) * (n - len(sb)) + tuple(sb)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(
                f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                f"non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} are not broadcastable")


def _kernel_error(op, e, a, b):
    """Translate a NumPy failure inside a binary kernel into torch's error."""
    if isinstance(e, ValueError) and a is not None and b is not None:
        return _broadcast_error(a, b)
    if op.name in ("sub", "rsub"):
        err = _bool_sub_error(a, b)
        if err is not None:
            return err
    return e


def _bool_sub_error(a, b):
    """torch refuses subtraction involving bool tensors (arrays or None for numbers)."""
    n = sum(1 for x in (a, b) if x is not None and x.dtype.kind == "b")
    if n == 2:
        return RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                            "supported. Use the `^` or `logical_xor()` operator instead.")
    if n == 1:
        return RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                            "If you are trying to invert a mask, use the `~` or `logical_not()` "
                            "operator instead.")
    return None


# Set by ``_functorch.batching`` while a vmap is active: ``vmap_dispatch(op, args, params)``
# runs the op's batching rule when an argument is a BatchedTensor, else returns NotImplemented.
vmap_dispatch = None


# Set by the forward-AD engine while a dual level is active (``set_forward_fast``): the
# functions ``(op, x)`` and ``(op, a, b)`` that the unary and binary dispatch code call first
# while a special mode is on, for an op with a raw-array JVP (``OpDef.jvp_raw``) and params
# None. They run the op and its tangent, or return NotImplemented (having changed nothing)
# when the general path must: another special mode, grad needed, mixed dtypes...
_FORWARD_FAST = [None, None]


def set_forward_fast(unary_fn, binary_fn):
    _FORWARD_FAST[0] = unary_fn
    _FORWARD_FAST[1] = binary_fn


# Set by ndgrad.compile while it traces: a function called by ``reads_values``.
values_watch = [None]


def reads_values(what):
    """Called by code that reads a tensor's values into Python (a decision, an int) where the
    tracer cannot see it (the raw array): ndgrad.compile makes it a graph break (a compiled
    program would replay the values of the trace)."""
    watch = values_watch[0]
    if watch is not None:
        watch(what)


# Set by ndgrad.compile while it traces with symbolic sizes: a function called by
# ``sizes_decide``.
size_watch = [None]


def sizes_decide():
    """Called by op functions whose Python code takes decisions on sizes beyond 0, 1 and
    equality (a threshold, a clamp, an order chosen by cost, a check the kernel does not
    repeat): a trace that runs one is not generalised over sizes by ndgrad.compile (see
    ``_compile/dynamic.py``)."""
    watch = size_watch[0]
    if watch is not None:
        watch()


# Set by ndgrad.compile while it traces with symbolic sizes: ``hook(tensor, dim, size)``.
sym_size_hook = [None]


def size_expr(x, dim):
    """``x``'s size along `dim` for a parameter that *is* that size (an open slice's end): a
    plain int, or while ndgrad.compile traces with symbolic sizes, one that follows the dim
    (see ``_compile/symbolic.py``)."""
    size = x._data.shape[dim]
    hook = sym_size_hook[0]
    return size if hook is None else hook(x, dim, size)


# Set (a count) by ndgrad.compile while it traces with symbolic sizes: Python ints of an int
# subclass (its SymInt) among an op's arguments reach the op as plain ints, and the observers
# as they are.
symbolic_traces = [0]


def _special_call(op, impl, args, params):
    if vmap_dispatch is not None:
        out = vmap_dispatch(op, args, params)
        if out is not NotImplemented:
            return out
    tokens = [h.before(op, args, params) for h in special_hooks]
    if symbolic_traces[0]:
        out = impl(*[int.__int__(a) if isinstance(a, int) and type(a) is not int and
                     type(a) is not bool else a for a in args], params, _plain=True)
    else:
        out = impl(*args, params, _plain=True)
    for h, tok in zip(special_hooks, tokens):
        h.after(op, args, params, out, tok)
    return out


# --------------------------------------------------------------------------- dtype logic
def _promote2(x, y):
    """Result NumPy dtype of a binary op between Tensors/numbers, by torch's rules."""
    groups = ([], [], [])
    for v in (x, y):
        if isinstance(v, Tensor):
            groups[0 if v._data.ndim else 1].append(_FROM_NP[v._data.dtype])
        else:
            groups[2].append(_dtype.scalar_dtype(v))
    return _dtype.result_type_of(*groups).np


def _scalar_promote(dt, s):
    """Result dtype of tensor-dtype `dt` meeting Python number `s` (fast common cases)."""
    k = dt.kind
    ts = type(s)
    if k == "f" or k == "c":
        if ts is float or ts is int or ts is bool:
            return dt
        if ts is complex and k == "c":
            return dt
    elif k in "iu":
        if ts is int or ts is bool:
            return dt
    elif ts is bool:
        return dt
    res = _dtype.result_type_of([_FROM_NP[dt]], [], [_dtype.scalar_dtype(s)])
    return res.np


# --------------------------------------------------------------------------- op makers
def record_input_shape(*ops):
    """Make every recorded call of the primitives `ops` store its first input's shape on the
    node (``node._shape``, read by their backward), however the op is called: through its
    public function, by another op's backward formula, or replaying a view on a new base."""
    for op in ops:
        assert op.kind == "general", op.name
        op.records_shape = True


def _register(op):
    # called by a maker (unary/binary/primitive), called by the declaring module
    op.module = sys._getframe(2).f_globals["__name__"]
    _ALL_OPS[op.name] = op
    _DECLARED.append(op)
    return op


_ALL_OPS = {}
# The same table, for modules below an op's family: they reach its primitive here by name when
# they run (broadcast.sum_to calls sum and view), so no import points up to the family.
PRIMITIVES = _ALL_OPS
# Every OpDef in declaration order (a later op of the same name replaces an earlier one in the
# table above, not here).
_DECLARED = []

# Exact tensor types that take the dispatch fast paths: Tensor and the library's own
# subclasses, which declare themselves with ``fast_type`` (nn.Parameter).
_FAST_TYPES = {Tensor}


def fast_type(cls):
    """Class decorator: tensors of subclass `cls` take the dispatch fast paths. Only for a
    subclass that changes nothing an op reads (ops on it return plain Tensors)."""
    _FAST_TYPES.add(cls)
    return cls


def _compile_save(op, n_inputs):
    """A fast function computing the saved tuple of `op` from (inputs, output, rgs).

    Specs of inputs and output 0 become one generated expression per entry (no loop, no
    list); other specs ("out1", ...) take the generic ``_save``.
    """
    spec = op.save
    if not spec:
        return None
    simple = all(type(w) is int or w == "out" for w, _ in spec)
    if not simple:
        return lambda inputs, out, rgs: _save(op, inputs, (out,) if not isinstance(
            out, tuple) else out, rgs)
    items = []
    for what, cond in spec:
        if what == "out":
            e = "_SO(out)"
        else:
            e = (f"(_SI(x) if ((_t := type(x := inputs[{what}])) is _T or _t in _FT) and "
                 f"x._extra is None else _slow(x))")
        if cond is not None:
            e = f"({e} if rgs[{cond}] else None)"
        items.append(e)
    src = f"def save(inputs, out, rgs):\n    return ({', '.join(items)},)\n"
    env = {"_SI": SavedTensor.of_input, "_SO": SavedTensor.of_output, "_T": Tensor,
           "_FT": _FAST_TYPES, "_slow": _save_slow}
    exec(src, env)
    return env["save"]


_UNARY = '''
def impl(x, p=None, _plain=False):
    # Fast path: a plain tensor or a current view whose dtype needs no conversion.
    if type(x) in _FAST_TYPES and not _state.special and \\
            (x._base is None or x._view_ver == x._vc[0]):
        d = x._data
        if not (float_only and d.dtype in ints):
            out = fwd(d, p) if params else fwd(d)
            if type(out) is not _ndarray:
                out = _asarray(out)
            res = _from_array(out)
            @record_fast
            return res
    if type(x) is not _T and not isinstance(x, _T):
        x = as_tensor_arg(x)
    if _state.special and not _plain:
        if p is None and (fw := _FORWARD_FAST[0]) is not None and op.jvp_raw is not None:
            res = fw(op, x)
            if res is not NotImplemented:
                return res
        return _special_call(op, impl, (x,), p)
    d = x._data
    if float_only and d.dtype in ints:
        d = d.astype(default_dtype().np)
    out = fwd(d, p) if params else fwd(d)
    if type(out) is not _ndarray:
        out = _asarray(out)
    res = _from_array(out)
    @record
    return res
'''

_INTS = frozenset(np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64,
                                        np.uint8))


@functools.cache
def _unary_code(saver):
    # bool/int results (isnan, ...) never need grad
    floating = 'out.dtype.kind in "fc"'
    return _compile(_UNARY,
                    record_fast=_record_src([("x", "current", "d")], saver=saver, when=floating),
                    record=_record_src([("x", "tensor")], saver=saver, when=floating))


def unary(name, fwd, node_name=None, save=(), float_only=False, linear=False, params=False,
          elementwise=False):
    """Declare an elementwise unary primitive; ``op.call(x[, params])`` runs it.

    `float_only`: integer and bool inputs are computed in the default float dtype (torch's
    behaviour for exp, sin, sqrt, ...). `elementwise`: derive the JVP from the VJP
    (``elementwise_jvp``).
    """
    op = OpDef(name, fwd, node_name or _node_name(name), save=save, kind="unary",
               linear=linear, elementwise=elementwise)
    saver = _compile_save(op, 1)
    env = {"op": op, "fwd": fwd, "params": params, "float_only": float_only, "ints": _INTS,
           "saver": saver, "node_cls": op.node, "default_dtype": _dtype.get_default_dtype}
    impl = _generate(_unary_code(saver is not None), env, "impl")
    op.call = op.impl = impl
    op.fast_fwd = None if params else fwd
    return _register(op)


_BINARY = '''
def impl(a, b, p=None, _plain=False):
    # Fast path: two plain tensors (or current views) of one dtype, no params, nothing
    # special.
    if type(a) in _FAST_TYPES and type(b) in _FAST_TYPES and p is None and \\
            not _state.special and (a._base is None or a._view_ver == a._vc[0]) and \\
            (b._base is None or b._view_ver == b._vc[0]):
        ad = a._data
        bd = b._data
        if ad.dtype is bd.dtype and not (to_float and ad.dtype.kind in "biu"):
            try:
                out = fast_fwd(ad, bd)
            except (ValueError, TypeError) as e:
                raise _kernel_error(op, e, ad, bd) from None
            if type(out) is not _ndarray:
                out = _asarray(out)
            res = _from_array(out)
            if compare:
                return res
            @record_fast
            return res
    # Fast path 2: a plain real floating tensor and a Python float or int (x * 2, x - 1,
    # and many rules): the result keeps the tensor's dtype, as _scalar_promote says.
    tb_ = type(b)
    if (tb_ is float or tb_ is int) and type(a) in _FAST_TYPES and p is None and \\
            not _state.special and (a._base is None or a._view_ver == a._vc[0]) and \\
            a._data.dtype.kind == "f":
        ad = a._data
        try:
            out = fast_fwd(ad, b)
        except (ValueError, TypeError) as e:
            raise _kernel_error(op, e, ad, None) from None
        if type(out) is not _ndarray:
            out = _asarray(out)
        if compare:
            return _from_array(out)
        rd = ad.dtype
        if out.dtype is not rd and out.dtype != rd:
            out = out.astype(rd)
        res = _from_array(out)
        @record_scalar
        return res
    ta = isinstance(a, _T)
    tb = isinstance(b, _T)
    if not ta and not tb:
        a = as_tensor_arg(a)
        ta = True
    if _state.special and not _plain:
        if p is None and (fw := _FORWARD_FAST[1]) is not None and op.jvp_raw is not None:
            res = fw(op, a, b)
            if res is not NotImplemented:
                return res
        return _special_call(op, impl, (a, b), p)
    if is_sub:
        err = _bool_sub_error(a._data if ta else None, b._data if tb else None)
        if err is not None:
            raise err
    if ta and tb:
        ad = a._data
        bd = b._data
        rd = ad.dtype
        if rd is not bd.dtype and rd != bd.dtype:
            rd = _promote2(a, b)
    elif ta:
        ad = a._data
        bd = b
        rd = _scalar_promote(ad.dtype, b)
    else:
        ad = a
        bd = b._data
        rd = _scalar_promote(bd.dtype, a)
    if to_float and rd.kind in "biu":
        rd = default_dtype().np
    if ta and ad.dtype is not rd and ad.dtype != rd:
        ad = ad.astype(rd)
    if tb and bd.dtype is not rd and bd.dtype != rd:
        bd = bd.astype(rd)
    try:
        out = fwd(ad, bd, p) if params else fwd(ad, bd)
    except (ValueError, TypeError) as e:
        raise _kernel_error(op, e, ad if ta else None, bd if tb else None) from None
    if type(out) is not _ndarray:
        out = _asarray(out)
    if compare:
        return _from_array(out)
    if out.dtype is not rd and out.dtype != rd:
        out = out.astype(rd)
    res = _from_array(out)
    @record
    return res
'''


@functools.cache
def _binary_code(saver):
    return _compile(
        _BINARY,
        record_fast=_record_src([("a", "current", "ad"), ("b", "current", "bd")],
                                broadcast=True, saver=saver),
        record_scalar=_record_src([("a", "current", "ad"), ("b", "number")], saver=saver),
        record=_record_src([("a", "any"), ("b", "any")], broadcast=True, saver=saver))


def binary(name, fwd, node_name=None, save=(), promote="binary", params=False, plain_fwd=None,
           elementwise=False):
    """Declare a broadcasting binary primitive; ``op.call(a, b)`` runs it.

    `promote`: "binary" (torch type promotion), "float" (and integer results become the
    default float dtype, as true division), "compare" (inputs promoted, bool result, no grad).
    `plain_fwd`: for ops with params, a two-argument kernel used when params is None.
    `elementwise`: derive the JVP from the VJP (``elementwise_jvp``).
    """
    op = OpDef(name, fwd, node_name or _node_name(name), save=save, kind="binary",
               elementwise=elementwise)
    fast_fwd = plain_fwd if plain_fwd is not None else (
        (lambda x, y: fwd(x, y, None)) if params else fwd)
    saver = _compile_save(op, 2)
    env = {"op": op, "fwd": fwd, "fast_fwd": fast_fwd, "params": params, "saver": saver,
           "node_cls": op.node, "to_float": promote == "float", "compare": promote == "compare",
           "is_sub": name in ("sub", "rsub"), "default_dtype": _dtype.get_default_dtype}
    impl = _generate(_binary_code(saver is not None), env, "impl")
    op.call = op.impl = impl
    op.fast_fwd = fast_fwd
    return _register(op)


_PRIMITIVE = '''
def run(inputs, p):
    n_in = len(inputs)
    if n_in == 1:
        x = inputs[0]
        out = fwd(x._data if isinstance(x, _T) else x, p)
    elif n_in == 2:
        x, y = inputs
        out = fwd(x._data if isinstance(x, _T) else x,
                  y._data if isinstance(y, _T) else y, p)
    else:
        out = fwd(*[x._data if isinstance(x, _T) else x for x in inputs], p)
    if n_out == 1:
        if type(out) is not _ndarray:
            out = _asarray(out)
        res = _from_array(out)
        outputs = (res,)
    else:
        outputs = tuple([wrap(o) for o in out])
        res = outputs
    if view:
        _make_views(op, inputs[0], outputs, p)
    if n_in == 1:
        # One input (views, reductions, most nn kernels).
        x = inputs[0]
        @record_1
    elif n_in == 2:
        # Two inputs (mm, products, most backward kernels).
        x, y = inputs
        @record_2
    else:
        @record_n
    return res
'''


@functools.cache
def _primitive_code(n_out, some_diff_outs, saver, save_all):
    kw = {"out": "outputs[0]._data", "save_out": "outputs" if save_all else "outputs[0]",
          "n_out": n_out, "diff_outs": some_diff_outs, "saver": saver,
          "after": ["if op.records_shape:", "    node._shape = inputs[0]._data.shape"]}
    return _compile(_PRIMITIVE, record_1=_record_src([("x", "any")], **kw),
                    record_2=_record_src([("x", "any"), ("y", "any")], **kw),
                    record_n=_record_n_src(res="res", **kw))


def primitive(name, fwd, node_name=None, save=(), n_out=1, diff_outs=None, view=False,
              linear=False):
    """Declare a general primitive: ``op.call(*tensors, params=...)`` with ``fwd(*arrays, params)``.

    `view`: the outputs share memory with input 0 and become (differentiable) views of it.
    `diff_outs`: per output, whether it is differentiable (indices are not).
    """
    op = OpDef(name, fwd, node_name or _node_name(name), save=save, n_out=n_out,
               diff_outs=diff_outs, kind="general", view=view, linear=linear)
    saver = _compile_save(op, None)
    # A compiled saver takes output 0; other specs ("out1", ...) take the tuple of outputs.
    save_all = bool(save) and not all(type(w) is int or w == "out" for w, _ in op.save)
    env = {"op": op, "fwd": fwd, "n_out": n_out, "view": view, "saver": saver,
           "node_cls": op.node, "diff_outs": diff_outs}
    run = _generate(_primitive_code(n_out, diff_outs is not None, saver is not None, save_all),
                    env, "run")

    def impl(*args, _plain=False):
        return run(args[:-1], args[-1])

    def call(*inputs, params=None):
        if _state.special:
            return _special_call(op, impl, inputs, params)
        return run(inputs, params)

    op.call = call
    op.impl = impl
    return _register(op)


def _make_views(op, x, outputs, p):
    base = x._base
    if base is None:
        base = x
    chain = x._view or ()
    vc = x._vc
    ver = vc[0]
    xex = x._extra
    inference = xex is not None and xex.get("inference")
    # torch's creation meta of the new views (see view_history.creation_meta)
    if _tls.inference:
        meta = "inference"
    elif not _tls.grad_enabled:
        meta = "no_grad"
    else:
        meta = "multi" if op.n_out != 1 else None
    if xex is not None and x._base is not None:
        meta = _propagate_meta(xex.get("creation"), meta)
    k = 0
    for o in outputs:
        if inference:
            # a view of an inference tensor is an inference tensor sharing its memory, not a
            # tracked view (torch: inference tensors have no autograd meta)
            o._vc = vc
            o._extras()["inference"] = True
            continue
        o._base = base
        o._vc = vc
        o._view_ver = ver
        o._view = chain + ((op, p, k),)
        if meta is not None:
            o._extras()["creation"] = meta
        k += 1


def _propagate_meta(prev, new):
    if new is None or prev == "inference":
        return prev
    return new


# The names the generated dispatch code reads besides its maker's own.
_SNIPPET_ENV = {
    "_T": Tensor, "_FAST_TYPES": _FAST_TYPES, "_state": _state, "_tls": _tls,
    "_ndarray": _ndarray, "_asarray": _asarray, "_from_array": _from_array, "wrap": wrap,
    "as_tensor_arg": as_tensor_arg, "_needs_grad": _needs_grad, "_meta_of": _meta_of,
    "_inference_only": _inference_only, "_special_call": _special_call,
    "_FORWARD_FAST": _FORWARD_FAST,
    "_kernel_error": _kernel_error, "_bool_sub_error": _bool_sub_error,
    "_promote2": _promote2, "_scalar_promote": _scalar_promote, "_make_views": _make_views,
}


def unrecorded_float(g):
    """`g`'s array when a rule may build its result on raw arrays because nothing will be
    recorded, else None: no special mode (no observer expects the rule's ops), a plain real
    float32/float64 tensor without extras that no graph can see — grad mode off (a plain
    backward), or on (create_graph) with `g` needing no grad."""
    if _state.special or type(g) is not Tensor or g._extra is not None:
        return None
    if _tls.grad_enabled and (g._rg or g._base is not None):
        return None
    gd = g._data
    if gd.dtype.kind != "f" or gd.dtype.itemsize == 2:
        return None  # float16 is left to the ops (their float32 arithmetic)
    return gd


def raw_view(g, arr, chain):
    """`arr` (a NumPy view of g's array) as the view tensor the view ops in `chain` would
    make of `g`: same base, version counter and replay chain, so in-place changes and
    version checks behave as after the ops."""
    res = _from_array(arr)
    base = g._base
    res._base = g if base is None else base
    res._vc = g._vc
    res._view_ver = g._vc[0]
    res._view = (g._view or ()) + chain
    return res


def replay_view(chain, t):
    """Apply a recorded chain of view ops to `t` (a tensor shaped like the view's base)."""
    for op, p, k in chain:
        out = op.call(t, params=p)
        t = out if op.n_out == 1 else out[k]
    return t


def _node_name(name):
    return "".join(part.capitalize() for part in name.split("_")) + "Backward0"


def all_ops():
    """Every registered primitive by name (used by the op database and docs)."""
    return dict(_ALL_OPS)


def declared_ops():
    """Every OpDef declared, in order, including one whose name a later op took over in
    ``all_ops()`` (used by tests/test_architecture.py)."""
    return list(_DECLARED)
