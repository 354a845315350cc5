"""nn.init and nn.utils against torch 2.13: same seeds give the same values, same errors;
the Tensor random fills; gradient clipping and parameter/vector conversion."""

import math
import warnings

import numpy as np
import pytest
import torch

import ndgrad


def both(fn, shape, seed=0, dtype="float32"):
    torch.manual_seed(seed)
    t = torch.empty(shape, dtype=getattr(torch, dtype))
    rt = fn(torch.nn.init, t)
    ndgrad.manual_seed(seed)
    n = ndgrad.empty(shape, dtype=getattr(ndgrad, dtype))
    rn = fn(ndgrad.nn.init, n)
    assert rn is n and rt is t
    return t.numpy(), n.numpy()


EXACT = [
    ("uniform", lambda init, t: init.uniform_(t, -0.5, 2.0)),
    ("normal", lambda init, t: init.normal_(t, 1.0, 0.3)),
    ("constant", lambda init, t: init.constant_(t, 0.7)),
    ("ones", lambda init, t: init.ones_(t)),
    ("zeros", lambda init, t: init.zeros_(t)),
    ("xavier_uniform", lambda init, t: init.xavier_uniform_(t, gain=2.0)),
    ("xavier_normal", lambda init, t: init.xavier_normal_(t)),
    ("kaiming_uniform", lambda init, t: init.kaiming_uniform_(t, a=math.sqrt(5))),
    ("kaiming_uniform_fan_out", lambda init, t: init.kaiming_uniform_(t, mode="fan_out",
                                                                nonlinearity="relu")),
    ("kaiming_normal", lambda init, t: init.kaiming_normal_(t, nonlinearity="relu")),
]


@pytest.mark.parametrize("name,fn", EXACT, ids=[e[0] for e in EXACT])
@pytest.mark.parametrize("shape", [(4, 3), (5, 3, 2, 2), (40, 7)])
def test_exact_initialisers(name, fn, shape):
    a, b = both(fn, shape)
    np.testing.assert_array_equal(b, a)


def test_exact_float64_and_generator():
    a, b = both(lambda init, t: init.normal_(t), (33,), dtype="float64")
    np.testing.assert_array_equal(b, a)
    gt = torch.Generator().manual_seed(3)
    gn = ndgrad.Generator().manual_seed(3)
    t = torch.nn.init.uniform_(torch.empty(5, 5), generator=gt)
    n = ndgrad.nn.init.uniform_(ndgrad.empty(5, 5), generator=gn)
    np.testing.assert_array_equal(n.numpy(), t.numpy())


def test_trunc_normal_orthogonal_sparse_close():
    for args in ((0.5, 2.0, -1.0, 3.0), (0.0, 1.0, 1.0, 1.5), (0.0, 0.02, -0.04, 0.04)):
        a, b = both(lambda init, t: init.trunc_normal_(t, *args), (50, 4))
        np.testing.assert_allclose(b, a, atol=1e-6)
        assert b.min() >= args[2] and b.max() <= args[3]
    for shape in ((6, 4), (3, 8), (4, 2, 3)):
        a, b = both(lambda init, t: init.orthogonal_(t, gain=1.5), shape)
        np.testing.assert_allclose(b, a, atol=1e-5)
    a, b = both(lambda init, t: init.sparse_(t, 0.5, std=0.1), (6, 5))
    np.testing.assert_array_equal(b == 0, a == 0)
    np.testing.assert_allclose(b, a, atol=1e-7)


def test_eye_dirac():
    a, b = both(lambda init, t: init.eye_(t), (3, 5))
    np.testing.assert_array_equal(b, a)
    for shape, groups in (((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((2, 3, 1, 3, 3), 1)):
        a, b = both(lambda init, t: init.dirac_(t, groups), shape)
        np.testing.assert_array_equal(b, a)


def test_gain_and_fans():
    for args in (("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",), ("selu",),
                 ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 3)):
        assert ndgrad.nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)
    for shape in ((3, 4), (5, 3, 2, 7), (2, 3, 4)):
        assert ndgrad.nn.init._calculate_fan_in_and_fan_out(ndgrad.empty(shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))


def test_errors_match_torch():
    cases = [
        lambda init, lib: init.calculate_gain("foo"),
        lambda init, lib: init.calculate_gain("leaky_relu", "x"),
        lambda init, lib: init.xavier_uniform_(lib.empty(3)),
        lambda init, lib: init.kaiming_uniform_(lib.empty(3, 3), mode="fan_x"),
        lambda init, lib: init.eye_(lib.empty(3)),
        lambda init, lib: init.dirac_(lib.empty(3, 3)),
        lambda init, lib: init.dirac_(lib.empty(3, 3, 3), groups=2),
        lambda init, lib: init.orthogonal_(lib.empty(3)),
        lambda init, lib: init.sparse_(lib.empty(3), 0.1),
    ]
    for case in cases:
        with pytest.raises(Exception) as et:
            case(torch.nn.init, torch)
        with pytest.raises(Exception) as en:
            case(ndgrad.nn.init, ndgrad)
        assert type(en.value) is type(et.value)
        assert str(en.value) == str(et.value)


def test_init_runs_without_grad_and_on_parameters():
    p = ndgrad.nn.Parameter(ndgrad.empty(3, 4))
    v = p._version
    ndgrad.nn.init.kaiming_normal_(p)
    assert p.grad_fn is None and p.requires_grad and p._version > v
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ndgrad.nn.init.kaiming_uniform_(ndgrad.empty(0, 3))
    assert "Initializing zero-element tensors is a no-op" in str(w[0].message)


def test_tensor_random_methods_match_torch():
    for method, args in (("uniform_", (-1.0, 3.0)), ("normal_", (2.0, 0.5)),
                         ("bernoulli_", (0.3,)), ("exponential_", (2.0,)),
                         ("random_", (0, 10))):
        torch.manual_seed(9)
        t = getattr(torch.empty(20), method)(*args)
        ndgrad.manual_seed(9)
        n = getattr(ndgrad.empty(20), method)(*args)
        np.testing.assert_array_equal(n.numpy(), t.numpy(), err_msg=method)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        ndgrad.ones(2, requires_grad=True).uniform_()


def _grads(lib, seed):
    rng = np.random.default_rng(seed)
    ps = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(np.float32)))
          for s in ((3, 4), (5,), (2, 2))]
    for p in ps:
        p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 3)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm(norm_type, max_norm):
    tp, np_ = _grads(torch, 1), _grads(ndgrad, 1)
    rt = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    rn = ndgrad.nn.utils.clip_grad_norm_(np_, max_norm, norm_type)
    np.testing.assert_allclose(rn.numpy(), rt.numpy(), rtol=1e-6)
    for a, b in zip(tp, np_):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-6)


def test_clip_grad_value_and_vectors():
    tp, np_ = _grads(torch, 2), _grads(ndgrad, 2)
    torch.nn.utils.clip_grad_value_(tp, 1.2)
    ndgrad.nn.utils.clip_grad_value_(np_, 1.2)
    for a, b in zip(tp, np_):
        np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())
    vt = torch.nn.utils.parameters_to_vector(tp)
    vn = ndgrad.nn.utils.parameters_to_vector(np_)
    np.testing.assert_array_equal(vn.detach().numpy(), vt.detach().numpy())
    vn.sum().backward()
    assert all(p.grad is not None for p in np_)
    new = np.arange(vn.numel(), dtype=np.float32)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), tp)
    ndgrad.nn.utils.vector_to_parameters(ndgrad.tensor(new), np_)
    for a, b in zip(tp, np_):
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        ndgrad.nn.utils.vector_to_parameters([1.0], np_)


def test_sparse_with_generator_uses_default_for_permutations():
    torch.manual_seed(1)
    ndgrad.manual_seed(1)
    t = torch.nn.init.sparse_(torch.empty(5, 4), 0.4, generator=torch.Generator().manual_seed(2))
    n = ndgrad.nn.init.sparse_(ndgrad.empty(5, 4), 0.4,
                               generator=ndgrad.Generator().manual_seed(2))
    np.testing.assert_allclose(n.numpy(), t.numpy(), atol=1e-7)
    np.testing.assert_array_equal(n.numpy() == 0, t.numpy() == 0)


def test_pad_sequence():
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((n, 2)).astype(np.float32) for n in (3, 1, 4)]
    for kw in (dict(), dict(batch_first=True, padding_value=-1.0), dict(padding_side="left")):
        t = torch.nn.utils.rnn.pad_sequence([torch.tensor(a) for a in arrays], **kw)
        n = ndgrad.nn.utils.rnn.pad_sequence([ndgrad.tensor(a) for a in arrays], **kw)
        np.testing.assert_array_equal(n.numpy(), t.numpy())


def test_random_fill_on_non_leaf_records_like_torch():
    for method, args in (("uniform_", ()), ("normal_", ()), ("bernoulli_", (0.5,)),
                         ("exponential_", ()), ("random_", (0, 5)), ("random_", (5,)),
                         ("random_", ())):
        names = []
        for lib in (torch, ndgrad):
            x = lib.ones(3, requires_grad=True)
            z = x * 2
            getattr(z, method)(*args)
            z.sum().backward()
            assert not x.grad.any()
            names.append(z.grad_fn.name())
        assert names[0] == names[1]


def test_deprecated_aliases_warn_and_match_torch():
    # every non-underscore alias torch 2.13 keeps (eye and dirac included): its FutureWarning
    # text, the values of the underscore form, and its errors
    aliases = sorted(n for n in dir(torch.nn.init)
                     if not n.startswith("_") and n + "_" in dir(torch.nn.init))
    assert "eye" in aliases and "dirac" in aliases
    args = {"eye": ((3, 5), ()), "dirac": ((4, 2, 3, 3), (2,)), "constant": ((3, 4), (0.5,)),
            "sparse": ((6, 5), (0.5,))}
    for name in aliases:
        shape, extra = args.get(name, ((4, 6), ()))
        res = []
        for lib in (torch, ndgrad):
            lib.manual_seed(3)
            t = lib.empty(shape)
            with pytest.warns(FutureWarning) as rec:
                out = getattr(lib.nn.init, name)(t, *extra)
            assert out is t
            res.append((str(rec[0].message), rec[0].filename, t.numpy().copy(),
                        getattr(lib.nn.init, name).__name__))
        assert res[1][0] == res[0][0] == (f"`nn.init.{name}` is now deprecated in favor of "
                                          f"`nn.init.{name}_`.")
        assert res[1][1] == res[0][1] == __file__  # the warning points at the caller
        assert res[1][3] == res[0][3] == name
        np.testing.assert_allclose(res[1][2], res[0][2], atol=1e-6, err_msg=name)
    for lib_case in (lambda init, lib: init.eye(lib.empty(3)),
                     lambda init, lib: init.dirac(lib.empty(3, 3, 3), 2)):
        errs = []
        for lib in (torch, ndgrad):
            with pytest.warns(FutureWarning), pytest.raises(ValueError) as e:
                lib_case(lib.nn.init, lib)
            errs.append(str(e.value))
        assert errs[0] == errs[1]
