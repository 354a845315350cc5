"""torch's remaining random samplers (issue 16's surface): ``cauchy_``, ``log_normal_``,
``geometric_``, ``Tensor.bernoulli`` / ``bernoulli``, ``Tensor.multinomial``, ``poisson`` and
``binomial`` draw torch 2.13's exact CPU streams after the same seed (bit for bit), record
torch's nodes and raise torch's errors."""

import numpy as np
import pytest
import torch

import ndgrad
from tests._diff import raises_same, same


def _stream(fn, seed=3):
    """Run ``fn(lib)`` after ``manual_seed(seed)`` in both libraries: equal bits and dtype,
    and the generator left in the same state (the next draw agrees too)."""
    def run(lib):
        lib.manual_seed(seed)
        out = fn(lib)
        return out, lib.rand(3, dtype=lib.float64)
    same(run, rtol=0, atol=0)


_FLOATS = ["float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", _FLOATS)
@pytest.mark.parametrize("n", [5, 1000])
def test_cauchy_log_normal_geometric_streams(dtype, n):
    _stream(lambda lib: lib.empty(n, dtype=getattr(lib, dtype)).cauchy_(0.5, 2.0))
    _stream(lambda lib: lib.empty(n, dtype=getattr(lib, dtype)).cauchy_())
    _stream(lambda lib: lib.empty(n, dtype=getattr(lib, dtype)).log_normal_(0.5, 1.5))
    _stream(lambda lib: lib.empty(n, dtype=getattr(lib, dtype)).log_normal_())
    _stream(lambda lib: lib.empty(n, dtype=getattr(lib, dtype)).geometric_(0.2))


def test_log_normal_shares_the_cached_normal():
    # an odd count leaves the sine half of Box-Muller cached for the next scalar normal draw
    _stream(lambda lib: (lib.empty(7, dtype=lib.float64).log_normal_(),
                         lib.empty(3, dtype=lib.float64).normal_(),
                         lib.empty(2, 2).log_normal_(1.0, 0.5)))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8"])
def test_geometric_integer_dtypes(dtype):
    _stream(lambda lib: lib.empty(500, dtype=getattr(lib, dtype)).geometric_(0.02))


def test_generator_argument():
    def run(lib):
        lib.manual_seed(5)  # the probabilities drawn from the global generator agree too
        g = lib.Generator().manual_seed(11)
        return (lib.empty(20).cauchy_(generator=g), lib.empty(20).log_normal_(generator=g),
                lib.empty(20).geometric_(0.5, generator=g), lib.rand(20).bernoulli(generator=g),
                lib.rand(3, 4).multinomial(2, generator=g),
                lib.poisson(lib.rand(10) * 30, generator=g),
                lib.binomial(lib.full((10,), 40.0), lib.rand(10), generator=g))
    same(run, rtol=0, atol=0)


def test_fill_errors():
    raises_same(lambda lib: lib.zeros(3).geometric_(1.5))
    raises_same(lambda lib: lib.zeros(3).geometric_(0))
    raises_same(lambda lib: lib.zeros(3, dtype=lib.bool).geometric_(0.5))
    raises_same(lambda lib: lib.zeros(3).log_normal_(0, -1))
    raises_same(lambda lib: lib.zeros(3).log_normal_(0, 0))
    raises_same(lambda lib: lib.zeros(3, dtype=lib.long).log_normal_())
    raises_same(lambda lib: lib.zeros(3).cauchy_(0, -1))
    raises_same(lambda lib: lib.zeros(3, dtype=lib.long).cauchy_())
    raises_same(lambda lib: lib.zeros(3, dtype=lib.int32).cauchy_())
    raises_same(lambda lib: lib.zeros(3, dtype=lib.complex64).cauchy_())
    raises_same(lambda lib: lib.zeros(3, requires_grad=True).cauchy_())
    # a refused fill draws nothing: the stream continues as if it had not been called
    for lib in (ndgrad, torch):
        lib.manual_seed(0)
        with pytest.raises(RuntimeError):
            lib.zeros(3).cauchy_(0, -1)
    _stream(lambda lib: lib.rand(4), seed=0)


def test_fill_nodes_and_gradients():
    def run(lib):
        lib.manual_seed(1)
        x = lib.tensor(np.arange(4.0), requires_grad=True)
        outs = [x.clone().cauchy_(), x.clone().log_normal_(), x.clone().geometric_(0.5)]
        (sum(o.sum() for o in outs) + (x * 2).sum()).backward()
        return outs, [type(o.grad_fn).__name__ for o in outs], x.grad
    same(run, rtol=0, atol=0)


def test_bernoulli_method_and_function():
    _stream(lambda lib: (lib.rand(50).bernoulli(), lib.rand(50, dtype=lib.float64).bernoulli(),
                         lib.zeros(7).bernoulli(0.3), lib.bernoulli(lib.rand(9), 0.7),
                         lib.bernoulli(lib.rand(2, 5))))

    def nodes(lib):
        x = lib.tensor([0.2, 0.9], requires_grad=True)
        a, b = x.bernoulli(), lib.bernoulli(x, 0.5)
        a.sum().backward()
        return type(a.grad_fn).__name__, type(b.grad_fn).__name__, x.grad
    same(nodes)
    raises_same(lambda lib: lib.bernoulli(lib.tensor([0.2, 0.9], requires_grad=True), 0.5)
                .sum().backward())
    for lib in (ndgrad, torch):
        with pytest.raises(TypeError, match="bernoulli"):
            lib.zeros(2).bernoulli(lib.zeros(2))


def test_multinomial_method():
    _stream(lambda lib: (lib.rand(4, 5).multinomial(3), lib.rand(6).multinomial(1),
                         lib.rand(4, 5, dtype=lib.float64).multinomial(8, True),
                         lib.rand(5).multinomial(5, replacement=False)))
    raises_same(lambda lib: lib.rand(3).multinomial(4))
    raises_same(lambda lib: lib.tensor([0.5, -1.0]).multinomial(1))

    def grad(lib):
        out = lib.tensor([0.2, 0.9], requires_grad=True).multinomial(2)
        return out.requires_grad, str(out.dtype)
    same(grad)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_stream(dtype):
    rng = np.random.default_rng(0)
    count = np.floor(rng.uniform(0, 200, 600))
    prob = rng.uniform(0, 1, 600)
    # small means (inversion), large ones (BTRS) on both sides of p = 0.5, and the edge cases
    _stream(lambda lib: lib.binomial(lib.tensor(count, dtype=getattr(lib, dtype)),
                                     lib.tensor(prob, dtype=getattr(lib, dtype))))
    _stream(lambda lib: lib.binomial(lib.tensor(count * 50, dtype=getattr(lib, dtype)),
                                     lib.tensor(prob, dtype=getattr(lib, dtype))))
    _stream(lambda lib: lib.binomial(
        lib.tensor([-3.0, 0.0, 5.0, 7.0, 1e6, 12.0], dtype=getattr(lib, dtype)),
        lib.tensor([0.5, 0.5, 1.5, float("nan"), 0.999, 0.0], dtype=getattr(lib, dtype))))
    _stream(lambda lib: lib.binomial(lib.full((2, 3), 30.0, dtype=getattr(lib, dtype)),
                                     lib.tensor([0.1, 0.5, 0.9], dtype=getattr(lib, dtype))))


def test_binomial_nodes_and_errors():
    def run(lib):
        c = lib.tensor([10.0, 5.0], requires_grad=True)
        out = lib.binomial(c, lib.tensor([0.5, 0.1]))
        return type(out.grad_fn).__name__, out.requires_grad
    same(run)
    raises_same(lambda lib: lib.binomial(lib.tensor([10.0], requires_grad=True),
                                         lib.tensor([0.5])).sum().backward())
    raises_same(lambda lib: lib.binomial(lib.tensor([10.0, 5.0]),
                                         lib.tensor([0.5, 0.1], dtype=lib.float64)))
    for lib in (ndgrad, torch):      # torch resizes the count-shaped output, with a warning
        with pytest.warns(UserWarning, match="was resized since it had shape"):
            assert lib.binomial(lib.tensor([10.0]), lib.tensor([1.0, 1.0])).tolist() == \
                [10.0, 10.0]
    for lib in (ndgrad, torch):
        with pytest.raises(ValueError, match="binomial only supports floating-point dtypes"):
            lib.binomial(lib.tensor([10, 5]), lib.tensor([0.5, 0.1]))


@pytest.mark.parametrize("dtype", _FLOATS)
def test_poisson(dtype):
    rates = np.random.default_rng(1).uniform(0, 40, 300)
    rates[:3] = [0.0, 9.99, 10.0]
    _stream(lambda lib: lib.poisson(lib.tensor(rates, dtype=getattr(lib, dtype))))

    def grad(lib):
        r = lib.tensor([1.0, 5.0, 20.0], requires_grad=True)
        lib.manual_seed(0)
        out = lib.poisson(r)
        (out * 3).sum().backward()
        return out, type(out.grad_fn).__name__, r.grad
    same(grad)
    raises_same(lambda lib: lib.poisson(lib.tensor([-1.0, 5.0])))
    raises_same(lambda lib: lib.poisson(lib.tensor([1, 5])))
