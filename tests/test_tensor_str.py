"""Differential tests of ndgrad._tensor_str against torch 2.13's tensor printing.

Every test builds a torch tensor, hands the same values (``tensor.numpy()``) and autograd
flags to ``tensor_repr`` and asserts the text equals ``repr(tensor)``. Print options are
set identically on both sides and restored after each test.
"""

import importlib
import importlib.util
import math
import pathlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _load_module():
    """Import ndgrad._tensor_str; load it by path if the package __init__ is broken."""
    try:
        return importlib.import_module("ndgrad._tensor_str")
    except Exception:
        path = pathlib.Path(__file__).resolve().parents[1] / "ndgrad" / "_tensor_str.py"
        spec = importlib.util.spec_from_file_location("_ndgrad_tensor_str", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


ts = _load_module()

_NP_DTYPE = {
    torch.bool: np.bool_,
    torch.uint8: np.uint8,
    torch.int8: np.int8,
    torch.int16: np.int16,
    torch.int32: np.int32,
    torch.int64: np.int64,
    torch.float16: np.float16,
    torch.float32: np.float32,
    torch.float64: np.float64,
    torch.complex64: np.complex64,
    torch.complex128: np.complex128,
}
ALL_DTYPES = list(_NP_DTYPE)
FLOAT_DTYPES = [torch.float16, torch.float32, torch.float64]
COMPLEX_DTYPES = [torch.complex64, torch.complex128]
INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


@pytest.fixture(autouse=True)
def _restore_state():
    """Start and end every test with default options and float32 default dtype."""
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    yield
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)


def both_set_printoptions(**kwargs):
    torch.set_printoptions(**kwargs)
    ts.set_printoptions(**kwargs)
    assert ts.get_printoptions() == torch._tensor_str.get_printoptions()


def ours(t, **kwargs):
    """tensor_repr for the values and autograd flags of torch tensor ``t``."""
    arr = t.detach().resolve_conj().numpy()
    assert arr.dtype == _NP_DTYPE[t.dtype]
    grad_fn_name = type(t.grad_fn).__name__ if t.grad_fn is not None else None
    default_float = _NP_DTYPE[torch.get_default_dtype()]
    return ts.tensor_repr(arr, grad_fn_name=grad_fn_name, requires_grad=t.requires_grad,
                          default_float=default_float, **kwargs)


def check(t):
    expected = repr(t)
    assert str(t) == expected
    assert ours(t) == expected


def cast(values, dtype):
    """A tensor of ``dtype`` from a float tensor (complex gets a nonzero imaginary part)."""
    if dtype.is_complex:
        return torch.complex(values, values.flip(-1) * 0.5 if values.dim() else -values).to(dtype)
    if dtype == torch.bool:
        return values > 0
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        return values.round().clamp(info.min, info.max).to(dtype)
    return values.to(dtype)


# ---------------------------------------------------------------------------------------
# Scalars
# ---------------------------------------------------------------------------------------

SCALARS = [0.0, -0.0, 1.0, -1.0, 1.5, -2.25, 1e-5, 1e-4, 1e8, 1.5e8, 123456.0, 0.1,
           3.14159265, 1e-300, 1e300, float("nan"), float("inf"), float("-inf"), 1e20,
           9.99995, 0.00049999, 65504.0]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + COMPLEX_DTYPES)
@pytest.mark.parametrize("value", SCALARS)
def test_scalar_float(value, dtype):
    if dtype.is_complex:
        imag = -value / 3 if math.isfinite(value) else 2.0
        check(torch.tensor(complex(value, imag), dtype=dtype))
    else:
        check(torch.tensor(value, dtype=dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("value", [0, 1, 7, 100, -5, 127])
def test_scalar_int_and_bool(value, dtype):
    if dtype == torch.bool:
        t = torch.tensor(bool(value))
    elif dtype == torch.uint8 and value < 0:
        t = torch.tensor(251, dtype=dtype)
    else:
        t = torch.tensor(value, dtype=dtype)
    check(t)


def test_scalar_int64_extremes():
    check(torch.tensor(2**63 - 1))
    check(torch.tensor(-(2**63)))
    check(torch.tensor([2**63 - 1, -(2**63), 0]))


# ---------------------------------------------------------------------------------------
# Shapes and layout
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape",
    [(1,), (5,), (12,), (30,), (1, 1), (2, 3), (5, 1), (1, 7), (4, 20), (2, 3, 4),
     (3, 1, 2), (2, 2, 2, 2), (1, 2, 3, 4), (2, 1, 1, 3, 2)],
)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_shapes_all_dtypes(shape, dtype):
    torch.manual_seed(hash(shape) % 1000)
    check(cast(torch.randn(shape) * 10, dtype))


@pytest.mark.parametrize("n", [8, 13, 17, 40, 81, 200, 999, 1000, 1001])
def test_wide_rows_wrap(n):
    check(torch.arange(n, dtype=torch.float32) * 1.5)
    check(torch.arange(n) * 1000003)
    check(torch.linspace(-1, 1, n, dtype=torch.float64))


def test_non_contiguous():
    torch.manual_seed(1)
    base = torch.randn(6, 8)
    check(base.t())
    check(base[::2, 1::3])
    check(base.t()[1:5])
    check(torch.randn(3, 4, 5).permute(2, 0, 1))
    check(torch.randn(4, 6, dtype=torch.complex64).t())


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4), (0, 0), (1, 0, 1, 0)])
def test_empty(shape, dtype):
    check(torch.empty(shape, dtype=dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_empty_with_grad_flags(dtype):
    if dtype.is_floating_point or dtype.is_complex:
        check(torch.zeros(0, 3, dtype=dtype, requires_grad=True))
        check(torch.zeros(0, dtype=dtype, requires_grad=True) * 2)


# ---------------------------------------------------------------------------------------
# Value patterns: int mode, sci mode, non-finite values
# ---------------------------------------------------------------------------------------

VALUE_LISTS = [
    [1.0, 2.0, 3.0],
    [-1.0, 0.0, 100.0],
    [1.0, 1e3],
    [1.0, 1001.0],
    [1.0, 1e5],
    [1.0, 1e8],
    [1.0, 1.5e8],
    [1e9, 2e9],
    [1e-5, 1.0],
    [1e-4, 1.0],
    [1e-4, 0.1],
    [0.5, 500.0],
    [0.5, 501.0],
    [1e8, 0.5],
    [1.23456789, 12345.6789],
    [1e-300, 1e300],
    [1e-100, 1e100],
    [0.1, 0.2, 0.3],
    [-0.0, 0.0],
    [-0.0, 1.0],
    [-0.0, 1.5],
    [0.0, 0.0, 0.0],
    [float("nan")],
    [float("nan"), float("inf"), float("-inf")],
    [float("nan"), 1.0],
    [float("inf"), 2.5],
    [float("-inf"), 1e-6],
    [float("nan"), 0.0, -0.0],
    [1e20, -1e20, 1.0],
    [9.99995, 99.99995],
    [0.000049999, 0.5],
    [-123456.5, 1.0],
    [65504.0, -65504.0, 1.0],
    [6e-8, 1.0],
    [1.0, float("nan"), 1e-5, -1e10],
    [123456789012.0, 3.0],
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("values", VALUE_LISTS, ids=lambda v: repr(v)[:40])
def test_value_patterns(values, dtype):
    check(torch.tensor(values, dtype=dtype))
    check(torch.tensor([values, values[::-1]], dtype=dtype))


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
@pytest.mark.parametrize("values", VALUE_LISTS, ids=lambda v: repr(v)[:40])
def test_value_patterns_complex(values, dtype):
    real = torch.tensor(values, dtype=torch.float64)
    check(torch.complex(real, real.flip(0)).to(dtype))
    check(torch.complex(real, -real * 3).to(dtype))
    check(torch.complex(torch.ones_like(real), real).to(dtype))
    check(torch.complex(real, torch.zeros_like(real)).to(dtype))


@pytest.mark.parametrize("precision", [0, 1, 2, 6, 10])
@pytest.mark.parametrize("values", VALUE_LISTS[::3], ids=lambda v: repr(v)[:40])
def test_value_patterns_precision(values, precision):
    both_set_printoptions(precision=precision)
    check(torch.tensor(values, dtype=torch.float64))
    check(torch.tensor(values, dtype=torch.complex64))


@pytest.mark.parametrize("sci_mode", [True, False])
@pytest.mark.parametrize("values", VALUE_LISTS, ids=lambda v: repr(v)[:40])
def test_value_patterns_forced_sci_mode(values, sci_mode):
    both_set_printoptions(sci_mode=sci_mode)
    check(torch.tensor(values))
    check(torch.tensor(values, dtype=torch.complex128))


# ---------------------------------------------------------------------------------------
# Summarization
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape", [(1001,), (2000,), (7, 200), (50, 50), (200, 7), (20, 20, 20), (4, 5, 6, 10),
              (1, 1, 1001), (2, 1000), (6, 6, 6, 6)]
)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_summarized(shape, dtype):
    torch.manual_seed(sum(shape))
    check(cast(torch.randn(shape) * 100, dtype))


def test_summarized_formatter_ignores_hidden_values():
    # Hidden elements must not influence widths or the sci/int mode decision.
    t = torch.ones(2000)
    t[1000] = 1e10
    t[500] = 0.5
    check(t)
    m = torch.arange(10000.0).reshape(100, 100)
    m[50, 50] = 1e-7
    check(m)
    check(torch.arange(3000).reshape(30, 100) * 7)


@pytest.mark.parametrize("edgeitems", [0, 1, 2, 4])
@pytest.mark.parametrize("threshold", [0, 5, 20, 1000])
def test_threshold_and_edgeitems(threshold, edgeitems):
    both_set_printoptions(threshold=threshold, edgeitems=edgeitems)
    torch.manual_seed(threshold + edgeitems)
    check(torch.randn(30))
    check(torch.randn(9, 10))
    check(torch.randn(5, 6, 7))
    check(torch.arange(24).reshape(2, 3, 4))
    check(torch.randn(12, dtype=torch.complex64))
    check(torch.tensor(2.5))
    check(torch.zeros(0, 3))


# ---------------------------------------------------------------------------------------
# Print options
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["default", "short", "full"])
def test_profiles(profile):
    both_set_printoptions(profile=profile)
    torch.manual_seed(3)
    check(torch.randn(40, 40))
    check(torch.randn(2000))
    check(torch.randn(10, 11, 12, dtype=torch.float64))
    check(torch.arange(1500))
    check(torch.tensor([1.123456, 22.5]))


@pytest.mark.parametrize(
    "kwargs",
    [dict(precision=2), dict(precision=0), dict(precision=8), dict(sci_mode=False),
     dict(sci_mode=True), dict(linewidth=40), dict(linewidth=120), dict(linewidth=10),
     dict(profile="short", precision=5), dict(profile="full", linewidth=60),
     dict(precision=3, sci_mode=True, linewidth=50)],
    ids=repr,
)
def test_set_printoptions(kwargs):
    both_set_printoptions(**kwargs)
    torch.manual_seed(4)
    for t in [torch.randn(8, 9), torch.randn(3, 4) * 1e-6, torch.randn(30) * 1e9,
              torch.arange(30.0), torch.randn(5, dtype=torch.complex128),
              torch.randn(2000), torch.tensor(1e-5), torch.tensor([0.0, 0.0]),
              torch.randint(-1000, 1000, (4, 25))]:
        check(t)
        check(t.clone().requires_grad_(t.is_floating_point() or t.is_complex()))


def test_get_printoptions_and_context_manager():
    assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
    assert ts.get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3,
                                     "linewidth": 80, "sci_mode": None}
    t = torch.tensor([1.123456, 2.0])
    with ts.printoptions(precision=2, sci_mode=True), torch._tensor_str.printoptions(
        precision=2, sci_mode=True
    ):
        assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
        assert ours(t) == repr(t) == "tensor([1.12e+00, 2.00e+00])"
    assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
    assert ours(t) == repr(t) == "tensor([1.1235, 2.0000])"
    # Restored even when the body raises.
    with pytest.raises(KeyError):
        with ts.printoptions(linewidth=20):
            raise KeyError
    assert ts.get_printoptions()["linewidth"] == 80


def test_set_printoptions_resets_sci_mode_like_torch():
    both_set_printoptions(sci_mode=True)
    both_set_printoptions(precision=3)  # sci_mode omitted -> back to None
    assert ts.get_printoptions()["sci_mode"] is None
    check(torch.tensor([1.5, 2.5]))
    both_set_printoptions(profile="nonexistent")  # ignored by torch too
    check(torch.tensor([1.5, 2.5]))


# ---------------------------------------------------------------------------------------
# Autograd suffixes, default dtype, prefix, extra suffixes
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + COMPLEX_DTYPES)
def test_grad_suffixes(dtype):
    torch.manual_seed(5)
    x = torch.randn(3, 4, dtype=dtype, requires_grad=True)
    check(x)
    check(x * 2)
    check(x.sum())
    check(x.t())
    check(x[0])
    check((x * 3).exp() if not dtype.is_complex else x.conj() * 2)
    check(torch.randn(30, 30, dtype=dtype, requires_grad=True) + 1)
    check(torch.tensor(1.5, dtype=dtype, requires_grad=True))


def test_suffix_wrapping():
    # Long last lines push suffixes onto their own indented lines.
    for n in range(1, 14):
        x = torch.arange(n, dtype=torch.float64, requires_grad=True) * 1.25
        check(x)
        check(x.to(torch.float16))
    both_set_printoptions(linewidth=30)
    check(torch.arange(5, dtype=torch.int32))
    check(torch.zeros(0, 3, dtype=torch.int16))
    check(torch.ones(2, 2, dtype=torch.float64, requires_grad=True) * 2)


@pytest.mark.parametrize("default", [torch.float64, torch.float16, torch.float32])
def test_default_dtype(default):
    torch.set_default_dtype(default)
    torch.manual_seed(6)
    for dtype in ALL_DTYPES:
        check(cast(torch.randn(2, 3, dtype=torch.float64), dtype))
        check(torch.empty(0, dtype=dtype))
    check(torch.randn(4, requires_grad=True) * 2)


def test_parameter_prefix():
    torch.manual_seed(7)
    p = torch.nn.Parameter(torch.randn(3, 5))
    expected = repr(p)
    assert expected.startswith("Parameter containing:\n")
    assert "Parameter containing:\n" + ours(p, prefix="tensor(") == expected
    big = torch.nn.Parameter(torch.randn(40, 40, dtype=torch.float64))
    assert "Parameter containing:\n" + ours(big) == repr(big)


def test_custom_prefix_indents_continuation_lines():
    arr = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    assert ts.tensor_repr(arr, prefix="Foo(") == "Foo([[0., 1., 2.],\n     [3., 4., 5.]])"


def test_extra_suffixes_match_forward_ad_tangent():
    # torch appends "tangent=<repr>" after grad_fn for dual tensors: the same position
    # extra_suffixes has.
    import torch.autograd.forward_ad as fwAD

    torch.manual_seed(8)
    primal = torch.randn(2, 3, requires_grad=True)
    for tangent in [torch.randn(2, 3), torch.randn(2, 3) * 1e6]:
        with fwAD.dual_level():
            dual = fwAD.make_dual(primal, tangent)
            expected = repr(dual)
            # make_dual returns a view of primal, so it has a grad_fn (ViewBackward0).
            got = ours(dual, extra_suffixes=(f"tangent={tangent!r}",))
            assert got == expected
            out = dual * 2
            t_out = fwAD.unpack_dual(out).tangent
            got = ts.tensor_repr(out.detach().numpy(), grad_fn_name="MulBackward0",
                                 extra_suffixes=(f"tangent={t_out!r}",))
            assert got == repr(out)


# ---------------------------------------------------------------------------------------
# Randomized sweep
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(60))
def test_random_sweep(seed):
    torch.manual_seed(seed)
    gen = np.random.default_rng(seed)
    ndim = int(gen.integers(0, 5))
    shape = tuple(int(gen.integers(1, 9)) for _ in range(ndim))
    dtype = ALL_DTYPES[seed % len(ALL_DTYPES)]
    scale = 10.0 ** int(gen.integers(-9, 12))
    values = torch.randn(shape, dtype=torch.float64) * scale
    if seed % 3 == 0:
        values = values.round()
    if seed % 4 == 0 and values.numel() > 2:
        flat = values.view(-1)
        flat[0] = float("nan")
        flat[-1] = float("-inf") if seed % 8 else -0.0
    if seed % 5 == 0 and values.numel() > 1:
        values.view(-1)[1] = 0.0
    t = cast(values, dtype)
    check(t)
    if t.is_floating_point() or t.is_complex():
        check(t.clone().requires_grad_())
    for precision, linewidth in [(2, 80), (6, 50)]:
        both_set_printoptions(precision=precision, linewidth=linewidth)
        check(t)
    both_set_printoptions(profile="default")


@pytest.mark.parametrize("seed", range(20))
def test_random_sweep_large(seed):
    torch.manual_seed(100 + seed)
    gen = np.random.default_rng(seed)
    ndim = int(gen.integers(1, 5))
    shape = tuple(int(gen.integers(2, 14)) for _ in range(ndim - 1)) + (
        int(gen.integers(200, 1500)),)
    shape = shape[-ndim:] if ndim > 1 else (int(gen.integers(1001, 5000)),)
    dtype = ALL_DTYPES[seed % len(ALL_DTYPES)]
    values = torch.randn(shape, dtype=torch.float64) * 10.0 ** int(gen.integers(-6, 10))
    check(cast(values, dtype))
