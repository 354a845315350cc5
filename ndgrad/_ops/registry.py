"""The op registry and dispatcher: one OpDef per differentiable primitive, and the code that
runs it (unwrap arrays -> forward kernel -> wrap -> record a Node when grad is needed).

An OpDef holds, in one place: the forward kernel on NumPy arrays, the backward rule (VJP)
written in ndgrad ops (so backward is itself differentiable and ``create_graph`` works), the
forward rule (JVP) or a flag that derives it, what to save for backward, and dtype behaviour.

How to declare a primitive (see ``elementwise.py`` for many)::

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

Hot-path invariants: ``_state.special`` is read once per op; when zero no profiler, anomaly
mode or dual level is active and the generic slow path is skipped entirely.
"""

import numpy as np

from .. import _dtype
from .. import _state
from .._tensor import Tensor, _from_array
from .._graph_core import Node, SavedTensor

__all__ = ["OpDef", "unary", "binary", "primitive", "wrap", "as_tensor_arg", "special_hooks",
           "unrecorded_float", "raw_view", "add_tangents", "jvp_from_parts", "bilinear_jvp"]

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
                 "batch_transparent", "__dict__")

    def __init__(self, name, fwd, node_name, save=(), n_out=1, diff_outs=None, kind=None,
                 linear=False, view=False):
        self.name = name
        self.fwd = fwd
        # One Node subclass per op so grad_fn prints as torch's (MulBackward0, ...).
        self.node = type(node_name, (Node,), {"__slots__": (), "_op": self})
        self.vjp = _no_vjp(name)
        self.jvp = None
        # Rules for gradients and tangents carrying a leading batch dimension B
        # (autograd.grad(is_grads_batched=True), vectorized Jacobians): None means the
        # batched engines run the plain rule once per batch element, unless
        # batch_transparent says the plain VJP already broadcasts over a leading dim.
        self.batched_vjp = None
        self.batched_jvp = None
        self.batch_transparent = kind in ("unary", "binary")
        self.save = tuple(save)
        self.n_out = n_out
        self.diff_outs = diff_outs
        self.kind = kind
        self.linear = linear
        self.view = view
        # primitives only (see reduction.record_input_shape): nodes store input 0's shape
        self.records_shape = False

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

    def def_batched_vjp(self, fn):
        self.batched_vjp = fn
        return fn

    def def_batched_jvp(self, fn):
        self.batched_jvp = fn
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


# The fast paths of unary and binary take views too when they are current: no in-place change
# of their base since they were made (``_view_ver == _vc[0]``), so Tensor._refresh_view would
# do nothing and their ``_rg`` and ``_grad_fn`` are what the general path would read.


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
            x = inputs[what]
            if isinstance(x, Tensor):
                if x._extra is not None:
                    _check_inference(x)
                saved.append(SavedTensor(x))
            else:
                saved.append(x)
    return tuple(saved)


def _meta_for(inputs, out_data):
    """Per input (shape, dtype) when its gradient must be reduced or cast, else None."""
    meta = None
    shape, dt = out_data.shape, out_data.dtype
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            d = x._data
            if d.shape != shape or (d.dtype != dt and dt.kind in "fc"):
                if meta is None:
                    meta = [None] * len(inputs)
                meta[i] = (d.shape, d.dtype)
    return tuple(meta) if meta is not None else None


def record(op, inputs, outputs, params, rgs):
    """Attach a new node of `op` to `outputs` (a tuple of Tensors)."""
    edges = tuple([x._edge() if rg else None for x, rg in zip(inputs, rgs)])
    node = op.node(edges, _save(op, inputs, outputs, rgs) if op.save else (), params)
    diff = op.diff_outs
    for k, o in enumerate(outputs):
        if diff is None or diff[k]:
            o._rg = True
            o._grad_fn = node
            o._output_nr = k
    return node


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


def _special_call(op, impl, args, params):
    tokens = [h.before(op, args, params) for h in special_hooks]
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
def _register(op):
    _ALL_OPS[op.name] = op
    return op


_ALL_OPS = {}

_ONE_TRUE = (True,)

# Exact tensor types that take the dispatch fast paths (nn adds Parameter).
_FAST_TYPES = {Tensor}


def register_fast_type(cls):
    """Let tensors of subclass `cls` use the dispatch fast paths (e.g. nn.Parameter)."""
    _FAST_TYPES.add(cls)


def _save_slow(x):
    """Saving a non-plain input: a Tensor subclass or inference tensor, or a number."""
    if isinstance(x, Tensor):
        if x._extra is not None:
            _check_inference(x)
        return SavedTensor(x)
    return x


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
            e = (f"(_SI(x) if type(x := inputs[{what}]) is _T and x._extra is None "
                 f"else _slow(x))")
        if cond is not None:
            e = f"({e} if rgs[{cond}] else None)"
        items.append(e)
    src = f"def save(inputs, out, rgs):\n    return ({', '.join(items)},)\n"
    env = {"_SI": SavedTensor.of_input, "_SO": SavedTensor.of_output, "_T": Tensor,
           "_slow": _save_slow}
    exec(src, env)
    return env["save"]


def unary(name, fwd, node_name=None, save=(), float_only=False, linear=False, params=False):
    """Declare an elementwise unary primitive; ``op.call(x[, params])`` runs it.

    `float_only`: integer and bool inputs are computed in the default float dtype (torch's
    behaviour for exp, sin, sqrt, ...).
    """
    op = OpDef(name, fwd, node_name or _node_name(name), save=save, kind="unary",
               linear=linear)
    default_dtype = _dtype.get_default_dtype
    saver = _compile_save(op, 1)
    node_cls = op.node
    ints = frozenset(np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64,
                                           np.uint8))

    def impl(x, p=None, _plain=False):
        # Fast path: a plain tensor or a current view (see above _needs_grad) whose dtype
        # needs no conversion.
        if type(x) in _FAST_TYPES and not _state.special and \
                (x._base is None or x._view_ver == x._vc[0]):
            d = x._data
            if not (float_only and d.dtype in ints):
                out = fwd(d, p) if params else fwd(d)
                if type(out) is not _ndarray:
                    out = _asarray(out)
                res = _from_array(out)
                if x._rg and _tls.grad_enabled and out.dtype.kind in "fc":
                    if x._extra is not None:
                        _check_inference(x)
                    fn = x._grad_fn
                    edge = (fn, x._output_nr) if fn is not None else (x._accumulator(), 0)
                    node = node_cls((edge,), saver((x,), res, _ONE_TRUE) if saver else (), p)
                    if out.dtype is not d.dtype and out.dtype != d.dtype and \
                            out.dtype.kind in "fc":
                        node._meta = ((d.shape, d.dtype),)
                    res._rg = True
                    res._grad_fn = node
                return res
        if type(x) is not Tensor and not isinstance(x, Tensor):
            x = as_tensor_arg(x)
        if _state.special and not _plain:
            return _special_call(op, impl, (x,), p)
        d = x._data
        if float_only and d.dtype in ints:
            d = d.astype(default_dtype().np)
        out = fwd(d, p) if params else fwd(d)
        if type(out) is not _ndarray:
            out = _asarray(out)
        res = _from_array(out)
        if (x._rg or (x._base is not None and _needs_grad(x))) and _tls.grad_enabled:
            if out.dtype.kind not in "fc":  # bool/int results (isnan, ...) never need grad
                return res
            if x._extra is not None:
                _check_inference(x)
            fn = x._grad_fn
            edge = (fn, x._output_nr) if fn is not None and x._base is None else x._edge()
            node = node_cls((edge,), saver((x,), res, (True,)) if saver else (), p)
            if out.dtype is not x._data.dtype and out.dtype != x._data.dtype and \
                    out.dtype.kind in "fc":
                node._meta = ((x._data.shape, x._data.dtype),)
            res._rg = True
            res._grad_fn = node
        return res

    op.call = op.impl = impl
    return _register(op)


def binary(name, fwd, node_name=None, save=(), promote="binary", params=False, plain_fwd=None):
    """Declare a broadcasting binary primitive; ``op.call(a, b)`` runs it.

    `promote`: "binary" (torch type promotion), "float" (and integer results become the
    default float dtype, as true division), "compare" (inputs promoted, bool result, no grad).
    `plain_fwd`: for ops with params, a two-argument kernel used when params is None.
    """
    op = OpDef(name, fwd, node_name or _node_name(name), save=save, kind="binary")
    fast_fwd = plain_fwd if plain_fwd is not None else (
        (lambda x, y: fwd(x, y, None)) if params else fwd)
    to_float = promote == "float"
    compare = promote == "compare"
    default_dtype = _dtype.get_default_dtype
    saver = _compile_save(op, 2)
    node_cls = op.node
    is_sub = name in ("sub", "rsub")

    def impl(a, b, p=None, _plain=False):
        # Fast path: two plain tensors (or current views) of one dtype, no params, nothing
        # special.
        if type(a) in _FAST_TYPES and type(b) in _FAST_TYPES and p is None and \
                not _state.special and (a._base is None or a._view_ver == a._vc[0]) and \
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
                ra = a._rg
                rb = b._rg
                if (ra or rb) and _tls.grad_enabled:
                    if ra:
                        fn = a._grad_fn
                        ea = (fn, a._output_nr) if fn is not None else (a._accumulator(), 0)
                    else:
                        ea = None
                    if rb:
                        fn = b._grad_fn
                        eb = (fn, b._output_nr) if fn is not None else (b._accumulator(), 0)
                    else:
                        eb = None
                    if (a._extra is not None or b._extra is not None) and saver:
                        _check_inference(a)
                        _check_inference(b)
                    node = node_cls((ea, eb), saver((a, b), res, (ra, rb)) if saver else ())
                    sa = ad.shape
                    sb = bd.shape
                    if sa != sb:
                        # _meta_for((a, b), out) for two tensors of one dtype
                        so = out.shape
                        dt = out.dtype
                        cast = ad.dtype != dt and dt.kind in "fc"
                        node._meta = (None if sa == so and not cast else (sa, ad.dtype),
                                      None if sb == so and not cast else (sb, bd.dtype))
                    res._rg = True
                    res._grad_fn = node
                return res
        # Fast path 2: a plain real floating tensor and a Python float or int (x * 2, x - 1,
        # and many rules): the result keeps the tensor's dtype, as _scalar_promote says.
        tb_ = type(b)
        if (tb_ is float or tb_ is int) and type(a) in _FAST_TYPES and p is None and \
                not _state.special and (a._base is None or a._view_ver == a._vc[0]) and \
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
            if a._rg and _tls.grad_enabled:
                fn = a._grad_fn
                ea = (fn, a._output_nr) if fn is not None else (a._accumulator(), 0)
                node = node_cls((ea, None), saver((a, b), res, (True, False)) if saver else ())
                res._rg = True
                res._grad_fn = node
            return res
        ta = isinstance(a, Tensor)
        tb = isinstance(b, Tensor)
        if not ta and not tb:
            a = as_tensor_arg(a)
            ta = True
        if _state.special and not _plain:
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
        ra = ta and (a._rg or (a._base is not None and _needs_grad(a)))
        rb = tb and (b._rg or (b._base is not None and _needs_grad(b)))
        if (ra or rb) and _tls.grad_enabled:
            if ra:
                fn = a._grad_fn
                ea = (fn, a._output_nr) if fn is not None and a._base is None else a._edge()
            else:
                ea = None
            if rb:
                fn = b._grad_fn
                eb = (fn, b._output_nr) if fn is not None and b._base is None else b._edge()
            else:
                eb = None
            node = node_cls((ea, eb), saver((a, b), res, (ra, rb)) if saver else (), p)
            shape = out.shape
            if (ta and (a._data.shape != shape or a._data.dtype is not rd)) or \
                    (tb and (b._data.shape != shape or b._data.dtype is not rd)):
                node._meta = _meta_for((a, b), out)
            res._rg = True
            res._grad_fn = node
        return res

    op.call = op.impl = impl
    return _register(op)


def primitive(name, fwd, node_name=None, save=(), n_out=1, diff_outs=None, view=False,
              linear=False):
    """Declare a general primitive: ``op.call(*tensors, params=...)`` with ``fwd(*arrays, params)``.

    `view`: the outputs share memory with input 0 and become (differentiable) views of it.
    `diff_outs`: per output, whether it is differentiable (indices are not).
    """
    op = OpDef(name, fwd, node_name or _node_name(name), save=save, n_out=n_out,
               diff_outs=diff_outs, kind="general", view=view, linear=linear)
    node_cls = op.node
    saver = _compile_save(op, None)
    # A compiled saver takes output 0; other specs ("out1", ...) take the tuple of outputs.
    save_all = bool(save) and not all(type(w) is int or w == "out" for w, _ in op.save)

    def run(inputs, p):
        n_in = len(inputs)
        if n_in == 1:
            x = inputs[0]
            out = fwd(x._data if isinstance(x, Tensor) else x, p)
        elif n_in == 2:
            x, y = inputs
            out = fwd(x._data if isinstance(x, Tensor) else x,
                      y._data if isinstance(y, Tensor) else y, p)
        else:
            out = fwd(*[x._data if isinstance(x, Tensor) else x for x in inputs], p)
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
        if not _tls.grad_enabled:
            return res
        if n_in == 1:
            # One input (views, reductions, most nn kernels): no per-input lists.
            x = inputs[0]
            if not (isinstance(x, Tensor) and (x._rg or (x._base is not None and
                                                        _needs_grad(x)))):
                return res
            if x._extra is not None:
                _check_inference(x)
            fn = x._grad_fn
            edge = (fn, x._output_nr) if fn is not None and x._base is None else x._edge()
            node = node_cls((edge,), saver(inputs, outputs if save_all else outputs[0],
                                           _ONE_TRUE) if saver else (), p)
            xd = x._data.dtype
            dt = outputs[0]._data.dtype
            if xd is not dt and xd != dt and xd.kind in "fc":
                node._meta = ((x._data.shape, xd),)
        elif n_in == 2:
            # Two inputs (mm, products, most backward kernels): _record_general, unrolled.
            x, y = inputs
            rx = isinstance(x, Tensor) and (x._rg or (x._base is not None and _needs_grad(x)))
            ry = isinstance(y, Tensor) and (y._rg or (y._base is not None and _needs_grad(y)))
            if not (rx or ry):
                return res
            dt = outputs[0]._data.dtype
            mx = my = None
            if rx:
                if x._extra is not None:
                    _check_inference(x)
                fn = x._grad_fn
                ex = (fn, x._output_nr) if fn is not None and x._base is None else x._edge()
                xd = x._data.dtype
                if xd is not dt and xd != dt and xd.kind in "fc":
                    mx = (x._data.shape, xd)
            else:
                ex = None
            if ry:
                if y._extra is not None:
                    _check_inference(y)
                fn = y._grad_fn
                ey = (fn, y._output_nr) if fn is not None and y._base is None else y._edge()
                yd = y._data.dtype
                if yd is not dt and yd != dt and yd.kind in "fc":
                    my = (y._data.shape, yd)
            else:
                ey = None
            node = node_cls((ex, ey), saver(inputs, outputs if save_all else outputs[0],
                                            (rx, ry)) if saver else (), p)
            if mx is not None or my is not None:
                node._meta = (mx, my)
        else:
            node = _record_general(node_cls, inputs, outputs, p, saver, save_all)
            if node is None:
                return res
        if op.records_shape:
            node._shape = inputs[0]._data.shape
        if n_out == 1:
            res._rg = True
            res._grad_fn = node
        else:
            for k, o in enumerate(outputs):
                if diff_outs is None or diff_outs[k]:
                    o._rg = True
                    o._grad_fn = node
                    o._output_nr = k
        return res

    def impl(*args, _plain=False):
        return run(args[:-1], args[-1])

    def call(*inputs, params=None):
        if _state.special:
            return _special_call(op, impl, inputs, params)
        return run(inputs, params)

    op.call = call
    op.impl = impl
    return _register(op)


def _record_general(node_cls, inputs, outputs, p, saver, save_all):
    """The node of a primitive with several inputs, or None when none needs grad."""
    any_rg = False
    rgs = []
    for x in inputs:
        r = isinstance(x, Tensor) and (x._rg or (x._base is not None and _needs_grad(x)))
        rgs.append(r)
        if r:
            any_rg = True
    if not any_rg:
        return None
    edges = []
    meta = None
    dt = outputs[0]._data.dtype
    for i, x in enumerate(inputs):
        if not rgs[i]:
            edges.append(None)
            continue
        if x._extra is not None:
            _check_inference(x)
        fn = x._grad_fn
        edges.append((fn, x._output_nr) if fn is not None and x._base is None
                     else x._edge())
        xd = x._data.dtype
        if xd is not dt and xd != dt and xd.kind in "fc":
            if meta is None:
                meta = [None] * len(inputs)
            meta[i] = (x._data.shape, xd)
    node = node_cls(tuple(edges), saver(inputs, outputs if save_all else outputs[0], rgs)
                    if saver else (), p)
    if meta is not None:
        node._meta = tuple(meta)
    return node


def _make_views(op, x, outputs, p):
    base = x._base
    if base is None:
        base = x
    chain = x._view or ()
    vc = x._vc
    ver = vc[0]
    inference = x._extra is not None and x._extra.get("inference")
    k = 0
    for o in outputs:
        o._base = base
        o._vc = vc
        o._view_ver = ver
        o._view = chain + ((op, p, k),)
        if inference:
            o._extras()["inference"] = True
        k += 1


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
