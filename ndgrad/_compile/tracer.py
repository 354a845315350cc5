"""Capturing what a function does: the primitive calls it runs, as a straight-line program.

A :class:`Tracer` sits among the dispatcher's special-mode observers
(``registry.special_hooks``) while the function runs once, eagerly, on its real inputs. Every
primitive call is reported with ``(op, args, params, outputs)`` and becomes an
:class:`Inst`; every tensor is named by a *slot*:

- ``i<k>``: the k-th tensor argument of the call (an input of the compiled region),
- ``e<k>``: a tensor the function reached by other means (a module parameter or buffer, a
  tensor from a closure or made by a factory), read afresh at every call,
- ``v<k>``: a value computed by a traced op (``b<k>`` in a backward trace),
- ``g<k>``: (backward traces only) the gradient arriving at output k.

A tensor is found by identity, else by its array's identity (``detach()``, ``.data`` and saved
outputs unpacked for backward wrap the same array). Python numbers and other non-tensor
arguments are constants of the trace; the compiled region guards the arguments they came from.

What cannot be replayed as such a program is a *graph break*: reading a tensor's values
into Python (``item``, ``bool(t)``, ``numpy()``, printing), hooks or ``retain_grad`` registered
inside the region, a backward run inside it, random numbers drawn outside an op (dropout's
noise), in-place writes to tensors that require grad, tensors computed or written outside the
ops (NumPy on a tensor's data, arrays in an op's parameters, a version counter that moved
without a traced in-place op). Tensors made inside the region count as constants only when a
factory (``_creation``), the user's own ``Tensor(...)`` or the shape-only helpers listed in
``_SHAPE_ONLY`` made them. The tracer records the reason and where the user code was; with
``fullgraph=True`` it raises torch's ``Unsupported`` at that point.

Invariant: everything the tracer patches or registers is restored when tracing ends, also
after an exception.
"""

import sys
import threading
import traceback

import numpy as np

from .. import _creation, _random, _state
from .._dynamo.exc import Unsupported
from . import symbolic
from .state import Containers
from .._ops import registry
from .._ops.inplace import Inplace
from .._tensor import Tensor
from ..nn.modules import module as mm
from ..nn.modules.module import Module

__all__ = ["Tracer", "Inst", "BreakReason", "active_tracer"]

_PACKAGE_DIR = __file__.rsplit("/", 2)[0]
_tracing = threading.local()


def active_tracer():
    """The tracer capturing on this thread, or None."""
    return getattr(_tracing, "tracer", None)


class BreakReason:
    """Why a region could not be captured, and where the user code was."""

    __slots__ = ("reason", "user_stack")

    def __init__(self, reason, user_stack):
        self.reason = reason
        self.user_stack = user_stack

    def __repr__(self):
        return f"BreakReason({self.reason!r})"


def _user_stack():
    frames = traceback.extract_stack(sys._getframe(2))
    return [f for f in frames if not f.filename.startswith(_PACKAGE_DIR)]


class Inst:
    """One traced primitive call: ``outs = op(args..., params)``.

    `args` holds one entry per argument: a slot name (str) for a tensor, else ``("c",
    value)`` for a constant. `meta` holds, per argument, ``(shape, dtype)`` for tensors and the
    Python type otherwise; `out_meta` the ``(shape, dtype)`` of each output.
    """

    __slots__ = ("op", "inplace", "args", "params", "outs", "meta", "out_meta")

    def __init__(self, op, inplace, args, params, outs, meta, out_meta):
        self.op = op
        self.inplace = inplace
        self.args = args
        self.params = params
        self.outs = outs
        self.meta = meta
        self.out_meta = out_meta

    def __repr__(self):
        return f"{', '.join(self.outs)} = {self.op.name}({', '.join(map(str, self.args))})"

    def symbolic(self):
        """Whether its parameters or constants hold symbolic sizes (see .symbolic)."""
        return symbolic.has_sym(self.params) or any(
            type(a) is not str and symbolic.has_sym(a[1]) for a in self.args)


class Tracer:
    """A special-mode observer turning the primitive calls it sees into :class:`Inst` lists.

    `parent`: for a backward trace, the forward tracer whose values (saved for backward) the
    VJP rules read; a reference to one of them becomes a slot of the forward, listed in
    ``used_forward``.
    """

    def __init__(self, fullgraph=False, parent=None):
        self.fullgraph = fullgraph
        self.parent = parent
        self.insts = []
        self.breaks = []
        self.by_tensor = {}    # id(tensor) -> slot
        self.by_array = {}     # id(ndarray) -> slot
        self.keep = []         # keeps every object whose id is a key above alive
        self.inputs = []       # tensors of slots i0, i1, ...
        self.externals = []    # tensors of slots e0, e1, ...
        self.n_values = 0
        self.depth = 0
        self.used_forward = {}  # forward slot -> True (backward traces)
        self.modules = {}       # id -> every nn.Module called inside the region
        # Tensors the region may read besides its arguments: those reachable from the
        # function (closure, globals, a bound module) and the modules it calls, and constants
        # made inside it by factories. Anything else was computed outside the ops.
        self.sources = {}
        self.safe = {}
        self._module_tensors = None
        # Version counters of the tensors the region may write (arguments, sources, module
        # state): id -> (counter, version when first seen), and the in-place ops the trace
        # saw per counter. A counter that moved further was written outside the ops.
        self.versions = {}
        self.bumps = {}
        self._prefix = "v" if parent is None else "b"
        # Dynamic shapes (see .symbolic): whether sizes are symbolic in this trace, the
        # guards the user code's decisions on them left, (expression, outcome), and the
        # node attributes made symbolic, (node, name, original value), restored by untag().
        self.symbolic = parent.symbolic if parent is not None else False
        self.sym_guards = parent.sym_guards if parent is not None else []
        self.tagged = parent.tagged if parent is not None else []
        self.seq_start = 0  # the first node sequence number of the trace (set by the caller)
        self.node_inputs = {}  # node -> (its op's argument refs, their shapes) (symbolic)
        # id(tensor) -> (factory, args, kwargs) of a tensor made with symbolic sizes: when
        # the program reads it, it becomes a FactoryOp instruction, made at each call
        self.recipes = {}
        # cells and dicts reachable from the function: where their tensors are read from,
        # and what the call stores in them (see .state)
        self.containers = Containers()
        # an op's Python code decided on sizes (registry.sizes_decide): not generalised
        self.sizes_decided = False

    # ---------------------------------------------------------------- slots
    def add_input(self, t):
        slot = self.by_tensor.get(id(t))
        if slot is None:
            slot = f"i{len(self.inputs)}"
            self.inputs.append(t)
            self._name(t, slot)
            self.watch(t)
        return slot

    def tag(self, outputs, refs):
        """Make the input shapes that the new nodes of `outputs` keep for their backward
        (``_shape``: the first input's, ``_meta``: per input) symbolic in the inputs' slots."""
        seen = None
        for o in outputs:
            node = o._grad_fn
            if node is None or node is seen or node._seq < self.seq_start:
                continue
            seen = node
            self.node_inputs[node] = (refs, [m[0] if type(m) is tuple else None
                                             for m in self.insts[-1].meta])
            shape = getattr(node, "_shape", None)
            if type(shape) is tuple and type(refs[0]) is str:
                self.tagged.append((node, "_shape", shape))
                node._shape = symbolic.symbolic_dims(shape, refs[0])
            self._tag_saved_sizes(node, refs)
            meta = getattr(node, "_meta", None)
            if type(meta) is tuple:
                self.tagged.append((node, "_meta", meta))
                node._meta = tuple(
                    m if m is None or i >= len(refs) or type(refs[i]) is not str
                    else (symbolic.symbolic_dims(m[0], refs[i]), m[1])
                    for i, m in enumerate(meta))

    def _tag_saved_sizes(self, node, refs):
        """Give back to `node`'s saved numbers the SymInts its op was given (the op ran on
        plain ints, see registry._special_call): ``x / x.size(0)``'s backward divides by the
        size too."""
        save = self.insts[-1].op.save
        saved = node._saved
        if not save or type(saved) is not tuple or len(saved) != len(save):
            return
        new = None
        for j, (what, _) in enumerate(save):
            if type(what) is int and what < len(refs) and type(refs[what]) is tuple:
                v = refs[what][1]
                if type(v) is symbolic.SymInt and type(saved[j]) is int and \
                        int.__eq__(v, saved[j]):
                    new = list(saved) if new is None else new
                    new[j] = v
        if new is not None:
            self.tagged.append((node, "_saved", saved))
            node._saved = tuple(new)

    def tag_extras(self, node):
        """Make the input shape a node's op keeps in its extras (``x_shape``, set by the op's
        function after the call) symbolic, before its VJP runs in the joint graph's trace."""
        known = self.node_inputs.get(node)
        extra = node._extra
        if known is None or not extra:
            return
        shape = extra.get("x_shape")
        refs, shapes = known
        if type(shape) is tuple and type(refs[0]) is str and shape == shapes[0]:
            self.tagged.append((extra, "x_shape", shape))
            extra["x_shape"] = symbolic.symbolic_dims(shape, refs[0])
        sizes = extra.get("sizes")  # cat's inputs' sizes along its dim
        dim = node._params
        if type(sizes) is list and type(dim) is int and len(sizes) == len(refs) and all(
                type(r) is str and s is not None and len(s) > dim and s[dim] == v
                for r, s, v in zip(refs, shapes, sizes)):
            self.tagged.append((extra, "sizes", sizes))
            extra["sizes"] = [v if v < 2 else symbolic.SymInt(v, f"@{r}[{dim}]")
                              for r, v in zip(refs, sizes)]

    def untag(self):
        """Give the nodes back their plain shapes (the eager graph outlives the trace)."""
        for owner, name, value in reversed(self.tagged):
            if type(owner) is dict:
                owner[name] = value
            else:
                setattr(owner, name, value)
        self.tagged.clear()
        self.node_inputs.clear()

    def watch(self, t):
        vc = t._vc
        if id(vc) not in self.versions:
            self.versions[id(vc)] = (vc, vc[0])

    def watch_module(self, m):
        for d in (m.__dict__.get("_parameters"), m.__dict__.get("_buffers")):
            if d:
                for v in d.values():
                    if v is not None:
                        self.watch(v)

    def check_writes(self):
        """Break when a watched tensor was written by something else than a traced op."""
        for key, (vc, ver) in self.versions.items():
            if vc[0] != ver + self.bumps.get(key, 0):
                self.graph_break("a tensor was written outside ndgrad's ops (e.g. running "
                                 "statistics, an optimizer's raw update)")
                return

    def add_grad(self, k, t):
        self._name(t, f"g{k}")

    def _name(self, t, slot):
        self.by_tensor[id(t)] = slot
        self.by_array.setdefault(id(t._data), slot)
        self.keep.append(t)
        self.keep.append(t._data)

    def _arg_refs(self, args):
        """Each argument as the program reads it (a slot, or ("c", constant)) and its guard
        metadata (shape and dtype of a tensor, type of a constant)."""
        refs, meta = [], []
        for a in args:
            if isinstance(a, Tensor):
                refs.append(self.slot_of(a))
                meta.append((a._data.shape, a._data.dtype))
            else:
                refs.append(("c", a))
                meta.append(type(a))
        return refs, meta

    def slot_of(self, t):
        """The slot naming tensor `t`, making it an external when it is new."""
        slot = self.by_tensor.get(id(t))
        if slot is not None:
            return slot
        slot = self.by_array.get(id(t._data))
        if slot is not None:
            return slot
        recipe = self.recipes.pop(id(t), None)
        if recipe is not None:
            factory, args, kwargs = recipe
            slot = self._new_value(t)
            self.insts.append(Inst(factory_op(factory), False, [], (args, kwargs), (slot,), [],
                                   ((t._data.shape, t._data.dtype),)))
            return slot
        if self.parent is not None:
            slot = self.parent.by_tensor.get(id(t)) or self.parent.by_array.get(id(t._data))
            if slot is not None:
                if slot[0] != "v":
                    # a forward input or external: read from the tensor itself
                    return slot
                self.used_forward[slot] = True
                return slot
            if id(t) not in self.safe:
                raise Unsupported("a backward rule computes a tensor outside ndgrad's ops")
            return self.parent.add_external(t)
        if id(t) not in self.safe and id(t) not in self.sources and \
                id(t) not in self._owned_by_modules() and \
                self.containers.place_of(t) is None:
            self.graph_break("a tensor computed outside ndgrad's ops (NumPy on a tensor's "
                             "data, or reached from outside the function) is used")
        return self.add_external(t)

    def _owned_by_modules(self):
        if self._module_tensors is None or self._module_tensors[0] != len(self.modules):
            ids = set()
            for m in self.modules.values():
                for d in (m.__dict__.get("_parameters"), m.__dict__.get("_buffers")):
                    if d:
                        ids.update(id(v) for v in d.values() if v is not None)
            self._module_tensors = (len(self.modules), ids)
        return self._module_tensors[1]

    def add_sources(self, obj, depth=0):
        """Note the tensors reachable from `obj` (a function, module, container) as
        legitimate externals."""
        if depth > 3:
            return
        if isinstance(obj, Tensor):
            self.sources[id(obj)] = obj
            self.watch(obj)
        elif isinstance(obj, Module):
            for m in obj.modules():
                self.modules.setdefault(id(m), m)
                self.watch_module(m)
        elif type(obj) in (list, tuple):
            for o in obj:
                self.add_sources(o, depth + 1)
        elif type(obj) is dict:
            if depth:
                self.containers.add_dict(obj)
            for o in obj.values():
                self.add_sources(o, depth + 1)
        elif hasattr(obj, "__func__") and hasattr(obj, "__self__"):
            self.add_sources(obj.__self__, depth + 1)
            self.add_sources(obj.__func__, depth + 1)
        elif hasattr(obj, "func") and hasattr(obj, "args"):  # functools.partial
            self.add_sources(obj.func, depth + 1)
            self.add_sources(obj.args, depth + 1)
        elif hasattr(obj, "__code__"):
            for d in (getattr(obj, "__defaults__", None) or (),
                      (getattr(obj, "__kwdefaults__", None) or {}).values()):
                for o in d:
                    self.add_sources(o, depth + 1)
            for cell in obj.__closure__ or ():
                self.containers.add_cell(cell)
                try:
                    self.add_sources(cell.cell_contents, depth + 1)
                except ValueError:
                    pass
            g = getattr(obj, "__globals__", {})
            names = [name for name in obj.__code__.co_names if name in g]
            self.containers.add_dict(g, names)
            for name in names:
                self.add_sources(g[name], depth + 1)
        elif callable(obj) and not isinstance(obj, type) and depth == 0:
            # a callable object compiled as the function: what its attributes reach
            for o in getattr(obj, "__dict__", {}).values():
                self.add_sources(o, depth + 1)

    def add_external(self, t):
        slot = f"e{len(self.externals)}"
        self.externals.append(t)
        self._name(t, slot)
        return slot

    def _new_value(self, t):
        slot = f"{self._prefix}{self.n_values}"
        self.n_values += 1
        self.by_tensor[id(t)] = slot
        self.by_array[id(t._data)] = slot
        self.keep.append(t)
        self.keep.append(t._data)
        return slot

    def add_random(self, op, args, kwargs, out):
        """Record a random source's call (see RandomOp) that made tensor `out`."""
        if not isinstance(out, Tensor) or any(isinstance(v, Tensor) for v in kwargs.values()):
            self.graph_break(f"random numbers drawn outside an op ({op.name} with these "
                             "arguments)")
            return
        refs, meta = self._arg_refs(args)
        if out._rg:
            # a random leaf made inside the region (randn(..., requires_grad=True)): an
            # argument-like tensor would need its own AccumulateGrad
            self.graph_break("a tensor that requires grad made by a random factory inside "
                             "the region")
        slot = self._new_value(out)
        self.insts.append(Inst(op, False, refs, tuple(sorted(kwargs.items())), (slot,), meta,
                               ((out._data.shape, out._data.dtype),)))

    # ---------------------------------------------------------------- graph breaks
    def graph_break(self, reason):
        if self.fullgraph:
            raise Unsupported(reason)
        if not any(b.reason == reason for b in self.breaks):
            self.breaks.append(BreakReason(reason, _user_stack()))

    # ---------------------------------------------------------------- observer protocol
    def before(self, op, args, params):
        self.depth += 1
        return None

    def after(self, op, args, params, outputs, token):
        self.depth -= 1
        if self.depth:
            return  # an op run by another op's implementation: the outer op replays it
        if _state.tls.__dict__.get("graph_tasks"):
            if self.parent is None:
                self.graph_break("backward() or autograd.grad() called inside the region")
            return
        inplace = type(op) is Inplace
        if inplace:
            op = op.op
            target = args[0]
            self.bumps[id(target._vc)] = self.bumps.get(id(target._vc), 0) + 1
            if _state.tls.grad_enabled and (target._rg or any(
                    isinstance(a, Tensor) and a._rg for a in args[1:])):
                self.graph_break(f"in-place {op.name}_ on a tensor that requires grad")
                return
        if symbolic.holds(params, np.ndarray, 3):
            self.graph_break(f"{op.name}'s parameters hold arrays computed outside the ops "
                             "(e.g. batch statistics)")
        refs, meta = self._arg_refs(args)
        outs = outputs if type(outputs) is tuple else (outputs,)
        if inplace:
            out_slots = (refs[0],)
        else:
            out_slots = tuple(self._new_value(o) for o in outs)
        out_meta = tuple((o._data.shape, o._data.dtype) for o in outs)
        self.insts.append(Inst(op, inplace, refs, params, out_slots, meta, out_meta))
        if self.symbolic and self.parent is None and not inplace:
            self.tag(outs, refs)

    # ---------------------------------------------------------------- activation
    def __enter__(self):
        if active_tracer() is not None:
            raise RuntimeError("ndgrad.compile: a region is already being traced on this thread")
        _tracing.tracer = self
        if self.symbolic:
            symbolic.active.tracer = self
            registry.symbolic_traces[0] += 1
            registry.size_watch[0] = _sizes_decided
            _creation.factory_watch[0] = _factory_made
            registry.sym_size_hook[0] = _sym_size
        registry.special_hooks.append(self)
        registry.values_watch[0] = _values_read
        _state.enter_special()
        _install_patches()
        return self

    def __exit__(self, *exc):
        _remove_patches()
        _state.exit_special()
        registry.special_hooks.remove(self)
        _tracing.tracer = None
        if self.symbolic:
            symbolic.active.tracer = None
            registry.symbolic_traces[0] -= 1
        return False


class FactoryOp:
    """A factory (``zeros``, ``ones``, ``full``) called with symbolic sizes, as an
    instruction: ``impl(params)`` makes the tensor anew from ``params = (args, kwargs)``."""

    kind = "factory"
    n_out = 1

    def __init__(self, factory):
        self.factory = factory
        self.name = factory.__name__

    def impl(self, params, _plain=True):
        args, kwargs = params
        return self.factory(*args, **kwargs)


_FACTORY_OPS = {}


def factory_op(factory):
    """The one FactoryOp of `factory` (instructions of two traces compare ops by identity)."""
    op = _FACTORY_OPS.get(factory)
    if op is None:
        op = _FACTORY_OPS[factory] = FactoryOp(factory)
    return op


class RandomOp:
    """A random source (see ``_RANDOM_SOURCES``) as an instruction: each call of the program
    runs the source again, so it draws fresh numbers from the generator, in the trace's order
    (the order eager mode draws in). Its tensor arguments are slots (a ``*_like`` source's
    sizes follow them); `params` holds the keyword arguments as sorted ``(name, value)``
    pairs."""

    kind = "random"
    n_out = 1

    def __init__(self, source):
        self.source = source
        self.name = source.__name__

    def impl(self, *args, _plain=True):
        return self.source(*args[:-1], **dict(args[-1]))


_RANDOM_OPS = {}


def random_op(source):
    """The one RandomOp of `source` (instructions of two traces compare ops by identity)."""
    op = _RANDOM_OPS.get(source)
    if op is None:
        op = _RANDOM_OPS[source] = RandomOp(source)
    return op


def _random_watch(original):
    """`original`, a random source, recorded as one instruction when user code calls it in a
    traced region (its own draws are then no graph break)."""
    def source(*args, **kwargs):
        tr = getattr(_tracing, "tracer", None)
        if tr is None or tr.depth or tr.parent is not None:
            return original(*args, **kwargs)
        tr.depth += 1
        try:
            out = original(*args, **kwargs)
        finally:
            tr.depth -= 1
        tr.add_random(random_op(original), args, kwargs, out)
        return out
    source.__wrapped__ = original
    source.__name__ = getattr(original, "__name__", "random")
    return source


def _factory_made(factory, args, kwargs, t):
    tr = active_tracer()
    if tr is not None and tr.symbolic and symbolic.has_sym(args):
        tr.recipes[id(t)] = (factory, args, kwargs)
        tr.keep.append(t)


def _sym_size(x, dim, size):
    tr = active_tracer()
    if tr is None or not tr.symbolic or size < 2:
        return size
    slot = tr.by_tensor.get(id(x)) or tr.by_array.get(id(x._data))
    return size if slot is None else symbolic.SymInt(size, f"@{slot}[{dim}]")


def _values_read(what):
    tr = active_tracer()
    # (inside an op's implementation, depth > 0, the op replays as a whole: it reads the
    # values of each call)
    if tr is not None and tr.depth == 0:
        tr.graph_break(f"{what} (a tensor's values read into Python)")


def _sizes_decided():
    tr = active_tracer()
    if tr is not None and tr.symbolic and tr.depth == 0:
        (tr.parent or tr).sizes_decided = True


# ---------------------------------------------------------------------------- patches
# Tensor methods that hand values to Python, or change what autograd does, break the graph.
# They are patched on the class only while some thread traces, and act only on that thread.
_BREAKING = {
    "item": "Tensor.item() (a tensor's value read into Python)",
    "tolist": "Tensor.tolist() (values read into Python)",
    "numpy": "Tensor.numpy() (a call outside ndgrad)",
    "__bool__": "bool(tensor) (data-dependent control flow)",
    "__float__": "float(tensor) (a tensor's value read into Python)",
    "__int__": "int(tensor) (a tensor's value read into Python)",
    "__complex__": "complex(tensor) (a tensor's value read into Python)",
    "__index__": "a tensor used as a Python index (value read into Python)",
    "__array__": "np.asarray(tensor) (a call outside ndgrad)",
    "__repr__": "printing a tensor (values read into Python)",
    "__str__": "printing a tensor (values read into Python)",
    "__format__": "formatting a tensor (values read into Python)",
    "register_hook": "a tensor hook registered inside the region",
    "retain_grad": "retain_grad() inside the region",
    "backward": "backward() called inside the region",
    "requires_grad_": "requires_grad_() inside the region",
}
_saved_methods = {}
_patch_lock = threading.Lock()
_patch_count = 0


def _breaking(name, original, reason):
    def method(self, *args, **kwargs):
        tr = getattr(_tracing, "tracer", None)
        if tr is not None:
            tr.graph_break(reason)
        return original(self, *args, **kwargs)
    method.__name__ = name
    method.__wrapped__ = original
    return method


def _draw_watch(original):
    def draw(self, n):
        tr = getattr(_tracing, "tracer", None)
        if tr is not None and tr.depth == 0:
            tr.graph_break("random numbers drawn outside an op (dropout's noise, a random "
                           "factory inside the region)")
        return original(self, n)
    draw.__wrapped__ = original
    return draw


def _module_watch(original):
    def call(self, *args, **kwargs):
        tr = getattr(_tracing, "tracer", None)
        if tr is not None:
            tr.modules[id(self)] = self
            tr.watch_module(self)
            if _has_hooks(self):
                tr.graph_break(f"hooks of module {type(self).__name__} inside the region")
        return original(self, *args, **kwargs)
    call.__wrapped__ = original
    return call


# Tensors made at depth 0 that are constants of the trace: a factory's result, the user's
# Tensor(...), a number wrapped by as_tensor_arg, and these helpers, which build tensors from
# shapes only (file, function).
_SHAPE_ONLY = frozenset({("losses.py", "get"), ("conv_pool.py", "_stand_in"),
                         ("functional.py", "_causal_mask")})


def _init_watch(original):
    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        tr = getattr(_tracing, "tracer", None)
        if tr is not None and tr.depth == 0:
            code = sys._getframe(1).f_code
            caller = code.co_filename
            if not caller.startswith(_PACKAGE_DIR) or caller.endswith("_creation.py") or (
                    caller.endswith("registry.py") and self._data.ndim == 0) or \
                    (caller.rsplit("/", 1)[-1], code.co_name) in _SHAPE_ONLY:
                tr.safe[id(self)] = self
    init.__wrapped__ = original
    return init


def _random_sources():
    """(module, names): the functions that draw random tensors which a traced region records
    as instructions (RandomOp) instead of breaking: dropout's noise and the random factories,
    where user code and ndgrad's own code reach them."""
    import ndgrad
    from ..nn import _dropout_noise
    factories = ("rand", "randn", "rand_like", "randn_like", "randint", "randint_like",
                 "randperm")
    return ((_dropout_noise, ("noise_like",)), (ndgrad, factories), (_creation, factories))


def _has_hooks(m):
    return bool(m._forward_hooks or m._forward_pre_hooks or m._backward_hooks
                or m._backward_pre_hooks or mm._global_forward_hooks
                or mm._global_forward_pre_hooks or mm._global_backward_hooks
                or mm._global_backward_pre_hooks)


def _install_patches():
    global _patch_count
    with _patch_lock:
        _patch_count += 1
        if _patch_count > 1:
            return
        original = Module.__dict__["__call__"]
        _saved_methods[(Module, "__call__")] = original
        Module.__call__ = _module_watch(original)
        original = Tensor.__dict__["__init__"]
        _saved_methods[(Tensor, "__init__")] = original
        Tensor.__init__ = _init_watch(original)
        for name, reason in _BREAKING.items():
            original = Tensor.__dict__.get(name)
            if original is None:
                continue
            _saved_methods[(Tensor, name)] = original
            setattr(Tensor, name, _breaking(name, original, reason))
        for name in ("_raw32", "_raw64"):
            original = _random.Generator.__dict__[name]
            _saved_methods[(_random.Generator, name)] = original
            setattr(_random.Generator, name, _draw_watch(original))
        for module, names in _random_sources():
            for name in names:
                original = module.__dict__.get(name)
                if original is not None:
                    _saved_methods[(module, name)] = original
                    setattr(module, name, _random_watch(original))
        symbolic.install()


def _remove_patches():
    global _patch_count
    with _patch_lock:
        _patch_count -= 1
        if _patch_count:
            return
        symbolic.uninstall()
        for (cls, name), original in _saved_methods.items():
            setattr(cls, name, original)
        _saved_methods.clear()

