"""Autocast's op policy on the CPU: which public functions cast their inputs, and to what.

Torch's CPU autocast lists, restricted to what ndgrad has:

- *lower precision* (``LOWER_PRECISION``): matmuls, ``linear``, convolutions, ``prelu`` and
  ``scaled_dot_product_attention`` run in the autocast dtype (float16: ndgrad has no bfloat16);
- *float32* (``FLOAT32``): losses, ``cdist``, ``prod``, ``trace``, the solvers and
  decompositions, ``quantile``, ``stft`` and the fft functions run in float32.

Any other op runs in its inputs' dtypes. ``install()`` (called once, at the end of
``ndgrad/__init__.py``) replaces each listed public function -- in ``ndgrad``, ``Tensor``,
``nn.functional``, ``linalg`` and ``fft`` -- by a wrapper that checks one flag; the elementwise
dispatch path carries no check.

Invariants: a cast is an ordinary differentiable ``.to()`` (its gradient comes back in the
original dtype); only floating tensors other than float64 are cast (torch's eligibility rule),
including those in list/tuple arguments; inside a listed op autocast is off, so the op's own
inner calls are not cast again (torch excludes the autocast key the same way); the state is
restored when the op raises.
"""

import functools

from .. import _dtype
from .._tensor import Tensor
from .autocast_mode import _state

__all__ = ["FLOAT32", "LOWER_PRECISION", "covered", "install"]

_TOP_LOWER = ["mm", "bmm", "matmul", "addmm", "addbmm", "baddbmm", "conv1d", "conv2d", "conv3d",
              "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu", "conv_tbc"]
_TOP_FP32 = ["cdist", "prod", "trace", "cholesky", "cholesky_inverse", "cholesky_solve",
             "inverse", "pinverse", "polar", "quantile", "nanquantile", "stft",
             "view_as_complex", "lu_solve", "orgqr", "ormqr", "geqrf", "qr", "svd",
             "triangular_solve"]
_F_LOWER = ["linear", "prelu", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
            "conv_transpose2d", "conv_transpose3d", "scaled_dot_product_attention"]
_F_FP32 = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
           "cosine_embedding_loss", "hinge_embedding_loss", "poisson_nll_loss",
           "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss",
           "multi_margin_loss", "multilabel_margin_loss", "ctc_loss", "avg_pool3d",
           "max_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "fractional_max_pool2d",
           "fractional_max_pool3d", "max_unpool2d", "max_unpool3d", "grid_sample"]
_LINALG_LOWER = ["vecdot"]
_LINALG_FP32 = ["cond", "matrix_rank", "solve", "cholesky", "svdvals", "eigvals", "eigvalsh",
                "inv", "householder_product", "tensorinv", "tensorsolve", "qr", "cholesky_ex",
                "svd", "eig", "eigh", "lstsq", "inv_ex"]
_FFT_FP32 = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
             "irfft2", "rfftn", "irfftn", "hfft", "ihfft"]
_TENSOR_LOWER = ["mm", "bmm", "matmul", "__matmul__", "addmm", "addbmm", "baddbmm", "prelu"]
_TENSOR_FP32 = ["prod", "trace", "cholesky", "cholesky_inverse", "cholesky_solve", "inverse",
                "pinverse", "quantile", "nanquantile", "stft", "qr", "svd", "triangular_solve",
                "lu_solve", "orgqr", "ormqr", "geqrf"]

# namespace (import path, or "Tensor") -> (lower-precision names, float32 names)
LOWER_PRECISION = {"ndgrad": _TOP_LOWER, "ndgrad.nn.functional": _F_LOWER,
                   "ndgrad.linalg": _LINALG_LOWER, "Tensor": _TENSOR_LOWER}
FLOAT32 = {"ndgrad": _TOP_FP32, "ndgrad.nn.functional": _F_FP32, "ndgrad.linalg": _LINALG_FP32,
           "ndgrad.fft": _FFT_FP32, "Tensor": _TENSOR_FP32}

_covered = {}  # namespace -> {name: "lower" | "fp32"} of the functions install() wrapped


def _cast(value, dtype):
    if isinstance(value, Tensor):
        if value.dtype.is_floating_point and value.dtype is not _dtype.float64 \
                and value.dtype is not dtype:
            return value.to(dtype)
        return value
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(_cast(v, dtype) for v in value)
    return value


def _wrap(fn, lower):
    @functools.wraps(fn)
    def autocast_op(*args, **kwargs):
        enabled = _state.enabled
        if not enabled.get("cpu"):
            return fn(*args, **kwargs)
        fast = _state.dtype.get("cpu")
        if fast is not _dtype.float16:  # only float16 regions are enabled; guard direct setters
            return fn(*args, **kwargs)
        dtype = fast if lower else _dtype.float32
        args = tuple(_cast(a, dtype) for a in args)
        kwargs = {k: _cast(v, dtype) for k, v in kwargs.items()}
        enabled["cpu"] = False
        try:
            return fn(*args, **kwargs)
        finally:
            enabled["cpu"] = True
    autocast_op._autocast_wrapped = fn
    return autocast_op


def install():
    """Wrap every listed function ndgrad has (idempotent; one wrapper per function object)."""
    import importlib
    wrappers = {}
    for policy, lower in ((LOWER_PRECISION, True), (FLOAT32, False)):
        for space, names in policy.items():
            owner = Tensor if space == "Tensor" else importlib.import_module(space)
            done = _covered.setdefault(space, {})
            for name in names:
                fn = owner.__dict__.get(name) if space == "Tensor" else getattr(owner, name, None)
                if fn is None or not callable(fn):
                    continue
                if getattr(fn, "_autocast_wrapped", None) is None:
                    key = (id(fn), lower)
                    if key not in wrappers:
                        wrappers[key] = _wrap(fn, lower)
                    setattr(owner, name, wrappers[key])
                done[name] = "lower" if lower else "fp32"


def covered():
    """{namespace: {name: policy}} of the functions autocast casts for (for tests and docs)."""
    return {space: dict(names) for space, names in _covered.items()}
