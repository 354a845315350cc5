"""What each rank started by ``python -m ndgrad.distributed.run`` runs first: export torchrun's
environment variables from the MPI launcher's, run the script, and stop every rank when it
raises (it prints the traceback, records it for the launcher's summary, then aborts the MPI
job: no peer waits for a dead rank).
"""

import os
import runpy
import sys
import traceback

from ._mpi import mpi

_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")
_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")
_LOCAL_RANK_VARS = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK")
_LOCAL_SIZE_VARS = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")


def _first(names, default=None):
    for n in names:
        if n in os.environ:
            return int(os.environ[n])
    return default


def torchrun_environment():
    """RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, ... from the MPI launcher
    (asking MPI itself when the launcher exports none of the usual variables)."""
    rank, size = _first(_RANK_VARS), _first(_SIZE_VARS)
    if rank is None or size is None:
        cw = mpi().COMM_WORLD
        rank, size = cw.Get_rank(), cw.Get_size()
    local_size = _first(_LOCAL_SIZE_VARS, int(os.environ.get("NDGRAD_LOCAL_WORLD_SIZE", size)))
    local_rank = _first(_LOCAL_RANK_VARS, rank % local_size)
    return {"RANK": rank, "WORLD_SIZE": size, "LOCAL_RANK": local_rank,
            "LOCAL_WORLD_SIZE": local_size, "GROUP_RANK": rank // local_size,
            "ROLE_RANK": rank, "ROLE_WORLD_SIZE": size, "ROLE_NAME": "default",
            "GROUP_WORLD_SIZE": max(1, size // local_size), "TORCHELASTIC_RESTART_COUNT": 0,
            "TORCHELASTIC_MAX_RESTARTS": 0}


def _abort(code):
    mod = sys.modules.get("mpi4py.MPI")
    if mod is not None and mod.Is_initialized() and not mod.Is_finalized():
        mod.COMM_WORLD.Abort(code)
    os._exit(code)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    module = no_python = False
    while argv and argv[0] in ("--module", "--no-python"):
        module |= argv[0] == "--module"
        no_python |= argv[0] == "--no-python"
        argv.pop(0)
    env = torchrun_environment()
    os.environ.update({k: str(v) for k, v in env.items()})
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    if no_python:
        os.execvp(argv[0], argv)
    sys.argv = argv
    try:
        if module:
            runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code:
            sys.stdout.flush()
            _abort(code)
        raise
    except BaseException:
        sys.stdout.flush()
        report = f"[rank {env['RANK']}] failed:\n" + traceback.format_exc()
        sys.stderr.write(report)
        sys.stderr.flush()
        _record_failure(env["RANK"], report)
        _abort(1)


def _record_failure(rank, report):
    """Leave the failure for the launcher's summary (see ``run``): stderr alone may be lost."""
    folder = os.environ.get("NDGRAD_ERROR_DIR")
    if not folder:
        return
    try:
        with open(os.path.join(folder, f"rank{rank}.txt"), "w", encoding="utf-8") as f:
            f.write(report)
    except OSError:
        pass        # the launcher's folder is gone: stderr is all there is


if __name__ == "__main__":
    main()
