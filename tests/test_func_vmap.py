"""torch.func.vmap against torch 2.13: in_dims/out_dims, chunking, randomness, nesting, modules,
autograd through and inside vmap, in-place ops, errors; and that the common ops run their
batching rule, not the per-sample fallback."""

import numpy as np
import pytest
from _diff import arr, raises_same, same, t

import ndgrad
from ndgrad._functorch import batching

A = arr(0, 5, 3)
B = arr(1, 5, 3)
C = arr(2, 3, 4)


def test_elementwise_and_reductions():
    def sc(lib):
        f = lambda x, y: ((x.sin() * y + 1).exp().sum(), x.mean(0), x.amax(-1),
                          (x - y).pow(2).sum(-1, keepdim=True), x.max(), x.std())
        return lib.vmap(f)(t(lib, C), t(lib, arr(3, 3, 4)))
    same(sc)


def test_in_dims_none_negative_and_nested():
    def sc(lib):
        f = lambda p, s: p["a"] * s + p["b"][0]
        p = {"a": t(lib, arr(4, 3, 5)), "b": [t(lib, arr(5, 3))]}
        r1 = lib.vmap(f, in_dims=({"a": -1, "b": [None]}, None))(p, 2.0)
        r2 = lib.vmap(lib.mul, in_dims=(1, None))(t(lib, C), t(lib, arr(6, 3)))
        return r1, r2
    same(sc)


def test_out_dims_and_pytree_outputs():
    def sc(lib):
        f = lambda x: (x * 2, {"s": x.sum(), "k": x.shape[0]})
        r1 = lib.vmap(f, out_dims=(1, {"s": 0, "k": None}))(t(lib, C))
        r2 = lib.vmap(lambda x: x.t(), out_dims=-1)(t(lib, arr(7, 2, 3, 4)))
        r3 = lib.vmap(lambda x: t(lib, B), out_dims=0)(t(lib, C))  # unbatched: expanded
        return r1, r2, r3
    same(sc)


def test_chunk_size_equals_unchunked():
    def sc(lib):
        f = lambda x, y: (x @ y).tanh()
        x, y = t(lib, arr(8, 7, 2, 3)), t(lib, arr(9, 3, 4))
        return (lib.vmap(f, in_dims=(0, None), chunk_size=3)(x, y),
                lib.vmap(f, in_dims=(0, None), chunk_size=1)(x, y),
                lib.vmap(f, in_dims=(0, None))(x, y))
    same(sc)


def test_nested_vmap():
    def sc(lib):
        x, y = t(lib, arr(10, 2, 3, 4)), t(lib, arr(11, 3, 4))
        inner = lib.vmap(lambda a, b: (a * b).sum(), in_dims=(0, 0))
        outer = lib.vmap(inner, in_dims=(0, None))
        mm = lib.vmap(lib.vmap(lib.dot, in_dims=(0, None)), in_dims=(None, 1))
        return outer(x, y), mm(t(lib, arr(12, 4, 3)), t(lib, arr(13, 3, 5)))
    same(sc)


def test_matmul_family_and_shape_ops():
    def sc(lib):
        x, w = t(lib, arr(14, 6, 4, 3)), t(lib, arr(15, 3, 2))
        f = lambda a: (a @ w, a.t() @ a, a.reshape(-1), a.view(3, 4).permute(1, 0),
                       a.unsqueeze(1).expand(4, 2, 3), a[1], a[:, 1:], lib.cat([a, a], 1),
                       lib.stack([a, a]), a.transpose(0, 1).flatten(), a.unbind(1),
                       a.squeeze(), lib.softmax(a, 1), lib.log_softmax(a, 0),
                       lib.mv(a, w[:, 0]), a.split(2, 0))
        g = lambda a, b: (lib.mm(a, b), lib.bmm(a.unsqueeze(0), b.unsqueeze(0)),
                          lib.addmm(lib.ones(4, 2, dtype=lib.float64), a, b, beta=0.5, alpha=2.0),
                          lib.where(a[:, :2] > 0, a[:, :2], b[0]))
        return lib.vmap(f)(x), lib.vmap(g, in_dims=(0, None))(x, w), \
            lib.vmap(g, in_dims=(None, 0))(x[0], t(lib, arr(16, 6, 3, 2)))
    same(sc)
    batching.fallback_ops.clear()
    sc(ndgrad)
    assert not batching.fallback_ops, batching.fallback_ops


def test_module_call_and_cross_entropy_run_rules():
    def sc(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()
        x = t(lib, arr(17, 6, 5, 3))
        y = lib.tensor([[0, 1, 1, 0, 1]] * 6)
        f = lambda a, b: lib.nn.functional.cross_entropy(m(a), b)
        g = lambda a, b: lib.nn.functional.cross_entropy(m(a[0]), b[0], reduction="sum")
        return lib.vmap(m)(x), lib.vmap(f)(x, y), lib.vmap(g)(x, y)
    same(sc)
    batching.fallback_ops.clear()
    sc(ndgrad)
    assert not batching.fallback_ops, batching.fallback_ops


def test_fallback_runs_ops_without_rule():
    def sc(lib):
        return lib.vmap(lambda a: (a.cumsum(0), lib.flip(a, [0]), a.sort(0).values))(t(lib, C))
    same(sc)


def test_backward_through_vmap_and_grad_of_vmap():
    def sc(lib):
        x = t(lib, A, requires_grad=True)
        w = t(lib, arr(18, 3), requires_grad=True)
        out = lib.vmap(lambda r: (r * w).sin().sum() * r.exp().mean())(x)
        out.pow(2).sum().backward()
        g = lib.func.grad(lambda a: lib.vmap(lambda r: r.tanh().sum())(a).sum())(t(lib, A))
        return x.grad, w.grad, g
    same(sc)


def test_vmap_of_grad_and_nested_derivatives():
    def sc(lib):
        F = lib.func
        f = lambda x, w: (x * w).sin().sum()
        x, w = t(lib, A), t(lib, arr(19, 3))
        per_sample = F.vmap(F.grad(f, argnums=1), in_dims=(0, None))(x, w)
        hess = F.vmap(F.hessian(lambda r: r.sin().sum() * r.sum()))(x)
        jf = F.vmap(F.jacfwd(lambda r: r.exp() * r.sum()))(x)
        vj = F.vmap(F.vjp(lambda r: r.sin() * 2, t(lib, B[0]))[1])(t(lib, B))
        return per_sample, hess, jf, vj
    same(sc)


def test_jvp_inside_vmap():
    def sc(lib):
        F = lib.func
        return F.vmap(lambda p, v: F.jvp(lambda r: r.exp() * r, (p,), (v,)))(t(lib, A),
                                                                             t(lib, B))
    same(sc)


def test_inplace_on_batched_value():
    def sc(lib):
        def f(x, y):
            z = x.clone()
            z.mul_(y)
            z.add_(1.0)
            return z
        return lib.vmap(f)(t(lib, A), t(lib, B)), lib.vmap(f, in_dims=(0, None))(t(lib, A),
                                                                                t(lib, B[0]))
    same(sc)


def test_randomness_modes():
    for lib in (ndgrad,):
        x = lib.ones(4, 3)
        same_draw = lib.vmap(lambda r: r * lib.rand(3), randomness="same")(x)
        assert np.all(same_draw.numpy() == same_draw.numpy()[0])
        diff = lib.vmap(lambda r: r * lib.rand(3), randomness="different")(x)
        assert len({tuple(row) for row in diff.numpy()}) == 4
        drop = lib.vmap(lambda r: lib.nn.functional.dropout(r, 0.5), randomness="different")(
            lib.ones(8, 50))
        assert set(np.unique(drop.numpy())) <= {0.0, 2.0}
        assert len({tuple(row) for row in drop.numpy()}) == 8


@pytest.mark.parametrize("case", [
    lambda lib: lib.vmap(lambda a: a.item())(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a if a.sum() > 0 else -a)(t(lib, A)),
    lambda lib: lib.vmap(lambda a, b: a + b)(t(lib, A), t(lib, C)),
    lambda lib: lib.vmap(lambda a: a, in_dims=2)(t(lib, A[0])),
    lambda lib: lib.vmap(lambda a: a, in_dims=(0, 0))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a, in_dims=[0])(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a, in_dims=(1.5,))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a)(1.0),
    lambda lib: lib.vmap(lambda a: a)(),
    lambda lib: lib.vmap(lambda a: a)(lib.tensor(1.0)),
    lambda lib: lib.vmap(lambda a: a, out_dims=3)(t(lib, A[0])),
    lambda lib: lib.vmap(lambda a: a, out_dims=(0, 0))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a, out_dims=None)(t(lib, A)),
    lambda lib: lib.vmap(lambda a: 1.0)(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a, chunk_size=0)(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a, randomness="x")(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.rand(()) * a)(t(lib, A)),
    lambda lib: lib.vmap(lambda a: t(lib, B[0]).add_(a))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: (a.sum().backward(), a)[1])(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a.requires_grad_())(t(lib, A)),
    lambda lib: lib.func.vmap(lib.func.grad(lambda a: a * 2))(t(lib, A)),
], ids=["item", "control-flow", "sizes", "in-dim-range", "in-dims-structure", "in-dims-list",
        "in-dim-float", "non-tensor", "no-inputs", "0-d", "out-dim-range", "out-dims-structure",
        "out-dims-none", "non-tensor-out", "chunk-size", "randomness-flag", "random-error",
        "inplace-unbatched", "backward-inside", "requires-grad-inside", "grad-nonscalar"])
def test_errors_as_torch(case):
    raises_same(case)


def test_state_restored_after_vmap_errors():
    with pytest.raises(RuntimeError):
        ndgrad.vmap(lambda a: ndgrad.rand(()) * a)(ndgrad.ones(3))
    assert not batching._levels and not batching._saved_draws
    assert ndgrad._ops.registry.vmap_dispatch is None and ndgrad._state.special == 0
    ndgrad.rand(2)  # the generator draws again
    y = ndgrad.ones(3)
    with pytest.raises(RuntimeError):
        ndgrad.vmap(lambda a: y.add_(a))(ndgrad.ones(2, 3))
    assert y._version == 0 and np.all(y.numpy() == 1)


def test_per_sample_gradients_unbatched_and_grad_requiring_parameters():
    # Unbatched parameters take the broadcast-leaf path, parameters requiring grad the
    # materialized one (whose result keeps its graph); both per sample, as torch.
    def sc(lib):
        F = lib.func
        w = t(lib, arr(30, 4, 3))
        v = t(lib, arr(31, 4), requires_grad=True)
        x = t(lib, arr(32, 6, 3))

        def loss(w, v, s):
            return ((s.unsqueeze(0) @ w.T).tanh() * v).sum()
        gw, gv = F.vmap(F.grad(loss, argnums=(0, 1)), in_dims=(None, None, 0))(w, v, x)
        gw.pow(2).sum().backward()
        return gw, gv, v.grad, lib.bmm(t(lib, arr(33, 5, 4, 1)), t(lib, arr(34, 5, 1, 3)))
    same(sc, rtol=1e-6, atol=1e-7)


def test_state_restored_after_an_error_in_the_backward_of_grad_under_vmap():
    class Boom(ndgrad.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError("boom")

    f = ndgrad.func.vmap(ndgrad.func.grad(lambda w, s: (Boom.apply(w) * s).sum()),
                         in_dims=(None, 0))
    with pytest.raises(RuntimeError, match="boom"):
        f(ndgrad.ones(3), ndgrad.ones(2, 3))
    assert not batching._levels
    assert ndgrad._ops.registry.vmap_dispatch is None and ndgrad._state.special == 0
    assert ndgrad._ops.inplace.vmap_inplace is None and ndgrad._state.func_transforms == 0
    x = ndgrad.ones(3, requires_grad=True)
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3, 3, 3])


# --------------------------------------------------------------------------- normalization
def test_layer_norm_under_vmap_and_its_per_sample_gradients():
    def sc(lib):
        F, nnF = lib.func, lib.nn.functional
        x = t(lib, arr(40, 3, 4, 5))
        w, b, wb = t(lib, arr(41, 5)), t(lib, arr(42, 5)), t(lib, arr(43, 3, 4, 5))
        plain = lib.vmap(lambda a: nnF.layer_norm(a, (5,), w, b))(x)
        two_dims = lib.vmap(lambda a, ww: nnF.layer_norm(a, (4, 5), ww))(x, wb)
        x_unbatched = lib.vmap(lambda ww: nnF.layer_norm(x[0], (5,), ww[0]))(wb)
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(5, 6), lib.nn.LayerNorm(6), lib.nn.Tanh(),
                                lib.nn.Linear(6, 2)).double()
        params = {k: v.detach() for k, v in net.named_parameters()}

        def loss(p, s, y):
            out = F.functional_call(net, p, (s.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))
        per_sample = F.vmap(F.grad(loss), in_dims=(None, 0, 0))(
            params, x[:, 0], lib.tensor([0, 1, 1]))
        jac = F.vmap(F.jacrev(lambda a: nnF.layer_norm(a, (5,), w, b)))(x[:, 0])
        tangent = F.vmap(lambda a, v: F.jvp(lambda z: nnF.layer_norm(z, (5,)), (a,), (v,))[1])(
            x[:, 0], x[:, 1])
        return plain, two_dims, x_unbatched, per_sample, jac, tangent
    same(sc, rtol=1e-6, atol=1e-9)


def test_batch_norm_under_vmap_with_and_without_running_statistics():
    def sc(lib):
        nnF = lib.nn.functional
        x = t(lib, arr(44, 3, 4, 5, 2))
        w, wb = t(lib, arr(45, 5)), t(lib, arr(46, 3, 5))
        rm, rv = t(lib, arr(47, 3, 5)), t(lib, np.abs(arr(48, 3, 5)) + 0.5)
        no_stats = lib.vmap(lambda a: nnF.batch_norm(a, None, None, w, w, training=True))(x)
        batched_w = lib.vmap(lambda a, ww: nnF.batch_norm(a, None, None, ww, training=True))(x, wb)
        stats = lib.vmap(lambda a, m, v: nnF.batch_norm(a, m, v, training=True, momentum=0.3))(
            x, rm, rv)
        ev = lib.vmap(lambda a: nnF.batch_norm(a, rm[0], rv[0], w, None, training=False))(x)
        ev_b = lib.vmap(lambda a, m, v: nnF.batch_norm(a, m, v, training=False))(x, rm, rv)
        rm2, rv2 = lib.zeros(3, 5, dtype=lib.float64), lib.ones(3, 5, dtype=lib.float64)
        x_unbatched = lib.vmap(lambda m, v: nnF.batch_norm(x[0], m, v, training=True))(rm2, rv2)
        grads = lib.func.vmap(lib.func.grad(
            lambda ww, a: nnF.batch_norm(a, None, None, ww, training=True).pow(3).sum()),
            in_dims=(None, 0))(w, x)
        return no_stats, batched_w, stats, rm, rv, ev, ev_b, x_unbatched, rm2, rv2, grads
    same(sc, rtol=1e-6, atol=1e-9)


def test_batch_norm_module_under_vmap_needs_replace_all_batch_norm_modules():
    def make(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)).double()

    def error(lib):
        net = make(lib)
        lib.vmap(net)(t(lib, arr(49, 2, 5, 3)))
    raises_same(error)

    def after_error(lib):
        net = make(lib)
        with pytest.raises(RuntimeError):
            lib.vmap(net)(t(lib, arr(49, 2, 5, 3)))
        return net[1].running_mean, net[1].running_var, net[1].num_batches_tracked
    same(after_error)

    def replaced(lib):
        net = make(lib)
        inst = lib.nn.InstanceNorm1d(4, track_running_stats=True)
        same_net = lib.func.replace_all_batch_norm_modules_(lib.nn.Sequential(net, inst))
        bn = lib.func.replace_all_batch_norm_modules_(lib.nn.BatchNorm2d(3))
        params = {k: v.detach() for k, v in net.named_parameters()}
        x = t(lib, arr(50, 2, 5, 3))
        out = lib.vmap(net)(x)
        per_sample = lib.func.vmap(lib.func.grad(
            lambda p, s: lib.func.functional_call(net, p, (s,)).pow(2).sum()),
            in_dims=(None, 0))(params, x)
        return (type(same_net).__name__, net[1].running_mean, net[1].running_var,
                net[1].num_batches_tracked, net[1].track_running_stats,
                inst.track_running_stats, sorted(net.state_dict()), bn.running_mean,
                bn.track_running_stats, out, per_sample)
    same(replaced, rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------- unwrapping
def test_debug_unwrap_detach_and_data_under_vmap():
    def sc(lib):
        F = lib.func
        x = t(lib, arr(51, 2, 3, 4))
        inner = F.vmap(F.vmap(lambda a: F.debug_unwrap(a) * 1))(x)
        one_level = F.vmap(F.vmap(lambda a: F.debug_unwrap(a, recurse=False).sum(-1)))(x)
        plain = F.debug_unwrap(x) is x
        detached = lib.vmap(lambda a: a.detach() * 2)(x)
        return inner, one_level, plain, detached
    same(sc)
    raises_same(lambda lib: lib.vmap(lambda a: a.data)(t(lib, A)))

    def set_data(lib):
        def f(a):
            a.data = a
            return a
        lib.vmap(f)(t(lib, A))
    raises_same(set_data)


# --------------------------------------------------------------------------- errors (issue 13)
def _write_item(lib, a):
    z = lib.zeros(3, dtype=lib.float64)
    z[0] = a[0]
    return z


@pytest.mark.parametrize("case", [
    lambda lib: lib.vmap(lambda a: lib.ones(3, dtype=lib.float64).mul_(a))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.ones(3, dtype=lib.float64).sub_(a))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.ones(3, dtype=lib.float64).div_(a))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.ones(3, dtype=lib.float64).copy_(a))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: _write_item(lib, a))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.ones(3, dtype=lib.float64).fill_(a[0]))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.ones(3, dtype=lib.float64).index_put_(
        (lib.tensor([0]),), a[:1]))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.ones(3, dtype=lib.float64).pow_(a))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.ones(3, dtype=lib.float64).addcmul_(a, a))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.ones(2, 3, dtype=lib.float64).add_(a))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a.tolist())(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a.numpy())(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a * float(a.sum()))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a if bool(a[0] > 0) else -a)(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a, out_dims=1.0)(t(lib, A)),
    lambda lib: lib.vmap(lambda a: (a, 1))(t(lib, A)),
    lambda lib: lib.func.grad(lambda a: a.sum())(lib.tensor([1, 2])),
    lambda lib: lib.func.vjp(lambda a: a * 2, lib.tensor([1, 2])),
    lambda lib: lib.func.jacrev(lambda a: 1.0)(t(lib, A)),
    lambda lib: lib.func.jacfwd(lambda a: 1.0)(t(lib, A)),
    lambda lib: lib.func.jvp(lambda a: 1.0, (t(lib, A),), (t(lib, A),)),
    lambda lib: lib.vmap(lib.func.grad(lambda a: (a.requires_grad_(), a.sum())[1]))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a.unique())(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.unique_consecutive(a))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a[a > 0])(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a.masked_select(a > 0))(t(lib, A)),
], ids=["mul_", "sub_", "div_", "copy_", "setitem", "fill_", "index_put_", "pow_", "addcmul_",
        "add_-broadcast", "tolist", "numpy", "float()", "bool()", "out-dims-float",
        "non-tensor-in-tuple", "grad-int", "vjp-int", "jacrev-non-tensor", "jacfwd-non-tensor",
        "jvp-non-tensor", "requires-grad-in-vmap-grad", "unique",
        "unique-consecutive", "bool-mask-index", "masked-select"])
def test_more_errors_as_torch_and_state_after_them(case):
    raises_same(case)
    assert not batching._levels and not batching._saved_draws
    assert ndgrad._ops.registry.vmap_dispatch is None and ndgrad._ops.inplace.vmap_inplace is None
    assert ndgrad.Tensor.__getitem__ is batching._plain_getitem
    assert ndgrad._state.special == 0 and ndgrad._state.func_transforms == 0
    assert ndgrad.is_grad_enabled()
    x = ndgrad.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2])


def test_indexing_with_batched_index_tensors():
    def sc(lib):
        F = lib.func
        x = t(lib, A)
        i = lib.tensor([[0], [1], [2], [0], [1]])
        both = lib.vmap(lambda a, j: a[j])(x, i)
        index_only = lib.vmap(lambda j: x[j, 1:])(i)
        scalar_index = lib.vmap(lambda a, j: a[j[0]])(x, i)
        nested = lib.vmap(lib.vmap(lambda a, j: a[j]), in_dims=(None, 0))(x, i.reshape(1, 5, 1))
        grads = F.vmap(F.grad(lambda w, j: (w[j] ** 2).sum()), in_dims=(None, 0))(x, i)
        return both, index_only, scalar_index, nested, grads
    same(sc)


# --------------------------------------------------------------------------- raw-data wrappers
def test_boolean_reductions_argsort_and_isclose_under_vmap():
    # Their wrappers compute on raw data outside vmap; under vmap they run in ops.
    base = arr(60, 4, 3, 5)
    base[0, 0, :] = 0
    base[1] = np.abs(base[1]) + 1

    def sc(lib):
        x, v = t(lib, base), lib.vmap
        y = t(lib, base * (1 + 1e-9))
        y[2, 0, 0] = float("nan")
        xi = lib.tensor((base * 3).astype(np.int64))
        return [v(lambda a: a.any())(x), v(lambda a: a.all())(x), v(lambda a: a.any(0))(x),
                v(lambda a: a.all(-1, keepdim=True))(x), v(lambda a: lib.any(a, dim=(0, 1)))(x),
                v(lambda a: (a > 0).all(1))(x), v(lambda a: a.to(lib.uint8).any(1))(xi.abs()),
                v(lambda a: a.count_nonzero())(x), v(lambda a: lib.count_nonzero(a, dim=1))(x),
                v(lambda a: a.argsort(1, descending=True))(x),
                v(lambda a, b: lib.isclose(a, b))(x, y),
                v(lambda a, b: lib.isclose(a, b, equal_nan=True))(y, y),
                v(lambda a: lib.isclose(a, a + 1, atol=1.5))(xi)]
    same(sc)


@pytest.mark.parametrize("case", [
    lambda lib: lib.vmap(lambda a: a.nonzero())(t(lib, A)),
    lambda lib: lib.vmap(lambda a: a.nonzero(as_tuple=True)[0])(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.tensor(float(lib.equal(a, a))))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.tensor(float(lib.allclose(a, a))))(t(lib, A)),
], ids=["nonzero", "nonzero-as-tuple", "equal", "allclose"])
def test_value_dependent_wrappers_raise_torchs_errors_under_vmap(case):
    raises_same(case)


@pytest.mark.parametrize("case", [
    lambda lib: lib.vmap(lambda a: lib.nn.functional.rrelu(a))(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.nn.functional.rrelu(a, training=True),
                         randomness="different")(t(lib, A)),
    lambda lib: lib.vmap(lambda a: lib.nn.functional.rrelu_(a))(t(lib, A)),
    lambda lib: lib.vmap(lib.nn.RReLU())(t(lib, A)),
], ids=["eval", "training", "inplace", "module"])
def test_rrelu_under_vmap_raises_torchs_error(case):
    raises_same(case)
