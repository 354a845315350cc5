"""Random ops that take tensors, under vmap (torch's randomness batching rules).

What torch does, and so what these rules do, for ``randomness=``:

- ``"error"``: torch's "called random operation while in randomness error mode";
- ``"same"``: one draw shared by every sample. An out-of-place op with a batched tensor argument
  (``bernoulli(p)`` with a batched ``p``) raises torch's "same randomness with a batched tensor
  input" error; an in-place fill of a batched tensor draws one sample's numbers and writes them
  into every sample;
- ``"different"``: the op runs once on the values (unbatched arguments expanded over the
  batch), so every sample gets its own numbers; an in-place fill of an unbatched tensor raises
  torch's "different inplace randomness on an unbatched tensor" error, and one whose other
  argument is batched while self is not raises torch's "`other` ... has more elements than
  `self`" error.

Random factories (``rand``, ``randn``, ``randint``, ``*_like``, dropout, ``nn.init``) need no
rule: under ``"different"`` vmap runs the function one sample at a time
(transforms._vmap_call), and :class:`replay_draws` gives each sample its slice of one
whole-batch draw, so the numbers are torch's. Invariant: a rule raises before anything is
drawn or written.
"""

from .._tensor import Tensor
from . import batching
from .batching import BatchedTensor

__all__ = ["call"]


def _random_error():
    batching._random_error()


_SAME_BATCHED = ("Vmap does not currently support same randomness with a batched tensor "
                 "input. Please file an issue with functorch")
_DIFF_UNBATCHED = ("vmap: Cannot ask for different inplace randomness on an unbatched tensor. "
                   "This will appear like same randomness. If this is necessary for your usage, "
                   "please file an issue with functorch.")
_OTHER_BIGGER = ("vmap: inplace bernoulli(self, *extra_args) is not possible because there exists "
                 "a Tensor `other` in extra_args that has more elements than `self`. This "
                 "happened due to `other` being vmapped over but `self` not being vmapped over "
                 "in a vmap. Please try to use out-of-place operators instead of inplace "
                 "bernoulli. If said operator is being called inside the PyTorch framework, "
                 "please file a bug report instead.")


def _mode():
    modes = {r for _, _, r in batching._levels}
    if "error" in modes:
        _random_error()
    return "different" if "different" in modes else "same"


def _materialized(args, kwargs):
    return ([batching.materialize(a) for a in args],
            {k: batching.materialize(v) for k, v in kwargs.items()})


def call(kind, fn, args, kwargs):
    """Run random op `fn` (of `kind` "inplace" or "op") on `args` under the active levels."""
    mode = _mode()
    if kind == "inplace":
        return _inplace(fn, mode, args, kwargs)
    flat = list(args) + list(kwargs.values())
    if not any(isinstance(a, Tensor) for a in flat):
        # normal(mean, std, size) with numbers: a factory (see the module docstring)
        with batching.suspended():
            return fn(*args, **kwargs)
    batched = any(type(a) is BatchedTensor for a in flat)
    if mode == "same":
        if batched:
            raise RuntimeError(_SAME_BATCHED)
        with batching.suspended():
            return fn(*args, **kwargs)
    vals, kvals = _materialized(args, kwargs)
    with batching.suspended():
        if fn.__name__ in ("multinomial", "_multinomial_method"):
            x = vals[0]
            shape = x.shape
            vals[0] = x.reshape((-1, shape[-1]))
            out = fn(*vals, **kvals)
            out = out.reshape(tuple(shape[:-1]) + (out.shape[-1],))
        else:
            out = fn(*vals, **kvals)
    return batching.rewrap(out)


batching.random_call[0] = call


def _inplace(fn, mode, args, kwargs):
    self, rest = args[0], args[1:]
    self_b = type(self) is BatchedTensor
    other_b = any(type(a) is BatchedTensor for a in list(rest) + list(kwargs.values()))
    if mode == "same":
        if other_b:
            raise RuntimeError(_SAME_BATCHED)
        if not self_b:
            with batching.suspended():
                return fn(self, *rest, **kwargs)
        from .._creation import empty
        sample = empty(tuple(self.shape), dtype=self.dtype)
        value = batching.materialize(self)
        with batching.suspended():
            fn(sample, *rest, **kwargs)
            value.copy_(sample)
        return self
    if not self_b:
        raise RuntimeError(_OTHER_BIGGER if other_b else _DIFF_UNBATCHED)
    vals, kvals = _materialized((self,) + tuple(rest), kwargs)
    with batching.suspended():
        fn(*vals, **kvals)
    return self


# --------------------------------------------------------------------------- draws per sample
# Under randomness="different" vmap runs the function once per sample. torch runs it once and
# each random op draws for the whole batch at once; to give torch's numbers, the first sample's
# draws of a given shape are made for the whole batch (shape (B,) + shape) and every sample
# takes its slice of the i-th such draw. A sample whose i-th draw differs from the first's (a
# data-dependent function) draws on its own.
_SHAPED = {  # Generator method -> position of `shape` in its arguments
    "uniform": 0, "normal": 0, "randint": 2, "exponential": 0, "cauchy": 0, "log_normal": 0,
    "geometric": 0, "bernoulli": 1}


class replay_draws:
    """Context for vmap's per-sample loop over `size` samples; `sample(k)` before sample k."""

    def __init__(self, size):
        self.size, self.k, self.pos, self.log, self.saved = size, 0, 0, [], {}

    def sample(self, k):
        self.k, self.pos = k, 0

    def __enter__(self):
        from .._random import Generator
        for name, where in _SHAPED.items():
            orig = self.saved[name] = Generator.__dict__[name]
            setattr(Generator, name, self._draw(name, where, orig))
        return self

    def __exit__(self, *exc):
        from .._random import Generator
        for name, orig in self.saved.items():
            setattr(Generator, name, orig)

    def _draw(self, name, where, orig):
        def draw(gen, *args, **kwargs):
            if name == "bernoulli" and not isinstance(args[0], (int, float)):
                return orig(gen, *args, **kwargs)  # a tensor of probabilities: per sample
            shape = tuple(args[where])
            key = (name, id(gen), shape, args[:where] + args[where + 1:], tuple(kwargs.items()))
            pos, self.pos = self.pos, self.pos + 1
            if self.k == 0:
                full_args = args[:where] + ((self.size,) + shape,) + args[where + 1:]
                full = orig(gen, *full_args, **kwargs)
                self.log.append((key, full))
                return full[0]
            if pos < len(self.log) and self.log[pos][0] == key:
                return self.log[pos][1][self.k]
            return orig(gen, *args, **kwargs)
        return draw
