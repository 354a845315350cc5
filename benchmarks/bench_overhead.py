"""Per-op overhead: a chain of 600 elementwise ops (mul, add, tanh in turn) on 16-element
float32 tensors, forward plus ``sum().backward()``, in microseconds per op; and one op on an
``nn.Parameter`` (``p * 2.0``, forward, recorded), which must cost what it costs on a tensor.

ndgrad and torch run interleaved in one process (same machine load); each figure is the
best of many runs, and the ratio is ndgrad / torch (target <= 1.0).

    python benchmarks/bench_overhead.py [--repeats 40]
"""

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ndgrad  # noqa: E402


def chain(lib, x, w, b, n_ops):
    y = x
    for _ in range(n_ops // 3):
        y = y * w
        y = y + b
        y = lib.tanh(y)
    y.sum().backward()


def param_ops(lib, p, n_ops):
    for _ in range(n_ops):
        p * 2.0


def inputs(lib):
    lib.manual_seed(0)
    return (lib.randn(16, requires_grad=True), lib.randn(16), lib.randn(16))


def best_of(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=40)
    ap.add_argument("--ops", type=int, default=600)
    args = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    libs = {"ndgrad": ndgrad, "torch": torch}
    data = {name: inputs(lib) for name, lib in libs.items()}
    params = {name: lib.nn.Parameter(data[name][1].clone()) for name, lib in libs.items()}
    for name, lib in libs.items():  # warm up
        for _ in range(3):
            chain(lib, *data[name], args.ops)
            param_ops(lib, params[name], args.ops)
    gc.collect()
    best = {name: float("inf") for name in libs}
    best_p = dict(best)
    for _ in range(args.repeats):
        for name, lib in libs.items():
            x, w, b = data[name]
            x.grad = None
            t = best_of(lambda: chain(lib, x, w, b, args.ops), 1)
            best[name] = min(best[name], t)
            t = best_of(lambda: param_ops(lib, params[name], args.ops), 1)
            best_p[name] = min(best_p[name], t)
    for title, res in ((f"per-op overhead ({args.ops}-op chain, 16 float32, fwd+bwd):", best),
                       ("op on an nn.Parameter (p * 2.0, 16 float32, fwd):", best_p)):
        us = {name: res[name] / args.ops * 1e6 for name in libs}
        print(title)
        print(f"  ndgrad {us['ndgrad']:.2f} us/op   torch {us['torch']:.2f} us/op   "
              f"ratio {us['ndgrad'] / us['torch']:.2f}")

if __name__ == "__main__":
    main()
