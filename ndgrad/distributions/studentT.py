"""``StudentT(df, loc=0, scale=1)``: reparameterised as ``loc + scale * X / sqrt(Z / df)``
with ``X ~ Normal(0, 1)`` drawn first and ``Z ~ Chi2(df)`` second (torch's order, so seeded
streams agree). Moments that do not exist are NaN (mean for ``df <= 1``, variance for
``df <= 1``) or infinite (variance for ``1 < df <= 2``)."""

import math
from typing import ClassVar

import ndgrad as torch

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    arg_constraints: ClassVar[dict] = {"df": constraints.positive, "loc": constraints.real,
                                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = torch.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc.masked_fill(self.df <= 1, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # the formula sees a safe df where it does not apply, and masked_fill (not where)
        # overwrites those entries, so their gradient is zero, not NaN, as in torch
        safe_df = self.df.masked_fill(self.df <= 2, 3.0)
        finite = self.scale.pow(2) * safe_df / (safe_df - 2)
        return finite.masked_fill(self.df <= 2, math.inf).masked_fill(self.df <= 1, math.nan)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype)
        Z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (X * torch.rsqrt(Z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                    + torch.lgamma(0.5 * self.df) - torch.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * torch.log1p(y ** 2.0 / self.df) - log_norm

    def entropy(self):
        half_df, half_df1 = 0.5 * self.df, 0.5 * (self.df + 1)
        lbeta = torch.lgamma(half_df) + math.lgamma(0.5) - torch.lgamma(half_df1)
        return (self.scale.log() + half_df1 * (torch.digamma(half_df1) - torch.digamma(half_df))
                + 0.5 * self.df.log() + lbeta)
