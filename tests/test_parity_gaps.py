"""Differential tests (vs torch 2.13) for small parity gaps: complex random factories,
complex linspace/logspace, the real/imag setters, in-place writes to multi-output views and
profiler events for custom autograd Functions."""

import pytest
import torch

import ndgrad

from _diff import raises_same, same


def test_rand_randn_complex_match_torch_stream():
    for f in ("rand", "randn"):
        for dt in ("complex64", "complex128"):
            for shape in ((3,), (5, 4), (17,), ()):
                def scen(lib):
                    lib.manual_seed(7)
                    a = getattr(lib, f)(shape, dtype=getattr(lib, dt))
                    like = getattr(lib, f + "_like")(lib.zeros(2, 9, dtype=getattr(lib, dt)),
                                                    requires_grad=True)
                    after = lib.rand(2)   # the stream continues at the same position
                    return a, like, like.requires_grad, str(like.dtype), after
                same(scen, rtol=0, atol=0)
    # variance of each part is 1/2 for randn
    ndgrad.manual_seed(0)
    z = ndgrad.randn(4000, dtype=ndgrad.complex128)._data
    assert abs(z.real.var() - 0.5) < 0.05 and abs(z.imag.var() - 0.5) < 0.05


def test_linspace_logspace_complex():
    ends = [(0, 1 + 1j), (-2.3 + 0.7j, 5.1 - 3.3j), (1j, 3), (-2.3, 5.1)]
    for steps in (0, 1, 2, 7, 16, 101):
        for s, e in ends:
            for dt in (None, "complex64", "complex128", "float32", "float64"):
                if dt in ("float32", "float64") and (isinstance(s, complex) or
                                                     isinstance(e, complex)):
                    continue
                # linspace is bit-exact (torch's fused multiply-add kernel), also for reals
                same(lambda lib: lib.linspace(s, e, steps, dtype=dt and getattr(lib, dt)),
                     rtol=0, atol=0)
                if dt is None or "complex" in dt:
                    tol = 1e-6 if dt in (None, "complex64") else 1e-14
                    same(lambda lib: lib.logspace(s, e, steps, base=2,
                                                  dtype=dt and getattr(lib, dt)), rtol=tol)
    same(lambda lib: lib.linspace(lib.tensor(1j), 2, 5, requires_grad=True), rtol=0, atol=0)
    same(lambda lib: lib.logspace(lib.tensor(0.5), 1 - 2j, 4), rtol=1e-6)
    raises_same(lambda lib: lib.linspace(0, 1j, 3, dtype=lib.float32))
    raises_same(lambda lib: lib.linspace(0, 1j, 3, dtype=lib.int64))
    raises_same(lambda lib: lib.logspace(0, 1j, 3, dtype=lib.float32))


def test_real_imag_setters_write_through():
    def plain(lib):
        x = lib.tensor([1 + 2j, 3 - 1j])
        x.imag = lib.tensor([5.0, 6.0])
        r1 = x.clone()
        x.imag = 7
        r2 = x.clone()
        x.real = lib.tensor([0.5, 0.25])
        f = lib.tensor([1.0, 2.0])
        f.real = lib.tensor([3.0, 4.0])
        return r1, r2, x, f
    same(plain, rtol=0, atol=0)

    def graph(lib):
        a = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        v = lib.tensor([5.0, 6.0], requires_grad=True)
        x = a * 1
        x.imag = v
        names = (type(x.grad_fn).__name__,
                 [type(n).__name__ for n, _ in x.grad_fn.next_functions])
        (x.abs() ** 2).sum().backward()
        return x, names, a.grad, v.grad
    same(graph)
    raises_same(lambda lib: setattr(lib.tensor([1.0, 2.0]), "imag", lib.tensor([1.0, 2.0])))
    raises_same(lambda lib: setattr(lib.tensor([1 + 2j], requires_grad=True), "imag",
                                    lib.tensor([1.0])))
    raises_same(lambda lib: setattr(lib.tensor([1 + 2j, 2j]), "imag", lib.tensor([1.0, 2, 3])))


def _mk(lib, rg=True):
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=rg)
    return a, a * 1


def _no_grad_write(lib, view):
    with lib.no_grad():
        view.mul_(2)


MULTI_VIEW_RAISES = {
    # the view itself written in place while autograd records
    "unbind": lambda lib: _mk(lib)[1].unbind(0)[0].mul_(2),
    "split": lambda lib: _mk(lib)[1].split(1)[1].add_(1),
    "chunk": lambda lib: _mk(lib)[1].chunk(2, 1)[1].zero_(),
    "split_with_sizes": lambda lib: _mk(lib)[1].split([1, 1])[0].mul_(2),
    "single_split": lambda lib: _mk(lib)[1].split(2)[0].mul_(2),
    "setitem_of_view": lambda lib: _mk(lib)[1].unbind(0)[0].__setitem__(0, 5.0),
    "slice_of_view": lambda lib: _mk(lib)[1].unbind(0)[0][0:1].mul_(2),
    "unbind_of_view": lambda lib: _mk(lib)[1].unbind(0)[0].unbind(0)[0].mul_(2),
    "of_leaf": lambda lib: _mk(lib)[0].unbind(0)[0].mul_(2),
    "other_requires_grad": lambda lib: _mk(lib, False)[1].unbind(0)[0].mul_(
        lib.tensor(2.0, requires_grad=True)),
    # the view used in autograd after it (under no_grad), a sibling or its base changed
    "used_after_no_grad_write": lambda lib: (lambda xs: (_no_grad_write(lib, xs[0]),
                                                          xs[0].sum()))(_mk(lib)[1].unbind(0)),
    "sibling_used": lambda lib: (lambda xs: (_no_grad_write(lib, xs[0]),
                                             xs[1] * 2))(_mk(lib)[1].split(1)),
    "grad_fn_access": lambda lib: (lambda xs: (_no_grad_write(lib, xs[0]),
                                               xs[0].grad_fn))(_mk(lib)[1].chunk(2)),
    "base_written": lambda lib: (lambda b: (lambda xs: (b.mul_(2), xs[0].sum()))(b.unbind(0)))(
        _mk(lib)[1]),
    "base_written_then_view": lambda lib: (lambda b: (lambda xs: (b.add_(1), xs[0].mul_(2)))(
        b.unbind(0)))(_mk(lib)[1]),
    "view_taken_under_no_grad": lambda lib: (lambda b: (lambda xs: xs[0].mul_(2))(
        _views_no_grad(lib, b)))(_mk(lib)[1]),
}


def _views_no_grad(lib, b):
    with lib.no_grad():
        return b.unbind(0)


def test_multi_output_views_inplace_errors():
    for name, scen in MULTI_VIEW_RAISES.items():
        err = raises_same(scen)
        assert isinstance(err, RuntimeError), name

    def allowed(lib):
        out = []
        # nothing requires grad: a plain write through the view
        a, b = _mk(lib, False)
        b.unbind(0)[0].mul_(2)
        out.append(b)
        # under no_grad torch allows the write; the data changes, detach() still works
        a, b = _mk(lib)
        xs = b.unbind(0)
        _no_grad_write(lib, xs[0])
        out += [b.detach(), xs[0].detach(), xs[0].requires_grad]
        with lib.no_grad():
            out.append(xs[0] * 2)
        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        with lib.no_grad():
            a.unbind(0)[0].mul_(2)
        out.append(a.detach())
        # other views (tensor_split, unflatten) are single-output: allowed, with history
        a, b = _mk(lib)
        v = b.tensor_split(2)[0]
        v.mul_(3)
        b.sum().backward()
        out.append(a.grad)
        return out
    same(allowed)

    # repeated use keeps raising
    for lib in (ndgrad, torch):
        xs = _mk(lib)[1].unbind(0)
        _no_grad_write(lib, xs[0])
        for _ in range(2):
            with pytest.raises(RuntimeError, match="Output 0 of Unbind is a view and its base"):
                xs[0].grad_fn


def _profile_function(lib):
    class MyFn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            return x * k, x + 1

        @staticmethod
        def backward(ctx, g, h):
            x, = ctx.saved_tensors
            return g * x, None

    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x * 2
            raise ValueError("boom")

    x = lib.ones(3, requires_grad=True)
    with lib.autograd.profiler.profile(record_shapes=True) as p:
        with lib.no_grad():
            MyFn.apply(x, 2)
        a, _ = MyFn.apply(x, 3)
        with pytest.raises(ValueError):
            Bad.apply(x)
        a.sum().backward()
    keep = {"MyFn", "Bad", "aten::mul", "MyFnBackward",
            "autograd::engine::evaluate_function: MyFnBackward"}
    evs = [e for e in p.function_events if e.name in keep]
    rows = [(e.name, e.cpu_parent.name if e.cpu_parent is not None else None,
             e.input_shapes if e.name in ("MyFn", "Bad") else None) for e in evs]
    seq = {e.name: e.sequence_nr for e in evs}
    # the forward event carries the node's sequence number, which links it to the backward
    linked = seq["MyFn"] == seq["MyFnBackward"] and seq["MyFn"] >= 0
    keys = sorted(k.key for k in p.key_averages() if k.key in keep)
    return rows, linked, keys, x.grad


def test_profiler_records_custom_function():
    same(_profile_function)
