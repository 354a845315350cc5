"""Data-parallel efficiency: the large MLP training step on N ranks against 1 rank.

The step (float32): forward of 784-1024-1024-10 with ReLU, cross-entropy, ``zero_grad``,
``backward``, SGD ``step``, at the same *global* batch (256 by default): 1 rank runs the plain
model on the whole batch; N ranks run DistributedDataParallel on ``256 / N`` samples each,
and their gradients (7.5 MB) are averaged by the bucketed all-reduce. One BLAS thread per rank
(``OPENBLAS_NUM_THREADS=1``, set for the ranks by this script).

    efficiency = T(1 rank) / (N * T(N ranks))         (1.0 = perfect strong scaling)

Each figure is the median over ``--steps`` timed steps (after warm-up) of the slowest rank;
the configurations alternate for ``--rounds`` rounds so they see the same machine load. The
``no_sync`` row is the N-rank step without communication: the gap to the DDP row is the cost
of the all-reduce that backward did not hide.

    python benchmarks/bench_distributed.py [--nproc 2] [--steps 20] [--rounds 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def worker(args):
    import importlib

    import numpy as np
    ndgrad = importlib.import_module(args.lib)      # "ndgrad", or "torch" for the reference
    dist = importlib.import_module(args.lib + ".distributed")
    DistributedDataParallel = importlib.import_module(
        args.lib + ".nn.parallel").DistributedDataParallel
    if args.lib == "torch":
        ndgrad.set_num_threads(1)

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    ndgrad.manual_seed(0)
    layers = [ndgrad.nn.Linear(784, 1024), ndgrad.nn.ReLU(), ndgrad.nn.Linear(1024, 1024),
              ndgrad.nn.ReLU(), ndgrad.nn.Linear(1024, 10)]
    model = ndgrad.nn.Sequential(*layers)
    net = DistributedDataParallel(model) if world > 1 else model
    opt = ndgrad.optim.SGD(model.parameters(), lr=0.01)
    local = args.global_batch // world
    rng = np.random.default_rng(rank)
    x = ndgrad.tensor(rng.standard_normal((local, 784)).astype(np.float32))
    y = ndgrad.tensor(rng.integers(0, 10, local))
    F = ndgrad.nn.functional

    def step():
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()

    results = {}
    modes = [("ddp", None)]
    if world > 1:
        modes.append(("no_sync", net.no_sync))
    for name, ctx in modes:
        times = []
        for i in range(args.warmup + args.steps):
            dist.barrier()
            t0 = time.perf_counter()
            if ctx is None:
                step()
            else:
                with ctx():
                    step()
            slowest = ndgrad.tensor([time.perf_counter() - t0], dtype=ndgrad.float64)
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            if i >= args.warmup:
                times.append(slowest.item())
        results[name] = statistics.median(times)
    if rank == 0:
        print(json.dumps(results), flush=True)
    dist.destroy_process_group()


def launch(n, args, lib="ndgrad"):
    from ndgrad.distributed.run import launch_env, mpiexec_command
    env = launch_env()
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=ROOT + os.pathsep + env.get("PYTHONPATH", ""))
    argv = [sys.executable, os.path.abspath(__file__), "--worker", "--lib", lib,
            "--steps", str(args.steps), "--warmup", str(args.warmup),
            "--global-batch", str(args.global_batch)]
    if lib == "ndgrad":
        out = subprocess.run(mpiexec_command(n, argv), env=env, capture_output=True, text=True,
                             timeout=600)
        if out.returncode:
            raise SystemExit(out.stdout + out.stderr)
        return json.loads(out.stdout.strip().splitlines()[-1])
    import socket                       # torch's ranks: torchrun's variables, gloo over TCP
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    procs = [subprocess.Popen(argv, env=dict(env, RANK=str(r), WORLD_SIZE=str(n),
                                             MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(n)]
    outs = [p.communicate(timeout=600) for p in procs]
    if any(p.returncode for p in procs):
        raise SystemExit("".join(o + e for o, e in outs))
    return json.loads(outs[0][0].strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--global-batch", type=int, default=256)
    p.add_argument("--torch", action="store_true",
                   help="also measure torch's DDP (gloo) on the same step, as a reference")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--lib", default="ndgrad", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args)
    libs = ["ndgrad"] + (["torch"] if args.torch else [])
    n = args.nproc
    times = {(lib, k): [] for lib in libs for k in ("one", "ddp", "no_sync")}
    for _ in range(args.rounds):
        for lib in libs:
            times[lib, "one"].append(launch(1, args, lib)["ddp"])
            r = launch(n, args, lib)
            times[lib, "ddp"].append(r["ddp"])
            times[lib, "no_sync"].append(r["no_sync"])
    print(f"large MLP step 784-1024-1024-10, global batch {args.global_batch}, float32, "
          f"1 BLAS thread per rank, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'configuration':42s} {'step ms':>9s} {'speedup':>8s} {'efficiency':>10s}")
    for lib in libs:
        t1, tn, tns = (statistics.median(times[lib, k]) for k in ("one", "ddp", "no_sync"))
        print(f"{f'{lib}: 1 rank (plain model)':42s} {1e3 * t1:9.2f} {1.0:8.2f} {1.0:10.2f}")
        print(f"{f'{lib}: {n} ranks, DDP':42s} {1e3 * tn:9.2f} {t1 / tn:8.2f} "
              f"{t1 / (n * tn):10.2f}")
        print(f"{f'{lib}: {n} ranks, no_sync (no all-reduce)':42s} {1e3 * tns:9.2f} "
              f"{t1 / tns:8.2f} {t1 / (n * tns):10.2f}")
        print(f"{lib}: all-reduce not hidden by backward: {1e3 * (tn - tns):.2f} ms per step")


if __name__ == "__main__":
    main()
