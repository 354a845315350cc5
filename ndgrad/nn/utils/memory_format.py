"""``nn.utils.convert_conv{2,3}d_weight_memory_format``: lay out the weights of a model's
2-d (3-d) convolutions in a memory format, in place, returning the model.

Only the weights' strides change (their values, identity as Parameters and gradients do not):
ndgrad's convolutions give the same values whatever the layout.
"""

from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Every ``Conv2d`` / ``ConvTranspose2d`` weight in ``module`` laid out in
    ``memory_format`` (e.g. ``torch.channels_last``); returns ``module``."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Every ``Conv3d`` / ``ConvTranspose3d`` weight in ``module`` laid out in
    ``memory_format`` (e.g. ``torch.channels_last_3d``); returns ``module``."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
