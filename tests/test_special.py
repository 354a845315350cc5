"""ndgrad.special against torch.special: values and gradients."""

import numpy as np
import pytest

from _diff import same, t

_X = np.array([0.05, 0.3, 0.7, 1.5, 3.0])


@pytest.mark.parametrize("name", ["erf", "erfc", "expit", "logit", "digamma", "psi", "gammaln",
                                  "log1p", "expm1", "exp2", "sinc", "ndtr", "log_ndtr",
                                  "entr", "round"])
def test_unary_special(name):
    def f(lib):
        x = t(lib, _X if name != "logit" else _X / 4, True)
        y = getattr(lib.special, name)(x)
        if name == "round":
            return [y]
        y.sum().backward()
        return [y, x.grad]
    same(f, rtol=1e-6, atol=1e-7)


def test_binary_and_reductions():
    def f(lib):
        x = t(lib, _X, True)
        y = t(lib, _X[::-1].copy(), True)
        out = [lib.special.xlogy(x, y), lib.special.xlog1py(x, y),
               lib.special.polygamma(1, x), lib.special.multigammaln(x + 2, 2),
               lib.special.logsumexp(x, 0), lib.special.softmax(x, 0),
               lib.special.log_softmax(x, 0), lib.special.erfinv(x / 4)]
        sum(o.sum() for o in out).backward()
        return out + [x.grad, y.grad]
    same(f, rtol=1e-6, atol=1e-7)
