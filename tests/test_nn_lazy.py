"""Lazy modules against torch 2.13: placeholders until the first call, the inferred sizes, the
concrete class they become, torch's initial values under the same seed (and the RNG state
after), state dicts with placeholders, loading into a lazy module, and their errors."""

import copy

import numpy as np
import pytest
import torch

import ndgrad

CASES = {
    "linear": (lambda L: L.nn.LazyLinear(4), (5, 3)),
    "linear-nobias": (lambda L: L.nn.LazyLinear(2, bias=False), (2, 3, 6)),
    "conv1d": (lambda L: L.nn.LazyConv1d(4, 3, groups=2), (2, 4, 7)),
    "conv2d": (lambda L: L.nn.LazyConv2d(4, 3, padding=1), (2, 3, 5, 5)),
    "conv2d-unbatched": (lambda L: L.nn.LazyConv2d(2, 2, padding_mode="reflect", padding=1),
                         (3, 4, 4)),
    "conv3d": (lambda L: L.nn.LazyConv3d(2, 2, bias=False), (3, 4, 4, 4)),
    "convT1d": (lambda L: L.nn.LazyConvTranspose1d(4, 3), (2, 3, 5)),
    "convT2d": (lambda L: L.nn.LazyConvTranspose2d(4, 3, stride=2), (2, 3, 5, 5)),
    "convT3d": (lambda L: L.nn.LazyConvTranspose3d(2, 2), (1, 3, 3, 3, 3)),
    "bn1d": (lambda L: L.nn.LazyBatchNorm1d(), (4, 3)),
    "bn2d": (lambda L: L.nn.LazyBatchNorm2d(affine=False), (4, 3, 2, 2)),
    "bn3d": (lambda L: L.nn.LazyBatchNorm3d(momentum=None), (2, 3, 2, 2, 2)),
    "in1d": (lambda L: L.nn.LazyInstanceNorm1d(), (4, 3, 5)),
    "in2d": (lambda L: L.nn.LazyInstanceNorm2d(track_running_stats=False), (2, 3, 4, 4)),
    "in3d": (lambda L: L.nn.LazyInstanceNorm3d(affine=False), (2, 3, 2, 2, 2)),
}


def _state(m):
    return {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}


@pytest.mark.parametrize("name", list(CASES))
def test_lazy_module_like_torch(name):
    make, shape = CASES[name]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    res = []
    for L in (torch, ndgrad):
        L.manual_seed(3)
        m = make(L)
        before = (repr(m), type(m).__name__, m.has_uninitialized_params(),
                  [(k, repr(v)) for k, v in m.state_dict().items()])
        y = m(L.tensor(x))
        res.append((m, before, y.detach().numpy(), L.rand(2).numpy()))
    (mt, bt, yt, rt), (mn, bn, yn, rn) = res
    assert bn == bt
    assert type(mn).__name__ == type(mt).__name__
    assert not mn.has_uninitialized_params() if hasattr(mn, "has_uninitialized_params") else True
    assert repr(mn) == repr(mt)
    st, sn = _state(mt), _state(mn)
    assert list(sn) == list(st)
    for k in st:
        np.testing.assert_allclose(sn[k], st[k], rtol=1e-6, atol=1e-7, err_msg=k)
    np.testing.assert_allclose(yn, yt, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(rn, rt)   # the same number of draws
    assert [type(p).__name__ for p in mn.parameters()] == \
        [type(p).__name__ for p in mt.parameters()]
    assert [type(b).__name__ for b in mn.buffers()] == [type(b).__name__ for b in mt.buffers()]
    assert not hasattr(mn, "_initialize_hook") and not hasattr(mn, "_load_hook")


def test_lazy_then_train_step_like_torch():
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    res = []
    for L in (torch, ndgrad):
        L.manual_seed(0)
        net = L.nn.Sequential(L.nn.LazyLinear(5), L.nn.ReLU(), L.nn.LazyLinear(2))
        net(L.tensor(x))
        opt = L.optim.SGD(net.parameters(), lr=0.1)
        loss = net(L.tensor(x)).pow(2).sum()
        loss.backward()
        opt.step()
        res.append([p.detach().numpy().copy() for p in net.parameters()])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_loading_a_state_dict_materialises_like_torch():
    for L in (torch, ndgrad):
        L.manual_seed(0)
    full_t, full_n = torch.nn.Linear(3, 4), ndgrad.nn.Linear(3, 4)
    res = []
    for L, full in ((torch, full_t), (ndgrad, full_n)):
        lazy = L.nn.LazyLinear(4)
        lazy.load_state_dict(full.state_dict())
        still_lazy = type(lazy).__name__
        x = L.ones(2, 3)
        y = lazy(x)   # initialised parameters are not redrawn by the first call
        res.append((still_lazy, type(lazy).__name__, lazy.in_features,
                    y.detach().numpy(), lazy.weight.detach().numpy()))
    assert res[0][:3] == res[1][:3]
    np.testing.assert_allclose(res[1][3], res[0][3], rtol=1e-6)
    np.testing.assert_allclose(res[1][4], full_n.weight.detach().numpy())


def test_placeholder_behaviour_like_torch():
    for L in (torch, ndgrad):
        p = L.nn.UninitializedParameter()
        b = L.nn.UninitializedBuffer()
        assert repr(p) == "<UninitializedParameter>" and repr(b) == "<UninitializedBuffer>"
        assert L.nn.parameter.is_lazy(p) and L.nn.parameter.is_lazy(b)
        assert p.requires_grad and not b.requires_grad
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
            p.shape
        p.materialize((2, 3))
        assert type(p) is L.nn.Parameter and tuple(p.shape) == (2, 3)
        assert not L.nn.parameter.is_lazy(p)
        b.materialize((4,), dtype=L.float64)
        assert type(b) is L.Tensor and b.dtype == L.float64
        q = copy.deepcopy(L.nn.UninitializedParameter(requires_grad=False))
        assert type(q).__name__ == "UninitializedParameter" and not q.requires_grad


def test_lazy_errors_like_torch():
    msgs = []
    for L in (torch, ndgrad):
        m = L.nn.LazyConv2d(4, 3)
        with pytest.raises(RuntimeError) as e:
            m(L.ones(3, 3))
        # the failed call leaves the module lazy
        msgs.append((str(e.value), type(m).__name__, m.has_uninitialized_params()))
        m = L.nn.LazyConv1d(4, 3, groups=2)
        with pytest.raises(ValueError) as e:
            m(L.ones(1, 3, 5))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[2] and msgs[1] == msgs[3]


def test_deepcopy_of_a_lazy_module():
    m = ndgrad.nn.LazyLinear(3)
    c = copy.deepcopy(m)
    c(ndgrad.ones(2, 5))
    assert type(c).__name__ == "Linear" and type(m).__name__ == "LazyLinear"
    assert tuple(c.weight.shape) == (3, 5) and m.has_uninitialized_params()


def test_loaded_conv_and_norm_keep_torchs_sizes():
    reprs = []
    for L in (torch, ndgrad):
        conv = L.nn.LazyConv2d(4, 2)
        conv.load_state_dict(L.nn.Conv2d(3, 4, 2).state_dict())
        conv(L.ones(1, 3, 4, 4))
        bn = L.nn.LazyBatchNorm1d()
        bn.load_state_dict(L.nn.BatchNorm1d(3).state_dict())
        bn(L.ones(2, 3))
        reprs.append((repr(conv), repr(bn), type(conv).__name__, type(bn).__name__))
    assert reprs[0] == reprs[1]


def test_dtype_conversion_before_the_first_call_like_torch():
    res = []
    for L in (torch, ndgrad):
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.LazyLinear(3), L.nn.LazyBatchNorm1d()).double()
        kinds = [type(t).__name__ for t in list(m.parameters()) + list(m.buffers())]
        y = m(L.ones(2, 4, dtype=L.float64))
        res.append((kinds, [str(t.dtype) for t in m.state_dict().values()],
                    y.detach().numpy()))
    assert res[0][:2] == res[1][:2]
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=1e-12, atol=1e-12)
