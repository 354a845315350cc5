"""gradcheck and gradgradcheck: analytical derivatives against central finite differences.

``gradcheck(fn, inputs)`` compares, for every differentiable output and every input with
``requires_grad=True``, the Jacobian from backward mode (one ``autograd.grad`` per output
element, run twice to detect non-determinism) with the Jacobian from central differences,
``(f(x + eps) - f(x - eps)) / 2 eps``, perturbing the input's memory in place one element at a
time. ``fast_mode`` compares only the scalar ``vᵀ J u`` for random unit vectors u, v (one
directional difference per input instead of one per element), and on failure recomputes the
full Jacobians for the message. ``gradgradcheck`` runs gradcheck on the function
``(inputs, grad_outputs) -> autograd.grad(fn(inputs), inputs, grad_outputs, create_graph=True)``.

Complex numbers: a complex output is checked as its real part and its imaginary part; the
numerical entry for a complex input element is ``ds/dx + i ds/dy``, the convention of ndgrad's
(and torch's) gradients of real-valued functions. ``masked`` only concerns sparse tensors,
which ndgrad does not have; it is accepted and has no effect.
"""

import warnings

import numpy as np

from .._creation import randn_like, rand, zeros, zeros_like
from .._dtype import float64
from .._ops.complex_ops import imag, real
from .._ops.joins import stack
from .._random import Generator
from .._tensor import Tensor
from ..testing import make_tensor
from . import forward_ad
from ._backward import grad
from ._forward_engine import Unbatchable
from .function import Function
from .functional import batched_forward

__all__ = [
    "GradcheckError",
    "get_analytical_jacobian",
    "get_numerical_jacobian",
    "gradcheck",
    "gradgradcheck",
]


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_diff_input(x):
    return isinstance(x, Tensor) and x.requires_grad


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _wrap(arr):
    return Tensor(np.ascontiguousarray(arr))


# --------------------------------------------------------------------------- input checks
def _check_inputs(tupled_inputs):
    any_rg = False
    for idx, inp in enumerate(tupled_inputs):
        if _is_diff_input(inp):
            if inp._data.dtype not in (np.float64, np.complex128):
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating "
                    "point or complex. This check will likely fail if all the inputs are not of "
                    "double precision floating point or complex. ", stacklevel=3)
            d = inp._data
            # (An empty array has no overlapping elements whatever NumPy says its strides are.)
            if d.size and not all(st > 0 or sz <= 1 for st, sz in zip(d.strides, d.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical "
                    "gradients correctly. You should call .contiguous on the input before "
                    "passing it to gradcheck.")
            any_rg = True
    if not any_rg:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


# --------------------------------------------------------------------------- numerical side
def _output_arrays(fn, inputs):
    """Run `fn` and snapshot every output as a float array (copied: outputs may alias)."""
    outs = _as_tuple(fn(*inputs))
    res = []
    for o in outs:
        if isinstance(o, Tensor):
            res.append(np.array(o._data, copy=True))
        else:
            res.append(None)
    return res


def _central_diff(fn, inputs, x, direction, eps):
    """``(f(x + eps d) - f(x - eps d)) / 2 eps`` per output, perturbing ``x`` in place."""
    data = x._data
    orig = data.copy()
    try:
        np.add(orig, eps * direction, out=data, casting="unsafe")
        plus = _output_arrays(fn, inputs)
        np.subtract(orig, eps * direction, out=data, casting="unsafe")
        minus = _output_arrays(fn, inputs)
    finally:
        np.copyto(data, orig)
    res = []
    for p, m in zip(plus, minus):
        if p is None:
            res.append(None)
            continue
        if p.dtype.kind not in "fc":
            p = p.astype(np.float64)
            m = m.astype(np.float64)
        res.append((p - m) / (2 * eps))
    return res


def _numerical_jacobian(fn, inputs, outputs_like, eps):
    """``jac[i][j]``: (input i numel, output j numel) for each differentiable input i."""
    result = []
    for x in inputs:
        if not _is_diff_input(x):
            continue
        n = x._data.size
        cols = []
        for o in outputs_like:
            dt = o._data.dtype if o._data.dtype.kind in "fc" else np.dtype(np.float64)
            if x._data.dtype.kind == "c":
                dt = np.result_type(dt, x._data.dtype)
            cols.append(np.zeros((n, o._data.size), dt))
        is_complex = x._data.dtype.kind == "c"
        for k in range(n):
            d = np.zeros(x._data.shape, x._data.dtype)
            d.reshape(-1)[k] = 1
            diffs = _central_diff(fn, inputs, x, d, eps)
            if is_complex:
                diffs_im = _central_diff(fn, inputs, x, d * 1j, eps)
                diffs = [None if a is None else a + 1j * b for a, b in zip(diffs, diffs_im)]
            for j, dv in enumerate(diffs[:len(cols)]):
                if dv is not None:
                    cols[j][k] = dv.reshape(-1)
        result.append(cols)
    return result


# --------------------------------------------------------------------------- analytical side
def _vjp(output, diff_inputs, grad_output):
    return grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)


def _analytical_jacobian_rows(output, diff_inputs):
    """Per output element, the vjp with a one-hot grad_output (a row of each Jacobian)."""
    rows = []
    d = output._data
    for k in range(d.size):
        g = np.zeros(d.shape, d.dtype)
        g.reshape(-1)[k] = 1
        rows.append(_vjp(output, diff_inputs, Tensor(g)))
    return rows


def _stack(rows, diff_inputs, n_rows):
    """Stack vjp rows into per-input (input numel, n_rows) arrays; report dtype/size issues."""
    jacs = []
    types_ok = True
    sizes_ok = True
    for i, x in enumerate(diff_inputs):
        jac = np.zeros((x._data.size, n_rows), x._data.dtype)
        for k, row in enumerate(rows):
            g = row[i]
            if g is None:
                continue
            if g._data.dtype != x._data.dtype:
                types_ok = False
            if g._data.size != x._data.size:
                sizes_ok = False
                continue
            jac[:, k] = g._data.reshape(-1)
        jacs.append(jac)
    return jacs, types_ok, sizes_ok


FAILED_NONDET_MSG = """

NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def _checked_analytical(output, diff_inputs, nondet_tol, check_grad_dtypes, v=None):
    """The analytical Jacobians (or vᵀJ with `v`), computed twice to detect nondeterminism."""
    if v is None:
        rows1 = _analytical_jacobian_rows(output, diff_inputs)
        rows2 = _analytical_jacobian_rows(output, diff_inputs)
        n = output._data.size
    else:
        g = Tensor(v.reshape(output._data.shape).astype(output._data.dtype))
        rows1 = [_vjp(output, diff_inputs, g)]
        rows2 = [_vjp(output, diff_inputs, g)]
        n = 1
    j1, types_ok, sizes_ok = _stack(rows1, diff_inputs, n)
    j2, _, _ = _stack(rows2, diff_inputs, n)
    reentrant = all(a.shape == b.shape and (a.size == 0 or np.abs(a - b).max() <= nondet_tol)
                    for a, b in zip(j1, j2))
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and "
            "grad_output multiple times gives different values, although analytical gradient "
            f"matches numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
            + FAILED_NONDET_MSG)
    return j1


def _forward_ad_module():
    missing = [n for n in ("dual_level", "make_dual", "unpack_dual") if not hasattr(forward_ad, n)]
    if missing:
        raise NotImplementedError(
            "check_forward_ad=True needs forward-mode AD (ndgrad.autograd.forward_ad."
            f"{', '.join(missing)}), which is not available in this build")
    return forward_ad


def _forward_jacobian(fn, inputs, n_outputs, directions=None):
    """``jac[i][j]`` from forward mode: one jvp per input element (or per direction)."""
    fwad = _forward_ad_module()
    result = []
    for idx, x in enumerate(inputs):
        if not _is_diff_input(x):
            continue
        if directions is None:
            dirs = []
            for k in range(x._data.size):
                d = np.zeros(x._data.shape, x._data.dtype)
                d.reshape(-1)[k] = 1
                dirs.append(d)
        else:
            dirs = [directions[len(result)]]
        cols = None
        for k, d in enumerate(dirs):
            with fwad.dual_level():
                # Every differentiable input is dual (zero tangent but this one), as in torch:
                # a function may behave differently for an input without a tangent.
                new_inputs = [fwad.make_dual(a.detach(), Tensor(
                    d if i == idx else np.zeros(a._data.shape, a._data.dtype)))
                    if _is_diff_input(a) else a for i, a in enumerate(inputs)]
                outs = _differentiable_like(_as_tuple(fn(*new_inputs)), n_outputs)
                tangents = []
                for o in outs:
                    t = fwad.unpack_dual(o).tangent
                    tangents.append(np.zeros(o._data.shape, o._data.dtype) if t is None
                                    else np.array(t._data))
            if cols is None:
                cols = [np.zeros((len(dirs), t.size), t.dtype) for t in tangents]
            for j, t in enumerate(tangents):
                cols[j][k] = t.reshape(-1)
        result.append(cols if cols is not None else [])
    return result


def _differentiable_like(outs, n):
    """The first `n` tensor outputs that are floating point (forward mode marks no rg)."""
    res = [o for o in outs if isinstance(o, Tensor) and o._data.dtype.kind in "fc"]
    return res[:n]


# --------------------------------------------------------------------------- comparison
def _allclose(a, b, rtol, atol):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        return False
    return bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


def _notallclose_msg(analytical, numerical, output_idx, input_idx, forward=False, prefix=""):
    mode = "computed with forward mode " if forward else ""
    if np.ndim(numerical) == 0:  # fast mode compares scalars, printed as Python numbers
        return (prefix + f"Jacobian {mode}mismatch for output {output_idx:d} with respect to "
                f"input {input_idx:d},\nnumerical:{numerical.item()}\n"
                f"analytical:{analytical.item()}\n")
    return (prefix + f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input "
            f"{input_idx:d},\nnumerical:{_wrap(numerical)}\nanalytical:{_wrap(analytical)}\n")


def _check_no_differentiable_outputs(fn, inputs, func_out, eps):
    outs = [o for o in func_out if isinstance(o, Tensor)]
    for per_input in _numerical_jacobian(fn, inputs, outs, eps):
        for jac in per_input:
            if np.any(jac != 0):
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


def _slow_gradcheck(fn, inputs, func_out, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, use_forward_ad, prefix):
    if not outputs:
        return _check_no_differentiable_outputs(fn, inputs, func_out, eps)
    outs_all = [o for o in func_out if isinstance(o, Tensor)]
    numerical = _numerical_jacobian(fn, inputs, outs_all, eps)
    diff_idx = [k for k, o in enumerate(outs_all) if o.requires_grad]
    numerical = [[cols[k] for k in diff_idx] for cols in numerical]
    diff_inputs = [x for x in inputs if _is_diff_input(x)]
    if use_forward_ad:
        analytical = _forward_jacobian(fn, inputs, len(outs_all))
        for j, per_input in enumerate(numerical):
            for i, n in enumerate(per_input):
                a = analytical[j][diff_idx[i]]
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(_notallclose_msg(a, n, i, j, True, prefix))
        return True
    for i, o in enumerate(outputs):
        analytical = _checked_analytical(o, diff_inputs, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][i]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j, False, prefix))
    return True


FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()


def _slow_mode_report(fn, inputs, func_out, outputs, input_idx, output_idx, rtol, atol, eps,
                      forward):
    """The full Jacobians of one (input, output) pair, for a fast-mode failure message."""
    outs_all = [o for o in func_out if isinstance(o, Tensor)]
    diff_idx = [k for k, o in enumerate(outs_all) if o.requires_grad]
    n = _numerical_jacobian(fn, inputs, outs_all, eps)[input_idx][diff_idx[output_idx]]
    diff_inputs = [x for x in inputs if _is_diff_input(x)]
    if forward:
        a = _forward_jacobian(fn, inputs, len(outs_all))[input_idx][diff_idx[output_idx]]
    else:
        rows = _analytical_jacobian_rows(outputs[output_idx], diff_inputs)
        a = _stack(rows, diff_inputs, outputs[output_idx]._data.size)[0][input_idx]
    diff = np.abs(n - a).max() if n.size else 0.0
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are "
           "computed \nin fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for "
           "more background \nabout fast mode. Below, we recompute numerical and analytical "
           "jacobians in slow mode:\n\n"
           f"Numerical:\n {_wrap(n)}\nAnalytical:\n{_wrap(a)}\n\n"
           f"The max per-element difference (slow mode) is: {float(diff)}.\n")
    if _allclose(a, n, rtol, atol):
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


def _unit_vector(gen, size, dtype):
    """torch's fast-mode vector: uniform [0, 1) float32 draws, cast, scaled to unit norm."""
    v = rand(size, generator=gen)._data.astype(dtype if dtype.kind == "f" else np.float64)
    norm = np.sqrt((v * v).sum())
    return v / norm if norm > 0 else v


def _fast_gradcheck(fn, inputs, func_out, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, use_forward_ad, prefix):
    # A fresh generator (torch's default seed): the same vectors as torch, on every run.
    rng = Generator()
    diff_pos = [k for k, x in enumerate(inputs) if _is_diff_input(x)]
    us = []
    for k in diff_pos:
        x = inputs[k]
        real_dt = np.empty(0, x._data.dtype).real.dtype
        ur = _unit_vector(rng, x._data.size, real_dt)
        ui = _unit_vector(rng, x._data.size, real_dt) if x._data.dtype.kind == "c" else None
        us.append((ur, ui))
    outs_all = [o for o in func_out if isinstance(o, Tensor)]
    vs = None if use_forward_ad else [_unit_vector(rng, o._data.size, o._data.dtype)
                                      for o in outputs]

    if not outputs and not use_forward_ad:
        for k, (ur, ui) in zip(diff_pos, us):
            x = inputs[k]
            for d in _central_diff(fn, inputs, x, ur.reshape(x._data.shape), eps):
                if d is not None and d.size and np.abs(d).max() > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True

    diff_idx = [k for k, o in enumerate(outs_all) if o.requires_grad]
    # Numerical J u per input (directional differences), then vᵀ(J u) per output.
    numerical = []
    for k, (ur, ui) in zip(diff_pos, us):
        x = inputs[k]
        ju = _central_diff(fn, inputs, x, ur.reshape(x._data.shape), eps)
        if ui is not None:
            ju_im = _central_diff(fn, inputs, x, 1j * ui.reshape(x._data.shape), eps)
            ju = [None if a is None else a + b for a, b in zip(ju, ju_im)]
        if use_forward_ad:
            numerical.append([ju[k2].reshape(-1) for k2 in diff_idx])
        else:
            numerical.append([np.dot(vs[j], ju[k2].reshape(-1))
                              for j, k2 in enumerate(diff_idx)])

    if use_forward_ad:
        dirs = []
        for k, (ur, ui) in zip(diff_pos, us):
            x = inputs[k]
            d = ur if ui is None else ur + 1j * ui
            dirs.append(d.reshape(x._data.shape).astype(x._data.dtype))
        fwd = _forward_jacobian(fn, inputs, len(outs_all), directions=dirs)
        for i, per_input in enumerate(numerical):
            for j, n in enumerate(per_input):
                a = fwd[i][diff_idx[j]].reshape(-1)
                ur, ui = us[i]
                tol = atol * (ur.sum() + (ui.sum() if ui is not None else 0.0))
                if not _allclose(a, n, rtol, tol):
                    raise GradcheckError(
                        _notallclose_msg(a, n, j, i, True, prefix)
                        + _slow_mode_report(fn, inputs, func_out, outputs, i, j, rtol, atol,
                                            eps, True))
        return True

    diff_inputs = [inputs[k] for k in diff_pos]
    for j, o in enumerate(outputs):
        vjps = _checked_analytical(o, diff_inputs, nondet_tol, check_grad_dtypes, v=vs[j])
        for i, jac in enumerate(vjps):
            g = jac[:, 0]
            ur, ui = us[i]
            a = np.dot(g.real, ur) + (np.dot(g.imag, ui) if ui is not None else 0.0)
            n = numerical[i][j]
            if ui is not None:
                n = n.real
            tol = atol * (ur.sum() + (ui.sum() if ui is not None else 0.0)) * vs[j].sum()
            if not _allclose(a, n, rtol, tol):
                raise GradcheckError(
                    _notallclose_msg(np.asarray(a), np.asarray(n), j, i, False, prefix)
                    + _slow_mode_report(fn, inputs, func_out, outputs, i, j, rtol, atol, eps,
                                        False))
    return True


# --------------------------------------------------------------------------- extra checks
def _test_backward_mul_by_grad_output(outputs, inputs):
    diff_inputs = [x for x in inputs if _is_diff_input(x)]
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads = grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if np.any(gi._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi._data.dtype != di._data.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi._data.shape != di._data.shape:
            raise GradcheckError("grad is incorrect size")
    return True


_undefined_grad_cls = None


def _undefined_grad(t):
    """An alias of `t` whose backward passes an undefined (None) gradient to ``t``'s node."""
    global _undefined_grad_cls
    if _undefined_grad_cls is None:

        class UndefinedGrad(Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return None

        _undefined_grad_cls = UndefinedGrad
    return _undefined_grad_cls.apply(t)


def _test_undefined_backward_mode(fn, outputs, inputs):
    diff_inputs = [x for x in inputs if _is_diff_input(x)]
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")

    def warn_bc_breaking():
        warnings.warn("Backwards compatibility: New undefined gradient support checking feature "
                      "is enabled by default, but it may break existing callers of this "
                      "function. If this is true for you, you can call this function with "
                      "\"check_undefined_grad=False\" to disable the feature", stacklevel=4)

    def check(outs):
        try:
            grads = grad(outs, diff_inputs, [zeros_like(o) for o in outs], allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                "\"Notes about undefined output gradients\" in "
                "\"tools/autograd/derivatives.yaml\"") from e
        for gi in grads:
            if gi is not None and np.any(gi._data != 0):
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    "undefined or zero. Please look at \"Notes about undefined output "
                    "gradients\" in \"tools/autograd/derivatives.yaml\"")
        return True

    to_check = [[_undefined_grad(o) for o in _differentiable_outputs(fn(*inputs))]]
    if len(to_check[0]) > 1:
        for undef_idx in range(len(outputs)):
            outs = _differentiable_outputs(fn(*inputs))
            to_check.append([_undefined_grad(o) if k == undef_idx else o
                             for k, o in enumerate(outs)])
    return all(check(outs) for outs in to_check)


FAILED_BATCHED_GRAD_MSG = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
This could have been invoked in a number of ways (via a test that calls
gradcheck/gradgradcheck directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_grad=False` and/or `check_batched_gradgrad=False`.
""".strip()


def _test_batched_grad(inputs, output, output_idx):
    """Batched vjps (``is_grads_batched``) against one vjp per grad_output."""
    diff_inputs = [x for x in inputs if _is_diff_input(x)]

    def vjp(v, batched=False):
        res = grad(output, diff_inputs, v, retain_graph=True, allow_unused=True,
                   is_grads_batched=batched)
        return tuple(g if g is not None else
                     zeros(((2,) if batched else ()) + tuple(x._data.shape), dtype=x.dtype)
                     for g, x in zip(res, diff_inputs))

    gos = [randn_like(output) for _ in range(2)]
    expected = [vjp(g) for g in gos]
    expected = [stack(list(shards)) for shards in zip(*expected)]
    try:
        result = vjp(stack(gos), batched=True)
    except RuntimeError as ex:
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n"
                             f"{FAILED_BATCHED_GRAD_MSG}") from ex
    _compare_batched(result, expected, lambda i: output_idx, FAILED_BATCHED_GRAD_MSG)
    return True


def _compare_batched(result, expected, output_idx, msg):
    """Batched results against the stacked per-sample ones (torch.allclose's tolerances);
    torch's failure text. `output_idx(i)` names the output of pair i."""
    for i, (res, exp) in enumerate(zip(result, expected)):
        if not _allclose(res._data, exp._data, 1e-5, 1e-8):
            raise GradcheckError(f"\nFor output {output_idx(i)} and input {i}:\n\n{msg}\n\n"
                                 f"Got:\n{res}\n\nExpected:\n{exp}\n".strip())


FAILED_BATCHED_GRAD_MSG_FWD_AD = """
gradcheck failed while testing batched gradient computation with forward-mode AD.
This test is enabled automatically when both `check_batched_grad=True`
and `check_forward_ad=True`, but can be disabled in the following ways
dependong on how the test was invoked (via a test that calls gradcheck
directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_forward_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_forward_grad=False`
"""  # torch's text, typo included (users search for it)


def _test_batched_forward_grad(func, inputs):
    """Per differentiable input: JVPs of two random tangents computed at once, with a batch
    dimension carried through the forward rules (``functional.batched_forward``, the way
    vectorized forward-mode Jacobians run), against one JVP per tangent."""
    fwad = _forward_ad_module()
    detached = tuple(x.detach() if isinstance(x, Tensor) else x for x in inputs)

    def tangents_out(pairs, batch):
        return tuple(t if t is not None else zeros(batch + tuple(p._data.shape), dtype=p.dtype)
                     for p, t in pairs)

    for idx, x in enumerate(inputs):
        if not _is_diff_input(x) or x._data.dtype.kind not in "fc":
            continue

        def with_tangent(t):
            return [t if i == idx else None for i in range(len(inputs))]

        def jvp(t):
            with fwad.dual_level():
                duals = list(detached)
                duals[idx] = fwad.make_dual(detached[idx], t)
                outs = _as_tuple(func(*duals))
                return tangents_out([fwad.unpack_dual(o) for o in outs if o is not None], ())

        tangents = [randn_like(x) for _ in range(2)]
        expected = [stack(list(shards)) for shards in zip(*[jvp(t) for t in tangents])]
        try:
            _, pairs = batched_forward(func, detached, with_tangent(stack(tangents)), 2)
            result = tangents_out(pairs, (2,))
        except Unbatchable:
            result = expected  # not vectorised here: the batched JVP is the loop itself
        except RuntimeError as ex:
            raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n"
                                 f"{FAILED_BATCHED_GRAD_MSG_FWD_AD.strip()}") from ex
        # (torch numbers the pair "output k and input k")
        _compare_batched(result, expected, lambda k: k, FAILED_BATCHED_GRAD_MSG_FWD_AD.strip())
    return True


# --------------------------------------------------------------------------- complex outputs
def _real_imag_fns(fn, func_out):
    """Two real-valued views of `fn`: real parts of complex outputs, then imaginary parts."""

    def part(f):
        def wrapped(*inputs):
            outs = _as_tuple(fn(*inputs))
            return tuple(f(o) if isinstance(o, Tensor) and o.is_complex() else o
                         for o in outs)
        return wrapped
    return part(real), part(imag)


def _run_checks(check_fn, fn, inputs, func_out, outputs, eps, rtol, atol, check_grad_dtypes,
                nondet_tol, check_forward_ad, check_backward_ad, check_undefined_grad=False):
    has_complex_out = any(isinstance(o, Tensor) and o.is_complex() for o in
                          _as_tuple(func_out))
    if has_complex_out and check_backward_ad:
        real_fn, imag_fn = _real_imag_fns(fn, func_out)
        # torch checks the imaginary parts first.
        for f, part in ((imag_fn, "imaginary"), (real_fn, "real")):
            out = _as_tuple(f(*inputs))
            prefix = f"While considering the {part} part of complex outputs only, "
            check_fn(f, inputs, out, _differentiable_outputs(out), eps, rtol, atol,
                     check_grad_dtypes, nondet_tol, False, prefix)
    elif check_backward_ad:
        check_fn(fn, inputs, func_out, outputs, eps, rtol, atol, check_grad_dtypes,
                 nondet_tol, False, "")
    if check_forward_ad:
        complex_idx = [i for i, x in enumerate(inputs)
                       if isinstance(x, Tensor) and x.is_complex()]
        if not complex_idx:
            check_fn(fn, inputs, func_out, outputs, eps, rtol, atol, check_grad_dtypes,
                     nondet_tol, True, "")
            if check_undefined_grad:
                _test_undefined_forward_mode(fn, inputs)
            return
        # Forward mode with complex inputs: check the imaginary and the real part of each
        # complex input as a real input of its own (torch's order and messages).
        for part in ("imaginary", "real"):
            f, part_inputs = _real_imag_input_fn(fn, complex_idx, inputs, part)
            out = _as_tuple(f(*part_inputs))
            prefix = f"While considering the {part} part of complex inputs only, "
            check_fn(f, part_inputs, out, _differentiable_outputs(out), eps, rtol, atol,
                     check_grad_dtypes, nondet_tol, True, prefix)
        if check_undefined_grad:
            for part in ("imaginary", "real"):
                f, part_inputs = _real_imag_input_fn(fn, complex_idx, inputs, part)
                _test_undefined_forward_mode(f, part_inputs)


def _test_undefined_forward_mode(fn, inputs):
    """A tensor input without a tangent must act as one with a zero tangent (forward mode)."""
    fwad = _forward_ad_module()
    gen = Generator()
    with fwad.dual_level():
        duals = []
        diff_idx = []
        for i, x in enumerate(inputs):
            if _is_diff_input(x):
                real_dt = np.empty(0, x._data.dtype).real.dtype
                u = _unit_vector(gen, x._data.size, real_dt).reshape(x._data.shape)
                x = fwad.make_dual(x.detach(), Tensor(u.astype(x._data.dtype)))
                diff_idx.append(i)
            duals.append(x)
        for idx in diff_idx:
            keep = duals[idx]
            plain = inputs[idx].detach()
            duals[idx] = fwad.make_dual(plain, zeros_like(plain))
            outs1 = [o for o in _as_tuple(fn(*duals))
                     if isinstance(o, Tensor) and o._data.dtype.kind in "fc"]
            duals[idx] = plain
            outs2 = [o for o in _as_tuple(fn(*duals))
                     if isinstance(o, Tensor) and o._data.dtype.kind in "fc"]
            duals[idx] = keep
            for k, (o1, o2) in enumerate(zip(outs1, outs2)):
                t1 = fwad.unpack_dual(o1).tangent
                t2 = fwad.unpack_dual(o2).tangent
                if t1 is not None and t2 is not None and \
                        not _allclose(t1._data, t2._data, 1e-5, 1e-8):
                    raise GradcheckError("Mismatch in tangent values for output with index: ", k,
                                         " when input: ", inputs[idx],
                                         " has an undefined tangent value. ", " Got: ", t1,
                                         " but expected: ", t2)
    return True


def _real_imag_input_fn(fn, complex_idx, inputs, part):
    """`fn` as a function of one part (a real view) of each complex input, the other fixed."""
    def wrapped(*args):
        new = list(args)
        for i in complex_idx:
            orig = inputs[i]
            new[i] = orig.real + args[i] * 1j if part == "imaginary" else \
                args[i] + orig.imag * 1j
        return _as_tuple(fn(*new))
    part_inputs = list(inputs)
    for i in complex_idx:
        part_inputs[i] = inputs[i].imag if part == "imaginary" else inputs[i].real
    return wrapped, tuple(part_inputs)


# --------------------------------------------------------------------------- public API
def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check analytical gradients of `func` at `inputs` against finite differences.

    Every input with ``requires_grad=True`` is checked against every output that requires
    grad: ``|analytical - numerical| <= atol + rtol * |numerical|`` elementwise. Returns True,
    or raises :class:`GradcheckError` saying which output and input disagree with both
    Jacobians (returns False instead when ``raise_exception=False``). Use float64 inputs.

        >>> x = ndgrad.randn(3, dtype=ndgrad.float64, requires_grad=True)
        >>> ndgrad.autograd.gradcheck(ndgrad.sin, (x,))
        True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be "
                             "True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires "
                             "check_forward_ad to be True")
    try:
        return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol,
                                 check_undefined_grad, check_grad_dtypes, check_batched_grad,
                                 check_batched_forward_grad, check_forward_ad,
                                 check_backward_ad, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                      check_grad_dtypes, check_batched_grad, check_batched_forward_grad,
                      check_forward_ad, check_backward_ad, fast_mode):
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    if check_forward_ad:
        _forward_ad_module()
    func_out = _as_tuple(func(*tupled_inputs))
    outputs = _differentiable_outputs(func_out)
    check_fn = _fast_gradcheck if fast_mode else _slow_gradcheck
    _run_checks(check_fn, func, tupled_inputs, func_out, outputs, eps, rtol, atol,
                check_grad_dtypes, nondet_tol, check_forward_ad, check_backward_ad,
                check_undefined_grad)
    if check_batched_forward_grad:
        _test_batched_forward_grad(func, tupled_inputs)
    if not check_backward_ad:
        return True
    for i, o in enumerate(outputs):
        if check_batched_grad:
            _test_batched_grad(tupled_inputs, o, i)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, tupled_inputs)
    if check_undefined_grad and outputs:
        _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives of `func`: gradcheck of its vector-Jacobian product.

    The checked function maps ``(inputs, grad_outputs)`` to the gradients of `func`'s outputs
    w.r.t. the inputs (computed with ``create_graph=True``), so both the backward's dependence
    on the inputs and its linearity in ``grad_outputs`` are checked. Random ``grad_outputs``
    (non-contiguous with `gen_non_contig_grad_outputs`) are drawn when none are given.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev "
                             "to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to "
                             "be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be "
                             "True")
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(
            make_tensor(tuple(o.shape), dtype=o.dtype if o._data.dtype.kind in "fc" else float64,
                        low=-1, high=1, requires_grad=True,
                        noncontiguous=gen_non_contig_grad_outputs)
            for o in outs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_idx = {i for i, x in enumerate(tupled_inputs) if _is_diff_input(x)}
    diff_grad_idx = {i for i, x in enumerate(tupled_grad_outputs)
                     if isinstance(x, Tensor) and x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_idx else x
                           for i, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        gos = tuple(x.requires_grad_() if i in diff_grad_idx else x
                    for i, x in enumerate(args[-num_outputs:]))
        diff_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_idx)
        grads = grad(outputs, diff_args, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)


# --------------------------------------------------------------------------- legacy helpers
def _warn_private(name):
    warnings.warn(
        f"`{name}` was part of PyTorch's private API and not meant to be exposed. We are "
        "deprecating it and it will be removed in a future version of PyTorch. If you have a "
        "specific use for this or feature request for this to be a stable API, please file "
        "us an issue at https://github.com/pytorch/pytorch/issues/new", FutureWarning,
        stacklevel=3)


def get_numerical_jacobian(fn, inputs, target=None, eps=1e-3, grad_out=1.0):
    """Deprecated torch helper: numerical Jacobians of `fn` w.r.t. each input (as tensors)."""
    _warn_private("get_numerical_jacobian")
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    inputs = _as_tuple(inputs)
    outs = [o for o in _as_tuple(fn(inputs)) if isinstance(o, Tensor)]
    jac = _numerical_jacobian(lambda *xs: fn(xs), inputs, outs, eps)
    return tuple(_wrap(cols[0]) for cols in jac)


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, grad_out=1.0):
    """Deprecated torch helper: ``(jacobians, reentrant, correct_grad_sizes, correct_types)``."""
    _warn_private("get_analytical_jacobian")
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    diff_inputs = [x for x in _as_tuple(inputs) if _is_diff_input(x)]
    rows1 = _analytical_jacobian_rows(output, diff_inputs)
    rows2 = _analytical_jacobian_rows(output, diff_inputs)
    j1, types_ok, sizes_ok = _stack(rows1, diff_inputs, output._data.size)
    j2, _, _ = _stack(rows2, diff_inputs, output._data.size)
    reentrant = all(a.size == 0 or np.abs(a - b).max() <= nondet_tol for a, b in zip(j1, j2))
    return tuple(_wrap(j) for j in j1), reentrant, sizes_ok, types_ok
