"""ndgrad: PyTorch's autograd rebuilt in pure Python on NumPy, with torch's API.

``import ndgrad as torch`` runs torch code that uses tensors, autograd, nn and optim, and
gives the same numbers. The only runtime dependency is NumPy.
"""

__version__ = "0.1.0"

from ._dtype import (dtype, float16, half, float32, float64, double, complex64, cfloat,  # noqa
                     complex128, cdouble, int8, int16, short, int32, int64, long, uint8, bool,
                     bfloat16, get_default_dtype, set_default_dtype, promote_types, can_cast,
                     finfo, iinfo)
from ._dtype import float as float  # noqa: F401  (torch.float is float32)
from ._dtype import int as int  # noqa: F401  (torch.int is int32)
from ._size import Size  # noqa: F401
from ._device import device, set_default_device, get_default_device  # noqa: F401
from ._tensor import Tensor  # noqa: F401
from ._tensor_str import set_printoptions, get_printoptions, printoptions  # noqa: F401
from . import autograd  # noqa: F401
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled,  # noqa: F401
                                 inference_mode, is_grad_enabled, is_inference_mode_enabled)
from ._ops import registry as _registry  # noqa: F401
from ._ops.arithmetic import *  # noqa: F401,F403
from ._ops.comparison import *  # noqa: F401,F403
from ._ops.pointwise import *  # noqa: F401,F403
from ._ops.reduction import *  # noqa: F401,F403
from ._ops.shape import *  # noqa: F401,F403
from ._ops.joins import *  # noqa: F401,F403
from ._ops.indexing import *  # noqa: F401,F403
from ._ops.matmul import *  # noqa: F401,F403
from ._ops.solvers import *  # noqa: F401,F403
from ._ops.decompositions import *  # noqa: F401,F403
from ._ops.complex_ops import *  # noqa: F401,F403
from ._ops.norms import norm  # noqa: F401
from ._ops import methods as _methods  # noqa: F401
from ._creation import *  # noqa: F401,F403
from ._ops.sorting import *  # noqa: F401,F403
from ._ops.bessel import i0, igamma, igammac  # noqa: F401
from ._ops import random_fills as _random_fills  # noqa: F401  (Tensor.uniform_, ...)
from ._ops import normal_nodes as _normal_nodes  # noqa: F401,E402  (normal(Tensor, ...) nodes)
from ._ops.random_fills import bernoulli  # noqa: F401,E402  (recorded as torch records it)
from ._ops.statistics import *  # noqa: F401,F403
from ._ops.distances import *  # noqa: F401,F403
from ._ops.constructions import *  # noqa: F401,F403
from ._ops.differences import *  # noqa: F401,F403
from ._ops.scatter_variants import *  # noqa: F401,F403
from ._ops.rank_one import *  # noqa: F401,F403
from ._ops.reshaping import *  # noqa: F401,F403
from ._ops.copy_variants import *  # noqa: F401,F403
from ._ops.toplevel_inplace import *  # noqa: F401,F403
from ._ops.tensor_queries import *  # noqa: F401,F403  (dequantize; Tensor.is_cpu, ...)
from ._ops.legacy_methods import *  # noqa: F401,F403  (lu, lu_solve; Tensor.apply_, ...)
from ._ops.function_forms import *  # noqa: F401,F403
from ._ops.householder import *  # noqa: F401,F403
from ._ops.norms import frobenius_norm, norm_except_dim, nuclear_norm  # noqa: F401,E402
from .serialization import *  # noqa: F401,F403
from . import linalg  # noqa: F401,E402
from . import testing  # noqa: F401,E402
from . import utils  # noqa: F401,E402
from .utils.dlpack import from_dlpack  # noqa: F401,E402
from . import nn  # noqa: F401,E402
from .nn._functional_spatial import TORCH_NAMES as _SPATIAL_NAMES  # noqa: E402
globals().update(_SPATIAL_NAMES)  # torch.conv3d, torch.max_pool3d, torch.convolution, ...
from .nn._torch_top_level import TOP_LEVEL as _NN_TOP_LEVEL  # noqa: E402
globals().update({k: v for k, v in _NN_TOP_LEVEL.items() if k not in globals()})  # issue 16
from . import optim  # noqa: F401,E402
from . import profiler  # noqa: F401,E402
from . import special  # noqa: F401,E402
from . import signal  # noqa: F401,E402
from . import masked  # noqa: F401,E402
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: F401,E402
from . import amp, backends, cpu, cuda, mps, onnx, random  # noqa: F401,E402
from .amp import GradScaler, autocast  # noqa: F401,E402
from .amp.autocast_mode import (get_autocast_dtype, is_autocast_enabled,  # noqa: F401,E402
                                set_autocast_dtype, set_autocast_enabled,
                                is_autocast_cache_enabled, set_autocast_cache_enabled)
from . import fft  # noqa: F401,E402
from . import distributions  # noqa: F401,E402
from .distributions._sampling import (  # noqa: F401,E402
    _sample_dirichlet, _standard_gamma, binomial, poisson)
from ._windows import *  # noqa: F401,F403,E402
from ._stft import istft, stft  # noqa: F401,E402
from .autograd.anomaly_mode import (is_anomaly_enabled,  # noqa: F401,E402
                                    is_anomaly_check_nan_enabled, set_anomaly_enabled)
from .random import thread_safe_generator  # noqa: F401,E402
from ._legacy import (is_inference, set_warn_always, is_warn_always_enabled,  # noqa: F401,E402
                      FatalError, TYPED_TENSORS as _TYPED_TENSORS)
globals().update(_TYPED_TENSORS)  # FloatTensor, LongTensor, ... (legacy typed constructors)
from ._dtype import result_type as _result_type

import builtins as _builtins

inf = _builtins.float("inf")
nan = _builtins.float("nan")
from ._layouts import (layout, memory_format, strided, contiguous_format,  # noqa: F401,E402
                       preserve_format, channels_last, channels_last_3d, sparse_coo,
                       sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
Type = dtype


def result_type(tensor1, tensor2):
    """The dtype torch's promotion gives for an op between these two operands."""
    return _result_type(tensor1, tensor2)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def is_complex(input):
    return input.is_complex()


def numel(input):
    return input.numel()


def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return _builtins.bool(input.item())


def detach(input):
    return input.detach()


def t(input):
    return _ops_shape.t(input)


from ._ops import shape as _ops_shape  # noqa: E402


from ._switches import *  # noqa: F401,F403,E402
import math as _math  # noqa: E402

pi, e, newaxis = _math.pi, _math.e, None


from . import _dynamo, compiler  # noqa: F401,E402
from ._compile import compile  # noqa: F401,E402
from ._threads import get_num_threads, set_num_threads  # noqa: F401,E402


_warned_tensor_type = False
_LEGACY_FLOAT_TYPES = {"torch.FloatTensor": float32, "torch.DoubleTensor": float64,
                       "torch.HalfTensor": float16}


def set_default_tensor_type(t):
    """Deprecated in torch: sets the default dtype from a legacy type name
    (``"torch.DoubleTensor"``); CUDA types raise as in torch's CPU build."""
    global _warned_tensor_type
    if not _warned_tensor_type:  # torch warns once per process
        import warnings
        _warned_tensor_type = True
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives.", UserWarning, stacklevel=2)
    name = t if isinstance(t, str) else getattr(t, "__name__", None)
    if not isinstance(name, str):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if name.startswith("torch.cuda."):
        raise TypeError(f"type {name} not available. Torch not compiled with CUDA enabled.")
    if not name.startswith("torch."):
        name = "torch." + name
    if name not in _LEGACY_FLOAT_TYPES:
        short = name[len("torch."):]
        if short in ("ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor",
                     "BoolTensor", "ComplexFloatTensor", "ComplexDoubleTensor"):
            raise TypeError("only floating-point types are supported as the default type")
        raise AttributeError(f"module 'torch' has no attribute '{short}'")
    set_default_dtype(_LEGACY_FLOAT_TYPES[name])


from . import func  # noqa: E402,F401
from .func import vmap  # noqa: E402,F401

import sys as _sys  # noqa: E402
from .amp import _policy as _autocast_policy  # noqa: E402
_autocast_policy.install()  # autocast's casting wrappers on the listed ops (amp/_policy.py)
from ._ops import out_arguments as _out_arguments  # noqa: E402
_out_arguments.install(_sys.modules[__name__])  # out= on every function torch gives it

# torch.autograd runs ``import torch``, so old code reaches the package as torch.autograd.torch
autograd.torch = _sys.modules[__name__]

# torch.jit, torch.futures and torch._vmap_internals are attributes of the package after
# ``import torch``; libraries call torch.jit.is_scripting() without importing torch.jit
from . import futures, jit, _vmap_internals  # noqa: F401,E402
from ._install import install_as_torch  # noqa: F401,E402
