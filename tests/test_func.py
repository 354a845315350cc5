"""torch.func against torch 2.13: grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd,
hessian (argnums, has_aux, pytrees, nesting), functional_call, stack_module_state, and the
errors these raise. vmap has its own file (test_func_vmap.py)."""

import numpy as np
import pytest
from _diff import arr, raises_same, same, t

import ndgrad
from ndgrad._functorch import transforms

X = arr(0, 4)
Y = arr(1, 4)
M = arr(2, 3, 4)


def f_scalar(lib):
    return lambda x: (x.sin() * x ** 2).sum()


# --------------------------------------------------------------------------- grad
def test_grad_matches_torch():
    same(lambda lib: lib.func.grad(f_scalar(lib))(t(lib, X)))


def test_grad_argnums_tuple_and_negative():
    def sc(lib):
        f = lambda a, b, c: (a * b.exp() + c).sum()
        args = (t(lib, X), t(lib, Y), t(lib, X))
        return (lib.func.grad(f, argnums=(0, 2))(*args), lib.func.grad(f, argnums=-2)(*args))
    same(sc)


def test_grad_has_aux_and_value():
    def sc(lib):
        def f(x):
            y = x.tanh()
            return y.sum(), {"y": y, "z": [y * 2]}
        g, aux = lib.func.grad(f, has_aux=True)(t(lib, X))
        g2, (v, aux2) = lib.func.grad_and_value(f, has_aux=True)(t(lib, X))
        v3 = lib.func.grad_and_value(lambda x: (x ** 3).sum())(t(lib, X))
        return g, aux["y"], aux["z"], g2, v, aux2["y"], v3, aux["y"].requires_grad
    same(sc)


def test_grad_pytree_inputs():
    def sc(lib):
        def f(p):
            return (p["w"] * p["xs"][0]).sum() + p["xs"][1].pow(2).sum()
        p = {"w": t(lib, X), "xs": [t(lib, Y), t(lib, M)]}
        return lib.func.grad(f)(p)
    same(sc)


def test_grad_results_do_not_require_grad_at_top_level():
    def sc(lib):
        g, v = lib.func.grad_and_value(lambda x: (x ** 3).sum())(t(lib, X))
        return g.requires_grad, v.requires_grad
    same(sc)


def test_grad_nested_to_third_order():
    def sc(lib):
        f = lambda x: x.sin() * x
        G = lib.func.grad
        x = t(lib, 0.7)
        return G(f)(x), G(G(f))(x), G(G(G(f)))(x)
    same(sc)


def test_grad_closure_over_outer_input():
    def sc(lib):
        G = lib.func.grad

        def outer(x):
            return G(lambda y: (x * y).sin())(x)  # d/dy at y=x, then d/dx of that
        return G(outer)(t(lib, 0.3))
    same(sc)


def test_grad_of_outer_autograd_tensor_stays_differentiable():
    def sc(lib):
        x = t(lib, X, requires_grad=True)
        g = lib.func.grad(lambda y: (y ** 3).sum())(x)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg
    same(sc)


def test_grad_unused_input_gives_zeros():
    same(lambda lib: lib.func.grad(lambda a, b: a.sum(), argnums=(0, 1))(t(lib, X), t(lib, Y)))


# --------------------------------------------------------------------------- vjp / jvp
def test_vjp_and_has_aux():
    def sc(lib):
        out, fn = lib.func.vjp(lambda a, b: (a * b, a.exp()), t(lib, X), t(lib, Y))
        ct = (t(lib, Y), t(lib, X))
        out2, fn2, aux = lib.func.vjp(lambda a: (a.sin(), a.cos()), t(lib, X), has_aux=True)
        return out, fn(ct), out2, fn2(t(lib, Y)), aux
    same(sc)


def test_jvp_and_has_aux():
    def sc(lib):
        o, jo = lib.func.jvp(lambda a, b: a.sin() * b, (t(lib, X), t(lib, Y)),
                             (t(lib, Y), t(lib, X)))
        o2, jo2, aux = lib.func.jvp(lambda a: (a.exp(), a * 2), (t(lib, X),), (t(lib, Y),),
                                    has_aux=True)
        return o, jo, o2, jo2, aux
    same(sc)


def test_linearize():
    def sc(lib):
        out, fn = lib.func.linearize(lambda x: x.sin() * x, t(lib, X))
        return out, fn(t(lib, Y)), fn(t(lib, X))
    same(sc)


def test_jvp_of_grad_and_grad_of_jvp():
    def sc(lib):
        F = lib.func
        f = lambda x: (x.sin() * x ** 2).sum()
        hvp = F.jvp(F.grad(f), (t(lib, X),), (t(lib, Y),))[1]
        g = F.grad(lambda x: F.jvp(f, (x,), (t(lib, Y),))[1])(t(lib, X))
        return hvp, g
    same(sc)


def test_jvp_nested_in_jvp():
    def sc(lib):
        F = lib.func

        def first(x):
            return F.jvp(lambda y: y.sin() * y, (x,), (t(lib, Y),))[1]
        return F.jvp(first, (t(lib, X),), (t(lib, X),))
    same(sc)


# --------------------------------------------------------------------------- Jacobians
@pytest.mark.parametrize("how", ["jacrev", "jacfwd"])
def test_jacobians(how):
    def sc(lib):
        J = getattr(lib.func, how)
        f = lambda a, b: (a.sin() * b, (a @ b).exp())
        x, y = t(lib, X), t(lib, Y)
        return J(f)(x, y), J(f, argnums=(0, 1))(x, y), J(lambda m: m.tanh().sum(0))(t(lib, M))
    same(sc)


@pytest.mark.parametrize("how", ["jacrev", "jacfwd"])
def test_jacobian_has_aux_and_dict_input(how):
    def sc(lib):
        J = getattr(lib.func, how)
        f = lambda p: ((p["a"] * p["b"]).cos(), p["a"].sum())
        return J(f, has_aux=True)({"a": t(lib, X), "b": t(lib, Y)})
    same(sc)


def test_jacrev_chunk_size():
    same(lambda lib: lib.func.jacrev(lambda m: m.exp() @ t(lib, Y), chunk_size=2)(t(lib, M)))


def test_hessian_and_nested_jacobians():
    def sc(lib):
        F = lib.func
        f = lambda x: (x.sin() * x.cos().sum()).sum()
        x = t(lib, X)
        return (F.hessian(f)(x), F.jacrev(F.jacrev(f))(x), F.jacfwd(F.jacfwd(f))(x),
                F.jacrev(F.jacfwd(f))(x), F.hessian(lambda a, b: (a * b).pow(3).sum(),
                                                    argnums=1)(x, t(lib, Y)))
    same(sc)


def test_tutorial_jacobians_of_a_layer():
    """torch.func tutorial 'Jacobians, Hessians, hvp, vhp': predict(weight, bias, x)."""
    w, b, x = arr(3, 5, 5), arr(4, 5), arr(5, 5)

    def sc(lib):
        F = lib.func

        def predict(weight, bias, x):
            return lib.nn.functional.linear(x, weight, bias).tanh()
        W, B, xx = t(lib, w), t(lib, b), t(lib, x)
        ft = F.jacrev(predict, argnums=2)(W, B, xx)
        fw = F.jacfwd(predict, argnums=2)(W, B, xx)
        wb = F.jacrev(predict, argnums=(0, 1))(W, B, xx)
        batch = F.vmap(F.jacrev(predict, argnums=2), in_dims=(None, None, 0))(
            W, B, t(lib, arr(6, 3, 5)))
        hess = F.hessian(lambda xx: predict(W, B, xx).sum())(xx)
        return ft, fw, wb, batch, hess
    same(sc)


def test_empirical_ntk():
    """The NTK tutorial: jacobians of a functional_call'd model contracted with einsum."""
    def sc(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2)).double()
        params = {k: v.detach() for k, v in net.named_parameters()}
        F = lib.func

        def fnet_single(p, x):
            return F.functional_call(net, p, (x.unsqueeze(0),)).squeeze(0)
        x1, x2 = t(lib, arr(7, 4, 3)), t(lib, arr(8, 5, 3))
        j1 = F.vmap(F.jacrev(fnet_single), (None, 0))(params, x1)
        j2 = F.vmap(F.jacrev(fnet_single), (None, 0))(params, x2)
        j1 = [j.flatten(2) for j in j1.values()]
        j2 = [j.flatten(2) for j in j2.values()]
        ntk = sum(lib.einsum("Naf,Mbf->NMab", a, b) for a, b in zip(j1, j2))
        return ntk
    same(sc, rtol=1e-5, atol=1e-8)


# --------------------------------------------------------------------------- modules
def _mlp(lib, seed=0):
    lib.manual_seed(seed)
    return lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.ReLU(), lib.nn.Linear(6, 3))


def test_functional_call_swaps_and_restores():
    def sc(lib):
        m = _mlp(lib)
        p = {k: v.detach() * 2 for k, v in m.named_parameters()}
        x = t(lib, arr(9, 2, 4)).float()
        out = lib.func.functional_call(m, p, (x,))
        out_kw = lib.func.functional_call(m, (p, {}), x)
        return out, out_kw, m(x), m[0].weight.requires_grad
    same(sc)


def test_functional_call_tied_and_strict_errors():
    def tied(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 3, bias=False), lib.nn.Linear(3, 3, bias=False))
        m[1].weight = m[0].weight
        w = lib.ones(3, 3)
        return lib.func.functional_call(m, {"0.weight": w}, (lib.ones(1, 3),))
    same(tied)
    raises_same(lambda lib: lib.func.functional_call(_mlp(lib), {"0.weight": lib.ones(6, 4)},
                                                     (lib.ones(1, 4),), strict=True))
    raises_same(lambda lib: lib.func.functional_call(
        _mlp(lib), ({"0.bias": lib.ones(6)}, {"0.bias": lib.ones(6)}), (lib.ones(1, 4),)))


def test_per_sample_gradients_tutorial():
    def sc(lib):
        F = lib.func
        m = _mlp(lib)
        params = {k: v.detach() for k, v in m.named_parameters()}
        x = t(lib, arr(10, 8, 4)).float()
        y = lib.tensor([0, 2, 1, 1, 0, 2, 2, 1])

        def loss(p, sample, target):
            out = F.functional_call(m, p, (sample.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))
        return F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    same(sc, rtol=1e-5, atol=1e-6)


def test_ensembling_tutorial():
    def sc(lib):
        F = lib.func
        models = [_mlp(lib, s) for s in range(3)]
        params, buffers = F.stack_module_state(models)
        base = _mlp(lib, 9)
        x = t(lib, arr(11, 5, 4)).float()

        def fmodel(p, b, x):
            return F.functional_call(base, (p, b), (x,))
        same_minibatch = F.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
        per_model = F.vmap(fmodel)(params, buffers, x.expand(3, 5, 4))
        return same_minibatch, per_model, params["0.weight"].requires_grad, \
            params["0.weight"].is_leaf
    same(sc)


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize("case", [
    lambda lib: lib.func.grad(lambda a: a * 2)(t(lib, X)),
    lambda lib: lib.func.grad(lambda a: (a.sum(), 1))(t(lib, X)),
    lambda lib: lib.func.grad(lambda a: a.sum(), has_aux=True)(t(lib, X)),
    lambda lib: lib.func.grad(lambda a: (a.sum(), 3), has_aux=True)(t(lib, X)),
    lambda lib: lib.func.grad(lambda a: a.sum(), argnums=3)(t(lib, X)),
    lambda lib: lib.func.grad(lambda a: a.sum(), argnums=1.0)(t(lib, X)),
    lambda lib: lib.func.grad(lambda a: a.sum())(1.0),
    lambda lib: lib.func.jvp(lambda a: a.sum(), t(lib, X), (t(lib, X),)),
    lambda lib: lib.func.jvp(lambda a: a.sum(), (t(lib, X),), (t(lib, X), t(lib, X))),
    lambda lib: lib.func.jvp(lambda a: a.sum(), (t(lib, X),), (t(lib, M),)),
    lambda lib: lib.func.vjp(lambda a: a * 2, t(lib, X))[1]((t(lib, X), t(lib, X))),
    lambda lib: lib.func.vjp(lambda a: a * 2, t(lib, X))[1](t(lib, M)),
    lambda lib: lib.func.grad(lambda a: (a.sum().backward(), a.sum())[1])(t(lib, X)),
    lambda lib: lib.func.grad(lambda a: (a.requires_grad_(), a.sum())[1])(t(lib, X)),
], ids=["nonscalar", "tuple-out", "aux-not-pair", "aux-int", "argnum-range", "argnum-type",
        "non-tensor", "jvp-primals", "jvp-structure", "jvp-size", "vjp-structure",
        "vjp-shape", "backward-inside", "requires-grad-inside"])
def test_errors_as_torch(case):
    raises_same(case)


def test_state_restored_after_errors():
    with pytest.raises(RuntimeError):
        ndgrad.func.grad(lambda a: a * 2)(ndgrad.ones(3))
    with pytest.raises(RuntimeError):
        ndgrad.func.vmap(lambda a: a.item())(ndgrad.ones(3))
    assert transforms._depth[0] == 0
    assert ndgrad._ops.registry.vmap_dispatch is None
    assert ndgrad._state.special == 0 and ndgrad._state.func_transforms == 0
    assert ndgrad.is_grad_enabled()
    x = ndgrad.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2])


# --------------------------------------------------------------------------- custom Function
def _functions(lib):
    class Cube(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x ** 2

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 3 * t * x ** 2

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(x, s):
            return x * s

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.s = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.s, None

        @staticmethod
        def vmap(info, in_dims, x, s):
            assert in_dims == (0, None) and info.randomness == "error"
            return Scale.apply(x, s * 1.0) + 0 * info.batch_size, 0

    class Old(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class NoRule(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Cube, Scale, Old, NoRule


def test_custom_function_under_transforms():
    def sc(lib):
        Cube, Scale, _, _ = _functions(lib)
        F = lib.func
        x = t(lib, M)
        return (F.vmap(Cube.apply)(x), F.grad(lambda a: Cube.apply(a).sum())(t(lib, X)),
                F.vmap(F.grad(lambda a: Cube.apply(a).sum()))(x),
                F.jacfwd(Cube.apply)(t(lib, X)), F.jacrev(Cube.apply)(t(lib, X)),
                F.vmap(lambda a: Scale.apply(a, 3.0))(x),
                F.vmap(F.grad(lambda a: Scale.apply(a, 3.0).sum()))(x))
    same(sc)


@pytest.mark.parametrize("which,how", [(2, "vmap"), (2, "grad"), (3, "vmap")])
def test_custom_function_errors(which, how):
    def sc(lib):
        fn = _functions(lib)[which]
        if how == "vmap":
            return lib.func.vmap(lambda a: fn.apply(a))(t(lib, M))
        return lib.func.grad(lambda a: fn.apply(a).sum())(t(lib, X))
    raises_same(sc)


@pytest.mark.parametrize("transform", ["grad", "vmap"])
def test_backward_and_requires_grad_inside_a_transform_raise_torchs_errors(transform):
    def call_backward(lib):
        def f(x):
            y = (x * 2).sum()
            y.backward()
            return y
        return getattr(lib.func, transform)(f)(t(lib, X))

    def call_requires_grad(lib):
        def f(x):
            lib.ones(2).requires_grad_()
            return x.sum()
        return getattr(lib.func, transform)(f)(t(lib, X))

    raises_same(call_backward)
    raises_same(call_requires_grad)
    assert ndgrad._state.func_transforms == 0


# ------------------------------------------------------------------------ rearrange, functionalize
def test_rearrange_as_torch():
    def sc(lib):
        R = lib.func.rearrange
        x = t(lib, arr(70, 2, 6, 5))
        w = t(lib, arr(71, 2, 6, 5), requires_grad=True)
        outs = [R(x, "a (b c) d -> c a b d", b=2), R([x[0], x[1], x[0]], "n a b -> a (n b)"),
                R(x, "... c -> c ..."), R(x, "a b c -> a 1 b c"), R(x[:, :1], "a () c -> a c"),
                R(x, "a b c -> (a b c)"), R(x, "a ... -> ... a"),
                R(x, "a b (c d) -> (d a) c b", d=5)]
        (R(w, "a b c -> c (b a)") * t(lib, arr(72, 5, 12))).sum().backward()
        return outs, w.grad
    same(sc)
    raises_same(lambda lib: lib.func.rearrange(lib.ones(2, 3, 4), "a b -> b a"))


def test_functionalize_preserves_the_functions_semantics():
    def sc(lib):
        x = t(lib, arr(73, 3))
        y = t(lib, arr(74, 3), requires_grad=True)

        def f(a, b):
            a.add_(1)
            c = b * 2
            c.mul_(a)
            return c.sin(), a * 1
        out = lib.func.functionalize(f)(x, y)
        out[0].sum().backward()
        views = lib.func.functionalize(f, remove="mutations_and_views")(x.clone(), y.detach())
        return out, x, y.grad, views
    same(sc)
    raises_same(lambda lib: lib.func.functionalize(lambda a: a, remove="views"))
