"""A small finite-difference checker for the op database suites (private).

``check_grads(fn, inputs)`` compares the reverse-mode vector-Jacobian product of ``fn`` for a
random cotangent with central finite differences of ``L(x) = Re sum(conj(v) * fn(x))``.
For complex inputs the numerical gradient is ``dL/dRe(x) + i dL/dIm(x)``: torch's convention
(the conjugate Wirtinger derivative scaled by 2), which ndgrad follows.

``check_gradgrads`` applies the same check to ``(x, v) -> autograd.grad(fn(x), x, v,
create_graph=True)``: second derivatives through the recorded backward graph, as torch's
gradgradcheck does. The public ``ndgrad.autograd.gradcheck`` is the user-facing tool; this
one exists so the database does not depend on it.
"""

import numpy as np
from .. import autograd
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad

__all__ = ["GradcheckFailure", "check_gradgrads", "check_grads"]


class GradcheckFailure(AssertionError):
    pass


def _as_tuple(out):
    if isinstance(out, (tuple, list)):
        return tuple(out)
    return (out,)


def _diff_outputs(outs):
    """Floating/complex tensor outputs (others carry no gradient)."""
    return [o for o in outs if isinstance(o, Tensor) and o._data.dtype.kind in "fc"]


def _loss_value(outs, vs):
    total = 0.0
    for o, v in zip(outs, vs):
        total += float(np.sum(np.real(np.conj(v) * o._data)))
    return total


def _random_like(arr, rng):
    v = np.asarray(rng.standard_normal(arr.shape))
    if arr.dtype.kind == "c":
        v = v + 1j * np.asarray(rng.standard_normal(arr.shape))
    return np.asarray(v, dtype=arr.dtype)


def _tensor(arr, rg=False):
    t = Tensor(np.array(arr))
    if rg:
        t.requires_grad_(True)
    return t


def _numerical(fn, inputs, vs, eps):
    """d L / d x_i by central differences, for each input (L defined with cotangents vs)."""
    base = [x._data.copy() for x in inputs]
    grads = []
    with no_grad():
        for i, x0 in enumerate(base):
            g = np.zeros(x0.shape, dtype=x0.dtype)
            flat = g.reshape(-1)
            steps = (1.0, 1j) if x0.dtype.kind == "c" else (1.0,)
            for j in range(x0.size):
                for step in steps:
                    vals = []
                    for sign in (1.0, -1.0):
                        pert = x0.copy()
                        pert.reshape(-1)[j] += sign * eps * step
                        args = [_tensor(b) if k != i else _tensor(pert)
                                for k, b in enumerate(base)]
                        outs = _diff_outputs(_as_tuple(fn(*args)))
                        vals.append(_loss_value(outs, vs))
                    d = (vals[0] - vals[1]) / (2 * eps)
                    flat[j] += d * step
            grads.append(g)
    return grads


def _analytic(fn, inputs, vs):
    outs = _diff_outputs(_as_tuple(fn(*inputs)))
    pairs = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
    if not pairs:
        return [np.zeros(x._data.shape, x._data.dtype) for x in inputs], outs
    gs = autograd.grad([o for o, _ in pairs], list(inputs),
                       [Tensor(np.array(v)) for _, v in pairs], allow_unused=True)
    res = []
    for x, g in zip(inputs, gs):
        res.append(np.zeros(x._data.shape, x._data.dtype) if g is None else g._data)
    return res, outs


def check_grads(fn, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0, what="gradient"):
    """Raise GradcheckFailure unless backward of `fn` at `inputs` matches finite differences.

    `fn(*tensors)` returns a tensor or a tuple of them; `inputs` are float64/complex128
    leaf tensors with ``requires_grad=True``.
    """
    rng = np.random.default_rng(seed)
    with no_grad():
        probe = _diff_outputs(_as_tuple(fn(*[_tensor(x._data) for x in inputs])))
    vs = [_random_like(o._data, rng) for o in probe]
    leaves = [_tensor(x._data, rg=True) for x in inputs]
    analytic, _ = _analytic(fn, leaves, vs)
    numeric = _numerical(fn, inputs, vs, eps)
    for i, (a, n) in enumerate(zip(analytic, numeric)):
        if a.shape != n.shape:
            raise GradcheckFailure(f"{what} of input {i}: shape {a.shape} != {n.shape}")
        ok = np.abs(a - n) <= atol + rtol * np.abs(n)
        ok |= (np.isnan(a) & np.isnan(n))
        if not ok.all():
            k = int(np.argmax(~ok.reshape(-1)))
            raise GradcheckFailure(
                f"{what} mismatch for input {i} at flat index {k}: analytical "
                f"{a.reshape(-1)[k]!r} vs numerical {n.reshape(-1)[k]!r}\n"
                f"analytical:\n{a}\nnumerical:\n{n}")
    return True


def check_gradgrads(fn, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0):
    """Second-order check: the backward graph of `fn` differentiated by finite differences."""
    rng = np.random.default_rng(seed + 1)
    with no_grad():
        probe = _diff_outputs(_as_tuple(fn(*[_tensor(x._data) for x in inputs])))
    n_in = len(inputs)
    v_inputs = [_tensor(_random_like(o._data, rng), rg=True) for o in probe]

    def first_grads(*args):
        # Finite differences call this with plain tensors under no_grad: the first
        # derivative must still be taken, so record it here regardless.
        args = [a if a.requires_grad else a.detach().requires_grad_(True) for a in args]
        xs, vs = args[:n_in], args[n_in:]
        with enable_grad():
            return _first_grads(xs, vs)

    def _first_grads(xs, vs):
        outs = _diff_outputs(_as_tuple(fn(*xs)))
        pairs = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
        if not pairs:
            return tuple(x * 0 for x in xs)
        gs = autograd.grad([o for o, _ in pairs], list(xs), [v for _, v in pairs],
                           create_graph=True, allow_unused=True)
        return tuple(x * 0 if g is None else g for x, g in zip(xs, gs))

    return check_grads(first_grads, list(inputs) + v_inputs, eps=eps, atol=atol, rtol=rtol,
                       seed=seed + 2, what="second derivative")
