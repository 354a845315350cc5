"""ndgrad.compile with changing batch sizes (dynamic shapes) against eager ndgrad and torch
eager, in one process.

The workload is ``bench_compile.py``'s MLP training step (64-64-64-10, cross-entropy, SGD lr
0.01; the loss function compiled) with the batch size changing at every step, cycling through
24 sizes between 17 and 63. Rows: torch eager, ndgrad eager, ndgrad.compile (automatic
dynamic shapes: one entry for every batch size after two traces) and ndgrad.compile with
``dynamic=False`` (one entry per size up to the cache limit of 8, eager beyond). Each figure
is the mean step time over one cycle of sizes, best of ``--repeats`` interleaved cycles, after
a warm-up cycle; beside each compiled row, how many calls ran the Python body (traces, and
eager calls beyond the cache limit).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_compile_dynamic.py [--repeats 10] [--inductor]

``--inductor`` adds torch.compile (its default, automatic dynamic shapes, inductor backend;
its warm-up cycle compiles, about 15 s here).
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ndgrad  # noqa: E402

SIZES = [17, 50, 23, 61, 34, 45, 19, 58, 27, 40, 63, 21, 36, 53, 29, 47, 18, 56, 31, 42,
         25, 60, 38, 49]


def setup(lib, compiled=None):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    traces = [0]

    def loss_fn(x, y):
        traces[0] += 1
        return lib.nn.functional.cross_entropy(model(x), y)
    fn = loss_fn if compiled is None else lib.compile(loss_fn, **compiled)
    data = [(lib.randn(n, 64), lib.randint(0, 10, (n,))) for n in SIZES]

    def cycle():
        t0 = time.perf_counter()
        for x, y in data:
            opt.zero_grad()
            fn(x, y).backward()
            opt.step()
        return (time.perf_counter() - t0) / len(data)
    return cycle, traces


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--inductor", action="store_true", help="add torch.compile")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    ndgrad.set_num_threads(1)
    rows = [("torch eager", *setup(torch)), ("ndgrad eager", *setup(ndgrad)),
            ("ndgrad.compile", *setup(ndgrad, {})),
            ("ndgrad.compile(dynamic=False)", *setup(ndgrad, {"dynamic": False}))]
    if args.inductor:
        rows.insert(1, ("torch.compile", *setup(torch, {})))
    for _, cycle, _ in rows:
        cycle()  # warm-up: the compiled functions trace here
    best = {name: float("inf") for name, _, _ in rows}
    for _ in range(args.repeats):
        for name, cycle, _ in rows:
            best[name] = min(best[name], cycle())
    base = best["torch eager"]
    print(f"MLP step, batch size changing every step ({len(SIZES)} sizes, 17-63), "
          f"best of {args.repeats} cycles")
    print(f"{'':32s} {'us/step':>9s} {'vs torch':>9s} {'body runs':>10s}")
    for name, _, traces in rows:
        # (torch.compile replays the counter's increment as a side effect of every call)
        t = "" if name.endswith("eager") or name.startswith("torch") else str(traces[0])
        print(f"{name:32s} {best[name] * 1e6:9.1f} {best[name] / base:9.2f} {t:>10s}")


if __name__ == "__main__":
    main()
