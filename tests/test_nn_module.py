"""nn.Module and nn.Parameter against torch 2.13: registration, traversal, state dicts,
reprs, dtype conversion, modes and hooks."""

from collections import OrderedDict

import numpy as np
import pytest
import torch
from _helpers import each_raises_alike

import ndgrad


def build(lib):
    """The same small module tree in torch or ndgrad, with a shared submodule."""
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.shared = nn.Linear(3, 3)
            self.body = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), self.shared)
            self.head = self.shared
            self.scale = nn.Parameter(lib.ones(1))
            self.register_buffer("steps", lib.zeros(2))
            self.register_buffer("tmp", lib.ones(1), persistent=False)
            self.register_parameter("unused", None)
            self.plain = 5

        def forward(self, x):
            return self.head(self.body(x)) * self.scale

    return Net()


def copy_params(src, dst):
    for (n1, p1), (n2, p2) in zip(src.named_parameters(), dst.named_parameters()):
        assert n1 == n2
        with ndgrad.no_grad():
            p2.copy_(ndgrad.from_numpy(p1.detach().numpy().copy()))


def test_traversal_matches_torch():
    t, n = build(torch), build(ndgrad)
    assert [k for k, _ in t.named_parameters()] == [k for k, _ in n.named_parameters()]
    assert [k for k, _ in t.named_parameters(remove_duplicate=False)] == \
        [k for k, _ in n.named_parameters(remove_duplicate=False)]
    assert [k for k, _ in t.named_buffers()] == [k for k, _ in n.named_buffers()]
    assert [k for k, _ in t.named_modules()] == [k for k, _ in n.named_modules()]
    assert [k for k, _ in t.named_modules(remove_duplicate=False)] == \
        [k for k, _ in n.named_modules(remove_duplicate=False)]
    assert [k for k, _ in t.named_children()] == [k for k, _ in n.named_children()]
    assert [k for k, _ in t.named_parameters(prefix="m", recurse=False)] == \
        [k for k, _ in n.named_parameters(prefix="m", recurse=False)]
    assert len(list(n.parameters())) == len(list(t.parameters()))
    assert n.plain == 5 and n.unused is None
    assert isinstance(n.get_submodule("body.2"), ndgrad.nn.Linear)
    assert n.get_parameter("body.0.weight") is n.body[0].weight
    assert n.get_buffer("steps") is n.steps


def test_state_dict_keys_and_metadata():
    t, n = build(torch), build(ndgrad)
    assert list(t.state_dict().keys()) == list(n.state_dict().keys())
    assert t.state_dict()._metadata == n.state_dict()._metadata
    sd = n.state_dict()
    assert not sd["scale"].requires_grad
    assert n.state_dict(keep_vars=True)["scale"] is n.scale
    assert list(n.state_dict(prefix="p.").keys())[0] == "p.scale"


def test_load_state_dict_roundtrip_and_errors():
    t, n = build(torch), build(ndgrad)
    sd = {k: ndgrad.from_numpy(v.numpy().copy()) for k, v in t.state_dict().items()}
    res = n.load_state_dict(sd)
    assert repr(res) == repr(t.load_state_dict(t.state_dict())) == "<All keys matched successfully>"
    for k, v in t.state_dict().items():
        np.testing.assert_array_equal(n.state_dict()[k].numpy(), v.numpy())
    bad_t = dict(t.state_dict())
    bad_t["extra"] = torch.zeros(1)
    del bad_t["scale"]
    bad_t["body.0.bias"] = torch.zeros(7)
    bad_n = {k: ndgrad.from_numpy(v.numpy().copy()) for k, v in bad_t.items()}
    with pytest.raises(RuntimeError) as et:
        t.load_state_dict(bad_t)
    with pytest.raises(RuntimeError) as en:
        n.load_state_dict(bad_n)
    assert str(en.value) == str(et.value)
    rt = t.load_state_dict({"extra": torch.zeros(1)}, strict=False)
    rn = n.load_state_dict({"extra": ndgrad.zeros(1)}, strict=False)
    assert rn.missing_keys == rt.missing_keys and rn.unexpected_keys == rt.unexpected_keys
    assert repr(rn) == repr(rt)


def test_load_state_dict_copies_into_same_parameter():
    n = ndgrad.nn.Linear(2, 2)
    w = n.weight
    n.load_state_dict({"weight": ndgrad.ones(2, 2), "bias": ndgrad.zeros(2)})
    assert n.weight is w
    np.testing.assert_array_equal(w.detach().numpy(), np.ones((2, 2)))
    n.load_state_dict({"weight": ndgrad.zeros(2, 2), "bias": ndgrad.zeros(2)}, assign=True)
    assert n.weight is not w and n.weight.requires_grad


def test_reprs():
    for make in (lambda nn: nn.Sequential(nn.Linear(2, 3), nn.ReLU(),
                                          nn.Sequential(nn.Linear(3, 3), nn.Dropout())),
                 lambda nn: nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()]),
                 lambda nn: nn.ModuleDict({"a": nn.ReLU(), "b": nn.Tanh()}),
                 lambda nn: nn.Sequential(OrderedDict(conv=nn.Conv2d(1, 2, 3, padding=1),
                                                      bn=nn.BatchNorm2d(2))),
                 lambda nn: nn.ModuleList(),
                 ):
        assert repr(make(ndgrad.nn)) == repr(make(torch.nn))
    assert repr(build(ndgrad)) == repr(build(torch))


def test_parameter_repr_and_leafness():
    t = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    n = ndgrad.nn.Parameter(ndgrad.tensor([1.0, 2.0]))
    assert repr(n) == repr(t)
    assert n.is_leaf and n.requires_grad and n.grad_fn is None
    assert isinstance(n, ndgrad.Tensor)
    m = ndgrad.nn.Parameter(ndgrad.ones(2), requires_grad=False)
    assert not m.requires_grad
    y = n * 2
    assert type(y) is ndgrad.Tensor and y.grad_fn.name() == "MulBackward0"
    assert repr(ndgrad.nn.Parameter()) == repr(torch.nn.Parameter())
    import copy
    c = copy.deepcopy(n)
    assert isinstance(c, ndgrad.nn.Parameter) and c is not n
    np.testing.assert_array_equal(c.detach().numpy(), n.detach().numpy())


def test_registration_errors_match_torch():
    def cases(lib):
        m = lib.nn.Linear(2, 3)
        return [
            lambda: setattr(m, "weight", lib.zeros(3, 2)),
            lambda: m.register_buffer("x", 3),
            lambda: m.foo,
            lambda: m.register_parameter("a.b", None),
            lambda: m.register_parameter("", None),
            lambda: m.register_parameter("w2", lib.zeros(2)),
            lambda: m.add_module("a.b", None),
            lambda: m.add_module("x", 3),
            lambda: m.get_submodule("a"),
            lambda: m.register_buffer("weight", lib.zeros(1)),
            lambda: m.register_parameter(3, None),
            lambda: m.register_buffer("", None),
        ]
    each_raises_alike(cases(torch), cases(ndgrad))


def test_attribute_moves_between_registries():
    m = ndgrad.nn.Module()
    m.a = ndgrad.nn.Parameter(ndgrad.ones(1))
    m.register_buffer("b", ndgrad.ones(1))
    m.b = ndgrad.zeros(2)
    assert "b" in m._buffers and m.b.shape == (2,)
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'b'"):
        m.b = 3
    with pytest.raises(TypeError, match="cannot assign 'Linear' as parameter 'a'"):
        m.a = ndgrad.nn.Linear(1, 1)
    m.a = None
    assert "a" in m._parameters and m.a is None
    del m.a
    m.d = ndgrad.nn.Linear(1, 1)
    m.d = ndgrad.nn.Parameter(ndgrad.ones(1))
    assert "d" in m._parameters and "d" not in m._modules
    assert not hasattr(m, "a")
    m.c = ndgrad.nn.Buffer(ndgrad.ones(3), persistent=False)
    assert "c" in m._buffers and "c" not in m.state_dict()


def test_modes_requires_grad_zero_grad_apply():
    n = build(ndgrad)
    n.eval()
    assert not n.training and not n.body[1].training
    n.train()
    assert n.body[0].training
    n.requires_grad_(False)
    assert not any(p.requires_grad for p in n.parameters())
    n.requires_grad_(True)
    n(ndgrad.ones(4, 2)).sum().backward()
    assert all(p.grad is not None for p in n.parameters())
    n.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in n.parameters())
    n.zero_grad()
    assert all(p.grad is None for p in n.parameters())
    seen, seen_t = [], []
    n.apply(lambda m: seen.append(type(m).__name__))
    build(torch).apply(lambda m: seen_t.append(type(m).__name__))
    assert seen == seen_t


def test_dtype_conversion_keeps_parameter_objects():
    n = build(ndgrad)
    w = n.shared.weight
    n.double()
    assert n.shared.weight is w and w.dtype == ndgrad.float64
    assert n.steps.dtype == ndgrad.float64
    n.to(ndgrad.float32)
    assert w.dtype == ndgrad.float32
    n.half()
    assert w.dtype == ndgrad.float16
    n.float()
    assert n.to("cpu") is n
    bn = ndgrad.nn.BatchNorm1d(2).double()
    assert bn.num_batches_tracked.dtype == ndgrad.int64


def test_forward_same_numbers_as_torch():
    t, n = build(torch), build(ndgrad)
    copy_params(t, n)
    x = np.random.default_rng(1).standard_normal((4, 2)).astype(np.float32)
    np.testing.assert_allclose(n(ndgrad.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_forward_hooks_and_pre_hooks():
    calls = []
    for lib in (torch, ndgrad):
        m = lib.nn.Linear(2, 2)
        log = []
        h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        m.register_forward_pre_hook(lambda mod, args, kw: log.append(("prek", sorted(kw))),
                                    with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("post", tuple(out.shape))))
        m.register_forward_hook(lambda mod, args, out: out + 1, prepend=True)
        m.register_forward_hook(lambda mod, args, kw, out: log.append("kw"), with_kwargs=True)
        x = lib.ones(1, 2)
        out = m(x)
        base = lib.nn.functional.linear(x * 2, m.weight, m.bias) + 1
        assert float((out - base).detach().abs().max()) == 0
        h1.remove()
        out2 = m(x)
        assert float((out2 - (lib.nn.functional.linear(x, m.weight, m.bias) + 1)).detach().abs()
                     .max()) == 0
        calls.append(log)
    assert calls[0] == calls[1]


def test_full_backward_hooks_match_torch():
    records = []
    rng = np.random.default_rng(2)
    xa = rng.standard_normal((3, 2))
    for lib in (torch, ndgrad):
        m = lib.nn.Linear(2, 2).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, -1.0]], dtype=lib.float64))
            m.bias.copy_(lib.tensor([0.5, -0.5], dtype=lib.float64))
        rec = []

        def pre(mod, gout):
            rec.append(("pre", [g.numpy().copy() for g in gout]))
            return (gout[0] * 2,)

        def post(mod, gin, gout):
            rec.append(("post", [None if g is None else g.numpy().copy() for g in gin],
                        [g.numpy().copy() for g in gout]))
            return None if gin[0] is None else (gin[0] + 1,)

        m.register_full_backward_pre_hook(pre)
        m.register_full_backward_hook(post)
        x = lib.tensor(xa, requires_grad=True)
        out = m(x)
        assert out.grad_fn.name() == "BackwardHookFunctionBackward"
        (out ** 2).sum().backward()
        rec.append(("xgrad", x.grad.numpy().copy()))
        rec.append(("wgrad", m.weight.grad.numpy().copy()))
        # input without grad: the hook still runs, with grad_input (None,), and warns
        with pytest.warns(UserWarning, match="Full backward hook is firing when gradients"):
            m(lib.tensor(xa)).sum().backward()
        records.append(rec)
    assert len(records[0]) == len(records[1])
    for a, b in zip(records[0], records[1]):
        assert a[0] == b[0]
        for u, v in zip(a[1:], b[1:]):
            if isinstance(u, list):
                for p, q in zip(u, v):
                    assert (p is None) == (q is None)
                    if p is not None:
                        np.testing.assert_allclose(q, p, rtol=1e-12)
            else:
                np.testing.assert_allclose(v, u, rtol=1e-12)


def test_exact_init_from_seed():
    for seed in (0, 7):
        torch.manual_seed(seed)
        tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Conv2d(2, 3, 3),
                                 torch.nn.Embedding(5, 3), torch.nn.Bilinear(2, 3, 4))
        ndgrad.manual_seed(seed)
        nm = ndgrad.nn.Sequential(ndgrad.nn.Linear(3, 4), ndgrad.nn.Conv2d(2, 3, 3),
                                  ndgrad.nn.Embedding(5, 3), ndgrad.nn.Bilinear(2, 3, 4))
        for (k1, p1), (k2, p2) in zip(tm.named_parameters(), nm.named_parameters()):
            assert k1 == k2
            np.testing.assert_array_equal(p2.detach().numpy(), p1.detach().numpy())


def test_batchnorm_old_checkpoint_without_counter():
    for lib in (torch, ndgrad):
        bn = lib.nn.BatchNorm1d(3)
        sd = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
        assert repr(bn.load_state_dict(sd)) == "<All keys matched successfully>"
    t, n = torch.nn.BatchNorm1d(3), ndgrad.nn.BatchNorm1d(3)
    assert t.state_dict()._metadata == n.state_dict()._metadata
