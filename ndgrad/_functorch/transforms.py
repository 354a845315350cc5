"""The function transforms of torch.func: vmap, grad, grad_and_value, vjp, jvp, linearize,
jacrev, jacfwd, hessian.

``vmap`` wraps its mapped inputs as BatchedTensors at a new level (``batching.py``) and unwraps
the outputs. The differentiation transforms build on the engine and on forward AD: they work
on the *values* of their inputs, with one leading dim per active vmap level
(``batching.materialize``), and give results back at those levels (``batching.rewrap``). So
``vmap(grad(f))`` differentiates the whole batch at once, each sample's gradient landing in
its own row (samples never mix: every batching rule is per sample).

Nesting: a differentiation transform works on a fresh alias of each input that requires grad
(a new leaf otherwise), so an inner ``grad`` differentiates only with respect to its own
inputs while its result stays differentiable for the outer one (``create_graph`` whenever an
outer transform is active or an input already requires grad). ``jvp`` uses a dual level; when
one is active already (``jacfwd(jacfwd(f))``) it computes the JVP by the double-VJP trick.
Invariant: every transform restores its depth counter and levels on any exit.
"""

import functools

import numpy as np

from .. import _random, _state
from .._creation import eye, ones_like, zeros, zeros_like
from .._ops.joins import cat
from .._tensor import Tensor, _from_array
from ..autograd import forward_ad
from ..autograd import grad as agrad
# custom_function installs Function.apply's path under a transform (autograd.function)
from . import batching, custom_function, random_rules  # noqa: F401
from .batching import BatchedTensor, materialize, rewrap
from .pytree import broadcast_prefix, spec_str, tree_flatten, tree_unflatten

__all__ = [
    "chunk_vmap",
    "debug_unwrap",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "vjp",
    "vmap",
]

_tls = _state.tls
# Number of active differentiation transforms (grad, vjp, jvp, jacrev, ...).
_depth = [0]


def in_transform():
    return _depth[0] > 0 or bool(batching._levels)


def _name(func):
    return getattr(func, "__name__", repr(func))


# =========================================================================== vmap
def _is_dim_leaf(v):
    return type(v) not in (tuple, list, dict)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize `func` over dimension `in_dims` of its inputs (torch.func.vmap).

    Example::

        >>> import ndgrad as torch
        >>> torch.vmap(torch.dot)(torch.ones(5, 3), torch.ones(5, 3))
        tensor([3., 3., 3., 3., 3.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)
    return wrapped


def chunk_vmap(func, in_dims=0, out_dims=0, randomness="error", chunks=2):
    """functorch.experimental's ``chunk_vmap``: `func` vmapped over `chunks` pieces of the
    batch one after another (``Tensor.chunk``'s split: pieces of ceil(size / chunks)), the
    outputs concatenated along `out_dims`."""
    if chunks == 1:
        return vmap(func, in_dims, out_dims, randomness)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        size = _flat_in_dims(func, in_dims, args)[3]
        return _vmap_call(func, in_dims, out_dims, randomness, -(-size // chunks), args, kwargs)
    return wrapped


def _flat_in_dims(func, in_dims, args):
    name = _name(func)
    if not isinstance(in_dims, int) and not isinstance(in_dims, tuple):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         "to be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. The "
                         "latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    dims = broadcast_prefix(in_dims, args, _is_dim_leaf)
    if dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         "compatible with the structure of `inputs`. in_dims has structure "
                         f"{spec_str(tree_flatten(in_dims)[1])} but inputs has structure "
                         f"{spec_str(spec)}.")
    sizes = []
    for x, d in zip(flat_args, dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             "for an input but in_dim must be either an integer dimension or "
                             "None.")
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but the input is of type {type(x)}. We cannot vmap "
                             "over non-Tensor arguments, please use None as the respective "
                             "in_dim")
        n = x.dim()
        if not -n <= d < n:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for some input, but that input is a Tensor of dimensionality {n} "
                             f"so expected in_dim to satisfy -{n} <= in_dim < {n}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return flat_args, spec, dims, sizes[0]


def _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    flat_args, spec, dims, size = _flat_in_dims(func, in_dims, args)
    replay = False
    if randomness == "different":
        # Every sample draws its own numbers: the function runs once per sample (chunks of
        # one), which is what "different" means, though not vectorized. Without chunks asked
        # for, the draws are torch's (one draw for the whole batch, random_rules.replay_draws)
        replay = chunk_size is None or chunk_size >= size
        chunk_size = 1
    if chunk_size is not None and chunk_size < size:
        if replay:
            with random_rules.replay_draws(size) as draws:
                return _vmap_chunked(func, out_dims, randomness, chunk_size, flat_args, spec,
                                     dims, size, kwargs, draws)
        return _vmap_chunked(func, out_dims, randomness, chunk_size, flat_args, spec, dims,
                             size, kwargs)
    return _vmap_once(func, out_dims, randomness, flat_args, spec, dims, size, kwargs)


def _vmap_once(func, out_dims, randomness, flat_args, spec, dims, size, kwargs):
    moved = [x.movedim(d, 0) if d is not None else x for x, d in zip(flat_args, dims)]
    lid = batching.push_level(size, randomness)
    try:
        inner = [batching.wrap(x, lid) if d is not None else x for x, d in zip(moved, dims)]
        out = func(*tree_unflatten(inner, spec), **kwargs)
    finally:
        batching.pop_level(lid)
    return _unwrap_outputs(func, out, out_dims, lid, size)


def _unwrap_outputs(func, out, out_dims, lid, size):
    name = _name(func)
    flat, ospec = tree_flatten(out)
    if not isinstance(out_dims, (int, tuple)) or isinstance(out_dims, bool):
        if out_dims is not None:
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an "
                             "int, None or a python collection of ints representing where in "
                             "the outputs the vmapped dimension should appear.")
    if type(out_dims) is tuple and len(out_dims) == 1 and isinstance(out, Tensor):
        out_dims = out_dims[0]  # torch accepts out_dims=(d,) for a function returning one tensor
    odims = broadcast_prefix(out_dims, out, _is_dim_leaf)
    if odims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         "compatible with the structure of `outputs`. out_dims has structure "
                         f"{spec_str(tree_flatten(out_dims)[1])} but outputs has structure "
                         f"{spec_str(ospec)}.")
    res = []
    for o, d in zip(flat, odims):
        is_b = type(o) is BatchedTensor and o._level == lid
        if d is None:
            if is_b:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
            res.append(o)
            continue
        if not isinstance(o, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(o)}. Did you mean to set out_dims= to None for output?")
        v = o._value if is_b else batching.expand_batch(o, size)
        res.append(v.movedim(0, d) if d != 0 else v)
    return tree_unflatten(res, ospec)


def _vmap_chunked(func, out_dims, randomness, chunk_size, flat_args, spec, dims, size, kwargs,
                  draws=None):
    pieces = []
    # as torch: under "same" every chunk starts from the default generator's state at entry
    rs = _random.get_rng_state() if randomness == "same" else None
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        if rs is not None and start:
            _random.set_rng_state(rs)
        if draws is not None:
            draws.sample(start)
        chunk = [x.narrow(d, start, n) if d is not None else x for x, d in zip(flat_args, dims)]
        pieces.append(_vmap_once(func, out_dims, randomness, chunk, spec, dims, n, kwargs))
    flats = [tree_flatten(p) for p in pieces]
    ospec = flats[0][1]
    odims = broadcast_prefix(out_dims, pieces[0], _is_dim_leaf)
    res = []
    for k, d in enumerate(odims):
        parts = [f[0][k] for f in flats]
        res.append(parts[0] if d is None else cat(parts, d))
    return tree_unflatten(res, ospec)


def debug_unwrap(tensor, *, recurse=True):
    """The tensor under a transform's wrapper (torch.func.debug_unwrap), for debugging: under
    ``vmap`` a BatchedTensor's value, every sample with the batch at dim 0 (all levels with
    `recurse`). Other tensors come back as they are (``grad``'s inputs are plain tensors
    here). Using the result inside the transformed function is undefined, as in torch."""
    while type(tensor) is BatchedTensor:
        tensor = tensor._value
        if not recurse:
            break
    return tensor


def functionalize(func, *, remove="mutations"):
    """`func` with its mutations (and, with ``remove="mutations_and_views"``, its aliasing)
    removed, preserving its semantics (torch.func.functionalize). ndgrad has no traced
    program to rewrite, so the function runs as written: outputs and the mutation of inputs
    are what the functionalized program gives; only an output that is a view of an input
    stays a view here (torch's is a copy)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}."
            " Valid options are:\n     remove='mutations': all inplace and out= operators will be "
            "removed from the program, and replaced with their out-of-place equivalents.\n     "
            "remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
            "will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapped


# =========================================================================== helpers
def _check_argnums(argnums, n_args):
    if isinstance(argnums, tuple) and not argnums:
        raise RuntimeError("argnums must be non-empty")
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and argnums and all(
            isinstance(a, int) and not isinstance(a, bool) for a in argnums):
        nums = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    out = []
    for a in nums:
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")
        out.append(a % n_args)
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums must be unique, got {argnums}")
    return out


def _diff_inputs(args, argnums):
    """The pytree of inputs selected by `argnums` (a tuple of trees for a tuple)."""
    nums = _check_argnums(argnums, len(args))
    tree = args[nums[0]] if isinstance(argnums, int) else tuple(args[a] for a in nums)
    return nums, tree


def _leaf_for(x, strict=True):
    """A tensor to differentiate `x`'s values with respect to: an alias (keeping any graph and
    tangent of `x`) that requires grad."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if batching._levels and type(x) is not BatchedTensor and not x.requires_grad and \
            x._extra is None and x._data.dtype.kind in "fc" and forward_ad._current_level < 0:
        # An input unbatched at every level (parameters under vmap(grad)): its leaf is the
        # broadcast view of its data over the levels' sizes, built directly; the same tensor
        # materialize + detach would give (zero strides on the level dims, x's version counter).
        sizes = tuple(size for _, size, _ in batching._levels)
        leaf = _from_array(np.broadcast_to(x._data, sizes + x._data.shape))
        leaf._vc = x._vc
        leaf._rg = True
        return leaf
    p = materialize(x)
    if not (p.is_floating_point() or p.is_complex()):
        if not strict:
            return p
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if p.requires_grad or forward_ad._current_level >= 0:
        leaf = p.view_as(p)
    else:
        leaf = p.detach()
    leaf._rg = True  # not requires_grad_(): users may not call it inside a transform
    return leaf


def _replace_args(args, nums, argnums, new_tree):
    args = list(args)
    if isinstance(argnums, int):
        args[nums[0]] = new_tree
    else:
        for a, t in zip(nums, new_tree):
            args[a] = t
    return tuple(args)


def _strip(x, keep_graph):
    """A transform's output as the caller sees it: at the caller's levels, without the graph
    unless an outer transform needs it."""
    if not isinstance(x, Tensor):
        return x
    p = materialize(x)
    return rewrap(p if keep_graph else p.detach())


def _autograd_grad(outs, ins, gos, create_graph, batched=False):
    keep = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
    if not keep:
        return [None] * len(ins)
    needs = [i for i, x in enumerate(ins) if x.requires_grad]
    res = [None] * len(ins)
    if not needs:
        return res
    with batching.suspended():  # the graph was recorded on values: no BatchedTensor in it
        got = agrad([o for o, _ in keep], [ins[i] for i in needs], [g for _, g in keep],
                    retain_graph=True, create_graph=create_graph, allow_unused=True,
                    is_grads_batched=batched)
    for i, g in zip(needs, got):
        res[i] = g
    return res


class _Transform:
    """Counts an active differentiation transform and sets grad mode on for its body."""

    def __enter__(self):
        self.outer = _depth[0] > 0
        _depth[0] += 1
        _state.func_transforms += 1
        self.prev = _tls.grad_enabled
        _tls.grad_enabled = True
        return self

    def __exit__(self, *exc):
        _depth[0] -= 1
        _state.func_transforms -= 1
        _tls.grad_enabled = self.prev


def _keep_graph(flat_inputs, tr, mode=True):
    """Whether the results keep their graph for outer levels: not when the transform was
    called under no_grad (as torch, whose outer levels then see constants; `mode=False` leaves
    the grad mode out, for vjp_fn, which asks it when called), else when an outer transform or
    an input requiring grad can differentiate them."""
    if mode and not tr.prev:
        return False
    # (expanding over levels keeps requires_grad: the innermost plain tensor answers)
    return tr.outer or any(isinstance(x, Tensor) and batching.unwrap_all(x).requires_grad
                        for x in flat_inputs)


# =========================================================================== grad
def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)`` of a scalar function (``((gradient, (value, aux))`` with
    `has_aux`), the gradient with respect to the arguments `argnums` (torch.func)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar function with respect to the arguments `argnums`.

    Example::

        >>> import ndgrad as torch
        >>> from ndgrad.func import grad
        >>> grad(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
        tensor([ 3., 12.])
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, (_, aux) = _grad_and_value(func, argnums, has_aux, args, kwargs, always_aux=True)
        return (g, aux) if has_aux else g
    return wrapper


def _grad_and_value(func, argnums, has_aux, args, kwargs, always_aux=False):
    nums, tree = _diff_inputs(args, argnums)
    flat, spec = tree_flatten(tree)
    with _Transform() as tr:
        keep = _keep_graph(flat, tr)
        leaves = [_leaf_for(x) for x in flat]
        inner = tree_unflatten([rewrap(v) for v in leaves], spec)
        out = func(*_replace_args(args, nums, argnums, inner), **kwargs)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be a "
                                   "tuple: (output, aux) if has_aux is True")
            out, aux = out
        if not isinstance(out, Tensor):
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                               f"got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                               f"Tensor, got tensor with {out.dim()} dims. Maybe you wanted to "
                               "use the vjp or jacrev APIs instead?")
        p_out = materialize(out)
        gs = _autograd_grad([p_out], leaves, [ones_like(p_out)], keep)
        gs = [zeros_like(v) if g is None else g for v, g in zip(leaves, gs)]
        grads = tree_unflatten([rewrap(g if keep else g.detach()) for g in gs], spec)
        value = _strip(out, keep)
        if has_aux:
            aux = _map_aux(lambda a: _strip(a, keep), aux)
    if has_aux or always_aux:
        return grads, (value, aux)
    return grads, value


def _map_tensors(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) if isinstance(x, Tensor) else x for x in leaves], spec)


def _map_aux(fn, tree):
    """`fn` over the tensors of an aux output, which may hold only tensors (torch's rule)."""
    leaves, spec = tree_flatten(tree)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return tree_unflatten([fn(x) for x in leaves], spec)


# =========================================================================== vjp
def vjp(func, *primals, has_aux=False):
    """``(output, vjp_fn)``: ``vjp_fn(cotangents)`` gives the vector-Jacobian products with
    respect to every primal (torch.func.vjp); ``(output, vjp_fn, aux)`` with `has_aux`."""
    flat, spec = tree_flatten(primals)
    with _Transform() as tr:
        keep = _keep_graph(flat, tr)
        keep_fn = _keep_graph(flat, tr, mode=False)
        leaves = [_leaf_for(x) for x in flat]
        out = func(*tree_unflatten([rewrap(v) for v in leaves], spec))
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            out, aux = out
        flat_out, ospec = tree_flatten(out)
        _check_outputs(flat_out, "vjp(f, *primals)")
        p_outs = [materialize(o) for o in flat_out]
        lids = [lid for lid, _, _ in batching._levels]
    fn = _VjpFn(p_outs, ospec, leaves, spec, keep_fn, lids)
    value = tree_unflatten([_strip(o, keep) for o in flat_out], ospec)
    if has_aux:
        return value, fn, _map_aux(lambda a: _strip(a, keep), aux)
    return value, fn


class _VjpFn:
    """The ``vjp_fn`` of ``vjp``: keeps the outputs' and inputs' values (at the levels active
    when ``vjp`` ran, `lids`); levels entered since (``vmap(vjp_fn)``, wherever they sit in
    the stack now) become one batch of cotangents for a batched backward."""

    def __init__(self, p_outs, ospec, leaves, spec, keep, lids):
        self.p_outs, self.ospec, self.leaves, self.spec = p_outs, ospec, leaves, spec
        self.keep, self.lids = keep, lids

    def __call__(self, cotangents, *, retain_graph=True, create_graph=None):
        flat_ct, cspec = tree_flatten(cotangents)
        if cspec != self.ospec and not (self.ospec is None and len(flat_ct) == 1):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function. cotangents: "
                               f"{_short_spec(cspec)}, primal output: {_short_spec(self.ospec)}")
        # (called under no_grad outside any transform: results without graph, as torch)
        keep = (self.keep and _tls.grad_enabled) or _depth[0] > 0 or bool(create_graph)
        with _Transform():
            order = _new_levels_first(self.lids)
            extra = len(order) - len(self.lids)
            cts = [_permute_lead(materialize(c), order) for c in flat_ct]
            gs = _batched_vjp(self.p_outs, self.leaves, cts, extra, keep)
            back = [order.index(i) for i in range(len(order))]
            gs = [_permute_lead(g, back) for g in gs]
        return tree_unflatten([rewrap(g) for g in gs], self.spec)


def _new_levels_first(lids):
    """Positions of the active levels, those entered after a transform's forward first (its
    values have the dims of `lids` only), then the levels of `lids` in their order."""
    active = [lid for lid, _, _ in batching._levels]
    missing = [lid for lid in lids if lid not in active]
    if missing:
        raise RuntimeError("vjp_fn: called outside the vmap in which vjp ran (its level is no "
                           "longer active)")
    old = [active.index(lid) for lid in lids]
    return [i for i in range(len(active)) if i not in old] + old


def _permute_lead(t, order):
    """`t` with its leading len(order) dims permuted by `order` (a no-op when in order)."""
    if order == sorted(order):
        return t
    return t.permute(tuple(order) + tuple(range(len(order), t.dim())))


def _short_spec(spec):
    if spec is None:
        return "*"
    t, keys, children = spec
    inner = ", ".join(_short_spec(c) for c in children)
    if t is tuple:
        return f"({inner}{',' if len(children) == 1 else ''})"
    if t is list:
        return f"[{inner}]"
    return "{" + ", ".join(f"{k!r}: {_short_spec(c)}" for k, c in zip(keys, children)) + "}"


def _check_ct(o, c):
    if tuple(c.shape) != tuple(o.shape):
        raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and "
                           f"output[0] has a shape of {o.shape}.")


def _batched_vjp(p_outs, leaves, cts, extra, keep):
    """Gradients of `p_outs` (values with the leading dims of their levels) with respect to
    `leaves` for cotangents `cts` which carry `extra` more leading dims (levels entered after
    the forward): those are flattened into one batch for ``is_grads_batched``."""
    if extra == 0:
        for o, c in zip(p_outs, cts):
            _check_ct(o, c)
        gs = _autograd_grad(p_outs, leaves, cts, keep)
        return [zeros_like(v) if g is None else (g if keep else g.detach())
                for v, g in zip(leaves, gs)]
    lead = tuple(cts[0].shape[:extra]) if cts else ()
    n = 1
    for s in lead:
        n *= s
    flat_cts = [c.reshape((n,) + tuple(c.shape[extra:])) for c in cts]
    for o, c in zip(p_outs, flat_cts):
        _check_ct(o, c[0] if n else zeros(tuple(o.shape)))
    gs = _autograd_grad(p_outs, leaves, flat_cts, keep, batched=True)
    res = []
    for v, g in zip(leaves, gs):
        if g is None:
            g = zeros((n,) + tuple(v.shape), dtype=v.dtype)
        elif not keep:
            g = g.detach()
        res.append(g.reshape(lead + tuple(v.shape)))
    return res


# =========================================================================== jvp
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(output, jvp_out)``: `func`'s output and its directional derivative along `tangents`
    (torch.func.jvp), by forward-mode AD."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    flat_p, pspec = tree_flatten(primals)
    flat_t, tspec = tree_flatten(tangents)
    if pspec != tspec:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the "
                           "same python structure. For example, if primals is a tuple of 3 "
                           "tensors, tangents also must be. Got primals with structure "
                           f"{spec_str(pspec)} and tangents with structure {spec_str(tspec)}")
    for argname, flat in (("primals", flat_p), ("tangents", flat_t)):
        if not flat:
            raise RuntimeError(f"jvp(f, primals, tangents): Expected {argname} to contain at "
                               "least one Tensor.")
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected {argname} to only "
                                   f"contain Tensors, got {type(x)}")
    for p, t in zip(flat_p, flat_t):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} "
                f"while the given forward gradient is of size {list(t.shape)}.")
    with _Transform() as tr:
        keep = _keep_graph(flat_p + flat_t, tr)
        if forward_ad._current_level >= 0:
            out, touts, aux = _jvp_double_vjp(func, flat_p, flat_t, pspec, has_aux)
        else:
            out, touts, aux = _jvp_forward(func, flat_p, flat_t, pspec, has_aux)
        res = (tree_unflatten([_strip(o, keep) for o in out[0]], out[1]),
               tree_unflatten([_strip(t, keep) for t in touts], out[1]))
        if has_aux:
            res = res + (_map_aux(lambda a: _strip(a, keep), aux),)
    return res


def _split_aux(out, has_aux, name="jvp(f, primals, tangents)"):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{name}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return out


def _check_outputs(flat_out, name="jvp(f, primals, tangents)"):
    """torch's checks of a transformed function's flattened output: non-empty, tensors only."""
    if not flat_out or (len(flat_out) == 1 and flat_out[0] is None):
        raise RuntimeError(f"{name}: Expected f to be a function that has non-empty output "
                           f"(got output = {flat_out})")
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{name}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")


def _jvp_forward(func, flat_p, flat_t, pspec, has_aux):
    with forward_ad.dual_level():
        duals = []
        for p, t in zip(flat_p, flat_t):
            mp = materialize(p)
            if mp.is_floating_point() or mp.is_complex():
                mp = forward_ad.make_dual(mp, materialize(t).to(mp.dtype))
            duals.append(rewrap(mp))
        out, aux = _split_aux(func(*tree_unflatten(duals, pspec)), has_aux)
        flat_out, ospec = tree_flatten(out)
        _check_outputs(flat_out)
        prim, tans = [], []
        for o in flat_out:
            pr, tn = forward_ad.unpack_dual(materialize(o))
            prim.append(rewrap(pr))
            tans.append(rewrap(zeros_like(pr) if tn is None else tn))
    return (prim, ospec), tans, aux


def _jvp_double_vjp(func, flat_p, flat_t, pspec, has_aux):
    """The JVP by two VJPs, for when a dual level is already active: ``u -> J^T u`` is linear
    in the dummy cotangent u, so its VJP along the tangents is ``J t``."""
    leaves = [_leaf_for(x, strict=False) for x in flat_p]
    out, aux = _split_aux(func(*tree_unflatten([rewrap(v) for v in leaves], pspec)), has_aux)
    flat_out, ospec = tree_flatten(out)
    _check_outputs(flat_out)
    p_outs = [materialize(o) for o in flat_out]
    dummies = [zeros_like(o) for o in p_outs]
    for d in dummies:
        d._rg = True
    g = _autograd_grad(p_outs, leaves, dummies, True)
    keep_g = [(x, materialize(t)) for x, t in zip(g, flat_t) if x is not None]
    if keep_g:
        tans = _autograd_grad([x for x, _ in keep_g], dummies, [t for _, t in keep_g], True)
    else:
        tans = [None] * len(dummies)
    tans = [zeros_like(o) if t is None else t for o, t in zip(p_outs, tans)]
    return ([rewrap(o) for o in p_outs], ospec), [rewrap(t) for t in tans], aux


def linearize(func, *primals):
    """``(output, jvp_fn)``: ``jvp_fn(*tangents)`` is the JVP of `func` at `primals`
    (torch.func.linearize; here each call re-runs the forward-mode pass)."""
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return _map_tensors(lambda t: t.detach(), out), jvp_fn


# =========================================================================== Jacobians
def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of `func` with respect to the arguments `argnums`, by reverse mode: one
    batched backward over the rows of the identity (torch.func.jacrev)."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums, tree = _diff_inputs(args, argnums)
        flat, spec = tree_flatten(tree)
        with _Transform() as tr:
            keep = _keep_graph(flat, tr)
            leaves = [_leaf_for(x) for x in flat]
            inner = tree_unflatten([rewrap(v) for v in leaves], spec)
            out = func(*_replace_args(args, nums, argnums, inner), **kwargs)
            out, aux = _split_aux(out, has_aux, "jacrev(f, ...)(*args)")
            flat_out, ospec = tree_flatten(out)
            _check_outputs(flat_out, "vjp(f, *primals)")
            jac = _jacrev_rows(flat_out, leaves, keep, chunk_size)
            rows = [tree_unflatten([rewrap(j) for j in row], spec) for row in jac]
            res = tree_unflatten(rows, ospec)
            if has_aux:
                return res, _map_aux(lambda a: _strip(a, keep), aux)
            return res
    return wrapper


def _jacrev_rows(flat_out, leaves, keep, chunk_size):
    """Per output, per input, the Jacobian value: the levels' dims, then the output's logical
    shape, then the input's logical shape."""
    nl = len(batching._levels)
    p_outs = [materialize(o) for o in flat_out]
    lead = tuple(p_outs[0].shape[:nl]) if p_outs else ()
    numels = [o.numel() for o in flat_out]
    total = sum(numels)
    dtype = p_outs[0].dtype if p_outs else None
    chunks = []
    step = chunk_size or max(total, 1)
    for start in range(0, total, step):
        n = min(step, total - start)
        basis = eye(total, dtype=dtype)[start:start + n]
        cts, off = [], 0
        for o, k in zip(flat_out, numels):
            c = basis[:, off:off + k].reshape((n,) + (1,) * nl + tuple(o.shape))
            cts.append(c.expand((n,) + lead + tuple(o.shape)).to(o.dtype))
            off += k
        chunks.append(_batched_vjp(p_outs, leaves, cts, 1, keep))
    rows, off = [], 0
    for o, k in zip(flat_out, numels):
        row = []
        for i, v in enumerate(leaves):
            in_shape = tuple(v.shape[nl:])
            if total == 0:
                g = zeros(lead + tuple(o.shape) + in_shape, dtype=v.dtype)
            else:
                g = chunks[0][i] if len(chunks) == 1 else cat([c[i] for c in chunks], 0)
                g = g[off:off + k].movedim(0, nl)
                g = g.reshape(lead + tuple(o.shape) + in_shape)
            row.append(g)
        rows.append(row)
        off += k
    return rows


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of `func` with respect to the arguments `argnums`, by forward mode: the
    JVP vmapped over the columns of the identity (torch.func.jacfwd)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums, tree = _diff_inputs(args, argnums)
        flat, spec = tree_flatten(tree)
        for x in flat:
            if not isinstance(x, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        numels = [x.numel() for x in flat]
        total = sum(numels)
        basis = eye(total, dtype=flat[0].dtype) if flat else None
        tans, off = [], 0
        for x, k in zip(flat, numels):
            tans.append(basis[:, off:off + k].reshape((total,) + tuple(x.shape)).to(x.dtype))
            off += k

        def f_of_tree(*t):
            return func(*_replace_args(args, nums, argnums, tree_unflatten(list(t), spec)),
                        **kwargs)

        def push(*ts):
            res = jvp(f_of_tree, tuple(flat), tuple(ts), has_aux=has_aux)
            return res[1:] if has_aux else res[1]
        if total == 0:
            raise RuntimeError("jacfwd: the inputs have no elements")
        pushed = vmap(push, randomness=randomness)(*tans)
        aux = None
        if has_aux:
            pushed, aux = pushed
            aux = _map_tensors(lambda a: a.select(0, 0), aux)
        flat_pushed, ospec = tree_flatten(pushed)
        rows = []
        for t in flat_pushed:
            out_shape = tuple(t.shape[1:])
            row, off = [], 0
            for x, k in zip(flat, numels):
                part = t[off:off + k].movedim(0, -1)
                row.append(part.reshape(out_shape + tuple(x.shape)))
                off += k
            rows.append(tree_unflatten(row, spec))
        res = tree_unflatten(rows, ospec)
        return (res, aux) if has_aux else res
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar `func`: ``jacfwd(jacrev(func))`` (torch.func.hessian)."""
    return jacfwd(jacrev(func, argnums), argnums)
