"""In-place random fills of ``Tensor`` (``uniform_``, ``normal_``, ``bernoulli_``,
``exponential_``, ``random_``) and ``write_inplace``, the history-free in-place write that they
and ``nn.init`` use.

The draws come from ``ndgrad._random`` (torch's CPU generator, which stays standalone: NumPy
arrays in, NumPy arrays out); this module turns them into in-place tensor ops. Invariants: a fill
checks the in-place rules before writing and bumps the version counter once; when the tensor
is part of a graph the fill is recorded like torch's (``UniformBackward0``, ... with a zero
gradient for the old value), otherwise it writes without history.
"""

import numpy as np

from .. import _random, _state
from .._tensor import Tensor
from .inplace import check_inplace
from .registry import primitive

__all__ = []

_tls = _state.tls


def write_inplace(t, values):
    """Write `values` (an array) into tensor `t` as an in-place op without history."""
    check_inplace(t)
    np.copyto(t._data, values, casting="unsafe")
    t._vc[0] += 1
    return t


def _gen(generator):
    return generator if generator is not None else _random.default_generator


def _random_fill_op(node_name):
    """An in-place random fill recorded like torch's (the old value gets a zero gradient)."""
    op = primitive("random_fill_" + node_name, lambda x, vals: vals, node_name)
    op.def_vjp(lambda ctx, g: (g * 0,))
    return op


_FILL_OPS = {name: _random_fill_op(name) for name in (
    "UniformBackward0", "NormalBackward0", "BernoulliBackward1", "BernoulliBackward2",
    "ExponentialBackward0", "RandomBackward0", "RandomBackward1", "RandomBackward2")}


def _fill_random(t, vals, node_name):
    if _tls.grad_enabled and (t._rg or (t._base is not None and t.requires_grad)):
        from .inplace import apply_inplace
        return apply_inplace(_FILL_OPS[node_name], t, params=vals.astype(t._data.dtype))
    return write_inplace(t, vals)


def _uniform_(self, from_=0.0, to=1.0, *, generator=None):
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    vals = _gen(generator).uniform(self._data.shape, self._data.dtype, from_, to)
    return _fill_random(self, vals, "UniformBackward0")


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    vals = _gen(generator).normal(self._data.shape, self._data.dtype, mean, std)
    return _fill_random(self, vals, "NormalBackward0")


def _bernoulli_(self, p=0.5, *, generator=None):
    pp = p._data if isinstance(p, Tensor) else p
    vals = _gen(generator).bernoulli(pp, self._data.shape, self._data.dtype)
    return _fill_random(self, vals, "BernoulliBackward1" if isinstance(p, Tensor)
                        else "BernoulliBackward2")


def _exponential_(self, lambd=1.0, *, generator=None):
    vals = _gen(generator).exponential(self._data.shape, self._data.dtype, lambd)
    return _fill_random(self, vals, "ExponentialBackward0")


def _random_(self, from_=0, to=None, *, generator=None):
    # torch's overloads: random_(from, to), random_(to), random_()
    node = "RandomBackward0" if to is not None else (
        "RandomBackward2" if from_ == 0 else "RandomBackward1")
    if to is None:
        if from_ == 0 and to is None:
            d = self._data.dtype
            if d.kind == "f":
                to = 2 ** {2: 11, 4: 24, 8: 53}[d.itemsize] + 1
            elif d.kind == "b":
                to = 2
            else:
                to = int(np.iinfo(d).max) + 1
        else:
            from_, to = 0, from_
    vals = _gen(generator).randint(from_, to, self._data.shape, np.int64)
    return _fill_random(self, vals.astype(self._data.dtype), node)


# ============================================================================ bind
from .methods import bind  # noqa: E402

bind({"uniform_": _uniform_, "normal_": _normal_, "bernoulli_": _bernoulli_,
      "exponential_": _exponential_, "random_": _random_})
