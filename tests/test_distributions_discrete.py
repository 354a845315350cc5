"""The discrete families added in the second batch (Binomial, Multinomial, Geometric,
NegativeBinomial) against torch.distributions 2.13: log_prob / entropy / moments with their
parameter gradients, shapes and expand (also to a zero-size batch), enumerate_support,
seeded sample streams (and the generator state they leave), validation errors and
kl_divergence."""

import numpy as np
import pytest
import torch

import ndgrad
from _dist_compare import Families, R, close, error_of, npy, simplex

_COUNTS = np.array([[3.0, 0.0, 2.0, 5.0], [1.0, 4.0, 0.0, 5.0]])
FAMILIES = {
    "Binomial_probs": (lambda D, L, p: D.Binomial(p["n"], probs=p["probs"]),
                       {"n": np.array([5.0, 10.0, 40.0]), "probs": np.array([0.3, 0.9, 0.5])},
                       np.array([[2.0, 9.0, 17.0], [0.0, 10.0, 40.0]])),
    "Binomial_logits": (lambda D, L, p: D.Binomial(6, logits=p["logits"]),
                        {"logits": R.randn(2, 3) * 2}, np.array([[0.0, 3.0, 6.0]])),
    "Binomial_int": (lambda D, L, p: D.Binomial(25, p["probs"]), {"probs": R.rand(4)},
                     np.array([1.0, 7.0, 25.0, 12.0])),
    "Multinomial": (lambda D, L, p: D.Multinomial(10, probs=p["probs"]),
                    {"probs": simplex(2, 4)}, _COUNTS),
    "Multinomial_logits": (lambda D, L, p: D.Multinomial(10, logits=p["logits"]),
                           {"logits": R.randn(4)}, _COUNTS),
    "Geometric_probs": (lambda D, L, p: D.Geometric(p["probs"]),
                        {"probs": np.array([0.1, 0.5, 0.95, 1.0])},
                        np.array([[0.0, 3.0, 1.0, 0.0], [7.0, 0.0, 2.0, 0.0]])),
    "Geometric_logits": (lambda D, L, p: D.Geometric(logits=p["logits"]),
                         {"logits": R.randn(3)}, np.array([0.0, 2.0, 5.0])),
    "NegativeBinomial": (lambda D, L, p: D.NegativeBinomial(p["n"], p["probs"]),
                         {"n": np.array([0.5, 3.0, 12.0]), "probs": np.array([0.2, 0.6, 0.9])},
                         np.array([[0.0, 4.0, 30.0], [2.0, 0.0, 111.0]])),
    "NegativeBinomial_logits": (lambda D, L, p: D.NegativeBinomial(4.0, logits=p["logits"]),
                                {"logits": R.randn(2, 3)}, np.array([1.0, 0.0, 9.0])),
}
F = Families(FAMILIES)


@pytest.mark.parametrize("name", FAMILIES)
def test_log_prob_value_and_grad(name):
    F.compare(name, lambda d, L: d.log_prob(F.value(L, name)))


@pytest.mark.parametrize("name", [n for n in FAMILIES if not n.startswith("NegativeBinomial")])
def test_entropy_value_and_grad(name):
    F.compare(name, lambda d, L: d.entropy())


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("attr", ["mean", "mode", "variance", "stddev"])
def test_moments(name, attr):
    F.compare(name, lambda d, L: getattr(d, attr))


@pytest.mark.parametrize("name", FAMILIES)
def test_shapes_and_expand(name):
    F.shapes(name)


@pytest.mark.parametrize("name", FAMILIES)
def test_sample_stream_matches_torch(name):
    F.stream(name)


@pytest.mark.parametrize("name", ["Binomial_logits", "Binomial_int"])
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support(name, expand):
    F.compare(name, lambda d, L: d.enumerate_support(expand))


@pytest.mark.parametrize("name", FAMILIES)
def test_support_and_arg_constraints(name):
    def scenario(lib):
        d, _ = F.build(lib, name, False)
        return repr(d.support), sorted((k, repr(v)) for k, v in d.arg_constraints.items())
    ours, theirs = scenario(ndgrad), scenario(torch)
    # a tensor bound prints as the tensor; compare the kind of the support and the rest
    assert ours[0].split("(")[0] == theirs[0].split("(")[0]
    assert ours[1] == theirs[1]


def test_binomial_support_bounds_and_multinomial_support():
    def scenario(lib):
        D = lib.distributions
        b = D.Binomial(lib.tensor([3.0, 5.0]), lib.tensor([0.5, 0.5]))
        m = D.Multinomial(4, lib.tensor([0.5, 0.5]))
        return (npy(b.support.check(lib.tensor([[3.0, 4.0], [-1.0, 2.5]]))),
                npy(m.support.check(lib.tensor([[4.0, 0.0], [3.0, 2.0]]))),
                b.support.upper_bound.tolist(), m.support.upper_bound)
    ours, theirs = scenario(ndgrad), scenario(torch)
    for a, b in zip(ours[:2], theirs[:2]):
        np.testing.assert_array_equal(a, b)
    assert ours[2:] == theirs[2:]


@pytest.mark.parametrize("case", [
    lambda D, L: D.Binomial(5),
    lambda D, L: D.Binomial(5, probs=L.tensor([0.5]), logits=L.tensor([0.0])),
    lambda D, L: D.Binomial(L.tensor([2.5]), L.tensor([0.5])),
    lambda D, L: D.Binomial(L.tensor([-1.0]), L.tensor([0.5])),
    lambda D, L: D.Binomial(3, L.tensor([1.5])),
    lambda D, L: D.Binomial(3, L.tensor([0.5])).log_prob(L.tensor([4.0])),
    lambda D, L: D.Binomial(L.tensor([3.0, 4.0]), L.tensor([0.5, 0.5])).entropy(),
    lambda D, L: D.Binomial(L.tensor([3.0, 4.0]), L.tensor([0.5, 0.5])).enumerate_support(),
    lambda D, L: D.Multinomial(L.tensor(3), L.tensor([0.5, 0.5])),
    lambda D, L: D.Multinomial(3, L.tensor([0.5, -0.5])),
    lambda D, L: D.Multinomial(3, L.tensor([0.5, 0.5])).log_prob(L.tensor([-1.0, 2.0])),
    lambda D, L: D.Multinomial(3, L.tensor([0.5, 0.5])).log_prob(L.tensor([1.0, 2.0, 0.0])),
    lambda D, L: D.Geometric(L.tensor([0.0, 0.5])),
    lambda D, L: D.Geometric(L.tensor([1.5])),
    lambda D, L: D.Geometric(),
    lambda D, L: D.Geometric(L.tensor([0.5])).log_prob(L.tensor([1.5])),
    lambda D, L: D.NegativeBinomial(L.tensor([2.0]), L.tensor([1.0])),
    lambda D, L: D.NegativeBinomial(L.tensor([-2.0]), L.tensor([0.5])),
    lambda D, L: D.NegativeBinomial(2.0, L.tensor([0.5])).log_prob(L.tensor([-1.0])),
])
def test_validation_errors_match_torch(case):
    theirs = error_of(lambda: case(torch.distributions, torch))
    assert theirs is not None
    assert error_of(lambda: case(ndgrad.distributions, ndgrad)) == theirs


KL_PAIRS = [("Binomial_probs", "Binomial_probs"), ("Geometric_logits", "Geometric_logits"),
            ("Geometric_probs", "Geometric_probs")]


@pytest.mark.parametrize("pname,qname", KL_PAIRS)
def test_kl_divergence_value_and_grad(pname, qname):
    def scenario(lib):
        p, tp = F.build(lib, pname)
        ctor, params, _ = FAMILIES[qname]
        tq = {k: lib.tensor(np.asarray(v) * 0.8 if k != "n" else v, requires_grad=True)
              for k, v in params.items()}
        q = ctor(lib.distributions, lib, tq)
        kl = lib.distributions.kl_divergence(p, q)
        leaves = [t for t in list(tp.values()) + list(tq.values()) if t.requires_grad]
        fin = lib.isfinite(kl)
        gs = lib.autograd.grad(lib.where(fin, kl, 0.0).sum(), leaves, allow_unused=True)
        return [npy(kl)] + [None if g is None else npy(g) for g in gs]
    for a, b in zip(scenario(ndgrad), scenario(torch)):
        close(a, b, 1e-7, 1e-10)


def test_kl_binomial_count_cases_and_poisson_binomial():
    def scenario(lib):
        D = lib.distributions
        p = D.Binomial(lib.tensor([5.0, 7.0]), lib.tensor([0.3, 0.6]))
        q = D.Binomial(lib.tensor([5.0, 6.0]), lib.tensor([0.4, 0.5]))
        inf = D.kl_divergence(p, q)
        err = error_of(lambda: D.kl_divergence(q, p))
        pb = D.kl_divergence(D.Poisson(lib.tensor([2.0, 3.0])), q)
        return npy(inf), err, npy(pb)
    ours, theirs = scenario(ndgrad), scenario(torch)
    close(ours[0], theirs[0])
    assert ours[1] == theirs[1]
    close(ours[2], theirs[2])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_count_streams(dtype):
    def scenario(lib):
        D = lib.distributions
        dt = getattr(lib, dtype)
        p = lib.tensor(np.linspace(0.05, 0.95, 12), dtype=dt)
        lib.manual_seed(21)
        return [npy(D.Binomial(lib.tensor(200.0, dtype=dt), p).sample((3,))),
                npy(D.Multinomial(50, p.reshape(3, 4)).sample((2,))),
                npy(D.Geometric(p).sample((2,))),
                npy(D.NegativeBinomial(lib.tensor(30.0, dtype=dt), p * 0.9).sample((2,)))]
    for a, b in zip(scenario(ndgrad), scenario(torch)):
        close(a, b, 0, 0)
