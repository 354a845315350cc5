"""The autograd profiler: time, shapes, memory and FLOPs of every op and backward node.

``profile()`` records one event per primitive run in the forward pass (named as torch names
them, ``aten::mul``), one per backward node (``MulBackward0`` inside
``autograd::engine::evaluate_function: MulBackward0``, with the forward op's sequence number,
as torch links them), one per leaf gradient accumulation
(``torch::autograd::AccumulateGrad`` inside its ``evaluate_function``, with the aten op torch's
accumulation runs nested in it) and one per ``record_function`` block. Ops that a node runs
in backward nest under it. Results: ``function_events`` (an ``EventList``), ``key_averages()``,
``table()`` laid out like torch's, ``total_average()``, ``self_cpu_time_total`` and
``export_chrome_trace(path)`` (JSON for Perfetto / chrome://tracing).

Times are microseconds measured with ``time.perf_counter_ns``; they include the profiler's own
bookkeeping, as torch's do. Off, the profiler costs the dispatcher one global read per op.
Not recorded (unlike torch): ops inside ndgrad's composite functions are not separate events
(only primitives are). AccumulateGrad works on arrays: its nested aten event is named after
what it did (see `_Recorder.end_kernel`).
"""

import functools
import itertools
import json
import math
import os
import sys
import threading
import time
import warnings
import weakref
from collections import OrderedDict

from .. import _state
from .._ops.registry import special_hooks
from . import engine as _engine

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList", "FunctionEvent",
           "FunctionEventAvg", "aten_name", "Interval", "kineto_available"]


def kineto_available():
    """False: ndgrad's profiler records in Python, there is no Kineto backend (code that asks
    takes its non-Kineto path, as on a torch build without Kineto)."""
    return False

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# ndgrad primitive name -> torch's aten op name, where they differ.
_ATEN = {
    "sum_dim": "sum", "mean_dim": "mean", "max_dim": "max", "min_dim": "min",
    "prod_dim": "prod", "pow_tensor": "pow", "pow_rscalar": "pow", "div_trunc": "div",
    "squeeze_dim": "squeeze", "squeeze_dims": "squeeze", "fill": "fill_",
    "fill_tensor": "fill_", "zero": "zero_", "norm_sqrt": "sqrt",
}


_names_cache = {}


def aten_name(op):
    """torch's profiler name for a primitive (``aten::mul``), or ``aten::mul_`` in place."""
    # Inplace wrappers are made per call: key them by the op they wrap.
    key = (op.op, "_") if type(op).__name__ == "Inplace" else op
    name = _names_cache.get(key)
    if name is None:
        name = _names_cache[key] = _aten_name(op)
    return name


def _aten_name(op):
    inner = getattr(op, "op", None)
    if inner is not None and type(op).__name__ == "Inplace":
        name = _ATEN.get(inner.name, inner.name)
        return "aten::" + (name if name.endswith("_") else name + "_")
    name = getattr(op, "name", None) or getattr(op, "__name__", str(op))
    return "aten::" + _ATEN.get(name, name)


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_time_share(us, total):
    if total == 0:
        return "NaN"
    return f"{us * 100.0 / total:.2f}%"


def _format_memory(nbytes):
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} KB"
    return f"{nbytes} B"


class Interval:
    """``[start, end]`` in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start:.3f}, end={self.end:.3f})"


class _EventStats:
    """Properties shared by single events and averages."""

    __slots__ = ()

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)

    # CPU only: device columns are always empty.
    device_time_total = self_device_time_total = device_time = 0.0
    cuda_time_total = self_cuda_time_total = cuda_time = 0.0
    device_memory_usage = self_device_memory_usage = 0
    cuda_memory_usage = self_cuda_memory_usage = 0
    is_async = False
    is_remote = False
    is_legacy = True
    node_id = -1
    overload_name = ""
    use_device = None
    device_type = "CPU"
    scope = 0


class FunctionEvent(_EventStats):
    """One profiled call: an op, a backward node or a ``record_function`` block."""

    __slots__ = ("id", "name", "thread", "fwd_thread", "time_range", "input_shapes", "stack",
                 "sequence_nr", "flops", "kind", "cpu_children", "cpu_parent", "own_memory",
                 "count", "_caller", "node_id")

    def __init__(self, id, name, thread, start_us, end_us, fwd_thread=None, input_shapes=None,
                 stack=None, sequence_nr=-1, flops=0, kind="cpu_op", node_id=-1):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.thread = thread
        self.fwd_thread = fwd_thread if fwd_thread is not None else thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else ()
        self.sequence_nr = sequence_nr
        self.flops = flops
        self.kind = kind
        self.cpu_children = []
        self.cpu_parent = None
        self.own_memory = 0
        self.count = 1
        self._caller = None  # while open: the frame of the dispatcher call it times

    @property
    def key(self):
        return self.name

    @property
    def is_user_annotation(self):
        return self.kind == "user_annotation"

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_memory_usage(self):
        return self.own_memory + sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.own_memory

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"cpu_time={self.cpu_time_total_str} start_us={self.time_range.start:.3f} "
                f"end_us={self.time_range.end:.3f} sequence_nr={self.sequence_nr} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_EventStats):
    """Events with the same key, summed (``key_averages()`` rows and ``total_average()``)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.flops = 0
        self.input_shapes = None
        self.stack = None
        self.cpu_children = None
        self.cpu_parent = None
        self.is_user_annotation = False

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.cpu_parent = other.cpu_parent
            self.is_user_annotation = other.is_user_annotation
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str}"
                f" cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of events with torch's summaries."""

    def __init__(self, *args, profile_memory=False, with_flops=False, **kwargs):
        super().__init__(*args)
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def _populate_cpu_children(self):
        """Link each event to the innermost event of its thread whose interval contains it
        (torch's nesting rule; events that overlap without nesting are not linked)."""
        by_thread = OrderedDict()
        for e in self:
            by_thread.setdefault((e.thread, e.node_id), []).append(e)
        for events in by_thread.values():
            open_events = []
            for e in sorted(events, key=lambda e: (e.time_range.start, -e.time_range.end)):
                while open_events:
                    parent = open_events[-1]
                    if (e.time_range.start >= parent.time_range.end
                            or e.time_range.end > parent.time_range.end):
                        open_events.pop()
                        continue
                    parent.append_cpu_child(e)
                    e.set_cpu_parent(parent)
                    break
                open_events.append(e)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        groups = OrderedDict()
        for e in self:
            key = (e.key,)
            if group_by_input_shapes:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += (tuple(e.stack[:group_by_stack_n]),)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg()
            avg.add(e)
            if not group_by_input_shapes:
                avg.input_shapes = None
            avg.stack = list(e.stack[:group_by_stack_n]) if group_by_stack_n > 0 else []
        return EventList(groups.values(), profile_memory=self._profile_memory,
                         with_flops=self._with_flops)

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        total.input_shapes = None
        total.stack = None
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """A text table of the events, laid out like torch's ``EventList.table``."""
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width,
                            with_flops=self._with_flops, profile_memory=self._profile_memory,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        _export_chrome_trace(self, path)

    def supported_export_stacks_metrics(self):
        return ["self_cpu_time_total"]

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Flame-graph lines ``frame;frame;... value`` for events recorded with stacks."""
        with open(path, "w") as f:
            for e in self:
                if e.stack:
                    f.write(";".join(reversed(e.stack)) + " " +
                            str(int(getattr(e, metric))) + "\n")


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, with_flops=False,
                 profile_memory=False, top_level_events_only=False, time_unit=None):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        key = sort_by.replace("cuda", "device")
        events = sorted(events, key=lambda e: getattr(e, key), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    name_w = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_w = min(name_w, max_name_column_width)
    shapes_w = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_w = min(shapes_w, max_shapes_column_width)
    src_w = None
    if stacks:
        src_w = max(len(entry) for s in stacks for entry in s) + 4
        if max_src_column_width is not None:
            src_w = min(src_w, max_src_column_width)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_w] + [12] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_w)
        aligns.append(">")
    if stacks:
        headers.append("Source Location")
        widths.append(src_w)
        aligns.append("<")
    flops_scale = 1.0
    if with_flops:
        raw = [e.flops for e in events if e.flops > 0]
        if raw:
            units = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
            level = int(max(0, min(math.log10(min(raw)) / 3, len(units) - 1)))
            flops_scale = 10.0 ** (-3 * level)
            headers.append(f"Total {units[level]}")
            widths.append(12)
            aligns.append(">")
        else:
            with_flops = False
    row_format = "".join("{: " + a + str(w) + "}  " for a, w in zip(aligns, widths))
    sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def fmt_time(us, default):
        if time_unit == "s":
            return f"{us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{us:.3f}us"
        return default

    def trim(path):
        if len(path) > src_w:
            path = path[len(path) - src_w:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    total_self = sum(e.self_cpu_time_total for e in events)
    out = []
    if header is not None:
        out += ["=" * line_length, header]
    if top_level_events_only:
        out += ["=" * line_length, "This report only display top-level ops statistics"]
    out += [sep, row_format.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name,
               _format_time_share(e.self_cpu_time_total, total_self),
               fmt_time(e.self_cpu_time_total, e.self_cpu_time_total_str),
               _format_time_share(e.cpu_time_total, total_self),
               fmt_time(e.cpu_time_total, e.cpu_time_total_str),
               fmt_time(e.cpu_time, e.cpu_time_str)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_w])
        if stacks:
            row.append(trim(e.stack[0]) if e.stack else "")
        if with_flops:
            row.append("--" if e.flops <= 0 else f"{e.flops * flops_scale:8.3f}")
        out.append(row_format.format(*row))
        if stacks and e.stack:
            blank = [""] * (len(headers) - 1)
            for entry in e.stack[1:]:
                out.append(row_format.format(*(blank[:len(headers) - 1 - int(with_flops)] +
                                               [trim(entry)] + [""] * int(with_flops))))
            out.append(row_format.format(*([""] * len(headers))))
    out += [sep, f"Self CPU time total: {fmt_time(total_self, _format_time(total_self))}"]
    return "\n".join(out) + "\n"


def _export_chrome_trace(events, path):
    pid = os.getpid()
    trace = []
    for e in events:
        cat = "user_annotation" if e.kind == "user_annotation" else "cpu_op"
        # torch names the forward op and thread only for events linked to a node
        args = {"Sequence number": e.sequence_nr, "Fwd thread id": e.fwd_thread} \
            if e.sequence_nr >= 0 else {}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.flops:
            args["flops"] = e.flops
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        ts = e.time_range.start
        trace.append({"ph": "X", "cat": cat, "name": e.name, "pid": pid, "tid": e.thread,
                      "ts": ts, "dur": e.cpu_time_total, "args": args})
        # Flow arrows from a forward op to the backward node it produced (torch's "fwdbwd").
        if e.sequence_nr >= 0 and e.kind in ("cpu_op", "backward"):
            if e.kind == "cpu_op":
                trace.append({"ph": "s", "id": e.sequence_nr, "pid": pid, "tid": e.thread,
                              "ts": ts, "cat": "fwdbwd", "name": "fwdbwd"})
            elif not e.name.startswith("autograd::"):
                trace.append({"ph": "f", "id": e.sequence_nr, "pid": pid, "tid": e.thread,
                              "ts": ts, "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"})
    with open(path, "w") as f:
        json.dump({"traceEvents": trace, "displayTimeUnit": "ms",
                   "schemaVersion": 1}, f)


# ------------------------------------------------------------------ recording
_active = []  # profilers currently recording, in entry order


def _profiler_enabled():
    """True while a profiler records (torch.autograd._profiler_enabled)."""
    return bool(_active)


def _flops(op, args, outs):
    name = getattr(op, "name", None)
    try:
        if name in ("mul", "add"):
            return int(outs[0]._data.size)
        if name == "mm":
            (m, k), n = args[0]._data.shape, args[1]._data.shape[1]
            return 2 * m * k * n
        if name == "addmm":
            (m, k), n = args[1]._data.shape, args[2]._data.shape[1]
            return 2 * m * k * n
        if name == "bmm":
            b, m, k = args[0]._data.shape
            return 2 * b * m * k * args[1]._data.shape[2]
    except (AttributeError, IndexError, ValueError, TypeError):
        return 0
    return 0


def _stack_strings():
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    out = []
    while f is not None:
        out.append(f"{f.f_code.co_filename}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return out


_EVALUATE = "autograd::engine::evaluate_function: "
_ACCUMULATE_GRAD = "torch::autograd::AccumulateGrad"  # torch's event name for AccumulateGrad


class _Recorder:
    """Dispatcher and engine observer feeding one profile."""

    def __init__(self, prof):
        self.prof = prof
        self.local = threading.local()
        self.events = []
        self.t0 = time.perf_counter_ns()
        self.ids = itertools.count(1)
        self.finalizers = []

    def _now(self):
        return (time.perf_counter_ns() - self.t0) / 1e3

    def _stack(self):
        s = getattr(self.local, "stack", None)
        if s is None:
            s = self.local.stack = []
        return s

    def open(self, name, kind="cpu_op", sequence_nr=-1):
        # list.append and next() on a count are atomic under the GIL: no lock needed.
        ev = FunctionEvent(next(self.ids), name, threading.get_ident(), 0.0, -1.0,
                           sequence_nr=sequence_nr, kind=kind)
        stack = self._stack()
        if stack:
            ev.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(ev)
        stack.append(ev)
        self.events.append(ev)
        if self.prof.with_stack:
            ev.stack = _stack_strings()
        ev.time_range.start = self._now()
        return ev

    def close(self, ev):
        ev.time_range.end = self._now()
        ev._caller = None
        stack = self._stack()
        while stack:
            if stack.pop() is ev:
                break

    def _drop_failed(self, here):
        """Close op events whose call raised (the dispatcher never called `after`): their
        dispatcher frame is no longer on the Python stack. Only op events nested in op
        events are checked, which is rare, so the common path never walks the stack."""
        stack = self._stack()
        while stack and stack[-1]._caller is not None:
            top = stack[-1]
            f = here
            while f is not None and f is not top._caller:
                f = f.f_back
            if f is not None:
                return  # a genuine nested op (e.g. the clone inside an in-place op)
            stack.pop()
            top._caller = None
            top.time_range.end = max([top.time_range.start] +
                                     [c.time_range.end for c in top.cpu_children])

    # dispatcher protocol
    def before(self, op, args, params):
        f = sys._getframe(1)
        while f is not None and f.f_code.co_name.startswith("<"):  # list comprehensions
            f = f.f_back
        stack = self._stack()
        if stack and stack[-1]._caller is not None:
            self._drop_failed(f)
        ev = self.open(aten_name(op))
        ev._caller = f
        if self.prof.record_shapes:
            ev.input_shapes = [list(a._data.shape) if hasattr(a, "_data") else []
                               for a in args]
        return ev

    def after(self, op, args, params, outputs, ev):
        if ev is None:
            return
        self.close(ev)
        outs = outputs if type(outputs) is tuple else (outputs,)
        for o in outs:
            fn = getattr(o, "_grad_fn", None)
            if fn is not None:
                ev.sequence_nr = fn._seq
                break
        if self.prof.with_flops:
            inner = getattr(op, "op", op) if type(op).__name__ == "Inplace" else op
            ev.flops = _flops(inner, args, outs)
        if self.prof.profile_memory and type(op).__name__ != "Inplace":
            for o in outs:
                d = getattr(o, "_data", None)
                if d is not None and d.base is None and d.nbytes:
                    self._track(ev, d)

    def _freed(self, nbytes):
        stack = self._stack()
        if stack:
            stack[-1].own_memory -= nbytes
            return
        now = self._now()
        ev = FunctionEvent(next(self.ids), "[memory]", threading.get_ident(), now, now)
        ev.own_memory = -nbytes
        self.events.append(ev)

    # engine protocol
    def around(self, node, run):
        name = node.name()
        outer = self.open(_EVALUATE + name, "backward", node._seq)
        inner = self.open(name, "backward", node._seq)
        try:
            return run()
        finally:
            self.close(inner)
            self.close(outer)

    # AccumulateGrad (the engine runs it itself: see engine.ObservedBackward.leaf)
    def open_leaf(self, node):
        return self.open(_EVALUATE + _ACCUMULATE_GRAD, "backward")

    def open_accumulate(self, node, grad_shape):
        ev = self.open(_ACCUMULATE_GRAD, "backward")
        if self.prof.record_shapes:
            ev.input_shapes = [grad_shape]
        return ev

    def begin_kernel(self, var):
        return self._now(), var._grad is None, list(var._data.shape)

    def end_kernel(self, token, var, g):
        """Record, inside the AccumulateGrad event, the aten ops torch's accumulation runs
        where ndgrad works on arrays: ``aten::detach`` when the gradient is stolen,
        ``aten::new_empty_strided`` + ``aten::copy_`` when it is copied (the kernel's time
        split evenly between them), ``aten::add_`` when it is added in place. An out-of-place
        add (under create_graph) goes through the dispatcher and is recorded as such."""
        start, was_none, shape = token
        end = self._now()
        if was_none:
            fresh = var._grad._data is not g._data
            if not fresh and not _state.tls.grad_enabled:
                self._kernel_event("aten::detach", start, end, [shape], ("detach", [shape]))
            else:
                # torch copies under create_graph too (ndgrad keeps the gradient itself)
                mid = (start + end) / 2
                alloc = self._kernel_event("aten::new_empty_strided", start, mid,
                                           [shape] + [[]] * 6,
                                           ("aten::empty_strided", [[]] * 6))
                self._kernel_event("aten::copy_", mid, end, [shape, shape, []])
                if fresh and self.prof.profile_memory:
                    self._track(alloc.cpu_children[0], var._grad._data)
        elif not _state.tls.grad_enabled:
            self._kernel_event("aten::add_", start, end, [shape, shape, []])

    def _kernel_event(self, name, start, end, shapes, child=None):
        """A finished event inside the innermost open one (and `child`, (name, shapes),
        inside it over the same time)."""
        parent = self._stack()[-1]
        ev = FunctionEvent(next(self.ids), name, threading.get_ident(), start, end)
        ev.cpu_parent = parent
        parent.cpu_children.append(ev)
        if self.prof.record_shapes:
            ev.input_shapes = shapes
        self.events.append(ev)
        if child is not None:
            self._stack().append(ev)
            self._kernel_event(child[0], start, end, child[1])
            self._stack().pop()
        return ev

    def _track(self, ev, data):
        """Charge `ev` for `data`'s memory and its owner for the release (profile_memory)."""
        ev.own_memory += data.nbytes
        try:
            self.finalizers.append(weakref.finalize(data, self._freed, data.nbytes))
        except TypeError:
            pass

    def check(self, node, gx):
        return gx

    def on_error(self, node, exc):
        pass

    def stop(self):
        for f in self.finalizers:
            f.detach()
        self.finalizers = []


class profile:
    """Profile ndgrad ops and backward nodes in a block (torch.autograd.profiler.profile).

    Example::

        >>> with ndgrad.autograd.profiler.profile(record_shapes=True) as prof:
        ...     loss = (x @ w).tanh().sum()
        ...     loss.backward()
        >>> print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        if use_cuda or use_device not in (None, "cpu"):
            warnings.warn("ndgrad runs on the CPU only: device profiling (use_cuda/use_device) "
                          "is ignored.", UserWarning, stacklevel=2)
        self.use_cuda = use_cuda
        self.use_device = None
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.entered = False
        self._recorder = None
        self._function_events = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._function_events = None
        rec = self._recorder = _Recorder(self)
        special_hooks.append(rec)
        _engine.node_observers.append(rec)
        _engine.leaf_observers.append(rec)
        _active.append(rec)
        _state.enter_special()
        return self

    def __exit__(self, *exc):
        if not self.enabled or self._recorder is None:
            return
        rec = self._recorder
        _state.exit_special()
        _active.remove(rec)
        _engine.leaf_observers.remove(rec)
        _engine.node_observers.remove(rec)
        special_hooks.remove(rec)
        rec.stop()
        for ev in rec.events:
            # An op that raised never reached `after`: end its event with its last child.
            if ev.time_range.end < ev.time_range.start:
                ev.time_range.end = max([ev.time_range.start] +
                                        [c.time_range.end for c in ev.cpu_children])
        events = sorted(rec.events, key=lambda e: (e.time_range.start, -e.time_range.end))
        self._function_events = EventList(events, profile_memory=self.profile_memory,
                                          with_flops=self.with_flops)
        self.entered = False

    def _check_finish(self):
        if self._function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    @property
    def function_events(self):
        self._check_finish()
        return self._function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        self._check_finish()
        return self._function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                  group_by_overload_name)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        self._check_finish()
        return self._function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def total_average(self):
        self._check_finish()
        return self._function_events.total_average()

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self._function_events.self_cpu_time_total

    def export_chrome_trace(self, path):
        self._check_finish()
        self._function_events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        self._function_events.export_stacks(path, metric)

    def __str__(self):
        return self.table() if self._function_events is not None else repr(self)


class record_function:
    """Label a block (or a function, as a decorator) as one event in active profilers.

    Example::

        >>> with profile() as prof:
        ...     with record_function("attention"):
        ...         y = q @ k.t()
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._events = []

    def __enter__(self):
        self._events = [(rec, rec.open(self.name, "user_annotation")) for rec in list(_active)]
        return self

    def __exit__(self, *exc):
        for rec, ev in self._events:
            rec.close(ev)
        self._events = []

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapper


_said = set()


class _NoTool:
    _tool = ""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        if self.enabled and self._tool not in _said:
            _said.add(self._tool)
            warnings.warn(f"{type(self).__name__}: ndgrad has no {self._tool} support (it runs "
                          "on NumPy, on the CPU); this context manager records nothing. Use "
                          "ndgrad.autograd.profiler.profile instead.", UserWarning, stacklevel=2)
        return self

    def __exit__(self, *exc):
        return False


class emit_nvtx(_NoTool):
    """torch's NVTX range emitter; does nothing here (says so once)."""

    _tool = "NVTX (CUDA)"


class emit_itt(_NoTool):
    """torch's Intel ITT range emitter; does nothing here (says so once)."""

    _tool = "Intel ITT"
