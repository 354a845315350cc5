"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp, and the batched backward
behind ``autograd.grad(..., is_grads_batched=True)``.

Return structures follow torch: a Tensor for a single Tensor input/output, tuples otherwise,
nested tuples (per output, then per input) for Jacobians and Hessians. With ``strict=True``
an output independent of an input raises torch's errors; with ``create_graph=True`` results
are differentiable.

Batched gradients (``autograd.grad(..., is_grads_batched=True)``, used by ``vectorize=True``):
the cotangents carry a leading batch dimension B and the graph is run once, backwards, with
per-op batched rules (``_batched_backward.py`` explains the rules); ops without a batched rule
are run once per batch element inside that single traversal. The result equals the loop over B
single backward passes.

Example::

    >>> import ndgrad as torch
    >>> from ndgrad.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, torch.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
"""

from .. import _state
from .._creation import zeros, zeros_like
from .._ops.joins import stack
from .._tensor import Tensor
from . import _forward_engine
from . import forward_ad as fwAD
from ._backward import grad
from .engine import run_backward

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_tls = _state.tls


# --------------------------------------------------------------------------- helpers
def _tupled(value, arg_name, fn_name):
    """``(was_tuple, tuple_of_tensors)``, with torch's TypeError for anything else."""
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = (f"value at index {i} has type {type(el)}." if was_tuple else
                     f"given {arg_name} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where}")
    return was_tuple, items


def _untuple(res, single):
    """Undo the tupling: `single` is a flag, or (outputs_flag, inputs_flag) for nested."""
    if isinstance(single, tuple):
        outs_tuple, ins_tuple = single
        if not ins_tuple:
            res = tuple(row[0] for row in res)
        if not outs_tuple:
            res = res[0]
        return res
    return res if single else res[0]


def _prepare(inputs, create_graph, need_graph):
    """Fresh differentiable handles on the inputs (views keep a graph under create_graph)."""
    out = []
    for x in inputs:
        if create_graph and x.requires_grad:
            out.append(x.view_as(x))
        else:
            out.append(x.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(items, create_graph):
    if not items:
        return items
    if isinstance(items[0], Tensor) or items[0] is None:
        if create_graph:
            return tuple(items)
        return tuple(None if x is None else x.detach() for x in items)
    return tuple(_finish(x, create_graph) for x in items)


def _check_v(v, ref, ref_is_tuple):
    if len(v) != len(ref):
        if ref_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(ref)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, ref)):
        if a.size() != b.size():
            where = f"Entry {i} in " if ref_is_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.size()} but got "
                               f"{a.size()}.")


_RG_MESSAGES = {
    "outputs": ("Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when running "
                "in strict mode."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {i} is independent of the input. This is not "
                 "allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs."),
}


def _strict_requires_grad(items, kind, strict):
    if not strict:
        return
    for i, x in enumerate(items):
        if x is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not x.requires_grad:
            raise RuntimeError(_RG_MESSAGES[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
          batched=False):
    """autograd.grad over the outputs that require grad; all-None when none does."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    keep_o, keep_g = [], []
    for o, g in zip(outputs, grad_outputs):
        if o is not None and o.requires_grad:
            keep_o.append(o)
            keep_g.append(g)
    if not keep_o:
        return (None,) * len(inputs)
    return grad(tuple(keep_o), inputs, tuple(keep_g), allow_unused=True,
                create_graph=create_graph, retain_graph=retain_graph,
                is_grads_batched=batched)


_ZERO_MESSAGES = {
    "back": ("The output of the user-provided function is independent of input {i}. This is "
             "not allowed in strict mode."),
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the "
                   "grad_outputs when using the double backward trick to compute forward mode "
                   "gradients. This is not allowed in strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry "
                          "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                          "prevents from using the double backward trick to replace forward "
                          "mode AD."),
}


def _zeros_for_missing(grads, refs, strict, create_graph, stage):
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_MESSAGES[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        out.append(g)
    return tuple(out)


class _grad_mode:
    """Set grad mode for a block (a tiny local helper; no decorator machinery needed)."""

    def __init__(self, on):
        self.on = on

    def __enter__(self):
        self.prev = _tls.grad_enabled
        _tls.grad_enabled = self.on

    def __exit__(self, *exc):
        _tls.grad_enabled = self.prev


def _single_output(outputs, was_tuple, name):
    if was_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain "
                           "a single element")


def _v_for_inputs(v, inputs, ins_tuple, create_graph, fn_name):
    if v is not None:
        _, v = _tupled(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _check_v(v, inputs, ins_tuple)
        return v
    if len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    return None


# --------------------------------------------------------------------------- vjp / jvp
def _refuse_in_transform():
    # torch's functional APIs call requires_grad_() on their inputs, which a torch.func
    # transform refuses: the same error, before anything runs
    if _state.func_transforms:
        raise _state.requires_grad_in_transform_error()


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at `inputs`.

    `v` may be omitted when func returns a single one-element tensor.

    Example::

        >>> x = torch.ones(2)
        >>> vjp(lambda x: 2 * x, x, torch.tensor([1.0, 3.0]))
        (tensor([2., 2.]), tensor([2., 6.]))
    """
    _refuse_in_transform()
    with _grad_mode(True):
        ins_tuple, inputs = _tupled(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outs_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function",
                                      "vjp")
        _strict_requires_grad(outputs, "outputs", strict)
        if v is not None:
            _, v = _tupled(v, "v", "vjp")
            v = _prepare(v, create_graph, need_graph=False)
            _check_v(v, outputs, outs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    with _grad_mode(True if create_graph else _tls.grad_enabled):
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        res = _zeros_for_missing(grads, inputs, strict, create_graph, "back")
    return (_untuple(_finish(outputs, create_graph), outs_tuple),
            _untuple(_finish(res, create_graph), ins_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product at `inputs`.

    Computed, as torch does, by the double-backward trick (a backward of the backward with
    respect to a dummy cotangent). For cheap forward-mode JVPs use ``forward_ad``.

    Example::

        >>> jvp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))
        (tensor([1., 4.]), tensor([2., 4.]))
    """
    _refuse_in_transform()
    with _grad_mode(True):
        ins_tuple, inputs = _tupled(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _v_for_inputs(v, inputs, ins_tuple, create_graph, "jvp")
        outs_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function",
                                      "jvp")
        _strict_requires_grad(outputs, "outputs", strict)
        dummies = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
        _strict_requires_grad(grad_inputs, "grad_inputs", strict)
    with _grad_mode(True if create_graph else _tls.grad_enabled):
        grads = _grad(grad_inputs, dummies, v, create_graph=create_graph)
        res = _zeros_for_missing(grads, outputs, strict, create_graph, "back_trick")
    return (_untuple(_finish(outputs, create_graph), outs_tuple),
            _untuple(_finish(res, create_graph), outs_tuple))


# --------------------------------------------------------------------------- jacobian
def _basis(tensors, numels):
    """Per tensor, a (total, numel) slice of the identity of size sum(numels)."""
    total = sum(numels)
    chunks = []
    start = 0
    for t, n in zip(tensors, numels):
        c = zeros((total, n), dtype=t.dtype)
        if n:
            c._data[start + _arange(n), _arange(n)] = 1
        start += n
        chunks.append(c)
    return tuple(chunks)


# torch's private names for these helpers, which its tests and libraries import (pytorch-minimize
# builds its own Jacobian from them): same arguments, same results.
_construct_standard_basis_for = _basis
_tuple_postprocess = _untuple
_grad_postprocess = _finish


def _as_tuple(inp, arg_name=None, fn_name=None):
    """torch's ``_as_tuple``: with names, ``(was_tuple, tuple)`` after the Tensor check;
    without, just the tuple (a list becomes one, anything else is wrapped)."""
    if arg_name is None and fn_name is None:
        return inp if isinstance(inp, tuple) else tuple(inp) if isinstance(inp, list) else (inp,)
    return _tupled(inp, arg_name, fn_name)


def _arange(n):
    import numpy as np
    return np.arange(n)


def _jacobian_forward(func, inputs, strict, vectorize):
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`strategy=\"forward-mode\"` are not supported together (yet). Please "
                           "either set `strict=False` or `strategy=\"reverse-mode\"`.")
    ins_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    numels = tuple(x.numel() for x in inputs)
    if sum(numels) == 0:
        # No directions: an all-empty Jacobian of the outputs' shapes.
        out = func(*inputs)
        outs_tuple = isinstance(out, tuple)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        rows = [[zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype) for x in inputs]
                for o in outs]
        return _untuple(rows, (outs_tuple, ins_tuple))
    try:
        return _jacobian_forward_batched(func, inputs, ins_tuple, numels)
    except Exception:  # noqa: BLE001
        # Unbatchable (in-place ops, aliasing, custom Functions) or any op the batched rules
        # cannot take: the column loop computes the same Jacobian (and re-raises a genuine
        # error of func itself).
        return _jacobian_forward_loop(func, inputs, ins_tuple, numels)


def batched_forward(func, inputs, tangents, B):
    """Run `func` once on dual inputs whose tangents carry a leading batch dimension B (tangent
    number b is ``t[b]``; None: the input gets no tangent), as torch vmaps a JVP. Returns
    ``(outs_tuple, [(primal, batched tangent or None) per output])``. Raises
    _forward_engine.Unbatchable for what the batched rules cannot do."""
    with fwAD.dual_level():
        _forward_engine._batch = B
        try:
            duals = []
            for x, t in zip(inputs, tangents):
                if t is None:
                    duals.append(x)
                    continue
                d = x.view(x.shape)
                _forward_engine.set_tangent(d, t)
                duals.append(d)
            out = func(*duals)
            outs_tuple = isinstance(out, tuple)
            outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            pairs = [fwAD.unpack_dual(o) for o in outs]
        finally:
            _forward_engine._batch = 0
    return outs_tuple, pairs


def _jacobian_forward_batched(func, inputs, ins_tuple, numels):
    """All columns in one forward pass whose tangents carry a leading batch dimension (the
    standard basis), as torch vmaps its JVP. Raises Unbatchable for what it cannot do."""
    total = sum(numels)
    basis = _basis(inputs, numels)
    tangents = [chunk.reshape((total,) + tuple(x.shape)) for x, chunk in zip(inputs, basis)]
    outs_tuple, pairs = batched_forward(func, inputs, tangents, total)
    rows = []
    for p in pairs:
        o = p.primal
        tan = p.tangent if p.tangent is not None else \
            zeros((total,) + tuple(o.shape), dtype=o.dtype)
        nd = o.dim()
        per_input = []
        start = 0
        for x, n in zip(inputs, numels):
            part = tan[start:start + n]
            part = part.permute(list(range(1, nd + 1)) + [0])
            per_input.append(part.reshape(tuple(o.shape) + tuple(x.shape)))
            start += n
        rows.append(per_input)
    return _untuple(rows, (outs_tuple, ins_tuple))


def _jacobian_forward_loop(func, inputs, ins_tuple, numels):
    total = sum(numels)
    # One JVP per standard-basis direction.
    columns = None
    primals = None
    outs_tuple = False
    with fwAD.dual_level():
        for k in range(total):
            duals = []
            start = 0
            for x, n in zip(inputs, numels):
                t = zeros_like(x)
                if start <= k < start + n:
                    t._data.reshape(-1)[k - start] = 1
                start += n
                duals.append(fwAD.make_dual(x, t))
            out = func(*duals)
            outs_tuple = isinstance(out, tuple)
            outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            pairs = [fwAD.unpack_dual(o) for o in outs]
            if primals is None:
                primals = [p.primal for p in pairs]
                columns = [[] for _ in pairs]
            for lst, p in zip(columns, pairs):
                lst.append(p.tangent if p.tangent is not None else zeros_like(p.primal))
    rows = []
    for out, cols in zip(primals, columns):
        per_input = []
        start = 0
        for x, n in zip(inputs, numels):
            part = stack(cols[start:start + n], -1) if n else \
                zeros_like(out).reshape(-1)[:0]
            per_input.append(part.reshape(tuple(out.shape) + tuple(x.shape)))
            start += n
        rows.append(per_input)
    # Lists, not tuples: torch's forward-mode path returns its working lists unchanged.
    return _untuple(rows, (outs_tuple, ins_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of `func` at `inputs`: ``J[i][j]`` has shape ``out_i.shape + in_j.shape``.

    `vectorize=True` computes every row in one batched backward; `strategy="forward-mode"`
    (needs `vectorize=True`) computes columns with forward AD.

    Example::

        >>> jacobian(lambda x: x.sin(), torch.zeros(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    _refuse_in_transform()
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                "`strategy=\"forward-mode\"` are not supported together (yet). Please either "
                "set `create_graph=False` or `strategy=\"reverse-mode\"`.")
        return _jacobian_forward(func, inputs, strict, vectorize)

    with _grad_mode(True):
        ins_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outs_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function",
                                      "jacobian")
        _strict_requires_grad(outputs, "outputs", strict)

        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                                   "`vectorized=True` are not supported together. Please "
                                   "either set `strict=False` or `vectorize=False`.")
            numels = tuple(o.numel() for o in outputs)
            total = sum(numels)
            if total == 0:
                raise IndexError("index 0 is out of bounds for dimension 0 with size 0")
            basis = _basis(outputs, numels)
            flat = tuple(o.reshape(-1) for o in outputs)
            rows = list(_grad(flat, inputs, basis, create_graph=create_graph, batched=True))
            for i, r in enumerate(rows):
                if r is None:
                    rows[i] = zeros_like(inputs[i]).expand((total,) + tuple(inputs[i].shape))
            per_input = []
            for r, x in zip(rows, inputs):
                parts = r.split(numels, 0) if len(numels) > 1 else (r,)
                per_input.append([p.view(tuple(o.shape) + tuple(x.shape))
                                  for p, o in zip(parts, outputs)])
            jac = tuple(zip(*per_input))
            return _untuple(_finish(jac, create_graph), (outs_tuple, ins_tuple))

        jac = []
        for i, out in enumerate(outputs):
            cols = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for row in _reverse_rows(flat, inputs, create_graph):
                for k, (acc, g, x) in enumerate(zip(cols, row, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {k}. This is not allowed "
                                               "in strict mode.")
                        g = zeros_like(x)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is "
                                           f"independent of input {i}. This is not allowed in "
                                           "strict mode when create_graph=True.")
                    acc.append(g)
            # An output with no elements makes stack raise torch's "non-empty" error.
            jac.append(tuple(stack(acc, 0).view(tuple(out.shape) + tuple(x.shape))
                             for acc, x in zip(cols, inputs)))
        return _untuple(_finish(tuple(jac), create_graph), (outs_tuple, ins_tuple))


def _reverse_rows(flat, inputs, create_graph):
    """Per element j of `flat`, the gradients of ``flat[j]`` w.r.t. `inputs` (None: unused).

    The same as ``autograd.grad(flat[j], inputs, retain_graph=True, allow_unused=True)``
    (torch's loop), run straight from flat's node with a one-hot gradient: the select node
    and the argument checks of ``autograd.grad`` are skipped, the numbers are the same.
    """
    n = flat.nelement()
    if not flat.requires_grad:
        for _ in range(n):
            yield (None,) * len(inputs)
        return
    edges = [x._edge() for x in inputs]
    root = flat._edge()
    for j in range(n):
        onehot = zeros(n, dtype=flat.dtype)
        onehot._data[j] = 1
        captured = run_backward([(root, onehot)], True, create_graph,
                                captures={e: None for e in edges}, accumulate=False)
        row = []
        for e in edges:
            g = captured.get(e)
            if g is not None and not create_graph and g._grad_fn is not None:
                g = g.detach()
            row.append(g)
        yield tuple(row)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: ``H[i][j]`` has shape ``in_i.shape + in_j.shape``.

    Example::

        >>> hessian(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    _refuse_in_transform()
    ins_tuple, inputs = _tupled(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*xs):
        out = func(*xs)
        was_tuple, outs = _tupled(out, "outputs of the user-provided function", "hessian")
        _strict_requires_grad(outs, "outputs", strict)
        if was_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def gradient(*xs):
        if outer_jacobian_strategy == "forward-mode":
            xs = tuple(x.requires_grad_(True) for x in xs)
        g = jacobian(scalar_func, xs, create_graph=True)
        _strict_requires_grad(g, "jacobian", strict)
        return g

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _untuple(res, (ins_tuple, ins_tuple))


# --------------------------------------------------------------------------- vhp / hvp
def _first_backward(func, inputs, v, create_graph, strict, name):
    """vhp's and hvp's common start (in grad mode): checked inputs and v, the scalar output,
    and its gradient with a graph. Returns ``(ins_tuple, inputs, v, outs_tuple, outputs,
    jac)``."""
    ins_tuple, inputs = _tupled(inputs, "inputs", name)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    v = _v_for_inputs(v, inputs, ins_tuple, create_graph, name)
    outs_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", name)
    _strict_requires_grad(outputs, "outputs", strict)
    _single_output(outputs, outs_tuple, name)
    jac = _grad(outputs, inputs, create_graph=True)
    _strict_requires_grad(jac, "jacobian", strict)
    return ins_tuple, inputs, v, outs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar function, by double backward.

    Example::

        >>> vhp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.ones(2))
        (tensor(9.), tensor([ 6., 12.]))
    """
    _refuse_in_transform()
    with _grad_mode(True):
        ins_tuple, inputs, v, outs_tuple, outputs, jac = _first_backward(
            func, inputs, v, create_graph, strict, "vhp")
    with _grad_mode(True if create_graph else _tls.grad_enabled):
        grads = _grad(jac, inputs, v, create_graph=create_graph)
        res = _zeros_for_missing(grads, inputs, strict, create_graph, "double_back")
    return (_untuple(_finish(outputs, create_graph), outs_tuple),
            _untuple(_finish(res, create_graph), ins_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar function (double backward plus the transpose
    trick, as torch computes it).

    Example::

        >>> hvp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.ones(2))
        (tensor(9.), tensor([ 6., 12.]))
    """
    _refuse_in_transform()
    with _grad_mode(True):
        ins_tuple, inputs, v, outs_tuple, outputs, jac = _first_backward(
            func, inputs, v, create_graph, strict, "hvp")
        dummies = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _grad(jac, inputs, dummies, create_graph=True)
        _strict_requires_grad(jac, "hessian", strict)
    with _grad_mode(True if create_graph else _tls.grad_enabled):
        grads = _grad(double_back, dummies, v, create_graph=create_graph)
        res = _zeros_for_missing(grads, inputs, strict, create_graph, "double_back_trick")
    return (_untuple(_finish(outputs, create_graph), outs_tuple),
            _untuple(_finish(res, create_graph), ins_tuple))
