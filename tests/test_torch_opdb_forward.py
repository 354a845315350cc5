"""torch's op_db against ndgrad: forward values and dtypes, method and in-place variants.

For every OpInfo of the installed torch that applies on the CPU (``_torch_opdb``), in float64,
float32 and complex128 where the op supports them (int64 or bool for ops with no such dtype),
the first samples, seeded: ndgrad's result equals torch's (values within the dtype's
tolerance, dtype, shape; torch's exception class where torch refuses the sample). The
in-place variant also leaves the same values in its input.
"""

import pytest

import _torch_opdb as h


@pytest.mark.parametrize("op,dtype", h.pytest_params("forward"))
def test_forward(op, dtype):
    h.check_param("forward", op, dtype)


@pytest.mark.parametrize("op,dtype", h.pytest_params("method"))
def test_method(op, dtype):
    h.check_param("method", op, dtype)


@pytest.mark.parametrize("op,dtype", h.pytest_params("inplace"))
def test_inplace(op, dtype):
    h.check_param("inplace", op, dtype)
