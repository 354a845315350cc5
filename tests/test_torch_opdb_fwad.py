"""torch's op_db against ndgrad: forward-mode AD (JVP).

float64 and complex128 where OpInfo says ``supports_forward_ad``: under ``dual_level``, the
primal and tangent of every output equal torch's for the same random input tangents.
"""

import pytest

import _torch_opdb as h


@pytest.mark.parametrize("op,dtype", h.pytest_params("fwad"))
def test_forward_ad(op, dtype):
    h.check_param("fwad", op, dtype)
