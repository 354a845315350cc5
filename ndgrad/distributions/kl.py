"""``kl_divergence(p, q)`` and ``register_kl``: closed-form KL divergences looked up by the
pair of distribution types. The most specific registered pair (by the classes' MRO) wins;
lookups are cached per pair of concrete types and the cache is cleared on registration."""

import math

import ndgrad as torch
from ndgrad.nn.functional import softplus

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical, OneHotCategorical
from .continuous_bernoulli import ContinuousBernoulli
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _lowrank_logdet,
    _lowrank_mahalanobis,
)
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _sum_rightmost, batch_mahalanobis, euler_constant

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}
_KL_MEMOIZE = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as the KL divergence of the pair of types."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


def _dispatch_kl(type_p, type_q):
    matches = [(type_p.__mro__.index(p), type_q.__mro__.index(q), p, q)
               for p, q in _KL_REGISTRY
               if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    best = min(matches, key=lambda m: (m[0], m[1]))
    return _KL_REGISTRY[best[2], best[3]]


def kl_divergence(p, q):
    """KL(p || q), batched over the (broadcast) batch shapes."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and "
            f"q type {q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(tensor):
    return torch.full_like(tensor, math.inf)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    # Bregman divergence of the log normaliser, in the natural parameters
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot                             be computed "
                                  "using Bregman divergences")
    p_nparams = [v.detach().requires_grad_() for v in p._natural_params]
    q_nparams = q._natural_params
    lg_normal = p._log_normalizer(*p_nparams)
    gradients = torch.autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result = result - _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1[q.probs == 0] = math.inf
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2[q.probs == 1] = math.inf
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * torch.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * torch.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * torch.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = math.inf
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * torch.log(p.rate / q.rate)
    t2 = torch.lgamma(q.concentration) - torch.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * torch.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = torch.exp(ct2 + (1 + ct1).lgamma() - ct3)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * torch.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


def _check_mvn_event_shapes(p, q, kind):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {kind} with different event shapes "
                         "cannot be computed")


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    _check_mvn_event_shapes(p, q, "Multivariate Normals")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = (Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    batch = torch.broadcast_shapes(Lq.shape[:-2], Lp.shape[:-2])
    n = p.event_shape[0]
    term2 = torch.linalg.solve_triangular(Lq.expand(batch + (n, n)), Lp.expand(batch + (n, n)),
                                          upper=False).pow(2).sum((-2, -1))
    term3 = batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmvn_lowrankmvn(p, q):
    _check_mvn_event_shapes(p, q, "Low Rank Multivariate Normals")
    Wq, Dq = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    Wp, Dp = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term1 = (_lowrank_logdet(Wq, Dq, q._capacitance_tril)
             - _lowrank_logdet(Wp, Dp, p._capacitance_tril))
    term3 = _lowrank_mahalanobis(Wq, Dq, q.loc - p.loc, q._capacitance_tril)
    # trace(Sigma_q^-1 Sigma_p) by the Woodbury identity
    qWt_qDinv = Wq.mT / Dq.unsqueeze(-2)
    A = torch.linalg.solve_triangular(q._capacitance_tril, qWt_qDinv, upper=False)
    term21 = (Dp / Dq).sum(-1)
    term22 = (Wp.pow(2) / Dq.unsqueeze(-1)).sum((-2, -1))
    term23 = (A * Dp.sqrt().unsqueeze(-2)).pow(2).sum((-2, -1))
    term24 = torch.matmul(A, Wp).pow(2).sum((-2, -1))
    term2 = term21 + term22 - term23 - term24
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (torch.log(p.rate) - torch.log(q.rate)) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    result[(q.low > p.low) | (q.high < p.high)] = math.inf
    return result


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    extra_event_dim = len(p.event_shape) - len(p.base_dist.event_shape)
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra_event_dim)


# ---- pairs of different families
@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    # -H(p) - E_p[log q] with E[x] = 1/rate_p, E[log x] = -euler_gamma - log(rate_p)
    log_rate = p.rate.log()
    e_log_x = -euler_constant - log_rate
    e_log_q = (torch.xlogy(q.concentration, q.rate) - q.concentration.lgamma()
               + (q.concentration - 1) * e_log_x - q.rate / p.rate)
    return log_rate - 1 - e_log_q


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * torch.log(rate_sqr * var_normal * 2 * math.pi)
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    # -H(p) - log(rate_q) + rate_q E_p[x]
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    # -H(p) + log(sqrt(2 pi) sigma) + E_p[(x - mu_q)^2] / (2 sigma^2)
    var_normal = q.scale.pow(2)
    second_moment = 2 * p.scale.pow(2) + (p.loc - q.loc).pow(2)
    return (-1 - torch.log(2 * p.scale) + torch.log(math.sqrt(2 * math.pi) * q.scale)
            + second_moment / (2 * var_normal))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = torch.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * torch.exp(-0.5 * loc_diff_scale_ratio.pow(2))
    t3 = loc_diff * torch.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = (common_term).pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    result[p.low < q.support.lower_bound] = math.inf
    return result


@register_kl(Normal, ContinuousBernoulli)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Normal, Pareto)
@register_kl(Laplace, Pareto)
@register_kl(Normal, Uniform)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Beta)
@register_kl(Laplace, Uniform)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Beta)
def _kl_real_to_restricted(p, q):
    return _infinite_like(p.loc)


# ---- families added with the second batch (kl pairs torch registers for them)
@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # closed form of Chyzak & Nielsen (2019)
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if (p.total_count < q.total_count).any():
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    # p can reach counts q cannot
    return kl.masked_fill(p.total_count > q.total_count, math.inf)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - torch.log1p(-q.probs) / p.probs - q.logits


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    # p puts mass below q's lower bound
    return result.masked_fill(p.support.lower_bound < q.support.lower_bound, math.inf)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    return (t1 - p.alpha.reciprocal() + t3 - 1).masked_fill(p.alpha <= 1, math.inf)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return (t1 + t2 + t3 + t4 - 1).masked_fill(p.alpha <= 1, math.inf)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    result = t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1
    return result.masked_fill(p.alpha <= 2, math.inf)


def _x_log_x(tensor):
    return tensor * tensor.log()


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
    result = t2 * (q.alpha + 1) - t1
    return result.masked_fill(p.low < q.support.lower_bound, math.inf)


@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_pareto_infinity(p, q):
    return _infinite_like(p.scale)


@register_kl(Beta, Pareto)
def _kl_beta_infinity(p, q):
    return _infinite_like(p.concentration1)


@register_kl(Exponential, Beta)
@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Exponential, Pareto)
@register_kl(Exponential, Uniform)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Gamma, Beta)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Gumbel, Beta)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
def _kl_gumbel_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + torch.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - torch.log1p(-q.probs)
    return t1 + t2 + t3


def _cross_entropy_continuous_bernoulli(p, q):
    # -E_p[log q(x)] for q continuous Bernoulli, needing only E_p[x] = p.mean
    return -p.mean * q.logits - torch.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _cross_entropy_continuous_bernoulli(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() + _cross_entropy_continuous_bernoulli(p, q)
    # torch's condition: p reaching either end of [0, 1] counts as leaving the support
    outside = torch.max(torch.ge(p.high, q.support.upper_bound),
                        torch.le(p.low, q.support.lower_bound))
    return torch.where(outside, torch.ones_like(result) * math.inf, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - torch.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + torch.square(q.loc / q.scale)) + torch.log(q.scale)
    t3 = ((p.variance + torch.square(p.mean) - 2.0 * q.loc * p.mean)
          / (2.0 * torch.square(q.scale)))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    # torch's condition (as written there): q starting at or above 0, or ending at or
    # below 1, gives inf
    outside = torch.max(torch.ge(q.low, p.support.lower_bound),
                        torch.le(q.high, p.support.upper_bound))
    return torch.where(outside, torch.ones_like(result) * math.inf, result)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p, q):
    return _infinite_like(p.probs)


# ---- the remaining pairs of the first batch's families that torch registers
def _trace_xxt(x):
    """trace(X X^T) of a batch of matrices."""
    return x.pow(2).sum((-2, -1))


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


def _beta_mean(p):
    return p.concentration1 / (p.concentration1 + p.concentration0)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * _beta_mean(p)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    # E_p[log x] = digamma(a) - digamma(a + b)
    e_log_x = p.concentration1.digamma() - (p.concentration1 + p.concentration0).digamma()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    return -p.entropy() + t2 - (q.concentration - 1) * e_log_x + q.rate * _beta_mean(p)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    mean = _beta_mean(p)
    var_normal = q.scale.pow(2)
    second_moment_half = (mean * (1 - mean) / (p.concentration1 + p.concentration0 + 1)
                          + mean.pow(2)) * 0.5
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    return (-p.entropy() + t2
            + (second_moment_half - q.loc * mean + q.loc.pow(2) * 0.5) / var_normal)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)
    return result.masked_fill(outside, math.inf)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = torch.exp(loc_scale_ratio) * scale_rate_prod / (scale_rate_prod + 1)
    return t1 - loc_scale_ratio + t2 + scale_rate_prod.reciprocal()


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    a = p.concentration
    t1 = (a - 1) * a.digamma() - a.lgamma() - a
    t2 = beta_scale_prod.log() + a / beta_scale_prod
    t3 = (torch.exp(loc_scale_ratio) * (1 + beta_scale_prod.reciprocal()).pow(-a)
          - loc_scale_ratio)
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    a = p.concentration
    t1 = 0.5 * torch.log(beta_sqr * var_normal * 2 * math.pi) - a - a.lgamma()
    t2 = 0.5 * (a.pow(2) + a) / beta_sqr
    t3 = q.loc * a / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (a - 1) * a.digamma() + (t2 - t3 + t4) / var_normal


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * param_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = torch.exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


_LOWRANK_SHAPES = ("KL-divergence between two (Low Rank) Multivariate Normals with"
                   "                          different event shapes cannot be computed")


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(_LOWRANK_SHAPES)
    Lq = q._unbroadcasted_scale_tril
    W, D = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term1 = (2 * Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1)
             - _lowrank_logdet(W, D, p._capacitance_tril))
    term3 = batch_mahalanobis(Lq, q.loc - p.loc)
    batch = torch.broadcast_shapes(Lq.shape[:-2], W.shape[:-2])
    n = p.event_shape[0]
    Lq = Lq.expand(batch + (n, n))
    # trace(Sigma_q^-1 (W W^T + D)) through triangular solves with L_q
    term21 = _trace_xxt(torch.linalg.solve_triangular(Lq, W.expand(batch + (n, W.size(-1))),
                                                      upper=False))
    term22 = _trace_xxt(torch.linalg.solve_triangular(
        Lq, torch.diag_embed(D.sqrt()).expand(batch + (n, n)), upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - n)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrankmvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(_LOWRANK_SHAPES)
    Wq, Dq = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    Lp = p._unbroadcasted_scale_tril
    term1 = (_lowrank_logdet(Wq, Dq, q._capacitance_tril)
             - 2 * Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    term3 = _lowrank_mahalanobis(Wq, Dq, q.loc - p.loc, q._capacitance_tril)
    # trace(Sigma_q^-1 Sigma_p) by the Woodbury identity
    A = torch.linalg.solve_triangular(q._capacitance_tril, Wq.mT / Dq.unsqueeze(-2),
                                      upper=False)
    term21 = _trace_xxt(Lp * Dq.rsqrt().unsqueeze(-1))
    term22 = _trace_xxt(A.matmul(Lp))
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = ((q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width)
          / width)
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    result = t3 + t4 - torch.log(width) - t2
    outside = (p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)
    return result.masked_fill(outside, math.inf)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t4 = q.rate * (p.high + p.low) / 2
    result = -width.log() + t2 + t3 + t4
    return result.masked_fill(p.low < q.support.lower_bound, math.inf)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * (torch.exp(-high_loc_diff) - torch.exp(-low_loc_diff))
    return t1 - t2
