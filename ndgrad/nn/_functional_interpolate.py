"""``interpolate``: torch's resizing modes as separable per-axis matrices applied by
``_ops/resampling.py`` under torch's node names: nearest and nearest-exact (1-3 d), linear /
bilinear / trilinear, bicubic (taps clamped at the border, A = -0.75), area (adaptive average
pooling) and the antialiased bilinear / bicubic / lanczos filters of torch's CPU kernels.

Coordinates follow torch's ``area_pixel_compute_source_index``: with align_corners the
corners map onto each other (scale (in - 1) / (out - 1)); otherwise pixel centres do, with
scale 1 / scale_factor when a factor is given (and not recomputed) or in / out.
"""

import math

import numpy as np

from .._ops.resampling import separable

__all__ = ["interpolate"]

# ``ndgrad.nn.functional``, attached by it when it imports this module (it sits above).
F = None

_NAMES = {"nearest": "UpsampleNearest{k}DBackward0",
          "nearest-exact": "UpsampleNearestExact{k}DBackward0",
          "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
          "trilinear": "UpsampleTrilinear3DBackward0", "bicubic": "UpsampleBicubic2DBackward0",
          "area": "AdaptiveAvgPool{k}DBackward0"}
_AA_NAMES = {"bilinear": "UpsampleBilinear2DAaBackward0",
             "bicubic": "UpsampleBicubic2DAaBackward0",
             "lanczos": "UpsampleLanczos2DAaBackward0"}
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}


def _scale(n_in, n_out, align_corners, scale):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _nearest(n_in, n_out, scale, exact, dtype):
    # torch computes the source index in float: floor(float(dst) * float(scale))
    s = np.float32(1.0 / scale) if scale is not None else np.float32(n_in) / np.float32(n_out)
    dst = np.arange(n_out, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * s if exact else dst * s).astype(np.int64)
    src = np.minimum(src, n_in - 1)
    if not exact:
        if n_out == n_in:  # torch's shortcuts, taken whatever the scale says
            src = np.arange(n_out)
        elif n_out == 2 * n_in:
            src = np.arange(n_out) >> 1
    m = np.zeros((n_out, n_in), dtype)
    m[np.arange(n_out), src] = 1
    return m


def _linear(n_in, n_out, scale, align_corners, dtype):
    m = np.zeros((n_out, n_in), dtype)
    s = _scale(n_in, n_out, align_corners, scale)
    dst = np.arange(n_out, dtype=np.float64)
    src = dst * s if align_corners else np.maximum((dst + 0.5) * s - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    np.add.at(m, (np.arange(n_out), i0), (1 - lam).astype(dtype))
    np.add.at(m, (np.arange(n_out), i1), lam.astype(dtype))
    return m


def _cubic_weights(t, a=-0.75):
    u, v, w = t + 1, 1 - t, 2 - t
    return [((u * a - 5 * a) * u + 8 * a) * u - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * v - (a + 3)) * v * v + 1, ((w * a - 5 * a) * w + 8 * a) * w - 4 * a]


def _cubic(n_in, n_out, scale, align_corners, dtype):
    m = np.zeros((n_out, n_in), dtype)
    s = _scale(n_in, n_out, align_corners, scale)
    dst = np.arange(n_out, dtype=np.float64)
    src = dst * s if align_corners else (dst + 0.5) * s - 0.5  # not clamped at 0 (cubic)
    base = np.floor(src).astype(np.int64)
    t = src - base
    for j, w in enumerate(_cubic_weights(t)):
        np.add.at(m, (np.arange(n_out), np.clip(base - 1 + j, 0, n_in - 1)), w.astype(dtype))
    return m


def _area(n_in, n_out, dtype):
    m = np.zeros((n_out, n_in), dtype)
    for i in range(n_out):
        a, b = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
        m[i, a:b] = 1.0 / (b - a)
    return m


def _aa_filter(mode, x):
    x = np.abs(x)
    if mode == "bilinear":
        return np.maximum(1.0 - x, 0.0)
    if mode == "bicubic":  # torch's antialiasing cubic uses a = -0.5
        a = -0.5
        return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                        np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):  # lanczos, a = 3
        out = np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0.0)
    return out


def _antialias(mode, n_in, n_out, scale, align_corners, dtype):
    support_size = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[mode]
    s = _scale(n_in, n_out, align_corners, scale)
    support = support_size * s if s >= 1.0 else support_size
    inv = 1.0 / s if s >= 1.0 else 1.0
    m = np.zeros((n_out, n_in), np.float64)
    for i in range(n_out):
        center = s * (i + 0.5)  # align_corners only changes the scale, as torch's
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        j = np.arange(lo, hi)
        w = _aa_filter(mode, (j - center + 0.5) * inv)
        total = w.sum()
        if total != 0:
            w = w / total
        m[i, lo:hi] = w
    return m.astype(dtype)


def _sizes(input, size, scale_factor, recompute, mode):
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            out = [int(s) for s in size]
        else:
            out = [int(size)] * dim
        scales = [None] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, "
                    "C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        out = [int(math.floor(input.shape[i + 2] * scales[i])) for i in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute or (mode == "area" and size is None):
        scales = [None] * dim
    return out, scales


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims of (N, C, *spatial) ``input`` (see the module docstring)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    out, scales = _sizes(input, size, scale_factor, recompute_scale_factor, mode)
    nd = input.dim()
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and nd == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "lanczos" and nd == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    known = ("nearest", "nearest-exact", "area", "linear", "bilinear", "trilinear", "bicubic",
             "lanczos")
    if nd not in (3, 4, 5) or mode not in known or (mode == "lanczos" and nd != 4) or \
            (mode == "bicubic" and nd != 4):
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{nd}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | "
            f"lanczos | area | nearest-exact (got {mode})")
    if mode in _NEEDS and _NEEDS[mode] != nd:
        raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs {_NEEDS[mode]}D "
                                  "input")
    if mode == "area" and (nd < 5 or hasattr(F, "adaptive_avg_pool3d")):
        pool = {3: F.adaptive_avg_pool1d, 4: F.adaptive_avg_pool2d}.get(nd) or \
            getattr(F, "adaptive_avg_pool3d")
        return pool(input, out if nd > 3 else out[0])
    dt = input._data.dtype
    k = nd - 2
    spatial = input.shape[2:]
    mats = []
    for i in range(k):
        n_in, n_out, sc = spatial[i], out[i], scales[i]
        if antialias:
            mats.append(_antialias(mode, n_in, n_out, sc, align_corners, dt))
        elif mode in ("nearest", "nearest-exact"):
            mats.append(_nearest(n_in, n_out, sc, mode == "nearest-exact", dt))
        elif mode == "bicubic":
            mats.append(_cubic(n_in, n_out, sc, align_corners, dt))
        elif mode == "area":
            mats.append(_area(n_in, n_out, dt))
        else:
            mats.append(_linear(n_in, n_out, sc, align_corners, dt))
    name = _AA_NAMES[mode] if antialias else _NAMES[mode].format(k=k)
    return separable(input, mats, name)
