"""``nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm`` as parametrizations
(see ``parametrize.py``).

``weight_norm`` stores ``original0`` = g (the norm of the weight over every dim but ``dim``)
and ``original1`` = v (the direction), and computes the weight with torch's
``_weight_norm_interface`` node. ``spectral_norm`` divides the weight by its largest singular
value, estimated by power iteration on the buffers ``_u`` and ``_v`` (updated in place, in
training mode only, at each access), drawn from the global generator as torch does.
"""

from ..._ops.normalization import WEIGHT_NORM
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.conv import _ConvTransposeNd
from ..modules.module import Module
from . import parametrize

__all__ = ["spectral_norm", "weight_norm"]


def _weight_norm(v, g, dim=0):
    """``w = v * (g / ||v||)``, the norm over every dim but ``dim`` (-1: over all of v).
    As torch on CPU: one fused node when ``dim`` is the first or last dim, else ops."""
    if dim != -1 and dim in (0, v.dim() - 1):
        return WEIGHT_NORM.call(v, g, params=(dim,))
    return v * (g / _norm_except_dim(v, dim))


def _norm_except_dim(v, dim):
    if dim == -1:
        return v.norm()
    axes = [i for i in range(v.dim()) if i != dim]
    return (v * v).sum(axes, keepdim=True).sqrt()


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as magnitude ``original0`` times direction
    ``original1`` (torch's ``parametrizations.weight_norm``)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(weight_mat.t().mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm (torch's
    ``parametrizations.spectral_norm``; ``dim`` defaults to 1 for transposed convolutions)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
