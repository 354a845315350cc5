"""torch's op_db against ndgrad: gradients (VJP) and gradients of gradients.

float64 and complex128 where the op supports autograd: ``autograd.grad`` of the op's
differentiable outputs for a fixed random cotangent equals torch's for the same cotangent
(torch's conjugate-Wirtinger convention for complex); where OpInfo supports gradgrad, the
gradient differentiated again (inputs and cotangent, as torch's gradgradcheck) equals torch's.
"""

import pytest

import _torch_opdb as h


@pytest.mark.parametrize("op,dtype", h.pytest_params("grad"))
def test_grad(op, dtype):
    h.check_param("grad", op, dtype)


@pytest.mark.parametrize("op,dtype", h.pytest_params("gradgrad"))
def test_gradgrad(op, dtype):
    h.check_param("gradgrad", op, dtype)
