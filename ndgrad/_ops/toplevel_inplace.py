"""The in-place ops torch also exposes as top-level functions (``torch.sin_(x)``,
``torch.relu_(x)``, ``torch.zero_(x)``, ...): each forwards to the Tensor method, so the
write, the version bump, the recorded node and the errors are the method's own. The nn
activations and dropout (``torch.celu_``, ``selu_``, ``threshold_``, ``dropout_``) sit a
floor above: ``nn.functional`` attaches them (``_export_aliases``).
"""

import numpy as np

from .registry import unary
from .inplace import apply_inplace
from .._tensor import Tensor

__all__ = [  # noqa: F822 (the method forms are defined through globals() below)
    "abs_",
    "acos_",
    "acosh_",
    "addmv_",
    "arccos_",
    "arccosh_",
    "arcsin_",
    "arcsinh_",
    "arctan_",
    "arctanh_",
    "asin_",
    "asinh_",
    "atan_",
    "atanh_",
    "ceil_",
    "clamp_",
    "clamp_max_",
    "clamp_min_",
    "clip_",
    "conj_physical_",
    "cos_",
    "cosh_",
    "deg2rad_",
    "detach_",
    "erf_",
    "erfc_",
    "exp2_",
    "exp_",
    "expm1_",
    "fill_",
    "fix_",
    "floor_",
    "frac_",
    "gcd_",
    "i0_",
    "index_put_",
    "lcm_",
    "ldexp_",
    "log1p_",
    "log2_",
    "log10_",
    "log_",
    "logit_",
    "nan_to_num_",
    "neg_",
    "negative_",
    "rad2deg_",
    "reciprocal_",
    "relu_",
    "round_",
    "rsqrt_",
    "sigmoid_",
    "sin_",
    "sinc_",
    "sinh_",
    "sqrt_",
    "square_",
    "tan_",
    "tanh_",
    "trunc_",
    "xlogy_",
    "zero_",
]

# Top-level names that are exactly ``input.<name>(*args, **kwargs)``.
_METHOD_FORMS = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_",
    "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_", "index_put_",
    "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
    "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_",
    "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_",
    "conj_physical_",
)


def _method_form(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = name
    return fn


globals().update({name: _method_form(name) for name in _METHOD_FORMS})


# The in-place conj_physical records its own node (torch's ConjPhysicalBackward1), for real
# tensors too.
CONJ_PHYSICAL_ = unary("conj_physical_", np.conjugate, "ConjPhysicalBackward1", linear=True)


@CONJ_PHYSICAL_.def_vjp
def _(ctx, g):
    return (g.conj() if g.is_complex() else g,)


def _conj_physical_(self):
    """``Tensor.conj_physical_``: conjugates complex values in place."""
    return apply_inplace(CONJ_PHYSICAL_, self)


def _bind():
    Tensor.conj_physical_ = _conj_physical_


_bind()
