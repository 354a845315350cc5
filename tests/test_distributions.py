"""ndgrad.distributions against torch.distributions 2.13: log_prob / entropy / cdf / icdf
values and their gradients with respect to the parameters, moments, shapes and expand,
seeded sample / rsample streams and rsample gradients, argument and sample validation
errors, and kl_divergence values and gradients."""

import numpy as np
import pytest
import torch

import ndgrad

R = np.random.RandomState(1234)


def _pos(*shape):
    return R.rand(*shape) + 0.5


def _simplex(*shape):
    p = R.rand(*shape) + 0.1
    return p / p.sum(-1, keepdims=True)


def _spd(n, batch=()):
    a = R.randn(*batch, n, n)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _tril(n, batch=()):
    return np.linalg.cholesky(_spd(n, batch))


_LOW, _WIDTH = R.randn(3), _pos(3)
# name -> (constructor(D, lib, params), params, value for log_prob / cdf)
FAMILIES = {
    "Normal": (lambda D, L, p: D.Normal(p["loc"], p["scale"]),
               {"loc": R.randn(3), "scale": _pos(3)}, R.randn(4, 3)),
    "Normal_scalar": (lambda D, L, p: D.Normal(0.5, p["scale"]),
                      {"scale": _pos(2, 1)}, R.randn(2, 3)),
    "Bernoulli_probs": (lambda D, L, p: D.Bernoulli(probs=p["probs"]),
                        {"probs": R.rand(5)}, (R.rand(3, 5) > 0.5) * 1.0),
    "Bernoulli_logits": (lambda D, L, p: D.Bernoulli(logits=p["logits"]),
                         {"logits": R.randn(2, 5)}, (R.rand(2, 5) > 0.5) * 1.0),
    "Categorical_probs": (lambda D, L, p: D.Categorical(probs=p["probs"]),
                          {"probs": _simplex(3, 4)}, R.randint(0, 4, (2, 3))),
    "Categorical_logits": (lambda D, L, p: D.Categorical(logits=p["logits"]),
                           {"logits": R.randn(3, 4)}, R.randint(0, 4, (3,))),
    "Uniform": (lambda D, L, p: D.Uniform(p["low"], p["low"] + p["width"]),
                {"low": _LOW, "width": _WIDTH}, _LOW + _WIDTH * R.rand(2, 3)),
    "Exponential": (lambda D, L, p: D.Exponential(p["rate"]),
                    {"rate": _pos(3)}, _pos(2, 3)),
    "Laplace": (lambda D, L, p: D.Laplace(p["loc"], p["scale"]),
                {"loc": R.randn(3), "scale": _pos(3)}, R.randn(2, 3)),
    "Independent": (lambda D, L, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1),
                    {"loc": R.randn(2, 3), "scale": _pos(2, 3)}, R.randn(2, 3)),
    "OneHotCategorical": (lambda D, L, p: D.OneHotCategorical(probs=p["probs"]),
                          {"probs": _simplex(2, 4)}, np.eye(4)[R.randint(0, 4, (3, 2))]),
    "MVN_cov": (lambda D, L, p: D.MultivariateNormal(p["loc"], covariance_matrix=p["cov"]),
                {"loc": R.randn(2, 3), "cov": _spd(3)}, R.randn(4, 2, 3)),
    "MVN_prec": (lambda D, L, p: D.MultivariateNormal(p["loc"], precision_matrix=p["prec"]),
                 {"loc": R.randn(3), "prec": _spd(3, (2,))}, R.randn(2, 3)),
    "MVN_tril": (lambda D, L, p: D.MultivariateNormal(p["loc"], scale_tril=p["tril"]),
                 {"loc": R.randn(3), "tril": _tril(3)}, R.randn(5, 3)),
    "LowRankMVN": (lambda D, L, p: D.LowRankMultivariateNormal(p["loc"], p["W"], p["D"]),
                   {"loc": R.randn(2, 4), "W": R.randn(4, 2), "D": _pos(4)}, R.randn(3, 2, 4)),
    "Beta": (lambda D, L, p: D.Beta(p["a"], p["b"]),
             {"a": _pos(3) * 2, "b": _pos(3)}, R.rand(2, 3) * 0.9 + 0.05),
    "Gamma": (lambda D, L, p: D.Gamma(p["a"], p["rate"]),
              {"a": _pos(3) * 2, "rate": _pos(3)}, _pos(2, 3)),
    "Dirichlet": (lambda D, L, p: D.Dirichlet(p["c"]),
                  {"c": _pos(2, 4) * 2}, _simplex(2, 4)),
    "Poisson": (lambda D, L, p: D.Poisson(p["rate"]),
                {"rate": _pos(3) * 4}, R.randint(0, 6, (2, 3)) * 1.0),
    "LogNormal": (lambda D, L, p: D.LogNormal(p["loc"], p["scale"]),
                  {"loc": R.randn(3), "scale": _pos(3)}, _pos(2, 3)),
    "HalfNormal": (lambda D, L, p: D.HalfNormal(p["scale"]),
                   {"scale": _pos(2, 3)}, _pos(2, 3)),
    "Gumbel": (lambda D, L, p: D.Gumbel(p["loc"], p["scale"]),
               {"loc": R.randn(3), "scale": _pos(3)}, R.randn(2, 3)),
    "Transformed_lognormal": (
        lambda D, L, p: D.TransformedDistribution(D.Normal(p["loc"], p["scale"]),
                                                  [D.ExpTransform()]),
        {"loc": R.randn(3), "scale": _pos(3)}, _pos(2, 3)),
    "Transformed_compose": (
        lambda D, L, p: D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]),
            D.ComposeTransform([D.AffineTransform(0.3, p["s"]), D.TanhTransform(),
                                D.AffineTransform(1.0, -2.0)])),
        {"loc": R.randn(3), "scale": _pos(3), "s": _pos(3)}, R.rand(2, 3) * 3.6 - 1.8 + 1.0),
    "Transformed_sigmoid": (
        lambda D, L, p: D.TransformedDistribution(
            D.Laplace(p["loc"], p["scale"]),
            [D.SigmoidTransform(), D.AffineTransform(p["loc"], 2.0)]),
        {"loc": R.randn(3), "scale": _pos(3)}, None),
    "Transformed_event": (
        lambda D, L, p: D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]), D.AffineTransform(p["loc"], p["scale"], 1)),
        {"loc": R.randn(2, 3), "scale": _pos(2, 3)}, R.randn(4, 2, 3)),
}
FLOAT_PARAMS = ("loc", "scale", "probs", "logits", "low", "width", "rate", "cov", "prec",
                "tril", "W", "D", "a", "b", "c", "s")
# torch's _standard_gamma_grad / _dirichlet_grad are approximations (see _sampling.py)
RSAMPLE_TOL = {"Beta": 1e-3, "Gamma": 1e-4, "Dirichlet": 1e-3}


def _build(lib, name, requires_grad=True):
    ctor, params, _ = FAMILIES[name]
    tens = {k: lib.tensor(v, requires_grad=requires_grad) for k, v in params.items()}
    return ctor(lib.distributions, lib, tens), tens


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _grads(tens, out, lib):
    w = lib.tensor(np.linspace(0.3, 1.7, out.numel()).reshape(tuple(out.shape)))
    leaves = [t for t in tens.values()]
    gs = lib.autograd.grad((out * w).sum(), leaves, allow_unused=True)
    return [None if g is None else _np(g) for g in gs]


def _close(a, b, rtol=1e-7, atol=1e-9):
    if a is None or b is None:
        assert a is None and b is None
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def _value(lib, name):
    value = FAMILIES[name][2]
    if value is None:
        return None
    dt = lib.long if name.startswith("Categorical") else lib.float64
    return lib.tensor(value, dtype=dt)


def _each(lib, name, fn):
    d, tens = _build(lib, name)
    try:
        out = fn(d, lib)
    except NotImplementedError:
        return "NotImplemented"
    if not isinstance(out, lib.Tensor):
        return out
    if out.requires_grad:
        try:
            return _np(out), _grads(tens, out, lib)
        except NotImplementedError as e:   # e.g. igamma has no derivative in its first input
            return _np(out), str(e)
    return _np(out), None


def _both(name, fn, rtol=1e-7, atol=1e-9):
    ours, theirs = _each(ndgrad, name, fn), _each(torch, name, fn)
    if isinstance(theirs, str) or not isinstance(theirs, tuple):
        assert ours == theirs
        return
    _close(ours[0], theirs[0], rtol, atol)
    if theirs[1] is None or isinstance(theirs[1], str):
        assert ours[1] == theirs[1]
    else:
        for a, b in zip(ours[1], theirs[1]):
            _close(a, b, rtol, atol)


@pytest.mark.parametrize("name", FAMILIES)
def test_log_prob_value_and_grad(name):
    if FAMILIES[name][2] is None:
        _both(name, lambda d, L: d.log_prob(d.sample((2,))) * 0)
        return
    _both(name, lambda d, L: d.log_prob(_value(L, name)))


@pytest.mark.parametrize("name", FAMILIES)
def test_entropy_value_and_grad(name):
    _both(name, lambda d, L: d.entropy())


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("attr", ["mean", "mode", "variance", "stddev"])
def test_moments(name, attr):
    _both(name, lambda d, L: getattr(d, attr))


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Exponential", "Laplace", "Gamma",
                                  "Transformed_lognormal", "Transformed_compose", "LogNormal",
                                  "HalfNormal", "Gumbel"])
def test_cdf_value_and_grad(name):
    _both(name, lambda d, L: d.cdf(_value(L, name)))


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Exponential", "Laplace",
                                  "Transformed_lognormal", "Transformed_compose", "LogNormal",
                                  "HalfNormal", "Gumbel"])
def test_icdf_value_and_grad(name):
    q = np.array([[[0.1, 0.5, 0.93]], [[0.25, 0.7, 0.01]]])
    _both(name, lambda d, L: d.icdf(L.tensor(q)))


@pytest.mark.parametrize("name", FAMILIES)
def test_shapes_and_expand(name):
    def scenario(lib):
        d, _ = _build(lib, name, requires_grad=False)
        batch = tuple(d.batch_shape)
        e = d.expand((2,) + batch)
        return (tuple(d.batch_shape), tuple(d.event_shape), d.has_rsample,
                tuple(e.batch_shape), tuple(e.event_shape),
                tuple(e.sample((3,)).shape), tuple(d.sample().shape),
                tuple(e.log_prob(e.sample()).shape), type(e).__name__)
    assert scenario(ndgrad) == scenario(torch)


@pytest.mark.parametrize("name", FAMILIES)
def test_sample_stream_matches_torch(name):
    def scenario(lib):
        d, _ = _build(lib, name, requires_grad=False)
        lib.manual_seed(7)
        a = d.sample((3, 2))
        b = d.sample()
        return _np(a), _np(b), str(a.dtype).split(".")[-1]
    ours, theirs = scenario(ndgrad), scenario(torch)
    assert ours[2] == theirs[2]
    _close(ours[0], theirs[0], 1e-12, 1e-12)
    _close(ours[1], theirs[1], 1e-12, 1e-12)


@pytest.mark.parametrize("name", [n for n in FAMILIES
                                  if _build(torch, n, False)[0].has_rsample])
def test_rsample_stream_and_grad(name):
    tol = RSAMPLE_TOL.get(name, 1e-7)

    def fn(d, lib):
        lib.manual_seed(3)
        return d.rsample((2,))
    ours, theirs = _each(ndgrad, name, fn), _each(torch, name, fn)
    _close(ours[0], theirs[0], 1e-10, 1e-12)
    for a, b in zip(ours[1], theirs[1]):
        _close(a, b, tol, 1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("family", ["Normal", "Uniform", "Exponential", "Laplace", "Gamma",
                                    "Beta", "Bernoulli", "Poisson", "Categorical", "MVN"])
def test_seeded_streams_float32_and_larger(family, dtype):
    pos = _pos(20)

    def scenario(lib):
        D = lib.distributions
        dt = getattr(lib, dtype)
        p = lib.tensor(pos, dtype=dt)
        d = {"Normal": lambda: D.Normal(p, p), "Uniform": lambda: D.Uniform(-p, p),
             "Exponential": lambda: D.Exponential(p), "Laplace": lambda: D.Laplace(p, p),
             "Gamma": lambda: D.Gamma(p * 0.5, p), "Beta": lambda: D.Beta(p, p * 2),
             "Bernoulli": lambda: D.Bernoulli(p / 2), "Poisson": lambda: D.Poisson(p * 8),
             "Categorical": lambda: D.Categorical(p.reshape(4, 5)),
             "MVN": lambda: D.MultivariateNormal(p[:3], lib.diag(p[3:6]))}[family]()
        lib.manual_seed(11)
        out = [d.sample((5,))]
        if d.has_rsample:
            out.append(d.rsample((3,)))
        return [_np(o) for o in out]
    for a, b in zip(scenario(ndgrad), scenario(torch)):
        assert a.dtype == b.dtype
        # same uniforms / normals; MVN: matmul rounding; Laplace: ndgrad's log1p (NumPy's)
        # is an ulp off torch's at times, which the cancellation in loc - scale * ... shows
        f32 = dtype == "float32"
        tol = {"MVN": (1e-6, 0) if f32 else (1e-15, 0),
               "Laplace": (1e-5, 1e-6) if f32 else (1e-14, 1e-15)}
        _close(a, b, *tol.get(family, (0, 0)))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", [
    lambda D, L: D.Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0])),
    lambda D, L: D.Normal(0.0, L.tensor(0.0)),
    lambda D, L: D.Bernoulli(probs=L.tensor([0.5, 1.5])),
    lambda D, L: D.Bernoulli(probs=L.tensor([0.5]), logits=L.tensor([0.0])),
    lambda D, L: D.Categorical(probs=L.tensor([[0.5, -0.1]])),
    lambda D, L: D.Categorical(probs=L.tensor(0.5)),
    lambda D, L: D.Uniform(L.tensor([0.0, 1.0]), L.tensor([1.0, 1.0])),
    lambda D, L: D.Exponential(L.tensor([-1.0])),
    lambda D, L: D.Laplace(L.tensor([0.0]), L.tensor([0.0])),
    lambda D, L: D.Gamma(L.tensor([-1.0]), L.tensor([1.0])),
    lambda D, L: D.Beta(L.tensor([1.0]), L.tensor([0.0])),
    lambda D, L: D.Dirichlet(L.tensor([1.0, -2.0])),
    lambda D, L: D.Dirichlet(L.tensor(1.0)),
    lambda D, L: D.Poisson(L.tensor([-1.0])),
    lambda D, L: D.MultivariateNormal(L.tensor([0.0, 0.0]),
                                      covariance_matrix=L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda D, L: D.MultivariateNormal(L.tensor([0.0, 0.0]),
                                      scale_tril=L.tensor([[1.0, 0.0], [2.0, -1.0]])),
    lambda D, L: D.MultivariateNormal(L.tensor(0.0), covariance_matrix=L.eye(2)),
    lambda D, L: D.MultivariateNormal(L.zeros(2)),
    lambda D, L: D.MultivariateNormal(L.zeros(2), scale_tril=L.ones(2)),
    lambda D, L: D.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.tensor([1.0, -1.0])),
    lambda D, L: D.LowRankMultivariateNormal(L.zeros(2), L.ones(3, 1), L.ones(2)),
    lambda D, L: D.Independent(D.Normal(L.zeros(2), L.ones(2)), 2),
    lambda D, L: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
    lambda D, L: D.Normal(0.0, 1.0).log_prob(0.5),
    lambda D, L: D.Normal(L.zeros(3), L.ones(3)).log_prob(L.zeros(2)),
    lambda D, L: D.Exponential(L.ones(2)).log_prob(L.tensor([1.0, -1.0])),
    lambda D, L: D.Bernoulli(L.tensor([0.3, 0.4])).log_prob(L.tensor([0.0, 0.5])),
    lambda D, L: D.Categorical(L.ones(3)).log_prob(L.tensor(3)),
    lambda D, L: D.Dirichlet(L.ones(3)).log_prob(L.ones(2)),
    lambda D, L: D.Dirichlet(L.ones(3)).log_prob(L.tensor([0.5, 0.6, 0.1])),
    lambda D, L: D.MultivariateNormal(L.zeros(2), L.eye(2)).log_prob(L.zeros(3)),
    lambda D, L: D.Uniform(0.0, 1.0).log_prob(L.tensor(1.5)),
    lambda D, L: D.Poisson(L.ones(2)).log_prob(L.tensor([1.0, 1.5])),
    lambda D, L: D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.3)),
    lambda D, L: D.transforms.Transform(cache_size=2),
])
def test_validation_errors_match_torch(case):
    ours = _error(lambda: case(ndgrad.distributions, ndgrad))
    theirs = _error(lambda: case(torch.distributions, torch))
    assert theirs is not None
    assert ours == theirs


def test_validation_can_be_disabled_per_instance_and_globally():
    for lib in (ndgrad, torch):
        D = lib.distributions
        d = D.Normal(lib.tensor([0.0]), lib.tensor([-1.0]), validate_args=False)
        assert np.isnan(_np(d.log_prob(lib.tensor([0.5]))))[0]
        D.Distribution.set_default_validate_args(False)
        try:
            D.Exponential(lib.tensor([-1.0])).log_prob(lib.tensor([-2.0]))
        finally:
            D.Distribution.set_default_validate_args(True)
        with pytest.raises(ValueError):
            D.Exponential(lib.tensor([-1.0]))
        with pytest.raises(ValueError):
            D.Distribution.set_default_validate_args(2)


def test_distribution_reprs_and_constraint_reprs():
    def scenario(lib):
        D, C = lib.distributions, lib.distributions.constraints
        out = [repr(D.Normal(0.0, 1.0)), repr(D.Normal(lib.zeros(2), lib.ones(2))),
               repr(D.Categorical(logits=lib.zeros(3))),
               repr(D.Independent(D.Normal(lib.zeros(2), lib.ones(2)), 1))]
        out += [repr(c) for c in (C.real, C.positive, C.nonnegative, C.unit_interval,
                                  C.simplex, C.boolean, C.real_vector, C.lower_cholesky,
                                  C.positive_definite, C.nonnegative_integer,
                                  C.integer_interval(0, 3), C.interval(-1.0, 2.0),
                                  C.greater_than(2.0), C.half_open_interval(0.0, 1.0),
                                  D.Uniform(0.0, 2.0).support, D.Categorical(lib.ones(4)).support)]
        out.append(repr(D.Uniform(0.0, 2.0).arg_constraints["low"]))
        out.append(C.is_dependent(D.Categorical(lib.ones(2)).support))
        return out
    assert scenario(ndgrad) == scenario(torch)


@pytest.mark.parametrize("cname,value", [
    ("real", [0.0, np.nan, np.inf]), ("positive", [0.0, 1.0, -1.0]),
    ("nonnegative", [0.0, 1.0, -1.0]), ("unit_interval", [0.0, 1.0, 1.5]),
    ("boolean", [0.0, 1.0, 0.5]), ("nonnegative_integer", [0.0, 2.0, 2.5, -1.0]),
    ("simplex", [[0.2, 0.8], [0.5, 0.6]]), ("one_hot", [[0.0, 1.0], [1.0, 1.0]]),
    ("lower_cholesky", [[[1.0, 0.0], [2.0, 1.0]], [[1.0, 1.0], [0.0, 1.0]]]),
    ("positive_definite", [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("real_vector", [[0.0, 1.0], [np.nan, 1.0]]),
])
def test_constraint_checks(cname, value):
    ours = getattr(ndgrad.distributions.constraints, cname).check(ndgrad.tensor(value))
    theirs = getattr(torch.distributions.constraints, cname).check(torch.tensor(value))
    np.testing.assert_array_equal(_np(ours), _np(theirs))


KL_PAIRS = [
    ("Normal", "Normal"), ("Bernoulli_probs", "Bernoulli_probs"),
    ("Bernoulli_logits", "Bernoulli_logits"),
    ("Categorical_probs", "Categorical_logits"), ("Exponential", "Exponential"),
    ("Laplace", "Laplace"), ("Independent", "Independent"), ("Beta", "Beta"),
    ("Gamma", "Gamma"), ("Dirichlet", "Dirichlet"), ("Poisson", "Poisson"),
    ("MVN_cov", "MVN_tril"), ("MVN_prec", "MVN_cov"), ("LowRankMVN", "LowRankMVN"),
    ("OneHotCategorical", "OneHotCategorical"), ("Uniform", "Uniform"),
    ("Transformed_lognormal", "Transformed_lognormal"), ("LogNormal", "LogNormal"),
    ("HalfNormal", "HalfNormal"), ("Gumbel", "Gumbel"),
    ("Exponential", "Gamma"), ("Exponential", "Normal"), ("Gamma", "Exponential"),
    ("Laplace", "Normal"), ("Normal", "Laplace"), ("Uniform", "Normal"),
    ("Uniform", "Exponential"), ("Normal", "Exponential"), ("Laplace", "Beta"),
]


@pytest.mark.parametrize("pname,qname", KL_PAIRS)
def test_kl_divergence_value_and_grad(pname, qname):
    R2 = np.random.RandomState(5)

    def scenario(lib):
        p, tp = _build(lib, pname)
        ctor, params, _ = FAMILIES[qname]
        # a second parameter set for q, perturbed so p != q
        tq = {k: lib.tensor(v * (1.0 + 0.2 * R2.rand(*np.shape(v))) if k not in
                            ("probs", "c", "cov", "prec", "tril") else v, requires_grad=True)
              for k, v in params.items()}
        q = ctor(lib.distributions, lib, tq)
        kl = lib.distributions.kl_divergence(p, q)
        leaves = list(tp.values()) + list(tq.values())
        if not kl.requires_grad:
            return _np(kl), []
        w = lib.tensor(np.linspace(0.5, 1.5, kl.numel()).reshape(tuple(kl.shape)))
        gs = lib.autograd.grad((w * kl).sum(), leaves, allow_unused=True)
        return _np(kl), [None if g is None else _np(g) for g in gs]
    state = R2.get_state()
    ours = scenario(ndgrad)
    R2.set_state(state)
    theirs = scenario(torch)
    _close(ours[0], theirs[0], 1e-7, 1e-9)
    for a, b in zip(ours[1], theirs[1]):
        _close(a, b, 1e-6, 1e-9)


def test_kl_infinite_cases_and_register_kl_dispatch():
    def scenario(lib):
        D = lib.distributions
        out = [D.kl_divergence(D.Uniform(lib.tensor([0.0]), lib.tensor([2.0])),
                               D.Uniform(lib.tensor([0.5]), lib.tensor([3.0]))),
               D.kl_divergence(D.Bernoulli(lib.tensor([0.0, 0.3])),
                               D.Bernoulli(lib.tensor([0.5, 0.0]))),
               D.kl_divergence(D.Categorical(lib.tensor([0.5, 0.5])),
                               D.Categorical(lib.tensor([1.0, 0.0])))]
        return [_np(o) for o in out]
    for a, b in zip(scenario(ndgrad), scenario(torch)):
        np.testing.assert_array_equal(a, b)
    D = ndgrad.distributions

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return ndgrad.tensor(42.0)
    try:
        assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0))) == 42.0
        assert float(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0))) == 0.0
        assert float(D.kl_divergence(MyNormal(0.0, 1.0), MyNormal(0.0, 1.0))) == 42.0
    finally:
        from ndgrad.distributions import kl
        del kl._KL_REGISTRY[MyNormal, D.Normal]
        kl._KL_MEMOIZE.clear()


def test_lazy_parameterisations_and_derived_matrices():
    def scenario(lib):
        D = lib.distributions
        b = D.Bernoulli(logits=lib.tensor([0.3, -2.0], dtype=lib.float64))
        c = D.Categorical(probs=lib.tensor([[1.0, 2.0, 3.0]], dtype=lib.float64))
        m = D.MultivariateNormal(lib.tensor(FAMILIES["MVN_prec"][1]["loc"]),
                                 precision_matrix=lib.tensor(FAMILIES["MVN_prec"][1]["prec"]))
        lr = _build(lib, "LowRankMVN", False)[0]
        return [_np(x) for x in (b.probs, c.logits, c.probs, m.scale_tril, m.covariance_matrix,
                                 m.precision_matrix, lr.covariance_matrix, lr.precision_matrix,
                                 lr.scale_tril, c.enumerate_support(),
                                 b.enumerate_support(expand=False), b.perplexity())]
    for a, b in zip(scenario(ndgrad), scenario(torch)):
        _close(a, b, 1e-8, 1e-10)


@pytest.mark.parametrize("tname", ["ExpTransform", "SigmoidTransform", "TanhTransform",
                                   "AffineTransform", "ComposeTransform", "SoftplusTransform",
                                   "PowerTransform"])
def test_transforms_forward_inverse_and_log_det(tname):
    x = np.linspace(-2.0, 2.0, 7)

    def scenario(lib):
        T = lib.distributions.transforms
        s = lib.tensor(np.linspace(0.5, 2.0, 7), requires_grad=True)
        t = {"ExpTransform": lambda: T.ExpTransform(),
             "SigmoidTransform": lambda: T.SigmoidTransform(),
             "TanhTransform": lambda: T.TanhTransform(),
             "AffineTransform": lambda: T.AffineTransform(1.5, s),
             "SoftplusTransform": lambda: T.SoftplusTransform(),
             "PowerTransform": lambda: T.ComposeTransform(
                 [T.ExpTransform(), T.PowerTransform(s)]),
             "ComposeTransform": lambda: T.ComposeTransform(
                 [T.AffineTransform(0.2, s), T.ExpTransform(), T.AffineTransform(-1.0, -3.0)]),
             }[tname]()
        xt = lib.tensor(x, requires_grad=True)
        y = t(xt)
        back = t.inv(y)
        ladj = t.log_abs_det_jacobian(xt, y)
        g = lib.autograd.grad((y + ladj).sum(), [xt, s], allow_unused=True)
        return [_np(y), _np(back), _np(ladj), _np(g[0]), None if g[1] is None else _np(g[1]),
                t.bijective,
                t.event_dim, repr(t.domain), repr(t.codomain), t == t.inv.inv]
    ours, theirs = scenario(ndgrad), scenario(torch)
    for a, b in zip(ours[:5], theirs[:5]):
        _close(a, b, 1e-10, 1e-12)
    assert ours[5:] == theirs[5:]


def test_standard_gamma_and_dirichlet_gradients_follow_torch():
    from ndgrad.distributions import _sampling
    alpha = np.array([0.05, 0.3, 1.0, 2.5, 7.0, 40.0, 300.0])
    # a fixed sample (its own generator): torch's approximation error depends on the point
    x = torch._standard_gamma(torch.tensor(alpha).repeat(3),
                              generator=torch.Generator().manual_seed(0))
    ours = _sampling.standard_gamma_grad_array(x.numpy(), np.tile(alpha, 3))
    theirs = torch._standard_gamma_grad(torch.tensor(alpha).repeat(3), x).numpy()
    # torch's kernel is itself an approximation (a few 1e-5 relative at worst here)
    np.testing.assert_allclose(ours, theirs, rtol=3e-4)
    xs = np.array([0.3, 0.6, 0.1, 0.9, 0.01, 0.5])
    a = np.array([1.5, 2.0, 0.7, 3.0, 0.2, 20.0])
    tot = np.array([4.0, 3.0, 5.0, 3.5, 8.0, 45.0])
    ours = _sampling.dirichlet_grad_array(xs, a, tot)
    theirs = torch._dirichlet_grad(*(torch.tensor(v) for v in (xs, a, tot))).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=3e-4)


@pytest.mark.parametrize("family", ["Gamma", "Dirichlet", "Poisson"])
def test_kernel_samplers_leave_torchs_generator_state(family):
    # the kernels read uniforms in blocks and rewind: the next draws (including the cached
    # Box-Muller normal used by randn of fewer than 16 values) continue torch's stream
    def scenario(lib):
        D = lib.distributions
        c = lib.tensor(np.linspace(0.2, 9.0, 3000).reshape(1000, 3))
        d = {"Gamma": lambda: D.Gamma(c, 1.0), "Dirichlet": lambda: D.Dirichlet(c),
             "Poisson": lambda: D.Poisson(c * 3)}[family]()
        lib.manual_seed(5)
        a = d.sample()
        return _np(a), _np(lib.randn(3)), _np(lib.rand(2, dtype=lib.float64)), _np(d.sample())
    for a, b in zip(scenario(ndgrad), scenario(torch)):
        _close(a, b, 0, 0)


def test_kernel_that_raises_leaves_the_generator_untouched():
    from ndgrad.distributions import _sampling
    ndgrad.manual_seed(9)
    ndgrad.randn(1)                       # leaves a cached Box-Muller normal
    before = ndgrad.get_rng_state().numpy().copy()

    def kernel(v, draws):
        draws.uniform()
        draws.normal()
        if v > 1:
            raise ZeroDivisionError("kernel failed")
        return v
    with pytest.raises(ZeroDivisionError):
        _sampling._run(kernel, [1.0, 2.0])
    np.testing.assert_array_equal(ndgrad.get_rng_state().numpy(), before)
    torch.manual_seed(9)
    torch.randn(1)
    assert float(ndgrad.randn(1)) == float(torch.randn(1))
