"""torch's op_db against ndgrad: vmap over a stacked batch equals the per-sample loop.

For every op supporting autograd (float64, complex128), each tensor argument stacked three
times (floating copies scaled by 1 - 0.05 b so samples differ): ``ndgrad.func.vmap`` of the op
equals ndgrad's loop over the samples, and equals ``torch.func.vmap`` on the same batch. A
sample torch's vmap itself refuses is skipped (named in the outcome).
"""

import pytest

import _torch_opdb as h


@pytest.mark.parametrize("op,dtype", h.pytest_params("vmap"))
def test_vmap(op, dtype):
    h.check_param("vmap", op, dtype)
