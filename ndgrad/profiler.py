"""``torch.profiler``'s API on top of ``ndgrad.autograd.profiler``.

``profile(activities=..., schedule=..., on_trace_ready=..., record_shapes=..., ...)`` with
``start()/stop()/step()``, ``schedule(wait=, warmup=, active=, repeat=, skip_first=)``,
``tensorboard_trace_handler(dir)``, ``record_function``, ``ProfilerActivity`` and
``ProfilerAction``. Each recording window of a schedule is one
``autograd.profiler.profile`` run; ``key_averages()``, ``events()`` and
``export_chrome_trace()`` read the last finished window. Only the CPU is profiled: other
activities are accepted and ignored with a warning.
"""

import enum
import os
import socket
import time
import warnings

from .autograd import profiler as _autograd_profiler
from .autograd.profiler import record_function

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "record_function", "kineto_available"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    return {ProfilerActivity.CPU}


def kineto_available():
    return False


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action for each step: skip `skip_first`, then cycles of wait/warmup/active steps
    (`repeat` cycles, 0 = forever); the last active step of a cycle is RECORD_AND_SAVE."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      UserWarning, stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait and step >= 0:
            step += wait  # the first cycle starts without its wait
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        k = step % cycle
        if k < wait:
            return ProfilerAction.NONE
        if k < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if k < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _always_record(_step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An ``on_trace_ready`` callback writing ``<dir>/<worker>.<ms>.pt.trace.json``."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{int(time.time() * 1000)}.pt.trace.json"
        path = os.path.join(dir_name, name)
        if use_gzip:
            import gzip
            import shutil
            prof.export_chrome_trace(path)
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)
        else:
            prof.export_chrome_trace(path)
    return handler


class profile:
    """Profile a block or a training loop (``torch.profiler.profile``).

    Example::

        >>> from ndgrad.profiler import profile, schedule, ProfilerActivity
        >>> with profile(activities=[ProfilerActivity.CPU],
        ...              schedule=schedule(wait=1, warmup=1, active=2),
        ...              on_trace_ready=lambda p: print(p.key_averages().table())) as prof:
        ...     for batch in data:
        ...         train_step(batch)
        ...         prof.step()
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        acts = set(activities) if activities is not None else {ProfilerActivity.CPU}
        if use_cuda:
            acts.add(ProfilerActivity.CUDA)
        if acts - {ProfilerActivity.CPU}:
            warnings.warn("ndgrad profiles the CPU only; other activities are ignored.",
                          UserWarning, stacklevel=2)
        self.activities = acts
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self.profiler = None     # the last finished autograd.profiler.profile
        self._running = None     # the one recording now

    # -- recording windows
    def _begin(self):
        self._running = _autograd_profiler.profile(
            record_shapes=self.record_shapes, profile_memory=self.profile_memory,
            with_stack=self.with_stack, with_flops=self.with_flops)
        self._running.__enter__()

    def _end(self, save):
        run, self._running = self._running, None
        if run is None:
            return
        run.__exit__(None, None, None)
        self.profiler = run
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    @staticmethod
    def _records(action):
        return action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def start(self):
        self.current_action = self.schedule(self.step_num)
        if self._records(self.current_action):
            self._begin()

    def stop(self):
        if self._running is not None:
            self._end(save=True)
        self.current_action = ProfilerAction.NONE

    def step(self):
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if self._records(prev) and (prev is ProfilerAction.RECORD_AND_SAVE or
                                    not self._records(self.current_action)):
            self._end(save=True)
        if self._records(self.current_action) and self._running is None:
            self._begin()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    # -- results (of the last finished window)
    def _last(self):
        if self.profiler is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.profiler

    def events(self):
        return self._last().function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self._last().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        return self._last().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        return self._last().export_stacks(path, metric)
