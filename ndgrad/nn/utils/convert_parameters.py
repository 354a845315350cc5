"""``parameters_to_vector`` / ``vector_to_parameters``."""

from ..._ops import joins as J
from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """One 1-D tensor with every parameter flattened and concatenated (differentiable)."""
    return J.cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy slices of `vec` into the parameters' data (``param.data = ...``, like torch)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
