"""nn.utils.get_total_norm / clip_grads_with_norm_, nn.utils.stateless.functional_call and
nn.utils.fusion against torch 2.13: values, gradients, warnings and errors."""

import warnings

import numpy as np
import pytest
import torch
from _diff import arr, raises_same, same, t

import ndgrad


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), 0])
def test_get_total_norm_and_clip_grads_with_norm(norm_type):
    def scenario(lib):
        ps = [t(lib, arr(i, *s), requires_grad=True) for i, s in enumerate([(3, 2), (4,)])]
        for i, p in enumerate(ps):
            p.grad = t(lib, arr(10 + i, *p.shape) * 3)
        total = lib.nn.utils.get_total_norm([p.grad for p in ps], norm_type)
        single = lib.nn.utils.get_total_norm(ps[1].grad, norm_type)
        ret = lib.nn.utils.clip_grads_with_norm_(ps, 1.5, total)
        return [total, single, ret] + [p.grad for p in ps]

    same(scenario, rtol=1e-6)


def test_total_norm_empty_nonfinite_and_clip_without_grads():
    same(lambda lib: lib.nn.utils.get_total_norm([]))
    raises_same(lambda lib: lib.nn.utils.get_total_norm(
        [t(lib, [1.0, float("inf")])], error_if_nonfinite=True))

    def no_grads(lib):
        p = t(lib, [1.0, 2.0], requires_grad=True)
        return [lib.nn.utils.clip_grads_with_norm_([p], 1.0, t(lib, 5.0)), p.grad]

    same(no_grads)


@pytest.mark.parametrize("norm_type", [2.0, 0])
def test_clip_grad_norm(norm_type):
    def scenario(lib):
        ps = [t(lib, arr(i, 3), requires_grad=True) for i in range(3)]
        for i, p in enumerate(ps):
            p.grad = t(lib, arr(20 + i, 3) * 4)
        ps[2].grad.zero_()
        return [lib.nn.utils.clip_grad_norm_(ps, 0.7, norm_type)] + [p.grad for p in ps]

    same(scenario)


class _Tied:
    """A two-layer module whose layers share one weight (built for either library)."""

    @staticmethod
    def build(lib, sd):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(3, 3, dtype=lib.float64)
                self.b = lib.nn.Linear(3, 3, dtype=lib.float64)
                self.b.weight = self.a.weight
                self.register_buffer("scale", t(lib, [2.0, 1.0, 0.5]))

            def forward(self, x, shift=0.0):
                return self.b(self.a(x)) * self.scale + shift

        m = M()
        m.load_state_dict({k: t(lib, v) for k, v in sd.items()})
        return m


def _tied_sd():
    torch.manual_seed(0)
    return {"a.weight": arr(1, 3, 3), "a.bias": arr(2, 3), "b.weight": arr(1, 3, 3),
            "b.bias": arr(3, 3), "scale": np.array([2.0, 1.0, 0.5])}


@pytest.mark.parametrize("tie_weights", [True, False])
def test_functional_call(tie_weights):
    sd = _tied_sd()

    def scenario(lib):
        m = _Tied.build(lib, sd)
        w = t(lib, arr(5, 3, 3), requires_grad=True)
        s = t(lib, [1.0, 1.0, 1.0])
        x = t(lib, arr(6, 2, 3))
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            y = lib.nn.utils.stateless.functional_call(
                m, {"a.weight": w, "scale": s}, (x,), {"shift": 1.0}, tie_weights=tie_weights)
        y.sum().backward()
        after = m(x)
        return [y, w.grad, after, m.a.weight.grad, [type(c.message).__name__ for c in rec],
                type(m._parameters.get("weight")).__name__, m.b.weight is m.a.weight,
                lib.nn.utils.stateless.functional_call(m, {}, x)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        same(scenario)


def test_functional_call_errors_restore_the_module():
    sd = _tied_sd()

    def call(lib, tensors, **kw):
        m = _Tied.build(lib, sd)
        return lib.nn.utils.stateless.functional_call(m, tensors, t(lib, arr(6, 2, 3)), **kw)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        raises_same(lambda lib: call(lib, {"a.weight": t(lib, arr(1, 3, 3)),
                                           "b.weight": t(lib, arr(2, 3, 3))}))
        raises_same(lambda lib: call(lib, {"a.weight": t(lib, arr(1, 3, 3)),
                                           "nope": t(lib, [1.0])}, strict=True))
        m = _Tied.build(ndgrad, sd)
        before = {k: v for k, v in m.named_parameters()}
        with pytest.raises(RuntimeError):
            ndgrad.nn.utils.stateless.functional_call(
                m, {"a.weight": ndgrad.zeros(2, 2)}, ndgrad.zeros(2, 3, dtype=ndgrad.float64))
        assert {k: v for k, v in m.named_parameters()} == before
        assert m.b.weight is m.a.weight


@pytest.mark.parametrize("cls,args,x_shape,transpose", [
    ("Conv2d", (2, 3, 2), (1, 2, 4, 4), False),
    ("Conv1d", (2, 4, 3), (2, 2, 5), False),
    ("ConvTranspose2d", (2, 3, 2), (1, 2, 3, 3), True)])
def test_fuse_conv_bn_eval(cls, args, x_shape, transpose):
    torch.manual_seed(0)
    tc = getattr(torch.nn, cls)(*args, dtype=torch.float64)
    conv_sd = {k: v.detach().numpy().copy() for k, v in tc.state_dict().items()}
    n = args[1]
    bn_sd = {"weight": arr(1, n), "bias": arr(2, n), "running_mean": arr(3, n),
             "running_var": np.abs(arr(4, n)) + 0.5, "num_batches_tracked": np.array(3)}
    bn_cls = "BatchNorm2d" if x_shape.__len__() == 4 else "BatchNorm1d"

    def scenario(lib):
        conv = getattr(lib.nn, cls)(*args, dtype=lib.float64)
        conv.load_state_dict({k: t(lib, v) for k, v in conv_sd.items()})
        bn = getattr(lib.nn, bn_cls)(n, dtype=lib.float64)
        bn.load_state_dict({k: t(lib, v) for k, v in bn_sd.items()})
        conv.eval()
        bn.eval()
        fused = lib.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        x = t(lib, arr(5, *x_shape))
        return [fused(x), bn(conv(x)), fused.weight, fused.bias, conv.weight,
                type(fused.weight).__name__, fused is conv]

    same(scenario, rtol=1e-10, atol=1e-12)


def test_fuse_linear_bn_eval_and_weights():
    torch.manual_seed(0)
    lin_sd = {k: v.detach().numpy().copy()
              for k, v in torch.nn.Linear(3, 4, dtype=torch.float64).state_dict().items()}
    bn_sd = {"weight": arr(1, 4), "bias": arr(2, 4), "running_mean": arr(3, 4),
             "running_var": np.abs(arr(4, 4)) + 0.5, "num_batches_tracked": np.array(3)}

    def scenario(lib):
        lin = lib.nn.Linear(3, 4, dtype=lib.float64)
        lin.load_state_dict({k: t(lib, v) for k, v in lin_sd.items()})
        bn = lib.nn.BatchNorm1d(4, dtype=lib.float64)
        bn.load_state_dict({k: t(lib, v) for k, v in bn_sd.items()})
        lin.eval()
        bn.eval()
        fused = lib.nn.utils.fuse_linear_bn_eval(lin, bn)
        x = t(lib, arr(5, 2, 3))
        w, b = lib.nn.utils.fuse_conv_bn_weights(
            t(lib, arr(6, 4, 2, 2)), None, bn.running_mean, bn.running_var, 1e-3, None, None)
        w2, b2 = lib.nn.utils.fuse_linear_bn_weights(
            lin.weight, None, bn.running_mean, bn.running_var, 1e-5, bn.weight, bn.bias)
        return [fused(x), bn(lin(x)), w, b, w.requires_grad, b.requires_grad, w2, b2,
                b2.requires_grad]

    same(scenario, rtol=1e-10, atol=1e-12)


def test_fusion_errors():
    def training(lib):
        lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))

    def mismatch(lib):
        lin, bn = lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(4)
        lin.eval()
        bn.eval()
        lib.nn.utils.fuse_linear_bn_eval(lin, bn)

    raises_same(training)
    raises_same(mismatch)


def _module_facts(m):
    return ([(n, type(p).__name__, p.dtype.__repr__(), tuple(p.shape), p.requires_grad)
             for n, p in m.named_parameters()],
            [(n, type(b).__name__, b.dtype.__repr__(), tuple(b.shape))
             for n, b in m.named_buffers()], repr(m))


@pytest.mark.parametrize("case", [
    lambda nn, lib: (nn.Linear, (3, 4), {}),
    lambda nn, lib: (nn.Linear, (), {"in_features": 6, "out_features": 1, "bias": False,
                                     "dtype": lib.float64}),
    lambda nn, lib: (nn.Conv2d, (2, 5, 3), {"padding": 1}),
    lambda nn, lib: (nn.BatchNorm1d, (3,), {"device": "cpu"}),
    lambda nn, lib: (nn.GRUCell, (4, 5), {}),
    lambda nn, lib: (nn.LayerNorm, ((2, 3),), {"dtype": lib.float64}),
])
def test_skip_init_shapes_dtypes_types_and_random_state(case):
    # the (uninitialised) values are not compared; the generator must not have moved
    res = []
    for lib in (torch, ndgrad):
        cls, args, kwargs = case(lib.nn, lib)
        lib.manual_seed(5)
        m = lib.nn.utils.skip_init(cls, *args, **dict(kwargs))
        after = lib.rand(3).numpy()
        assert type(m) is cls
        res.append((_module_facts(m), after))
    assert res[0][0] == res[1][0]
    np.testing.assert_array_equal(res[1][1], res[0][1])


def test_skip_init_errors():
    for lib in (torch, ndgrad):
        class NoDevice(lib.nn.Module):
            def __init__(self, n):
                super().__init__()

        with pytest.raises(RuntimeError, match="^Module must support a 'device' arg to skip "
                                               "initialization$"):
            lib.nn.utils.skip_init(NoDevice, 3)
        with pytest.raises(RuntimeError, match="^Expected a Module; got <class 'int'>$"):
            lib.nn.utils.skip_init(int)
        with pytest.raises(TypeError, match="issubclass"):
            lib.nn.utils.skip_init(3)
        with pytest.raises(RuntimeError, match="'device' arg"):  # (LSTM takes *args)
            lib.nn.utils.skip_init(lib.nn.LSTM, 4, 5)


def test_to_empty_keeps_parameter_objects():
    for lib in (torch, ndgrad):
        m = lib.nn.Linear(2, 3)
        w = m.weight
        assert m.to_empty(device="cpu") is m
        assert m.weight is w and type(w) is lib.nn.Parameter and w.requires_grad
        assert tuple(w.shape) == (3, 2)
