"""``grid_sample`` and the grid-sampler entry points torch exposes (``torch.grid_sampler``,
``grid_sampler_2d``, ``grid_sampler_3d``): argument checks with torch's messages in front of
the primitives of ``_ops/grid_sampling.py`` (GridSampler2DBackward0 / GridSampler3DBackward0).

Invariant: the checks run before any computation, so a rejected call creates nothing.
"""

import warnings

from .._ops.grid_sampling import (GRID_SAMPLER_2D, GRID_SAMPLER_3D, INTERPOLATION_MODES,
                                  PADDING_MODES)
from .._ops.linalg_common import _tname

__all__ = ["grid_sample", "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES"]

GRID_SAMPLE_INTERPOLATION_MODES = dict(INTERPOLATION_MODES)
GRID_SAMPLE_PADDING_MODES = dict(PADDING_MODES)
def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler: integer modes (0 bilinear, 1 nearest, 2 bicubic; 0 zeros,
    1 border, 2 reflection)."""
    isz, gsz = list(input.shape), list(grid.shape)
    if input._data.dtype != grid._data.dtype:
        raise RuntimeError(f"expected scalar type {_tname(input)} but found {_tname(grid)}")
    if input.dim() not in (4, 5) or input.dim() != grid.dim():
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {isz} and grid with sizes "
                           f"{gsz}")
    return _sampler(input, grid, interpolation_mode, padding_mode, align_corners,
                    input.dim() - 2)


def _sampler(input, grid, mode, padding, align_corners, k):
    isz, gsz = list(input.shape), list(grid.shape)
    if input.dim() != k + 2 or grid.dim() != k + 2:
        raise RuntimeError(f"grid_sampler(): expected {k + 2}D input and grid with same number "
                           f"of dimensions, but got input with sizes {isz} and grid with sizes "
                           f"{gsz}")
    if isz[0] != gsz[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {isz} and grid with sizes {gsz}")
    if gsz[-1] != k:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {k} in last dimension, "
                           f"but got grid with sizes {gsz}")
    for d in range(2, k + 2):
        if isz[d] <= 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {isz} with dimension {d} "
                               "being empty")
    if mode == 2 and k == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if mode not in (0, 1, 2) or padding not in (0, 1, 2):
        raise RuntimeError(f"grid_sampler(): unknown interpolation mode {mode} or padding "
                           f"mode {padding}")
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f'"grid_sampler_{k}d_cpu{"_kernel_impl" if k == 2 else ""}" '
                                  f"not implemented for '{_tname(input)}'")
    if input._data.dtype != grid._data.dtype:
        raise RuntimeError(f"expected scalar type {_tname(input)} but found {_tname(grid)}")
    op = GRID_SAMPLER_2D if k == 2 else GRID_SAMPLER_3D
    return op.call(input, grid, params=(int(mode), int(padding), bool(align_corners)))


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _sampler(input, grid, interpolation_mode, padding_mode, align_corners, 2)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _sampler(input, grid, interpolation_mode, padding_mode, align_corners, 3)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` at the normalised coordinates of ``grid`` (x along the last dim)."""
    if mode not in INTERPOLATION_MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in PADDING_MODES:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=2)
        align_corners = False
    return grid_sampler(input, grid, INTERPOLATION_MODES[mode], PADDING_MODES[padding_mode],
                        align_corners)
