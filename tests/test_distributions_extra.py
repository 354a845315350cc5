"""The continuous families added to ndgrad.distributions in the second batch (Cauchy,
HalfCauchy, StudentT, Chi2, ...) against torch.distributions 2.13: log_prob / entropy / cdf /
icdf and moments with their parameter gradients, batch / event shapes, expand (also to a
zero-size batch), seeded sample and rsample streams with rsample gradients, validation errors
and kl_divergence values and gradients."""

import numpy as np
import pytest
import torch

import ndgrad
from _dist_compare import Families, R, close, error_of, npy, pos, simplex, spd

FAMILIES = {
    "Cauchy": (lambda D, L, p: D.Cauchy(p["loc"], p["scale"]),
               {"loc": R.randn(3), "scale": pos(3)}, R.randn(2, 3) * 3),
    "Cauchy_scalar": (lambda D, L, p: D.Cauchy(0.5, 2.0), {}, R.randn(4)),
    "HalfCauchy": (lambda D, L, p: D.HalfCauchy(p["scale"]), {"scale": pos(2, 3)}, pos(2, 3)),
    "StudentT": (lambda D, L, p: D.StudentT(p["df"], p["loc"], p["scale"]),
                 {"df": np.array([0.7, 1.5, 2.0, 3.5, 9.0]), "loc": R.randn(5),
                  "scale": pos(5)}, R.randn(3, 5) * 2),
    "StudentT_df": (lambda D, L, p: D.StudentT(p["df"]), {"df": pos(2, 1) * 4}, R.randn(2, 3)),
    "Chi2": (lambda D, L, p: D.Chi2(p["df"]), {"df": pos(4) * 3}, pos(2, 4) * 2),
    "Weibull": (lambda D, L, p: D.Weibull(p["scale"], p["c"]),
                {"scale": pos(3), "c": np.array([0.7, 1.5, 4.0])}, pos(2, 3)),
    "Pareto": (lambda D, L, p: D.Pareto(p["scale"], p["alpha"]),
               {"scale": pos(4), "alpha": np.array([0.8, 1.5, 2.5, 6.0])}, pos(2, 4) + 1.5),
    "Kumaraswamy": (lambda D, L, p: D.Kumaraswamy(p["a"], p["b"]),
                    {"a": np.array([0.6, 2.0, 5.0]), "b": np.array([1.5, 0.8, 3.0])},
                    R.rand(2, 3) * 0.9 + 0.05),
    "InverseGamma": (lambda D, L, p: D.InverseGamma(p["a"], p["rate"]),
                     {"a": np.array([0.7, 1.5, 2.5, 5.0]), "rate": pos(4)}, pos(2, 4)),
    "GeneralizedPareto": (lambda D, L, p: D.GeneralizedPareto(p["loc"], p["scale"], p["c"]),
                          {"loc": R.randn(4).astype(np.float32),
                           "scale": pos(4).astype(np.float32),
                           "c": np.array([-0.3, 0.0, 0.4, 1.2], np.float32)}, None),
    "FisherSnedecor": (lambda D, L, p: D.FisherSnedecor(p["d1"], p["d2"]),
                       {"d1": np.array([1.5, 3.0, 8.0]), "d2": np.array([1.5, 4.5, 12.0])},
                       pos(2, 3)),
    "Mixture_normal": (lambda D, L, p: D.MixtureSameFamily(
        D.Categorical(logits=p["w"]), D.Normal(p["loc"], p["scale"])),
        {"w": R.randn(2, 3), "loc": R.randn(2, 3), "scale": pos(2, 3)}, R.randn(4, 2)),
    "Mixture_mvn": (lambda D, L, p: D.MixtureSameFamily(
        D.Categorical(probs=p["w"]),
        D.Independent(D.Normal(p["loc"], p["scale"]), 1)),
        {"w": R.rand(2, 3) + 0.1, "loc": R.randn(2, 3, 2), "scale": pos(2, 3, 2)},
        R.randn(5, 2, 2)),
    "RelaxedBernoulli": (lambda D, L, p: D.RelaxedBernoulli(p["t"], probs=p["probs"]),
                         {"t": np.array(0.7), "probs": R.rand(2, 3)}, R.rand(2, 3) * 0.9 + 0.05),
    "RelaxedBernoulli_logits": (lambda D, L, p: D.RelaxedBernoulli(p["t"], logits=p["logits"]),
                                {"t": np.array([0.3, 2.0]), "logits": R.randn(2)}, None),
    "LogitRelaxedBernoulli": (
        lambda D, L, p: D.relaxed_bernoulli.LogitRelaxedBernoulli(p["t"], logits=p["logits"]),
        {"t": np.array(0.5), "logits": R.randn(3)}, R.randn(2, 3)),
    "RelaxedOneHotCategorical": (
        lambda D, L, p: D.RelaxedOneHotCategorical(p["t"], probs=p["probs"]),
        {"t": np.array(0.8), "probs": simplex(2, 4)}, simplex(3, 2, 4)),
    "RelaxedOneHotCategorical_logits": (
        lambda D, L, p: D.RelaxedOneHotCategorical(p["t"], logits=p["logits"]),
        {"t": np.array([[1.5], [0.4]]), "logits": R.randn(2, 3)}, None),
    "OneHotCategoricalStraightThrough": (
        lambda D, L, p: D.OneHotCategoricalStraightThrough(logits=p["logits"]),
        {"logits": R.randn(3, 4)}, np.eye(4)[[0, 3, 1]]),
    "LogisticNormal": (lambda D, L, p: D.LogisticNormal(p["loc"], p["scale"]),
                       {"loc": R.randn(2, 3), "scale": pos(2, 3)}, simplex(2, 4)),
    "LogisticNormal_scalar": (lambda D, L, p: D.LogisticNormal(0.3, p["scale"]),
                              {"scale": pos(3)}, simplex(4)),
    "ContinuousBernoulli": (lambda D, L, p: D.ContinuousBernoulli(p["probs"]),
                            {"probs": np.array([0.02, 0.3, 0.4995, 0.5, 0.5008, 0.9])},
                            R.rand(2, 6)),
    "ContinuousBernoulli_logits": (lambda D, L, p: D.ContinuousBernoulli(logits=p["logits"]),
                                   {"logits": np.array([-3.0, 0.001, 0.0, 1.2])}, R.rand(4)),
    "VonMises": (lambda D, L, p: D.VonMises(p["loc"], p["c"]),
                 {"loc": R.randn(5), "c": np.array([1e-6, 0.4, 2.0, 3.75, 20.0])},
                 R.rand(2, 5) * 6 - 3),
    "LKJCholesky": (lambda D, L, p: D.LKJCholesky(3, p["c"]),
                    {"c": np.array([0.5, 1.0, 4.0])}, None),
    "LKJCholesky_scalar": (lambda D, L, p: D.LKJCholesky(4, 2.0), {}, None),
    "Wishart_cov": (lambda D, L, p: D.Wishart(p["df"], covariance_matrix=p["cov"]),
                    {"df": np.array([3.5, 6.0]), "cov": spd(3)}, None),
    "Wishart_tril": (lambda D, L, p: D.Wishart(4.0, scale_tril=p["tril"]),
                     {"tril": np.linalg.cholesky(spd(2, (3,)))}, None),
    "Wishart_prec": (lambda D, L, p: D.Wishart(p["df"], precision_matrix=p["prec"]),
                     {"df": np.array(5.0), "prec": spd(3, (2,))}, None),
}
F = Families(FAMILIES)
CDF = ["ContinuousBernoulli", "ContinuousBernoulli_logits", "Cauchy", "Cauchy_scalar",
       "HalfCauchy", "Chi2", "Weibull", "Pareto", "Kumaraswamy", "InverseGamma",
       "GeneralizedPareto", "Mixture_normal"]
ICDF = ["ContinuousBernoulli", "ContinuousBernoulli_logits", "Cauchy", "Cauchy_scalar",
        "HalfCauchy", "Weibull", "Pareto", "Kumaraswamy", "GeneralizedPareto"]
NO_ENTROPY = ["Mixture_normal", "Mixture_mvn", "RelaxedBernoulli", "RelaxedBernoulli_logits",
              "LogitRelaxedBernoulli", "RelaxedOneHotCategorical",
              "RelaxedOneHotCategorical_logits", "LogisticNormal", "LogisticNormal_scalar",
              "VonMises", "LKJCholesky", "LKJCholesky_scalar"]
# torch's _standard_gamma_grad is an approximation (up to ~2e-4 relative at these draws,
# against mpmath; ndgrad's is within 1e-9), which StudentT's df gradient amplifies where
# the df / chi2 terms nearly cancel
GAMMA_BASED = {"StudentT": 3e-3, "StudentT_df": 1e-3, "Chi2": 3e-4, "InverseGamma": 3e-4,
               "FisherSnedecor": 1e-2, "Wishart_cov": 1e-3, "Wishart_tril": 1e-3,
               "Wishart_prec": 1e-3}
# float32 families (torch's GeneralizedPareto raises for float64 parameters)
TOL = {"GeneralizedPareto": (2e-6, 1e-6),
       # matrix products / solves round differently in NumPy and torch's LAPACK calls
       "Wishart_cov": (1e-9, 1e-11), "Wishart_tril": (1e-9, 1e-11),
       "Wishart_prec": (1e-9, 1e-11), "LKJCholesky": (1e-9, 1e-11),
       "LKJCholesky_scalar": (1e-6, 1e-6)}


@pytest.mark.parametrize("name", FAMILIES)
def test_log_prob_value_and_grad(name):
    if FAMILIES[name][2] is None:   # a value inside a parameter-dependent support
        def fn(d, L):
            L.manual_seed(0)
            return d.log_prob(d.sample((2,)))
        F.compare(name, fn, *TOL.get(name, ()))
        return
    F.compare(name, lambda d, L: d.log_prob(F.value(L, name)), *TOL.get(name, ()))


@pytest.mark.parametrize("name", FAMILIES)
def test_entropy_value_and_grad(name):
    if name in NO_ENTROPY:
        assert F.run(ndgrad, name, lambda d, L: d.entropy()) == F.run(
            torch, name, lambda d, L: d.entropy())
        return
    F.compare(name, lambda d, L: d.entropy(), *TOL.get(name, ()))


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("attr", ["mean", "mode", "variance", "stddev"])
def test_moments(name, attr):
    F.compare(name, lambda d, L: getattr(d, attr), *TOL.get(name, ()))


@pytest.mark.parametrize("name", CDF)
def test_cdf_value_and_grad(name):
    if FAMILIES[name][2] is None:
        def fn(d, L):
            L.manual_seed(0)
            return d.cdf(d.sample((2,)))
        F.compare(name, fn, *TOL.get(name, ()))
        return
    F.compare(name, lambda d, L: d.cdf(F.value(L, name)))


@pytest.mark.parametrize("name", ICDF)
def test_icdf_value_and_grad(name):
    shape = tuple(F.build(torch, name, False)[0].batch_shape)
    q = np.linspace(0.02, 0.97, 2 * int(np.prod(shape))).reshape((2,) + shape)
    F.compare(name, lambda d, L: d.icdf(L.tensor(q, dtype=d.mean.dtype)),
              *TOL.get(name, ()))


@pytest.mark.parametrize("name", FAMILIES)
def test_shapes_and_expand(name):
    F.shapes(name)


@pytest.mark.parametrize("name", FAMILIES)
def test_sample_stream_matches_torch(name):
    F.stream(name, *TOL.get(name, ()))


@pytest.mark.parametrize("name", [n for n in FAMILIES if F.build(torch, n, False)[0].has_rsample
                                  and not n.startswith("Wishart")])
def test_rsample_stream_and_grad(name):
    F.rsample(name, TOL.get(name, (1e-10,))[0],
              grad_rtol=GAMMA_BASED.get(name, TOL.get(name, (1e-7,))[0]))


@pytest.mark.parametrize("name", FAMILIES)
def test_support_and_arg_constraints(name):
    def scenario(lib):
        d, _ = F.build(lib, name, False)
        return repr(d.support), sorted((k, repr(v)) for k, v in d.arg_constraints.items())
    assert scenario(ndgrad) == scenario(torch)


@pytest.mark.parametrize("case", [
    lambda D, L: D.Cauchy(L.tensor([0.0]), L.tensor([-1.0])),
    lambda D, L: D.Cauchy(0.0, 1.0).log_prob(1.0),
    lambda D, L: D.HalfCauchy(L.tensor([0.0, 1.0])),
    lambda D, L: D.HalfCauchy(L.ones(2)).log_prob(L.tensor([1.0, -1.0])),
    lambda D, L: D.StudentT(L.tensor([-1.0])),
    lambda D, L: D.StudentT(L.tensor([1.0]), scale=L.tensor([0.0])),
    lambda D, L: D.StudentT(1.0, L.zeros(3)).log_prob(L.zeros(2)),
    lambda D, L: D.Chi2(L.tensor([0.0])),
    lambda D, L: D.Chi2(L.ones(2)).log_prob(L.tensor([1.0, -0.5])),
    lambda D, L: D.Weibull(L.tensor([1.0]), L.tensor([0.0])),
    lambda D, L: D.Weibull(L.ones(2), L.ones(2)).log_prob(L.tensor([1.0, -0.5])),
    lambda D, L: D.Pareto(L.tensor([-1.0]), L.tensor([1.0])),
    lambda D, L: D.Pareto(L.tensor([2.0]), L.tensor([1.0])).log_prob(L.tensor([1.0])),
    lambda D, L: D.Kumaraswamy(L.tensor([1.0]), L.tensor([-1.0])),
    lambda D, L: D.Kumaraswamy(L.ones(2), L.ones(2)).log_prob(L.tensor([0.5, 1.5])),
    lambda D, L: D.InverseGamma(L.tensor([-1.0]), L.tensor([1.0])),
    lambda D, L: D.GeneralizedPareto(0.0, L.tensor([-1.0]), 0.5),
    lambda D, L: D.GeneralizedPareto(L.zeros(2), L.ones(2), L.tensor([-0.5, 0.5])).log_prob(
        L.tensor([3.0, 1.0])),
    lambda D, L: D.FisherSnedecor(L.tensor([1.0]), L.tensor([0.0])),
    lambda D, L: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(L.zeros(2), L.ones(2))),
    lambda D, L: D.MixtureSameFamily(D.Categorical(L.ones(2)), "normal"),
    lambda D, L: D.MixtureSameFamily(D.Categorical(L.ones(3, 2)),
                                     D.Normal(L.zeros(4, 2), L.ones(4, 2))),
    lambda D, L: D.MixtureSameFamily(D.Categorical(L.ones(3)), D.Normal(L.zeros(2), L.ones(2))),
    lambda D, L: D.MixtureSameFamily(D.Categorical(L.ones(2)), D.Exponential(L.ones(2))
                                     ).log_prob(L.tensor([-1.0])),
    lambda D, L: D.RelaxedBernoulli(L.tensor(0.5)),
    lambda D, L: D.RelaxedBernoulli(L.tensor(0.5), probs=L.tensor([1.5])),
    lambda D, L: D.RelaxedBernoulli(L.tensor(0.5), L.tensor([0.5])).log_prob(L.tensor([1.5])),
    lambda D, L: D.RelaxedOneHotCategorical(L.tensor(0.5), L.tensor([0.5, -0.5])),
    lambda D, L: D.RelaxedOneHotCategorical(L.tensor(0.5), L.tensor([0.5, 0.5])).log_prob(
        L.tensor([0.5, 0.6])),
    lambda D, L: D.OneHotCategoricalStraightThrough(L.tensor([0.5, 0.5])).log_prob(
        L.tensor([1.0, 1.0])),
    lambda D, L: D.LogisticNormal(L.zeros(2), L.tensor([1.0, -1.0])),
    lambda D, L: D.LogisticNormal(L.zeros(2), L.ones(2)).log_prob(L.tensor([0.5, 0.6, 0.1])),
    lambda D, L: D.ContinuousBernoulli(),
    lambda D, L: D.ContinuousBernoulli(L.tensor([1.5]), validate_args=True),
    lambda D, L: D.ContinuousBernoulli(L.tensor([0.3])).log_prob(L.tensor([1.5])),
    lambda D, L: D.VonMises(L.tensor([0.0]), L.tensor([-1.0])),
    lambda D, L: D.VonMises(L.zeros(2), L.ones(2)).log_prob(L.zeros(3)),
    lambda D, L: D.LKJCholesky(1),
    lambda D, L: D.LKJCholesky(3, L.tensor([-1.0])),
    lambda D, L: D.LKJCholesky(2).log_prob(L.tensor([[1.0, 0.0], [0.5, 0.5]])),
    lambda D, L: D.Wishart(3.0),
    lambda D, L: D.Wishart(3.0, L.eye(2), scale_tril=L.eye(2)),
    lambda D, L: D.Wishart(3.0, L.ones(2)),
    lambda D, L: D.Wishart(1.0, L.eye(3)),
    lambda D, L: D.Wishart(L.tensor([4.0, 0.5]), L.eye(2)),
    lambda D, L: D.Wishart(3.0, L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda D, L: D.Wishart(3.0, scale_tril=L.tensor([[1.0, 0.0], [2.0, -1.0]])),
    lambda D, L: D.Wishart(3.0, L.eye(2)).log_prob(L.tensor([[1.0, 2.0], [2.0, 1.0]])),
])
def test_validation_errors_match_torch(case):
    theirs = error_of(lambda: case(torch.distributions, torch))
    assert theirs is not None
    assert error_of(lambda: case(ndgrad.distributions, ndgrad)) == theirs


KL_PAIRS = [("ContinuousBernoulli", "ContinuousBernoulli"),
            ("ContinuousBernoulli_logits", "ContinuousBernoulli_logits"),
            ("Wishart_cov", "Wishart_cov"), ("Cauchy", "Cauchy"), ("Chi2", "Chi2"),
            ("Pareto", "Pareto"), ("InverseGamma", "InverseGamma")]
# (p, q) with p built from a table entry and q from torch-free constructors below
CROSS_KL = {
    "Bernoulli_Poisson": lambda D, L, p: (D.Bernoulli(p["s"] / 2), D.Poisson(p["r"])),
    "Poisson_Bernoulli": lambda D, L, p: (D.Poisson(p["r"]), D.Bernoulli(p["s"] / 2)),
    "Beta_Exponential": lambda D, L, p: (D.Beta(p["r"], p["a"]), D.Exponential(p["s"])),
    "Beta_Gamma": lambda D, L, p: (D.Beta(p["r"], p["a"]), D.Gamma(p["s"], p["r"])),
    "Beta_Normal": lambda D, L, p: (D.Beta(p["r"], p["a"]), D.Normal(p["s"], p["r"])),
    "Beta_Uniform": lambda D, L, p: (D.Beta(p["r"], p["a"]), D.Uniform(p["s"] - 1.2, p["s"])),
    "Exponential_Beta": lambda D, L, p: (D.Exponential(p["r"]), D.Beta(p["s"], p["a"])),
    "Exponential_Gumbel": lambda D, L, p: (D.Exponential(p["r"]), D.Gumbel(p["s"], p["a"])),
    "Gamma_Beta": lambda D, L, p: (D.Gamma(p["r"], p["a"]), D.Beta(p["s"], p["a"])),
    "Gamma_Gumbel": lambda D, L, p: (D.Gamma(p["r"], p["a"]), D.Gumbel(p["s"], p["a"])),
    "Gamma_Normal": lambda D, L, p: (D.Gamma(p["r"], p["a"]), D.Normal(p["s"], p["a"])),
    "Gumbel_Normal": lambda D, L, p: (D.Gumbel(p["r"], p["a"]), D.Normal(p["s"], p["a"])),
    "Normal_Gumbel": lambda D, L, p: (D.Normal(p["r"], p["a"]), D.Gumbel(p["s"], p["a"])),
    "Uniform_Beta": lambda D, L, p: (D.Uniform(p["s"] / 3 - 0.2, p["s"] / 3 + 0.1),
                                     D.Beta(p["r"], p["a"])),
    "Uniform_Gamma": lambda D, L, p: (D.Uniform(p["s"] - 0.7, p["s"]), D.Gamma(p["r"], p["a"])),
    "Uniform_Gumbel": lambda D, L, p: (D.Uniform(p["s"] - 0.7, p["s"]), D.Gumbel(p["r"], p["a"])),
    "CB_Exponential": lambda D, L, p: (D.ContinuousBernoulli(p["s"] / 2.5), D.Exponential(p["r"])),
    "CB_Normal": lambda D, L, p: (D.ContinuousBernoulli(p["s"] / 2.5), D.Normal(p["r"], p["s"])),
    "CB_Uniform": lambda D, L, p: (D.ContinuousBernoulli(p["s"] / 2.5),
                                   D.Uniform(-p["r"] + 0.9, p["s"] + 0.4)),
    "CB_Pareto": lambda D, L, p: (D.ContinuousBernoulli(p["s"] / 2.5), D.Pareto(p["s"], p["a"])),
    "Beta_CB": lambda D, L, p: (D.Beta(p["r"], p["a"]), D.ContinuousBernoulli(p["s"] / 2.5)),
    "Uniform_CB": lambda D, L, p: (D.Uniform(p["s"] / 3 - 0.2, p["s"] / 3 + 0.1),
                                   D.ContinuousBernoulli(logits=p["r"])),
    "Normal_CB": lambda D, L, p: (D.Normal(p["r"], p["s"]), D.ContinuousBernoulli(p["s"] / 2.5)),
    "Exponential_CB": lambda D, L, p: (D.Exponential(p["r"]), D.ContinuousBernoulli(p["s"] / 2.5)),
    "Gamma_CB": lambda D, L, p: (D.Gamma(p["r"], p["a"]), D.ContinuousBernoulli(p["s"] / 2.5)),
    "Gumbel_CB": lambda D, L, p: (D.Gumbel(p["r"], p["a"]), D.ContinuousBernoulli(p["s"] / 2.5)),
    "Laplace_CB": lambda D, L, p: (D.Laplace(p["r"], p["a"]), D.ContinuousBernoulli(p["s"] / 2.5)),
    "Pareto_CB": lambda D, L, p: (D.Pareto(p["r"], p["a"]), D.ContinuousBernoulli(p["s"] / 2.5)),
    "Pareto_Exponential": lambda D, L, p: (D.Pareto(p["s"], p["a"]), D.Exponential(p["r"])),
    "Pareto_Gamma": lambda D, L, p: (D.Pareto(p["s"], p["a"]), D.Gamma(p["r"], p["s"])),
    "Pareto_Normal": lambda D, L, p: (D.Pareto(p["s"], p["a"]), D.Normal(p["r"], p["s"])),
    "Pareto_Uniform": lambda D, L, p: (D.Pareto(p["s"], p["a"]), D.Uniform(-p["r"], p["r"])),
    "Pareto_Beta": lambda D, L, p: (D.Pareto(p["s"], p["a"]), D.Beta(p["r"], p["a"])),
    "Uniform_Pareto": lambda D, L, p: (D.Uniform(p["s"], p["s"] + p["r"]),
                                       D.Pareto(p["s"] * 0.9, p["a"])),
    "Normal_Pareto": lambda D, L, p: (D.Normal(p["r"], p["s"]), D.Pareto(p["s"], p["a"])),
    "Laplace_Pareto": lambda D, L, p: (D.Laplace(p["r"], p["s"]), D.Pareto(p["s"], p["a"])),
    "Gamma_Pareto": lambda D, L, p: (D.Gamma(p["r"], p["s"]), D.Pareto(p["s"], p["a"])),
    "Gamma_Uniform": lambda D, L, p: (D.Gamma(p["r"], p["s"]), D.Uniform(-p["r"], p["r"])),
    "Exponential_Pareto": lambda D, L, p: (D.Exponential(p["r"]), D.Pareto(p["s"], p["a"])),
    "Exponential_Uniform": lambda D, L, p: (D.Exponential(p["r"]), D.Uniform(-p["r"], p["r"])),
    "Beta_Pareto": lambda D, L, p: (D.Beta(p["r"], p["a"]), D.Pareto(p["s"], p["a"])),
    "Gumbel_Beta": lambda D, L, p: (D.Gumbel(p["r"], p["s"]), D.Beta(p["r"], p["a"])),
    "Gumbel_Pareto": lambda D, L, p: (D.Gumbel(p["r"], p["s"]), D.Pareto(p["s"], p["a"])),
}


@pytest.mark.parametrize("pair", CROSS_KL)
def test_cross_family_kl(pair):
    rs = np.random.RandomState(31)   # fixed data whatever the test order
    vals = {"s": rs.rand(4) + 0.5, "a": np.array([0.8, 1.5, 2.5, 6.0]), "r": rs.rand(4) + 0.5}

    def scenario(lib):
        tens = {k: lib.tensor(v, requires_grad=True) for k, v in vals.items()}
        p, q = CROSS_KL[pair](lib.distributions, lib, tens)
        kl = lib.distributions.kl_divergence(p, q)
        if not kl.requires_grad:   # an infinite KL: a constant
            return [npy(kl)]
        fin = lib.isfinite(kl)
        gs = lib.autograd.grad(lib.where(fin, kl, 0.0).sum(), list(tens.values()),
                               allow_unused=True)
        return [npy(kl)] + [None if g is None else npy(g) for g in gs]
    for a, b in zip(scenario(ndgrad), scenario(torch)):
        close(a, b, 1e-7, 1e-10)


@pytest.mark.parametrize("pname,qname", KL_PAIRS)
def test_kl_divergence_value_and_grad(pname, qname):
    def scenario(lib):
        p, tp = F.build(lib, pname)
        ctor, params, _ = FAMILIES[qname]
        tq = {k: lib.tensor(np.asarray(v) * 1.3 + 0.1, requires_grad=True)
              for k, v in params.items()}
        q = ctor(lib.distributions, lib, tq)
        kl = lib.distributions.kl_divergence(p, q)
        if not kl.requires_grad:
            return [npy(kl)]
        leaves = [t for t in list(tp.values()) + list(tq.values()) if t.requires_grad]
        gs = lib.autograd.grad(kl.sum(), leaves, allow_unused=True)
        return [npy(kl)] + [None if g is None else npy(g) for g in gs]
    for a, b in zip(scenario(ndgrad), scenario(torch)):
        close(a, b, 1e-7, 1e-10)


def test_studentt_float32_stream_and_half_cauchy_grad():
    def scenario(lib):
        df = lib.tensor([0.8, 3.0, 30.0], dtype=lib.float32, requires_grad=True)
        lib.manual_seed(1)
        x = lib.distributions.StudentT(df, 1.0, 2.0).rsample((4,))
        (g,) = lib.autograd.grad(x.sum(), [df])
        s = lib.tensor([0.5, 2.0], requires_grad=True)
        y = lib.distributions.HalfCauchy(s).rsample((3,))
        (gs,) = lib.autograd.grad(y.sum(), [s])
        return npy(x), npy(g), npy(y), npy(gs)
    ours, theirs = scenario(ndgrad), scenario(torch)
    close(ours[0], theirs[0], 1e-6, 1e-6)
    close(ours[1], theirs[1], 1e-3, 1e-5)
    for a, b in zip(ours[2:], theirs[2:]):
        close(a, b, 1e-6, 1e-7)


@pytest.mark.parametrize("name", ["Wishart_cov", "Wishart_tril", "Wishart_prec"])
def test_wishart_rsample_stream_and_grad(name):
    # torch redraws every positive definite sample once (its mask is inverted, see
    # wishart.py) and its in-place mask update then breaks the backward; the values of the
    # default rsample are compared, and the gradients of rsample(max_try_correction=0),
    # which skips torch's redraw loop (df's gradient goes through torch's approximate
    # _standard_gamma_grad, hence its tolerance)
    def values(d, lib):
        lib.manual_seed(3)
        return d.rsample((2,)).detach()

    def grads(d, lib):
        lib.manual_seed(3)
        return d.rsample((2,), max_try_correction=0)
    F.compare(name, values, 1e-10, 1e-12)
    with pytest.warns(UserWarning, match="Singular sample detected"):
        F.compare(name, grads, 1e-10, 1e-12, GAMMA_BASED[name])


def test_kl_registry_has_torchs_pairs():
    from ndgrad.distributions import kl
    from torch.distributions import kl as tkl

    def names(reg):
        return {(a.__name__, b.__name__) for a, b in reg}
    assert names(kl._KL_REGISTRY) == names(tkl._KL_REGISTRY)


@pytest.mark.parametrize("order", ["lowrank_full", "full_lowrank"])
def test_kl_between_lowrank_and_full_mvn(order):
    rs = np.random.RandomState(32)
    W, Dg, loc = rs.randn(2, 4, 2), rs.rand(4) + 0.5, rs.randn(4)
    cov = np.eye(4) * 4 + W[0] @ W[0].T

    def scenario(lib):
        D = lib.distributions
        tens = [lib.tensor(v, requires_grad=True) for v in (W, Dg, loc, cov)]
        lr = D.LowRankMultivariateNormal(tens[2] * 0.5, tens[0], tens[1])
        full = D.MultivariateNormal(tens[2], covariance_matrix=tens[3])
        kl = D.kl_divergence(lr, full) if order == "lowrank_full" else D.kl_divergence(full, lr)
        gs = lib.autograd.grad(kl.sum(), tens)
        bad = error_of(lambda: D.kl_divergence(
            lr, D.MultivariateNormal(lib.zeros(3), lib.eye(3))) if order == "lowrank_full"
            else D.kl_divergence(D.MultivariateNormal(lib.zeros(3), lib.eye(3)), lr))
        return [npy(kl)] + [npy(g) for g in gs], bad
    ours, theirs = scenario(ndgrad), scenario(torch)
    for a, b in zip(ours[0], theirs[0]):
        close(a, b, 1e-8, 1e-10)
    assert ours[1] == theirs[1]


def test_mixture_constraint_and_module_paths():
    def scenario(lib):
        D = lib.distributions
        m = D.MixtureSameFamily(D.Categorical(lib.ones(2, 3)),
                                D.Independent(D.Exponential(lib.ones(2, 3, 2)), 1))
        c = m.support
        return (repr(c), c.event_dim, c.is_discrete,
                npy(c.check(lib.tensor([[[1.0, 2.0], [-1.0, 2.0]]]))),
                error_of(lambda: D.constraints.MixtureSameFamilyConstraint(3)),
                D.one_hot_categorical.OneHotCategoricalStraightThrough.__name__,
                D.relaxed_categorical.ExpRelaxedCategorical.__name__,
                sorted(n for n in D.__all__))
    ours, theirs = scenario(ndgrad), scenario(torch)
    np.testing.assert_array_equal(ours[3], theirs[3])
    assert ours[:3] + ours[4:] == theirs[:3] + theirs[4:]


@pytest.mark.parametrize("family", ["Cauchy", "HalfCauchy", "Weibull", "Pareto", "Kumaraswamy",
                                    "RelaxedBernoulli", "RelaxedOneHotCategorical",
                                    "ContinuousBernoulli", "VonMises", "LogisticNormal",
                                    "Mixture", "LKJCholesky", "GeneralizedPareto"])
def test_float32_streams(family):
    p = (np.random.RandomState(33).rand(12) + 0.5).astype(np.float32)

    def scenario(lib):
        D = lib.distributions
        t = lib.tensor(p)
        d = {"Cauchy": lambda: D.Cauchy(t, t), "HalfCauchy": lambda: D.HalfCauchy(t),
             "Weibull": lambda: D.Weibull(t, t * 2), "Pareto": lambda: D.Pareto(t, t * 3),
             "Kumaraswamy": lambda: D.Kumaraswamy(t, t * 2),
             "RelaxedBernoulli": lambda: D.RelaxedBernoulli(lib.tensor(0.5), t / 2),
             "RelaxedOneHotCategorical": lambda: D.RelaxedOneHotCategorical(
                 lib.tensor(0.7), t.reshape(3, 4)),
             "ContinuousBernoulli": lambda: D.ContinuousBernoulli(t / 2),
             "VonMises": lambda: D.VonMises(t - 1, t * 4),
             "LogisticNormal": lambda: D.LogisticNormal(t.reshape(4, 3), t.reshape(4, 3)),
             "Mixture": lambda: D.MixtureSameFamily(D.Categorical(t[:4]),
                                                    D.Normal(t[4:8], t[8:])),
             "LKJCholesky": lambda: D.LKJCholesky(3, t[:2] * 2),
             "GeneralizedPareto": lambda: D.GeneralizedPareto(t, t, t - 1)}[family]()
        lib.manual_seed(11)
        out = [d.sample((5,))]
        if d.has_rsample:
            out.append(d.rsample((3,)))
        return [npy(o) for o in out]
    for a, b in zip(scenario(ndgrad), scenario(torch)):
        # the same uniforms; NumPy's float32 transcendentals may round the last bit apart
        close(a, b, 2e-6, 2e-6)


def test_training_loops_with_new_families_follow_torch():
    # a mixture density network (MixtureSameFamily of Independent Normals), a Student-t
    # regression with a positive df through transform_to, and a Gumbel-softmax relaxation:
    # ten SGD steps each, losses and parameters against torch
    rs = np.random.RandomState(34)
    x = rs.randn(16, 3)
    y = rs.randn(16, 2)
    w0 = rs.randn(3, 3 + 3 * 2 * 2) * 0.3
    logits0 = rs.randn(4, 5)

    def scenario(lib):
        D = lib.distributions
        X, Y = lib.tensor(x), lib.tensor(y)
        W = lib.tensor(w0, requires_grad=True)
        raw_df = lib.tensor(0.3, dtype=lib.float64, requires_grad=True)
        logits = lib.tensor(logits0, requires_grad=True)
        opt = lib.optim.SGD([W, raw_df, logits], lr=0.05)
        losses = []
        lib.manual_seed(4)
        for _ in range(10):
            h = X @ W
            mix = D.Categorical(logits=h[:, :3])
            loc = h[:, 3:9].reshape(16, 3, 2)
            scale = lib.nn.functional.softplus(h[:, 9:15]).reshape(16, 3, 2) + 0.1
            mdn = D.MixtureSameFamily(mix, D.Independent(D.Normal(loc, scale), 1))
            df = D.transform_to(D.constraints.greater_than(1.0))(raw_df)
            st = D.StudentT(df, h[:, 3:5], 1.0)
            relaxed = D.RelaxedOneHotCategorical(lib.tensor(0.5, dtype=lib.float64),
                                                 logits=logits).rsample()
            loss = (-mdn.log_prob(Y).mean() - st.log_prob(Y).mean()
                    + (relaxed * lib.arange(5.0, dtype=lib.float64)).sum())
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss))
        return losses, npy(W), npy(raw_df), npy(logits)
    ours, theirs = scenario(ndgrad), scenario(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10)
    for a, b in zip(ours[1:], theirs[1:]):
        close(a, b, 1e-9, 1e-11)


def _zeros(L):
    return L.ones(0, 3, dtype=L.float64)


ZERO_SIZE = {
    "Binomial": lambda D, L: D.Binomial(_zeros(L) * 3, _zeros(L) * 0.5),
    "Geometric": lambda D, L: D.Geometric(_zeros(L) * 0.5),
    "NegativeBinomial": lambda D, L: D.NegativeBinomial(_zeros(L), _zeros(L) * 0.5),
    "StudentT": lambda D, L: D.StudentT(_zeros(L)),
    "Cauchy": lambda D, L: D.Cauchy(_zeros(L), _zeros(L)),
    "HalfCauchy": lambda D, L: D.HalfCauchy(_zeros(L)),
    "Weibull": lambda D, L: D.Weibull(_zeros(L), _zeros(L)),
    "Pareto": lambda D, L: D.Pareto(_zeros(L), _zeros(L)),
    "Kumaraswamy": lambda D, L: D.Kumaraswamy(_zeros(L), _zeros(L)),
    "InverseGamma": lambda D, L: D.InverseGamma(_zeros(L), _zeros(L)),
    "FisherSnedecor": lambda D, L: D.FisherSnedecor(_zeros(L), _zeros(L)),
    "ContinuousBernoulli": lambda D, L: D.ContinuousBernoulli(_zeros(L) * 0.3),
    "VonMises": lambda D, L: D.VonMises(_zeros(L), _zeros(L)),
    "RelaxedBernoulli": lambda D, L: D.RelaxedBernoulli(L.tensor(0.5), _zeros(L) * 0.3),
    "Wishart": lambda D, L: D.Wishart(L.ones(0) * 4, L.eye(2)),
    # torch itself fails in log_prob / construction of these (a reshape of zero elements
    # with -1); ndgrad fails alike, with its own reshape message
    "Multinomial": lambda D, L: D.Multinomial(4, _zeros(L)),
    "LogisticNormal": lambda D, L: D.LogisticNormal(_zeros(L), _zeros(L)),
    "MixtureSameFamily": lambda D, L: D.MixtureSameFamily(D.Categorical(_zeros(L)),
                                                          D.Normal(_zeros(L), _zeros(L))),
}


@pytest.mark.parametrize("name", ZERO_SIZE)
def test_zero_size_batches(name):
    def scenario(lib):
        try:
            d = ZERO_SIZE[name](lib.distributions, lib)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__
        out = [tuple(d.batch_shape), tuple(d.event_shape)]
        for what in ("sample", "rsample", "log_prob", "entropy", "mean", "variance"):
            try:
                r = {"sample": lambda: d.sample((2,)), "rsample": lambda: d.rsample((2,)),
                     "log_prob": lambda: d.log_prob(d.sample()), "entropy": d.entropy,
                     "mean": lambda: d.mean, "variance": lambda: d.variance}[what]()
                out.append((what, tuple(r.shape), str(r.dtype).split(".")[-1]))
            except Exception as e:  # noqa: BLE001
                out.append((what, type(e).__name__))
        return out
    assert scenario(ndgrad) == scenario(torch)
