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
    import numpy as np

    import ndgrad
    import ndgrad.distributed as dist
    from ndgrad.nn.parallel import DistributedDataParallel

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
            dt = np.array([time.perf_counter() - t0])
            slowest = ndgrad.tensor(dt)
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            if i >= args.warmup:
                times.append(slowest.item())
        results[name] = statistics.median(times)
    if rank == 0:
        print(json.dumps(results), flush=True)
    dist.destroy_process_group()


def launch(n, args):
    from ndgrad.distributed.run import launch_env, mpiexec_command
    env = launch_env()
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=ROOT + os.pathsep + env.get("PYTHONPATH", ""))
    cmd = mpiexec_command(n, [sys.executable, os.path.abspath(__file__), "--worker",
                              "--steps", str(args.steps), "--warmup", str(args.warmup),
                              "--global-batch", str(args.global_batch)])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise SystemExit(out.stdout + out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--global-batch", type=int, default=256)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args)
    one, many, nosync = [], [], []
    for _ in range(args.rounds):
        one.append(launch(1, args)["ddp"])
        r = launch(args.nproc, args)
        many.append(r["ddp"])
        nosync.append(r["no_sync"])
    t1, tn, tns = (statistics.median(v) for v in (one, many, nosync))
    n = args.nproc
    print(f"large MLP step 784-1024-1024-10, global batch {args.global_batch}, float32, "
          f"1 BLAS thread per rank, {os.cpu_count()} cores")
    print(f"{'configuration':34s} {'step ms':>9s} {'speedup':>8s} {'efficiency':>10s}")
    print(f"{'1 rank (plain model)':34s} {1e3 * t1:9.2f} {1.0:8.2f} {1.0:10.2f}")
    print(f"{f'{n} ranks, DDP':34s} {1e3 * tn:9.2f} {t1 / tn:8.2f} {t1 / (n * tn):10.2f}")
    print(f"{f'{n} ranks, no_sync (no all-reduce)':34s} {1e3 * tns:9.2f} {t1 / tns:8.2f} "
          f"{t1 / (n * tns):10.2f}")
    print(f"all-reduce not hidden by backward: {1e3 * (tn - tns):.2f} ms per step")


if __name__ == "__main__":
    main()
