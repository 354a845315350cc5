"""``torch.autograd.profiler_util``: the profiler's event classes and formatting helpers under
torch's module name. Everything lives in ``autograd.profiler``; this module only re-exports it
so that ``from torch.autograd.profiler_util import EventList`` works unchanged."""

from .profiler import (EventList, FunctionEvent, FunctionEventAvg, Interval,  # noqa: F401
                       _build_table, _format_memory, _format_time, _format_time_share)

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]
