"""Real models' training steps, ndgrad eager and ndgrad.compile vs torch eager in one run.

The models are ``benchmarks/models.py``'s (issue 26): nanoGPT GPT at 2 and 4 layers, minGPT,
the MNIST CNN (Adadelta), the VAE (Adam), the LSTM and Transformer language models (clip,
hand-written SGD) and the LSTMCell sequence model (LBFGS, float64). A step is forward, loss,
zero_grad, backward, clip where the original clips, and the optimizer step. Both libraries
start from the same weights (torch's state dict copied into ndgrad), see the same data and
the same dropout draws (each batch re-seeds both generators), and run on one BLAS thread.

The compiled column is the same ndgrad step with the loss function (forward and loss)
under ``ndgrad.compile``; zero_grad, backward, clip and the optimizer step stay eager. Its
warm-up calls trace it; the column ``compiled`` says whether every call ran compiled (the
cache holds no eager entry: no graph break) or names the break.

Each repeat times ``--steps`` steps of torch, of ndgrad and of compiled ndgrad (the three
alternating, so they share the machine's load); the figure is the median ms per step over
the repeats; ratios are against torch eager. The losses of the three at every step of the
first repeat are printed, with the largest relative difference to torch.

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


def _engaged(compiled_fn):
    """'yes (n graphs)' when every signature the compiled loss function saw compiled, else
    the first graph break's reason."""
    entries = [e for es in compiled_fn.cache.values() for e in es]
    breaks = [b.reason for e in entries for b in e.breaks]
    if breaks or not entries:
        return "no: " + (breaks[0] if breaks else "never traced")
    return f"yes ({len(entries)} graph{'s' if len(entries) > 1 else ''})"


def bench(name, steps, repeats, warmup):
    steps = max(1, round(steps * STEP_SCALE.get(name, 1.0)))
    cases = {"torch": models.build(torch, name),
             "ndgrad": models.build(ndgrad, name),
             "compiled": models.build(ndgrad, name, compiled=True)}
    for side in ("ndgrad", "compiled"):
        models.copy_weights(cases["torch"].model, ndgrad, cases[side].model)
    for case in cases.values():
        _time_steps(case, 0, warmup)
    times = {side: [] for side in cases}
    first_losses = {}
    for r in range(repeats):
        start_batch = warmup + r * steps
        for side, case in cases.items():
            ms, losses = _time_steps(case, start_batch, steps)
            times[side].append(ms)
            first_losses.setdefault(side, losses)
    t_losses = first_losses["torch"]
    for side, losses in first_losses.items():
        line = f"  losses {side:<8} {' '.join(f'{v:.7g}' for v in losses)}"
        if side != "torch":
            rel = max(abs(a - b) / max(abs(a), 1e-30) for a, b in zip(t_losses, losses))
            line += f"  (max rel diff to torch {rel:.1e})"
        print(line)
    return ({side: statistics.median(v) for side, v in times.items()},
            _engaged(cases["compiled"].loss_fn))


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
        med, engaged = bench(name, args.steps, args.repeats, args.warmup)
        rows.append((name, med, engaged))
        t = med["torch"]
        print(f"  torch {t:.2f} ms/step  ndgrad {med['ndgrad']:.2f} ({med['ndgrad'] / t:.2f}x)"
              f"  compiled {med['compiled']:.2f} ({med['compiled'] / t:.2f}x)  "
              f"compiled: {engaged}", flush=True)
    print("\n| model | torch ms/step | ndgrad / torch | ndgrad.compile / torch | compiled |")
    print("|---|---|---|---|---|")
    for name, med, engaged in rows:
        t = med["torch"]
        print(f"| {name} | {t:.2f} | {med['ndgrad'] / t:.2f} | {med['compiled'] / t:.2f} "
              f"| {engaged} |")


if __name__ == "__main__":
    main()
