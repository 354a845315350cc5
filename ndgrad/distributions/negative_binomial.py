"""``NegativeBinomial(total_count, probs=None, logits=None)``: successes before
``total_count`` failures (a real ``total_count`` is allowed). Sampling is the Gamma-Poisson
mixture torch uses (a gamma draw of rate ``exp(-logits)``, then ``torch.poisson``), so seeded
streams agree."""

from typing import ClassVar

import ndgrad as torch
from ndgrad.nn.functional import logsigmoid

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import (broadcast_all, expand_probs_or_logits, lazy_property,
                    logits_to_probs, probs_to_logits)

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    arg_constraints: ClassVar[dict] = {"total_count": constraints.greater_than_eq(0),
                                       "probs": constraints.half_open_interval(0.0, 1.0),
                                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = torch.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        expand_probs_or_logits(self, new, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / torch.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=torch.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=()):
        with torch.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return torch.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = (self.total_count * logsigmoid(-self.logits)
                            + value * logsigmoid(self.logits))
        log_normalization = (-torch.lgamma(self.total_count + value)
                             + torch.lgamma(1.0 + value) + torch.lgamma(self.total_count))
        # total_count + value == 0 is the point mass at 0: probability one
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
