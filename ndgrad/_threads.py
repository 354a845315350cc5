"""``set_num_threads`` / ``get_num_threads``: the size of the BLAS thread pool NumPy's matrix
products run on, through threadpoolctl when it is installed (the ``threads`` extra).

Without threadpoolctl the value is remembered and reported but the BLAS library keeps its own
setting (``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` at start-up decide it). The default,
as torch's, is the number of cores this process may use.
"""

import os

__all__ = ["set_num_threads", "get_num_threads"]

_requested = None
_limiter = None


def _default():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def set_num_threads(n):
    """Set the number of threads BLAS uses for matrix products (torch.set_num_threads)."""
    global _requested, _limiter
    if type(n) is not int:
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        _requested = n
        return
    if _limiter is None:
        _limiter = ThreadpoolController()
    _limiter.limit(limits=n, user_api="blas")
    _requested = n


def get_num_threads():
    """The number of BLAS threads (torch.get_num_threads)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return _requested if _requested is not None else _default()
    blas = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
    if blas:
        return max(blas)
    return _requested if _requested is not None else _default()
