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
