"""ndgrad.optim: optimizers and learning-rate schedulers with torch.optim's API and numbers.

Each optimizer follows torch's single-tensor (``foreach=False``) implementation, the one torch
uses on CPU, with the same floating-point order (see ``_kernels``). ``foreach``, ``fused`` and
``capturable`` are accepted and stored in the param groups but do not change the computation
(torch's foreach/fused kernels may round differently in the last bit);
``differentiable=True`` raises NotImplementedError.
"""

# swa_utils needs ndgrad.nn, which ndgrad imports before optim
from . import lr_scheduler, swa_utils  # noqa: F401
from .adadelta import Adadelta  # noqa: F401
from .adafactor import Adafactor  # noqa: F401
from .adagrad import Adagrad  # noqa: F401
from .adam import Adam  # noqa: F401
from .adamax import Adamax  # noqa: F401
from .adamw import AdamW  # noqa: F401
from .asgd import ASGD  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .nadam import NAdam  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .radam import RAdam  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .rprop import Rprop  # noqa: F401
from .sgd import SGD  # noqa: F401
from .sparse_adam import SparseAdam  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "Rprop", "ASGD", "LBFGS", "Adafactor", "SparseAdam", "lr_scheduler",
           "swa_utils"]
