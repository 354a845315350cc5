"""vmap's machinery: BatchedTensor, vmap levels, and the dispatch of ops to batching rules.

A ``BatchedTensor`` is what the function under ``vmap`` sees: its *logical* shape is one
sample's (``x.shape``, ``x.dim()``, ``x.dtype`` answer for it) while ``_value`` holds every
sample at once, batch at dim 0 (torch's BatchedTensor with ``bdim`` moved to the front).
``_level`` names the vmap that made it; under nested vmaps the value of a level-2 tensor may
itself be a level-1 BatchedTensor. ``_data`` is only a read-only, zero-strided placeholder of
the logical shape: code reading it directly sees zeros, never another sample's data.

While a vmap is active, ``registry.vmap_dispatch`` is ``dispatch``: every op with a
BatchedTensor argument runs at the innermost level among its arguments, by

1. the op's own rule (``OpDef.def_vmap``, declared beside the op), else
2. the rule derived from ``op.kind``: elementwise unary ops run on the value as is; binary
   (broadcasting) ops run on values whose logical dims are right-aligned by inserting
   size-1 dims after the batch dim, else
3. the per-sample fallback: the op once per sample and a stack (``fallback_ops`` lists the
   ops that took it, ``docs/ops.md`` those without a rule).

Rules call ndgrad ops on the values, so autograd records the batched computation itself:
backward through vmap, and ``grad`` inside vmap (which differentiates the values), need
nothing more. Invariant: after any exit of ``vmap`` (normal or by an exception) the level
stack, ``registry.vmap_dispatch`` and ``_state.special`` are as before it.
"""

import numpy as np

from .. import _creation, _dtype, _state
from .._ops.methods import _new as _methods_new
from .._ops import inplace, registry
from .._ops.inplace import apply_inplace
from .._ops.joins import stack
from .._ops import vmap_helpers
from .._ops.vmap_helpers import align, expand_batch
from .._random import Generator
from .._tensor import Tensor

__all__ = [
    "BatchedTensor",
    "current_level",
    "dispatch",
    "fallback_ops",
    "levels",
    "materialize",
    "pop_level",
    "push_level",
    "rewrap",
    "suspended",
    "wrap",
]

# Active vmap levels, outermost first: (level id, batch size, randomness).
_levels = []
_next_id = [1]
# Names of ops that ran the per-sample fallback (for tests and docs).
fallback_ops = set()


class BatchedTensor(Tensor):
    """A tensor seen by a function under vmap: one sample's shape, every sample's values."""

    __slots__ = ("_level", "_value")

    def __repr__(self, *, tensor_contents=None):
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n{self._value!r}\n)"

    def item(self):
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
            "calling .item() on a Tensor, please try to rewrite what you're doing with other "
            "operations. If error is occurring somewhere inside PyTorch internals, please file a "
            "bug report.")

    def __bool__(self):
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow. We don't support that yet, please file an issue at "
            "https://github.com/pytorch/pytorch/issues .")

    def _scalar_value(self):
        self.item()

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def numpy(self, *, force=False):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def __index__(self):
        self.item()

    def detach(self):
        return wrap(self._value.detach(), self._level)

    @property
    def data(self):
        raise RuntimeError("accessing `data` under vmap transform is not allowed")

    @data.setter
    def data(self, value):
        raise RuntimeError("mutating directly with `.data` under vmap transform is not allowed.")



vmap_helpers.batched_type = BatchedTensor

_new = object.__new__
_placeholders = {}


def _placeholder(shape, dtype):
    """The read-only zero-strided array standing for a sample's data (shared, cached)."""
    key = (shape, dtype)
    p = _placeholders.get(key)
    if p is None:
        if len(_placeholders) > 4096:
            _placeholders.clear()
        p = _placeholders[key] = np.broadcast_to(np.zeros((), dtype), shape)
    return p


def wrap(value, level):
    """A BatchedTensor at `level` whose samples are ``value[0], value[1], ...``."""
    t = _new(BatchedTensor)
    t._data = _placeholder(value._data.shape[1:], value._data.dtype)
    t._rg = False
    t._grad_fn = None
    t._output_nr = 0
    t._vc = [0]
    t._base = None
    t._view = None
    t._view_ver = 0
    t._grad = None
    t._acc = None
    t._extra = None
    t._value = value
    t._level = level
    return t


def levels():
    """The active vmap levels, outermost first, as (id, size, randomness)."""
    return list(_levels)


def current_level():
    return _levels[-1] if _levels else None


def push_level(size, randomness):
    lid = _next_id[0]
    _next_id[0] += 1
    _levels.append((lid, size, randomness))
    _state.func_transforms += 1
    if len(_levels) == 1:
        registry.vmap_dispatch = dispatch
        _set_hooks(dispatch_inplace)
        _state.enter_special()
    _guard_random()
    return lid


def pop_level(lid):
    while _levels and _levels[-1][0] >= lid:
        _levels.pop()
        _state.func_transforms -= 1
        if not _levels:
            registry.vmap_dispatch = None
            _set_hooks(None)
            _state.exit_special()
    _guard_random()


# --------------------------------------------------------------------------- randomness
# The Generator's drawing methods. While a level with randomness="error" is active they are
# replaced (on the class) by versions raising torch's error; the originals come back as soon
# as no such level is active.
_DRAWS = ("uniform", "normal", "randint", "randperm", "bernoulli", "exponential", "multinomial")
_saved_draws = {}


def _random_error(*args, **kwargs):
    raise RuntimeError("vmap: called random operation while in randomness error mode. Please "
                       "either use the 'same' or 'different' randomness flags on vmap or perform "
                       "the randomness operation out of vmap")


def _guard_random():
    want = any(r == "error" for _, _, r in _levels)
    if want and not _saved_draws:
        for name in _DRAWS:
            _saved_draws[name] = Generator.__dict__[name]
            setattr(Generator, name, _random_error)
    elif not want and _saved_draws:
        for name, fn in _saved_draws.items():
            setattr(Generator, name, fn)
        _saved_draws.clear()


# The random ops' vmap rule (random_rules.call, which enters itself here on import: it
# imports this module, so this module cannot import it).
random_call = [None]


def _set_hooks(fn):
    """The hooks lower floors call while a vmap is active (`fn` the in-place dispatch), or
    None to remove them."""
    inplace.vmap_inplace = fn
    _state.vmap_random_rule = None if fn is None else random_call[0]
    Tensor.__getitem__ = _plain_getitem if fn is None else _getitem


class suspended:
    """While differentiating values (plain tensors with the levels' dims) no op needs the vmap
    dispatch: the hooks and the special-path counter are lifted for the body and restored on
    any exit (the level stack itself stays, so transforms still count as active)."""

    __slots__ = ("on",)

    def __enter__(self):
        self.on = registry.vmap_dispatch is not None
        if self.on:
            registry.vmap_dispatch = None
            _set_hooks(None)
            _state.exit_special()
        return self

    def __exit__(self, *exc):
        if self.on:
            registry.vmap_dispatch = dispatch
            _set_hooks(dispatch_inplace)
            _state.enter_special()


def _size_of(lid):
    for level, size, _ in _levels:
        if level == lid:
            return size
    raise RuntimeError("vmap: a BatchedTensor escaped the vmap that made it")


# --------------------------------------------------------------------------- dispatch
def _level_of(args):
    level = 0
    for a in args:
        if type(a) is BatchedTensor:
            level = max(level, a._level)
        elif type(a) in (tuple, list):
            sub = _level_of(a)
            level = max(level, sub)
    return level


def dispatch(op, args, params):
    """Run `op` on `args` by its batching rule when one argument is batched (see the module
    docstring); NotImplemented otherwise, so that the dispatcher runs it as usual."""
    level = _level_of(args)
    if not level:
        return NotImplemented
    batched = tuple(type(a) is BatchedTensor and a._level == level for a in args)
    if op.name in _DYNAMIC_SHAPE:
        _dynamic_shape_error(op, args, batched)
    values = tuple(a._value if b else a for a, b in zip(args, batched))
    rule = op.vmap
    out = NotImplemented
    if rule is not None:
        out = rule(batched, params, *values)
    elif op.kind == "unary" or op.kind == "binary":
        aligned = align(batched, values)
        if op.kind == "binary":
            aligned = _promote_logically(args, aligned)
        out = op.call(*aligned, params)
    elif op.batch_transparent:  # elementwise primitives (where, casts, clone, ...)
        aligned = align(batched, values)
        out = op.call(*aligned, params=params)
        node = out._grad_fn
        if node is not None and node._meta is None:
            # their wrappers ask for broadcast gradients to be reduced after the call
            node._meta = registry._meta_of(aligned, [isinstance(a, Tensor) for a in aligned],
                                           out._data, True)
    group = None
    if rule is None and out is not NotImplemented and isinstance(out, Tensor) and \
            out._grad_fn is not None:
        group = _NodeGroup([out._grad_fn], logical=False)
    if out is NotImplemented:
        out = per_sample(op, batched, values, params, level)
        nodes, _fallback_nodes[0] = _fallback_nodes[0], None
        if nodes:
            group = _NodeGroup(nodes)
    if type(out) is tuple:
        res = tuple(wrap(o, level) if isinstance(o, Tensor) else o for o in out)
        if group is not None:
            res[0]._grad_fn = group
        return res
    res = wrap(out, level)
    res._grad_fn = group
    return res


def _promote_logically(args, values):
    """Type promotion by the samples' ranks, not the values': a sample that is a 0-d tensor
    (a value with only the batch dim) ranks below dimensioned ones, as in torch. When the
    values would promote otherwise, the tensor values are cast to the samples' dtype first."""
    a, b = args
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)) or a._data.dtype == b._data.dtype:
        return values
    want = registry._promote2(a, b)
    if registry._promote2(*values) == want:
        return values
    dt = _dtype.from_np(want)
    return tuple(v.to(dt) if isinstance(v, Tensor) and v._data.dtype != want else v
                 for v in values)


# Ops whose output shape depends on the values: torch refuses to batch them (by op name, or
# for indexing and masked_select when the mask is batched).
_DYNAMIC_SHAPE = {"_unique2", "unique_consecutive", "unique_dim", "index", "masked_select"}


def _dynamic_shape_error(op, args, batched):
    name = op.name
    if name == "index":
        flat = [a for a in args[1:] for a in (a if type(a) in (tuple, list) else (a,))]
        if any(type(a) is BatchedTensor and a._data.dtype == np.bool_ for a in flat):
            raise RuntimeError("vmap: We do not support batching operators that can support "
                               "dynamic shape. Attempting to batch over indexing with a "
                               "boolean mask.")
        return
    if name == "masked_select":
        if batched[1]:
            raise RuntimeError(
                "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We "
                "cannot support this because for each batch this would return a differently "
                "shaped Tensor. Please file an issue at https://github.com/pytorch/pytorch/"
                "issues if you need this feature.")
        return
    raise RuntimeError("vmap: We do not support batching operators that can output dynamic "
                       f"shape. Attempted to vmap over aten::{name}. Please file an issue at "
                       "https://github.com/pytorch/pytorch/issues if you need this feature.")


def invoke(op, args, params):
    """Call `op` on `args` through the dispatcher (so other special modes still see it)."""
    if op.kind in ("unary", "binary"):
        return op.call(*args, params)
    return op.call(*args, params=params)


def per_sample(op, batched, values, params, level):
    """The fallback: run `op` once per sample and stack the results along dim 0."""
    fallback_ops.add(op.name)
    size = _size_of(level)
    results = []
    nodes = []
    for b in range(size):
        args = tuple(_sample(x, b) if is_b else x for x, is_b in zip(values, batched))
        out = invoke(op, args, params)
        node = (out[0] if type(out) is tuple else out)._grad_fn
        if node is not None:
            nodes.append(node)
        results.append(out)
    _fallback_nodes[0] = nodes
    if size == 0:
        raise RuntimeError("vmap: the per-sample fallback cannot run over a batch of size 0")
    if type(results[0]) is tuple:
        return tuple(stack([r[k] for r in results], 0) for k in range(len(results[0])))
    return stack(results, 0)


class _NodeGroup:
    """The ``grad_fn`` a fallback's result shows the op's public wrapper: what the wrapper
    records on it after the call (``_meta``, ``_extras()`` entries such as an input's shape)
    is recorded on every per-sample node, whose inputs have exactly the logical shapes the
    wrapper saw."""

    __slots__ = ("nodes", "logical")

    def __init__(self, nodes, logical=True):
        object.__setattr__(self, "nodes", nodes)
        # False for the node of a batched call (a derived rule): its inputs have the batch
        # dim, so a wrapper's meta (logical shapes) does not apply; its extras (a dtype) do.
        object.__setattr__(self, "logical", logical)

    def __getattr__(self, name):
        return getattr(self.nodes[0], name)

    def __setattr__(self, name, value):
        if name == "_meta" and not self.logical:
            return
        for n in self.nodes:
            setattr(n, name, value)

    def _extras(self):
        return _GroupExtras(self.nodes)


class _GroupExtras:
    __slots__ = ("nodes",)

    def __init__(self, nodes):
        self.nodes = nodes

    def __setitem__(self, key, value):
        for n in self.nodes:
            n._extras()[key] = value


_fallback_nodes = [None]


def _sample(x, b):
    if type(x) in (tuple, list):
        return type(x)(_sample(y, b) for y in x)
    return x.select(0, b)


# --------------------------------------------------------------------------- in-place
def dispatch_inplace(op, self, others, params):
    """An in-place op under vmap: the write goes into ``self``'s value. torch's error when a
    batched value would be written into an unbatched tensor."""
    level = _level_of((self,) + tuple(others))
    if not level:
        return NotImplemented
    self_b = type(self) is BatchedTensor and self._level == level
    if not self_b:
        raise _inplace_error(op, self, others, level)
    batched = (True,) + tuple(type(o) is BatchedTensor and o._level == level for o in others)
    values = (self._value,) + tuple(o._value if b else o
                                    for o, b in zip(others, batched[1:]))
    if op.view:
        # An in-place view op (transpose_, unsqueeze_, ...): the value becomes the batched
        # view of itself, sharing its memory; the logical tensor takes the new shape.
        res = dispatch(op, (self,) + tuple(others), params)
        value = res._value
        value._vc[0] += 1
        self._value = value
        self._data = res._data
        self._vc[0] += 1
        return self
    rank = self.dim()
    if op.kind == "binary" or op.kind == "unary":
        values = align(batched, values, rank)
        apply_inplace(op, *values, params=params)
        return self
    # Any other primitive: the out-of-place batched result is copied into the value.
    res = dispatch(op, (self,) + tuple(others), params)
    if type(res) is tuple:
        res = res[0]
    self._value.copy_(res._value)
    return self


# torch words the error of a batched value written into an unbatched tensor per operator:
# add_ by its broadcast check, the arithmetic family and copy_ (setitem) as "inplace
# arithmetic", fill_ and index_put_ by name, every other operator as aten::<name>_ with the
# level (here the vmap's depth, counting vmap levels only).
_ARITHMETIC_INPLACE = {"sub", "mul", "div", "copy_"}
_NAMED_INPLACE = {"fill", "index_put"}


def _inplace_error(op, self, others, level):
    name = op.name
    for suffix in ("_tensor", "_scalar", "_"):
        if name.endswith(suffix):
            name = name[:-len(suffix)]
    if name == "add":
        shapes = [tuple(x.shape) for x in (self,) + tuple(others) if isinstance(x, Tensor)]
        bshape = [_size_of(level)] + list(np.broadcast_shapes(*shapes))
        return RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                            f"shape {bshape}")
    where = "in a vmap"
    if op.name in _ARITHMETIC_INPLACE:
        name = "inplace arithmetic"
    elif name in _NAMED_INPLACE:
        name = name + "_"
    else:
        name = f"aten::{name}_"
        depth = 1 + [lid for lid, _, _ in _levels].index(level)
        where = f"at level {depth}"
    return RuntimeError(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` "
        "in extra_args that has more elements than `self`. This happened due to `other` being "
        f"vmapped over but `self` not being vmapped over {where}. Please try to use out-of-place "
        f"operators instead of {name}. If said operator is being called inside the PyTorch "
        "framework, please file a bug report instead.")


# --------------------------------------------------------------------------- indexing
# Tensor indexing turns index tensors into raw arrays (a BatchedTensor's is a placeholder), so
# ``x[i]`` with a batched index ``i`` is computed here, once per sample: ``Tensor.__getitem__``
# is replaced by ``_getitem`` while a vmap is active (push_level/pop_level), so indexing
# outside vmap pays nothing.
_plain_getitem = Tensor.__getitem__


def _batched_index(index):
    if type(index) is BatchedTensor:
        return (index,)
    if type(index) in (tuple, list) and any(type(i) is BatchedTensor for i in index):
        return tuple(index)
    return None


def _getitem(self, index):
    idx = _batched_index(index)
    if idx is not None:
        return _getitem_per_sample(self, idx)
    return _plain_getitem(self, index)


def _getitem_per_sample(self, idx):
    level = _level_of((self,) + idx)
    is_b = [type(i) is BatchedTensor and i._level == level for i in idx]
    if any(b and i._data.dtype == np.bool_ for i, b in zip(idx, is_b)):
        raise RuntimeError("vmap: We do not support batching operators that can support "
                           "dynamic shape. Attempting to batch over indexing with a boolean "
                           "mask.")
    self_b = type(self) is BatchedTensor and self._level == level
    rows = []
    for b in range(_size_of(level)):
        x = self._value.select(0, b) if self_b else self
        rows.append(x[tuple(i._value.select(0, b) if ib else i for i, ib in zip(idx, is_b))])
    return wrap(stack(rows, 0), level)



# --------------------------------------------------------------------------- factories
def _batched_factory(factory, input, args, kwargs):
    """A factory following a batched `input` (``zeros_like``, ``new_zeros``, ...): the same
    factory on its value, so the fresh tensor has one sample per sample of `input` (torch's
    batching of these factories); NotImplemented for any other tensor."""
    if type(input) is not BatchedTensor:
        return NotImplemented
    if factory is _methods_new:  # new_*(size, ...): the batch dim is prepended to the size
        kind, rest = args[0], args[1:]
        n_size = len(rest) - (kind == "full")
        size = rest[0] if n_size == 1 and not isinstance(rest[0], int) else rest[:n_size]
        args = (kind, (_size_of(input._level),) + tuple(size)) + rest[n_size:]
    return wrap(factory(input._value, *args, **kwargs), input._level)


_creation.batched_factory[0] = _batched_factory


# --------------------------------------------------------------------------- levels <-> values
def materialize(x):
    """`x` as a plain tensor with one leading dim per active vmap level (outermost first)
    followed by its logical dims; levels `x` is not batched at are expanded."""
    if not isinstance(x, Tensor):
        return x
    v = x
    for lid, size, _ in reversed(_levels):
        if type(v) is BatchedTensor and v._level == lid:
            v = v._value
        else:
            v = expand_batch(v, size)
    return v


def rewrap(v):
    """Inverse of `materialize`: a plain tensor with one leading dim per active level back
    to a (nested) BatchedTensor."""
    if not isinstance(v, Tensor):
        return v
    for lid, _, _ in _levels:
        v = wrap(v, lid)
    return v


def unwrap_all(x):
    """The plain tensor under any nesting of BatchedTensors (for checks, not for values)."""
    while type(x) is BatchedTensor:
        x = x._value
    return x
