"""``ndgrad.distributions``: torch's probability distributions (``torch.distributions``) as
composites of ndgrad's differentiable ops, with torch's API, validation and numbers.

Each family lives in its own module; ``kl`` holds ``kl_divergence`` and its registry,
``transforms`` the bijections used by ``TransformedDistribution``."""

from . import constraints, transforms  # noqa: F401
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical, OneHotCategorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .poisson import Poisson
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution",
           "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
           "Independent", "Laplace", "LogNormal", "LowRankMultivariateNormal",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "Poisson", "StudentT",
           "TransformedDistribution", "Uniform", "kl_divergence", "register_kl"]
__all__.extend(transforms.__all__)
