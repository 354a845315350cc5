"""ndgrad.compile against eager ndgrad, torch eager and torch.compile, in one process.

Two workloads:

- chain: the 600-op elementwise chain of ``bench_overhead.py`` (mul, add, tanh in turn on 16
  float32 elements), forward plus ``sum().backward()``, in microseconds per op;
- mlp: one training step of a 64-64-64-10 MLP (``nn.Sequential`` of Linear and ReLU, batch
  32, cross-entropy, SGD lr 0.01): ``zero_grad``, the loss (the compiled part), ``backward``,
  ``step``; in microseconds per step.

Each figure is the best of many interleaved runs; ratios are against torch eager (targets:
compiled chain <= 0.35, compiled MLP step <= 0.5). Compile time is the first call of each
compiled function (trace and code generation; for torch.compile, Dynamo and its backend).
torch.compile needs a C++ compiler for its default backend (inductor); when it fails, the
error is printed and the row reads "failed".

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_compile.py [--repeats 30] [--no-inductor]
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_compile.py --pieces [--steps 3000] [--alone]

``--no-inductor`` leaves torch.compile out (its first call takes tens of seconds on a loaded
machine; the other three rows are unchanged). ``--pieces`` times instead, step by step, the
MLP step of torch eager and ndgrad.compile interleaved (each step runs after the other
library's: caches are cold), and the pieces of ndgrad.compile's step (zero_grad, the
compiled call, ``loss.backward()``, ``opt.step()``): minimum and 10th percentile of
``--steps`` steps (``--alone``: ndgrad.compile's steps only, one after the other: warm caches).
"""

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ndgrad  # noqa: E402

N_OPS = 600


def chain_fn(lib):
    def chain(x, w, b):
        y = x
        for _ in range(N_OPS // 3):
            y = y * w
            y = y + b
            y = lib.tanh(y)
        return y.sum()
    return chain


def chain_inputs(lib):
    lib.manual_seed(0)
    return (lib.randn(16, requires_grad=True), lib.randn(16), lib.randn(16))


def mlp_setup(lib):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x = lib.randn(32, 64)
    y = lib.randint(0, 10, (32,))

    def loss_fn(x, y):
        return nn.functional.cross_entropy(model(x), y)
    return model, opt, x, y, loss_fn


def best_of(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def build(torch, name):
    """name -> (chain runner, mlp runner, compile times) for one configuration."""
    lib = ndgrad if name.startswith("ndgrad") else torch
    compiled = name.endswith("compiled")
    chain = chain_fn(lib)
    x, w, b = chain_inputs(lib)
    model, opt, mx, my, loss_fn = mlp_setup(lib)
    if compiled:
        chain = lib.compile(chain)
        loss_fn = lib.compile(loss_fn)

    def run_chain():
        x.grad = None
        chain(x, w, b).backward()

    def run_mlp():
        opt.zero_grad()
        loss_fn(mx, my).backward()
        opt.step()

    times = {}
    for label, fn in (("chain", run_chain), ("mlp", run_mlp)):
        t0 = time.perf_counter()
        fn()
        times[label] = time.perf_counter() - t0
    return run_chain, run_mlp, times


def pieces(torch, steps, alone):
    """--pieces: the MLP step step by step, torch eager and ndgrad.compile interleaved (or,
    `alone`, ndgrad.compile's steps only: warm caches)."""
    pc = time.perf_counter
    runs = {}
    for name, lib in (("torch eager", torch), ("ndgrad.compile", ndgrad)):
        model, opt, x, y, loss_fn = mlp_setup(lib)
        if lib is ndgrad:
            loss_fn = ndgrad.compile(loss_fn)
        runs[name] = (opt, x, y, loss_fn)
    times = {k: [] for k in ("torch eager", "ndgrad.compile", "  zero_grad", "  compiled call",
                             "  loss.backward()", "  opt.step()")}
    for i in range(steps + 20):
        t0 = t1 = 0.0
        if not alone:
            opt, x, y, loss_fn = runs["torch eager"]
            t0 = pc()
            opt.zero_grad()
            loss_fn(x, y).backward()
            opt.step()
            t1 = pc()
        opt, x, y, loss_fn = runs["ndgrad.compile"]
        t2 = pc()
        opt.zero_grad()
        t3 = pc()
        loss = loss_fn(x, y)
        t4 = pc()
        loss.backward()
        t5 = pc()
        opt.step()
        t6 = pc()
        del loss
        if i >= 20:  # (warm-up, and the traced first call)
            for acc, dt in zip(times.values(),
                               (t1 - t0, t6 - t2, t3 - t2, t4 - t3, t5 - t4, t6 - t5)):
                acc.append(1e6 * dt)
    how = "ndgrad.compile alone" if alone else "interleaved step by step"
    print(f"MLP step, {steps} steps, {how}: us (min / p10)")
    for k, v in times.items():
        v.sort()
        if not (alone and k == "torch eager"):
            print(f"{k:20}{v[0]:>9.1f}{v[len(v) // 10]:>9.1f}")
    if alone:
        return
    ratio = [times["ndgrad.compile"][q] / times["torch eager"][q] for q in (0, steps // 10)]
    print(f"{'ratio':20}{ratio[0]:>9.3f}{ratio[1]:>9.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--no-inductor", action="store_true", help="leave torch.compile out")
    ap.add_argument("--pieces", action="store_true", help="the MLP step, step by step")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--alone", action="store_true", help="--pieces without torch's steps")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    ndgrad.set_num_threads(1)
    if args.pieces:
        pieces(torch, args.steps, args.alone)
        return
    configs = {}
    errors = {}
    # ndgrad first: its compile time is then not measured on the heap torch.compile leaves
    for name in ("ndgrad eager", "ndgrad compiled", "torch eager", "torch compiled"):
        if name == "torch compiled" and args.no_inductor:
            errors[name] = "left out (--no-inductor)"
            continue
        try:
            configs[name] = build(torch, name)
        except Exception as e:  # noqa: BLE001 - torch.compile without a working toolchain
            errors[name] = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
    for run_chain, run_mlp, _ in configs.values():  # warm up
        for _ in range(3):
            run_chain()
            run_mlp()
    gc.collect()
    best = {name: [float("inf"), float("inf")] for name in configs}
    for _ in range(args.repeats):
        for name, (run_chain, run_mlp, _) in configs.items():
            best[name][0] = min(best[name][0], best_of(run_chain, 1))
            best[name][1] = min(best[name][1], best_of(run_mlp, 3))
    base = best.get("torch eager")
    print(f"ndgrad.compile benchmark ({N_OPS}-op chain: us/op fwd+bwd; MLP 64-64-64-10 batch "
          "32 SGD step: us/step)")
    print(f"{'':18}{'chain us/op':>12}{'ratio':>8}{'mlp us/step':>13}{'ratio':>8}"
          f"{'compile chain':>15}{'compile mlp':>13}")
    for name in ("torch eager", "torch compiled", "ndgrad eager", "ndgrad compiled"):
        if name in errors:
            print(f"{name:18}{errors[name]}")
            continue
        c, m = best[name]
        cu = c / N_OPS * 1e6
        mu = m * 1e6
        rc = cu / (base[0] / N_OPS * 1e6) if base else float("nan")
        rm = m / base[1] if base else float("nan")
        times = configs[name][2]
        comp = (f"{times['chain'] * 1e3:>12.1f}ms{times['mlp'] * 1e3:>11.1f}ms"
                if name.endswith("compiled") else "")
        print(f"{name:18}{cu:>12.2f}{rc:>8.2f}{mu:>13.1f}{rm:>8.2f}{comp}")


if __name__ == "__main__":
    main()
