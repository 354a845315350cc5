"""Peak memory: forward and backward through a chain of 50 elementwise ops (mul, add, tanh in
turn) on 4M-element float32 tensors, each library in a fresh process.

Reported: peak resident memory above the process's baseline after import and input creation
(so interpreter and library sizes cancel out), ndgrad next to torch, and their ratio (target:
within 10%, i.e. <= 1.10).

    python benchmarks/bench_memory.py [--n 4000000] [--ops 50]
"""

import argparse
import json
import resource
import subprocess
import sys

CHILD = r"""
import json, resource, sys
lib_name, n, n_ops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lib = __import__(lib_name)
if lib_name == "torch":
    lib.set_num_threads(1)
lib.manual_seed(0)
x = lib.randn(n, requires_grad=True)
w = lib.randn(n)
b = lib.randn(n)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
y = x
for i in range(n_ops):
    k = i % 3
    y = y * w if k == 0 else (y + b if k == 1 else lib.tanh(y))
y.sum().backward()
del y
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"base_kb": base, "peak_kb": peak, "grad_ok": bool(x.grad is not None)}))
"""


def measure(lib, n, n_ops):
    out = subprocess.run([sys.executable, "-c", CHILD, lib, str(n), str(n_ops)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4_000_000)
    ap.add_argument("--ops", type=int, default=50)
    args = ap.parse_args()
    res = {lib: measure(lib, args.n, args.ops) for lib in ("ndgrad", "torch")}
    mb = {lib: (r["peak_kb"] - r["base_kb"]) / 1024 for lib, r in res.items()}
    tensor_mb = args.n * 4 / 2**20
    print(f"peak memory above baseline ({args.ops} ops on {args.n} float32, "
          f"{tensor_mb:.0f} MB per tensor):")
    print(f"  ndgrad {mb['ndgrad']:.0f} MB   torch {mb['torch']:.0f} MB   "
          f"ratio {mb['ndgrad'] / mb['torch']:.2f}")
    _ = resource


if __name__ == "__main__":
    main()
