"""Real models' training steps, ndgrad vs torch eager in one run (ratio = ndgrad / torch).

The models are ``benchmarks/models.py``'s (issue 26): nanoGPT GPT at 2 and 4 layers, minGPT,
the MNIST CNN (Adadelta), the VAE (Adam), the LSTM and Transformer language models (clip,
hand-written SGD) and the LSTMCell sequence model (LBFGS, float64). A step is forward, loss,
zero_grad, backward, clip where the original clips, and the optimizer step. Both libraries
start from the same weights (torch's state dict copied into ndgrad), see the same data and
the same dropout draws (each batch re-seeds both generators), and run on one BLAS thread.

Each repeat times ``--steps`` steps of torch then the same steps of ndgrad (the two
alternating, so they share the machine's load); the figure is the median ms per step over
the repeats. The loss of both libraries at every step of the first repeat is printed, with
their largest relative difference.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_models.py [--models gpt2l,vae]
                                                             [--steps 5] [--repeats 5]
"""

import argparse
import os
import statistics
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))
sys.path.insert(0, _HERE)

import ndgrad  # noqa: E402
import torch  # noqa: E402

import models  # noqa: E402

# LBFGS runs up to 20 closures per step: fewer steps keep the run short.
STEP_SCALE = {"time_seq": 0.2}


def _time_steps(case, first_batch, steps):
    """ms per step of ``steps`` training steps and the losses they returned."""
    elapsed, losses = 0.0, []
    for i in range(first_batch, first_batch + steps):
        batch = case.make_batch(i)
        start = time.perf_counter()
        loss = case.train_step(batch)
        elapsed += time.perf_counter() - start
        losses.append(float(loss.item()))
    return 1e3 * elapsed / steps, losses


def bench(name, steps, repeats, warmup):
    steps = max(1, round(steps * STEP_SCALE.get(name, 1.0)))
    torch_case = models.build(torch, name)
    nd_case = models.build(ndgrad, name)
    models.copy_weights(torch_case.model, ndgrad, nd_case.model)
    _time_steps(torch_case, 0, warmup)
    _time_steps(nd_case, 0, warmup)
    times = {"torch": [], "ndgrad": []}
    first_losses = None
    for r in range(repeats):
        start_batch = warmup + r * steps
        t_ms, t_losses = _time_steps(torch_case, start_batch, steps)
        n_ms, n_losses = _time_steps(nd_case, start_batch, steps)
        times["torch"].append(t_ms)
        times["ndgrad"].append(n_ms)
        if first_losses is None:
            first_losses = (t_losses, n_losses)
    t_med = statistics.median(times["torch"])
    n_med = statistics.median(times["ndgrad"])
    t_losses, n_losses = first_losses
    rel = max(abs(a - b) / max(abs(a), 1e-30) for a, b in zip(t_losses, n_losses))
    print(f"  losses torch  {' '.join(f'{v:.7g}' for v in t_losses)}")
    print(f"  losses ndgrad {' '.join(f'{v:.7g}' for v in n_losses)}  (max rel diff {rel:.1e})")
    return t_med, n_med


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(models.MODELS),
                    help="comma-separated names from: " + ", ".join(models.MODELS))
    ap.add_argument("--steps", type=int, default=5, help="timed steps per repeat")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    ndgrad.set_num_threads(1)
    names = [n for n in args.models.split(",") if n]
    rows = []
    for name in names:
        print(f"{name}:", flush=True)
        t_med, n_med = bench(name, args.steps, args.repeats, args.warmup)
        rows.append((name, t_med, n_med))
        print(f"  torch {t_med:.2f} ms/step  ndgrad {n_med:.2f} ms/step  "
              f"ratio {n_med / t_med:.2f}", flush=True)
    print("\n| model | torch ms/step | ndgrad ms/step | ndgrad / torch |")
    print("|---|---|---|---|")
    for name, t_med, n_med in rows:
        print(f"| {name} | {t_med:.2f} | {n_med:.2f} | {n_med / t_med:.2f} |")


if __name__ == "__main__":
    main()
