"""``out=`` for every public function torch gives it: the names (torch 2.13's Python
bindings and Python functions that accept ``out=``, among the functions ndgrad has) and the
wrapper that adds the keyword to the functions defined without it. The semantics (type,
grad-mode refusal, dtype cast, resize with warning, version bump) are ``deliver_out`` in
arguments.py, which the functions defined with an ``out`` parameter call themselves.

Invariants: a wrapper has its function's own signature plus ``out=None`` (no ``*args``
repacking), and a call without ``out`` is the function's call plus one frame; nothing
outside these modules' attributes is changed (methods, internal callers are unaffected).
"""

import functools
import inspect

from .._tensor import Tensor
from . import arguments
from .arguments import deliver_out

__all__ = ["install"]

_TORCH = """
abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr alias_copy all amax amin
aminmax angle any arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin
argsort as_strided_copy asin asinh atan atan2 atanh baddbmm bernoulli bitwise_and
bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm bucketize cat
ceil chain_matmul cholesky cholesky_inverse cholesky_solve clamp clamp_max clamp_min clip
column_stack complex concat concatenate conj_physical copysign cos cosh cross cummax cummin
cumprod cumsum deg2rad detach_copy diag diagonal_copy diff digamma div divide dot dstack empty
eq erf erfc erfinv exp exp2 expand_copy expm1 eye fix float_power floor floor_divide fmax fmin
fmod frac frexp frobenius_norm full gather gcd ge geqrf ger greater greater_equal gt hardshrink
heaviside histc histogram histogramdd hstack hypot i0 igamma igammac index_add index_copy
index_reduce index_select inner inverse isin isneginf isposinf kron kthvalue lcm ldexp le lerp
less less_equal lgamma linspace log log10 log1p log2 log_softmax logaddexp logaddexp2
logcumsumexp logical_and logical_not logical_or logical_xor logit logspace logsumexp lt lu
lu_solve lu_unpack masked_select matmul matrix_power max maximum mean median min minimum mm
mode msort mul multinomial multiply mv mvlgamma nan_to_num nanmean nanmedian nanquantile nansum
narrow_copy native_batch_norm ne neg negative nextafter nonzero nonzero_static norm normal
not_equal nuclear_norm ones orgqr ormqr outer permute_copy polar polygamma pow prod qr quantile
rad2deg rand randint randn randperm range reciprocal remainder renorm round row_stack rsqrt
scatter scatter_add scatter_reduce searchsorted select_copy sgn sigmoid sign signbit sin sinc
sinh slice_copy slice_scatter slogdet softmax sort split_copy split_with_sizes_copy sqrt square
squeeze_copy stack std std_mean sub subtract sum svd t_copy take take_along_dim tan tanh
tensordot threshold topk transpose_copy triangular_solve tril triu true_divide trunc
unbind_copy unfold_copy unsqueeze_copy var var_mean vdot view_as_complex_copy view_as_real_copy
view_copy vstack where xlogy zeros
"""
_LINALG = """
cholesky cholesky_ex cond cross det eig eigh eigvals eigvalsh householder_product inv inv_ex
ldl_factor ldl_factor_ex ldl_solve lstsq lu lu_factor lu_factor_ex lu_solve matmul matrix_norm
matrix_power matrix_rank multi_dot norm pinv qr slogdet solve solve_ex solve_triangular svd
svdvals tensorinv tensorsolve vecdot vector_norm
"""
_SPECIAL = """
airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t chebyshev_polynomial_u
chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf erfc erfcx erfinv exp2 expit
expm1 gammainc gammaincc gammaln hermite_polynomial_h hermite_polynomial_he i0 i0e i1 i1e
laguerre_polynomial_l legendre_polynomial_p log1p log_ndtr logit logsumexp modified_bessel_i0
modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 multigammaln ndtr ndtri polygamma psi
round scaled_modified_bessel_k0 scaled_modified_bessel_k1 shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w
sinc spherical_bessel_j0 xlog1py xlogy zeta
"""
_FFT = """
fft fft2 fftfreq fftn hfft hfft2 hfftn ifft ifft2 ifftn ihfft ihfft2 ihfftn irfft irfft2 irfftn
rfft rfft2 rfftfreq rfftn
"""
# module path under ndgrad -> names whose torch function takes out=
OUT_NAMES = {"": _TORCH.split(), "linalg": _LINALG.split(), "special": _SPECIAL.split(),
             "fft": _FFT.split(), "nn.functional": ["hardshrink"]}

# The ops whose out must have the result's dtype exactly, as torch 2.13 checks them
# (measured with op_db's samples: a float64 out of a float32 result is refused); the others
# take any out dtype the result casts to. Every op of several results is checked so too.
EXACT = frozenset("""
abs addbmm addmm addmv alias_copy amax amin aminmax arange argmax argmin as_strided_copy
baddbmm bitwise_not bmm bucketize ceil conj_physical cross cummax cummin diag diagonal_copy
diff dot empty expand_copy eye floor frac frexp full gather hardshrink heaviside histc
histogram index_add index_copy index_reduce index_select inner kthvalue linalg_cholesky
linalg_cholesky_ex linalg_cross linalg_det linalg_eigh linalg_eigvalsh linalg_inv linalg_inv_ex
linalg_ldl_factor linalg_ldl_factor_ex linalg_ldl_solve linalg_lu linalg_lu_factor
linalg_lu_factor_ex linalg_lu_solve linalg_matrix_norm linalg_matrix_power linalg_multi_dot
linalg_norm linalg_qr linalg_slogdet linalg_solve linalg_solve_ex linalg_solve_triangular
linalg_svd linalg_svdvals linalg_vecdot linalg_vector_norm linspace log_softmax logcumsumexp
logspace lu_solve lu_unpack masked_select matmul mm mode msort mv nan_to_num nanquantile
narrow_copy native_batch_norm neg nonzero norm ones ormqr permute_copy qr quantile renorm round
scatter scatter_add scatter_reduce searchsorted sgn sign slice_scatter softmax sort
split_with_sizes_copy squeeze_copy svd t_copy take take_along_dim tensordot topk transpose_copy
triangular_solve tril triu trunc unbind_copy unfold_copy unsqueeze_copy vdot view_copy zeros
""".split())

SILENT_RESIZE = frozenset("""
zeros ones empty full eye linspace logspace rand randn randint randperm narrow_copy addbmm lu
range
""".split())
GRAD_ALLOWED = frozenset("""
alias_copy as_strided_copy diagonal_copy expand_copy floor_divide linalg_ldl_factor
linalg_ldl_factor_ex linalg_ldl_solve permute_copy slice_scatter special_ndtr squeeze_copy
t_copy transpose_copy unfold_copy unsqueeze_copy view_copy split_copy split_with_sizes_copy
unbind_copy conj_physical diag diff fft_ifft fft_ihfft heaviside histogram inner linalg_cond
linalg_eigvals linalg_matrix_power linalg_tensorinv linalg_tensorsolve log_softmax nanquantile
quantile linalg_matrix_norm linalg_norm softmax tensordot
""".split())
RETURNS_NONE = frozenset("split_copy split_with_sizes_copy unbind_copy".split())
# torch's other dtype rules for out (name -> rule):
#   "any": out may have any dtype (the op computes in it); "bool": out must be bool;
#   "cast": a tuple out is checked with the cast rule (not exactly); "type_error": a refused
#   cast is a TypeError; "no_int_nan": an integer out is torch's missing-kernel error.
DTYPE_RULES = {
    "cumsum": "any", "cumprod": "any",
    "all": "bool", "any": "bool", "isin": "bool", "isneginf": "bool", "isposinf": "bool",
    "signbit": "bool",
    "geqrf": "cast", "linalg_lstsq": "cast", "lu": "any",
    "cat": "type_error", "concat": "type_error", "concatenate": "type_error",
    "stack": "type_error", "hstack": "type_error", "vstack": "type_error",
    "dstack": "type_error", "column_stack": "type_error", "row_stack": "type_error",
    "nansum": "no_int_nan", "nanmean": "no_int_nan",
}

# Functions defined with an ``out`` parameter that do not write it as deliver_out does (they
# return a new tensor, or ignore out): wrapped like the functions without one.
REWRAP = {"": frozenset("""
addr arange bucketize eye full geqrf histc histogram linspace logspace lu lu_solve nanquantile
norm ormqr qr quantile searchsorted svd triangular_solve randint randperm range normal
""".split()), "linalg": frozenset("""
cholesky_ex eig eigh eigvalsh inv_ex ldl_factor ldl_factor_ex ldl_solve lu lu_factor
lu_factor_ex qr slogdet solve_ex svd
""".split())}


# Given out and no dtype, these compute in out's dtype, as torch's do (the factories make it;
# cumsum and cumprod accumulate in it).
DTYPE_FROM_OUT = frozenset("""
zeros ones empty full arange range linspace logspace eye rand randn randint randperm cumsum
cumprod
""".split())


def with_out(fn, name, op_name=None):
    """`fn` with torch's ``out=`` keyword: a function of the same signature plus ``out=None``
    that calls `fn` and, when out is given, writes the result into it (``deliver_out``, with
    `op_name`, torch's name of the op: ``linalg_det``)."""
    sig = inspect.signature(fn, follow_wrapped=False)  # what fn itself accepts
    ns = {"_fn": fn, "_deliver": deliver_out, "_name": op_name or name, "_Tensor": Tensor}
    defs, call, star, var_kw, pos_only, by_name = [], [], False, None, False, False
    has_out = "out" in sig.parameters
    for i, p in enumerate(sig.parameters.values()):
        if p.name == "out":  # fn's own out (REWRAP) is left at its default
            defs.append("out=None")
            star = star or p.kind is p.KEYWORD_ONLY
            by_name = True
            continue
        default = ""
        if p.default is not p.empty:
            ns[f"_d{i}"] = p.default
            default = f"=_d{i}"
        if p.kind is p.POSITIONAL_ONLY:
            defs.append(p.name + default)
            call.append(p.name)
            pos_only = True
            continue
        if pos_only:
            defs.append("/")
            pos_only = False
        if p.kind is p.POSITIONAL_OR_KEYWORD:
            defs.append(p.name + default)
            call.append(f"{p.name}={p.name}" if by_name else p.name)
        elif p.kind is p.VAR_POSITIONAL:
            defs.append("*" + p.name)
            call.append("*" + p.name)
            star = True
        elif p.kind is p.KEYWORD_ONLY:
            if not star:
                defs.append("*")
                star = True
            defs.append(p.name + default)
            call.append(f"{p.name}={p.name}")
        else:
            var_kw = p.name
    if pos_only:
        defs.append("/")
    if not has_out:
        defs.append("out=None" if star else "*, out=None")
    if var_kw:
        defs.append("**" + var_kw)
        call.append("**" + var_kw)
    args = ", ".join(call)
    infer = ""
    if name in DTYPE_FROM_OUT and "dtype" in sig.parameters:
        infer = "    if dtype is None and isinstance(out, _Tensor):\n        dtype = out.dtype\n"
    elif name in DTYPE_FROM_OUT and var_kw:  # a decorated function: dtype is in **kwargs
        infer = (f"    if {var_kw}.get('dtype') is None and isinstance(out, _Tensor):\n"
                 f"        {var_kw}['dtype'] = out.dtype\n")
    src = (f"def {name}({', '.join(defs)}):\n"
           f"    if out is None:\n"
           f"        return _fn({args})\n"
           f"{infer}"
           f"    return _deliver(_name, _fn({args}), out)\n")
    exec(src, ns)  # noqa: S102  (the source is built above from fn's own signature)
    wrapper = functools.update_wrapper(ns[name], fn)
    shown = inspect.signature(fn)  # the signature fn shows (a decorated function's own)
    params = list(shown.parameters.values())
    var_kw = next((p for p in params if p.kind is p.VAR_KEYWORD), None)
    if "out" not in shown.parameters:
        at = len(params) - (var_kw is not None)
        params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY,
                                            default=None))
    wrapper.__signature__ = shown.replace(parameters=params)
    return wrapper


def _takes_out(fn):
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True  # not introspectable: left alone


def install(package):
    """Give ``out=`` to every function of OUT_NAMES in `package` (ndgrad) defined without
    it; the wrappers are shared between modules that export the same function."""
    arguments.EXACT_OUT_DTYPE = EXACT
    arguments.SILENT_RESIZE = SILENT_RESIZE
    arguments.GRAD_ALLOWED = GRAD_ALLOWED
    arguments.RETURNS_NONE = RETURNS_NONE
    arguments.DTYPE_RULES = DTYPE_RULES
    made = {}
    for path, names in OUT_NAMES.items():
        module = package
        for part in filter(None, path.split(".")):
            module = getattr(module, part)
        for name in names:
            fn = getattr(module, name, None)
            if fn is None or not inspect.isfunction(fn) or getattr(fn, "_out_wrapped", False):
                continue
            if _takes_out(fn) and name not in REWRAP.get(path, ()):
                continue
            if id(fn) not in made:
                prefix = path.replace(".", "_").replace("nn_functional", "")
                made[id(fn)] = with_out(fn, name, f"{prefix}_{name}" if prefix else name)
                made[id(fn)]._out_wrapped = True
            setattr(module, name, made[id(fn)])
