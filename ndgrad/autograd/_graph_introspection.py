"""Introspection of the backward graph, part of ``ndgrad.autograd.graph`` (re-exported there).

What lives here: the saved values of a node as torch-named attributes (``_saved_self``,
``_saved_result``, ... and their raw handles ``_raw_saved_<name>``, as properties of Node;
scalar arguments such as ``_saved_dim`` and ``_saved_keepdim`` from the node's params),
``register_multi_grad_hook``, and pictures of the backward graph (``to_dot``, ``render``).
Nothing here is on the hot path.
"""

import shutil
import subprocess
import threading

import numpy as np

from .._graph_core import (BACKWARD_TWICE, FREED, AccumulateGrad, Node, SavedTensor,
                           current_graph_task)
from .._ops.registry import as_tensor_arg
from .._tensor import Tensor
from ._saved_hooks import register_raw_hooks

__all__ = ["register_multi_grad_hook", "to_dot", "render", "register_saved_names",
           "saved_values"]

# ---------------------------------------------------------------- saved-value names
# Per op (OpDef.name): torch's argument names, by input index. Inputs not listed are named
# "self", "other" in order; saved outputs are "result" (output 0) and per-op names below.
_ARG_NAMES = {
    "mkldnn_rnn_layer": ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_"),
    "mm": ("self", "mat2"), "bmm": ("self", "mat2"), "mv": ("self", "vec"),
    "dot": ("self", "tensor"), "addmm": ("self", "mat1", "mat2"),
    "where": ("condition", "self", "other"),
    "tanh_backward": ("grad_output", "output"), "sigmoid_backward": ("grad_output", "output"),
    "threshold_backward": ("grad_output", "self"), "masked_fill": ("self", "mask"),
    "gather": ("self", "index"), "scatter": ("self", "index", "src"),
    "scatter_add": ("self", "index", "src"), "index_select": ("self", "index"),
    "index_add": ("self", "index", "source"),
    "pow": ("self", "exponent"), "pow_tensor": ("self", "exponent"),
    "pow_rscalar": ("self", "exponent"),
    "addbmm": ("self", "batch1", "batch2"), "baddbmm": ("self", "batch1", "batch2"),
    "addmv": ("self", "mat", "vec"), "addcdiv": ("self", "tensor1", "tensor2"),
    "addcmul": ("self", "tensor1", "tensor2"), "linear_addmm": ("self", "mat1", "mat2"),
    "convolution": ("input", "weight", "bias"),
    "convolution_backward": ("grad_output", "input", "weight"),
    "embedding": ("weight", "indices"), "embedding_backward": ("grad", "indices"),
    "lerp_tensor": ("self", "end", "weight"), "masked_select": ("self", "mask"),
    "masked_scatter": ("self", "mask", "source"), "masked_fill_tensor": ("self", "mask", "value"),
    "take": ("self", "index"), "index_copy": ("self", "index", "source"),
    "index_fill": ("self", "index"), "index_fill_tensor": ("self", "index", "value"),
    "scatter_reduce": ("self", "index", "src"), "scatter_value": ("self", "index"),
    "clamp_tensor": ("self", "min", "max"),
    "native_layer_norm": ("input", "weight", "bias"),
    "native_batch_norm": ("input", "weight", "bias"),
    "max_pool2d_with_indices_backward": ("grad_output", "indices"),
    "softmax_backward_data": ("grad_output", "output"),
    "log_softmax_backward_data": ("grad_output", "output"),
    "elu_backward": ("grad_output", "self_or_result"),
    "linalg_det": ("A",), "linalg_slogdet": ("A",), "linalg_solve_ex": ("A", "B"),
    "linalg_lstsq": ("self", "b"), "cholesky_solve": ("self", "input2"),
}
# Activation double-backward primitives: (grad_output, self), as torch names them.
for _name in ("celu", "gelu", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu",
              "log_sigmoid", "mish", "silu", "softplus"):
    _ARG_NAMES[_name + "_backward"] = ("grad_output", "self")
_INDICES = ("result", "indices")
_OUT_NAMES = {
    "mkldnn_rnn_layer": ("result0", "result1", "result2", "result3"),
    "max_dim": _INDICES, "min_dim": _INDICES, "sort": _INDICES, "sort_stable": _INDICES,
    "topk": _INDICES, "kthvalue": _INDICES, "cummax": _INDICES, "cummin": _INDICES,
    "mode": _INDICES, "median_dim": _INDICES, "nanmedian_dim": _INDICES,
    "std_mean": ("result0",), "linalg_inv_ex": ("inverse",), "linalg_cholesky_ex": ("L",),
    "linalg_eigh": ("eigenvalues", "eigenvectors"), "linalg_qr": ("Q", "R"),
    "linalg_svd": ("U", "S", "Vh"), "linalg_slogdet": ("sign", "logabsdet"),
}
# Ops whose saved Python numbers torch exposes as numbers (elsewhere they are wrapped tensors).
_RAW_NUMBERS = {"pow", "pow_rscalar"}
_DEFAULT_ARGS = ("self", "other")


# ---------------------------------------------------------------- saved scalars
# torch also exposes a node's non-tensor arguments (``_saved_dim``, ``_saved_keepdim``, ...).
# ndgrad keeps them in ``node._params`` (and input 0's shape in ``node._shape``); this table
# says, per op (OpDef.name), which torch attribute reads what. Values take torch's types: a
# dim list is a tuple, a size is a tuple of ints, and an int64 argument comes back as torch
# returns it (a negative one wrapped to 2**64 + value). ndgrad's ops store dims (and slice
# bounds, select indices) normalized to their non-negative form, so those read normalized.
def _i64(v):
    """An int64 argument as torch's node attributes return it."""
    return v + (1 << 64) if type(v) is int and v < 0 else v


def _i64s(v):
    return None if v is None else tuple(_i64(i) for i in (v if isinstance(v, (tuple, list))
                                                          else (v,)))


def _number(v):
    """A Scalar ndgrad's op made a float: torch keeps an integral one (its default or an int
    literal, the common cases) as an int."""
    return int(v) if type(v) is float and v.is_integer() else v


def _param(i=None, convert=None):
    """Getter of ``node._params`` (or its item `i`), converted."""
    if i is None:
        return (lambda node: convert(node._params)) if convert else (lambda node: node._params)
    if convert is None:
        return lambda node: node._params[i]
    return lambda node: convert(node._params[i])


def _const(value):
    return lambda node: value


def _numel(node):
    n = 1
    for s in node._shape:
        n *= s
    return n


def _one_if_none(v):
    return 1 if v is None else v


def _chunk_length(bounds):
    return bounds[0][1] - bounds[0][0]


_DIM = _param(None, _i64)
_DIMS = _param(0, _i64s)           # a reduction's dims, as a tuple
_DIM0 = _param(0, _i64)            # (dim, ...) params
_KEEPDIM1 = _param(1)
_ALPHA = ("alpha", _param(None, _one_if_none))
_SCALARS = {
    "threshold": (("threshold", _param(0)),), "threshold_": (("threshold", _param(0)),),
    "elu_": (("alpha", _param(0)), ("scale", _param(1, _number)),
             ("input_scale", _param(2, _number))),
    "celu_": (("alpha", _param(0)),), "leaky_relu_": (("negative_slope", _param()),),
    "mkldnn_rnn_layer": (("reverse", _param(0)), ("hidden_size", _param(1)),
                         ("has_biases", _param(2)), ("train", _param(3)),
                         ("num_layers", _param(4)), ("bidirectional", _param(5)),
                         ("batch_first", _const(False)), ("mode", _const(2)),
                         ("batch_sizes", _const(()))),
    "add": (_ALPHA,), "sub": (_ALPHA,), "rsub": (_ALPHA,),
    "div_trunc": (("rounding_mode", _const("trunc")),),
    "div_floor": (("rounding_mode", _const("floor")),),
    "sum_dim": (("dim", _DIMS), ("keepdim", _KEEPDIM1)),
    "nansum": (("dim", _DIMS), ("keepdim", _KEEPDIM1)),
    "mean": (("self_sym_numel", _numel),),
    "mean_dim": (("dim", _DIMS), ("keepdim", _KEEPDIM1), ("self_sym_numel", _numel)),
    "prod_dim": (("dim", _param(0, lambda d: _i64(d[0]))), ("keepdim", _KEEPDIM1)),
    "logsumexp": (("dim", _DIMS), ("keepdim", _KEEPDIM1)),
    "amax": (("dim", _DIMS), ("keepdim", _KEEPDIM1)),
    "amin": (("dim", _DIMS), ("keepdim", _KEEPDIM1)),
    "var": (("dim", _DIMS), ("correction", _param(1)), ("keepdim", _param(2))),
    "std": (("dim", _DIMS), ("correction", _param(1)), ("keepdim", _param(2))),
    "var_mean": (("dim", _DIMS), ("correction", _param(1)), ("keepdim", _param(2))),
    "linalg_vector_norm": (("ord", _param(0, _number)), ("dim", _param(1, _i64s)),
                           ("keepdim", _param(2))),
    "max_dim": (("dim", _DIM0), ("keepdim", _KEEPDIM1)),
    "min_dim": (("dim", _DIM0), ("keepdim", _KEEPDIM1)),
    "kthvalue": (("dim", _param(1, _i64)), ("keepdim", _param(2))),
    "median_dim": (("dim", _param(1, _i64)), ("keepdim", _param(2))),
    "nanmedian_dim": (("dim", _param(1, _i64)), ("keepdim", _param(2))),
    "mode": (("dim", _param(1, _i64)), ("keepdim", _param(2))),
    "sort": (("dim", _DIM0),), "sort_stable": (("dim", _DIM0),),
    "topk": (("dim", _param(1, _i64)),),
    "cumsum": (("dim", _DIM0),), "cumprod": (("dim", _DIM0),),
    "cummax": (("dim", _DIM0),), "cummin": (("dim", _DIM0),),
    "logcumsumexp": (("dim", _DIM),),
    "softmax": (("dim", _DIM),), "log_softmax": (("dim", _DIM),), "glu": (("dim", _DIM),),
    "gather": (("dim", _DIM), ("sparse_grad", _const(False))),
    "index_select": (("dim", _DIM),),
    "cat": (("dim", _DIM),), "stack": (("dim", _DIM),), "unbind": (("dim", _DIM),),
    "split": (("dim", _DIM0), ("split_size", _param(1, _chunk_length))),
    "split_with_sizes": (("dim", _DIM0),
                         ("split_sizes", _param(1, lambda b: tuple(e - s for s, e in b)))),
    "transpose": (("dim0", _DIM0), ("dim1", _param(1, _i64))),
    "permute": (("dims", _param(None, _i64s)),),
    "flip": (("dims", _param(None, _i64s)),),
    "roll": (("dims", _param(1, lambda d: () if d is None else _i64s(d))),
             ("shifts", _param(0, _i64s))),
    "repeat": (("repeats", _param(None, _i64s)),),
    "unsqueeze": (("dim", _DIM),),
    # (a squeeze's params: (dims removed, dim as given))
    "squeeze_dim": (("dim", _param(1, _i64)),), "squeeze_dim_": (("dim", _param(1, _i64)),),
    "squeeze_dims": (("dim", _param(1, _i64s)),), "squeeze_dims_": (("dim", _param(1, _i64s)),),
    "select": (("dim", _DIM0), ("index", _param(1, _i64))),
    "slice": (("dim", _DIM0), ("start", _param(1, _i64)), ("end", _param(2, _i64)),
              ("step", _param(3, _i64))),
    "diagonal": (("offset", _DIM0), ("dim1", _param(1, _i64)), ("dim2", _param(2, _i64))),
    "tril": (("diagonal", _DIM),), "triu": (("diagonal", _DIM),),
    "leaky_relu": (("negative_slope", _param()),),
    "hardtanh": (("min_val", _param(0)), ("max_val", _param(1))),
    # elu's scales are 1 (an int in torch) except selu's scale
    "elu": (("alpha", _param(0)), ("scale", _param(1, _number)),
            ("input_scale", _param(2, _number))),
    "celu": (("alpha", _param(0)),),
    "softplus": (("beta", _param(0)), ("threshold", _param(1))),
    "gelu": (("approximate", _param()),),
    "clamp": (("min", _param(0)), ("max", _param(1))),
    "lerp": (("weight", _param()),),
    "addcmul": (("value", _param(None, _number)),), "addcdiv": (("value", _param(None, _number)),),
    "logit": (("eps", _param()),),
    "polygamma": (("n", _param()),), "mvlgamma": (("p", _param()),),
}


def _nll_total_weight(node):
    """nll_loss's total_weight as torch saves it: the summed class weights of the targets
    not ignored (0 for reduction "none" of a batch), in the input's dtype."""
    target, weight = node.saved
    shape, dtype = node._extras()["x_meta"]
    reduction, ignore_index = node._params
    if reduction == "none" and len(shape) > 1:
        return Tensor(np.zeros((), dtype))
    t = target._data.reshape(-1)
    t = t[t != ignore_index]
    total = t.size if weight is None else weight._data[t].sum(dtype=dtype)
    return Tensor(np.asarray(total, dtype))


# nll_loss's Reduction enum as torch's nodes save it
_NLL_SCALARS = (("ignore_index", _param(1, _i64)),
                ("reduction", _param(0, {"none": 0, "mean": 1, "sum": 2}.get)))
_NLL_NAMES = ("grad_output", "self", "target", "weight")
for _name in ("nll_loss", "nll_loss2d"):
    _SCALARS[_name] = _NLL_SCALARS + (("total_weight", _nll_total_weight),)
    _SCALARS[_name + "_backward"] = _NLL_SCALARS
    _ARG_NAMES[_name] = _NLL_NAMES[1:]
    _ARG_NAMES[_name + "_backward"] = _NLL_NAMES
# The pointwise losses' nodes (one primitive per kind, saving input, target, weight and
# pos_weight): torch's names for what each kind's node keeps (None: not shown, as torch's
# node has no such attribute), and its scalars.
_REDUCTION = ("reduction", _param(1, {"none": 0, "mean": 1, "sum": 2}.get))
for _kind, _names_, _extra in (
        ("mse", ("self", "target", None, None), ()),
        ("huber", ("self", "target", None, None), (("delta", _param(2)),)),
        ("smooth_l1", ("self", "target", None, None), (("beta", _param(2)),)),
        ("bce", ("self", "target", "weight", None), ()),
        ("bce_logits", ("self", "target", "weight", "pos_weight"), ())):
    _ARG_NAMES["loss_" + _kind] = _names_
    _SCALARS["loss_" + _kind] = (_REDUCTION,) + _extra
# Ops whose node in torch has no ``_saved_self_sym_sizes`` (ndgrad records the shape anyway).
_NO_SELF_SIZES = {"gather", "unbind", "masked_fill", "diag_embed", "amax", "amin",
                  "loss_mse", "loss_smooth_l1", "loss_huber", "loss_bce", "loss_bce_logits"}


def _scalars(node):
    op = type(node)._op
    if op is None:
        return ()
    if op.rules_from is not None and op.name not in _SCALARS:
        op = op.rules_from  # a view's *_copy twin saves what the view's node saves
    return _SCALARS.get(op.name, ())


def _has_self_sizes(node):
    if getattr(node, "_shape", None) is None:
        return False
    op = type(node)._op
    if op is not None and op.rules_from is not None:
        op = op.rules_from
    return op is None or op.name not in _NO_SELF_SIZES


def register_saved_names(op_name, arg_names=None, out_names=None):
    """Declare torch's names for the saved values of op `op_name` (for new primitives)."""
    if arg_names is not None:
        _ARG_NAMES[op_name] = tuple(arg_names)
    if out_names is not None:
        _OUT_NAMES[op_name] = tuple(out_names)
    for key in tuple(arg_names or ()) + tuple(out_names or ()):
        _define(key)


def _names(node):
    """``[(attribute name, index into node._saved)]`` for a node's saved values."""
    op = type(node)._op
    if op is None or not op.save:
        return []
    args = _ARG_NAMES.get(op.name, _DEFAULT_ARGS)
    outs = _OUT_NAMES.get(op.name, ())
    names = []
    for i, (what, _cond) in enumerate(op.save):
        if type(what) is str:
            k = 0 if what == "out" else int(what[3:])
            name = outs[k] if k < len(outs) else ("result" if k == 0 else f"result{k}")
        else:
            name = args[what] if what < len(args) else f"input{what}"
            if name is None:
                continue  # kept for the rule, not an attribute of torch's node
        names.append((name, i))
    return names


def saved_values(node):
    """``{name: value}`` of everything a node saved (tensors unpacked), for display."""
    out = {}
    if type(node)._op is None:
        # Custom Function nodes and other op-less nodes: whatever SavedTensors they hold.
        saved = node._saved
        if saved is not FREED and isinstance(saved, tuple):
            for i, s in enumerate(saved):
                if type(s) is SavedTensor:
                    out[f"saved_tensors[{i}]"] = s.unpack(node)
        return out
    for name, _i in _names(node):
        out[name] = getattr(node, "_saved_" + name)
    if _has_self_sizes(node):
        out["self_sym_sizes"] = tuple(node._shape)
    for name, get in _scalars(node):
        out[name] = get(node)
    return out


class _RawSaved:
    """torch's ``SavedTensor`` handle: ``register_hooks(pack, unpack)`` on one saved value."""

    __slots__ = ("_node", "_index")

    def __init__(self, *args, **kwargs):
        # public as autograd.SavedTensor: only a node hands these out, as in torch
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    @classmethod
    def _of(cls, node, index):
        self = object.__new__(cls)
        self._node = node
        self._index = index
        return self

    def _value(self):
        saved = self._node._saved
        return None if saved is FREED else saved[self._index]

    def register_hooks(self, *args):
        if len(args) != 2 or not all(callable(a) for a in args):
            # torch's binding refuses anything but two callables, spelled by pybind11
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument "
                "types are supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: "
                "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\n"
                f"Invoked with: {', '.join(repr(a) for a in (self,) + args)}")
        register_raw_hooks(self._value(), self._node, *args)

    def unpack(self):
        saved = self._node._saved
        if saved is FREED:
            raise RuntimeError(BACKWARD_TWICE)
        s = saved[self._index]
        return s.unpack(self._node) if type(s) is SavedTensor else s

    @property
    def data(self):
        return self.unpack()

    def __repr__(self):
        return f"<SavedTensor of {self._node.name()}>"


def _lookup(node, key, raw):
    for n, i in _names(node):
        if n == key:
            return _saved_attr(node, i, raw)
    if not raw:
        if key == "self_sym_sizes" and _has_self_sizes(node):
            return tuple(node._shape)
        for n, get in _scalars(node):
            if n == key:
                return get(node)  # kept after backward, as torch's are
    prefix = "_raw_saved_" if raw else "_saved_"
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '{prefix}{key}'")


def _saved_attr(node, i, raw):
    saved = node._saved
    if raw:
        if saved is not FREED and saved[i] is not None and type(saved[i]) is not SavedTensor:
            raise AttributeError("a saved number has no raw SavedTensor handle")
        return _RawSaved._of(node, i)
    if saved is FREED:
        raise RuntimeError(BACKWARD_TWICE)
    s = saved[i]
    if type(s) is SavedTensor:
        return s.unpack(node)
    if s is None or type(node)._op.name in _RAW_NUMBERS:
        return s
    try:
        return as_tensor_arg(s)
    except TypeError:
        return s


def _define(key):
    """Properties ``_saved_<key>`` / ``_raw_saved_<key>`` on Node (AttributeError where the
    node has no such value). Properties, not ``__getattr__``: a class-level ``__getattr__``
    would slow every attribute read of every node in the engine (no LOAD_ATTR
    specialisation)."""
    for raw in (False, True):
        name = ("_raw_saved_" if raw else "_saved_") + key
        if name not in Node.__dict__:
            setattr(Node, name, property(lambda self, k=key, r=raw: _lookup(self, k, r),
                                         doc=f"The value this node saved as torch's `{key}`."))


def _define_all():
    keys = {"self", "other", "result", "self_sym_sizes"}
    for names in list(_ARG_NAMES.values()) + list(_OUT_NAMES.values()):
        keys.update(n for n in names if n is not None)
    keys.update(f"input{k}" for k in range(2, 6))
    keys.update(f"result{k}" for k in range(1, 4))
    for entries in _SCALARS.values():
        keys.update(name for name, _get in entries)
    for key in keys:
        _define(key)


def _node_dir(self):
    names = {n for n in object.__dir__(self)
             if not (n.startswith("_saved_") or n.startswith("_raw_saved_"))}
    for n, _i in _names(self):
        names.add("_saved_" + n)
        names.add("_raw_saved_" + n)
    if _has_self_sizes(self):
        names.add("_saved_self_sym_sizes")
    for n, _get in _scalars(self):
        names.add("_saved_" + n)
    return sorted(names)


_define_all()
Node.__dir__ = _node_dir


# ---------------------------------------------------------------- torch's edges
# torch's node has edges for the inputs its op is differentiable in only: class indices, index
# and mask tensors, Python numbers an op takes as tensors, weights without a derivative get
# none. Per op (OpDef.name): the indices of the inputs torch's node lists in next_functions.
_BOTH = (0, 1)
_SELF_SRC = (0, 2)
_TORCH_EDGES = {
    "nll_loss": (0,), "nll_loss2d": (0,), "nll_loss_backward": _BOTH,
    "nll_loss2d_backward": _BOTH, "multi_margin_loss": (0,), "multilabel_margin_loss": (0,),
    "soft_margin_loss": (0,), "soft_margin_loss_backward": _BOTH, "loss_mse": _BOTH,
    "loss_smooth_l1": _BOTH, "loss_huber": _BOTH, "loss_bce": _BOTH, "loss_bce_logits": _BOTH,
    "gather": (0,), "index_select": (0,), "index_fill": (0,), "masked_fill": (0,),
    "masked_select": (0,), "take": (0,), "scatter_value": (0,), "embedding": (0,),
    "max_unpool2d": (0,), "max_unpool3d": (0,), "rrelu_with_noise": (0,),
    "index_add": _SELF_SRC, "index_copy": _SELF_SRC, "index_fill_tensor": _SELF_SRC,
    "index_reduce": _SELF_SRC, "masked_fill_tensor": _SELF_SRC, "masked_scatter": _SELF_SRC,
    "put": _SELF_SRC, "scatter": _SELF_SRC, "scatter_add": _SELF_SRC,
    "scatter_reduce": _SELF_SRC, "where": (1, 2),
    "fmod_scalar": (0,), "remainder_scalar": (0,), "rsub": (0,), "pow": (0,),
    "pow_rscalar": (1,), "xlogy_other_scalar": (0,), "xlogy_self_scalar": (1,),
    "special_zeta_other_scalar": (0,), "special_zeta_self_scalar": (1,),
}


def _next_functions(self):
    """torch's next_functions: the edges of the inputs torch's node has (a real edge of an
    input torch would not differentiate is never hidden: then every input's is listed)."""
    edges = self._next
    op = type(self)._op
    keep = _TORCH_EDGES.get(op.name) if op is not None else None
    if keep is not None and len(edges) > len(keep):
        kept = [edges[i] for i in keep]
        if sum(e is not None for e in kept) == sum(e is not None for e in edges):
            edges = kept
    return tuple((None, 0) if e is None else e for e in edges)


Node.next_functions = property(_next_functions, doc=_next_functions.__doc__)


# ---------------------------------------------------------------- the running backward
def _current_task():
    """``(deps, heap, needed, None, None)`` of the innermost backward on this thread, or None.

    The engine keeps a GraphTask per running backward (see _graph_core.current_graph_task).
    """
    task = current_graph_task()
    if task is None:
        return None
    return (task.deps, task.heap, task.needed, None, None)


def _will_execute(task, node):
    deps, heap, needed, _current, ready = task
    pending = (deps is not None and node in deps) or node is ready or \
        (heap is not None and any(n is node for _s, n in heap))
    if pending and needed is not None and type(node) is not AccumulateGrad:
        pending = bool(needed.get(node, False))
    return pending


def _grad_fn_or_acc(t):
    fn = t.grad_fn
    return fn if fn is not None else t._accumulator()


class _MultiHandle:
    """Removes every hook a ``register_multi_grad_hook`` call installed."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call `fn` once per backward after the gradients of `tensors` were computed.

    ``mode="all"``: ``fn(grads)`` with one gradient per tensor (None for tensors this
    backward does not reach), after the last of them is ready. ``mode="any"``: ``fn(grad)``
    with the first gradient computed among `tensors`. Returns a handle with ``remove()``.
    """
    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    if mode == "all":
        n = len(tensors)
        nodes = [_grad_fn_or_acc(t) for t in tensors]
        state = {"key": None, "count": 0, "expected": 0, "buf": None}

        def make_inner(idx):
            def inner(grad):
                task = _current_task()
                key = task[0] if task is not None else None
                with lock:
                    if state["buf"] is None or state["key"] is not key:
                        # First hook of this backward: how many of ours will run in it?
                        expected = 1
                        for j in range(n):
                            if j == idx:
                                continue
                            if task is None:
                                continue
                            if nodes[j] is task[3] or _will_execute(task, nodes[j]):
                                expected += 1
                        state.update(key=key, count=0, expected=expected, buf=[None] * n)
                    state["buf"][idx] = grad
                    state["count"] += 1
                    done = state["count"] >= state["expected"]
                    buf = state["buf"]
                    if done:
                        state.update(key=None, buf=None)
                if done:
                    fn(buf)
            return inner

        handles = tuple(t.register_hook(make_inner(i)) for i, t in enumerate(tensors))
        return _MultiHandle(handles)

    ran = {"key": None}

    def wrapped(grad):
        task = _current_task()
        key = task[0] if task is not None else object()
        with lock:
            if ran["key"] is key:
                return
            ran["key"] = key
        fn(grad)

    handles = tuple(t.register_hook(wrapped) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)


# ---------------------------------------------------------------- pictures of the graph
def _shape(t):
    return str(tuple(int(s) for s in t._data.shape))


def _esc(s):
    return str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _fmt_us(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def to_dot(tensors, params=None, show_saved=False, profile=None, name="backward"):
    """Graphviz DOT source of the backward graph behind `tensors` (a tensor or a sequence).

    Nodes are labelled with ``grad_fn.name()``; leaves with their name from `params` (a dict
    ``name -> tensor``, e.g. ``dict(model.named_parameters())``) and shape; outputs in green.
    ``show_saved=True`` adds each saved tensor (orange, with its shape) and saved numbers.
    ``profile`` (a finished ``autograd.profiler.profile``) annotates each node with the time
    its backward took, matched by sequence number.

    Example::

        >>> src = ndgrad.autograd.graph.to_dot(loss, params=dict(model.named_parameters()))
        >>> ndgrad.autograd.graph.render(src, "graph.svg")   # needs Graphviz's `dot`
    """
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    names = {id(t): n for n, t in (params or {}).items()}
    times = _node_times(profile) if profile is not None else {}
    lines = [f"digraph {name} {{",
             '  graph [rankdir=BT];',
             '  node [style=filled, shape=box, align=left, fontsize=10, height=0.2, '
             'ranksep=0.1, fontname=monospace];']
    seen = set()
    stack = []
    for k, t in enumerate(tensors):
        oid = f"out{k}"
        lines.append(f'  {oid} [label="{_esc(_shape(t))}", fillcolor=darkolivegreen1];')
        fn = t.grad_fn
        if fn is None and t.requires_grad:
            fn = t._accumulator()
        if fn is not None:
            lines.append(f"  n{id(fn)} -> {oid};")
            stack.append(fn)
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        nid = f"n{id(fn)}"
        if type(fn) is AccumulateGrad:
            v = fn.variable
            label = (names.get(id(v), "") + "\n" if id(v) in names else "") + _shape(v)
            lines.append(f'  {nid} [label="{_esc(label)}", fillcolor=lightblue];')
            continue
        label = fn.name()
        if fn._seq in times:
            label += "\n" + _fmt_us(times[fn._seq])
        extra_lines = []
        if show_saved and fn._saved is not FREED:
            for k, (sname, value) in enumerate(saved_values(fn).items()):
                if isinstance(value, Tensor):
                    sid = f"s{id(fn)}_{k}"
                    extra_lines.append(f'  {sid} [label="{_esc(sname)}\\n'
                                       f'{_esc(_shape(value))}", fillcolor=orange];')
                    extra_lines.append(f"  {sid} -> {nid} [style=dashed, dir=none];")
                elif value is not None:
                    label += f"\n{sname}: {value}"
        lines.append(f'  {nid} [label="{_esc(label)}", fillcolor=lightgrey];')
        lines.extend(extra_lines)
        for e in fn._next:
            if e is None:
                continue
            lines.append(f"  n{id(e[0])} -> {nid};")
            if e[0] not in seen:
                stack.append(e[0])
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node_times(prof):
    """Backward time per sequence number from a profiler's backward-node events."""
    times = {}
    for ev in prof.function_events:
        if ev.sequence_nr >= 0 and ev.name.endswith(tuple("0123456789")) and \
                "Backward" in ev.name and not ev.name.startswith("autograd::"):
            times[ev.sequence_nr] = times.get(ev.sequence_nr, 0.0) + ev.cpu_time_total
    return times


_NO_DOT = (
    "Rendering needs Graphviz's `dot` program, which was not found on PATH. Install Graphviz "
    "(apt-get install graphviz, brew install graphviz, conda install graphviz or "
    "https://graphviz.org/download/), or paste the DOT source from to_dot() into any Graphviz "
    "viewer.")


def render(graph, path, format=None, **to_dot_kwargs):
    """Write a picture of `graph` (DOT source, or a tensor passed to ``to_dot``) to `path`.

    The format comes from `format` or the file suffix (svg, png, pdf, ...). Needs the Graphviz
    ``dot`` binary; raises RuntimeError saying how to get it when it is missing.
    Returns `path`.
    """
    source = graph if isinstance(graph, str) else to_dot(graph, **to_dot_kwargs)
    fmt = format or (str(path).rsplit(".", 1)[-1] if "." in str(path) else "svg")
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(_NO_DOT)
    proc = subprocess.run([exe, f"-T{fmt}", "-o", str(path)], input=source.encode(),
                          capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"Graphviz failed: {proc.stderr.decode(errors='replace').strip()}")
    return path
