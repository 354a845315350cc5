"""ndgrad.fft, stft/istft and the window functions against torch 2.13: values, dtypes,
grad_fn chains, gradients (complex ones in the conjugate-Wirtinger convention), double
backward, forward-mode tangents, batched gradients, warnings and errors (class and message)."""

import warnings

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfwd

import ndgrad
import ndgrad.autograd.forward_ad as nfwd

LIBS = (ndgrad, torch)
rng = np.random.default_rng(0)


def _np(t):
    t = t.detach()
    if isinstance(t, torch.Tensor):
        t = t.resolve_conj()
    return np.array(t.numpy())


def _chain(y):
    """grad_fn names along the first path to a leaf."""
    names, g = [], y.grad_fn
    while g is not None:
        names.append(g.name())
        nxt = [n for n, _ in g.next_functions if n is not None and "Accumulate" not in n.name()]
        g = nxt[0] if nxt else None
    return names


def _data(shape, cplx):
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if cplx else a


def _loss(lib, y, w):
    p = y * lib.tensor(w)
    return p.real.sum() if y.is_complex() else p.sum()


def _run(lib, name, a, kw):
    x = lib.tensor(a, requires_grad=True)
    y = getattr(lib.fft, name)(x, **kw)
    return x, y


def _compare(name, a, kw, atol=1e-10):
    """Output (values, dtype, shape, grad_fn chain) and gradient equal torch's."""
    tx, ty = _run(torch, name, a, kw)
    nx, ny = _run(ndgrad, name, a, kw)
    assert tuple(ny.shape) == tuple(ty.shape) and str(ny.dtype) == str(ty.dtype)
    np.testing.assert_allclose(_np(ny), _np(ty), atol=atol, rtol=1e-8)
    assert _chain(ny) == _chain(ty)
    w = _data(tuple(ty.shape), ty.is_complex())
    _loss(torch, ty, w).backward()
    _loss(ndgrad, ny, w).backward()
    np.testing.assert_allclose(nx.grad.numpy(), _np(tx.grad), atol=atol, rtol=1e-8)


_ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_N_D = ("fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2",
        "ihfft2", "hfftn", "ihfftn")
_REAL_ONLY = ("rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn")


@pytest.mark.parametrize("name", _ONE_D)
def test_1d_transforms_match_torch(name):
    for cplx in (False, True):
        if cplx and name in _REAL_ONLY:
            continue
        for n in (None, 3, 4, 9, 10):  # trim / pad, odd and even outputs
            for norm in (None, "backward", "forward", "ortho"):
                for dim in (-1, 0):
                    _compare(name, _data((5, 6, 4), cplx), {"n": n, "norm": norm, "dim": dim})


@pytest.mark.parametrize("name", _N_D)
def test_nd_transforms_match_torch(name):
    dims = (None, (0, 2), (-1, 1), (1,)) if name.endswith("n") else ((-2, -1), (0, 2))
    for cplx in (False, True):
        if cplx and name in _REAL_ONLY:
            continue
        for s in (None, (3, 5), (6, -1), (4, 7)):
            for norm in (None, "forward", "ortho"):
                for dim in dims:
                    kw = {"s": s, "norm": norm}
                    if dim is not None:
                        if s is not None and len(dim) != len(s):
                            continue
                        kw["dim"] = dim
                    _compare(name, _data((5, 6, 4), cplx), kw)


def test_transforms_on_noncontiguous_and_batched_inputs():
    a = _data((6, 5, 4), True)
    for lib_input in ("transposed", "sliced"):
        def make(lib, a=a, kind=lib_input):
            x = lib.tensor(a, requires_grad=True)
            v = x.transpose(0, 2) if kind == "transposed" else x[:, ::2]
            return x, lib.fft.fftn(v, dim=(0, 1)), lib.fft.irfft(v, n=7, dim=1)
        tx, t1, t2 = make(torch)
        nx, n1, n2 = make(ndgrad)
        np.testing.assert_allclose(_np(n1), _np(t1), atol=1e-10)
        np.testing.assert_allclose(_np(n2), _np(t2), atol=1e-10)
        (t1.abs().sum() + t2.sum()).backward()
        (n1.abs().sum() + n2.sum()).backward()
        np.testing.assert_allclose(nx.grad.numpy(), _np(tx.grad), atol=1e-10)


CASES = [("rfft", False, {}), ("rfft", False, {"n": 7}), ("irfft", True, {}),
         ("irfft", True, {"n": 7, "norm": "ortho"}), ("hfft", True, {"n": 5}),
         ("ihfft", False, {"norm": "forward"}), ("fft", False, {}), ("ifft", True, {}),
         ("rfft2", False, {"s": (3, 6)}), ("irfft2", True, {"s": (3, 5)}),
         ("hfftn", True, {}), ("ihfft2", False, {}), ("fftn", True, {"norm": "ortho"})]


@pytest.mark.parametrize("name,cplx,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in
                                                     enumerate(CASES)])
def test_double_backward_matches_torch(name, cplx, kw):
    a = _data((3, 4), cplx)
    res = []
    for lib in LIBS:
        x = lib.tensor(a, requires_grad=True)
        y = getattr(lib.fft, name)(x, **kw)
        # a nonlinear loss, so the second derivative is not zero
        loss = (y.abs() ** 3).sum()
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (gg,) = lib.autograd.grad((g.abs() ** 2).sum(), x)
        res.append((_np(g), _np(gg)))
    np.testing.assert_allclose(res[0][0], res[1][0], atol=1e-9, rtol=1e-8)
    np.testing.assert_allclose(res[0][1], res[1][1], atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize("name,cplx,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in
                                                     enumerate(CASES)])
def test_gradcheck_and_gradgradcheck(name, cplx, kw):
    x = ndgrad.tensor(_data((3, 4), cplx), requires_grad=True)

    def f(x):
        return getattr(ndgrad.fft, name)(x, **kw)
    assert ndgrad.autograd.gradcheck(f, (x,))
    assert ndgrad.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("name,cplx,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in
                                                     enumerate(CASES)])
def test_forward_mode_matches_torch(name, cplx, kw):
    a, t = _data((3, 4), cplx), _data((3, 4), cplx)
    with nfwd.dual_level():
        out = getattr(ndgrad.fft, name)(nfwd.make_dual(ndgrad.tensor(a), ndgrad.tensor(t)),
                                        **kw)
        nt = nfwd.unpack_dual(out).tangent
    with tfwd.dual_level():
        out = getattr(torch.fft, name)(tfwd.make_dual(torch.tensor(a), torch.tensor(t)), **kw)
        tt = tfwd.unpack_dual(out).tangent
    np.testing.assert_allclose(_np(nt), _np(tt), atol=1e-10)


def test_batched_grads_and_jacobian_match_torch():
    a = _data((2, 6), False)
    res = []
    for lib in LIBS:
        x = lib.tensor(a, requires_grad=True)
        y = lib.fft.irfft(lib.fft.rfft(x, n=9) * lib.tensor(_W), n=5)
        eye = lib.eye(y.numel(), dtype=lib.float64).reshape((y.numel(),) + tuple(y.shape))
        (g,) = lib.autograd.grad(y, x, eye, is_grads_batched=True)
        jac = lib.autograd.functional.jacobian(
            lambda v, lib=lib: lib.fft.hfft(lib.fft.ifft(v), n=4), x, vectorize=True)
        res.append((_np(g), _np(jac)))
    np.testing.assert_allclose(res[0][0], res[1][0], atol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], atol=1e-10)


_W = _data((5,), True)


@pytest.mark.parametrize("dtype,name", [
    ("float32", "fft"), ("float32", "rfft"), ("float32", "irfft"), ("float32", "ifftn"),
    ("int64", "fft"), ("int64", "rfftn"), ("int32", "irfft"), ("bool", "fftn"),
    ("uint8", "hfft"), ("complex64", "fft"), ("complex64", "irfftn"), ("float64", "ihfft")])
def test_output_dtypes_follow_torch(dtype, name):
    a = (rng.standard_normal(8) * 3).astype(dtype) if dtype != "bool" else \
        rng.standard_normal(8) > 0
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(8).astype(dtype)
    outs = [getattr(lib.fft, name)(lib.tensor(a)) for lib in LIBS]
    assert str(outs[0].dtype) == str(outs[1].dtype)
    tol = 1e-4 if outs[1].dtype in (torch.float32, torch.complex64) else 1e-10
    np.testing.assert_allclose(_np(outs[0]), _np(outs[1]), atol=tol, rtol=tol)


def test_float32_gradients_keep_dtype():
    for lib in LIBS:
        x = lib.randn(4, 6, requires_grad=True)
        lib.fft.irfft2(lib.fft.rfft2(x) * 2, s=(4, 6)).sum().backward()
        assert str(x.grad.dtype) == "torch.float32"


def _error(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - compared below
        return type(e).__name__, str(e)
    return None


Z = np.ones((2, 4), dtype=complex)
R = np.ones((2, 4))
ERRORS = [
    ("fft", Z, {"dim": 2}), ("fft", Z, {"dim": -3}), ("fft", Z, {"n": 0}), ("fft", Z, {"n": -1}),
    ("rfft", R, {"n": 0}), ("irfft", Z, {"n": 0}), ("irfft", Z[:, :1], {}),
    ("fft", Z, {"norm": "xyz"}), ("ifftn", Z, {"norm": "Backward"}), ("rfft", Z, {}),
    ("ihfft", Z, {}), ("rfftn", Z, {}), ("rfft2", Z, {}), ("ihfftn", Z, {}), ("ihfft2", Z, {}),
    ("fft", np.ones(4, dtype=np.float16), {}), ("fftn", Z, {"dim": (0, 0)}),
    ("fftn", Z, {"s": (2,), "dim": (0, 1)}), ("fftn", Z, {"s": (2, 2, 2)}),
    ("fftn", Z, {"s": (0, 2)}), ("fftn", Z, {"dim": (5,)}), ("rfftn", R, {"dim": ()}),
    ("irfftn", Z, {"dim": ()}), ("ihfftn", R, {"dim": ()}), ("hfftn", Z, {"dim": ()}),
    ("fft", np.array(1 + 1j), {}), ("fft", np.zeros(0, dtype=complex), {}),
    ("irfftn", Z[:, :1], {}), ("irfftn", Z, {"s": (2, 0)}),
    ("fftshift", np.array(1.0), {}), ("ifftshift", R, {"dim": 3}),
]


@pytest.mark.parametrize("name,a,kw", ERRORS, ids=[f"{e[0]}-{i}" for i, e in
                                                   enumerate(ERRORS)])
def test_errors_match_torch(name, a, kw):
    errs = [_error(lambda lib=lib: getattr(lib.fft, name)(lib.tensor(a), **kw)) for lib in LIBS]
    assert errs[1] is not None
    assert errs[0] == errs[1]


def test_argument_type_errors_match_torch():
    for call in (lambda lib: lib.fft.fft([1.0, 2.0]),
                 lambda lib: lib.fft.fft(lib.ones(4), n=2.0),
                 lambda lib: lib.fft.rfft(lib.ones(4), dim=(0,)),
                 lambda lib: lib.fft.fft(lib.ones(4), norm=5),
                 lambda lib: lib.fft.fftn(lib.ones(4), s=(2.5,)),
                 lambda lib: lib.fft.fftn(lib.ones(4), dim=[0.0]),
                 lambda lib: lib.fft.fftshift(lib.ones(3), dim=1.0),
                 lambda lib: lib.fft.fftfreq(2.5),
                 lambda lib: lib.hann_window(2.5)):
        errs = [_error(call, lib) for lib in LIBS]
        assert errs[0] == errs[1] and errs[0][0] == "TypeError"


def test_failed_call_leaves_state_unchanged():
    x = ndgrad.ones(4, dtype=ndgrad.complex128, requires_grad=True)
    ver = x._version
    with pytest.raises(RuntimeError):
        ndgrad.fft.fft(x, norm="bad")
    assert x._version == ver and x.grad is None and ndgrad.is_grad_enabled()


# --------------------------------------------------------------------------- helpers
@pytest.mark.parametrize("fn", ["fftfreq", "rfftfreq"])
def test_frequencies_match_torch(fn):
    for n in (0, 1, 4, 5, 8):
        for d in (1.0, 0.5, 3):
            for dtype in (None, "float32", "float64"):
                kw = {} if dtype is None else {"dtype": getattr(ndgrad, dtype)}
                tkw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
                a, b = getattr(ndgrad.fft, fn)(n, d, **kw), getattr(torch.fft, fn)(n, d, **tkw)
                assert str(a.dtype) == str(b.dtype)
                np.testing.assert_array_equal(a.numpy(), b.numpy())
    f = getattr(ndgrad.fft, fn)(4, requires_grad=True)
    assert f.requires_grad and f.is_leaf
    for kw in ({"dtype": "int64"}, {"dtype": "complex64"}):
        errs = [_error(lambda lib, kw=kw: getattr(lib.fft, fn)(4, dtype=getattr(lib, kw["dtype"])),
                       lib) for lib in LIBS]
        assert errs[0] == errs[1]
    for n in (-1, -2, -4):
        errs = [_error(getattr(lib.fft, fn), n) for lib in LIBS]
        assert errs[0] == errs[1]
        if errs[0] is None:
            np.testing.assert_array_equal(getattr(ndgrad.fft, fn)(n).numpy(),
                                          getattr(torch.fft, fn)(n).numpy())


def test_shifts_match_torch():
    a = _data((4, 5, 3), True)
    for fn in ("fftshift", "ifftshift"):
        for dim in (None, 1, (-1, 0)):
            res = []
            for lib in LIBS:
                x = lib.tensor(a, requires_grad=True)
                y = getattr(lib.fft, fn)(x, dim=dim)
                _loss(lib, y, _data(a.shape, True)).backward()
                res.append((_np(y), _chain(y), x.grad))
            np.testing.assert_array_equal(res[0][0], res[1][0])
            assert res[0][1] == res[1][1]
    x = ndgrad.arange(5)
    assert ndgrad.fft.ifftshift(ndgrad.fft.fftshift(x)).tolist() == [0, 1, 2, 3, 4]
    assert ndgrad.fft.fftshift(x).tolist() == torch.fft.fftshift(torch.arange(5)).tolist()


# --------------------------------------------------------------------------- windows
WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window")


@pytest.mark.parametrize("name", WINDOWS)
def test_windows_match_torch(name):
    for n in (0, 1, 2, 5, 8):
        for periodic in (True, False):
            for dtype in ("float32", "float64"):
                a = getattr(ndgrad, name)(n, periodic, dtype=getattr(ndgrad, dtype))
                b = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
                assert str(a.dtype) == str(b.dtype)
                np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6 if dtype ==
                                           "float32" else 1e-12)
    assert str(getattr(ndgrad, name)(4).dtype) == "torch.float32"
    w = getattr(ndgrad, name)(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    for bad in (lambda lib: getattr(lib, name)(-1),
                lambda lib: getattr(lib, name)(5, dtype=lib.int64)):
        errs = [_error(bad, lib) for lib in LIBS]
        assert errs[0] == errs[1] and errs[0] is not None


def test_window_parameters_match_torch():
    for lib_args in ((6, False, 0.5, 0.4), (7, True, 0.6, 0.3)):
        np.testing.assert_allclose(ndgrad.hamming_window(*lib_args).numpy(),
                                   torch.hamming_window(*lib_args).numpy(), atol=1e-6)
    for beta in (0.0, 5.0, 14.0):
        np.testing.assert_allclose(ndgrad.kaiser_window(9, False, beta).numpy(),
                                   torch.kaiser_window(9, False, beta).numpy(), atol=1e-6)


# --------------------------------------------------------------------------- stft / istft
STFT = [
    ({"n_fft": 16, "return_complex": True}, {"n_fft": 16}),
    ({"n_fft": 16, "hop_length": 3, "win_length": 10, "return_complex": True},
     {"n_fft": 16, "hop_length": 3, "win_length": 10}),
    ({"n_fft": 15, "hop_length": 5, "center": False, "normalized": True,
      "return_complex": True},
     {"n_fft": 15, "hop_length": 5, "center": False, "normalized": True, "length": 40}),
    ({"n_fft": 16, "onesided": False, "return_complex": True},
     {"n_fft": 16, "onesided": False, "length": 37}),
    ({"n_fft": 16, "pad_mode": "constant", "return_complex": True}, {"n_fft": 16, "length": 45}),
    ({"n_fft": 16, "win_length": 12, "center": False, "align_to_window": True,
      "return_complex": True}, None),
]


@pytest.mark.parametrize("kw,ikw", STFT, ids=[str(i) for i in range(len(STFT))])
@pytest.mark.parametrize("shape", [(40,), (2, 40)])
@pytest.mark.parametrize("cplx", [False, True])
def test_stft_istft_match_torch(kw, ikw, shape, cplx):
    if cplx:
        kw = dict(kw, onesided=False)
        ikw = ikw and dict(ikw, onesided=False, return_complex=True)
    a = _data(shape, cplx)
    wl = kw.get("win_length", kw["n_fft"])
    wa = np.hanning(wl + 2)[1:-1] + 0.1
    res = []
    for lib in LIBS:
        x = lib.tensor(a, requires_grad=True)
        w = lib.tensor(wa, requires_grad=True)
        s = lib.stft(x, window=w, **kw)
        # istft of a window with zero margins and center=False divides by zero: torch raises
        r = s.istft(window=w, **ikw) if ikw is not None else s
        ((r.abs() ** 2).sum() + (s.abs() ** 3).sum()).backward()
        res.append([_np(s), _np(r), _np(x.grad), _np(w.grad), _chain(r)[:3]])
    for a_, b_ in zip(res[0][:4], res[1][:4]):
        assert a_.shape == b_.shape and a_.dtype == b_.dtype
        np.testing.assert_allclose(a_, b_, atol=1e-9, rtol=1e-8)
    if ikw is not None:
        assert res[0][4] == res[1][4]  # istft's last nodes: (squeeze,) div, slice, ...


def test_stft_real_output_and_warnings():
    a = _data((40,), False)
    always = torch.is_warn_always_enabled()
    torch.set_warn_always(True)  # torch warns once per process otherwise: any test order
    try:
        for lib in LIBS:
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                y = lib.stft(lib.tensor(a), 16, window=lib.hann_window(16, dtype=lib.float64),
                             return_complex=False)
            assert tuple(y.shape) == (9, 11, 2) and y.dtype == lib.float64
            assert any("return_complex=False is deprecated" in str(m.message) for m in rec)
    finally:
        torch.set_warn_always(always)
    np.testing.assert_allclose(
        ndgrad.stft(ndgrad.tensor(a), 16, return_complex=False).numpy(),
        torch.stft(torch.tensor(a), 16, return_complex=False).numpy(), atol=1e-12)
    with pytest.warns(UserWarning, match="A window was not provided"):
        ndgrad.stft(ndgrad.tensor(a), 16, return_complex=True)
    s = ndgrad.stft(ndgrad.tensor(a), 16, return_complex=True)
    with pytest.warns(UserWarning, match="Please provide the same window used by stft"):
        ndgrad.istft(s, 16)


def _stft_errors():
    x = np.random.default_rng(1).standard_normal((2, 40))
    yield lambda lib: lib.stft(lib.tensor(x), 16)
    yield lambda lib: lib.stft(lib.tensor(x), 100, center=False, return_complex=True)
    yield lambda lib: lib.stft(lib.tensor(x), 0, return_complex=True)
    yield lambda lib: lib.stft(lib.tensor(x), 16, hop_length=0, return_complex=True)
    yield lambda lib: lib.stft(lib.tensor(x), 16, win_length=20, return_complex=True)
    yield lambda lib: lib.stft(lib.tensor(x), 16, window=lib.ones(5), return_complex=True)
    yield lambda lib: lib.stft(lib.tensor(x)[None], 16, return_complex=True)
    yield lambda lib: lib.stft(lib.tensor(x + 0j), 16, onesided=True, return_complex=True)
    yield lambda lib: lib.stft(lib.tensor(x), 16, center=True, align_to_window=True,
                               return_complex=True)
    w = np.hanning(16)
    s = lambda lib: lib.stft(lib.tensor(x), 16, window=lib.tensor(w), return_complex=True)
    yield lambda lib: lib.istft(lib.view_as_real(s(lib)), 16, window=lib.tensor(w))
    yield lambda lib: lib.istft(s(lib), 16, window=lib.tensor(w), onesided=False)
    yield lambda lib: lib.istft(s(lib), 15, window=lib.tensor(w))
    yield lambda lib: lib.istft(s(lib), 16, window=lib.tensor(w), center=False)
    yield lambda lib: lib.istft(s(lib), 16, window=lib.tensor(w), return_complex=True)
    yield lambda lib: lib.istft(s(lib), 16, hop_length=20, window=lib.tensor(w))
    yield lambda lib: lib.istft(s(lib), 16, window=lib.ones(5, dtype=lib.float64))


@pytest.mark.parametrize("call", list(_stft_errors()), ids=lambda c: "")
def test_stft_errors_match_torch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errs = [_error(call, lib) for lib in LIBS]
    assert errs[1] is not None and errs[0] == errs[1]


# --------------------------------------------------------------------------- end to end
def test_spectral_convolution_training_step_matches_torch():
    """rfft2 -> learnable complex weights -> irfft2 -> loss, as benchmarks/bench_fft.py."""
    a = rng.standard_normal((4, 8, 8))
    wr, wi = rng.standard_normal((8, 5)), rng.standard_normal((8, 5))
    res = []
    for lib in LIBS:
        x = lib.tensor(a, requires_grad=True)
        w = lib.complex(lib.tensor(wr), lib.tensor(wi)).requires_grad_(True)
        y = lib.fft.irfft2(lib.fft.rfft2(x, norm="ortho") * w, s=(8, 8), norm="ortho")
        loss = (y.tanh() ** 2).mean()
        loss.backward()
        res.append((_np(loss), _np(x.grad), _np(w.grad)))
    for u, v in zip(*res):
        np.testing.assert_allclose(u, v, atol=1e-12, rtol=1e-9)


@pytest.mark.parametrize("name", _ONE_D + _N_D)
def test_out_argument_matches_torch(name):
    real_in = name in _REAL_ONLY
    complex_out = not name.startswith(("irfft", "hfft"))
    a = _data((4, 6), not real_in)
    res = []
    for lib in LIBS:
        good = lib.empty(0, dtype=lib.complex128 if complex_out else lib.float64)
        bad = lib.empty(0, dtype=lib.float64 if complex_out else lib.complex128)
        r = getattr(lib.fft, name)(lib.tensor(a), out=good)
        errs = [_error(lambda lib=lib, o=bad: getattr(lib.fft, name)(lib.tensor(a), out=o))]
        if name != "ihfft":  # torch's ihfft(out=) records conj_physical_out's graph
            x = lib.tensor(a, requires_grad=True)
            errs.append(_error(lambda x=x, lib=lib, o=good: getattr(lib.fft, name)(x, out=o)))
        res.append((r is good, _np(good), errs, good._version))
    assert res[0][0] and res[1][0]
    np.testing.assert_allclose(res[0][1], res[1][1], atol=1e-10)
    assert res[0][2] == res[1][2]
    assert res[0][3] == res[1][3]


def test_docstring_examples_run():
    import doctest

    from ndgrad import _stft, _windows
    for mod in (ndgrad.fft, _windows, _stft):
        result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE |
                                 doctest.ELLIPSIS, extraglobs={"ndgrad": ndgrad})
        assert result.attempted > 0 and result.failed == 0
