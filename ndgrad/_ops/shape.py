"""Shape ops. Views (sharing memory, version counter and ``_base`` with their input):
view/reshape, transpose/permute/t/movedim, expand/broadcast_to/broadcast_tensors, squeeze/
unsqueeze, select, slice/narrow, diagonal, flatten/unflatten, alias. Copies: clone, flip/
fliplr/flipud, roll, rot90, repeat/tile/repeat_interleave, tril/triu, diag/diag_embed/trace,
kron, meshgrid, and the functional scatters into a select/slice/diagonal. Joins and splits
(cat/stack, split/chunk/unbind, ...) live in ``joins.py``.

Ops whose backward needs the input's shape register with ``record_input_shape`` so the node
knows it however the op is called (public function, another op's backward, view replay).
"""

import builtins

import numpy as np

from .. import _dtype, _layouts
from .broadcast import align_batched, sum_to, sum_to_batched  # expand's VJP and batched rules
from .arguments import _numpy_aliases, wrap_dim
from .registry import record_input_shape
from .registry import (as_tensor_arg, primitive, raw_view, size_expr, sizes_decide,
                       unrecorded_float)
from .._creation import zeros
from .._dtype import to_dtype
from .registry import wrap
from .._size import Size
from .._tensor import Tensor
from .inplace import apply_inplace, apply_inplace_view
from .vmap_helpers import align, shift
from .registry import _broadcast_error

__all__ = [
    "alias",
    "as_strided",
    "broadcast_shapes",
    "broadcast_tensors",
    "broadcast_to",
    "clone",
    "contiguous",
    "diag",
    "diag_embed",
    "diagonal",
    "diagonal_scatter",
    "expand",
    "expand_as",
    "flatten",
    "flip",
    "fliplr",
    "flipud",
    "kron",
    "meshgrid",
    "moveaxis",
    "movedim",
    "narrow",
    "permute",
    "repeat",
    "repeat_interleave",
    "reshape",
    "reshape_as",
    "roll",
    "rot90",
    "select",
    "select_scatter",
    "slice_scatter",
    "squeeze",
    "swapaxes",
    "swapdims",
    "t",
    "tile",
    "trace",
    "transpose",
    "tril",
    "triu",
    "unflatten",
    "unsqueeze",
    "view",
    "view_as",
]


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)) or \
            (len(shape) == 1 and hasattr(shape[0], "__iter__") and not hasattr(shape[0], "_data")):
        shape = tuple(shape[0])
    for i, s in enumerate(shape):
        # torch's TypeError: a size is never truncated from a float or parsed from a string
        if type(s) is not int and (isinstance(s, (float, str, bytes))
                                   or not hasattr(s, "__index__") and not hasattr(s, "_data")):
            raise TypeError("argument 'shape' must be tuple of ints, but found element of "
                            f"type {type(s).__name__} at pos {i}")
    return tuple(int(s) for s in shape)


def _infer_shape(shape, numel):
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value and "
                               "is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


# --------------------------------------------------------------------------- view / reshape
def _view_fwd(x, shape):
    v = x.view()
    try:
        v.shape = shape
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.") from None
    return v


VIEW = primitive("view", _view_fwd, view=True, linear=True)
UNSAFE_VIEW = primitive("_unsafe_view", lambda x, s: x.reshape(s), "UnsafeViewBackward0",
                        linear=True)
# reshape's view of a non-contiguous input whose strides allow one (torch's _reshape_alias)
RESHAPE_ALIAS = primitive("_reshape_alias", _view_fwd, "ReshapeAliasBackward0", view=True,
                          linear=True)


def _view_vjp(ctx, g):
    shape = ctx._shape
    gd = unrecorded_float(g)
    if gd is not None:
        v = gd.view()
        try:
            v.shape = shape  # reshape's view, on the raw array (nothing is recorded)
        except AttributeError:
            pass  # not viewable: reshape copies, below
        else:
            op = VIEW if gd.flags.c_contiguous else RESHAPE_ALIAS
            return (raw_view(g, v, ((op, shape, 0),)),)
    return (g.reshape(shape),)


VIEW.def_vjp(_view_vjp)
UNSAFE_VIEW.def_vjp(_view_vjp)
RESHAPE_ALIAS.def_vjp(_view_vjp)
record_input_shape(VIEW, UNSAFE_VIEW, RESHAPE_ALIAS)


# Batched rules (gradients and tangents with a leading batch dimension B; see OpDef):
# reshapes keep the batch dimension in front.
def _reshape_back_batched(ctx, g):
    return (g.reshape((g._data.shape[0],) + tuple(ctx._shape)),)


def _reshape_batched_jvp(ctx, t):
    return t.reshape((t._data.shape[0],) + ctx.outputs[0]._data.shape)


for _op in (VIEW, UNSAFE_VIEW, RESHAPE_ALIAS):
    _op.def_batched_vjp(_reshape_back_batched)
    _op.def_batched_jvp(_reshape_batched_jvp)


def _reshape_vmap(batched, shape, x):
    return reshape(x, (x.shape[0],) + tuple(shape))


for _op in (VIEW, UNSAFE_VIEW, RESHAPE_ALIAS):
    _op.def_vmap(_reshape_vmap)


def view(input, *shape):
    """A view with a new shape (RuntimeError when the strides do not allow one)."""
    x = input
    if not shape:
        raise TypeError("view() received an invalid combination of arguments - got (), but "
                        "expected one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n")
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return view_dtype(x, shape[0])
    if any(isinstance(s, str) for s in shape):
        got = ", ".join(type(s).__name__ for s in shape)
        raise TypeError(f"view() received an invalid combination of arguments - got ({got}), "
                        "but expected one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n")
    s = _infer_shape(_shape_arg(shape), x._data.size)
    return VIEW.call(x, params=s)


def _scalar_name(dt):
    return dt._legacy[:-len("Tensor")]       # torch's ScalarType name: Char, Int, Float...


def _check_view_dtype(x, dtype):
    """torch's conditions for reinterpreting the bytes of `x` as `dtype`."""
    old, new = x.dtype.itemsize, dtype.itemsize
    if old == new:
        return
    what = f"to view {_scalar_name(x.dtype)} as {_scalar_name(dtype)} (different element sizes)"
    if x.dim() == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    strides = x.stride()
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
    if new > old:
        ratio = new // old
        checks = [("self.size(-1)", x.shape[-1]), ("self.storage_offset()", x.storage_offset())]
        checks += [(f"self.stride({i})", st) for i, st in enumerate(strides[:-1])]
        for name, v in checks:
            if v % ratio:
                raise RuntimeError(f"{name} must be divisible by {ratio} {what}, but got {v}")


def view_dtype(x, dtype):
    _check_view_dtype(x, dtype)
    return wrap(x._data.view(dtype.np))


def _viewable(x, shape):
    v = x.view()
    try:
        v.shape = shape
        return True
    except AttributeError:
        return False


def reshape(input, *shape):
    """A view when the strides allow it, else a copy (``UnsafeViewBackward0`` on a clone).
    As in torch, the view of a contiguous input is ``view`` (ViewBackward0) and that of a
    non-contiguous one ``_reshape_alias`` (ReshapeAliasBackward0)."""
    x = as_tensor_arg(input)
    if not shape:
        raise TypeError('reshape() missing 1 required positional arguments: "shape"')
    s = _infer_shape(_shape_arg(shape), x._data.size)
    if x._data.flags.c_contiguous:
        return VIEW.call(x, params=s)
    if _viewable(x._data, s):
        return RESHAPE_ALIAS.call(x, params=s)
    c = clone(x, memory_format="contiguous")
    return UNSAFE_VIEW.call(c, params=s)


def view_as(input, other):
    return view(input, other._data.shape)


def reshape_as(input, other):
    return reshape(input, other._data.shape)


def _no_dims(x, dim):
    """torch's error for a dim argument on a 0-d tensor where the op needs a real dim."""
    return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def flatten(input, start_dim=0, end_dim=-1):
    x = as_tensor_arg(input)
    nd = x._data.ndim
    if nd == 0:
        wrap_dim(start_dim, 0)
        wrap_dim(end_dim, 0)
        return reshape(x, (1,))
    s = wrap_dim(start_dim, nd)
    e = wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return x
    shape = x._data.shape
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(x, shape[:s] + (n,) + shape[e + 1:])


def unflatten(input, dim, sizes):
    x = as_tensor_arg(input)
    d = wrap_dim(dim, x._data.ndim)
    shape = x._data.shape
    sizes = tuple(sizes)
    if -1 in sizes:
        known = 1
        for v in sizes:
            if v != -1:
                known *= v
        sizes = tuple(shape[d] // known if v == -1 else v for v in sizes)
    n = 1
    for v in sizes:
        n *= v
    if n != shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {d} ({shape[d]}) in the input tensor")
    return view(x, shape[:d] + sizes + shape[d + 1:])


# --------------------------------------------------------------------------- transposes
def _transpose_fwd(x, p):
    return np.swapaxes(x, p[0], p[1]) if x.ndim else x.view()


TRANSPOSE = primitive("transpose", _transpose_fwd, view=True, linear=True)
TRANSPOSE.def_vjp(lambda ctx, g: (g.transpose(*ctx._params),))
T_OP = primitive("t", lambda x, p: x.T, "TBackward0", view=True, linear=True)
T_OP.def_vjp(lambda ctx, g: (g.t(),))
# (a 0-d sample: dims 0 and -1 both name it, the transpose is the identity view)
TRANSPOSE.def_vmap(lambda batched, p, x: TRANSPOSE.call(
    x, params=shift(p) if x.dim() > 1 else (0, 0)))
T_OP.def_vmap(lambda batched, p, x: TRANSPOSE.call(x, params=(1, 2)) if x.dim() == 3
              else ALIAS.call(x))
TRANSPOSE.def_batched_vjp(lambda ctx, g: (g.transpose(1 + ctx._params[0], 1 + ctx._params[1]),))
TRANSPOSE.def_batched_jvp(lambda ctx, t: t.transpose(1 + ctx.params[0], 1 + ctx.params[1]))
T_OP.def_batched_vjp(lambda ctx, g: (g.transpose(1, 2) if g._data.ndim == 3 else g,))
T_OP.def_batched_jvp(lambda ctx, t: t.transpose(1, 2) if t._data.ndim == 3 else t)


# The in-place transposes (t_, transpose_, swapdims_, swapaxes_) record these nodes.
TRANSPOSE_ = primitive("transpose_", _transpose_fwd, "TransposeBackward1", view=True,
                       linear=True)
TRANSPOSE_.def_vjp(lambda ctx, g: (g.transpose(*ctx._params),))
T_OP_ = primitive("t_", lambda x, p: x.T, "TBackward1", view=True, linear=True)
T_OP_.def_vjp(lambda ctx, g: (g.t(),))


def transpose(input, dim0, dim1):
    x = as_tensor_arg(input)
    nd = x._data.ndim
    return TRANSPOSE.call(x, params=(wrap_dim(dim0, nd), wrap_dim(dim1, nd)))


def transpose_(self, dim0, dim1):
    """`self` transposed in place (its strides change, its memory does not)."""
    nd = self._data.ndim
    return apply_inplace_view(TRANSPOSE_, self, (wrap_dim(dim0, nd), wrap_dim(dim1, nd)))


def t_(self):
    if self._data.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self._data.ndim}D")
    return apply_inplace_view(T_OP_, self)


swapdims = transpose


def swapaxes(input, axis0, axis1):
    """NumPy's spelling of :func:`transpose` (TransposeBackward0)."""
    return transpose(input, axis0, axis1)


def t(input):
    x = as_tensor_arg(input)
    if x._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{x._data.ndim}D")
    return T_OP.call(x)


# --------------------------------------------------------------------------- as_strided
def _owner_elements(x):
    """The elements of the array owning `x`'s memory, as a flat array of x's dtype."""
    owner = x
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    flat = owner.reshape(-1).view(np.uint8) if owner.flags.c_contiguous else \
        np.ascontiguousarray(owner).reshape(-1).view(np.uint8)
    return flat[:flat.size - flat.size % x.itemsize].view(x.dtype)


def _as_strided_fwd(x, p):
    size, stride, offset = p[:3]
    flat = _owner_elements(x)
    if size and not all(size):
        return np.empty(size, x.dtype)
    need = offset + builtins.sum((n - 1) * st for n, st in zip(size, stride)) + 1
    if need > flat.size:
        item = x.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{need * item} are out of bounds for storage of size "
                           f"{flat.size * item}")
    return np.lib.stride_tricks.as_strided(flat[offset:], size,
                                           tuple(st * x.itemsize for st in stride),
                                           writeable=bool(x.flags.writeable))


def _positions(size, stride, offset):
    """Storage index of every element of the geometry (size, stride, offset), in order."""
    pos = np.full((), offset, np.int64)
    for n, st in zip(size, stride):
        pos = pos[..., None] + np.arange(n, dtype=np.int64) * st
    return pos.reshape(-1)


def _as_strided_vjp(ctx, g):
    """torch's as_strided_backward: the gradient is added into a zero storage at the output's
    positions and read back at the input's, each input position divided by the number of
    input elements sharing it."""
    size, stride, offset, in_shape, in_stride, in_offset = ctx._params
    out_pos, in_pos = _positions(size, stride, offset), _positions(in_shape, in_stride, in_offset)
    n = int(builtins.max(out_pos.max(initial=-1), in_pos.max(initial=-1))) + 1
    storage = zeros(n, dtype=g.dtype).index_add(0, Tensor(out_pos), g.reshape(-1))
    gx = storage.take(Tensor(in_pos))
    counts = np.bincount(in_pos, minlength=n)[in_pos]
    if counts.size and counts.max() > 1:
        gx = gx / Tensor(counts.astype(g._data.dtype))
    return (gx.reshape(in_shape),)


AS_STRIDED = primitive("as_strided", _as_strided_fwd, view=True, linear=True)
AS_STRIDED.def_vjp(_as_strided_vjp)
AS_STRIDED_ = primitive("as_strided_", _as_strided_fwd, "AsStridedBackward1", view=True,
                        linear=True)
AS_STRIDED_.def_vjp(_as_strided_vjp)


def _as_strided_params(x, size, stride, storage_offset):
    size, stride = tuple(int(v) for v in size), tuple(int(v) for v in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if builtins.any(v < 0 for v in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    offset = x.storage_offset() if storage_offset is None else int(storage_offset)
    return (size, stride, offset, tuple(x._data.shape), x.stride(), x.storage_offset())


def as_strided(input, size, stride, storage_offset=None):
    """A view of `input`'s memory with the given sizes, strides and offset, in elements of
    its storage (the offset defaults to `input`'s own)."""
    x = as_tensor_arg(input)
    return AS_STRIDED.call(x, params=_as_strided_params(x, size, stride, storage_offset))


def as_strided_(self, size, stride, storage_offset=None):
    return apply_inplace_view(AS_STRIDED_, self,
                              _as_strided_params(self, size, stride, storage_offset))


PERMUTE = primitive("permute", lambda x, p: np.transpose(x, p), view=True, linear=True)


@PERMUTE.def_vjp
def _(ctx, g):
    inv = [0] * len(ctx._params)
    for i, p in enumerate(ctx._params):
        inv[p] = i
    return (g.permute(inv),)


@PERMUTE.def_batched_vjp
def _(ctx, g):
    inv = [0] * len(ctx._params)
    for i, p in enumerate(ctx._params):
        inv[p] = i
    return (g.permute([0] + [1 + d for d in inv]),)


PERMUTE.def_batched_jvp(lambda ctx, t: t.permute([0] + [1 + d for d in ctx.params]))
PERMUTE.def_vmap(lambda batched, p, x: PERMUTE.call(x, params=(0,) + shift(tuple(p))))


def permute(input, *dims):
    x = as_tensor_arg(input)
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _shape_arg(dims)
    nd = x._data.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return PERMUTE.call(x, params=dims)


def movedim(input, source, destination):
    x = as_tensor_arg(input)
    nd = x._data.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    given = {"source": src, "destination": dst}
    src = [wrap_dim(s, nd) for s in src]
    dst = [wrap_dim(d, nd) for d in dst]
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given[name]})")
    if nd == 0:
        return alias(x)  # torch: an alias of a 0-d tensor
    order = [d for d in range(nd) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return PERMUTE.call(x, params=tuple(order))  # a permute even when it is the identity


moveaxis = movedim


# --------------------------------------------------------------------------- expand / squeeze
def _expand_fwd(x, shape):
    if type(x) is np.ndarray and x.flags.c_contiguous and x.ndim <= len(shape):
        # np.broadcast_to's result (read-only, zero strides on the broadcast dims, a view of
        # x) built directly: its argument checks cost more than the view itself.
        lead = len(shape) - x.ndim
        strides = [0] * lead
        xs = x.shape
        xst = x.strides
        for i in range(x.ndim):
            n = xs[i]
            s = shape[lead + i]
            if n == s:
                strides.append(xst[i])
            elif n == 1 and s >= 0:
                strides.append(0)
            else:
                return np.broadcast_to(x, shape)  # its error
        out = np.ndarray(shape, x.dtype, x, 0, strides)
        out.setflags(write=False)  # cheaper than .flags.writeable (no flags object)
        return out
    return np.broadcast_to(x, shape)


EXPAND = primitive("expand", _expand_fwd, view=True, linear=True)
record_input_shape(EXPAND)


@EXPAND.def_vmap
def _(batched, shape, x):
    (x,) = align(batched, (x,), len(shape))
    return EXPAND.call(x, params=(x.shape[0],) + tuple(shape))



@EXPAND.def_vjp
def _(ctx, g):
    return (sum_to(g, ctx._shape),)


@EXPAND.def_batched_vjp
def _(ctx, g):
    return (sum_to_batched(g, tuple(ctx._shape), g._data.shape[0]),)


@EXPAND.def_batched_jvp
def _(ctx, t):
    out = ctx.outputs[0]._data.shape
    return align_batched(t, ctx.inputs[0], len(out)).expand((t._data.shape[0],) + out)


def expand(input, *sizes):
    x = as_tensor_arg(input)
    if not sizes:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    sizes = _shape_arg(sizes)
    shape = x._data.shape
    if len(sizes) < len(shape):
        kind = _dtype.type_string(_dtype.from_np(x._data.dtype))
        raise RuntimeError(f"expand({kind}{{{list(shape)}}}, size={list(sizes)}): the "
                           f"number of sizes provided ({len(sizes)}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    # torch checks from the last dim backwards: the error names the last mismatching dim
    for i in range(len(sizes) - 1, lead - 1, -1):
        s, cur = sizes[i], shape[i - lead]
        if s != -1 and cur != 1 and s != cur:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({cur}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(shape)}")
    target = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   "leading, non-existing dimension 0")
            target.append(s)
            continue
        cur = shape[i - lead]
        if s == -1:
            s = cur
        elif cur != 1 and s != cur:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({cur}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(shape)}")
        target.append(s)
    target = tuple(target)
    return EXPAND.call(x, params=target)


def expand_as(input, other):
    return expand(input, other._data.shape)


def broadcast_to(input, size):
    return expand(input, tuple(size))


def _squeeze_fwd(x, p):
    return np.squeeze(x, axis=p[0])


# A squeeze's params: (the dims it removes, the dim argument as given); the second is what
# torch's node saves as ``_saved_dim`` (a size-1 check does not filter it, nor wraps it).


SQUEEZE_ALL = primitive("squeeze", _squeeze_fwd, "SqueezeBackward0", view=True, linear=True)
SQUEEZE_DIM = primitive("squeeze_dim", _squeeze_fwd, "SqueezeBackward1", view=True, linear=True)
SQUEEZE_DIMS = primitive("squeeze_dims", _squeeze_fwd, "SqueezeBackward2", view=True,
                         linear=True)
for _op in (SQUEEZE_ALL, SQUEEZE_DIM, SQUEEZE_DIMS):
    _op.def_vjp(_view_vjp)
record_input_shape(SQUEEZE_ALL, SQUEEZE_DIM, SQUEEZE_DIMS)
for _op in (SQUEEZE_ALL, SQUEEZE_DIM, SQUEEZE_DIMS):
    _op.def_batched_vjp(_reshape_back_batched)
    _op.def_batched_jvp(_reshape_batched_jvp)
for _op in (SQUEEZE_ALL, SQUEEZE_DIM, SQUEEZE_DIMS):
    _op.def_vmap(lambda batched, p, x, _op=_op: _op.call(x, params=(shift(p[0]), p[1])))


# The in-place squeeze_ / unsqueeze_ record torch's SqueezeBackward3/4/5, UnsqueezeBackward1.
SQUEEZE_ALL_ = primitive("squeeze_", _squeeze_fwd, "SqueezeBackward3", view=True, linear=True)
SQUEEZE_DIM_ = primitive("squeeze_dim_", _squeeze_fwd, "SqueezeBackward4", view=True,
                         linear=True)
SQUEEZE_DIMS_ = primitive("squeeze_dims_", _squeeze_fwd, "SqueezeBackward5", view=True,
                          linear=True)
for _op in (SQUEEZE_ALL_, SQUEEZE_DIM_, SQUEEZE_DIMS_):
    _op.def_vjp(_view_vjp)
record_input_shape(SQUEEZE_ALL_, SQUEEZE_DIM_, SQUEEZE_DIMS_)


def _squeeze_args(x, dim, ops):
    shape = x._data.shape
    nd = x._data.ndim
    if dim is None:
        return ops[0], (tuple(i for i, s in enumerate(shape) if s == 1), None)
    if isinstance(dim, (tuple, list)):
        dims = tuple(d for d in (wrap_dim(d, nd) for d in dim) if nd and shape[d] == 1)
        return ops[2], (dims, tuple(dim))
    d = wrap_dim(dim, nd)
    return ops[1], (((d,) if nd and shape[d] == 1 else ()), dim)


def squeeze(input, dim=None):
    x = as_tensor_arg(input)
    op, dims = _squeeze_args(x, dim, (SQUEEZE_ALL, SQUEEZE_DIM, SQUEEZE_DIMS))
    return op.call(x, params=dims)


def squeeze_(self, dim=None):
    op, dims = _squeeze_args(self, dim, (SQUEEZE_ALL_, SQUEEZE_DIM_, SQUEEZE_DIMS_))
    return apply_inplace_view(op, self, dims)


UNSQUEEZE = primitive("unsqueeze", lambda x, d: np.expand_dims(x, d), view=True, linear=True)
UNSQUEEZE.def_vjp(lambda ctx, g: (g.squeeze(ctx._params),))
UNSQUEEZE.def_batched_vjp(lambda ctx, g: (g.squeeze(1 + ctx._params),))
UNSQUEEZE.def_vmap(lambda batched, d, x: UNSQUEEZE.call(x, params=d + 1))
UNSQUEEZE.def_batched_jvp(_reshape_batched_jvp)

UNSQUEEZE_ = primitive("unsqueeze_", lambda x, d: np.expand_dims(x, d), "UnsqueezeBackward1",
                       view=True, linear=True)
UNSQUEEZE_.def_vjp(lambda ctx, g: (g.squeeze(ctx._params),))
# Under vmap an in-place view op makes the batched value the out-of-place op's batched view of
# itself (``batching.dispatch_inplace``): same params, so the same batching rule.
for _op_, _op in ((TRANSPOSE_, TRANSPOSE), (T_OP_, T_OP), (UNSQUEEZE_, UNSQUEEZE),
                  (SQUEEZE_ALL_, SQUEEZE_ALL), (SQUEEZE_DIM_, SQUEEZE_DIM),
                  (SQUEEZE_DIMS_, SQUEEZE_DIMS)):
    _op_.def_vmap(_op.vmap)


def unsqueeze(input, dim):
    x = as_tensor_arg(input)
    return UNSQUEEZE.call(x, params=wrap_dim(dim, x._data.ndim + 1))


def unsqueeze_(self, dim):
    return apply_inplace_view(UNSQUEEZE_, self, wrap_dim(dim, self._data.ndim + 1))


# --------------------------------------------------------------------------- select / slice
def _select_fwd(x, p):
    dim, index = p
    # The trailing Ellipsis keeps a 0-d result a view (NumPy returns a copied scalar without it).
    return x[(slice(None),) * dim + (index, Ellipsis)]


SELECT = primitive("select", _select_fwd, view=True, linear=True)
record_input_shape(SELECT)
SELECT.def_vmap(lambda batched, p, x: SELECT.call(x, params=(p[0] + 1, p[1])))


@SELECT.def_vjp
def _(ctx, g):
    dim, index = ctx._params
    shape = ctx._shape
    z = zeros(shape, dtype=g.dtype)
    return (_select_scatter(z, g, dim, index),)


@SELECT.def_batched_vjp
def _(ctx, g):
    dim, index = ctx._params
    z = zeros((g._data.shape[0],) + tuple(ctx._shape), dtype=g.dtype)
    return (_select_scatter(z, g, 1 + dim, index),)


def _slice_fwd(x, p):
    dim, start, stop, step = p
    return x[(slice(None),) * dim + (slice(start, stop, step),)]


SLICE = primitive("slice", _slice_fwd, view=True, linear=True)
record_input_shape(SLICE)
SLICE.def_vmap(lambda batched, p, x: SLICE.call(x, params=(p[0] + 1,) + tuple(p[1:])))


@SLICE.def_vjp
def _(ctx, g):
    dim, start, stop, step = ctx._params
    shape = ctx._shape
    z = zeros(shape, dtype=g.dtype)
    return (_slice_scatter(z, g, dim, start, stop, step),)


@SLICE.def_batched_vjp
def _(ctx, g):
    dim, start, stop, step = ctx._params
    z = zeros((g._data.shape[0],) + tuple(ctx._shape), dtype=g.dtype)
    return (_slice_scatter(z, g, 1 + dim, start, stop, step),)


# Functional "scatter into zeros" used by backward of select/slice; differentiable.
def _select_scatter_fwd(base, src, p):
    dim, index = p
    out = base.copy()
    out[(slice(None),) * dim + (index,)] = src
    return out


SELECT_SCATTER = primitive("select_scatter", _select_scatter_fwd, linear=True)


@SELECT_SCATTER.def_vjp
def _(ctx, g):
    dim, index = ctx._params
    n = ctx._next
    gb = _select_scatter(g, g.select(dim, index) * 0, dim, index) if n[0] else None
    return gb, (g.select(dim, index) if n[1] else None)


def _select_scatter(base, src, dim, index):
    return SELECT_SCATTER.call(base, src, params=(dim, index))


def _slice_scatter_fwd(base, src, p):
    dim, start, stop, step = p
    out = base.copy()
    out[(slice(None),) * dim + (slice(start, stop, step),)] = src
    return out


SLICE_SCATTER = primitive("slice_scatter", _slice_scatter_fwd, linear=True)


@SLICE_SCATTER.def_vjp
def _(ctx, g):
    dim, start, stop, step = ctx._params
    n = ctx._next
    part = SLICE.call(g, params=(dim, start, stop, step))
    gb = _slice_scatter(g, part * 0, dim, start, stop, step) if n[0] else None
    return gb, (part if n[1] else None)


def _slice_scatter(base, src, dim, start, stop, step):
    return SLICE_SCATTER.call(base, src, params=(dim, start, stop, step))


def select(input, dim, index):
    x = as_tensor_arg(input)
    nd = x._data.ndim
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, nd)
    size = x._data.shape[d]
    index = int(index)
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x._data.shape)} at dimension {d}")
    if index == -1:  # the last: size - 1 for every size (a dynamic trace keeps it so)
        return SELECT.call(x, params=(d, size_expr(x, d) - 1))
    return SELECT.call(x, params=(d, index % size))


def slice_dim(x, dim, start, stop, step):
    """``x[..., start:stop:step, ...]`` on `dim` as a view (SliceBackward0)."""
    size = x._data.shape[dim]
    open_end = stop is None
    start, stop, step = slice(start, stop, step).indices(size)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    stop = builtins.max(stop, start)
    if open_end:  # stop is the size (a dynamic trace keeps it so)
        stop = size_expr(x, dim)
    return SLICE.call(x, params=(dim, start, stop, step))


def narrow(input, dim, start, length):
    x = as_tensor_arg(input)
    if x._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, x._data.ndim)
    size = x._data.shape[d]
    if hasattr(start, "_data") and (start._data.ndim or start._data.dtype.kind not in "iu"):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    start = int(start)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    sizes_decide()  # a range check the kernel does not repeat
    if start < 0 or start + length > size or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return slice_dim(x, d, start, start + length, 1)


ALIAS = primitive("alias", lambda x, p: x.view(), view=True, linear=True)
ALIAS.def_vjp(lambda ctx, g: (g,))
ALIAS.batch_transparent = True  # its VJP passes any leading batch dimension through
ALIAS.def_batched_jvp(_reshape_batched_jvp)


def alias(input):
    return ALIAS.call(input)


def _diagonal_fwd(x, p):
    offset, d1, d2 = p
    v = np.diagonal(x, offset, d1, d2)
    if x.flags.writeable:
        # NumPy hands out diagonals read-only; torch's diagonal views can be written in place
        v.flags.writeable = True
    return v


DIAGONAL = primitive("diagonal", _diagonal_fwd, view=True, linear=True)
record_input_shape(DIAGONAL)


@DIAGONAL.def_vjp
def _(ctx, g):
    offset, d1, d2 = ctx._params
    shape = ctx._shape
    z = zeros(shape, dtype=g.dtype)
    return (_DIAG_SCATTER.call(z, g, params=(offset, d1, d2)),)


def _diag_scatter_fwd(base, src, p):
    offset, d1, d2 = p
    out = base.copy()
    view = np.diagonal(out, offset, d1, d2)
    view.setflags(write=True)
    view[...] = src
    return out


_DIAG_SCATTER = primitive("diagonal_scatter", _diag_scatter_fwd, linear=True)


@_DIAG_SCATTER.def_vjp
def _(ctx, g):
    offset, d1, d2 = ctx._params
    n = ctx._next
    part = DIAGONAL.call(g, params=(offset, d1, d2))
    gb = _DIAG_SCATTER.call(g, part * 0, params=(offset, d1, d2)) if n[0] else None
    return gb, (part if n[1] else None)


def diagonal(input, offset=0, dim1=0, dim2=1):
    x = as_tensor_arg(input)
    nd = x._data.ndim
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return DIAGONAL.call(x, params=(offset, d1, d2))


# --------------------------------------------------------------------------- copies
# The memory formats a copy can be laid out in, as the order of the dims from outer to inner.
_FORMAT_ORDER = {"channels_last": ((0, 2, 3, 1), 4), "channels_last_3d": ((0, 2, 3, 4, 1), 5)}


def _clone_fwd(x, fmt):
    if fmt in _FORMAT_ORDER:
        order = _FORMAT_ORDER[fmt][0]
        return np.ascontiguousarray(x.transpose(order)).transpose(np.argsort(order))
    return np.array(x, order="C" if fmt == "contiguous" else "K", copy=True)


CLONE = primitive("clone", _clone_fwd, linear=True)
CLONE.def_vjp(lambda ctx, g: (g,))
CLONE.batch_transparent = True
CLONE.def_batched_jvp(lambda ctx, t: t.clone())


def _format_param(fn, memory_format, nd):
    """The clone parameter for a user's ``memory_format`` (None: keep the strides)."""
    if memory_format is None or memory_format == "contiguous":     # (ndgrad's own callers)
        return memory_format
    if not isinstance(memory_format, _layouts.memory_format):
        raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(memory_format).__name__}")
    name = memory_format._name
    if name in _FORMAT_ORDER and nd != _FORMAT_ORDER[name][1]:
        raise RuntimeError(f"required rank {_FORMAT_ORDER[name][1]} tensor to use {name} "
                           "format")
    return {"contiguous_format": "contiguous", "preserve_format": None}.get(name, name)


def clone(input, *, memory_format=None):
    """A copy with its own memory (same strides by default), recorded as CloneBackward0."""
    return CLONE.call(input, params=_format_param("clone", memory_format, input._data.ndim))


def contiguous(input, memory_format=None):
    x = input
    fmt = _format_param("contiguous", memory_format, x._data.ndim)
    if fmt in _FORMAT_ORDER:
        return x if x.is_contiguous(memory_format=memory_format) else clone(
            x, memory_format=memory_format)
    if x._data.flags.c_contiguous:
        return x
    return clone(x, memory_format="contiguous")


FLIP = primitive("flip", lambda x, dims: np.flip(x, dims).copy(), linear=True)
FLIP.def_vjp(lambda ctx, g: (g.flip(ctx._params),))


def flip(input, dims):
    x = as_tensor_arg(input)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    dims = tuple(wrap_dim(d, x._data.ndim) for d in dims)
    for i, d in enumerate(dims):
        if d in dims[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return FLIP.call(x, params=dims if x._data.ndim else ())


def _repeat_fwd(x, reps):
    lead = len(reps) - x.ndim
    return np.tile(x.reshape((1,) * lead + x.shape), reps)


REPEAT = primitive("repeat", _repeat_fwd, linear=True)
record_input_shape(REPEAT)


@REPEAT.def_vjp
def _(ctx, g):
    reps = ctx._params
    shape = ctx._shape
    lead = len(reps) - len(shape)
    full = (1,) * lead + tuple(shape)
    split_shape = []
    for r, s in zip(reps, full):
        split_shape += [r, s]
    gg = g.reshape(split_shape)
    gg = gg.sum(tuple(range(0, 2 * len(reps), 2)))
    return (gg.reshape(shape),)


def repeat(input, *repeats):
    x = as_tensor_arg(input)
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    reps = _shape_arg(repeats)
    if len(reps) < x._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return REPEAT.call(x, params=reps)


def tile(input, dims):
    x = as_tensor_arg(input)
    if not isinstance(dims, (tuple, list, Size)):  # the method's tile(2) is in legacy_methods
        raise TypeError("tile(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    dims = tuple(dims)
    if len(dims) < x._data.ndim:
        dims = (1,) * (x._data.ndim - len(dims)) + dims
    return repeat(x, dims)


def _roll_fwd(x, p):
    shifts, dims = p
    return np.roll(x, shifts, axis=dims)


ROLL = primitive("roll", _roll_fwd, linear=True)


@ROLL.def_vjp
def _(ctx, g):
    shifts, dims = ctx._params
    neg = tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts
    return (ROLL.call(g, params=(neg, dims)),)


def roll(input, shifts, dims=None):
    """Rotate elements along `dims` (over the flattened tensor when None) by `shifts`."""
    x = as_tensor_arg(input)
    shifts = (int(shifts),) if isinstance(shifts, int) else tuple(int(v) for v in shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               "dims:0")
        return ROLL.call(x, params=(shifts[0], None))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if x._data.ndim == 0 and dims:
        raise _no_dims(x, dims[0])
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    nd = x._data.ndim
    dims = tuple(wrap_dim(d, nd) for d in dims)
    return ROLL.call(x, params=(shifts, dims))


# --------------------------------------------------------------------------- joins built on cat
def _tensors_arg(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0]), True
    return list(tensors), len(tensors) != 1


# --------------------------------------------------------------------------- flips / rotations
def fliplr(input):
    x = as_tensor_arg(input)
    if x._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(x, (1,))


def flipud(input):
    x = as_tensor_arg(input)
    if x._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(x, (0,))


ROT90 = primitive("rot90", lambda x, p: np.ascontiguousarray(np.rot90(x, p[0], axes=p[1])),
                  linear=True)
ROT90.def_vjp(lambda ctx, g: (ROT90.call(g, params=(-ctx._params[0], ctx._params[1])),))


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees `k` times in the plane of `dims` (from the first towards the
    second)."""
    x = as_tensor_arg(input)
    dims = list(dims)
    nd = x._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = wrap_dim(dims[0], nd), wrap_dim(dims[1], nd)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    return ROT90.call(x, params=(int(k) % 4, (d0, d1)))


# --------------------------------------------------------------------------- repeat_interleave
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element `repeats` times along `dim` (of the flattened input when None).
    ``repeat_interleave(counts)`` alone gives ``arange(len(counts))`` repeated by counts."""
    x = as_tensor_arg(input)
    if repeats is None:
        r = x._data
        if r.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if r.dtype.kind not in "iu":
            raise RuntimeError("repeats has to be Long or Int tensor")
        if r.size and r.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return wrap(np.repeat(np.arange(r.size, dtype=np.int64), r.reshape(-1)))
    if dim is None:
        x = x.flatten()
        d = 0
    else:
        d = wrap_dim(dim, x._data.ndim)
    if x._data.ndim == 0:
        x = x.reshape(1)
    size = x._data.shape[d]
    if isinstance(repeats, Tensor):
        r = repeats._data.reshape(-1)
        if r.size == 1:
            r = np.repeat(r, size)
        if r.dtype.kind not in "iu":
            raise RuntimeError("repeats has to be Long or Int tensor")
        if r.shape[0] != size:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats._data.size} and input.size({d}) = "
                               f"{size}")
        if r.size and r.min() < 0:
            raise RuntimeError("repeats can not be negative")
        idx = wrap(np.repeat(np.arange(size, dtype=np.int64), r))
        return x.index_select(d, idx)  # indexing.py sits above this module
    r = int(repeats)
    if r < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = list(x._data.shape)
    y = x.unsqueeze(d + 1)
    big = shape[:d + 1] + [r] + shape[d + 1:]
    new = shape[:d] + [shape[d] * r] + shape[d + 1:]
    return view(clone(y.expand(big), memory_format="contiguous"), new)


# --------------------------------------------------------------------------- broadcasting
def broadcast_shapes(*shapes):
    """The shape all `shapes` broadcast to (RuntimeError when they cannot)."""
    norm = []
    for s in shapes:
        norm.append((s,) if isinstance(s, int) else tuple(s))
    n = builtins.max((len(s) for s in norm), default=0)
    out = [1] * n
    for s in norm:
        for i, v in enumerate(s):
            j = n - len(s) + i
            if v < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {v}: "
                                   f"{list(s)}")
            if out[j] == 1:
                out[j] = v
            elif v != 1 and v != out[j]:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single "
                                   f"shape.  Mismatch is between {list(out[j:j + 1])} and "
                                   f"{[v]} at dim {j}.")
    return Size(tuple(out))


def broadcast_tensors(*tensors):
    """Expanded views of all tensors to their common shape (a tensor already of that shape is
    returned as is)."""
    ts, _ = _tensors_arg(tensors)
    ts = [as_tensor_arg(t) for t in ts]
    shape = ts[0]._data.shape if ts else ()
    for t in ts[1:]:
        try:
            shape = np.broadcast_shapes(shape, t._data.shape)
        except ValueError:
            raise _broadcast_error(np.empty(shape), t._data) from None
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in ts)


# --------------------------------------------------------------------------- triangles / diagonals
def _tri_check(x, name):
    if x._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


TRIL = primitive("tril", lambda x, k: np.tril(x, k), linear=True)
TRIU = primitive("triu", lambda x, k: np.triu(x, k), linear=True)
TRIL.def_vjp(lambda ctx, g: (TRIL.call(g, params=ctx._params),))
TRIU.def_vjp(lambda ctx, g: (TRIU.call(g, params=ctx._params),))


def tril(input, diagonal=0):
    """The lower triangle of the last two dims (elements above `diagonal` zeroed)."""
    x = as_tensor_arg(input)
    _tri_check(x, "tril")
    return TRIL.call(x, params=int(diagonal))


def triu(input, diagonal=0):
    """The upper triangle of the last two dims (elements below `diagonal` zeroed)."""
    x = as_tensor_arg(input)
    _tri_check(x, "triu")
    return TRIU.call(x, params=int(diagonal))


def _diag_embed_fwd(x, p):
    offset, d1, d2 = p
    n = x.shape[-1] + builtins.abs(offset) if x.ndim else 1
    nd = x.ndim + 1
    rest = list(x.shape[:-1])
    shape = []
    for i in range(nd):
        if i == d1 or i == d2:
            shape.append(n)
        else:
            shape.append(rest.pop(0))
    out = np.zeros(shape, dtype=x.dtype)
    v = np.diagonal(out, offset, d1, d2)
    v.setflags(write=True)
    v[...] = x
    return out


DIAG_EMBED = primitive("diag_embed", _diag_embed_fwd, linear=True)
DIAG_EMBED.def_vjp(lambda ctx, g: (DIAGONAL.call(g, params=ctx._params),))
record_input_shape(DIAG_EMBED)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose (dim1, dim2) diagonals hold the last dim of `input`."""
    x = as_tensor_arg(input)
    nd = x._data.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return DIAG_EMBED.call(x, params=(int(offset), d1, d2))


# torch.diag of a matrix: torch decomposes it to diagonal_copy, hence the node name; the op is
# named for diag (copy_variants' twin of the diagonal view is "diagonal_copy").
DIAG_COPY = primitive("diag", lambda x, k: np.diagonal(x, k).copy(),
                      "DiagonalBackward0_copy", linear=True)
record_input_shape(DIAG_COPY)


@DIAG_COPY.def_vjp
def _(ctx, g):
    z = zeros(ctx._shape, dtype=g.dtype)
    return (_DIAG_SCATTER.call(z, g, params=(ctx._params, 0, 1)),)


def diag(input, diagonal=0):
    """1-d input: a square matrix with it on the `diagonal`-th diagonal; 2-d input: a copy of
    that diagonal."""
    x = as_tensor_arg(input)
    nd = x._data.ndim
    if nd == 1:
        return diag_embed(x, diagonal, 0, 1)
    if nd != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")
    return DIAG_COPY.call(x, params=int(diagonal))


def _trace_fwd(x, p):
    dt = np.int64 if x.dtype.kind in "biu" else None
    return np.asarray(np.trace(x, dtype=dt))


TRACE = primitive("trace", _trace_fwd, linear=True)
record_input_shape(TRACE)


@TRACE.def_vjp
def _(ctx, g):
    shape = ctx._shape
    z = zeros(shape, dtype=g.dtype)
    return (_DIAG_SCATTER.call(z, g.expand(builtins.min(shape)), params=(0, 0, 1)),)


def trace(input):
    """Sum of the main diagonal of a matrix."""
    x = as_tensor_arg(input)
    if x._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x._data.ndim}")
    if x._data.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return TRACE.call(x)


def select_scatter(input, src, dim, index):
    """A copy of `input` with ``input.select(dim, index)`` replaced by `src`."""
    x = as_tensor_arg(input)
    d = wrap_dim(dim, x._data.ndim)
    size = x._data.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x._data.shape)} at dimension {d}")
    return _select_scatter(x, as_tensor_arg(src), d, index % size)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of `input` with ``input[..., start:end:step, ...]`` (on `dim`) replaced by `src`."""
    x = as_tensor_arg(input)
    d = wrap_dim(dim, x._data.ndim)
    a, b, s = slice(start, end, step).indices(x._data.shape[d])
    return _slice_scatter(x, as_tensor_arg(src), d, a, builtins.max(b, a), s)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of `input` with its (offset, dim1, dim2) diagonal replaced by `src`."""
    x = as_tensor_arg(input)
    nd = x._data.ndim
    return _DIAG_SCATTER.call(x, as_tensor_arg(src),
                              params=(int(offset), wrap_dim(dim1, nd), wrap_dim(dim2, nd)))


# --------------------------------------------------------------------------- products of shapes
def kron(input, other):
    """Kronecker product: blocks ``input[i] * other`` (a composite ending in _unsafe_view)."""
    a = as_tensor_arg(input)
    b = as_tensor_arg(other)
    nd = builtins.max(a._data.ndim, b._data.ndim)
    sa = (1,) * (nd - a._data.ndim) + a._data.shape
    sb = (1,) * (nd - b._data.ndim) + b._data.shape
    ia, ib = [], []
    for u, v in zip(sa, sb):
        ia += [u, 1]
        ib += [1, v]
    prod = a.reshape(ia) * b.reshape(ib)
    shape = tuple(u * v for u, v in zip(sa, sb))
    return UNSAFE_VIEW.call(prod, params=shape)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-d tensors ("ij" indexing by default, "xy" swaps the first two
    dims); each grid is an expanded view of its input."""
    ts, _ = _tensors_arg(tensors)
    if indexing is None:
        import warnings
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f'{indexing}')
    ts = [as_tensor_arg(t) for t in ts]
    if not ts:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    for t in ts:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    order = list(range(len(ts)))
    if indexing == "xy" and len(ts) >= 2:
        order[0], order[1] = 1, 0
    sizes = [ts[i]._data.size for i in order]
    n = len(ts)
    out = []
    for i, t in enumerate(ts):
        pos = order.index(i)
        shape = [1] * n
        shape[pos] = -1
        out.append(t.view(shape).expand(sizes))
    return tuple(out)


for _name in ("tril", "triu", "diag", "kron"):
    globals()[_name] = _numpy_aliases(globals()[_name])


def _tril_(self, diagonal=0):
    _tri_check(self, "tril")
    return apply_inplace(TRIL, self, params=int(diagonal))


def _triu_(self, diagonal=0):
    _tri_check(self, "triu")
    return apply_inplace(TRIU, self, params=int(diagonal))


def _bind_inplace():
    for name, fn in (("tril_", _tril_), ("triu_", _triu_)):
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)


_bind_inplace()
