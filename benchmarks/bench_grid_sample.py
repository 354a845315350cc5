"""grid_sample, ndgrad vs torch in one process (ratio = ndgrad time / torch time).

Input (8, 16, 32, 32) float32, grid (8, 24, 24, 2) with points slightly outside [-1, 1],
zeros padding, align_corners=False; per mode, the forward alone and the forward plus
``sum().backward()`` into the input and the grid. Each figure is the best of ``--repeats``
timings of two calls, the libraries alternating so they see the same machine load; one BLAS
thread on both sides.

    python benchmarks/bench_grid_sample.py [--repeats 5]
"""

import argparse
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ndgrad  # noqa: E402


def case(lib, x, grid, mode, backward):
    tx = lib.tensor(x).requires_grad_()
    tg = lib.tensor(grid).requires_grad_()

    def run():
        y = lib.nn.functional.grid_sample(tx, tg, mode=mode, padding_mode="zeros",
                                          align_corners=False)
        if backward:
            y.sum().backward()
            tx.grad = tg.grad = None
        return y
    return run


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
    grid = (rng.random((8, 24, 24, 2)) * 2.2 - 1.1).astype(np.float32)
    print(f"{'case':<22} {'torch ms':>9} {'ndgrad ms':>10} {'ratio':>7}")
    for mode in ("bilinear", "nearest", "bicubic"):
        for backward in (False, True):
            runs = {name: case(lib, x, grid, mode, backward)
                    for name, lib in (("torch", torch), ("ndgrad", ndgrad))}
            best = {name: float("inf") for name in runs}
            for run in runs.values():
                run()
            for _ in range(args.repeats):
                for name, run in runs.items():
                    t0 = time.perf_counter()
                    run()
                    run()
                    best[name] = min(best[name], (time.perf_counter() - t0) / 2)
            label = f"{mode} {'fwd+bwd' if backward else 'fwd'}"
            print(f"{label:<22} {best['torch'] * 1e3:9.3f} {best['ndgrad'] * 1e3:10.3f} "
                  f"{best['ndgrad'] / best['torch']:7.2f}")


if __name__ == "__main__":
    main()
