"""Differential checks with gradients, shared by the op test files: ``check`` runs one
``fn(lib, *arrays)`` with torch and ndgrad and compares outputs, grad_fn names (or chains) and
the gradients of a backward with random grad_outputs; ``check_gradgrad`` compares a second-order
derivative; ``check_error`` compares the raised exception. Arguments are NumPy arrays (or lists
of them), turned into tensors of each library (floating ones requiring grad when asked).
``backward_garbage`` counts the reference cycles a backward leaves; ``error_of`` and
``each_raises_alike`` capture and compare exceptions."""

import gc
import warnings

import numpy as np
import pytest
import torch

import ndgrad


def _to(lib, v, rg):
    if isinstance(v, np.ndarray):
        t = lib.tensor(v)
        if rg and v.dtype.kind in "fc":
            t.requires_grad_(True)
        return t
    if isinstance(v, (list, tuple)) and v and all(isinstance(a, np.ndarray) for a in v):
        return type(v)(_to(lib, a, rg) for a in v)
    return v


def _flat(o):
    if isinstance(o, (tuple, list)):
        out = []
        for v in o:
            out += _flat(v)
        return out
    return [o]


def _leaves(args):
    out = []
    for a in args:
        if isinstance(a, (list, tuple)):
            out += _leaves(a)
        elif hasattr(a, "requires_grad") and a.requires_grad:
            out.append(a)
    return out


def _arr(t):
    return np.asarray(t.detach()._data if isinstance(t, ndgrad.Tensor) else t.detach().numpy())


def _name(t):
    fn = t.grad_fn
    return None if fn is None else type(fn).__name__


def _chain(t):
    """grad_fn names from `t` back to the leaf along first inputs."""
    out, fn = [], t.grad_fn
    while fn is not None and type(fn).__name__ != "AccumulateGrad":
        out.append(type(fn).__name__)
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt else None
    return out


def check(fn, *args, grad=True, rtol=1e-6, atol=1e-7, names=True, seed=0, chain=False,
          grad_dtype=True):
    """Run ``fn(lib, *args)`` with torch and ndgrad; compare outputs, grad_fn names (the whole
    chain back to the leaf with ``chain=True``) and the gradients (and their dtypes with
    ``grad_dtype``) of a backward with random grad_outputs."""
    ta = [_to(torch, a, grad) for a in args]
    na = [_to(ndgrad, a, grad) for a in args]
    to, no = fn(torch, *ta), fn(ndgrad, *na)
    tl, nl = _flat(to), _flat(no)
    assert len(tl) == len(nl)
    diff_t, diff_n = [], []
    for t, n in zip(tl, nl):
        if not isinstance(t, torch.Tensor):
            assert t == n
            continue
        assert isinstance(n, ndgrad.Tensor)
        assert str(n.dtype) == str(t.dtype)
        assert tuple(n.shape) == tuple(t.shape)
        np.testing.assert_allclose(_arr(n), _arr(t), rtol=rtol, atol=atol, equal_nan=True)
        assert n.requires_grad == t.requires_grad
        if chain:
            assert _chain(n) == _chain(t)
        elif names:
            assert _name(n) == _name(t)
        if t.requires_grad:
            diff_t.append(t)
            diff_n.append(n)
    if not grad or not diff_t:
        return to, no
    rng = np.random.default_rng(seed)
    gos = [rng.standard_normal(t.shape).astype(_arr(t).dtype) for t in diff_t]
    torch.autograd.backward(diff_t, [torch.tensor(g) for g in gos])
    ndgrad.autograd.backward(diff_n, [ndgrad.tensor(g) for g in gos])
    for tx, nx in zip(_leaves(ta), _leaves(na)):
        if tx.grad is None:
            assert nx.grad is None or not _arr(nx.grad).any()
        else:
            assert nx.grad is not None
            if grad_dtype:
                assert str(nx.grad.dtype) == str(tx.grad.dtype)
            np.testing.assert_allclose(_arr(nx.grad), _arr(tx.grad), rtol=rtol * 10,
                                       atol=atol * 10, equal_nan=True)
    return to, no


def check_gradgrad(fn, *args, rtol=1e-6, atol=1e-8, seed=1):
    """Second-order: d/dx <grad(fn)(x) . v> against torch (create_graph backward)."""
    res = {}
    for lib in (torch, ndgrad):
        xs = [_to(lib, a, True) for a in args]
        leaves = _leaves(xs)
        outs = [o for o in _flat(fn(lib, *xs)) if isinstance(o, lib.Tensor) and o.requires_grad]
        r = np.random.default_rng(seed)
        gos = [lib.tensor(r.standard_normal(tuple(o.shape))) for o in outs]
        gs = lib.autograd.grad(outs, leaves, gos, create_graph=True, allow_unused=True)
        vs = [lib.tensor(r.standard_normal(tuple(x.shape))) for x in leaves]
        total = sum((g * v).sum() for g, v in zip(gs, vs) if g is not None and g.requires_grad)
        if not isinstance(total, lib.Tensor):
            res[lib.__name__] = None
            continue
        ggs = lib.autograd.grad(total, leaves, allow_unused=True)
        res[lib.__name__] = [None if g is None else _arr(g) for g in ggs]
    t, n = res["torch"], res["ndgrad"]
    assert (t is None) == (n is None)
    if t is None:
        return
    for a, b in zip(t, n):
        if a is None:
            assert b is None or not b.any()
        else:
            np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, equal_nan=True)


def check_error(fn, *args, match_message=True):
    """Both libraries raise (ndgrad an instance of the builtin base of torch's type), with the
    same message unless ``match_message`` is False."""
    ta = [_to(torch, a, False) for a in args]
    na = [_to(ndgrad, a, False) for a in args]
    with pytest.raises(Exception) as te:
        fn(torch, *ta)
    with pytest.raises(Exception) as ne:
        fn(ndgrad, *na)
    tt = type(te.value)
    # torch raises its own subclasses of the builtin types (e.g. torch.AcceleratorError)
    assert isinstance(ne.value, tt.__mro__[[c.__module__ for c in tt.__mro__].index("builtins")])
    if match_message:
        assert str(ne.value) == str(te.value)


def backward_garbage(x):
    """Objects the garbage collector finds after three backwards of ``(x * 2).tanh().sum()``
    (after one warm-up backward): 0 when the graph frees itself by reference counting."""
    (x * 2).sum().backward()
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            (x * 2).tanh().sum().backward()
        return gc.collect()
    finally:
        gc.enable()


def check_or_error(fns, a, checker=check, **kw):
    """Each ``f(lib, x)`` of ``fns`` on array ``a``: where torch raises, ndgrad must raise alike
    (``check_error``); otherwise ``checker(f, a, **kw)`` compares the results."""
    for f in fns:
        try:
            f(torch, torch.tensor(a))
        except Exception:  # noqa: BLE001 - then ndgrad must raise the same
            check_error(f, a)
            continue
        checker(f, a, **kw)


def backward_linspace(lib, o):
    """``o`` (a tensor or tuple of them) as a tuple, after a backward from those of its tensors
    that require grad, with grad_outputs ``linspace(-1, 1)`` in each one's shape."""
    o = o if isinstance(o, tuple) else (o,)
    outs = [t for t in o if t.requires_grad]
    if outs:
        lib.autograd.backward(outs, [lib.tensor(np.linspace(-1, 1, t.numel())
                                                .reshape(tuple(t.shape))) for t in outs])
    return o


def error_of(fn):
    """``(type, message)`` of the exception ``fn()`` raises, or None when it returns."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the caller compares it with torch's
        return type(e), str(e)
    return None


def each_raises_alike(torch_cases, ndgrad_cases, quiet=False):
    """Paired zero-argument callables: each pair raises exceptions of exactly the same type with
    the same message (with ``quiet``, warnings raised on the way are ignored)."""
    for ft, fn in zip(torch_cases, ndgrad_cases):
        with warnings.catch_warnings():
            if quiet:
                warnings.simplefilter("ignore")
            with pytest.raises(Exception) as et:
                ft()
            with pytest.raises(Exception) as en:
                fn()
        assert type(en.value) is type(et.value)
        assert str(en.value) == str(et.value)


def random_arrays(seed):
    """``(R, C)``: ``R(*shape)`` standard-normal real and ``C(*shape)`` complex arrays drawn in
    call order from one generator seeded with ``seed`` (one per test module)."""
    rng = np.random.default_rng(seed)

    def R(*s):
        return rng.standard_normal(s)

    def C(*s):
        return rng.standard_normal(s) + 1j * rng.standard_normal(s)
    return R, C
