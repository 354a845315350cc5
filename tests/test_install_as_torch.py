"""install_as_torch / python -m ndgrad.run, torch.jit's eager answers, torch._vmap_internals,
the torch.nn.modules.<file> paths and load's environment switches, each against torch 2.13."""

import importlib
import inspect
import os
import pkgutil
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import ndgrad

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LIBRARY = """
import torch
import torch.nn.functional as F
import torch.autograd.gradcheck  # a submodule whose parent attribute is a function


def loss(x):
    return F.softplus(x).sum()
"""

SCRIPT = """
import sys
import torch
import mylib
torch.manual_seed(0)
x = torch.randn(5, dtype=torch.float64, requires_grad=True)
y = mylib.loss(x)
y.backward()
print(__name__, sys.argv[1:], sys.path[0] == {here!r})
print(type(torch.autograd.gradcheck).__name__, repr(y.item()), x.grad.tolist())
print(y.grad_fn.name(), torch.jit.is_scripting(), torch.nn.modules.activation.MultiheadAttention.__name__)
"""


def _run(args, cwd, pythonpath):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(pythonpath))
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_script_importing_a_library_runs_as_on_torch(tmp_path):
    (tmp_path / "mylib.py").write_text(LIBRARY)
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT.format(here=str(tmp_path)))
    on_torch = _run([str(script), "a", "--b"], tmp_path, [])
    on_ndgrad = _run(["-m", "ndgrad.run", str(script), "a", "--b"], ROOT, [ROOT])
    assert on_torch.returncode == 0, on_torch.stderr
    assert on_ndgrad.returncode == 0, on_ndgrad.stderr
    assert on_ndgrad.stdout == on_torch.stdout
    assert "__main__ ['a', '--b'] True" in on_ndgrad.stdout


def test_dash_m_runs_a_module_as_main(tmp_path):
    (tmp_path / "mylib.py").write_text(LIBRARY)
    (tmp_path / "prog.py").write_text(SCRIPT.format(here=str(tmp_path)))
    on_torch = _run(["-m", "prog", "x"], tmp_path, [])
    on_ndgrad = _run(["-m", "ndgrad.run", "-m", "prog", "x"], tmp_path, [ROOT])
    assert on_ndgrad.returncode == 0, on_ndgrad.stderr
    assert on_ndgrad.stdout == on_torch.stdout


def test_exit_status_and_traceback_are_the_program_s(tmp_path):
    (tmp_path / "bad.py").write_text("import torch\nraise SystemExit(3)\n")
    assert _run(["-m", "ndgrad.run", "bad.py"], tmp_path, [ROOT]).returncode == 3
    (tmp_path / "err.py").write_text("import torch\ntorch.ones(2) @ torch.ones(3)\n")
    out = _run(["-m", "ndgrad.run", "err.py"], tmp_path, [ROOT])
    assert out.returncode == 1 and "RuntimeError" in out.stderr


def test_install_gives_the_same_module_objects_and_refuses_real_torch(tmp_path):
    code = textwrap.dedent("""
        import sys, ndgrad
        assert ndgrad.install_as_torch() is ndgrad
        ndgrad.install_as_torch()  # idempotent
        import torch, torch.nn.functional as F, torch.autograd.gradcheck, torch.optim.lr_scheduler
        assert torch is ndgrad and F is ndgrad.nn.functional
        assert torch.optim.lr_scheduler is sys.modules["ndgrad.optim.lr_scheduler"]
        assert callable(ndgrad.autograd.gradcheck)  # the function, not rebound to the module
        assert sum(isinstance(f, type(sys.meta_path[0])) for f in sys.meta_path) == 1
        try:
            import torch.no_such_module
        except ModuleNotFoundError as e:
            assert "torch.no_such_module" in str(e)
        else:
            raise AssertionError
        print("ok")
    """)
    out = _run(["-c", code], tmp_path, [ROOT])
    assert out.stdout.strip() == "ok", out.stderr
    refused = _run(["-c", "import torch, ndgrad\nndgrad.install_as_torch()"], tmp_path, [ROOT])
    assert "RuntimeError: install_as_torch(): real torch is already imported" in refused.stderr


# ---------------------------------------------------------------------------------- torch.jit
def test_jit_probes_answer_as_eager_torch():
    for probe in ("is_scripting", "is_tracing"):
        assert getattr(ndgrad.jit, probe)() is getattr(torch.jit, probe)() is False

    def double(x):
        return x * 2

    assert ndgrad.jit.script(double) is double  # decision: returned unchanged
    m = ndgrad.nn.Linear(2, 2)
    assert ndgrad.jit.script(m) is m and ndgrad.jit.trace(m, ndgrad.ones(1, 2)) is m
    assert not isinstance(m, ndgrad.jit.ScriptModule)
    assert not isinstance(torch.nn.Linear(2, 2), torch.jit.ScriptModule)
    for deco in ("ignore", "unused", "export"):
        assert getattr(ndgrad.jit, deco)(double) is double
    assert ndgrad.jit.ignore(drop=True)(double) is double
    assert ndgrad.jit.annotate(int, 3) == torch.jit.annotate(int, 3) == 3
    assert ndgrad.jit.Final is torch.jit.Final
    fut = ndgrad.jit.fork(double, ndgrad.ones(2))
    assert ndgrad.jit.wait(fut).tolist() == torch.jit.wait(torch.jit.fork(double, torch.ones(2))).tolist()
    from typing import Dict, List, Optional
    for obj, typ in [([1, 2], List[int]), ([1, "a"], List[int]), ({"a": 1}, Dict[str, int]),
                     (None, Optional[int]), (3, Optional[int])]:
        assert ndgrad.jit.isinstance(obj, typ) == torch.jit.isinstance(obj, typ)


def test_jit_refusals_are_torch_s(tmp_path):
    def check(call_nd, call_t):
        with pytest.raises(Exception) as t_err:
            call_t()
        with pytest.raises(type(t_err.value)) as n_err:
            call_nd()
        return str(t_err.value), str(n_err.value)

    # decision: ndgrad's freeze takes the module script() returned; a non-module is refused
    t, n = check(lambda: ndgrad.jit.freeze(len), lambda: torch.jit.freeze(len))
    assert t == n
    t, n = check(lambda: ndgrad.jit.load(str(tmp_path / "none.pt")),
                 lambda: torch.jit.load(str(tmp_path / "none.pt")))
    assert t == n
    check(lambda: ndgrad.jit.save(ndgrad.nn.Linear(2, 2), str(tmp_path / "m.pt")),
          lambda: torch.jit.save(torch.nn.Linear(2, 2), str(tmp_path / "m.pt")))
    with pytest.raises(RuntimeError) as t_err:
        torch.jit.isinstance([1], list)
    with pytest.raises(RuntimeError) as n_err:
        ndgrad.jit.isinstance([1], list)
    assert str(t_err.value) == str(n_err.value)


# ------------------------------------------------------------------------- _vmap_internals
def test_legacy_vmap_matches_torch():
    from torch._vmap_internals import _vmap as t_vmap

    from ndgrad._vmap_internals import _vmap as n_vmap
    assert list(inspect.signature(n_vmap).parameters) == list(inspect.signature(t_vmap).parameters)
    results = []
    for lib, vm in ((torch, t_vmap), (ndgrad, n_vmap)):
        lib.manual_seed(0)
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        unused = lib.zeros(2, dtype=lib.float64, requires_grad=True)
        y = x.sin() * x

        def vjp(v):
            return lib.autograd.grad(y, [x, unused], v, retain_graph=True, allow_unused=True)

        jac, none = vm(vjp, allow_none_pass_through=True)(lib.eye(3, dtype=lib.float64))
        pair = vm(lambda a: (a * 2, a.sum(0)), out_dims=(1, 0))(lib.arange(6.).reshape(2, 3))
        results.append((jac.tolist(), none, [p.tolist() for p in pair]))
    assert results[0] == results[1]
    with pytest.raises(ValueError, match="must only return Tensors"):
        n_vmap(lambda a: 3)(ndgrad.ones(2))
    with pytest.raises(ValueError, match="must only return Tensors"):
        t_vmap(lambda a: 3)(torch.ones(2))


# ------------------------------------------------------------------- torch.nn.modules paths
def test_every_class_of_torch_nn_modules_files_resolves_by_its_path():
    missing = []
    for info in pkgutil.iter_modules(torch.nn.modules.__path__):
        t_mod = importlib.import_module("torch.nn.modules." + info.name)
        public = [n for n, v in vars(t_mod).items() if inspect.isclass(v)
                  and v.__module__ == t_mod.__name__ and not n.startswith("_")]
        if not public or info.name == "_functions":
            continue
        n_mod = importlib.import_module("ndgrad.nn.modules." + info.name)
        missing += [f"{info.name}.{n}" for n in public if not isinstance(getattr(n_mod, n, None), type)]
        for name in getattr(t_mod, "__all__", []):
            if isinstance(getattr(t_mod, name), type):
                assert name in n_mod.__all__, (info.name, name)
    assert missing == []
    from ndgrad.nn.modules.activation import MultiheadAttention
    assert MultiheadAttention is ndgrad.nn.MultiheadAttention


def test_nn_modules_utils_helpers_match_torch():
    import torch.nn.modules.utils as tu

    import ndgrad.nn.modules.utils as nu
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for arg in (3, [1, 2], (4,)):
            assert getattr(nu, name)(arg) == getattr(tu, name)(arg)
    assert nu._reverse_repeat_tuple((1, 2, 3), 2) == tu._reverse_repeat_tuple((1, 2, 3), 2)
    assert nu._list_with_default([3, None], [5, 6, 7, 8]) == tu._list_with_default([3, None], [5, 6, 7, 8])
    with pytest.raises(ValueError, match="at least 4"):
        nu._list_with_default([1, 2, 3], [5, 6])
    sd_t = torch.nn.Sequential(torch.nn.Linear(2, 2)).state_dict()
    sd_n = ndgrad.nn.Sequential(ndgrad.nn.Linear(2, 2)).state_dict()
    for sd, mod in ((sd_t, tu), (sd_n, nu)):
        mod.consume_prefix_in_state_dict_if_present(sd, "0.")
    assert list(sd_t) == list(sd_n) == ["weight", "bias"]


# ----------------------------------------------------------------- load's environment switches
@pytest.mark.parametrize("env", [{"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"},
                                 {"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "yes"},
                                 {"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1",
                                  "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}])
@pytest.mark.parametrize("weights_only", [None, False])
def test_load_honours_torch_s_environment_switches(tmp_path, monkeypatch, env, weights_only):
    import numpy as np
    path = str(tmp_path / "arr.pt")
    torch.save({"a": np.arange(3.0)}, path)  # a NumPy array: refused by weights_only=True
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    outcomes = []
    for lib in (torch, ndgrad):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                kwargs = {} if weights_only is None else {"weights_only": weights_only}
                value = lib.load(path, **kwargs)
                outcomes.append(("ok", value["a"].tolist()))
            except Exception as e:  # noqa: BLE001  (the class and text are compared)
                outcomes.append((type(e).__name__, str(e) if isinstance(e, RuntimeError) else ""))
        outcomes.append([str(w.message) for w in caught if "TORCH_FORCE" in str(w.message)])
    assert outcomes[:2] == outcomes[2:]
