"""Differential tests (vs torch 2.13) for small parity gaps: complex random factories,
complex linspace/logspace, the real/imag setters, in-place writes to multi-output views and
profiler events for custom autograd Functions."""

import numpy as np
import pytest
import torch

import ndgrad

from _diff import raises_same, same


def test_rand_randn_complex_match_torch_stream():
    for f in ("rand", "randn"):
        for dt in ("complex64", "complex128"):
            for shape in ((3,), (5, 4), (17,), ()):
                def scen(lib):
                    lib.manual_seed(7)
                    a = getattr(lib, f)(shape, dtype=getattr(lib, dt))
                    like = getattr(lib, f + "_like")(lib.zeros(2, 9, dtype=getattr(lib, dt)),
                                                    requires_grad=True)
                    after = lib.rand(2)   # the stream continues at the same position
                    return a, like, like.requires_grad, str(like.dtype), after
                same(scen, rtol=0, atol=0)
    # variance of each part is 1/2 for randn
    ndgrad.manual_seed(0)
    z = ndgrad.randn(4000, dtype=ndgrad.complex128)._data
    assert abs(z.real.var() - 0.5) < 0.05 and abs(z.imag.var() - 0.5) < 0.05


def test_linspace_logspace_complex():
    ends = [(0, 1 + 1j), (-2.3 + 0.7j, 5.1 - 3.3j), (1j, 3), (-2.3, 5.1)]
    for steps in (0, 1, 2, 7, 16, 101):
        for s, e in ends:
            for dt in (None, "complex64", "complex128", "float32", "float64"):
                if dt in ("float32", "float64") and (isinstance(s, complex) or
                                                     isinstance(e, complex)):
                    continue
                # linspace is bit-exact (torch's fused multiply-add kernel), also for reals
                same(lambda lib: lib.linspace(s, e, steps, dtype=dt and getattr(lib, dt)),
                     rtol=0, atol=0)
                if dt is None or "complex" in dt:
                    tol = 1e-6 if dt in (None, "complex64") else 1e-14
                    same(lambda lib: lib.logspace(s, e, steps, base=2,
                                                  dtype=dt and getattr(lib, dt)), rtol=tol)
    same(lambda lib: lib.linspace(lib.tensor(1j), 2, 5, requires_grad=True), rtol=0, atol=0)
    same(lambda lib: lib.logspace(lib.tensor(0.5), 1 - 2j, 4), rtol=1e-6)
    raises_same(lambda lib: lib.linspace(0, 1j, 3, dtype=lib.float32))
    raises_same(lambda lib: lib.linspace(0, 1j, 3, dtype=lib.int64))
    raises_same(lambda lib: lib.logspace(0, 1j, 3, dtype=lib.float32))


def test_real_imag_setters_write_through():
    def plain(lib):
        x = lib.tensor([1 + 2j, 3 - 1j])
        x.imag = lib.tensor([5.0, 6.0])
        r1 = x.clone()
        x.imag = 7
        r2 = x.clone()
        x.real = lib.tensor([0.5, 0.25])
        f = lib.tensor([1.0, 2.0])
        f.real = lib.tensor([3.0, 4.0])
        return r1, r2, x, f
    same(plain, rtol=0, atol=0)

    def graph(lib):
        a = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        v = lib.tensor([5.0, 6.0], requires_grad=True)
        x = a * 1
        x.imag = v
        names = (type(x.grad_fn).__name__,
                 [type(n).__name__ for n, _ in x.grad_fn.next_functions])
        (x.abs() ** 2).sum().backward()
        return x, names, a.grad, v.grad
    same(graph)
    raises_same(lambda lib: setattr(lib.tensor([1.0, 2.0]), "imag", lib.tensor([1.0, 2.0])))
    raises_same(lambda lib: setattr(lib.tensor([1 + 2j], requires_grad=True), "imag",
                                    lib.tensor([1.0])))
    raises_same(lambda lib: setattr(lib.tensor([1 + 2j, 2j]), "imag", lib.tensor([1.0, 2, 3])))
