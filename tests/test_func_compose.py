"""torch.func patterns the tutorials use, against torch 2.13: vmap over named-tuple outputs,
a transform's returned function (vjp_fn, linearize's jvp_fn) called under another transform
(the empirical NTK's NTK-vector products), factories following a batched tensor under vmap
(``zeros_like(a).copy_(...)``, ``a.new_zeros(2).copy_(...)``), and convolution's JVP."""

import collections

import numpy as np
from _diff import arr, raises_same, same, t

P = collections.namedtuple("P", "a b")


def test_vmap_over_return_types_keeps_the_type():
    def sc(lib):
        x = t(lib, arr(0, 3, 4))
        r = lib.vmap(lambda r: r.max(0))(x)
        s = lib.vmap(lambda r: r.sort())(x.t())
        return type(r).__name__, r.values, r.indices, type(s).__name__, s.values, s.indices
    same(sc)


def test_vmap_out_dims_tuple_is_not_a_prefix_of_a_named_tuple():
    # torch matches pytree node types exactly: a plain tuple does not describe torch.return_types
    raises_same(lambda lib: lib.vmap(lambda r: r.sort(), out_dims=(0, 1))(t(lib, arr(0, 3, 4))))


def test_vmap_over_namedtuple_output():
    def sc(lib):
        r = lib.vmap(lambda x: P(x * 2, x.sum()))(t(lib, arr(1, 3, 4)))
        return type(r).__name__, r.a, r.b
    same(sc)


def test_vmap_of_vjp_fn_inside_vmaps_then_jvp():
    # the empirical NTK by NTK-vector products: vjp at two vmap levels, vjp_fn under a third
    def sc(lib):
        from_func = lib.func
        w = t(lib, arr(2, 5, 4))
        x1, x2 = t(lib, arr(3, 3, 4)), t(lib, arr(4, 2, 4))

        def fnet(p, x):
            return (x @ p.t()).tanh()

        def get_ntk(a, b):
            out, vjp_fn = from_func.vjp(lambda p: fnet(p, a), w)

            def slice_(vec):
                (v,) = vjp_fn(vec)
                return from_func.jvp(lambda p: fnet(p, b), (w,), (v,))[1]
            return from_func.vmap(slice_)(lib.eye(out.numel(), dtype=out.dtype))
        return from_func.vmap(from_func.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
    same(sc, rtol=1e-10, atol=1e-10)


def test_vmap_of_linearize_jvp_fn():
    def sc(lib):
        x = t(lib, arr(5, 4))
        _, jvp_fn = lib.func.linearize(lambda x: x.sin() * x, x)
        return lib.vmap(jvp_fn)(t(lib, arr(6, 3, 4)))
    same(sc)


def test_vjp_fn_under_vmap_under_grad():
    def sc(lib):
        F = lib.func
        w = t(lib, arr(7, 3))

        def loss(w):
            _, vjp_fn = F.vjp(lambda p: p.exp() * p, w)
            return F.vmap(vjp_fn)(lib.eye(3, dtype=w.dtype))[0].pow(2).sum()
        return F.grad(loss)(w)
    same(sc)


def test_like_factories_follow_a_batched_input():
    def sc(lib):
        a = t(lib, arr(8, 3, 4))

        def f(x):
            z = lib.zeros_like(x).copy_(x * 3)
            o = lib.ones_like(x).mul_(x)
            e = lib.empty_like(x).fill_(2.0).add_(x)
            g = lib.full_like(x, 5.0).sub_(x)
            return z, o, e, g
        return lib.vmap(f)(a)
    same(sc)


def test_new_factories_follow_a_batched_self():
    def sc(lib):
        a = t(lib, arr(9, 3, 4))

        def f(x):
            z = x.new_zeros(2).copy_(x[:2] - 1)
            o = x.new_ones((2, 2)).mul_(x[1])
            e = x.new_empty(4).copy_(x)
            g = x.new_full((4,), 2.0).add_(x)
            return z, o, e, g, x.new_zeros(2, 3) + 1
        return lib.vmap(f)(a)
    same(sc)


def test_new_tensor_stays_unbatched():
    def sc(lib):
        def f(x):
            c = x.new_tensor([1.0, 2.0, 3.0, 4.0])
            return c.copy_(c * 2) + x
        return lib.vmap(f)(t(lib, arr(10, 3, 4)))
    same(sc)


def test_factories_in_nested_vmap():
    def sc(lib):
        def f(x):
            return lib.zeros_like(x).copy_(x.exp()), x.new_zeros(3).copy_(x[:3])
        return lib.vmap(lib.vmap(f))(t(lib, arr(11, 2, 3, 4)))
    same(sc)


def test_convolution_jvp_and_under_vmap():
    def sc(lib):
        F = lib.func
        x, w, b = t(lib, arr(12, 2, 3, 6, 6)), t(lib, arr(13, 4, 3, 3, 3)), t(lib, arr(14, 4))
        tx, tw, tb = t(lib, arr(15, 2, 3, 6, 6)), t(lib, arr(16, 4, 3, 3, 3)), t(lib, arr(17, 4))
        conv = lambda x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1)
        r1 = F.jvp(conv, (x, w, b), (tx, tw, tb))
        one = lambda xs: F.jvp(lambda p: conv(xs.unsqueeze(0), p, b), (w,), (tw,))[1]
        r2 = F.vmap(one)(x)
        convt = lambda x, w: lib.nn.functional.conv_transpose2d(x, w, stride=2)
        r3 = F.jvp(convt, (x[:, :3, :4, :4], w[:3]), (tx[:, :3, :4, :4], tw[:3]))
        return r1, r2, r3
    same(sc, rtol=1e-9, atol=1e-9)


def test_return_types_module_names_the_classes():
    def sc(lib):
        x = t(lib, arr(7, 3, 4))
        r = lib.vmap(lib.min, (0, None))(x, 0)
        return (isinstance(r, lib.return_types.min),
                isinstance(lib.vmap(lib.max, (0, None))(x, 0), lib.return_types.max),
                isinstance(x.sort(), lib.return_types.sort), r.values, r.indices,
                isinstance(lib.linalg.eigh(x @ x.t()), lib.return_types.linalg_eigh),
                isinstance(lib.linalg.qr(x), lib.return_types.linalg_qr),
                isinstance(lib.linalg.slogdet(x[:, :3]), lib.return_types.linalg_slogdet))
    same(sc)


def test_jacfwd_of_jacfwd_through_linear():
    # the jacobians tutorial's hess_fwdfwd: the inner jacfwd's batched tangent reaches
    # linear's reshape of a strided primal (a view there, not of the tangent as laid out)
    def sc(lib):
        w, b, x = t(lib, arr(8, 6, 5)), t(lib, arr(9, 6)), t(lib, arr(10, 5))

        def predict(w, b, x):
            return lib.nn.functional.linear(x, w, b).tanh()
        return (lib.func.jacfwd(lib.func.jacfwd(predict, argnums=2), argnums=2)(w, b, x),
                lib.func.hessian(predict, argnums=2)(w, b, x),
                lib.func.jacrev(lib.func.jacrev(predict, argnums=2), argnums=2)(w, b, x))
    same(sc, rtol=1e-10, atol=1e-10)


def test_transform_input_and_output_checks_match_torch():
    x = lambda lib: t(lib, arr(11, 2, 3))  # noqa: E731
    for f in (
        lambda lib: lib.vmap(lambda a: lib.randn(3), (None,))(1),
        lambda lib: lib.vmap(lambda a: a, (None,))(x(lib)),
        lambda lib: lib.func.jvp(lib.sin, (x(lib),), x(lib)),
        lambda lib: lib.func.jvp(lib.sin, (x(lib),), [x(lib)]),
        lambda lib: lib.func.jvp(lib.sin, (), ()),
        lambda lib: lib.func.jvp(lib.sin, (1.,), (x(lib),)),
        lambda lib: lib.func.jvp(lib.sin, (x(lib),), (1.,)),
        lambda lib: lib.func.jvp(lambda a: (), (x(lib),), (x(lib),)),
        lambda lib: lib.func.vjp(lambda a: (), x(lib)),
        lambda lib: lib.func.vjp(lambda a: None, x(lib)),
        lambda lib: lib.func.jacrev(lambda a: ())(x(lib)),
        lambda lib: lib.func.jacfwd(lambda a: ())(x(lib)),
        lambda lib: lib.func.jacfwd(lib.sin, argnums=())(x(lib)),
        lambda lib: lib.func.grad(lib.sin, argnums=())(x(lib)),
    ):
        raises_same(f)


def test_vmap_out_dims_one_tuple_and_ordered_dict_outputs():
    def sc(lib):
        a = t(lib, arr(12, 2, 3))
        r1 = lib.vmap(lambda v: v * 2, out_dims=(1,))(a)
        od = lib.vmap(lambda v: collections.OrderedDict([("s", v.sin()), ("c", v.cos())]))(a)
        od_in = lib.vmap(lambda d: d["x"] * d["y"])(collections.OrderedDict(x=a, y=a))
        return r1, type(od).__name__, list(od), od["s"], od["c"], od_in
    same(sc)


def test_vmap_type_promotion_by_sample_rank():
    # a batched 0-d float64 sample meeting a float32 vector sample gives float32, as in torch
    def sc(lib):
        a = t(lib, arr(13, 4, 2, dtype=np.float32))
        s = t(lib, arr(14, 4))
        outs = []
        for op in (lib.add, lib.mul, lib.sub, lib.div, lambda x, y: x ** y.abs()):
            outs += [lib.vmap(op)(a, s), lib.vmap(op)(s, a), lib.vmap(op)(s, s),
                     lib.vmap(op, in_dims=(0, None))(a, s[0])]
        return outs
    same(sc, rtol=1e-5, atol=1e-6)


def test_no_grad_around_and_inside_transforms():
    def sc(lib):
        g, gv = lib.func.grad, lib.func.grad_and_value
        x = t(lib, np.array(1.5), requires_grad=True)
        with lib.no_grad():
            y = g(lib.sin)(x)
            (v, _), _ = lib.func.vjp(lambda a: (a.sin(), a.cos()), x)

        def f(a):
            with lib.no_grad():
                shift = a ** 3
            return a ** 3 - shift

        def h(a):
            with lib.no_grad():
                shift = g(lambda b: 0.25 * b ** 4)(a)
            return a ** 3 - shift

        def k(a):
            r1 = g(f)(a)
            with lib.no_grad():
                shift = g(f)(a)
            return r1 - shift

        def m(a):
            with lib.no_grad():
                _, value = gv(lambda b: b ** 3)(a)
            return a ** 3 - value
        outs = [y, y.requires_grad, v.requires_grad]
        for fn in (h, k, m):
            r = g(fn)(x)
            outs += [r, lib.autograd.grad(r, x)[0]]
        return outs
    same(sc)


def test_autograd_apis_refused_inside_transforms():
    def retain(lib):
        def f(x):
            y = x.sin()
            y.retain_grad()
            return y.sum()
        lib.func.grad(f)(t(lib, arr(15, 3)))
    raises_same(retain)
    for api in ("jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"):
        def call(lib, api=api):
            fn = getattr(lib.autograd.functional, api)
            s = lambda x: x.sin().sum()  # noqa: E731
            args = (s, t(lib, arr(16, 3))) if api in ("jacobian", "hessian") else (
                s, t(lib, arr(16, 3)), t(lib, arr(17, 3)) if api != "vjp" else None)
            lib.vmap(lambda x: fn(*args[:1], x, *args[2:]))(t(lib, arr(18, 2, 3)))
        raises_same(call)


def test_utils_pytree_round_trips_like_torch():
    import ndgrad.utils._pytree as nd_pt
    import torch.utils._pytree as t_pt

    def sc(lib):
        pt = nd_pt if lib is not torch_lib() else t_pt
        tree = (t(lib, arr(19, 2)), [1, {"a": t(lib, arr(20, 3)), "b": None}],
                collections.OrderedDict(z=2.5), P(3, t(lib, arr(21, 1))))
        leaves, spec = pt.tree_flatten(tree)
        back = pt.tree_unflatten(leaves, spec)
        mapped = pt.tree_map(lambda v: v * 2 if isinstance(v, (int, float)) else v, tree)
        return (len(leaves), pt.tree_leaves(tree)[0], type(back[3]).__name__, back[1][1]["a"],
                mapped[1][0], mapped[2]["z"], type(back[2]).__name__)
    same(sc)


def torch_lib():
    import torch
    return torch


def test_vmap_over_autograd_grad_of_number_op_tensor():
    # functorch's batched-gradient check of div/mul with a Python number first operand
    def sc(lib):
        y = t(lib, np.abs(arr(22, 2, 3)) + 0.5, requires_grad=True)
        outs = []
        for op in (lib.div, lib.mul, lambda a, b: a / b, lambda a, b: a - b):
            out = op(3.14, y)

            def vjp(v, out=out):
                return lib.autograd.grad(out, y, v, retain_graph=True)
            outs.append(lib.vmap(vjp)(t(lib, arr(23, 4, 2, 3))))
        return outs
    same(sc)


def test_vmap_transpose_of_a_zero_dim_sample():
    def sc(lib):
        x = t(lib, arr(24, 7))
        return [lib.vmap(lambda v, a=a, b=b: lib.transpose(v, a, b))(x)
                for a in (0, -1) for b in (0, -1)]
    same(sc)


def test_vjp_and_vjp_fn_under_no_grad():
    def sc(lib):
        x = t(lib, np.array(3.14), requires_grad=True)
        out, vjp_fn = lib.func.vjp(lambda a: a ** 2, x)
        with lib.no_grad():
            (y,) = vjp_fn(t(lib, np.array(1.0)))
        with lib.no_grad():
            out2, vjp_fn2 = lib.func.vjp(lambda a: a ** 2, x)
        (y2,) = vjp_fn2(t(lib, np.array(1.0)))
        return (y, y.requires_grad, out.requires_grad, lib.autograd.grad(out, x)[0],
                y2, out2.requires_grad, y2.requires_grad, lib.autograd.grad(y2, x)[0])
    same(sc)
