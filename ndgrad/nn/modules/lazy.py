"""Lazy modules: ``LazyModuleMixin`` and the ``Lazy*`` layers (Linear, Conv*, ConvTranspose*,
BatchNorm*, InstanceNorm*) whose input size is inferred at the first call.

Invariants, as torch's: until the first forward, the inferred parameters and buffers are
``UninitializedParameter`` / ``UninitializedBuffer`` placeholders (nn/parameter.py) and nothing
is drawn from the RNG; the first call (a forward pre-hook) materialises them with the inferred
shape, runs the concrete class's ``reset_parameters`` (so the draws equal those of the
concrete layer built at that moment under the same seed), removes its hooks and turns the
module into its ``cls_to_become`` (LazyLinear -> Linear, ...). A state dict holding real
tensors materialises the placeholders when loaded.
"""

from ..._creation import tensor as _tensor
from ... import _dtype
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
from .linear import Linear
from .module import _add_hook
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d,
                            InstanceNorm2d, InstanceNorm3d, _BatchNorm, _InstanceNorm,
                            _NormBase)

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """A mixin for modules whose parameter shapes come from their first input."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = _add_hook(self._load_state_dict_pre_hooks, self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # placeholders go into the state dict as themselves (torch's <UninitializedParameter>)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars \
                    else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _apply(self, fn, recurse=True):
        # A placeholder buffer stays a placeholder through .to()/.double() (torch's subclass-
        # preserving conversion); Module._apply would replace it by a plain tensor.
        lazy = {k: b for k, b in self._buffers.items() if is_lazy(b)}
        super()._apply(fn, recurse)
        for key, buf in lazy.items():
            buf._data = self._buffers[key]._data
            self._buffers[key] = buf
        return self

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        for name, param in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                value = state_dict[key]
                if not is_lazy(value):
                    param.materialize(value._data.shape)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether a parameter or buffer of this module is still a placeholder."""
        return any(is_lazy(t) for t in list(self._parameters.values())
                   + list(self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook
        del module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize the "
                           "modules")


# ============================================================================ linear
class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose ``in_features`` is ``input.shape[-1]`` of the first call."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()
        if self.in_features == 0:   # loaded from a state dict before the first call
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} "
                                     "is not equal to in_features from self.weight: "
                                     f"{self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


# ============================================================================ convolution
class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        n = self._nd + 1
        if input.dim() not in (n, n + 1):
            raise RuntimeError(f"Expected {n}D (unbatched) or {n + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == n + 1 else input.shape[0]


def _lazy_conv(concrete):
    class LazyConv(_LazyConvXdMixin, concrete):
        cls_to_become = concrete

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                     groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                             padding_mode, device, dtype)
            self.weight = UninitializedParameter(dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
    return LazyConv


def _lazy_conv_transpose(concrete):
    class LazyConvTranspose(_LazyConvXdMixin, concrete):
        cls_to_become = concrete

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                             dilation, padding_mode, device, dtype)
            self.weight = UninitializedParameter(dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
    return LazyConvTranspose


def _named(cls, name):
    cls.__name__ = cls.__qualname__ = name
    cls.__doc__ = (f"A {cls.cls_to_become.__name__} whose ``in_channels`` is inferred from the "
                   "first input.")
    return cls


LazyConv1d = _named(_lazy_conv(Conv1d), "LazyConv1d")
LazyConv2d = _named(_lazy_conv(Conv2d), "LazyConv2d")
LazyConv3d = _named(_lazy_conv(Conv3d), "LazyConv3d")
LazyConvTranspose1d = _named(_lazy_conv_transpose(ConvTranspose1d), "LazyConvTranspose1d")
LazyConvTranspose2d = _named(_lazy_conv_transpose(ConvTranspose2d), "LazyConvTranspose2d")
LazyConvTranspose3d = _named(_lazy_conv_transpose(ConvTranspose3d), "LazyConvTranspose3d")


# ============================================================================ normalization
class _LazyNormBase(LazyModuleMixin, _NormBase):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = _tensor(0, dtype=_dtype.int64)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(base, concrete, name):
    attrs = {"cls_to_become": concrete, "__module__": __name__,
             "__doc__": f"A {concrete.__name__} whose ``num_features`` is ``input.shape[1]``."}
    for attr in ("_nd", "_expected_dims", "_check_input_dim"):   # the concrete's input checks
        if attr in vars(concrete):
            attrs[attr] = vars(concrete)[attr]
    return type(name, (_LazyNormBase, base), attrs)


LazyBatchNorm1d = _lazy_norm(_BatchNorm, BatchNorm1d, "LazyBatchNorm1d")
LazyBatchNorm2d = _lazy_norm(_BatchNorm, BatchNorm2d, "LazyBatchNorm2d")
LazyBatchNorm3d = _lazy_norm(_BatchNorm, BatchNorm3d, "LazyBatchNorm3d")
LazyInstanceNorm1d = _lazy_norm(_InstanceNorm, InstanceNorm1d, "LazyInstanceNorm1d")
LazyInstanceNorm2d = _lazy_norm(_InstanceNorm, InstanceNorm2d, "LazyInstanceNorm2d")
LazyInstanceNorm3d = _lazy_norm(_InstanceNorm, InstanceNorm3d, "LazyInstanceNorm3d")
