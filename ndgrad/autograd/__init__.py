"""ndgrad.autograd: reverse-mode differentiation with torch.autograd's API.

This package's namespace is torch.autograd's: ``backward`` and ``grad`` (``_backward``, which
checks their arguments the way torch does and hands the graph to the engine), grad modes,
``Function``, gradcheck, anomaly mode, and the submodules ``graph``, ``forward_ad``,
``functional`` and ``profiler``. Importing it also binds to ``Tensor`` what needs the engine
(``backward``; ``_view_regeneration``: stale views' grad_fns; ``_forward_engine``: dual
tensors' repr).
"""

from . import graph
from ._backward import backward, grad
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,
                        is_grad_enabled, is_inference_mode_enabled, set_multithreading_enabled,
                        is_view_replay_enabled, is_multithreading_enabled,
                        _force_original_view_tracking)  # noqa: F401
from .function import *  # noqa: F401,F403
from .gradcheck import *  # noqa: F401,F403
from .anomaly_mode import *  # noqa: F401,F403
from . import forward_ad  # noqa: F401
from . import functional  # noqa: F401
from . import profiler  # noqa: F401
from .._legacy import Variable  # noqa: F401
from . import variable  # noqa: F401
from . import profiler_util  # noqa: F401
from .profiler import kineto_available  # noqa: F401
from . import _view_regeneration  # noqa: F401  (binds Tensor._regenerate_grad_fn)
from ._backward import _calculate_shape  # noqa: F401
from .profiler import _profiler_enabled  # noqa: F401
from .grad_mode import _unsafe_preserve_version_counter  # noqa: F401
from ._graph_introspection import _RawSaved as SavedTensor  # noqa: F401

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "set_multithreading_enabled", "graph",
           "is_view_replay_enabled", "is_multithreading_enabled"]
