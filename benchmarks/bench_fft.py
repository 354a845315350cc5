"""An FFT-heavy training step, ndgrad vs torch in one process, one BLAS/FFT thread.

The step is a spectral convolution (the core of a Fourier neural operator layer): ``rfft2``
of a batch of 32 float32 images of 64x64, a product with learnable complex weights
(64x33 complex64), ``irfft2`` back, a mean-squared loss, and backward (gradients for the
images and the weights). Each figure is the best of ``--repeats`` runs of ``--steps`` steps,
interleaving the libraries; the ratio is ndgrad / torch.

    python benchmarks/bench_fft.py [--repeats 7] [--steps 10] [--batch 32] [--size 64]
"""

import argparse
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ndgrad


def make_step(lib, batch, size):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((batch, size, size)).astype(np.float32),
                   requires_grad=True)
    w = lib.tensor((rng.standard_normal((size, size // 2 + 1)) +
                    1j * rng.standard_normal((size, size // 2 + 1))).astype(np.complex64),
                   requires_grad=True)
    target = lib.tensor(rng.standard_normal((batch, size, size)).astype(np.float32))

    def step():
        x.grad = None
        w.grad = None
        y = lib.fft.irfft2(lib.fft.rfft2(x) * w, s=(size, size))
        loss = ((y - target) ** 2).mean()
        loss.backward()
        return loss
    return step


def best_of(step, steps, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        best = min(best, (time.perf_counter() - t0) / steps)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--size", type=int, default=64)
    args = p.parse_args()
    libs = {"ndgrad": ndgrad}
    try:
        import torch
        torch.set_num_threads(1)
        libs["torch"] = torch
    except ImportError:
        pass
    steps = {name: make_step(lib, args.batch, args.size) for name, lib in libs.items()}
    losses = {name: float(s().item()) for name, s in steps.items()}
    if "torch" in losses:
        assert abs(losses["ndgrad"] - losses["torch"]) <= 1e-4 * abs(losses["torch"]), losses
    times = {name: float("inf") for name in steps}
    for _ in range(args.repeats):  # interleaved, best of all
        for name, s in steps.items():
            times[name] = min(times[name], best_of(s, args.steps, 1))
    print(f"spectral conv step (rfft2 * W -> irfft2 -> mse -> backward), "
          f"batch {args.batch} x {args.size}x{args.size} float32:")
    for name, t in times.items():
        print(f"  {name:7s} {t * 1e3:8.2f} ms/step")
    if "torch" in times:
        print(f"  ratio ndgrad/torch: {times['ndgrad'] / times['torch']:.2f}")


if __name__ == "__main__":
    main()
