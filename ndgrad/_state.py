"""Process- and thread-wide switches read on the hot path: grad mode, inference mode, and the
counter of "special modes" (forward AD, anomaly detection, profiler) that send dispatch down
its slow path.

Grad and inference mode are thread-local, as in torch. `special` is a plain module global so
the dispatcher pays one global read per op when nothing special is on.
"""

import threading


class _ThreadState(threading.local):
    # Class attributes are the defaults every new thread starts from.
    grad_enabled = True
    inference = False
    # Stack of (pack, unpack) pairs from saved_tensors_hooks, innermost last.
    saved_hooks = ()
    # Message of an active disable_saved_tensors_hooks, or None.
    saved_hooks_disabled = None
    # torch's "view replay" switch (autograd._force_original_view_tracking): a view whose base
    # was written in place gets its own op's grad_fn name instead of AsStridedBackward0.
    view_replay = False
    # autograd.set_multithreading_enabled: remembered per thread; the engine always runs the
    # backward on the calling thread either way.
    multithreading = True
    # How many of the `special` modes are open inference_mode contexts of this thread.
    inference_specials = 0


tls = _ThreadState()

# Number of saved_tensors_hooks contexts open on any thread. When zero, saving a tensor for
# backward skips the thread-local read of `tls.saved_hooks` (a superset test: a context open
# on another thread only sends this one to its own, empty, stack).
saved_hooks_active = 0
# Guards `saved_hooks_active`: it may overcount for a moment, never undercount (SavedTensor
# skips hooks at zero).
saved_hooks_lock = threading.Lock()

# Number of active special modes (dual levels, anomaly detection, profilers). When zero the
# dispatcher never looks at them.
special = 0


# Number of active torch.func transforms (vmap levels, grad, vjp, jvp, ...): inside one,
# Tensor.requires_grad_() and backward() raise torch's errors (``ndgrad._functorch``).
func_transforms = 0


def backward_in_transform_error():
    """torch's error for ``backward()`` called while `func_transforms` is raised."""
    return RuntimeError(
        "backward() called inside a functorch transform. This is not supported, please use "
        "functorch.grad or functorch.vjp instead or call backward() outside of functorch "
        "transforms.")


def requires_grad_in_transform_error():
    """torch's error for a user's ``requires_grad_()`` while `func_transforms` is raised."""
    return RuntimeError(
        "You are attempting to call Tensor.requires_grad_() (or perhaps using "
        "torch.autograd.functional.* APIs) inside of a function being transformed by a "
        "functorch transform. This is unsupported, please attempt to use the functorch "
        "transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call requires_grad_() outside "
        "of a function being transformed instead.")


def enter_special():
    global special
    special += 1


def exit_special():
    global special
    special -= 1


def node_modes():
    """What a backward restores around every node it runs, as torch's engine does (its
    ThreadLocalStateGuard): the saved-tensor hook stack, the disable_saved_tensors_hooks
    message and inference mode, captured when the backward starts (`restore_node_modes`)."""
    return (tls.saved_hooks, tls.saved_hooks_disabled, tls.inference, tls.inference_specials)


def restore_node_modes(modes, grad_enabled):
    """Put back what `node_modes` captured, and grad mode as the engine runs nodes (on only
    under create_graph): a hook or custom Function that entered a context during backward
    and never left it (or left one it did not enter) harms nothing after its node."""
    global saved_hooks_active, special
    hooks, disabled, inference, inference_specials = modes
    now = tls.saved_hooks
    if now is not hooks:
        with saved_hooks_lock:
            saved_hooks_active += len(hooks) - len(now)
        tls.saved_hooks = hooks
    tls.saved_hooks_disabled = disabled
    tls.inference = inference
    if tls.inference_specials != inference_specials:
        special -= tls.inference_specials - inference_specials
        tls.inference_specials = inference_specials
    tls.grad_enabled = grad_enabled


# ----------------------------------------------------------------------------- random ops under vmap
# While a vmap level is active, `vmap_random_rule` is `_functorch.random_rules.call`; the random
# ops taking tensors (in-place fills, bernoulli, multinomial, normal(Tensor), poisson, binomial)
# are wrapped by `random_rule` and hand themselves to it. Outside vmap the wrapper costs one
# global read.
vmap_random_rule = None


def random_rule(kind):
    """Decorator for a random op of `kind` "inplace" (``t.fill_(...)`` style, self first) or
    "op" (out-of-place, tensor arguments)."""
    def deco(fn):
        def wrapper(*args, **kwargs):
            rule = vmap_random_rule
            if rule is not None:
                return rule(kind, fn, args, kwargs)
            return fn(*args, **kwargs)
        wrapper.__name__ = fn.__name__
        wrapper.__qualname__ = fn.__qualname__
        wrapper.__doc__ = fn.__doc__
        wrapper.__module__ = fn.__module__
        wrapper.__wrapped__ = fn
        return wrapper
    return deco
