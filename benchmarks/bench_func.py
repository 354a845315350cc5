"""torch.func transforms, ndgrad vs torch.func in one process.

Cases (each the best of several runs; the ratio is ndgrad / torch):

- per_sample_grads: per-sample gradients of an MLP 64-64-10 (ReLU) with cross-entropy over a
  batch of 32, by ``vmap(grad(loss), in_dims=(None, 0, 0))`` over ``functional_call``;
- jacrev / jacfwd: the Jacobian of tanh(W x + b), W 128x128;
- hessian_64: the Hessian of a 64-dimensional scalar function (``func.hessian``).

    python benchmarks/bench_func.py [--repeats 10] [--rounds 2] [--only NAME]

On a loaded machine raise ``--rounds`` (alternating rounds of both libraries, each keeping
its best): the ratio of the two bests is what is steady.
"""

import argparse
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np
from bench_forward_ad import _check, best_of

import ndgrad


def _t(lib, a):
    return lib.tensor(np.asarray(a, dtype=np.float32))


def case_per_sample_grads(lib):
    rng = np.random.default_rng(0)
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(64, 64), lib.nn.ReLU(), lib.nn.Linear(64, 10))
    params = {k: v.detach() for k, v in model.named_parameters()}
    X = _t(lib, rng.standard_normal((32, 64)))
    Y = lib.tensor(rng.integers(0, 10, 32))
    F = lib.func

    def loss(p, x, y):
        out = F.functional_call(model, p, (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))
    per_sample = F.vmap(F.grad(loss), in_dims=(None, 0, 0))

    def run():
        g = per_sample(params, X, Y)
        return [g[k] for k in sorted(g)]
    return run


def _layer(lib):
    rng = np.random.default_rng(1)
    W = _t(lib, rng.standard_normal((128, 128)) / 12)
    b = _t(lib, rng.standard_normal(128))
    x = _t(lib, rng.standard_normal(128))
    return (lambda z: (W @ z + b).tanh()), x


def case_jacrev(lib):
    f, x = _layer(lib)
    jac = lib.func.jacrev(f)
    return lambda: jac(x)


def case_jacfwd(lib):
    f, x = _layer(lib)
    jac = lib.func.jacfwd(f)
    return lambda: jac(x)


def case_hessian_64(lib):
    rng = np.random.default_rng(3)
    A = _t(lib, rng.standard_normal((32, 64)) / 8)
    x = _t(lib, rng.standard_normal(64))

    def f(z):
        return (A @ z).tanh().pow(2).sum() + (z * z).sin().sum()
    hess = lib.func.hessian(f)
    return lambda: hess(x)


CASES = {"per_sample_grads": case_per_sample_grads, "jacrev": case_jacrev,
         "jacfwd": case_jacfwd, "hessian_64": case_hessian_64}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default=None)
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
        # Interleaved: each library's best over alternating rounds.
        for _ in range(args.rounds):
            for lib in ("ndgrad", "torch"):
                s = best_of(fns[lib], args.repeats)
                times[lib] = min(times.get(lib, s), s)
        print(f"{name:22s} {times['ndgrad'] * 1e3:10.3f} {times['torch'] * 1e3:10.3f} "
              f"{times['ndgrad'] / times['torch']:7.2f}")


if __name__ == "__main__":
    main()
