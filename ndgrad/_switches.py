"""Process-wide switches torch code sets and reads at the top level: deterministic algorithms
(and their debug mode), the float32 matmul precision, the interop thread count, flush-denormal,
the build flags (``has_lapack``, ...) and the deprecated per-device autocast functions.

Invariants: every setter validates its argument with torch's error before changing anything;
the getters return what was set. None of them changes a result: every ndgrad kernel is
deterministic, NumPy's float32 matmul has one precision, NumPy has no inter-op pool, and
NumPy cannot set the CPU's flush-to-zero mode (``set_flush_denormal`` answers False, "not
supported", as torch does on CPUs without it).
"""

import warnings

from .amp import autocast_mode as _autocast

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision",
           "get_float32_matmul_precision", "set_num_interop_threads", "get_num_interop_threads",
           "set_flush_denormal", "has_lapack", "has_mkl", "has_openmp", "has_spectral",
           "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "is_autocast_cpu_enabled",
           "set_autocast_cpu_enabled", "get_autocast_gpu_dtype", "clear_autocast_cache",
           "autocast_increment_nesting", "autocast_decrement_nesting"]

has_lapack = True        # NumPy's LAPACK
has_mkl = False          # NumPy's BLAS is OpenBLAS (or what NumPy was built with), not MKL
has_openmp = False
has_spectral = True      # pocketfft

_deterministic = {"mode": False, "warn_only": False}
_matmul_precision = ["highest"]
_interop = {"threads": None}
_nesting = [0]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Record the switch (torch.are_deterministic_algorithms_enabled reads it back); every
    ndgrad kernel is deterministic already."""
    if type(mode) is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must "
                        f"be bool, not {type(mode).__name__}")
    if type(warn_only) is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _deterministic.update(mode=mode, warn_only=warn_only)


def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """0/'default': off; 1/'warn': on, warn only; 2/'error': on."""
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    elif type(debug_mode) is not int:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    _deterministic.update(mode=debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


def set_float32_matmul_precision(precision):
    """'highest', 'high' or 'medium'; another value warns and changes nothing (torch's
    behaviour). 'high'/'medium' also set ``backends.cuda.matmul.allow_tf32``, as in torch."""
    if precision not in ("highest", "high", "medium"):
        # (torch's text, its missing space included, so that a search finds it)
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    from .backends import cuda
    _matmul_precision[0] = precision
    cuda.matmul.allow_tf32 = precision != "highest"


def get_float32_matmul_precision():
    return _matmul_precision[0]


def set_num_interop_threads(n):
    """Settable once, as in torch (ndgrad runs no inter-op pool: the count is recorded)."""
    if type(n) is not int:
        raise RuntimeError(f"set_num_interop_threads expects an int, but got "
                           f"{type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop["threads"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _interop["threads"] = n


def get_num_interop_threads():
    from ._threads import get_num_threads
    n = _interop["threads"]
    return get_num_threads() if n is None else n


def set_flush_denormal(mode):
    """False: NumPy offers no way to set the CPU's flush-to-zero mode (torch returns False
    where the CPU lacks it), so denormals stay."""
    return False


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _autocast.get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _autocast.set_autocast_dtype("cpu", dtype)


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _autocast.is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _autocast.set_autocast_enabled("cpu", enabled)


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _autocast.get_autocast_dtype("cuda")


def clear_autocast_cache():
    """ndgrad's autocast keeps no cast cache: nothing to clear."""


def autocast_increment_nesting():
    _nesting[0] += 1
    return _nesting[0]


def autocast_decrement_nesting():
    _nesting[0] -= 1
    return _nesting[0]
