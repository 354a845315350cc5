"""``torch.utils.benchmark``'s ``Timer`` and ``Measurement``, the part the torch tutorials use:
``Timer(stmt, setup, globals=...).timeit(number)`` runs `stmt` `number` times after `setup` and
returns a ``Measurement`` (``times``: seconds per run, one entry per measurement; ``mean``,
``median``, ``raw_times``, ``number_per_run``) printing as torch's does. Timing is wall clock
(``time.perf_counter``); ndgrad runs one thread."""

import statistics
import time
import timeit as _timeit

__all__ = ["Measurement", "Timer"]


def _fmt(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            return f"{seconds / scale:.2f} {unit}"


class Measurement:
    """The result of :meth:`Timer.timeit`."""

    def __init__(self, number_per_run, raw_times, task_spec, label=None, sub_label=None,
                 description=None):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.label, self.sub_label, self.description = label, sub_label, description

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self):
        return statistics.mean(self.times)

    @property
    def median(self):
        return statistics.median(self.times)

    def __repr__(self):
        head = f"<torch.utils.benchmark.utils.common.Measurement object at {hex(id(self))}>"
        runs = self.number_per_run * len(self.raw_times)
        return (f"{head}\n{self.task_spec}\n  {_fmt(self.median)}\n"
                f"  {len(self.raw_times)} measurement, {runs} runs , 1 thread")


class Timer:
    """Time a statement (torch's ``Timer``; ``timer`` defaults to ``time.perf_counter``)."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=time.perf_counter,
                 globals=None, label=None, sub_label=None, description=None, env=None,
                 num_threads=1, language="python"):
        self._stmt, self._setup = stmt, setup
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer,
                                    globals=dict(globals or {}))
        self._label, self._sub_label, self._description = label, sub_label, description

    def timeit(self, number=1000000):
        """Run the statement `number` times (once more first, to warm up)."""
        self._timer.timeit(1)
        return Measurement(number, [self._timer.timeit(number)], self._stmt, self._label,
                           self._sub_label, self._description)
