"""Complex conventions against torch 2.13 on op_db's samples (issue 25): a real-valued function
of complex inputs (dist) returns a real dtype, and its gradient (conjugate Wirtinger) and
forward-mode tangent (Re(conj(dN/dz) dz)) are torch's."""

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as torch_fwd
from torch.testing._internal.common_methods_invocations import op_db

import ndgrad
import ndgrad.autograd.forward_ad as ndgrad_fwd
from test_absent_names import _to_ndgrad


def _samples(name, dtype):
    opinfo = next(o for o in op_db if o.name == name)
    samples = list(opinfo.sample_inputs("cpu", dtype, requires_grad=True))
    assert samples
    return opinfo, samples


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128], ids=str)
def test_dist_values_dtype_gradients_tangents(dtype):
    opinfo, samples = _samples("dist", dtype)
    for sample in samples:
        a, b = sample.input, sample.args[0]
        na, nb = _to_ndgrad(a), _to_ndgrad(b)
        expected = opinfo.op(a, b, **sample.kwargs)
        got = ndgrad.dist(na, nb, **sample.kwargs)
        assert str(got.dtype) == str(expected.dtype)
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-10)
        cotangent = torch.randn_like(expected)
        want = torch.autograd.grad(expected, [a, b], cotangent)
        have = ndgrad.autograd.grad(got, [na, nb], _to_ndgrad(cotangent))
        for h, w in zip(have, want):
            np.testing.assert_allclose(h.numpy(), w.numpy(), rtol=1e-8, atol=1e-10)
        ta, tb = torch.randn_like(a), torch.randn_like(b)
        with torch_fwd.dual_level():
            out = opinfo.op(torch_fwd.make_dual(a.detach(), ta),
                            torch_fwd.make_dual(b.detach(), tb), **sample.kwargs)
            want_t = torch_fwd.unpack_dual(out).tangent
        with ndgrad_fwd.dual_level():
            out = ndgrad.dist(ndgrad_fwd.make_dual(na.detach(), _to_ndgrad(ta)),
                              ndgrad_fwd.make_dual(nb.detach(), _to_ndgrad(tb)),
                              **sample.kwargs)
            have_t = ndgrad_fwd.unpack_dual(out).tangent
        assert str(have_t.dtype) == str(want_t.dtype)
        np.testing.assert_allclose(have_t.numpy(), want_t.numpy(), rtol=1e-8, atol=1e-10)


def test_zero_dim_vander_and_unravel_index_shapes_match_torch():
    got = ndgrad.linalg.vander(ndgrad.tensor(2.0), N=3)
    want = torch.linalg.vander(torch.tensor(2.0), N=3)
    assert tuple(got.shape) == tuple(want.shape) and got.tolist() == want.tolist()
    for h, w in zip(ndgrad.unravel_index(ndgrad.tensor(4), (2, 3)),
                    torch.unravel_index(torch.tensor(4), (2, 3))):
        assert tuple(h.shape) == tuple(w.shape) and h.tolist() == w.tolist()
