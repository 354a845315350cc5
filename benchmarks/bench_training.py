"""Training steps, ndgrad vs torch in one process (ratio = ndgrad time / torch time).

Cases (float32, same initial weights and data on both sides; a step is forward, loss,
``zero_grad``, ``backward`` and ``optimizer.step()``):

- mlp_large: batch 256, 784-1024-1024-10, ReLU, cross-entropy, SGD (target <= 1.15x)
- mlp_large_raw: the same network written with raw tensor ops (``x @ w.t() + b``, ``relu()``),
  the Linear layers only holding the parameters
- mlp_small: batch 32, 64-64-64-10, ReLU, cross-entropy, SGD (target <= 1.0x)
- cnn_small: batch 32 of 1x28x28, conv(1->16, 3x3)-ReLU-maxpool2-conv(16->32, 3x3)-ReLU-
  maxpool2-flatten-linear(->10), cross-entropy, SGD (target <= 2x)

Each figure is the median of ``--repeats`` timed steps after warm-up, the two libraries
alternating in blocks so they see the same machine load. ``--cpu-time`` times each step by
the thread's CPU time instead of the wall clock (on a machine loaded by other jobs it leaves
out the time the process waits for a core; both libraries run single-threaded with
``--threads 1`` and OPENBLAS_NUM_THREADS=1). Cases whose nn pieces are missing in ndgrad are
reported as skipped.

    python benchmarks/bench_training.py [--repeats 30] [--only mlp_small] [--threads N]
                                        [--cpu-time]
"""

import argparse
import gc
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ndgrad  # noqa: E402


def mlp(lib, sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(lib.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(lib.nn.ReLU())
    return lib.nn.Sequential(*layers)


def raw_mlp(lib, sizes):
    """`mlp`'s parameters (same order, same init) used by raw tensor ops instead of the
    layers: the linear layer written by hand."""
    class RawMLP(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = mlp(lib, sizes)

        def forward(self, x):
            lins = [m for m in self.layers if isinstance(m, lib.nn.Linear)]
            for i, lin in enumerate(lins):
                x = x @ lin.weight.t() + lin.bias
                if i < len(lins) - 1:
                    x = x.relu()
            return x
    return RawMLP()


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 5 * 5, 10))


CASES = {
    "mlp_large": (lambda lib: mlp(lib, [784, 1024, 1024, 10]), (256, 784)),
    "mlp_large_raw": (lambda lib: raw_mlp(lib, [784, 1024, 1024, 10]), (256, 784)),
    "mlp_small": (lambda lib: mlp(lib, [64, 64, 64, 10]), (32, 64)),
    "cnn_small": (cnn, (32, 1, 28, 28)),
}


def setup(name, lib, ref_state=None):
    build, xshape = CASES[name]
    model = build(lib)
    if ref_state is not None:
        with lib.no_grad():
            for p, arr in zip(model.parameters(), ref_state):
                p.copy_(lib.tensor(arr))
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(xshape).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, xshape[0]))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, step


def time_steps(step, n, clock=time.perf_counter):
    out = []
    for _ in range(n):
        t0 = clock()
        step()
        out.append(clock() - t0)
    return out


def run_case(name, torch, repeats, clock=time.perf_counter):
    t_model, t_step = setup(name, torch)
    ref = [p.detach().numpy().copy() for p in t_model.parameters()]
    n_model, n_step = setup(name, ndgrad, ref)
    # same weights, same data: the first losses agree
    lt, ln = t_step().item(), n_step().item()
    for _ in range(2):
        t_step()
        n_step()
    t_times, n_times = [], []
    block = max(1, repeats // 5)
    gc.collect()
    while len(t_times) < repeats:
        t_times += time_steps(t_step, block, clock)
        n_times += time_steps(n_step, block, clock)
    t_med, n_med = statistics.median(t_times), statistics.median(n_times)
    return lt, ln, t_med, n_med


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--only", default=None, choices=sorted(CASES))
    p.add_argument("--threads", type=int, default=None,
                   help="torch.set_num_threads (default: torch's own choice)")
    p.add_argument("--cpu-time", action="store_true",
                   help="time steps by the thread's CPU time (time.thread_time)")
    args = p.parse_args(argv)
    clock = time.thread_time if args.cpu_time else time.perf_counter
    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__} ({torch.get_num_threads()} threads), ndgrad "
          f"{ndgrad.__version__}, numpy {np.__version__}")
    print(f"{'case':<13} {'torch ms':>9} {'ndgrad ms':>10} {'ratio':>7}   "
          "first loss (torch/ndgrad)")
    for name in CASES:
        if args.only and name != args.only:
            continue
        try:
            lt, ln, t_med, n_med = run_case(name, torch, args.repeats, clock)
        except (AttributeError, NotImplementedError) as e:
            print(f"{name:<13} skipped: {e}")
            continue
        print(f"{name:<13} {t_med * 1e3:9.3f} {n_med * 1e3:10.3f} {n_med / t_med:7.2f}x   "
              f"{lt:.6f} / {ln:.6f}")


if __name__ == "__main__":
    main()
