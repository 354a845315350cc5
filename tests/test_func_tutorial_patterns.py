"""The patterns of PyTorch's torch.func tutorials (per_sample_grads, ensembling,
neural_tangent_kernels, jacobians_hessians) and of the torch.func docs' whirlwind tour / UX
limitations, each written small and run on ndgrad and on torch 2.13 with the same data; the
numbers are compared. Models are built from the same seeded NumPy weights on both sides."""

import copy
from functools import partial

import numpy as np
import pytest

from _diff import arr, raises_same, same, t

F32 = dict(rtol=1e-4, atol=1e-5)


def _load(lib, module, seed):
    """Give `module`'s parameters seeded NumPy values (the same on both libraries)."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    return module


def _f32(lib, seed, *shape):
    return t(lib, arr(seed, *shape, dtype=np.float32))


class _CNN:
    """The per-sample-gradients tutorial's CNN, smaller (conv, relu, pool, linear)."""

    @staticmethod
    def build(lib):
        nn, F = lib.nn, lib.nn.functional

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 4, 3, 1)
                self.conv2 = nn.Conv2d(4, 6, 3, 1)
                self.fc1 = nn.Linear(6 * 2 * 2, 8)
                self.fc2 = nn.Linear(8, 5)

            def forward(self, x):
                x = F.relu(self.conv1(x))
                x = F.relu(self.conv2(x))
                x = F.max_pool2d(x, 2)
                x = lib.flatten(x, 1)
                x = F.relu(self.fc1(x))
                return F.log_softmax(self.fc2(x), dim=1)
        return _load(lib, Net(), 0)


def test_per_sample_grads_vmap_grad_functional_call():
    def sc(lib):
        model = _CNN.build(lib)
        data, targets = _f32(lib, 1, 6, 1, 8, 8), t(lib, np.array([0, 3, 1, 4, 2, 0]))
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            pred = lib.func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
            return lib.nn.functional.nll_loss(pred, target.unsqueeze(0))
        ft = lib.func.vmap(lib.func.grad(compute_loss), in_dims=(None, None, 0, 0))(
            params, buffers, data, targets)
        loop = [lib.autograd.grad(lib.nn.functional.nll_loss(
            model(data[i:i + 1]), targets[i:i + 1]), list(model.parameters()))
            for i in range(6)]
        return ft, [lib.stack(g) for g in zip(*loop)]
    same(sc, **F32)


def _mlp(lib, seed):
    nn = lib.nn
    return _load(lib, nn.Sequential(nn.Flatten(), nn.Linear(12, 7), nn.ReLU(),
                                    nn.Linear(7, 3)), seed)


@pytest.mark.parametrize("same_minibatch", [False, True])
def test_ensembling_stack_module_state_meta_base(same_minibatch):
    def sc(lib):
        models = [_mlp(lib, s) for s in range(4)]
        params, buffers = lib.func.stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")

        def fmodel(params, buffers, x):
            return lib.func.functional_call(base, (params, buffers), (x,))
        data = _f32(lib, 2, 4, 5, 3, 4)
        if same_minibatch:
            out = lib.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, data[0])
            loop = lib.stack([m(data[0]) for m in models])
        else:
            out = lib.vmap(fmodel)(params, buffers, data)
            loop = lib.stack([m(x) for m, x in zip(models, data)])
        return out, loop, [p.shape[0] for p in params.values()], base[1].weight.is_meta
    same(sc, **F32)


def _ntk_net(lib):
    nn = lib.nn

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(2, 3, (3, 3))
            self.conv2 = nn.Conv2d(3, 3, (3, 3))
            self.fc = nn.Linear(3 * 2 * 2, 4)

        def forward(self, x):
            x = self.conv2(self.conv1(x).relu())
            return self.fc(x.flatten(1))
    return _load(lib, CNN(), 3)


def _ntk_jacobian_contraction(lib, fnet_single, params, x1, x2, compute):
    jacs = []
    for x in (x1, x2):
        jac = lib.vmap(lib.func.jacrev(fnet_single), (None, 0))(params, x)
        jacs.append([j.flatten(2) for j in jac.values()])
    expr = {"full": "Naf,Mbf->NMab", "trace": "Naf,Maf->NM", "diagonal": "Naf,Maf->NMa"}[compute]
    return lib.stack([lib.einsum(expr, a, b) for a, b in zip(*jacs)]).sum(0)


def _ntk_vps(lib, func, params, x1, x2):
    fn = lib.func

    def get_ntk(x1, x2):
        output, vjp_fn = fn.vjp(lambda p: func(p, x1), params)

        def get_ntk_slice(vec):
            vjps = vjp_fn(vec)
            return fn.jvp(lambda p: func(p, x2), (params,), vjps)[1]
        basis = lib.eye(output.numel(), dtype=output.dtype).view(output.numel(), -1)
        return fn.vmap(get_ntk_slice)(basis)
    return fn.vmap(fn.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)


def test_neural_tangent_kernel_both_methods():
    def sc(lib):
        net = _ntk_net(lib)
        params = {k: v.detach() for k, v in net.named_parameters()}

        def fnet_single(params, x):
            return lib.func.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)
        x_train, x_test = _f32(lib, 4, 3, 2, 6, 6), _f32(lib, 5, 2, 2, 6, 6)
        outs = [_ntk_jacobian_contraction(lib, fnet_single, params, x_train, x_test, c)
                for c in ("full", "trace", "diagonal")]
        outs.append(_ntk_vps(lib, fnet_single, params, x_test, x_train))
        return outs
    same(sc, **F32)


def _predict(lib, weight, bias, x):
    return lib.nn.functional.linear(x, weight, bias).tanh()


def test_jacobians_vjp_rows_jacrev_argnums_jacfwd():
    def sc(lib):
        w, b, x = t(lib, arr(6, 5, 4)), t(lib, arr(7, 5)), t(lib, arr(8, 4))
        predict = partial(_predict, lib)
        _, vjp_fn = lib.func.vjp(partial(predict, w, b), x)
        (rows,) = lib.vmap(vjp_fn)(lib.eye(5, dtype=lib.float64))
        return (rows, lib.func.jacrev(predict, argnums=2)(w, b, x),
                lib.func.jacrev(predict, argnums=(0, 1))(w, b, x),
                lib.func.jacfwd(predict, argnums=2)(w, b, x),
                lib.func.jacfwd(predict, argnums=(0, 2))(w, b, x))
    same(sc, rtol=1e-10, atol=1e-10)


def test_hessians_batch_jacobians_and_hvp():
    def sc(lib):
        w, b = t(lib, arr(9, 4, 3)), t(lib, arr(10, 4))
        x, xb = t(lib, arr(11, 3)), t(lib, arr(12, 6, 3))
        fn = lib.func
        predict = partial(_predict, lib)
        h = [fn.hessian(predict, argnums=2)(w, b, x),
             fn.jacfwd(fn.jacfwd(predict, argnums=2), argnums=2)(w, b, x),
             fn.jacrev(fn.jacrev(predict, argnums=2), argnums=2)(w, b, x)]
        bj = fn.vmap(fn.jacrev(predict, argnums=2), in_dims=(None, None, 0))(w, b, xb)
        summed = fn.jacrev(lambda w, b, x: predict(w, b, x).sum(0), argnums=2)(w, b, xb)
        bh = fn.vmap(fn.hessian(predict, argnums=2), in_dims=(None, None, 0))(w, b, xb)

        def f(v):
            return v.sin().sum()
        v, tan = t(lib, arr(13, 7)), t(lib, arr(14, 7))
        hvp = fn.jvp(fn.grad(f), (v,), (tan,))[1]
        _, vjp_fn = fn.vjp(fn.grad(f), v)
        return h, bj, summed.movedim(1, 0), bh, hvp, vjp_fn(tan)
    same(sc, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("chunk_size", [None, 1, 2, 3])
def test_jacrev_and_vmap_chunk_size(chunk_size):
    def sc(lib):
        x = t(lib, arr(15, 5))
        f = lambda v: (v.sin() * v.sum()).cumsum(0)  # noqa: E731
        return (lib.func.jacrev(f, chunk_size=chunk_size)(x),
                lib.vmap(lambda v: v.exp() @ v, chunk_size=chunk_size)(t(lib, arr(16, 5, 3))))
    same(sc, rtol=1e-10, atol=1e-10)


def test_randomness_flags():
    # "error" refuses a random op; "same" shares one draw; "different" draws per sample
    raises_same(lambda lib: lib.vmap(lambda v: v + lib.rand(3))(lib.ones(4, 3)))

    def sc(lib):
        lib.manual_seed(5)
        s = lib.vmap(lambda v: v + lib.rand(3), randomness="same")(lib.zeros(4, 3))
        lib.manual_seed(5)
        d = lib.vmap(lambda v: v + lib.rand(3), randomness="different")(lib.zeros(4, 3))
        lib.manual_seed(5)
        drop = lib.vmap(lambda v: lib.nn.functional.dropout(v, 0.5), randomness="same")(
            lib.ones(4, 6))
        return (s, bool((s == s[0]).all()), bool((d[0] != d[1]).any()),
                bool((drop == drop[0]).all()), d)
    same(sc)


def test_grad_argnums_has_aux_and_ux_limitations():
    def sc(lib):
        fn = lib.func
        x, y = t(lib, arr(17, 3)), t(lib, arr(18, 3))

        def f(x, y):
            z = (x * y.exp()).sum()
            return z, {"z": z.detach(), "y2": y * 2}
        g, aux = fn.grad(f, argnums=(0, 1), has_aux=True)(x, y)
        (gv, (val, aux2)) = fn.grad_and_value(f, has_aux=True)(x, y)
        return g, aux["z"], aux["y2"], gv, val, aux2["z"]
    same(sc, rtol=1e-10, atol=1e-10)
    # aux holds tensors only (torch's error for a Python number)
    raises_same(lambda lib: lib.func.grad(lambda v: (v.sum(), {"n": 2}), has_aux=True)(
        t(lib, arr(23, 3))))

    # the docs' UX limitations: mutating a Python list, .item(), data-dependent control flow
    def item(lib):
        lib.vmap(lambda v: v.sum().item())(t(lib, arr(19, 2, 3)))
    raises_same(item)

    def control_flow(lib):
        lib.vmap(lambda v: v if v.sum() > 0 else -v)(t(lib, arr(20, 2, 3)))
    raises_same(control_flow)

    def out_dim_none(lib):
        lib.vmap(lambda v: v * 2, out_dims=None)(t(lib, arr(21, 2, 3)))
    raises_same(out_dim_none)


def test_batch_norm_replaced_for_vmap():
    def sc(lib):
        nn = lib.nn
        m = _load(lib, nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)), 6)
        lib.func.replace_all_batch_norm_modules_(m)
        params = {k: v.detach() for k, v in m.named_parameters()}
        x = _f32(lib, 22, 5, 2, 3)
        return lib.vmap(lambda xb: lib.func.functional_call(m, params, (xb,)))(x)
    same(sc, **F32)
