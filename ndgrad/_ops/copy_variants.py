"""The ``*_copy`` variants of the view ops (``torch.view_copy``, ``transpose_copy``, ...): the
same values as the view, in fresh memory, recorded as ``<ViewNode>_copy`` (torch's functional
forms of its views).

Each variant runs its view op on a detached alias of the input only to learn which primitive
and parameters the view's argument handling chose (the last step of the view's ``_view``
chain), then calls a twin primitive: the view's kernel followed by a copy, with the view's own
VJP and JVP. So the argument checks and errors are the view's own, and the gradients are
exactly the view's. Invariant: a twin never produces a view (``view=False``), so writes to the
result never reach the input. ``detach_copy`` is torch's odd one out: its result requires grad
through a node whose backward raises.
"""

import numpy as np

from . import shape as S
from .registry import OpDef, primitive
from .complex_ops import view_as_complex, view_as_real

__all__ = [
    "alias_copy",
    "as_strided_copy",
    "detach_copy",
    "diagonal_copy",
    "expand_copy",
    "narrow_copy",
    "permute_copy",
    "select_copy",
    "slice_copy",
    "split_copy",
    "split_with_sizes_copy",
    "squeeze_copy",
    "t_copy",
    "transpose_copy",
    "unbind_copy",
    "unfold_copy",
    "unsqueeze_copy",
    "view_as_complex_copy",
    "view_as_real_copy",
    "view_copy",
]

_TWINS = {}


def _twin(op: OpDef, node_name=None, name=None):
    """The copying twin of view primitive `op` (made once per node name). A twin with a node
    name of its own (``narrow_copy`` over the ``slice`` view) also takes its own op name, so
    one op name never means two ops."""
    twin = _TWINS.get((op, node_name))
    if twin is None:
        fwd = op.fwd
        if op.n_out == 1:
            def copy_fwd(*args):
                return np.array(fwd(*args), copy=True)
        else:
            def copy_fwd(*args):
                return tuple(np.array(o, copy=True) for o in fwd(*args))
        twin = primitive(name or op.name + "_copy", copy_fwd, node_name or op.node.__name__ + "_copy",
                         save=op.save, n_out=op.n_out, diff_outs=op.diff_outs,
                         linear=op.linear)
        twin.rules_from = op  # the view's rules, declared in the view's module
        twin.vjp = op.vjp
        twin.jvp = op.jvp
        twin.batched_vjp = op.batched_vjp
        twin.batched_jvp = op.batched_jvp
        twin.records_shape = op.records_shape
        _TWINS[op, node_name] = twin
    return twin


def _copy_of(view_fn, node_name=None, name=None):
    """The ``*_copy`` function of `view_fn` (named `name`, by default the view's name +
    ``_copy``); `node_name` gives its twin a node name (and so an op name) of its own."""
    name = name or view_fn.__name__ + "_copy"

    def fn(input, *args, **kwargs):
        probe = view_fn(input.detach(), *args, **kwargs)
        first = probe[0] if isinstance(probe, (tuple, list)) else probe
        chain = first._view or ()
        if len(chain) != 1:
            # The view was the input itself or a chain of views: copy its value with the
            # gradient of the composite.
            out = view_fn(input, *args, **kwargs)
            if isinstance(out, (tuple, list)):
                return tuple(o.clone() for o in out)
            return out.clone()
        op, params, _ = chain[0]
        return _twin(op, node_name, name if node_name else None).call(input, params=params)
    fn.__name__ = name
    return fn


def _lazy(name):
    """A view function of the Tensor API looked up at call time (some live in modules that
    import after this one)."""
    def view_fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    view_fn.__name__ = name
    return view_fn


view_copy = _copy_of(_lazy("view"))
expand_copy = _copy_of(_lazy("expand"))
permute_copy = _copy_of(_lazy("permute"))
transpose_copy = _copy_of(_lazy("transpose"))
t_copy = _copy_of(_lazy("t"))
squeeze_copy = _copy_of(_lazy("squeeze"))
unsqueeze_copy = _copy_of(_lazy("unsqueeze"))
select_copy = _copy_of(_lazy("select"))
diagonal_copy = _copy_of(_lazy("diagonal"))
unbind_copy = _copy_of(_lazy("unbind"))
split_copy = _copy_of(_lazy("split"))
unfold_copy = _copy_of(_lazy("unfold"))
alias_copy = _copy_of(S.alias)
as_strided_copy = _copy_of(S.as_strided)
narrow_copy = _copy_of(_lazy("narrow"), "NarrowCopyBackward0")


_split_with_sizes_copy = _copy_of(_lazy("split"), "SplitWithSizesBackward0_copy",
                                  "split_with_sizes_copy")


def split_with_sizes_copy(input, split_sizes, dim=0):
    return _split_with_sizes_copy(input, list(split_sizes), dim)


def slice_copy(input, dim=0, start=None, end=None, step=1):
    def slice_view(x, dim, start, end, step):
        idx = [slice(None)] * x.dim()
        idx[dim] = slice(start, end, step)
        return x[tuple(idx)]
    slice_view.__name__ = "slice"
    return _copy_of(slice_view)(input, dim, start, end, step)


def view_as_real_copy(input):
    return _copy_of(view_as_real)(input)


def view_as_complex_copy(input):
    return _copy_of(view_as_complex)(input)


# torch's detach_copy output requires grad through a node whose backward raises.
DETACH_COPY = primitive("detach_copy", lambda x, p: x.copy(), "NotImplemented")


@DETACH_COPY.def_vjp
def _(ctx, g):
    raise RuntimeError("derivative for aten::detach_copy is not implemented")


def detach_copy(input):
    return DETACH_COPY.call(input)
