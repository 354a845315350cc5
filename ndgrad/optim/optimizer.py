"""The Optimizer base class: param groups, per-parameter state, state dicts, zero_grad, hooks.

Concrete optimizers (sgd.py, adam.py, ...) implement ``_update(group, params)`` working on
NumPy arrays through ``_kernels``; the base class does the bookkeeping torch's does, with the
same error types and messages. ``state`` maps each parameter Tensor (hashed by identity) to a
dict of Tensors and numbers, exactly like ``torch.optim.Optimizer.state``.

Every in-place write to a parameter bumps its version counter once, as torch's in-place op
would, so a graph that saved the parameter before the step refuses to backward through it.
"""

import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from functools import wraps
from itertools import chain

import numpy as np

from .. import _dtype, _state
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import RemovableHandle

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]

_tls = _state.tls
_global_pre_hooks = OrderedDict()
_global_post_hooks = OrderedDict()


class _RequiredParameter:
    """Marks a hyper-parameter every param group must set."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.dtype._legacy if hasattr(obj.dtype, "_legacy") else "torch.Tensor"
    t = type(obj)
    mod = t.__module__
    if mod in ("builtins", "__builtin__"):
        return t.__qualname__
    return f"{mod}.{t.__qualname__}"


def _add_handle(d, hook):
    handle = RemovableHandle(d)
    d[handle._key] = hook
    return handle


def register_optimizer_step_pre_hook(hook):
    """Register a hook called as ``hook(optimizer, args, kwargs)`` before every step."""
    return _add_handle(_global_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """Register a hook called as ``hook(optimizer, args, kwargs)`` after every step."""
    return _add_handle(_global_post_hooks, hook)


class _HookOD(OrderedDict):
    """An OrderedDict that RemovableHandle can weakly reference."""


def scalar_dtype():
    """dtype of the ``step`` counters: float64 when it is the default dtype, else float32."""
    return np.float64 if _dtype.get_default_dtype().np == np.float64 else np.float32


def new_step():
    return Tensor(np.array(0.0, dtype=scalar_dtype()))


def to_scalar(x):
    """A learning rate or beta given as a 1-element Tensor becomes a Python float."""
    if isinstance(x, Tensor):
        return x.item()
    return x


def bump(p):
    """Record an in-place write to parameter ``p`` (autograd's version counter)."""
    p._vc[0] += 1


def _shape_error(state_shape, param_shape, param_first):
    """torch's RuntimeError for an update mixing a state tensor of `state_shape` with a
    parameter of `param_shape` (as its in-place ops word it)."""
    a, b = (param_shape, state_shape) if param_first else (state_shape, param_shape)
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for d in range(n - 1, -1, -1):
        if pa[d] != pb[d] and pa[d] != 1 and pb[d] != 1:
            return RuntimeError(f"The size of tensor a ({pa[d]}) must match the size of tensor b "
                                f"({pb[d]}) at non-singleton dimension {d}")
    full = [max(x, y) for x, y in zip(pa, pb)]
    out = state_shape if list(state_shape) != full else param_shape
    return RuntimeError(f"output with shape {list(out)} doesn't match the broadcast shape "
                        f"{full}")


class Optimizer:
    """Base class for all optimizers (``torch.optim.Optimizer``)."""

    # Every non-scalar state tensor has its parameter's shape (False for factored states).
    _elementwise_state = True
    # torch's size error names the parameter's gradient first (Rprop) or the state first.
    _param_first_in_errors = False

    def __init__(self, params, defaults):
        if defaults.get("differentiable"):
            raise NotImplementedError(
                "ndgrad optimizers do not support differentiable=True: their updates work on "
                "the parameters' data and are not recorded by autograd")
        self.defaults = defaults
        self._optimizer_step_pre_hooks = _HookOD()
        self._optimizer_step_post_hooks = _HookOD()
        self._optimizer_state_dict_pre_hooks = _HookOD()
        self._optimizer_state_dict_post_hooks = _HookOD()
        self._optimizer_load_state_dict_pre_hooks = _HookOD()
        self._optimizer_load_state_dict_post_hooks = _HookOD()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------ pickling / repr
    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, _HookOD())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n" + f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ------------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook):
        return _add_handle(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        return _add_handle(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        h = _add_handle(self._optimizer_state_dict_pre_hooks, hook)
        if prepend:
            self._optimizer_state_dict_pre_hooks.move_to_end(h._key, last=False)
        return h

    def register_state_dict_post_hook(self, hook, prepend=False):
        h = _add_handle(self._optimizer_state_dict_post_hooks, hook)
        if prepend:
            self._optimizer_state_dict_post_hooks.move_to_end(h._key, last=False)
        return h

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        h = _add_handle(self._optimizer_load_state_dict_pre_hooks, hook)
        if prepend:
            self._optimizer_load_state_dict_pre_hooks.move_to_end(h._key, last=False)
        return h

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        h = _add_handle(self._optimizer_load_state_dict_post_hooks, hook)
        if prepend:
            self._optimizer_load_state_dict_post_hooks.move_to_end(h._key, last=False)
        return h

    # ------------------------------------------------------------------ state dicts
    def state_dict(self):
        """The optimizer state: ``{"state": {index: {...}}, "param_groups": [...]}``.

        Parameters are replaced by their index in group order; the state values are the
        live tensors (like torch; save or deepcopy the dict to keep a snapshot)."""
        for hook in list(self._optimizer_state_dict_pre_hooks.values()):
            hook(self)
        mapping = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        sd = {"state": packed_state, "param_groups": groups}
        for hook in list(self._optimizer_state_dict_post_hooks.values()):
            res = hook(self, sd)
            if res is not None:
                sd = res
        return sd

    def load_state_dict(self, state_dict):
        """Load a state dict from :meth:`state_dict`. Tensors are cast to the parameter's dtype
        (``step`` counters keep theirs); like torch, a tensor already of that dtype is used as
        is, not copied."""
        state_dict = state_dict.copy()
        for hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
            res = hook(self, state_dict)
            if res is not None:
                state_dict = res
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            # like torch's value.to(param.dtype): the same tensor when nothing changes
            if isinstance(value, Tensor):
                if key == "step" or not param.is_floating_point():
                    return value
                if value._data.dtype == param._data.dtype:
                    return value
                return Tensor(value._data.astype(param._data.dtype))
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v

        new_groups = []
        for g, ng in zip(groups, saved_groups):
            ng["params"] = g["params"]
            if "param_names" in g and "param_names" not in ng:
                ng["param_names"] = g["param_names"]
            new_groups.append(ng)
        self.__setstate__({"state": state, "param_groups": new_groups})
        self._unchecked_state = True  # the next step checks the loaded shapes first
        for hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            hook(self)

    # ------------------------------------------------------------------ gradients
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors (to None by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g._data.fill(0)
                    g._vc[0] += 1

    # ------------------------------------------------------------------ step
    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the
        loss (called with gradients enabled)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        if self.__dict__.get("_unchecked_state"):
            self._check_state_shapes()
        # (no_grad, without the context manager's objects: this runs every training step)
        prev = _tls.grad_enabled
        _tls.grad_enabled = False
        try:
            for group in self.param_groups:
                params = [p for p in group["params"] if p._grad is not None]
                if params:
                    self._update(group, params)
        finally:
            _tls.grad_enabled = prev
        return loss

    def _check_state_shapes(self):
        """Refuse, before anything changes, a loaded state tensor of another shape than its
        parameter (torch's update fails on it with this RuntimeError, NumPy's would be a
        ValueError); done once after each load_state_dict."""
        if self._elementwise_state:
            for group in self.param_groups:
                for p in group["params"]:
                    if p._grad is None:
                        continue
                    shape = p._data.shape
                    for v in self.state.get(p, {}).values():
                        if isinstance(v, Tensor) and v._data.ndim and v._data.shape != shape:
                            raise _shape_error(v._data.shape, shape, self._param_first_in_errors)
        self._unchecked_state = False

    def __init_subclass__(cls, **kwargs):
        # Every optimizer's step runs the step pre- and post-hooks (torch patches step the
        # same way); a subclass inheriting an already hooked step is left alone.
        super().__init_subclass__(**kwargs)
        step = cls.step
        if not getattr(step, "_hooked", False):
            cls.step = _hooked_step(step)

    def _update(self, group, params):
        raise NotImplementedError

    def add_param_group(self, param_group):
        """Add a param group (a dict with ``"params"`` and optional per-group options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf
                                                                        or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if not seen.isdisjoint(id(p) for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)


def _hooked_step(func):
    @wraps(func)
    def step(*args, **kwargs):
        # like torch, hooks see the positional arguments including the optimizer itself
        self = args[0]
        pre_hooks = getattr(self, "_optimizer_step_pre_hooks", None)
        if pre_hooks is None:
            # A subclass instance that never ran Optimizer.__init__ (a Lookahead-style wrapper
            # delegating to an inner optimizer): torch leaves its step unhooked.
            return func(*args, **kwargs)
        if not (_global_pre_hooks or pre_hooks):
            # No pre-hooks (the usual case): skip building the hook lists. Post-hooks are
            # looked up after the step, as torch does (the step may register some).
            out = func(*args, **kwargs)
            if not (self._optimizer_step_post_hooks or _global_post_hooks):
                return out
            for hook in chain(list(self._optimizer_step_post_hooks.values()),
                              list(_global_post_hooks.values())):
                hook(self, args, kwargs)
            return out
        for hook in chain(list(_global_pre_hooks.values()),
                          list(self._optimizer_step_pre_hooks.values())):
            res = hook(self, args, kwargs)
            if res is not None:
                if isinstance(res, tuple) and len(res) == 2:
                    args, kwargs = res
                else:
                    raise RuntimeError(f"{func} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {res}.")
        out = func(*args, **kwargs)
        for hook in chain(list(self._optimizer_step_post_hooks.values()),
                          list(_global_post_hooks.values())):
            hook(self, args, kwargs)
        return out
    step._hooked = True
    return step


def grad_array(p, maximize):
    """The gradient of ``p`` as an array, negated (a new array) when maximizing."""
    g = p._grad._data
    return np.negative(g) if maximize else g
