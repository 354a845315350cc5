"""torch.func: composable function transforms (vmap, grad, vjp, jvp, jacrev, jacfwd,
hessian, linearize), the functional use of modules (functional_call, stack_module_state,
replace_all_batch_norm_modules_), rearrange, functionalize and debug_unwrap. See docs/func.md;
the machinery lives in ``ndgrad._functorch``.

Example::

    >>> import ndgrad as torch
    >>> from ndgrad.func import grad, vmap
    >>> vmap(grad(lambda x: (x ** 2).sum()))(torch.ones(3, 2))
    tensor([[2., 2.],
            [2., 2.],
            [2., 2.]])
"""

from .._functorch.einops import rearrange
from .._functorch.module_state import (
                                       functional_call,
                                       replace_all_batch_norm_modules_,
                                       stack_module_state,
)
from .._functorch.transforms import (
                                     debug_unwrap,
                                     functionalize,
                                     grad,
                                     grad_and_value,
                                     hessian,
                                     jacfwd,
                                     jacrev,
                                     jvp,
                                     linearize,
                                     vjp,
                                     vmap,
)

__all__ = ["debug_unwrap", "functional_call", "functionalize", "grad", "grad_and_value",
           "hessian", "jacfwd", "jacrev", "jvp", "linearize", "rearrange",
           "replace_all_batch_norm_modules_", "stack_module_state", "vjp", "vmap"]
