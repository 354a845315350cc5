"""In-place random fills of ``Tensor`` (``uniform_``, ``normal_``, ``bernoulli_``,
``exponential_``, ``random_``, ``cauchy_``, ``log_normal_``, ``geometric_``), the out-of-place
samplers' recorded ops (``bernoulli``, ``Tensor.multinomial``; the ``poisson`` / ``binomial``
nodes whose draws ``distributions/_sampling.py`` computes) and ``write_inplace``, the
history-free in-place write that they and ``nn.init`` use.

The draws come from ``ndgrad._random`` (torch's CPU generator, which stays standalone: NumPy
arrays in, NumPy arrays out); this module turns them into in-place tensor ops. Invariants: a fill
checks the in-place rules before writing and bumps the version counter once; when the tensor
is part of a graph the fill is recorded like torch's (``UniformBackward0``, ... with a zero
gradient for the old value), otherwise it writes without history.
"""

import numpy as np

from .. import _random, _state
from .._state import random_rule
from .._tensor import Tensor
from .inplace import check_inplace
from .registry import primitive
from .inplace import apply_inplace

__all__ = ["bernoulli"]

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
    "ExponentialBackward0", "RandomBackward0", "RandomBackward1", "RandomBackward2",
    "CauchyBackward0", "LogNormalBackward0", "GeometricBackward0")}


def _fill_random(t, vals, node_name):
    if _tls.grad_enabled and (t._rg or (t._base is not None and t.requires_grad)):
        return apply_inplace(_FILL_OPS[node_name], t, params=vals.astype(t._data.dtype))
    return write_inplace(t, vals)


@random_rule("inplace")
def _uniform_(self, from_=0.0, to=1.0, *, generator=None):
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    dt = self._data.dtype
    if dt.kind == "c":  # torch fills the real view: re and im each uniform in [from, to)
        pairs = _gen(generator).uniform(self._data.shape + (2,), _real_part(dt), from_, to)
        vals = np.ascontiguousarray(pairs).view(dt).reshape(self._data.shape)
    else:
        vals = _gen(generator).uniform(self._data.shape, dt, from_, to)
    return _fill_random(self, vals, "UniformBackward0")


def _real_part(dt):
    return np.float32 if dt == np.complex64 else np.float64


@random_rule("inplace")
def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    dt = self._data.dtype
    if dt.kind == "c":
        # torch fills the real view (re, im interleaved), each part with half the variance:
        # normal(mean, std / sqrt(2)); the mean is added to both parts
        pairs = _gen(generator).normal(self._data.shape + (2,), _real_part(dt), mean,
                                       float(std) / np.sqrt(2.0))
        vals = np.ascontiguousarray(pairs).view(dt).reshape(self._data.shape)
    else:
        vals = _gen(generator).normal(self._data.shape, dt, mean, std)
    return _fill_random(self, vals, "NormalBackward0")


@random_rule("inplace")
def _bernoulli_(self, p=0.5, *, generator=None):
    pp = p._data if isinstance(p, Tensor) else p
    vals = _gen(generator).bernoulli(pp, self._data.shape, self._data.dtype)
    return _fill_random(self, vals, "BernoulliBackward1" if isinstance(p, Tensor)
                        else "BernoulliBackward2")


@random_rule("inplace")
def _exponential_(self, lambd=1.0, *, generator=None):
    vals = _gen(generator).exponential(self._data.shape, self._data.dtype, lambd)
    return _fill_random(self, vals, "ExponentialBackward0")


@random_rule("inplace")
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


def _check_float_fill(self, name, label):
    kind = self._data.dtype.kind
    if kind not in "f":
        what = {"i": "long int", "u": "unsigned char", "b": "bool", "c": "c10::complex<float>"}
        if kind == "c" and self._data.dtype == np.complex128:
            what["c"] = "c10::complex<double>"
        if kind == "i":
            what["i"] = {1: "signed char", 2: "short int", 4: "int", 8: "long int"}[
                self._data.dtype.itemsize]
        raise RuntimeError(f"{label} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {what[kind]}")


@random_rule("inplace")
def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    _check_float_fill(self, "cauchy_", "Cauchy")
    vals = _gen(generator).cauchy(self._data.shape, self._data.dtype, median, sigma)
    return _fill_random(self, vals, "CauchyBackward0")


@random_rule("inplace")
def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    if self._data.dtype.kind != "f":
        raise NotImplementedError(f"\"log_normal_cpu\" not implemented for "
                                  f"'{_type_name(self)}'")
    vals = _gen(generator).log_normal(self._data.shape, self._data.dtype, mean, std)
    return _fill_random(self, vals, "LogNormalBackward0")


@random_rule("inplace")
def _geometric_(self, p, *, generator=None):
    if self._data.dtype.kind in "bc":
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for "
                                  f"'{_type_name(self)}'")
    vals = _gen(generator).geometric(self._data.shape, self._data.dtype, p)
    return _fill_random(self, vals, "GeometricBackward0")


def _type_name(t):
    return t.type().split(".")[-1][:-len("Tensor")]


# Out-of-place samplers recorded as torch records them: bernoulli(input) and poisson(rate)
# have zero gradients; bernoulli(input, p) and binomial are recorded with a node that refuses
# to differentiate (torch's "NotImplemented" node).
def _sampled_op(name, node_name, n_in=1):
    if n_in == 1:
        return primitive(name, lambda x, vals: vals, node_name)
    return primitive(name, lambda x, y, vals: vals, node_name)


BERNOULLI = _sampled_op("bernoulli", "BernoulliBackward0")
BERNOULLI.def_vjp(lambda ctx, g: (g * 0,))
BERNOULLI_P = _sampled_op("bernoulli_p", "NotImplemented")
POISSON = _sampled_op("poisson", "PoissonBackward0")
POISSON.def_vjp(lambda ctx, g: (g * 0,))
BINOMIAL = _sampled_op("binomial", "NotImplemented", 2)


@BERNOULLI_P.def_vjp
def _(ctx, g):
    raise RuntimeError("derivative for aten::bernoulli is not implemented")


@BINOMIAL.def_vjp
def _(ctx, g):
    raise RuntimeError("derivative for aten::binomial is not implemented")


@random_rule("op")
def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 draws with probability `input` (or the float `p`), in input's dtype."""
    g = _gen(generator)
    if p is None:
        vals = g.bernoulli(input._data, input._data.shape, input._data.dtype)
        return BERNOULLI.call(input, params=vals)
    if isinstance(p, Tensor):
        raise TypeError("bernoulli() received an invalid combination of arguments - got "
                        "(Tensor, Tensor), but expected one of:\n"
                        " * (Tensor input, *, torch.Generator generator = None, Tensor out = "
                        "None)\n * (Tensor input, float p, *, torch.Generator generator = "
                        "None)\n")
    vals = g.bernoulli(float(p), input._data.shape, input._data.dtype)
    return BERNOULLI_P.call(input, params=vals)


@random_rule("op")
def _bernoulli_method(self, p=None, *, generator=None):
    if isinstance(p, Tensor):
        raise TypeError("bernoulli() received an invalid combination of arguments - got "
                        "(Tensor), but expected one of:\n"
                        " * (*, torch.Generator generator = None)\n"
                        " * (float p, *, torch.Generator generator = None)\n")
    return bernoulli(self, p, generator=generator)


@random_rule("op")
def _multinomial_method(self, num_samples, replacement=False, *, generator=None):
    return Tensor(_gen(generator).multinomial(self._data, num_samples, replacement))


# ============================================================================ bind
from .methods import bind  # noqa: E402

bind({"uniform_": _uniform_, "normal_": _normal_, "bernoulli_": _bernoulli_,
      "exponential_": _exponential_, "random_": _random_, "cauchy_": _cauchy_,
      "log_normal_": _log_normal_, "geometric_": _geometric_, "bernoulli": _bernoulli_method,
      "multinomial": _multinomial_method})
