"""A compiled region: the forward and backward programs of one traced call, and the one node
(``CompiledFunctionBackward``) through which the eager graph reaches the backward program.

Building a region (:func:`build_region`) from a finished forward trace:

1. the joint graph: the VJP rules of the nodes the trace created are run once, newest first as
   the engine would, on placeholder output gradients, under another tracer; the engine's own
   steps (summing a broadcast gradient back to its input's shape, casts, accumulating the
   gradients of a value used twice) are taken through the same helpers, so they are traced
   too. Gradients reaching a node the trace did not create (a leaf's AccumulateGrad, the
   history of an input) are the region's input gradients.
2. both traces become Python functions on arrays (:mod:`.codegen`); the forward returns its
   outputs and the values the backward reads.

Running a region (:meth:`Region.run`): the forward program on the inputs' arrays, outputs
wrapped as tensors, and when autograd records, one node whose edges are the inputs' current
edges and whose saved values are the backward program's arrays. Its ``_apply`` checks the
versions of the inputs the backward reads, runs the backward program and wraps the input
gradients. Under ``create_graph`` it falls back to eager: the traced forward is replayed with
ndgrad ops from the same inputs and differentiated with ``create_graph=True``.
"""

import heapq
import sys

import numpy as np

from .. import _state
from .._dynamo.exc import Unsupported
from .._tensor import Tensor, _from_array
from .._ops.broadcast import reduce_grads
from ..autograd import grad
from ..autograd.grad_mode import set_grad_enabled as _grad_enabled
from .._graph_core import (BACKWARD_TWICE, FREED, AccumulateGrad, Node, SavedTensor,
                           accumulate_grad,
                           version_error)
from .codegen import Program, emit
from .dynamic import relativise
from .symbolic import guard_source
from . import fast
from .tracer import Tracer

__all__ = ["Region", "build_region", "CompiledFunctionBackward", "GUARD_FAILED"]

_tls = _state.tls
_getrefcount = sys.getrefcount
_HOOK_KEYS = frozenset(("hooks", "pre_hooks", "tensor_pre_hooks", "retain_hooks"))
GUARD_FAILED = object()  # what Region.run returns when a guard of its forward failed


class CompiledFunctionBackward(Node):
    """The backward of a compiled region: one node for all the ops the region ran."""

    __slots__ = ("_region", "_tensors", "_versions", "_call", "_oshapes")
    _wants_none = False

    def _apply(self, gs):
        saved = self._saved
        if saved is FREED:
            raise RuntimeError(BACKWARD_TWICE)
        saved = saved[0] if saved else ()
        region = self._region
        tensors = self._tensors
        for k, ver in zip(region.version_checks, self._versions):
            t = tensors[k]
            if t._vc[0] != ver:
                s = SavedTensor.of_input(t)
                s._version = ver
                raise RuntimeError(version_error(s, None))
        if _tls.grad_enabled:
            return region.eager_backward(self, gs)
        n = len(gs)
        live = None  # results reachable from the outputs that got a gradient (None: all)
        if region.single_grad and n and gs[0] is not None:
            garr = [gs[0]._data]  # one output gradient (a loss): no zeros to make
        elif region.single_grad:  # its one differentiable output got none: neither do inputs
            return (None,) * len(region.ret_plan)
        else:
            garr = []
            for i, (k, _, dtype) in enumerate(region.grad_meta):
                g = gs[k] if k < n else None
                if g is None:  # (the output's shape in this call: sizes may vary)
                    garr.append(np.zeros(self._oshapes[k], dtype))
                    if live is None:
                        live = set()
                else:
                    garr.append(g._data)
            if live is not None:
                # An input that only outputs without a gradient reach gets none, as in eager
                # mode (not the zeros the program computes for it from the zero fill).
                for i, (k, _, _) in enumerate(region.grad_meta):
                    if k < n and gs[k] is not None:
                        live.update(region.out_reach[i])
        try:
            res = region.backward(*garr, *saved,
                                  *[tensors[k]._data for k in region.bwd_tensors])
        except Exception:  # noqa: BLE001 - a kernel refused these values: eager's error
            return region.eager_backward(self, gs, create_graph=False)
        if live is not None:
            res = [a if j in live else None for j, a in enumerate(res)]
        if region.all_new:  # every result a new array (or None): one tensor each
            return tuple([None if a is None else _from_array(a) for a in res])
        # Per result (see Region.ret_plan): an incoming gradient passed through is returned
        # as the same tensor, and one array returned twice as one tensor, as in eager mode.
        out = []
        for a, plan in zip(res, region.ret_plan):
            if plan is None or a is None:
                out.append(None)
            elif plan >= 0:
                out.append(_from_array(a))
            elif plan < -1000:
                g = gs[-plan - 1001] if -plan - 1001 < n else None
                out.append(g if g is not None else _from_array(a))
            else:
                out.append(out[-plan - 1])
        return tuple(out)

    def _release(self):
        if self._saved:
            self._saved = FREED

    def _into_leaves(self, nr, g, keep_graph):
        """The engine's short path for this node as the root of a plain backward whose edges
        all lead to distinct hook-free leaves (``engine._run_into_leaves``), fused for the
        usual training step: one output gradient `g` (a loss), the backward program, and each
        gradient array into its leaf's ``.grad``. Returns False, having changed nothing,
        when the generic path must run instead (anything but that case: a freed graph, a
        saved value changed in place, a kernel refusing the values, ...)."""
        region = self._region
        saved = self._saved
        if nr or not region.single_grad or not region.all_new or saved is FREED:
            return False
        tensors = self._tensors
        for k, ver in zip(region.version_checks, self._versions):
            if tensors[k]._vc[0] != ver:
                return False
        try:
            res = region.backward(g._data, *(saved[0] if saved else ()),
                                  *[tensors[k]._data for k in region.bwd_tensors])
        except Exception:  # noqa: BLE001 - the generic path gives eager's error
            return False
        if not keep_graph and saved:
            self._saved = FREED
        prev = _tls.grad_enabled
        _tls.grad_enabled = False
        try:
            for i, e in enumerate(self._next):
                a = res[i]
                if a is None:
                    continue
                var = e[0].variable
                if var._grad is None:
                    vd = var._data
                    # As accumulate_grad with an owned gradient: a new array that nothing
                    # else holds (the result tuple, this frame's `a`, getrefcount's argument;
                    # a view: the whole of such a base), of the parameter's layout, becomes
                    # .grad itself.
                    if (_getrefcount(a) == 3 and a.strides == vd.strides
                            and a.shape == vd.shape and a.flags.writeable):
                        b = a.base
                        if b is None or (type(b) is np.ndarray and b.base is None
                                         and b.size == a.size and _getrefcount(b) == 3):
                            var._grad = _from_array(a)
                            continue
                accumulate_grad(var, _from_array(a), False)
        finally:
            _tls.grad_enabled = prev
        return True


class Region:
    """One cache entry: guards are checked by the caller; this holds the programs."""

    def __init__(self):
        self.forward = None       # fn(tensors) -> (output arrays, saved arrays)
        self.backward = None      # fn(*grads, *saved, *input arrays) -> input grads
        self.insts = ()           # the forward trace, for explain() and eager replay
        self.bwd_insts = ()
        self.n_inputs = 0
        self.externals = ()       # (tensor or None, source or None) per external
        self.out_spec = None      # the output structure (see build_region)
        self.out_slots = ()       # per output array of the forward program: its slot
        self.out_rg = ()          # per output array: whether it is differentiable
        self.grad_inputs = ()     # indices (in the region's tensors) that get a gradient
        self.grad_meta = ()       # (output index, shape, dtype) per backward gradient input
        self.out_reach = ()       # per grad_meta entry: the results its output's graph reaches
        self.bwd_tensors = ()     # indices of region tensors whose arrays backward reads
        self.version_checks = ()  # same indices: their versions are checked in backward
        self.has_backward = False
        self.single = False       # the output is one tensor computed by the region
        self.keeps = False        # the backward reads saved values or region tensors
        # per backward result: None (no gradient), >= 0 (a new tensor), -1001-k (output
        # gradient k passed through), -1-j (the same tensor as result j)
        self.ret_plan = ()
        self.all_new = False      # no result passes a gradient through or repeats another
        self.single_grad = False  # grad_meta is one entry, for output 0
        self.node_name = "CompiledFunctionBackward"
        self.reads = set()        # indices of region tensors a program reads or returns
        self.fprog = None         # the forward Program (forward_program builds from it)
        self.f_reads = set()      # slots of region tensors whose arrays the forward reads
        self.f_returns = "()"     # the forward's return expression
        self.f_loads = []         # per region tensor: its slot
        # (forward?, index) of the instructions whose sizes relativise() made expressions,
        # checked against the region `relative_to`
        self.relative = frozenset()
        self.relative_to = None
        # closure/global items each call sets to new tensors (.state.Target): the output
        # structure is then (the function's output, the stored values)
        self.stores = ()

    def forward_program(self, guards):
        """The forward program, as a function of the region's tensors; with `guards`
        (expressions on the shapes of its values, see .symbolic) it returns None instead of
        its results when one fails."""
        prog = self.fprog
        lines = list(prog.lines)
        if guards:
            lines.append(f"if not ({prog.expr(guard_source(guards))}): return None")
        # the arrays of the region's tensors it reads (not those only the backward reads,
        # nor the nll shape proxy a fast form made unused), or whose shapes it reads
        need = self.f_reads | prog.sym_reads
        loads = [f"{slot} = _T[{k}]._data" for k, slot in enumerate(self.f_loads)
                 if slot in need]
        return prog.function("forward", ["_T"], self.f_returns, loads + lines)

    # ---------------------------------------------------------------- running
    def run(self, tensors, call):
        """Run the forward program on the region's tensors (inputs then externals); `call`:
        (function, args, kwargs) of this call, kept by the node for create_graph."""
        try:
            res = self.forward(tensors)
        except Exception:  # noqa: BLE001 - a kernel refused these values: eager's error
            if any(inst.inplace for inst in self.insts):
                raise
            fn, args, kwargs = call
            return fn(*args, **kwargs)
        if res is None:
            return GUARD_FAILED  # (a dynamic entry's guard on its values' shapes)
        outs, saved = res
        node = None
        if self.has_backward and _tls.grad_enabled:
            edges = []
            for k in self.grad_inputs:
                t = tensors[k]
                if t._base is None:
                    fn = t._grad_fn
                    if fn is not None:
                        edges.append((fn, t._output_nr))
                        continue
                    acc = t._acc   # (Tensor._edge of a leaf, inline while its node is alive)
                    acc = acc() if acc is not None else None
                    if acc is not None:
                        edges.append((acc, 0))
                        continue
                edges.append(t._edge())
            # One entry (the saved arrays) when the backward reads anything: the engine frees
            # it after a backward without retain_graph, and a second backward raises as in
            # eager mode.
            node = CompiledFunctionBackward(tuple(edges), (saved,) if self.keeps else (), None)
            node._region = self
            node._tensors = tensors
            node._versions = [tensors[k]._vc[0] for k in self.version_checks]
            node._call = call
            if not self.single_grad:
                node._oshapes = [a.shape for a in outs]
        if self.single:  # one tensor computed by the region: no structure to rebuild
            t = _from_array(outs[0])
            if node is not None and self.out_rg[0]:
                t._rg = True
                t._grad_fn = node
            return t
        values = {}
        k = 0
        for slot, arr, rg in zip(self.out_slots, outs, self.out_rg):
            values[slot] = t = _from_array(arr)
            if rg and node is not None:
                t._rg = True
                t._grad_fn = node
                t._output_nr = k
            k += 1
        out = _unflatten(self.out_spec, values, tensors, self.n_inputs)
        if self.stores:
            out, stored = out
            for target, v in zip(self.stores, stored):
                target.set(v)
        return out

    def eager_backward(self, node, gs, create_graph=True):
        """create_graph through the region (or a backward kernel that raised): run the
        original function again, eagerly, on the same inputs (as activation checkpointing
        does) and differentiate that graph."""
        if any(inst.inplace for inst in self.insts):
            raise RuntimeError("ndgrad.compile: create_graph=True through a compiled region "
                               "that writes in place is not supported; run this function "
                               "eagerly (ndgrad.compile(..., disable=True)) to differentiate "
                               "its backward")
        fn, args, kwargs = node._call
        with _grad_enabled(True):
            out = fn(*args, **kwargs)
        if self.stores:  # the call stored its new values again
            out = (out, tuple(target.value() for target in self.stores))
        found = {}
        _match(self.out_spec, out, found)
        outs = []
        grads = []
        for k, _, _ in self.grad_meta:
            g = gs[k] if k < len(gs) else None
            if g is not None:
                outs.append(found[self.out_slots[k]])
                grads.append(g)
        inputs = [node._tensors[k] for k in self.grad_inputs]
        return tuple(grad(outs, inputs, grads, create_graph=create_graph, allow_unused=True))


def _match(spec, out, found):
    """Map the value slots of `spec` to the tensors at the same places in `out`."""
    if spec[0] == "t":
        found.setdefault(spec[1], out)
    elif spec[0] is dict:
        for k, v in spec[1]:
            _match(v, out[k], found)
    elif spec[0] != "c":
        for v, o in zip(spec[1], out):
            _match(v, o, found)


# ------------------------------------------------------------------------- output structure
def flatten_output(out, slot_of):
    """The output's structure with each tensor replaced by ("t", slot)."""
    if isinstance(out, Tensor):
        return ("t", slot_of(out))
    if type(out) in (tuple, list):
        return (type(out), [flatten_output(o, slot_of) for o in out])
    if isinstance(out, tuple) and hasattr(type(out), "_fields"):  # torch.return_types.*
        return (type(out), [flatten_output(o, slot_of) for o in out])
    if type(out) is dict:
        return (dict, [(k, flatten_output(v, slot_of)) for k, v in out.items()])
    if out is None or type(out) in (int, float, bool, str, complex):
        return ("c", out)
    raise Unsupported(f"a region returning {type(out).__name__} (only tensors, numbers and "
                      "tuples, lists and dicts of them)")


def _unflatten(spec, values, tensors, n_inputs):
    kind = spec[0]
    if kind == "t":
        slot = spec[1]
        t = values.get(slot)
        if t is None:  # an input or external returned as is
            k = int(slot[1:])
            return tensors[k] if slot[0] == "i" else tensors[n_inputs + k]
        return t
    if kind == "c":
        return spec[1]
    if kind is dict:
        return {k: _unflatten(v, values, tensors, n_inputs) for k, v in spec[1]}
    items = [_unflatten(v, values, tensors, n_inputs) for v in spec[1]]
    if kind is tuple or kind is list:
        return kind(items)
    return kind(*items)  # a named tuple


def _slots_in(spec, acc):
    if spec[0] == "t":
        acc.append(spec[1])
    elif spec[0] != "c":
        for item in spec[1]:
            _slots_in(item[1] if spec[0] is dict else item, acc)
    return acc


# ------------------------------------------------------------------------- building
def build_region(tracer, out, seq_start, like=None, stores=()):
    """The :class:`Region` of the finished forward trace `tracer` of a call that returned
    `out` (the trace's tensors are still alive: the graph they recorded is used once for the
    backward trace). `seq_start`: the first node sequence number of the trace. `like`: the
    region of an earlier trace of the same function at other sizes, whose sizes forced by
    the arrays become expressions here (see ``dynamic.relativise``)."""
    region = Region()
    if stores:  # the stored values are outputs too, (out, stored values), see .state
        region.stores = tuple(target for target, _ in stores)
        out = (out, tuple(v for _, v in stores))
    spec = flatten_output(out, tracer.slot_of)
    if tracer.breaks:
        raise Unsupported(tracer.breaks[0].reason)
    slots = _slots_in(spec, [])
    value_slots = []
    for s in slots:
        if s[0] == "v" and s not in value_slots:
            value_slots.append(s)
    out_tensors = {}
    for t in tracer.keep:
        if isinstance(t, Tensor):
            s = tracer.by_tensor.get(id(t))
            if s in value_slots and s not in out_tensors:
                out_tensors[s] = t
    bases = [out_tensors[s]._base for s in value_slots if out_tensors[s]._base is not None]
    base_ids = [id(b) for b in bases]
    for b in bases:
        slot = tracer.by_tensor.get(id(b))
        # A view of an internal value is returned as a plain tensor (nobody else sees the
        # base); a view of an argument, of a parameter or of another output is not.
        if slot is None or slot[0] in "ie" or slot in value_slots or \
                base_ids.count(id(b)) > 1:
            raise Unsupported("the region returns a view of a tensor that outlives the call "
                              "(in-place changes of it would have to reach that tensor)")
    region.out_slots = tuple(value_slots)
    region.out_rg = tuple(bool(out_tensors[s]._rg) for s in value_slots)
    region.out_spec = spec
    region.single = spec[0] == "t" and spec[1][0] == "v"
    region.insts = tuple(tracer.insts)

    # 1. the joint graph
    bwd = None
    if _tls.grad_enabled and any(region.out_rg):
        bwd, results = _trace_backward(tracer, region, out_tensors, seq_start)
    n_in = len(tracer.inputs)
    region.n_inputs = n_in
    n_tensors = len(tracer.inputs) + len(tracer.externals)
    if like is not None:
        region.relative = relativise(like, tracer.insts, bwd.insts if bwd is not None else [])
        region.relative_to = like

    # 2. the programs
    fprog = Program()
    fprog.n_inputs = n_in
    saved_slots = list(bwd.used_forward) if bwd is not None else []
    freads = _emit_all(fprog, tracer.insts, set(value_slots) | set(saved_slots))
    # the region's tensors some program reads (an unread one's shape does not matter)
    region.reads = {fprog.tensor_index(a) for a in freads if a[0] in "ie"}
    region.reads.update(fprog.tensor_index(s) for s in slots if s[0] in "ie")
    exports = []  # forward slots whose shapes the backward's symbolic sizes read
    if bwd is not None:
        bprog = Program()
        bprog.n_inputs = n_in
        # a size of a backward value is read from it; of a forward value, passed in
        bprog.sym_render = lambda slot, d: f"{slot}.shape[{d}]" if slot[0] in "bg" else \
            f"sh_{slot}[{d}]"
        reads = _emit_all(bprog, bwd.insts, {r for r in results if r is not None})
        exports = sorted(s for s in bprog.sym_reads if s[0] not in "bg")
        used = {a for a in reads if a[0] in "ie"}
        rets = []
        plan = []
        for j, r in enumerate(results):
            if r is None:
                rets.append("None")
                plan.append(None)
                continue
            if r[0] == "g":
                plan.append(-1001 - int(r[1:]))
            elif r in results[:j]:
                plan.append(-1 - results.index(r))
            else:
                plan.append(j)
            if r[0] in "ie":
                used.add(r)
            rets.append(r if r[0] in "bg" else f"{r}.copy()")
        region.ret_plan = tuple(plan)
        region.all_new = all(q is None or q >= 0 for q in plan)
        region.single_grad = len(region.grad_meta) == 1 and region.grad_meta[0][0] == 0
        tensor_slots = sorted(used, key=fprog.tensor_index)
        region.bwd_tensors = tuple(fprog.tensor_index(s) for s in tensor_slots)
        region.reads.update(region.bwd_tensors)
        region.version_checks = region.bwd_tensors
        region.keeps = bool(saved_slots or tensor_slots or exports)
        params = [f"g{k}" for k, _, _ in region.grad_meta] + saved_slots + \
            [f"sh_{s}" for s in exports] + tensor_slots
        region.backward = bprog.function("backward", params, f"({''.join(r + ', ' for r in rets)})")
        region.bwd_insts = tuple(bwd.insts)
        region.has_backward = True
    region.fprog = fprog
    region.f_reads = freads | set(exports)
    region.f_returns = f"({''.join(f'{s}, ' for s in value_slots)}), " \
        f"({''.join(f'{s}, ' for s in saved_slots)}{''.join(f'{s}.shape, ' for s in exports)})"
    region.f_loads = [s for s in (f"i{k}" if k < n_in else f"e{k - n_in}"
                                  for k in range(n_tensors))]
    region.forward = region.forward_program(())
    return region


def _emit_all(prog, insts, keep):
    """Emit `insts` into `prog`, in the fast forms :func:`.fast.plan` picks where it can;
    `keep`: the slots read after the program. Returns the slots the emitted code reads."""
    rules, skip = fast.plan(insts, keep)
    reads = set()
    for k, inst in enumerate(insts):
        if k in skip:
            continue
        rule = rules.get(k)
        if rule is None:
            emit(prog, inst)
            reads.update(a for a in inst.args if type(a) is str)
        else:
            reads.update(fast.emit_fast(prog, inst, rule))
    return reads


def _trace_backward(tracer, region, out_tensors, seq_start):
    """Run the VJP rules of the trace's nodes on placeholder gradients under a tracer.

    Returns the backward tracer and, per region tensor that gets a gradient (in
    ``region.grad_inputs`` order), the slot of its gradient or None."""
    inputs = list(tracer.inputs) + list(tracer.externals)
    grad_inputs = [k for k, t in enumerate(inputs) if t._rg]
    boundary = {}
    for j, k in enumerate(grad_inputs):
        node, nr = inputs[k]._edge()
        boundary.setdefault((id(node), nr), j)
    region.grad_inputs = tuple(grad_inputs)
    input_grads = [None] * len(grad_inputs)

    bt = Tracer(fullgraph=True, parent=tracer)
    grad_meta = []
    roots = []
    for k, s in enumerate(region.out_slots):
        if not region.out_rg[k]:
            continue
        t = out_tensors[s]
        g = _from_array(np.ones(t._data.shape, t._data.dtype))
        bt.add_grad(k, g)
        grad_meta.append((k, t._data.shape, t._data.dtype))
        roots.append((t._edge(), g))
    region.grad_meta = tuple(grad_meta)

    def internal(node):
        return type(node) is not AccumulateGrad and node._seq >= seq_start

    def reach(edge):
        """The grad_inputs positions the graph below `edge` reaches."""
        found = set()
        stack, seen = [edge], set()
        while stack:
            node, nr = stack.pop()
            if not internal(node):
                j = boundary.get((id(node), nr))
                if j is not None:
                    found.add(j)
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.extend(e for e in node._next if e is not None)
        return frozenset(found)

    region.out_reach = tuple(reach(t_edge) for t_edge, _ in roots)

    def to_input(node, nr, g):
        j = boundary.get((id(node), nr))
        if j is None:
            raise Unsupported("a gradient flows out of the region to a tensor it did not "
                              "take as an argument (a non-leaf tensor from a closure?)")
        input_grads[j] = g if input_grads[j] is None else input_grads[j] + g

    prev = _tls.grad_enabled
    _tls.grad_enabled = False
    try:
        with bt:
            deps = {}
            stack = []
            seen = set()
            for (node, _), _ in roots:
                if internal(node) and node not in seen:
                    seen.add(node)
                    stack.append(node)
            root_nodes = list(stack)
            while stack:
                node = stack.pop()
                for e in node._next:
                    if e is None or not internal(e[0]):
                        continue
                    m = e[0]
                    if m in deps:
                        deps[m] += 1
                    else:
                        deps[m] = 1
                        if m not in seen:
                            seen.add(m)
                            stack.append(m)
            buffers = {}
            for (node, nr), g in roots:
                if not internal(node):
                    to_input(node, nr, g)
                    continue
                buf = buffers.setdefault(node, [])
                while len(buf) <= nr:
                    buf.append(None)
                buf[nr] = g if buf[nr] is None else buf[nr] + g
            heap = [(-n._seq, id(n), n) for n in root_nodes if n not in deps]
            heapq.heapify(heap)
            while heap:
                node = heapq.heappop(heap)[2]
                gs = buffers.pop(node, None) or []
                op = node._op
                if op is None or (node._extra and _HOOK_KEYS.intersection(node._extra)):
                    raise Unsupported(f"the backward of {node.name()} (not an op of the "
                                      "registry, or a node with hooks)")
                if tracer.symbolic:
                    tracer.tag_extras(node)
                if any(g is not None for g in gs):
                    try:
                        gx = op.vjp(node, gs[0]) if op.n_out == 1 else node._apply(gs)
                        if type(gx) is not tuple or node._meta is not None:
                            gx = reduce_grads(node, gx)
                    except Unsupported as e:
                        raise Unsupported(f"{e} (in {node.name()})") from None
                else:
                    gx = ()
                for e, g in zip(node._next, gx):
                    if e is None or g is None:
                        continue
                    m, nr = e
                    if not internal(m):
                        to_input(m, nr, g)
                        continue
                    buf = buffers.setdefault(m, [])
                    while len(buf) <= nr:
                        buf.append(None)
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                for e in node._next:
                    if e is None or not internal(e[0]):
                        continue
                    m = e[0]
                    d = deps[m] - 1
                    if d:
                        deps[m] = d
                    else:
                        del deps[m]
                        heapq.heappush(heap, (-m._seq, id(m), m))
            results = [None if g is None else bt.slot_of(g) for g in input_grads]
    finally:
        _tls.grad_enabled = prev
    return bt, results
