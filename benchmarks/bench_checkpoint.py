"""Activation checkpointing: peak memory of a deep MLP's training step with and without it.

Each configuration runs in a fresh Python process (so nothing is shared or cached) that
builds the same MLP (``depth`` layers of ``width`` units, tanh, float32, fixed seed), runs
forward + backward once, and reports the peak of memory allocated by NumPy during the step
(``tracemalloc``, which NumPy reports its buffers to), the step time, and the gradients.
The parent checks the gradients of every configuration equal the plain run's.

    python benchmarks/bench_checkpoint.py [--depth 32] [--width 256] [--batch 2048]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time, tracemalloc
import numpy as np
sys.path.insert(0, {root!r})
import ndgrad
from ndgrad.utils.checkpoint import checkpoint, checkpoint_sequential

mode, depth, width, batch, segments, out = {args!r}
rng = np.random.default_rng(0)
ws = [ndgrad.tensor((rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32),
                    requires_grad=True) for _ in range(depth)]
# The input requires grad: the reentrant variant passes no gradient to parameters otherwise.
x = ndgrad.tensor(rng.standard_normal((batch, width)).astype(np.float32), requires_grad=True)
layers = [(lambda h, w=w: (h @ w).tanh()) for w in ws]

tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
t0 = time.perf_counter()
if mode == "plain":
    h = x
    for f in layers:
        h = f(h)
else:
    h = checkpoint_sequential(layers, segments, x, use_reentrant=(mode == "reentrant"))
loss = (h * h).mean()
loss.backward()
elapsed = time.perf_counter() - t0
peak = tracemalloc.get_traced_memory()[1] - base
tracemalloc.stop()
np.savez(out, *[w.grad.numpy() for w in ws])
print(json.dumps({{"peak": peak, "time": elapsed, "loss": loss.item()}}))
"""


def run(mode, args, out):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = CHILD.format(root=root, args=(mode, args.depth, args.width, args.batch,
                                         args.segments, out))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=32)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--segments", type=int, default=4)
    args = ap.parse_args()
    import numpy as np
    act_mb = args.batch * args.width * 4 / 2 ** 20
    print(f"MLP: {args.depth} x Linear({args.width}, {args.width}) + tanh, batch {args.batch}, "
          f"float32 (one activation = {act_mb:.2f} MB); checkpoint_sequential with "
          f"{args.segments} segments")
    print(f"{'configuration':<28}{'peak MB':>10}{'time s':>9}{'max |grad diff|':>18}")
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for mode in ("plain", "non-reentrant", "reentrant"):
            out = os.path.join(tmp, mode + ".npz")
            r = run(mode, args, out)
            grads = np.load(out)
            results[mode] = (r, [grads[k] for k in grads.files])
        ref = results["plain"][1]
        for mode, (r, grads) in results.items():
            diff = max(float(np.abs(a - b).max()) for a, b in zip(grads, ref))
            print(f"{mode:<28}{r['peak'] / 2 ** 20:>10.1f}{r['time']:>9.3f}{diff:>18.3g}")
        ratio = results["non-reentrant"][0]["peak"] / results["plain"][0]["peak"]
        print(f"peak memory with checkpointing (non-reentrant): {ratio:.0%} of plain")


if __name__ == "__main__":
    main()
