"""ndgrad.mps: torch.mps as it behaves without Apple's Metal backend: nothing is available,
``manual_seed`` does nothing, and calls that need the backend raise torch's RuntimeError."""

__all__ = ["is_available", "device_count", "manual_seed", "seed", "synchronize", "empty_cache",
           "current_allocated_memory", "driver_allocated_memory", "get_rng_state",
           "set_rng_state", "set_per_process_memory_fraction"]


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Seeds nothing (no MPS generator), as in torch without MPS."""


def _missing(what):
    def call(*args, **kwargs):
        raise RuntimeError(f"Cannot execute {what}() without MPS backend.")
    call.__name__ = what
    return call


synchronize = _missing("deviceSynchronize")
empty_cache = _missing("emptyCache")
current_allocated_memory = _missing("getCurrentAllocatedMemory")
driver_allocated_memory = _missing("getDriverAllocatedMemory")
seed = get_rng_state = set_rng_state = _missing("getDefaultGenerator")
set_per_process_memory_fraction = _missing("setMemoryFraction")
