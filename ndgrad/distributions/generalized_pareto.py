"""``GeneralizedPareto(loc, scale, concentration)``: the peaks-over-threshold law; the
``concentration == 0`` limit (an exponential tail) is taken where ``isclose(c, 0)``.
Reparameterised by inverting the CDF of one ``torch.rand`` draw per value, as torch. As in
torch, ``log_prob`` / ``cdf`` compare the concentration with a float32 zero, so they raise
for float64 parameters ("Double did not match Float"). The support is
``[loc, loc - scale / c]`` for negative ``c`` and ``[loc, inf)`` otherwise."""

import math
from numbers import Number, Real
from typing import ClassVar

import ndgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive,
                                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, Number) for v in (loc, scale, concentration)):
            batch_shape = torch.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.loc.dtype)
        return self.icdf(u)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _safe_concentration(self):
        eq_zero = torch.isclose(self.concentration, torch.tensor(0.0))
        return eq_zero, torch.where(eq_zero, torch.ones_like(self.concentration),
                                    self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + torch.ones_like(z)
        where_nonzero = torch.where(y == 0, y, y * torch.log1p(safe_conc * z))
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - torch.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        where_nonzero = -torch.log1p(safe_conc * z) / safe_conc
        return torch.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        c = self.concentration
        eq_zero = torch.isclose(c, torch.zeros_like(c))
        safe_conc = torch.where(eq_zero, torch.ones_like(c), c)
        logu = torch.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * torch.expm1(-safe_conc * logu)
        where_zero = self.loc - self.scale * logu
        return torch.where(eq_zero, where_zero, where_nonzero)

    @property
    def mean(self):
        # masked_fill, not where, for the undefined entries: their gradient stays zero
        valid = self.concentration < 1
        safe_conc = torch.where(valid, self.concentration, 0.5)
        return (self.loc + self.scale / (1 - safe_conc)).masked_fill(~valid, math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = torch.where(valid, self.concentration, 0.25)
        result = self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return result.masked_fill(~valid, math.nan)

    def entropy(self):
        ans = torch.log(self.scale) + self.concentration + 1
        return torch.broadcast_to(ans, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = torch.where(self.concentration < 0, lower - self.scale / self.concentration,
                            math.inf)
        return constraints.interval(lower, upper)
