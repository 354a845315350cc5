"""ndgrad.cuda: torch.cuda as it behaves on a machine without CUDA, so scripts that probe for a
GPU run unchanged: ``is_available()`` is False, ``device_count()`` 0, seeding and
``empty_cache`` do nothing, memory counters read 0, and what needs a device raises torch's
``AssertionError("Torch not compiled with CUDA enabled")``.
"""

import contextlib
from collections import OrderedDict

from . import amp, nvtx  # noqa: F401

__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all",
           "seed", "seed_all", "empty_cache", "synchronize", "current_device", "set_device",
           "get_device_name", "get_device_capability", "get_device_properties",
           "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_cached", "max_memory_cached",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "mem_get_info",
           "memory_summary", "is_bf16_supported", "get_rng_state", "set_rng_state",
           "get_rng_state_all", "set_rng_state_all", "initial_seed", "init", "ipc_collect",
           "device", "device_of", "Stream", "Event", "current_stream", "default_stream",
           "stream", "amp", "nvtx", "get_arch_list", "get_gencode_flags", "has_half",
           "has_magma", "is_tf32_supported", "memory_stats", "memory_stats_as_nested_dict",
           "host_memory_stats", "caching_allocator_disabled", "current_blas_handle",
           "current_solver_handle", "get_per_process_memory_fraction",
           "set_per_process_memory_fraction", "get_sync_debug_mode", "set_sync_debug_mode",
           "reset_accumulated_memory_stats", "reset_max_memory_cached",
           "reset_peak_host_memory_stats"]

has_half = True
has_magma = False

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _no_cuda(*args, **kwargs):
    raise AssertionError(_NOT_COMPILED)


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def manual_seed(seed):
    """Seeds nothing: there is no CUDA generator (torch does the same without CUDA)."""


def manual_seed_all(seed):
    """Seeds nothing (no CUDA generator)."""


def seed():
    """Does nothing (no CUDA generator)."""


def seed_all():
    """Does nothing (no CUDA generator)."""


def empty_cache():
    """Nothing is cached."""


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


memory_cached = memory_reserved
max_memory_cached = max_memory_reserved


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


def is_tf32_supported():
    return False


def memory_stats(device=None):
    return OrderedDict()


def memory_stats_as_nested_dict(device=None):
    return {}


def host_memory_stats():
    return OrderedDict()


@contextlib.contextmanager
def caching_allocator_disabled():
    """There is no CUDA caching allocator: raises on entry, like the other CUDA calls."""
    _no_cuda()
    yield

# What needs a CUDA device fails as in torch's CPU build.
synchronize = current_device = set_device = get_device_name = get_device_capability = \
    get_device_properties = reset_peak_memory_stats = reset_max_memory_allocated = \
    mem_get_info = memory_summary = get_rng_state = set_rng_state = get_rng_state_all = \
    set_rng_state_all = initial_seed = init = ipc_collect = current_stream = \
    default_stream = current_blas_handle = current_solver_handle = \
    get_per_process_memory_fraction = set_per_process_memory_fraction = \
    get_sync_debug_mode = set_sync_debug_mode = reset_accumulated_memory_stats = \
    reset_max_memory_cached = reset_peak_host_memory_stats = _no_cuda


class device:
    """``torch.cuda.device(idx)``: a context manager that selects nothing here."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class device_of(device):
    def __init__(self, obj):
        super().__init__(-1)


class Stream:
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class Event:
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event")


class stream:
    """``torch.cuda.stream(None)`` is a no-op context, as in torch."""

    def __init__(self, stream):
        if stream is not None:
            _no_cuda()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
