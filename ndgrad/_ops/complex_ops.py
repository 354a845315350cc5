"""Complex views: real and imag (views sharing memory with the complex tensor)."""

import numpy as np

from .registry import primitive

__all__ = ["real", "imag"]

REAL = primitive("real", lambda x, p: x.real, view=True, linear=True)
IMAG = primitive("imag", lambda x, p: x.imag, view=True, linear=True)


@REAL.def_vjp
def _(ctx, g):
    return (g.to(ctx._extra["dtype"]),)


@IMAG.def_vjp
def _(ctx, g):
    return (g.to(ctx._extra["dtype"]) * 1j,)


def _remember(out, x):
    if out._grad_fn is not None:
        out._grad_fn._extras()["dtype"] = __import__("ndgrad")._dtype.from_np(x._data.dtype)
    return out


def real(input):
    if input._data.dtype.kind != "c":
        return input
    return _remember(REAL.call(input), input)


def imag(input):
    return _remember(IMAG.call(input), input)


_ = np
