"""Harness that runs PyTorch's own op database (``op_db`` of the installed torch) against ndgrad.

torch's ``torch.testing._internal.common_methods_invocations.op_db`` is data and helpers we
call at test time; nothing of it is copied. For one OpInfo, one dtype and one mode, ``run``
draws the op's first samples (seeded per op), converts each to ndgrad (tensors become ndgrad
tensors holding the same values and strides; dtypes, devices, sizes and memory formats their
ndgrad counterparts), runs the op in both libraries and returns one outcome per sample.

How an OpInfo's callables are rebound to ndgrad (``nd_of``): a torch object found in one of
torch's public namespaces (``torch``, ``torch.nn.functional``, ``torch.linalg``, ...,
``torch.Tensor``'s methods) is looked up under the same name in ndgrad; a Python function
written in torch's testing modules (the lambdas of op_db) is rebuilt with the same code whose
globals, closure cells and defaults are rebound the same way, so ``torch.X`` in its body is
``ndgrad.X``. A name ndgrad does not have fails the sample (it is a gap, not a skip).

Invariants: a sample passes only if ndgrad agrees with torch on it: equal values within the
dtype's tolerance, equal dtypes and shapes, and where torch raises, ndgrad raises the same
exception class. Skips (``SKIP``) are only for legitimate reasons, each named.
"""

import contextlib
import functools
import itertools
import re
import types
import warnings
import zlib

import numpy as np
import torch
from torch.testing._internal.common_methods_invocations import op_db

import ndgrad
import ndgrad.autograd.forward_ad as nd_fwad
import torch.autograd.forward_ad as th_fwad

# Samples per (op, dtype, mode); gradgrad and vmap are costlier and take fewer.
N_SAMPLES = {"forward": 16, "method": 8, "inplace": 8, "grad": 8, "gradgrad": 4,
             "fwad": 8, "vmap": 4, "errors": 1000, "messages": 1000}
FORWARD_DTYPES = (torch.float64, torch.float32, torch.complex128)
GRAD_DTYPES = (torch.float64, torch.complex128)
MODES = tuple(N_SAMPLES)

# --------------------------------------------------------------------------- the skip list
# Reviewed: every entry is an op whose values legitimately cannot be compared, or whose inputs
# use what ndgrad does not have. Nothing is here because ndgrad gets it wrong.
RANDOM_OPS = {  # values drawn from a generator: compare shapes and dtypes only
    "bernoulli", "normal", "normal.number_mean", "normal.in_place", "multinomial",
    "uniform", "exponential", "geometric", "cauchy", "log_normal", "rand_like",
    "randn_like", "randint_like", "randint", "randn", "rand", "randperm",
    "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout.with_train",
    "nn.functional.feature_alpha_dropout.without_train", "nn.functional.rrelu",
    "nn.functional.multi_head_attention_forward", "nn.functional.scaled_dot_product_attention",
    "native_dropout_backward", "svd_lowrank", "pca_lowrank",
}
UNINITIALIZED_OPS = {  # results hold uninitialized memory: compare shapes and dtypes only
    "empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided",
    "empty_permuted", "torch.empty", "nn.functional.ctc_loss_uninit",
}
_SPARSE = "sparse layouts: ndgrad has the strided layout only"
_PRIVATE = "a private ATen operator (torch.ops.aten / torch._name): not torch's Python API"
SKIP_OPS = {
    "to_sparse": _SPARSE, "sparse.sampled_addmm": _SPARSE, "sparse.mm.reduce": _SPARSE,
    "max_pool2d_with_indices_backward": _PRIVATE + " (its op_db entry calls "
    "torch.ops.aten.max_pool2d_with_indices_backward)",
}


def skip_reason(op):
    """Why an OpInfo is not run at all, or None."""
    if op.full_name in SKIP_OPS:
        return SKIP_OPS[op.full_name]
    if op.name.startswith("jiterator_"):
        return "jiterator: CUDA only (torch raises on the CPU)"
    if op.name.startswith("torch.ops.") or isinstance(
            op.op, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return _PRIVATE
    if op.name.startswith("_") and not op.name.startswith("__"):
        return _PRIVATE
    return None


def value_skip_reason(op):
    """Why an OpInfo's values are not compared (shapes and dtypes are), or None."""
    if op.full_name in RANDOM_OPS or op.name in RANDOM_OPS:
        return "random: values drawn from a generator (shapes and dtypes compared)"
    if op.full_name in UNINITIALIZED_OPS or op.name in UNINITIALIZED_OPS:
        return "uninitialized memory (shapes and dtypes compared)"
    return None

# KNOWN_GAPS: (mode, op full name, dtype name or "*") -> reason (_torch_opdb_gaps.py).
from _torch_opdb_gaps import KNOWN_GAPS  # noqa: E402


class Skip(Exception):
    """A sample that is legitimately not compared (reason in the message)."""


# --------------------------------------------------------------------------- rebinding
_NAMESPACES = ("torch.linalg", "torch.special", "torch.fft", "torch.nn.functional",
               "torch.masked", "torch.signal.windows", "torch.testing", "torch.nn.init",
               "torch.autograd", "torch", "torch.Tensor")


def _namespace(path, lib):
    obj = lib
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


@functools.lru_cache(None)
def _reverse_index():
    """id(torch object) -> [(namespace path, name)] over torch's public namespaces."""
    index = {}
    for path in _NAMESPACES:
        try:
            ns = _namespace(path, torch)
        except AttributeError:
            continue
        names = dir(ns) if path != "torch.Tensor" else [
            n for n in dir(ns) if not n.startswith("__") or n.endswith("__")]
        for name in names:
            try:
                obj = getattr(ns, name)
            except Exception:
                continue
            if isinstance(obj, (int, float, str, bool, type(None))):
                continue
            index.setdefault(id(obj), []).append((path, name))
    return index


@contextlib.contextmanager
def _nd_freeze_rng_state():
    """ndgrad's form of torch.testing's freeze_rng_state (op_db's random-op wrappers use it)."""
    state = ndgrad.get_rng_state()
    try:
        yield
    finally:
        ndgrad.set_rng_state(state)


def _overrides():
    from torch.testing import _utils
    from torch.testing._internal import common_utils
    return {id(_utils.freeze_rng_state): _nd_freeze_rng_state,
            id(common_utils.freeze_rng_state): _nd_freeze_rng_state}


class Missing:
    """Stands for a torch callable ndgrad lacks: calling it fails the sample with its name."""

    def __init__(self, what):
        self.what = what

    def __call__(self, *args, **kwargs):
        raise AttributeError(f"ndgrad has no {self.what}")


_MODULES = {}


def _nd_module(module):
    name = module.__name__
    if not name.startswith("torch"):
        return module
    if name not in _MODULES:
        try:
            _MODULES[name] = _namespace(name, ndgrad)
        except AttributeError:
            _MODULES[name] = module if name.startswith("torch.testing") else Missing(name)
    return _MODULES[name]


class _Globals(dict):
    """A function's globals rebound lazily: each name is looked up in torch's globals once."""

    def __init__(self, original):
        super().__init__(__builtins__=original.get("__builtins__", __builtins__))
        self.original = original

    def __missing__(self, key):
        value = self.original[key]
        value = nd_of(value)
        self[key] = value
        return value


_GLOBALS = {}
_REBOUND = {}


def _rebind_function(fn):
    key = id(fn)
    if key in _REBOUND:
        return _REBOUND[key][1]
    g = _GLOBALS.setdefault(id(fn.__globals__), _Globals(fn.__globals__))
    closure = None
    if fn.__closure__:
        closure = tuple(types.CellType(nd_of(c.cell_contents)) if _has(c) else c
                        for c in fn.__closure__)
    new = types.FunctionType(fn.__code__, g, fn.__name__, None, closure)
    if fn.__defaults__:
        new.__defaults__ = tuple(nd_of(d) for d in fn.__defaults__)
    if fn.__kwdefaults__:
        new.__kwdefaults__ = {k: nd_of(v) for k, v in fn.__kwdefaults__.items()}
    _REBOUND[key] = (fn, new)  # holds fn so its id stays unique
    return new


def _has(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def nd_of(obj):
    """ndgrad's counterpart of a torch object (function, module, dtype...); others unchanged."""
    if isinstance(obj, types.ModuleType):
        return _nd_module(obj)
    if isinstance(obj, torch.dtype):
        return getattr(ndgrad, str(obj).split(".")[1])
    if isinstance(obj, (torch.memory_format, torch.layout)):
        return getattr(ndgrad, str(obj).split(".")[1])
    if isinstance(obj, torch.device):
        return ndgrad.device(str(obj))
    if obj is torch.Tensor:
        return ndgrad.Tensor
    if isinstance(obj, functools.partial):
        return functools.partial(nd_of(obj.func), *[nd_of(a) for a in obj.args],
                                 **{k: nd_of(v) for k, v in obj.keywords.items()})
    if callable(obj) and not isinstance(obj, type(Missing)):
        override = _OVERRIDES.get(id(obj))
        if override is not None:
            return override
        hits = _reverse_index().get(id(obj))
        if hits:
            for path, name in hits:
                try:
                    found = getattr(_namespace(path, ndgrad), name)
                except AttributeError:
                    continue
                return found
            return Missing(" or ".join(f"{p}.{n}" for p, n in hits))
        if isinstance(obj, types.FunctionType):
            module = obj.__module__ or ""
            if module.startswith("torch.testing") or not module.startswith("torch"):
                return _rebind_function(obj)
            return Missing(f"{module}.{obj.__qualname__}")
        mod = getattr(obj, "__module__", None) or ""
        if mod.startswith("torch") and not mod.startswith("torch.testing"):
            return Missing(f"{mod}.{getattr(obj, '__qualname__', obj)}")
    return obj


_OVERRIDES = _overrides()


# --------------------------------------------------------------------------- conversion
def to_nd(x):
    """A torch sample's value as ndgrad: tensors keep values, strides and requires_grad."""
    if isinstance(x, torch.Tensor):
        if x.layout != torch.strided:
            raise Skip(f"{x.layout} input: ndgrad has the strided layout only")
        if x.device.type != "cpu":
            raise Skip(f"a {x.device.type} tensor in the sample: ndgrad runs on the CPU only")
        if x.dim() > 64:
            raise Skip(f"a {x.dim()}-d tensor in the sample: NumPy arrays have at most 64 dims")
        t = x.detach().resolve_conj().resolve_neg()
        dense = t.clone(memory_format=torch.preserve_format) if not t.is_contiguous() \
            else t.clone()
        if any(s == 0 for s in dense.stride()) and dense.numel() > 1:
            dense = dense.contiguous()
        nd = ndgrad.from_numpy(dense.numpy())
        if x.requires_grad:
            nd.requires_grad_(True)
        return nd
    if isinstance(x, torch.Size):
        return ndgrad.Size(x)
    if isinstance(x, torch.nn.Module):
        return _nd_module_instance(x)
    if isinstance(x, list):
        return [to_nd(v) for v in x]
    if isinstance(x, tuple):
        return tuple(to_nd(v) for v in x)
    if isinstance(x, dict):
        return {k: to_nd(v) for k, v in x.items()}
    return nd_of(x)


def _nd_module_instance(m):
    """ndgrad's module of the same class and configuration (parameterless modules only)."""
    if any(True for _ in m.parameters()):
        raise Skip(f"a {type(m).__name__} with parameters in the sample")
    cls = getattr(ndgrad.nn, type(m).__name__)
    nd = cls.__new__(cls)
    ndgrad.nn.Module.__init__(nd)
    for k, v in vars(m).items():
        if not k.startswith("_"):
            setattr(nd, k, to_nd(v))
    return nd


def to_np(x):
    """Plain values of a result of either library, for comparison."""
    if isinstance(x, torch.Tensor):
        if x.layout != torch.strided:
            x = x.to_dense()
        if x._is_zerotensor():  # torch's symbolic zeros (gradients): their values are 0
            x = torch.zeros(x.shape, dtype=x.dtype)
        return ("tensor", str(x.dtype).split(".")[1],
                np.array(x.detach().resolve_conj().resolve_neg().numpy(), copy=True))
    if isinstance(x, ndgrad.Tensor):
        return ("tensor", str(x.dtype).split(".")[1], np.array(x.detach().numpy(), copy=True))
    if isinstance(x, (torch.dtype, ndgrad.dtype)):
        return ("dtype", str(x))
    if isinstance(x, (list, tuple)):
        return [to_np(v) for v in x]
    if isinstance(x, dict):
        return {k: to_np(v) for k, v in x.items()}
    if isinstance(x, (torch.device, ndgrad.device)):
        return ("device", str(x))
    return x


TOLERANCES = {"float64": (1e-7, 1e-7), "complex128": (1e-7, 1e-7),
              "float32": (1.3e-5, 1e-5), "complex64": (1.3e-5, 1e-5)}


def assert_same(ours, theirs, where="result", values=True, tol_scale=1.0):
    """Recursive equality of two to_np values; raises AssertionError naming the place."""
    if isinstance(theirs, tuple) and theirs and theirs[0] == "tensor":
        assert isinstance(ours, tuple) and ours and ours[0] == "tensor", \
            f"{where}: ndgrad gives {type(ours).__name__}, torch a tensor"
        assert ours[1] == theirs[1], f"{where}: dtype {ours[1]} != torch's {theirs[1]}"
        a, b = ours[2], theirs[2]
        assert a.shape == b.shape, f"{where}: shape {a.shape} != torch's {b.shape}"
        if not values:
            return
        if a.dtype.kind in "fc":
            rtol, atol = TOLERANCES.get(theirs[1], (1e-3, 1e-3))
            np.testing.assert_allclose(a, b, rtol=rtol * tol_scale, atol=atol * tol_scale,
                                       equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), \
            f"{where}: {len(ours) if isinstance(ours, list) else type(ours)} items != " \
            f"torch's {len(theirs)}"
        for k, (o, t) in enumerate(zip(ours, theirs)):
            assert_same(o, t, f"{where}[{k}]", values, tol_scale)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), f"{where}: keys"
        for k in theirs:
            assert_same(ours[k], theirs[k], f"{where}[{k!r}]", values, tol_scale)
    elif isinstance(theirs, float) and isinstance(ours, (float, int)):
        if values:
            assert np.isclose(ours, theirs, rtol=1e-7, atol=1e-7, equal_nan=True), \
                f"{where}: {ours!r} != torch's {theirs!r}"
    elif values:
        assert ours == theirs, f"{where}: {ours!r} != torch's {theirs!r}"


# --------------------------------------------------------------------------- op selection
def applicable_ops():
    return [op for op in op_db if skip_reason(op) is None]


def _supported(op, backward=False):
    try:
        return op.supported_backward_dtypes("cpu") if backward else op.supported_dtypes("cpu")
    except Exception:
        return set()


def dtypes_for(op, mode):
    if mode in ("errors", "messages"):
        return [None]
    if mode in ("grad", "gradgrad", "fwad", "vmap"):
        if not op.supports_autograd:
            return []
        if mode == "gradgrad" and not op.supports_gradgrad:
            return []
        if mode == "fwad" and not op.supports_forward_ad:
            return []
        return [d for d in GRAD_DTYPES if d in _supported(op, backward=True)
                and d in _supported(op)]
    if mode == "method" and op.method_variant is None:
        return []
    if mode == "inplace" and op.inplace_variant is None:
        return []
    found = [d for d in FORWARD_DTYPES if d in _supported(op)]
    if not found and mode == "forward":
        found = [d for d in (torch.int64, torch.bool) if d in _supported(op)][:1]
    return found


def params(mode):
    """[(op, dtype-or-None, id)] for one mode."""
    out = []
    for op in applicable_ops():
        for d in dtypes_for(op, mode):
            dname = str(d).split(".")[1] if d is not None else "any"
            out.append((op, d, f"{op.full_name}-{dname}"))
    return out


def gap_reason(mode, op, dtype):
    dname = str(dtype).split(".")[1] if dtype is not None else "any"
    return KNOWN_GAPS.get((mode, op.full_name, dname)) or KNOWN_GAPS.get((mode, op.full_name, "*"))


# --------------------------------------------------------------------------- samples
def _seed(op, dtype, mode):
    return zlib.crc32(f"{op.full_name}/{dtype}".encode()) % (2 ** 31)


def samples(op, dtype, mode):
    torch.manual_seed(_seed(op, dtype, mode))
    grad = mode in ("grad", "gradgrad", "fwad")
    with torch.no_grad() if not grad else _null():
        gen = op.sample_inputs("cpu", dtype, requires_grad=grad)
        return list(itertools.islice(gen, N_SAMPLES[mode]))


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _clone_sample(s):
    """Torch arguments of a sample with fresh leaf tensors (in-place ops leave the sample)."""
    def c(x):
        if isinstance(x, torch.Tensor):
            y = x.detach().clone(memory_format=torch.preserve_format)
            return y.requires_grad_(x.requires_grad) if x.is_leaf or x.requires_grad else y
        if isinstance(x, list):
            return [c(v) for v in x]
        if isinstance(x, tuple):
            return tuple(c(v) for v in x)
        if isinstance(x, dict):
            return {k: c(v) for k, v in x.items()}
        return x
    return c(s.input), c(tuple(s.args)), c(dict(s.kwargs))


def _call_both(th_fn, nd_fn, th_args, nd_args, seed=0):
    """Run both; (torch result or exception, ndgrad result or exception)."""
    (ti, ta, tk), (ni, na, nk) = th_args, nd_args
    torch.manual_seed(seed)
    try:
        th = th_fn(ti, *ta, **tk)
    except Exception as e:  # torch refuses the sample
        th = e
    ndgrad.manual_seed(seed)
    try:
        nd = nd_fn(ni, *na, **nk)
    except Exception as e:
        nd = e
    return th, nd


def _nd_class(cls):
    """The exception class ndgrad must raise where torch raises ``cls``."""
    if cls is torch.linalg.LinAlgError or cls.__name__ == "_LinAlgError":
        return ndgrad.linalg.LinAlgError
    if cls.__module__ == "builtins":
        return cls
    for base in cls.__mro__[1:]:
        if base.__module__ == "builtins":
            return base
    return Exception


def expect_same_outcome(th, nd, values=True, tol_scale=1.0):
    """torch's result equals ndgrad's, or both raise (the same class)."""
    if isinstance(th, Exception):
        if isinstance(nd, Exception):
            want = _nd_class(type(th))
            assert isinstance(nd, want), \
                f"torch raises {type(th).__name__}({th}); ndgrad {type(nd).__name__}({nd})"
            return
        raise AssertionError(f"torch raises {type(th).__name__}: {str(th)[:200]}; "
                             "ndgrad accepts the sample")
    if isinstance(nd, Exception):
        raise AssertionError(f"ndgrad raises {type(nd).__name__}: {str(nd)[:300]}") from nd
    assert_same(to_np(nd), to_np(th), "result", values, tol_scale)


def _compares_values(op):
    return value_skip_reason(op) is None


from _torch_opdb_modes import run_mode  # noqa: E402


def run(op, dtype, mode):
    """One outcome per sample: None (passed), "skip: reason", or a failure message."""
    outcomes = []
    warnings.simplefilter("ignore")
    try:
        items = error_samples(op) if dtype is None else samples(op, dtype, mode)
    except Exception as e:
        return [f"torch's sample_inputs raise {type(e).__name__}: {e}"[:300]]
    for k, s in enumerate(items):
        try:
            run_mode(mode, op, dtype, s)
            outcomes.append(None)
        except Skip as e:
            outcomes.append(f"skip: {e}")
        except Exception as e:
            msg = f"sample {k}: {type(e).__name__}: {e}"
            outcomes.append(re.sub(r"\s+", " ", msg)[:400])
    return outcomes


def error_samples(op):
    torch.manual_seed(_seed(op, None, "errors"))
    if op.error_inputs_func is None:
        return []
    try:
        return list(itertools.islice(op.error_inputs("cpu"), N_SAMPLES["errors"]))
    except NotImplementedError:
        return []


# --------------------------------------------------------------------------- pytest glue
def pytest_params(mode):
    import pytest
    out = []
    for op, dtype, pid in params(mode):
        out.append(pytest.param(op, dtype, id=pid))
    return out


def check_param(mode, op, dtype):
    """The pytest body: every sample passes, or the param is a listed known gap."""
    import pytest
    outcomes = run(op, dtype, mode)
    failures = [o for o in outcomes if o is not None and not o.startswith("skip:")]
    gap = gap_reason(mode, op, dtype)
    if gap is not None:
        if failures:
            pytest.xfail(f"known gap ({len(failures)}/{len(outcomes)} samples): {gap}")
        pytest.fail(f"{mode} {op.full_name} {dtype}: passes now; remove it from KNOWN_GAPS")
    assert not failures, f"{len(failures)} of {len(outcomes)} samples fail:\n" + \
        "\n".join(failures[:5])
