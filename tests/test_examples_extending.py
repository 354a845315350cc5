"""The "Extending ndgrad" examples run, pass their own checks, and match torch 2.13.

Each example is loaded twice: as written (``import ndgrad as torch``) and with that import
replaced by real torch, so the very same source is the oracle.
"""

import os
import runpy
import types

import numpy as np
import pytest
import torch

import ndgrad

EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, "examples")


def _load(name, lib):
    """Execute examples/<name>.py with ndgrad (as written) or with torch substituted."""
    path = os.path.join(EXAMPLES, name + ".py")
    with open(path) as f:
        src = f.read()
    if lib is torch:
        src = (src.replace("import ndgrad as torch\n", "import torch\n")
                  .replace("from ndgrad import nn\n", "from torch import nn\n")
                  .replace("from ndgrad.autograd import", "from torch.autograd import"))
        assert "import ndgrad as torch" not in src and "from ndgrad import" not in src
    mod = types.ModuleType(f"{name}_{lib.__name__}")
    mod.__file__ = path
    exec(compile(src, path, "exec"), mod.__dict__)  # noqa: S102 - our own example file
    return mod


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach()._data


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["attention", "custom_linear"])
def test_example_runs_as_script(name, capsys, clean_registry):
    runpy.run_path(os.path.join(EXAMPLES, name + ".py"), run_name="__main__")
    out = capsys.readouterr().out
    assert ("gradcheck and gradgradcheck pass" in out) if name == "attention" else \
        ("losses:" in out and "Linear(input_features=4, output_features=8, bias=True)" in out)


# --------------------------------------------------------------------------- attention
def _qkv(lib, seed=3):
    rng = np.random.default_rng(seed)
    return tuple(lib.tensor(rng.standard_normal(s), requires_grad=True)
                 for s in ((3, 2), (4, 2), (4, 5)))


@pytest.fixture
def clean_registry():
    """The example registers a primitive; leave the op registry as it was."""
    from ndgrad._ops import registry
    before = set(registry._ALL_OPS)
    yield
    for name in set(registry._ALL_OPS) - before:
        del registry._ALL_OPS[name]


def test_attention_checks_pass_in_both_libraries(clean_registry):
    info_n = _load("attention", ndgrad).check()
    info_t = _load("attention", torch).check()
    assert info_n["grad_fn"] == info_t["grad_fn"] == "AttentionBackward"
    assert info_n["forward_ad_checked"] and info_n["versions"] == 3


def test_attention_registry_primitive_matches_torch_composite(clean_registry):
    ex = _load("attention", ndgrad)
    ext = _load("attention", torch)
    q, k, v = _qkv(ndgrad)
    tq, tk, tv = _qkv(torch)
    o, a = ex.attn_primitive(q, k, v)
    to, ta = ext.attn_composite(tq, tk, tv)
    assert o.grad_fn.name() == "OnboardingAttnBackward0" and a.grad_fn is o.grad_fn
    # Only `o` used: `a` gets no gradient and the rule must cope with a missing one.
    g = ndgrad.autograd.grad((o * o).sum(), (q, k, v), create_graph=True)
    tg = torch.autograd.grad((to * to).sum(), (tq, tk, tv), create_graph=True)
    gg = ndgrad.autograd.grad(sum(x.sum() for x in g), (q, k, v))
    tgg = torch.autograd.grad(sum(x.sum() for x in tg), (tq, tk, tv))
    for x, y in zip((o, a) + g + gg, (to, ta) + tg + tgg):
        _close(x, y)


def test_attention_values_grads_and_double_backward_match_torch(clean_registry):
    res = []
    for lib in (torch, ndgrad):
        ex = _load("attention", lib)
        q, k, v = _qkv(lib)
        o, a = ex.attn(q, k, v)
        oc, ac = ex.attn_composite(q, k, v)
        rng = np.random.default_rng(9)
        go = lib.tensor(rng.standard_normal((3, 5)))
        ga = lib.tensor(rng.standard_normal((3, 4)))
        g = lib.autograd.grad((o, a), (q, k, v), (go, ga), create_graph=True)
        gc = lib.autograd.grad((oc, ac), (q, k, v), (go, ga), create_graph=True)
        gg = lib.autograd.grad(sum((x * x).sum() for x in g), (q, k, v))
        ggc = lib.autograd.grad(sum((x * x).sum() for x in gc), (q, k, v))
        for x, y in zip(g + gg, gc + ggc):
            _close(x, y)
        res.append((o, a) + g + gg)
    for x, y in zip(*res):
        _close(x, y)


def test_attention_jvp_matches_torch_forward_mode():
    import torch.autograd.forward_ad as tfw
    fwn = ndgrad.autograd.forward_ad
    rng = np.random.default_rng(4)
    prim = [rng.standard_normal(s) for s in ((3, 2), (4, 2), (4, 5))]
    tang = [rng.standard_normal(p.shape) for p in prim]
    out = []
    for lib, fw in ((torch, tfw), (ndgrad, fwn)):
        ex = _load("attention", lib)
        for fn in (ex.attn, ex.attn_composite):
            with fw.dual_level():
                duals = [fw.make_dual(lib.tensor(p), lib.tensor(t)) for p, t in zip(prim, tang)]
                o, a = fn(*duals)
                out.append([fw.unpack_dual(o).tangent, fw.unpack_dual(a).tangent])
    for x, y in zip(out[0] + out[1], out[2] + out[3]):
        _close(x, y)


def test_attention_shape_errors():
    ex = _load("attention", ndgrad)
    with pytest.raises(ValueError, match="incompatible shapes"):
        ex.attn(ndgrad.ones(2, 3), ndgrad.ones(4, 2), ndgrad.ones(4, 5))


# --------------------------------------------------------------------------- custom Linear
def test_custom_linear_module_structure():
    ex = _load("custom_linear", ndgrad)
    m = ex.Linear(3, 2)
    assert isinstance(m.weight, ndgrad.nn.Parameter) and tuple(m.weight.shape) == (2, 3)
    assert repr(m) == "Linear(input_features=3, output_features=2, bias=True)"
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert ex.Linear(3, 2, bias=False).bias is None
    y = m(ndgrad.ones(5, 3))
    assert y.grad_fn.name() == "LinearFunctionBackward"
    assert ex.check()


def test_custom_linear_initialisation_matches_nn_linear():
    """Same seed: the custom Linear draws exactly nn.Linear's (torch's) initial weights."""
    ex = _load("custom_linear", ndgrad)
    ndgrad.manual_seed(5)
    mine = ex.Linear(6, 3)
    torch.manual_seed(5)
    ref = torch.nn.Linear(6, 3)
    _close(mine.weight, ref.weight, 1e-7)
    _close(mine.bias, ref.bias, 1e-7)


def test_custom_linear_trains_like_torch_step_by_step():
    results = []
    for lib in (torch, ndgrad):
        ex = _load("custom_linear", lib)
        per_step = []
        for steps in (1, 2, 4):
            model, losses = ex.train(steps=steps)
            per_step.append(([p.detach().clone() for p in model.parameters()], losses))
        results.append(per_step)
    for (pt, lt), (pn, ln) in zip(*results):
        np.testing.assert_allclose(ln, lt, rtol=1e-5, atol=1e-6)
        for a, b in zip(pt, pn):
            _close(a, b, 1e-5)
    # and the custom layer trains like torch's own nn.Linear
    ex = _load("custom_linear", torch)
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    x = torch.randn(16, 4)
    y = x.sum(1, keepdim=True).sin()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    ref_losses = []
    for _ in range(4):
        opt.zero_grad()
        loss = ((ref(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        ref_losses.append(loss.item())
    np.testing.assert_allclose(results[1][2][1], ref_losses, rtol=1e-5, atol=1e-6)


def test_custom_linear_double_precision_gradcheck_without_bias_grad():
    ex = _load("custom_linear", ndgrad)
    x = ndgrad.randn(2, 3, dtype=ndgrad.float64, requires_grad=True)
    w = ndgrad.randn(4, 3, dtype=ndgrad.float64, requires_grad=True)
    b = ndgrad.randn(4, dtype=ndgrad.float64)  # no grad: backward skips it
    assert ndgrad.autograd.gradcheck(ex.LinearFunction.apply, (x, w, b))
    assert ndgrad.autograd.gradgradcheck(ex.LinearFunction.apply, (x, w, b))
