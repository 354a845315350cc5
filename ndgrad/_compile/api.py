"""``ndgrad.compile``: the cache of compiled regions of one function, its guards, graph breaks
and recompilations; ``OptimizedModule``; ``explain`` and ``reset``.

A call looks its *signature* up in the cache: per tensor argument its shape, dtype and
requires_grad (and which arguments are one object); per other argument its value (Python
constants the trace depended on; containers are walked, other objects go by identity); grad
mode and the default dtype. An entry found there also checks its own guards: the
training flags of the modules the region called, and for every tensor the region reached
outside its arguments (parameters, buffers, closure tensors) its shape, dtype and
requires_grad, read where it came from (``module._parameters[name]`` for module state, so
a replaced parameter is the one used). All pass: the
region's programs run. Otherwise the call is traced (it runs eagerly once, observed) and a
new entry is added, up to ``ndgrad._dynamo.config.cache_size_limit`` entries per function;
beyond that a warning in torch's words and eager calls.

When a call misses only because input sizes changed, the function's *dynamic* entries for
its signature without sizes are tried (see :mod:`.dynamic`): made when two traces at
different sizes gave the same program, they check their own guards on the sizes. A call they
serve is remembered under its exact signature.

A graph break (see :mod:`.tracer`) makes the entry an *eager* one: calls with that signature
run the function as written, with no tracing. ``fullgraph=True`` raises ``Unsupported``
instead. Calls while a special mode is active (profiler, anomaly mode, forward AD) or under
inference mode run eagerly too.
"""

import builtins
import copy
import functools
import itertools
import logging
import weakref

from .. import _dtype, _state
from .._dynamo import config
from .._dynamo.exc import Unsupported
from .._ops import registry as _registry
from .._ops.registry import _needs_grad
from .._tensor import Tensor
from .._graph_core import _next_seq
from ..nn.modules.module import Module
from .dynamic import erase_sizes, make_check, same_program
from .region import GUARD_FAILED, build_region
from .tracer import BreakReason, Tracer

__all__ = ["compile", "CompiledFunction", "OptimizedModule", "reset", "explain",
           "ExplainOutput"]

log = logging.getLogger("ndgrad._dynamo")
_tls = _state.tls
_default_dtype = _dtype.get_default_dtype
# The exact tensor types of the dispatcher's fast paths (Tensor, nn.Parameter).
_FAST_TYPES = getattr(_registry, "_FAST_TYPES", None) or {Tensor}
_ALL = weakref.WeakSet()
_PRIMITIVES = (int, float, bool, str, complex, type(None))
_MAX_KEYS = 256  # exact signatures remembered for a dynamic entry's sizes


class _Entry:
    __slots__ = ("region", "ext", "mods", "training", "compile_time", "_gather", "shapes",
                 "sym_guards", "fixed_sizes")
    breaks = ()

    def __init__(self, region, ext, mods, training, compile_time=0.0):
        self.shapes = ()        # the input tensors' shapes of the trace
        self.sym_guards = ()    # the user code's decisions on sizes (see .symbolic)
        self.fixed_sizes = True  # never generalised over sizes (see .dynamic)
        self.region = region
        self.ext = ext              # per external: (owner dict or None, key or tensor, meta)
        self.mods = mods
        self.training = training
        self.compile_time = compile_time
        # _gather(tensors): the region's tensors (arguments then externals, appended to
        # `tensors`), or None when a guard fails
        self._gather = _make_gather(mods, training, ext)

    def for_sizes(self, value_guards):
        """This entry as a dynamic one: constants no program reads are not guarded, and the
        forward checks `value_guards` (guards on the shapes of its values)."""
        region = self.region
        n_in = region.n_inputs
        ext = tuple((o, k, None if o is None and n_in + j not in region.reads else s,
                     d, g) for j, (o, k, s, d, g) in enumerate(self.ext))
        if value_guards:
            region = copy.copy(region)
            region.forward = region.forward_program(value_guards)
        entry = _Entry(region, ext, self.mods, self.training, self.compile_time)
        entry.shapes = self.shapes
        return entry


def _make_gather(mods, training, ext):
    """A generated function checking an entry's guards and appending its externals."""
    env = {}
    # A failed guard leaves `tensors` as it found it (another entry's gather may follow).
    lines = ["n = len(tensors)"]
    for k, (m, tr) in enumerate(zip(mods, training)):
        env[f"_m{k}"] = m
        lines.append(f"if _m{k}.training is not {tr}: return None")
    for k, (owner, key, shape, dtype, rg) in enumerate(ext):
        env[f"_d{k}"] = dtype
        if owner is None:
            env[f"_t{k}"] = key
            lines.append(f"t = _t{k}")
        else:
            env[f"_o{k}"] = owner
            env[f"_n{k}"] = key
            lines.append(f"t = _o{k}.get(_n{k})")
            lines.append("if t is None:")
            lines.append("    del tensors[n:]")
            lines.append("    return None")
        lines.append("d = t._data")
        wrong_shape = "False" if shape is None else f"d.shape != {shape!r}"
        lines.append(f"if {wrong_shape} or d.dtype != _d{k} or t._rg is not {rg}:")
        lines.append("    del tensors[n:]")
        lines.append("    return None")
        lines.append("tensors.append(t)")
    src = "def gather(tensors):\n" + "".join(f"    {ln}\n" for ln in lines) + \
        "    return tensors\n"
    exec(builtins.compile(src, "<ndgrad.compile guards>", "exec"), env)
    return env["gather"]


def _flatten(obj, tensors, key):
    t = type(obj)
    if t is Tensor or isinstance(obj, Tensor):
        d = obj._data
        tensors.append(obj)
        key.append((d.shape, d.dtype, obj._rg if obj._base is None else _needs_grad(obj)))
    elif t in _PRIMITIVES:
        key.append((t, obj))
    elif t is tuple or t is list:
        key.append((t, len(obj)))
        for o in obj:
            _flatten(o, tensors, key)
    elif t is dict:
        key.append((dict, tuple(obj)))
        for o in obj.values():
            _flatten(o, tensors, key)
    else:
        key.append(("id", id(obj)))


class CompiledFunction:
    """What ``ndgrad.compile(fn)`` returns: calls `fn` through its cache of regions."""

    def __init__(self, fn, fullgraph=False, dynamic=None, mode=None, backend="inductor",
                 options=None, disable=False):
        self._orig_fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.mode = mode
        self.backend = backend
        self.options = options
        self.disable = disable
        self.cache = {}
        self.dyn = {}       # signature without sizes -> [(check, entry)] (see .dynamic)
        self.latest = {}    # signature without sizes -> the entry traced last
        self.n_entries = 0
        self.limit_hit = False
        self.last_breaks = []
        functools.update_wrapper(self, fn, updated=())
        _ALL.add(self)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def reset(self):
        self.cache.clear()
        self.dyn.clear()
        self.latest.clear()
        self.n_entries = 0
        self.limit_hit = False

    def __call__(self, *args, **kwargs):
        if self.disable or _state.special or _tls.inference:
            return self._orig_fn(*args, **kwargs)
        tensors = []
        key = [_tls.grad_enabled, _default_dtype()]
        for a in args:
            if type(a) in _FAST_TYPES:
                d = a._data
                tensors.append(a)
                key.append((d.shape, d.dtype, a._rg if a._base is None else _needs_grad(a)))
            else:
                _flatten(a, tensors, key)
        if kwargs:
            for k in sorted(kwargs):
                key.append(k)
                _flatten(kwargs[k], tensors, key)
        n = len(tensors)
        if n > 1 and (tensors[0] is tensors[1] if n == 2 else len(set(map(id, tensors))) != n):
            key.append(tuple(map(id, tensors)))  # aliased arguments: guarded as given
        entries = self.cache.get(tuple(key))
        if entries is not None:
            for entry in entries:
                if type(entry) is _EagerEntry:
                    return self._orig_fn(*args, **kwargs)
                ts = entry._gather(tensors)
                if ts is not None:
                    out = entry.region.run(tuple(ts), (self._orig_fn, args, kwargs))
                    if out is not GUARD_FAILED:
                        return out
                    del tensors[len(ts) - len(entry.ext):]
        return self._compile_and_call(tuple(key), tensors, args, kwargs)

    def _compile_and_call(self, key, tensors, args, kwargs):
        dynamic = self.dynamic is not False and len(set(map(id, tensors))) == len(tensors)
        if dynamic:
            ekey = erase_sizes(key)
            for check, entry in self.dyn.get(ekey, ()):
                if check(tensors):
                    ts = entry._gather(tensors)
                    if ts is None:
                        continue
                    out = entry.region.run(tuple(ts), (self._orig_fn, args, kwargs))
                    del tensors[len(ts) - len(entry.ext):]
                    if out is GUARD_FAILED:
                        continue
                    if len(self.cache) < _MAX_KEYS:  # later calls of these sizes
                        self.cache.setdefault(key, []).append(entry)
                    return out
        limit = getattr(config, "cache_size_limit", 8)
        if self.n_entries >= limit:
            if not self.limit_hit:
                self.limit_hit = True
                code = getattr(self._orig_fn, "__code__", None)
                where = (f"'{code.co_name}' ({code.co_filename}:{code.co_firstlineno})"
                         if code is not None else repr(self._orig_fn))
                log.warning(
                    "torch._dynamo hit config.cache_size_limit (%s)\n   function: %s\n"
                    "   last reason: a guard failed (new shapes, dtypes, requires_grad, "
                    "constants or grad mode)\n"
                    'To log all recompilation reasons, use TORCH_LOGS="recompiles".\n'
                    "To diagnose recompilation issues, see docs/compile.md", limit, where)
            return self._orig_fn(*args, **kwargs)
        prev = self.latest.get(ekey) if dynamic else None
        out, entry = trace_call(self._orig_fn, tensors, args, kwargs, self.fullgraph,
                                symbolic=dynamic, like=prev)
        self.last_breaks = list(entry.breaks)
        self.cache.setdefault(key, []).append(entry)
        self.n_entries += 1
        if dynamic and type(entry) is _Entry:
            if prev is not None and same_program(prev, entry):
                made = make_check(prev, entry)
                if made is not None:
                    check, value_guards = made
                    self.dyn.setdefault(ekey, []).append(
                        (check, entry.for_sizes(value_guards)))
            self.latest[ekey] = entry
        return out


class _EagerEntry:
    """A signature whose trace broke: runs eagerly. Keeps the reasons for explain()."""

    __slots__ = ("breaks",)

    def __init__(self, breaks):
        self.breaks = breaks


def trace_call(fn, tensors, args, kwargs, fullgraph, symbolic=False, like=None):
    """Run `fn` once, traced. Returns its (eager) result and the new cache entry.
    `symbolic`: sizes are symbolic (see .symbolic); `like`: the entry traced last at other
    sizes (see dynamic.relativise)."""
    import time
    t0 = time.perf_counter()
    tracer = Tracer(fullgraph=fullgraph)
    for t in tensors:
        tracer.add_input(t)
    tracer.symbolic = symbolic
    tracer.add_sources(fn)
    seq_start = _next_seq()
    tracer.seq_start = seq_start
    try:
        with tracer:
            out = fn(*args, **kwargs)
            tracer.check_writes()
        if tracer.breaks:
            return out, _eager_entry(tracer.breaks)
        return out, _entry_of(tracer, out, seq_start, tensors, fullgraph, t0, like,
                              tracer.containers.stores())
    finally:
        tracer.untag()


def _entry_of(tracer, out, seq_start, tensors, fullgraph, t0, like, stores=()):
    """The cache entry of a finished trace without graph breaks; `stores`: (Target, value)
    per closure or global item the call set to new tensors (see .state)."""
    import time
    try:
        region = build_region(tracer, out, seq_start,
                              like=like.region if like is not None else None, stores=stores)
    except Unsupported as e:
        if fullgraph:
            raise
        return _eager_entry([BreakReason(str(e), [])])
    except Exception as e:  # noqa: BLE001 - the call itself succeeded: never fail it here
        # e.g. the VJP rules refused to run (a saved value changed in place): eager.
        reason = f"the region could not be compiled: {type(e).__name__}: {e}"
        if fullgraph:
            raise Unsupported(reason) from e
        return _eager_entry([BreakReason(reason, [])])
    sources = {}
    for m in tracer.modules.values():
        for dname in ("_parameters", "_buffers"):
            d = m.__dict__.get(dname)
            if d:
                for k, v in d.items():
                    if v is not None:
                        sources.setdefault(id(v), (d, k))
    ext = []  # (owner with .get(key) or None, key or the tensor itself, shape, dtype, rg)
    for t in tracer.externals:
        owner, k = sources.get(id(t), (None, t))
        if owner is None:  # a closure's or global's tensor: read where it is (see .state)
            place = tracer.containers.place_of(t)
            if place is not None:
                owner, k = place, None
        ext.append((owner, k, t._data.shape, t._data.dtype, bool(t._rg)))
    mods = tuple(tracer.modules.values())
    entry = _Entry(region, tuple(ext), mods, tuple(bool(m.training) for m in mods),
                   compile_time=time.perf_counter() - t0)
    entry.shapes = tuple(t._data.shape for t in tensors)
    entry.sym_guards = tuple(tracer.sym_guards)
    entry.fixed_sizes = tracer.sizes_decided or not tracer.symbolic
    return entry


def _eager_entry(breaks):
    return _EagerEntry(breaks)


class OptimizedModule:
    """What ``ndgrad.compile(module)`` returns: calls the module through a compiled
    ``forward``; attributes are the original module's (``_orig_mod``)."""

    def __init__(self, mod, **options):
        object.__setattr__(self, "_orig_mod", mod)
        object.__setattr__(self, "_compiled", CompiledFunction(mod.__call__, **options))

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        setattr(self._orig_mod, name, value)

    def __repr__(self):
        return f"OptimizedModule({self._orig_mod!r})"


def _compile_module(self, *args, **kwargs):
    """Compile this module's ``forward`` in place with ``ndgrad.compile(*args,
    **kwargs)``: later calls run the captured programs (hooks still run around it)."""
    forward = self.__dict__.get("forward")
    if isinstance(forward, CompiledFunction):
        forward = forward._orig_fn
    if forward is None:
        forward = self.forward
    self.__dict__["forward"] = CompiledFunction(forward, **kwargs)


# nn sits below the compiler, so the compiler attaches nn.Module.compile (as autograd attaches
# Tensor.backward) instead of nn importing it upwards.
_compile_module.__name__ = "compile"
_compile_module.__qualname__ = "Module.compile"
Module.compile = _compile_module


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """Capture what `model` (a function or an ``nn.Module``) runs and replay it as
    straight-line NumPy, like ``torch.compile``. Without `model`, a decorator.

    >>> import ndgrad as torch
    >>> f = torch.compile(lambda x: (x * 2).sin())
    >>> x = torch.ones(3, requires_grad=True)
    >>> f(x).sum().backward()      # first call: traced; later calls: the compiled programs
    """
    opts = dict(fullgraph=fullgraph, dynamic=dynamic, mode=mode, backend=backend,
                options=options, disable=disable)
    if model is None:
        return lambda m: compile(m, **opts)
    if isinstance(model, Module):
        return OptimizedModule(model, **opts)
    if not callable(model):
        raise RuntimeError("compile() expects a callable or an nn.Module")
    return CompiledFunction(model, **opts)


def reset():
    """Forget every compiled entry of every compiled function (torch._dynamo.reset)."""
    for cf in list(_ALL):
        cf.reset()


class ExplainOutput:
    """What ``explain(fn)(*args)`` returns, as torch._dynamo's: counts and break reasons."""

    def __init__(self, graphs, break_reasons, ops_per_graph, compile_times):
        self.graphs = graphs
        self.graph_count = len(graphs)
        self.graph_break_count = len(break_reasons)
        self.break_reasons = break_reasons
        self.ops_per_graph = ops_per_graph
        self.op_count = sum(len(o) for o in ops_per_graph)
        self.out_guards = None
        self.compile_times = compile_times

    def __str__(self):
        out = f"Graph Count: {self.graph_count}\n"
        out += f"Graph Break Count: {self.graph_break_count}\n"
        out += f"Op Count: {self.op_count}\n"
        out += "Break Reasons:\n"
        for i, br in enumerate(self.break_reasons):
            out += f"  Break Reason {i + 1}:\n    Reason: {br.reason}\n    User Stack:\n"
            for frame in br.user_stack:
                out += f"      {frame}\n"
        out += "Ops per Graph:\n"
        for i, ops in enumerate(self.ops_per_graph):
            out += f"  Ops {i + 1}:\n"
            for op in ops:
                out += f"    {op}\n"
        if self.compile_times is not None:
            out += f"Compile Times: {self.compile_times}\n"
        return out


def explain(fn, *extra_args, **extra_kwargs):
    """``explain(fn)(*args)``: trace `fn` once on `args` (it runs eagerly) and report the
    captured ops, the graph breaks and their user stacks."""
    def inner(*args, **kwargs):
        if isinstance(fn, OptimizedModule):
            target = fn._orig_mod
        elif isinstance(fn, CompiledFunction):
            target = fn._orig_fn
        else:
            target = fn
        tensors = []
        key = []
        for a in itertools.chain(args, kwargs.values()):
            _flatten(a, tensors, key)
        _, entry = trace_call(target, tensors, args, kwargs, False)
        if isinstance(entry, _EagerEntry):
            return ExplainOutput([], list(entry.breaks), [], None)
        ops = [inst.op.name + ("_" if inst.inplace else "") for inst in entry.region.insts]
        return ExplainOutput([entry.region], [], [ops],
                             f"{entry.compile_time * 1e3:.2f} ms")
    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
