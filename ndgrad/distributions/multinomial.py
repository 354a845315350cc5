"""``Multinomial(total_count=1, probs=None, logits=None)``: counts of ``total_count`` draws
from a ``Categorical`` (one total count for the whole batch, an int, as in torch). Sampling
draws ``total_count`` categorical samples (torch's stream) and counts them per category.
``log_prob`` does not check the counts sum to ``total_count``."""

import math
from typing import ClassVar

import ndgrad as torch

from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    arg_constraints: ClassVar[dict] = {"probs": constraints.simplex,
                                       "logits": constraints.real_vector}

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = torch.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        sample_shape = torch.Size(sample_shape)
        draws = self._categorical.sample(torch.Size((self.total_count,)) + sample_shape)
        # the draw index goes last, then each draw adds one to its category's count
        draws = draws.permute(*range(1, draws.dim()), 0)
        counts = draws.new(self._extended_shape(sample_shape)).zero_()
        counts.scatter_add_(-1, draws, torch.ones_like(draws))
        return counts.type_as(self.probs)

    def entropy(self):
        n = torch.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - torch.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = torch.exp(self._binomial.log_prob(support))
        term2 = (binomial_probs * torch.lgamma(support + 1)).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # 0 * log(0) counts as 0: a category of probability zero drawn zero times
        logits = logits.masked_fill((value == 0) & (logits == -math.inf), 0.0)
        log_factorial_n = torch.lgamma(value.sum(-1) + 1)
        log_factorial_xs = torch.lgamma(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
