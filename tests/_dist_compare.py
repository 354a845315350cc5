"""Differential harness for the distribution test files: a family table maps a name to
``(constructor(D, lib, params), params, value)``; each check builds the distribution in torch
and in ndgrad from the same NumPy parameters (float ones requiring grad) and compares the
result and its gradients with respect to every parameter.

``value`` is what ``log_prob`` / ``cdf`` is evaluated at (``None``: a seeded sample of the
distribution itself). Exceptions are compared by class and message."""

import numpy as np
import torch

import ndgrad

R = np.random.RandomState(2413)


def pos(*shape):
    return R.rand(*shape) + 0.5


def simplex(*shape):
    p = R.rand(*shape) + 0.1
    return p / p.sum(-1, keepdims=True)


def spd(n, batch=()):
    a = R.randn(*batch, n, n)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def npy(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def close(a, b, rtol=1e-7, atol=1e-9):
    if a is None or b is None:
        assert a is None and b is None
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


class Families:
    """A family table and the checks run on its entries."""

    def __init__(self, table, grad_free=()):
        self.table = table
        self.grad_free = set(grad_free)   # parameter names built without requires_grad

    def build(self, lib, name, requires_grad=True):
        ctor, params, _ = self.table[name]
        tens = {}
        for k, v in params.items():
            arr = np.asarray(v)
            rg = requires_grad and arr.dtype.kind == "f" and k not in self.grad_free
            tens[k] = lib.tensor(arr, requires_grad=rg)
        return ctor(lib.distributions, lib, tens), tens

    def value(self, lib, name):
        v = self.table[name][2]
        return None if v is None else lib.tensor(v)

    def run(self, lib, name, fn):
        d, tens = self.build(lib, name)
        try:
            out = fn(d, lib)
        except Exception as e:  # noqa: BLE001  (torch's own failures are compared too)
            # messages naming a class name its module: ndgrad.distributions.x for torch's
            return type(e).__name__, str(e).replace("ndgrad.", "torch.")
        if not isinstance(out, lib.Tensor):
            return out
        leaves = [t for t in tens.values() if t.requires_grad]
        if not out.requires_grad or not leaves:
            return npy(out), None
        w = lib.tensor(np.linspace(0.3, 1.7, out.numel()).reshape(tuple(out.shape)),
                       dtype=out.dtype)
        finite = lib.isfinite(out.detach())
        try:
            gs = lib.autograd.grad((lib.where(finite, out, 0.0) * w).sum(), leaves,
                                   allow_unused=True)
        except (NotImplementedError, RuntimeError) as e:   # e.g. igamma has no derivative
            return npy(out), str(e)
        return npy(out), [None if g is None else npy(g) for g in gs]

    def compare(self, name, fn, rtol=1e-7, atol=1e-9, grad_rtol=None):
        ours, theirs = self.run(ndgrad, name, fn), self.run(torch, name, fn)
        if not isinstance(theirs, tuple) or isinstance(theirs[0], str):
            assert ours == theirs
            return
        close(ours[0], theirs[0], rtol, atol)
        if theirs[1] is None or isinstance(theirs[1], str):
            assert ours[1] == theirs[1]
            return
        assert ours[1] is not None
        for a, b in zip(ours[1], theirs[1]):
            close(a, b, grad_rtol or rtol, atol)

    def shapes(self, name):
        def guarded(lib):
            try:
                return scenario(lib)
            except Exception as e:  # noqa: BLE001  (torch's own failures are compared too)
                return type(e).__name__, str(e)

        def scenario(lib):
            d, _ = self.build(lib, name, requires_grad=False)
            batch = tuple(d.batch_shape)
            e = d.expand((2,) + batch)
            z = d.expand((0,) + batch)
            return (tuple(d.batch_shape), tuple(d.event_shape), d.has_rsample,
                    d.has_enumerate_support, tuple(e.batch_shape), tuple(e.event_shape),
                    tuple(e.sample((3,)).shape), tuple(d.sample().shape),
                    tuple(e.log_prob(e.sample()).shape), type(e).__name__,
                    tuple(z.batch_shape), tuple(z.sample((2,)).shape))
        assert guarded(ndgrad) == guarded(torch)

    def stream(self, name, rtol=1e-12, atol=1e-12):
        def scenario(lib):
            d, _ = self.build(lib, name, requires_grad=False)
            lib.manual_seed(7)
            a = d.sample((3, 2))
            b = d.sample()
            return npy(a), npy(b), npy(lib.rand(2))   # the generator is left where torch's is
        for a, b in zip(scenario(ndgrad), scenario(torch)):
            close(a, b, rtol, atol)

    def rsample(self, name, rtol=1e-10, grad_rtol=1e-7):
        def fn(d, lib):
            lib.manual_seed(3)
            return d.rsample((2,))
        self.compare(name, fn, rtol, 1e-12, grad_rtol)
