"""The MPI engine under ``ndgrad.distributed``: loading mpi4py, datatypes, reduction ops, and
waiting on a request with a deadline.

Invariants:
- mpi4py is imported here only, on first use (``import ndgrad`` never needs it).
- Every wait is bounded: :func:`wait` polls ``Test`` until the request completes or the
  group's timeout passes, then raises :class:`DistBackendError` (torch's collective timeout).
  A rank that died or never arrives therefore cannot hang the others.
"""

import importlib.util
import time

import numpy as np

__all__ = ["available", "mpi", "DistError", "DistBackendError", "wait", "wait_all"]


class DistError(RuntimeError):
    """torch.distributed.DistError: the base of the errors this package raises."""


class DistBackendError(DistError):
    """torch.distributed.DistBackendError: a failure of the communication backend (timeouts)."""


def available():
    """True when mpi4py can be imported (checked without importing it)."""
    try:
        return importlib.util.find_spec("mpi4py") is not None
    except (ImportError, ValueError):     # a blocked import (sys.modules["mpi4py"] = None)
        return False


_MPI = None


def mpi():
    """The ``mpi4py.MPI`` module, imported (and MPI initialised) on first call."""
    global _MPI
    if _MPI is None:
        if not available():
            raise RuntimeError("ndgrad.distributed needs mpi4py and an MPI runtime: "
                               "pip install mpi4py mpich (or ndgrad[distributed])")
        import mpi4py
        mpi4py.rc.threads = False       # one thread talks to MPI
        from mpi4py import MPI
        _MPI = MPI
    return _MPI


def wait(req, timeout, what, status=None):
    """Complete ``req`` (an MPI request) or raise after ``timeout`` seconds.

    MPI progresses a non-blocking operation only inside MPI calls, so the loop spins on
    ``Test`` as MPI's own blocking calls do; after a second a peer is late (not a transfer in
    progress) and the loop sleeps between tests.
    """
    if req.Test(status):
        return
    start = time.monotonic()
    deadline = start + timeout
    spins = 0
    while not req.Test(status):
        spins += 1
        if spins & 1023 == 0:
            now = time.monotonic()
            if now > deadline:
                raise DistBackendError(
                    f"[ndgrad.distributed] Timed out after {timeout:g} s waiting for {what} to "
                    "complete: a peer rank did not join the collective (it may have failed, "
                    "hung, or be running a different collective).")
            if now - start > 1.0:       # a late peer, not a transfer: stop burning the core
                time.sleep(0.0005)


def wait_all(reqs, timeout, what):
    for r in reqs:
        wait(r, timeout, what)


def mpi_op(op_name):
    M = mpi()
    return {"SUM": M.SUM, "AVG": M.SUM, "PRODUCT": M.PROD, "MIN": M.MIN, "MAX": M.MAX,
            "BAND": M.BAND, "BOR": M.BOR, "BXOR": M.BXOR}[op_name]


def bool_op(op_name):
    """Bool tensors reduce logically: SUM and MAX are 'any', PRODUCT and MIN are 'all'."""
    M = mpi()
    return {"SUM": M.LOR, "MAX": M.LOR, "BOR": M.LOR, "PRODUCT": M.LAND, "MIN": M.LAND,
            "BAND": M.LAND, "BXOR": M.LXOR}[op_name]


_UNTYPED = (np.float16,)


def wire(arr):
    """A contiguous array MPI can carry: bool travels as uint8, float16 as its bit pattern
    for data movement (reductions of float16 widen to float32 in the caller)."""
    arr = np.ascontiguousarray(arr)
    if arr.dtype == np.bool_:
        return arr.view(np.uint8)
    if arr.dtype.type in _UNTYPED:
        return arr.view(np.uint16)
    return arr
