"""``Geometric(probs=None, logits=None)``: failures before the first success, on
``{0, 1, ...}`` (``Tensor.geometric_`` counts trials, from 1). Sampling inverts the CDF of
one ``uniform_(tiny, 1)`` draw per value, as torch does, so seeded streams agree."""

from numbers import Number
from typing import ClassVar

import ndgrad as torch
from ndgrad.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .distribution import Distribution
from .utils import (broadcast_all, expand_probs_or_logits, lazy_property,
                    logits_to_probs, probs_to_logits)

__all__ = ["Geometric"]


class Geometric(Distribution):
    arg_constraints: ClassVar[dict] = {"probs": constraints.unit_interval,
                                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = torch.Size() if isinstance(given, Number) else given.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # probs = 0 passes unit_interval but has no geometric law
            valid = self.probs > 0
            if not valid.all():
                raise ValueError(
                    f"Expected parameter probs ({type(self.probs).__name__} of shape "
                    f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive "
                    f"but found invalid values:\n{self.probs.detach()[~valid]}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = torch.Size(batch_shape)
        expand_probs_or_logits(self, new, batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return torch.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.probs.dtype).tiny
        with torch.no_grad():
            u = self.probs.new(shape).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # probs == 1 puts all mass on 0: 0 * log(0) is taken as 0 there
        probs = probs.masked_fill((probs == 1) & (value == 0), 0.0)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs


