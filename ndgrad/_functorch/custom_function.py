"""Custom ``autograd.Function`` under torch.func transforms.

Inside any transform a Function must use the ``setup_context`` style (torch's rule). Under
``vmap`` (an argument is a BatchedTensor) it runs by its own ``vmap`` staticmethod,
``vmap(info, in_dims, *args) -> (outputs, out_dims)`` with ``info.batch_size`` and
``info.randomness``, or, with ``generate_vmap_rule = True``, once per sample (its forward and
backward then batch as the loop does). Either way the Function is applied to plain values, so
its backward and jvp are recorded and used as usual (``grad``, ``jacrev``, ``jacfwd``).
"""

from collections import namedtuple

from .._ops.joins import stack
from .._tensor import Tensor
from ..autograd import function as _function
from ..autograd.function import Function
from . import batching

__all__ = ["VmapInfo", "apply_transformed"]

VmapInfo = namedtuple("VmapInfo", ["batch_size", "randomness"])


def _overridden(cls, name):
    return getattr(cls, name) is not getattr(Function, name)


def apply_transformed(cls, args, kwargs):
    """``cls.apply`` while a transform is active; NotImplemented when no argument is batched
    (the ordinary apply then runs)."""
    if not _overridden(cls, "setup_context"):
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
            "jacrev, ...), it must override the setup_context staticmethod. For more details, "
            "please see https://pytorch.org/docs/main/notes/extending.func.html")
    level = batching._level_of(args)
    if not level:
        return NotImplemented
    batched = tuple(type(a) is batching.BatchedTensor and a._level == level for a in args)
    values = tuple(a._value if b else a for a, b in zip(args, batched))
    size = batching._size_of(level)
    if _overridden(cls, "vmap"):
        randomness = next(r for lid, _, r in batching._levels if lid == level)
        info = VmapInfo(size, randomness)
        in_dims = tuple(0 if b else None for b in batched)
        outputs, out_dims = cls.vmap(info, in_dims, *values, **kwargs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        dims = (out_dims,) * len(outs) if not isinstance(out_dims, tuple) else out_dims
        res = []
        for o, d in zip(outs, dims):
            if not isinstance(o, Tensor):
                res.append(o)
                continue
            v = batching.expand_batch(o, size) if d is None else o.movedim(d, 0)
            res.append(batching.wrap(v, level))
        return res[0] if single else tuple(res)
    if cls.generate_vmap_rule:
        rows = []
        for b in range(size):
            sample = tuple(v.select(0, b) if is_b else v for v, is_b in zip(values, batched))
            rows.append(cls.apply(*sample, **kwargs))
        if isinstance(rows[0], tuple):
            return tuple(batching.wrap(stack([r[k] for r in rows], 0), level)
                         for k in range(len(rows[0])))
        return batching.wrap(stack(rows, 0), level)
    raise RuntimeError(
        f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
        "override and implement the vmap staticmethod or set generate_vmap_rule=True. For more "
        "details, please see https://pytorch.org/docs/main/notes/extending.func.html")


_function.transformed_apply = apply_transformed
