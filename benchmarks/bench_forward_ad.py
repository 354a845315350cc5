"""Forward-mode AD and the functional API, ndgrad vs torch in one process.

Cases (each the best of several runs; the ratio is ndgrad / torch):

- jvp_chain: a JVP (forward_ad dual tensors) through 100 elementwise ops on 1000-element
  float32 tensors;
- jvp_chain_dual_consts: the same chain with tensor constants made dual with zero tangents
  (``make_dual(c, zeros_like(c))``), as code differentiating against "all inputs" does;
- jacobian_{reverse,vectorized,forward}: the Jacobian of tanh(W @ x + b), x in R^128, by
  reverse mode (one backward per row), vectorized (one batched backward) and forward mode
  (one JVP per column);
- hvp_mlp: a Hessian-vector product by double backward on a 2-layer tanh MLP with 9 610
  parameters (batch of 32);
- hessian_64: the full Hessian of a 64-dimensional scalar function
  (``autograd.functional.hessian``, vectorized).

    python benchmarks/bench_forward_ad.py [--repeats 10] [--only NAME] [--hvp-phases]

``--hvp-phases`` also splits the HVP into its phases (forward, first grad with
create_graph, dot product, second grad): the minimum of each over 300 runs, in µs.
"""

import argparse
import gc
import os
import time

# One BLAS thread, like torch.set_num_threads(1) below: a fair comparison, and no thread
# oversubscription noise on a loaded machine. Must be set before NumPy loads BLAS.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

import ndgrad


def _t(lib, a):
    return lib.tensor(np.asarray(a, dtype=np.float32))


# --------------------------------------------------------------------------- cases
def case_jvp_chain(lib):
    fw = lib.autograd.forward_ad
    rng = np.random.default_rng(0)
    x = _t(lib, rng.standard_normal(1000))
    v = _t(lib, rng.standard_normal(1000))

    def run():
        with fw.dual_level():
            y = fw.make_dual(x, v)
            for i in range(25):
                y = y.sin()
                y = y * 1.5
                y = y.tanh()
                y = y + 0.25
            return fw.unpack_dual(y).tangent
    return run


def case_jvp_chain_dual_consts(lib):
    fw = lib.autograd.forward_ad
    rng = np.random.default_rng(0)
    x = _t(lib, rng.standard_normal(1000))
    v = _t(lib, rng.standard_normal(1000))
    c1 = _t(lib, np.full(1000, 1.5))
    c2 = _t(lib, np.full(1000, 0.25))

    def run():
        with fw.dual_level():
            y = fw.make_dual(x, v)
            a = fw.make_dual(c1, lib.zeros_like(c1))
            b = fw.make_dual(c2, lib.zeros_like(c2))
            for i in range(25):
                y = y.sin()
                y = y * a
                y = y.tanh()
                y = y + b
            return fw.unpack_dual(y).tangent
    return run


def _jac_inputs(lib):
    rng = np.random.default_rng(1)
    W = _t(lib, rng.standard_normal((128, 128)) / 12)
    b = _t(lib, rng.standard_normal(128))
    x = _t(lib, rng.standard_normal(128))
    return W, b, x


def _jac_case(lib, **kw):
    W, b, x = _jac_inputs(lib)

    def f(z):
        return (W @ z + b).tanh()

    def run():
        return lib.autograd.functional.jacobian(f, x, **kw)
    return run


def case_jacobian_reverse(lib):
    return _jac_case(lib)


def case_jacobian_vectorized(lib):
    return _jac_case(lib, vectorize=True)


def case_jacobian_forward(lib):
    return _jac_case(lib, vectorize=True, strategy="forward-mode")


def _hvp_setup(lib):
    """Parameters (W1, b1, W2, b2), the vector v, and a batch (X, Y) of the HVP case."""
    rng = np.random.default_rng(2)
    sizes = [(64, 128), (128,), (128, 10), (10,)]
    params = [_t(lib, rng.standard_normal(s) * 0.1).requires_grad_() for s in sizes]
    vs = [_t(lib, rng.standard_normal(s)) for s in sizes]
    X = _t(lib, rng.standard_normal((32, 64)))
    Y = _t(lib, rng.standard_normal((32, 10)))
    return params, vs, X, Y


def case_hvp_mlp(lib):
    params, vs, X, Y = _hvp_setup(lib)

    def run():
        w1, b1, w2, b2 = params
        h = (X @ w1 + b1).tanh()
        out = (h @ w2 + b2).tanh()
        loss = ((out - Y) ** 2).mean()
        gs = lib.autograd.grad(loss, params, create_graph=True)
        dot = sum((g * v).sum() for g, v in zip(gs, vs))
        return lib.autograd.grad(dot, params)
    return run


def case_hessian_64(lib):
    rng = np.random.default_rng(3)
    A = _t(lib, rng.standard_normal((32, 64)) / 8)
    x = _t(lib, rng.standard_normal(64))

    def f(z):
        return (A @ z).tanh().pow(2).sum() + (z * z).sin().sum()

    def run():
        return lib.autograd.functional.hessian(f, x, vectorize=True)
    return run


def hvp_phases(lib, runs=300):
    """Minimum µs of each HVP phase over `runs` steady-state runs."""
    ps, vs, X, Y = _hvp_setup(lib)
    best = [float("inf")] * 4
    clock = time.perf_counter
    for _ in range(runs):
        t0 = clock()
        w1, b1, w2, b2 = ps
        out = ((X @ w1 + b1).tanh() @ w2 + b2).tanh()
        loss = ((out - Y) ** 2).mean()
        t1 = clock()
        gs = lib.autograd.grad(loss, ps, create_graph=True)
        t2 = clock()
        dot = sum((g * v).sum() for g, v in zip(gs, vs))
        t3 = clock()
        lib.autograd.grad(dot, ps)
        t4 = clock()
        for i, d in enumerate((t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            best[i] = min(best[i], d * 1e6)
    return best


CASES = {"jvp_chain": case_jvp_chain, "jvp_chain_dual_consts": case_jvp_chain_dual_consts,
         "jacobian_reverse": case_jacobian_reverse,
         "jacobian_vectorized": case_jacobian_vectorized,
         "jacobian_forward": case_jacobian_forward, "hvp_mlp": case_hvp_mlp,
         "hessian_64": case_hessian_64}


def best_of(fn, repeats, batch_seconds=0.02):
    """Seconds per call, timeit's way: the lowest mean over `repeats` batches of back-to-back
    calls (each batch about `batch_seconds` long, the collector run before it, not inside).
    Steady state on purpose: a gc.collect() before every single call walks all of torch's and
    ndgrad's Python objects and leaves both libraries with cold caches, which adds ~0.5 ms to
    each call and hides the difference being measured."""
    gc.collect()
    t0 = time.perf_counter()
    fn()
    number = max(1, int(batch_seconds / max(time.perf_counter() - t0, 1e-6)))
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def _check(a, b):
    """The two libraries compute the same thing (float32 tolerance)."""
    def flat(r):
        if isinstance(r, (tuple, list)):
            return [y for x in r for y in flat(x)]
        return [np.asarray(r.detach().numpy() if hasattr(r, "numpy") else r._data)]
    for x, y in zip(flat(a), flat(b)):
        np.testing.assert_allclose(x, y, rtol=2e-3, atol=2e-4)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--only", default=None)
    ap.add_argument("--hvp-phases", action="store_true")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    print(f"{'case':22s} {'ndgrad ms':>10s} {'torch ms':>10s} {'ratio':>7s}")
    for name, make in CASES.items():
        if args.only and args.only != name:
            continue
        fns = {"ndgrad": make(ndgrad), "torch": make(torch)}
        _check(fns["ndgrad"](), fns["torch"]())
        times = {}
        for lib in ("ndgrad", "torch", "ndgrad", "torch"):  # interleaved
            t = best_of(fns[lib], max(1, args.repeats // 2))
            times[lib] = min(times.get(lib, float("inf")), t)
        nd, th = times["ndgrad"] * 1e3, times["torch"] * 1e3
        print(f"{name:22s} {nd:10.3f} {th:10.3f} {nd / th:7.2f}")
    if args.hvp_phases:
        print(f"\nHVP phases, min µs: {'forward':>9s} {'grad 1':>9s} {'dot':>9s} {'grad 2':>9s}")
        res = {}
        for lib in (ndgrad, torch, ndgrad, torch):  # interleaved, best of both rounds
            r = hvp_phases(lib)
            prev = res.get(lib.__name__, [float("inf")] * 4)
            res[lib.__name__] = [min(a, b) for a, b in zip(prev, r)]
        for name, r in res.items():
            print(f"{name:19s} " + " ".join(f"{x:9.1f}" for x in r) + f"   total {sum(r):.1f}")


if __name__ == "__main__":
    main()
