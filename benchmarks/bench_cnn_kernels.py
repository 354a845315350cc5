"""The small CNN step's kernels alone, ndgrad's NumPy kernels vs torch's aten ops, on the step's
shapes (bench_training.py's cnn_small: batch 32 of 1x28x28, conv 1->16 3x3, relu, max pool 2,
conv 16->32 3x3, relu, max pool 2), float32, one thread.

Each figure is the 10th percentile of ``--repeats`` calls timed by the thread's CPU time
(the machine this was written on is shared; the wall clock swings far more). Run it with
the heap pinned, or page faults (about 10 µs each on that VM) decide the figures:

    OPENBLAS_NUM_THREADS=1 MALLOC_MMAP_THRESHOLD_=1000000000 \\
        MALLOC_TRIM_THRESHOLD_=1000000000 python benchmarks/bench_cnn_kernels.py

The ndgrad side calls the forward kernels of the ops (``_ops/conv_pool.py``,
``_ops/pointwise.py``) directly: no Tensor, no graph.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ndgrad._ops import conv_pool, pointwise  # noqa: E402


def p10(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.thread_time()
        fn()
        times.append(time.thread_time() - t0)
    times.sort()
    return times[len(times) // 10] * 1e6


def cases(torch):
    rng = np.random.default_rng(0)

    def arr(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    x1, w1, b1, x2, w2, b2 = arr(32, 1, 28, 28), arr(16, 1, 3, 3), arr(16), \
        arr(32, 16, 13, 13), arr(32, 16, 3, 3), arr(32)
    g1, g2 = arr(32, 16, 26, 26), arr(32, 32, 11, 11)
    r1, r2 = np.maximum(g1, 0), np.maximum(g2, 0)
    conv = ((1, 1), (0, 0), (1, 1), False, (0, 0), 1)
    pool = ((2, 2), (2, 2), (0, 0), (1, 1), False)
    i1 = conv_pool._max_pool_fwd(r1, pool)[1]
    i2 = conv_pool._max_pool_fwd(r2, pool)[1]
    gp1, gp2 = arr(*i1.shape), arr(*i2.shape)
    T = torch.from_numpy
    A = torch.ops.aten
    ti1 = A.max_pool2d_with_indices(T(r1), [2, 2], [2, 2])[1]
    ti2 = A.max_pool2d_with_indices(T(r2), [2, 2], [2, 2])[1]
    cp = ([1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    return [
        ("conv 1->16 forward", lambda: conv_pool._conv_fwd(x1, w1, b1, conv),
         lambda: A.convolution(T(x1), T(w1), T(b1), *cp)),
        ("conv 16->32 forward", lambda: conv_pool._conv_fwd(x2, w2, b2, conv),
         lambda: A.convolution(T(x2), T(w2), T(b2), *cp)),
        ("conv 1->16 backward (w, b)",
         lambda: conv_pool._conv_bw_fwd(g1, x1, w1, conv + ((False, True, True),)),
         lambda: A.convolution_backward(T(g1), T(x1), T(w1), [16], *cp,
                                        [False, True, True])),
        ("conv 16->32 backward (x, w, b)",
         lambda: conv_pool._conv_bw_fwd(g2, x2, w2, conv + ((True, True, True),)),
         lambda: A.convolution_backward(T(g2), T(x2), T(w2), [32], *cp, [True, True, True])),
        ("max pool 32x16x26x26", lambda: conv_pool._max_pool_fwd(r1, pool),
         lambda: A.max_pool2d_with_indices(T(r1), [2, 2], [2, 2])),
        ("max pool 32x32x11x11", lambda: conv_pool._max_pool_fwd(r2, pool),
         lambda: A.max_pool2d_with_indices(T(r2), [2, 2], [2, 2])),
        ("max pool backward 26x26", lambda: conv_pool._max_pool_bw_fwd(
            gp1, i1, (r1.shape, True, 2)), lambda: A.max_pool2d_with_indices_backward(
            T(gp1), T(r1), [2, 2], [2, 2], [0, 0], [1, 1], False, ti1)),
        ("max pool backward 11x11", lambda: conv_pool._max_pool_bw_fwd(
            gp2, i2, (r2.shape, True, 2)), lambda: A.max_pool2d_with_indices_backward(
            T(gp2), T(r2), [2, 2], [2, 2], [0, 0], [1, 1], False, ti2)),
        ("relu 32x16x26x26", lambda: pointwise._relu_fwd(g1), lambda: torch.relu(T(g1))),
        ("relu 32x32x11x11", lambda: pointwise._relu_fwd(g2), lambda: torch.relu(T(g2))),
    ]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=60)
    args = p.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    print(f"{'kernel':<32} {'ndgrad us':>10} {'torch us':>9} {'ratio':>7}")
    for name, ours, theirs in cases(torch):
        a, b = p10(ours, args.repeats), p10(theirs, args.repeats)
        print(f"{name:<32} {a:10.0f} {b:9.0f} {a / b:7.2f}")


if __name__ == "__main__":
    main()
