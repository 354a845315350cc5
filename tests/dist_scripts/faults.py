"""Fault behaviour on 2 ranks: ``faults.py MODE OUT``.

- ``mismatch``: collectives that differ in shape, op type or reduce op raise on both ranks;
  the group still works afterwards; destroying and re-initialising the group works; then a
  collective rank 1 never joins times out on rank 0 (1 s timeout).
- ``raise``: rank 1 raises after init while rank 0 waits in a collective (default timeout).
"""

import datetime
import json
import os
import sys
import time


def main(mode, folder):
    import ndgrad
    import ndgrad.distributed as dist

    rank_hint = int(os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=1 if rank_hint == 0
                                                                else 20))
    r = dist.get_rank()
    if mode == "raise":
        if r == 1:
            raise ValueError("rank 1 failed on purpose")
        dist.all_reduce(ndgrad.ones(3))
        return
    res = {}

    def attempt(name, fn):
        try:
            fn()
            res[name] = "no error"
        except Exception as e:  # noqa: BLE001 - the test inspects class and message
            res[name] = f"{type(e).__name__}: {e}"

    attempt("shape", lambda: dist.all_reduce(ndgrad.ones(3 + r)))
    attempt("optype", lambda: dist.all_reduce(ndgrad.ones(3)) if r == 0
            else dist.broadcast(ndgrad.ones(3), src=0))
    attempt("redop", lambda: dist.all_reduce(
        ndgrad.ones(3), op=dist.ReduceOp.SUM if r == 0 else dist.ReduceOp.MAX))
    t = ndgrad.full((2,), float(r + 1))
    dist.all_reduce(t)
    res["after_mismatch"] = t.tolist()
    dist.destroy_process_group()
    res["destroyed"] = dist.is_initialized()
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=1 if r == 0 else 20))
    t = ndgrad.full((2,), float(r + 1))
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    res["reinit"] = [dist.is_initialized(), dist.get_world_size(), t.tolist()]
    if r == 0:
        start = time.monotonic()
        attempt("timeout", lambda: dist.all_reduce(ndgrad.ones(3)))
        res["timeout_seconds"] = time.monotonic() - start
    with open(f"{folder}/rank{r}.json", "w") as fh:
        json.dump(res, fh)
    if r == 1:
        time.sleep(3)       # rank 0 times out meanwhile (its exit ends this rank)
    # Rank 0 left a collective pending: leave without MPI_Finalize.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
