"""The transforms added in the second batch (IndependentTransform, ReshapeTransform,
CatTransform, StackTransform, SoftmaxTransform, StickBreakingTransform,
LowerCholeskyTransform, PositiveDefiniteTransform, CorrCholeskyTransform,
CumulativeDistributionTransform) and the biject_to / transform_to registries, against
torch.distributions 2.13: forward, inverse and log-Jacobian values with their gradients,
shapes, domains / codomains, the transform each registry picks for each constraint, and
error messages."""

import numpy as np
import pytest
import torch

import ndgrad
from _dist_compare import R, close, error_of, npy

X3 = R.randn(2, 3)
XM = R.randn(2, 3, 3)

# name -> (transform(T, lib, s) with s a parameter tensor, x, uses s)
TRANSFORMS = {
    "Independent": (lambda T, L, s: T.IndependentTransform(T.AffineTransform(0.5, s), 1), X3),
    "Independent2": (lambda T, L, s: T.IndependentTransform(T.ExpTransform(), 2), X3),
    "Reshape": (lambda T, L, s: T.ReshapeTransform((3,), (3, 1)), X3),
    "Cat": (lambda T, L, s: T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, s[:2])],
                                           dim=-1, lengths=[1, 2]), X3),
    "Cat_batch": (lambda T, L, s: T.CatTransform([T.ExpTransform(), T.SigmoidTransform()],
                                                 dim=0), X3),
    "Cat_event": (lambda T, L, s: T.CatTransform(
        [T.ExpTransform(), T.AffineTransform(0.0, s[:2], event_dim=1)], dim=-1, lengths=[1, 2]),
        X3),
    "Stack": (lambda T, L, s: T.StackTransform([T.ExpTransform(), T.TanhTransform(),
                                                T.AffineTransform(0.0, s[0])], dim=1), X3),
    "Softmax": (lambda T, L, s: T.SoftmaxTransform(), X3),
    "StickBreaking": (lambda T, L, s: T.StickBreakingTransform(), X3),
    "LowerCholesky": (lambda T, L, s: T.LowerCholeskyTransform(), XM),
    "PositiveDefinite": (lambda T, L, s: T.PositiveDefiniteTransform(), XM),
    "CorrCholesky": (lambda T, L, s: T.CorrCholeskyTransform(), X3),
    "CorrCholesky4": (lambda T, L, s: T.CorrCholeskyTransform(), R.randn(5, 6)),
    "CDF": (lambda T, L, s: T.CumulativeDistributionTransform(
        L.distributions.Normal(0.2, s)), X3),
}
NO_LOG_DET = {"Softmax", "LowerCholesky", "PositiveDefinite"}


def _scenario(lib, name):
    T = lib.distributions.transforms
    ctor, x = TRANSFORMS[name]
    s = lib.tensor([0.7, 1.3, 2.0], dtype=lib.float64, requires_grad=True)
    t = ctor(T, lib, s)
    xt = lib.tensor(x, requires_grad=True)
    y = t(xt)
    back = t.inv(y)
    outs = [y, back]
    if name not in NO_LOG_DET:
        outs.append(t.log_abs_det_jacobian(xt, y))
    total = sum((o * lib.tensor(np.linspace(0.5, 1.5, o.numel()).reshape(tuple(o.shape)))).sum()
                for o in outs)
    gx, gs = lib.autograd.grad(total, [xt, s], allow_unused=True)
    shapes = (tuple(t.forward_shape(lib.Size(x.shape))),
              tuple(t.inverse_shape(lib.Size(y.shape))))
    info = (t.bijective, repr(t.domain), repr(t.codomain), t.domain.event_dim,
            t.codomain.event_dim, shapes, repr(t) if name.startswith("Indep") else None)
    return [npy(o) for o in outs] + [npy(gx), None if gs is None else npy(gs)], info


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transform_values_gradients_and_attributes(name):
    ours, theirs = _scenario(ndgrad, name), _scenario(torch, name)
    for a, b in zip(ours[0], theirs[0]):
        close(a, b, 1e-9, 1e-11)
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("name", ["Independent", "Cat", "Stack", "StickBreaking",
                                  "CorrCholesky", "CDF"])
def test_with_cache_returns_the_cached_inverse(name):
    def scenario(lib):
        T = lib.distributions.transforms
        s = lib.tensor([0.7, 1.3, 2.0], dtype=lib.float64)
        t = TRANSFORMS[name][0](T, lib, s).with_cache(1)
        x = lib.tensor(TRANSFORMS[name][1])
        y = t(x)
        return t.inv(y) is x, t(x) is y, t.with_cache(1) is t, type(t).__name__
    assert scenario(ndgrad) == scenario(torch)


def test_equality_and_sign():
    def scenario(lib):
        T = lib.distributions.transforms
        return [T.SoftmaxTransform() == T.SoftmaxTransform(),
                T.StickBreakingTransform() == T.StickBreakingTransform(),
                T.LowerCholeskyTransform() == T.LowerCholeskyTransform(),
                T.PositiveDefiniteTransform() == T.PositiveDefiniteTransform(),
                T.StickBreakingTransform() == T.SoftmaxTransform(),
                T.IndependentTransform(T.ExpTransform(), 1).sign,
                T.CumulativeDistributionTransform(lib.distributions.Normal(0.0, 1.0)).sign]
    assert scenario(ndgrad) == scenario(torch)


def test_corr_cholesky_and_stick_breaking_land_in_their_codomain():
    x0 = np.random.RandomState(41).randn(4, 10) * 3

    def scenario(lib):
        T = lib.distributions.transforms
        C = lib.distributions.constraints
        x = lib.tensor(x0)
        L_ = T.CorrCholeskyTransform()(x)
        p = T.StickBreakingTransform()(x)
        return (npy(C.corr_cholesky.check(L_)), npy(C.simplex.check(p)),
                npy(L_ @ L_.mT).diagonal(axis1=-2, axis2=-1))
    for a, b in zip(scenario(ndgrad), scenario(torch)):
        close(a, b, 1e-12, 1e-12)


CONSTRAINTS = [
    lambda C, L: C.real, lambda C, L: C.positive, lambda C, L: C.nonnegative,
    lambda C, L: C.greater_than(1.5), lambda C, L: C.greater_than_eq(-2.0),
    lambda C, L: C.less_than(3.0), lambda C, L: C.unit_interval,
    lambda C, L: C.interval(-1.0, 2.0), lambda C, L: C.half_open_interval(0.0, 1.0),
    lambda C, L: C.interval(L.tensor([0.0, 1.0, -1.0]), L.tensor([2.0, 3.0, 0.5])),
    lambda C, L: C.simplex, lambda C, L: C.real_vector,
    lambda C, L: C.independent(C.positive, 2), lambda C, L: C.lower_cholesky,
    lambda C, L: C.positive_definite, lambda C, L: C.positive_semidefinite,
    lambda C, L: C.corr_cholesky,
    lambda C, L: C.cat([C.positive, C.real, C.unit_interval], dim=-1, lengths=[1, 1, 1]),
    lambda C, L: C.stack([C.positive, C.unit_interval, C.real], dim=-1),
    lambda C, L: C.boolean, lambda C, L: C.nonnegative_integer,
]


def _apply(lib, t, x):
    xt = lib.tensor(x, requires_grad=True)
    y = t(xt)
    back = t.inv(y)
    out = [npy(y), npy(back)]
    try:
        ladj = t.log_abs_det_jacobian(xt, y)
        out.append(npy(ladj))
        (g,) = lib.autograd.grad((y.sum() + ladj.sum()), [xt])
        out.append(npy(g))
    except NotImplementedError:
        out.append("no log det")
    return out


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("i", range(len(CONSTRAINTS)))
def test_constraint_registries(registry, i):
    def scenario(lib):
        rs = np.random.RandomState(i)     # the same input for both libraries
        D = lib.distributions
        c = CONSTRAINTS[i](D.constraints, lib)
        try:
            t = getattr(D, registry)(c)
        except NotImplementedError as e:
            return str(e)
        parts = t.parts if type(t).__name__ == "ComposeTransform" else [t]
        kinds = [type(p).__name__ for p in parts]
        ed = t.domain.event_dim
        x = XM if ed == 2 else (rs.randn(2, 3) if ed <= 1 else None)
        return kinds, repr(t.codomain), _apply(lib, t, x)
    ours, theirs = scenario(ndgrad), scenario(torch)
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2], theirs[2]):
        if isinstance(b, str):
            assert a == b
        else:
            close(a, b, 1e-9, 1e-11)


def test_registry_register_and_errors():
    def scenario(lib):
        D = lib.distributions
        reg = D.constraint_registry.ConstraintRegistry()
        out = [error_of(lambda: reg(D.constraints.positive)),
               error_of(lambda: reg.register(3, lambda c: None)),
               error_of(lambda: reg.register(int, lambda c: None))]

        @reg.register(D.constraints.positive)
        def _factory(c):
            return D.transforms.ExpTransform()
        out.append(type(reg(D.constraints.greater_than(0.0))).__name__)
        out.append(type(D.biject_to(D.Gamma(1.0, 1.0).support)).__name__)
        out.append(type(D.transform_to(D.Dirichlet(lib.ones(3)).support)).__name__)
        return out
    assert scenario(ndgrad) == scenario(torch)


@pytest.mark.parametrize("case", [
    lambda T, L: T.ReshapeTransform((2, 3), (5,)),
    lambda T, L: T.ReshapeTransform((2, 3), (6,)).forward_shape((3, 3)),
    lambda T, L: T.ReshapeTransform((2, 3), (6,)).inverse_shape(()),
    lambda T, L: T.CatTransform([T.ExpTransform()], lengths=[1, 2]),
    lambda T, L: T.CatTransform([T.ExpTransform(), T.ExpTransform()], dim=0)(L.zeros(3)),
    lambda T, L: T.CatTransform([T.ExpTransform()], dim=2)(L.zeros(3)),
    lambda T, L: T.CatTransform([T.ExpTransform()], dim=0).log_abs_det_jacobian(
        L.zeros(2), L.zeros(1)),
    lambda T, L: T.CatTransform([3]),
    lambda T, L: T.StackTransform([T.ExpTransform()], dim=0)(L.zeros(3)),
    lambda T, L: T.StackTransform([T.ExpTransform()], dim=1)(L.zeros(3)),
    lambda T, L: T.StackTransform([T.ExpTransform()], dim=0).inv(L.zeros(2)),
    lambda T, L: T.StickBreakingTransform().forward_shape(()),
    lambda T, L: T.CorrCholeskyTransform().forward_shape((4,)),
    lambda T, L: T.CorrCholeskyTransform().inverse_shape((3, 4)),
    lambda T, L: T.CorrCholeskyTransform().inverse_shape((3,)),
    lambda T, L: T.CorrCholeskyTransform()(L.zeros(4)),
    lambda T, L: T.IndependentTransform(T.ExpTransform(), 2)(L.zeros(3)),
    lambda T, L: T.SoftmaxTransform().log_abs_det_jacobian(L.zeros(3), L.zeros(3)),
])
def test_transform_errors_match_torch(case):
    theirs = error_of(lambda: case(torch.distributions.transforms, torch))
    assert theirs is not None
    assert error_of(lambda: case(ndgrad.distributions.transforms, ndgrad)) == theirs


def test_positive_definite_round_trip_on_spd_input():
    rs = np.random.RandomState(42)
    m = rs.randn(2, 3, 3)
    a = m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3)

    def scenario(lib):
        t = lib.distributions.transforms.PositiveDefiniteTransform()
        y = lib.tensor(a)
        return npy(t(t.inv(y))), npy(t.inv(y))
    for x, y in zip(scenario(ndgrad), scenario(torch)):
        close(x, y, 1e-10, 1e-12)
