"""The checks of the op_db harness, one function per mode (see ``_torch_opdb`` for the rules).

Each check takes (op, dtype, sample) and returns on success, raises ``Skip`` for a sample that
legitimately is not compared, or raises (AssertionError or ndgrad's exception) on a mismatch.
Cotangents and tangents are drawn from a NumPy generator seeded per sample, and the same
values are given to torch and ndgrad.
"""

import re

import numpy as np
import torch

import _torch_opdb as h
import ndgrad
import ndgrad.autograd.forward_ad as nd_fwad
import torch.autograd.forward_ad as th_fwad

FLOATING = (torch.float64, torch.float32, torch.complex128, torch.complex64, torch.float16,
            torch.bfloat16)


def _args(s):
    return h._clone_sample(s)


def _nd_args(s):
    ti, ta, tk = h._clone_sample(s)
    return h.to_nd(ti), h.to_nd(ta), h.to_nd(tk)


def _flatten(x, out, cls):
    if isinstance(x, cls):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _flatten(v, out, cls)
    elif isinstance(x, dict):
        for v in x.values():
            _flatten(v, out, cls)
    return out


def _random_like(t, rng):
    shape = tuple(t.shape)
    v = rng.standard_normal(shape)
    if t.is_complex():
        v = v + 1j * rng.standard_normal(shape)
    return np.asarray(v, dtype=np.dtype(str(t.dtype).split(".")[1]))


def _pair(values):
    return ([torch.from_numpy(v.copy()) for v in values],
            [ndgrad.from_numpy(v.copy()) for v in values])


# --------------------------------------------------------------------------- forward modes
def check_forward(op, dtype, s, variant="op"):
    th_fn = getattr(op, {"op": "op", "method": "method_variant", "inplace": "inplace_variant"}
                    [variant])
    nd_fn = h.nd_of(th_fn)
    nd_args = _nd_args(s)
    th_args = _args(s)
    th, nd = h._call_both(th_fn, nd_fn, th_args, nd_args)
    values = h._compares_values(op)
    h.expect_same_outcome(th, nd, values)
    if variant == "inplace" and not isinstance(th, Exception):
        h.assert_same(h.to_np(nd_args[0]), h.to_np(th_args[0]), "the in-place input", values)
        assert nd is nd_args[0] or not isinstance(th, torch.Tensor) or th is not th_args[0], \
            "the in-place variant does not return its input"


# --------------------------------------------------------------------------- gradients
def _diff_outputs(out, cls):
    return [t for t in _flatten(out, [], cls)
            if t.requires_grad and (t.is_floating_point() or t.is_complex())]


def _forward_for_grad(op, s):
    """Both libraries' (inputs requiring grad, processed outputs); Skip if torch cannot."""
    th_args = _args(s)
    nd_args = _nd_args(s)
    th_in = [t for t in _flatten(th_args, [], torch.Tensor) if t.requires_grad]
    nd_in = [t for t in _flatten(nd_args, [], ndgrad.Tensor) if t.requires_grad]
    if not th_in:
        raise h.Skip("no input requires grad")
    try:
        th_out = s.output_process_fn_grad(op.op(th_args[0], *th_args[1], **th_args[2]))
    except Exception as e:
        raise h.Skip(f"torch's forward raises {type(e).__name__}") from e
    nd_out = h.nd_of(s.output_process_fn_grad)(
        h.nd_of(op.op)(nd_args[0], *nd_args[1], **nd_args[2]))
    th_d = _diff_outputs(th_out, torch.Tensor)
    nd_d = _diff_outputs(nd_out, ndgrad.Tensor)
    if not th_d:
        raise h.Skip("no differentiable output")
    assert len(nd_d) == len(th_d), \
        f"{len(nd_d)} differentiable outputs (requires_grad) != torch's {len(th_d)}"
    return th_in, nd_in, th_d, nd_d


def _grads_close(nd_g, th_g, nd_in, where, tol_scale=10.0):
    assert len(nd_g) == len(th_g)
    for k, (a, b) in enumerate(zip(nd_g, th_g)):
        if b is None and a is None:
            continue
        if b is None:
            b = torch.zeros(tuple(a.shape), dtype=getattr(torch, str(a.dtype).split(".")[1]))
        if a is None:
            a = ndgrad.zeros(tuple(b.shape), dtype=h.nd_of(b.dtype))
        h.assert_same(h.to_np(a), h.to_np(b), f"{where} of input {k}", tol_scale=tol_scale)


def check_grad(op, dtype, s, second=False):
    th_in, nd_in, th_d, nd_d = _forward_for_grad(op, s)
    rng = np.random.default_rng(0)
    th_v, nd_v = _pair([_random_like(t, rng) for t in th_d])
    if second:  # as torch's gradgradcheck: the cotangent is an input of the second order
        th_v = [v.requires_grad_() for v in th_v]
        nd_v = [v.requires_grad_() for v in nd_v]
    try:
        th_g = torch.autograd.grad(th_d, th_in, th_v, allow_unused=True, create_graph=second)
    except Exception as e:
        raise h.Skip(f"torch's backward raises {type(e).__name__}") from e
    nd_g = ndgrad.autograd.grad(nd_d, nd_in, nd_v, allow_unused=True, create_graph=second)
    _grads_close(nd_g, th_g, nd_in, "gradient")
    if not second:
        return
    th_pairs = [(k, g) for k, g in enumerate(th_g) if g is not None and g.requires_grad]
    if not th_pairs:
        raise h.Skip("the gradient does not depend on the inputs")
    nd_gg = [nd_g[k] for k, _ in th_pairs]
    assert all(g is not None and g.requires_grad for g in nd_gg), \
        "ndgrad's gradient does not require grad where torch's does"
    th_w, nd_w = _pair([_random_like(g, rng) for _, g in th_pairs])
    try:
        th_2 = torch.autograd.grad([g for _, g in th_pairs], th_in + th_v, th_w,
                                   allow_unused=True)
    except Exception as e:  # as for the first order: nothing of torch's to compare with
        raise h.Skip(f"torch's double backward raises {type(e).__name__}") from e
    nd_2 = ndgrad.autograd.grad(nd_gg, nd_in + nd_v, nd_w, allow_unused=True)
    _grads_close(nd_2, th_2, nd_in, "second gradient")


def check_gradgrad(op, dtype, s):
    check_grad(op, dtype, s, second=True)


# --------------------------------------------------------------------------- forward AD
def _dualize(x, lib, fwad, tangents, is_t):
    if isinstance(x, is_t):
        if x.dtype in (torch.float64, torch.complex128) or str(x.dtype) in (
                "torch.float64", "torch.complex128"):
            if x.requires_grad:
                p = x.detach()
                t = tangents.pop(0)
                return fwad.make_dual(p, t)
        return x.detach() if hasattr(x, "detach") else x
    if isinstance(x, list):
        return [_dualize(v, lib, fwad, tangents, is_t) for v in x]
    if isinstance(x, tuple):
        return tuple(_dualize(v, lib, fwad, tangents, is_t) for v in x)
    if isinstance(x, dict):
        return {k: _dualize(v, lib, fwad, tangents, is_t) for k, v in x.items()}
    return x


def _tangents_of(out, fwad, is_t, zeros):
    res = []
    for o in _flatten(out, [], is_t):
        res.append(o.detach())
        if o.is_floating_point() or o.is_complex():
            t = fwad.unpack_dual(o).tangent
            res.append(zeros(o) if t is None else t)
    return res


def check_fwad(op, dtype, s):
    th_args = _args(s)
    nd_args = _nd_args(s)
    th_in = [t for t in _flatten(th_args, [], torch.Tensor) if t.requires_grad
             and t.dtype in (torch.float64, torch.complex128)]
    if not th_in:
        raise h.Skip("no input requires grad")
    rng = np.random.default_rng(1)
    th_t, nd_t = _pair([_random_like(t, rng) for t in th_in])
    with th_fwad.dual_level():
        th_dual = _dualize(th_args, torch, th_fwad, list(th_t), torch.Tensor)
        try:
            th_out = s.output_process_fn_grad(op.op(th_dual[0], *th_dual[1], **th_dual[2]))
            th_res = h.to_np(_tangents_of(th_out, th_fwad, torch.Tensor, torch.zeros_like))
        except Exception as e:
            raise h.Skip(f"torch's forward AD raises {type(e).__name__}") from e
    with nd_fwad.dual_level():
        nd_dual = _dualize(nd_args, ndgrad, nd_fwad, list(nd_t), ndgrad.Tensor)
        nd_out = h.nd_of(s.output_process_fn_grad)(
            h.nd_of(op.op)(nd_dual[0], *nd_dual[1], **nd_dual[2]))
        nd_res = h.to_np(_tangents_of(nd_out, nd_fwad, ndgrad.Tensor, ndgrad.zeros_like))
    h.assert_same(nd_res, th_res, "primal/tangent", tol_scale=10.0)


# --------------------------------------------------------------------------- vmap
B = 3


def _batched(x, lib):
    """x stacked B times along a new dim 0; floating copies scaled by (1 - 0.05 b)."""
    if x.is_floating_point() or x.is_complex():
        return lib.stack([x * (1 - 0.05 * b) for b in range(B)])
    return lib.stack([x] * B)


def _vmap_case(op, s, lib, fn):
    args = h._clone_sample(s)
    if lib is ndgrad:
        args = (h.to_nd(args[0]), h.to_nd(args[1]), h.to_nd(args[2]))
    cls = torch.Tensor if lib is torch else ndgrad.Tensor
    positional = [args[0], *args[1]]
    leaves = _flatten(positional, [], cls)
    if not leaves:
        raise h.Skip("no tensor argument")
    ids = [id(t) for t in leaves]

    def rebuild(x, it):
        if isinstance(x, cls) and id(x) in ids:
            return next(it)
        if isinstance(x, list):
            return [rebuild(v, it) for v in x]
        if isinstance(x, tuple):
            return tuple(rebuild(v, it) for v in x)
        return x

    def f(*tensors):
        it = iter(tensors)
        pos = rebuild(positional, it)
        return tuple(_flatten(fn(pos[0], *pos[1:], **args[2]), [], cls))

    batched = [_batched(t.detach(), lib) for t in leaves]
    return f, batched


def check_vmap(op, dtype, s):
    th_f, th_b = _vmap_case(op, s, torch, op.op)
    try:
        th_res = torch.func.vmap(th_f)(*th_b)
        if not th_res:
            raise h.Skip("no tensor output")
    except h.Skip:
        raise
    except Exception as e:
        raise h.Skip(f"torch's vmap refuses the sample ({type(e).__name__})") from e
    nd_f, nd_b = _vmap_case(op, s, ndgrad, h.nd_of(op.op))
    with ndgrad.no_grad():
        rows = [nd_f(*[b[i] for b in nd_b]) for i in range(B)]
        loop = [ndgrad.stack([r[k] for r in rows]) for k in range(len(rows[0]))]
        mapped = ndgrad.func.vmap(nd_f)(*nd_b)
    values = h._compares_values(op)
    h.assert_same(h.to_np(list(mapped)), h.to_np(loop), "vmap vs loop", values)
    h.assert_same(h.to_np(list(mapped)), h.to_np(list(th_res)), "vmap vs torch's vmap",
                  values, tol_scale=10.0)


# --------------------------------------------------------------------------- error_inputs
def check_errors(op, dtype, e, message=False):
    s = e.sample_input
    th_args = _args(s)
    torch.manual_seed(0)  # error inputs of random ops draw: the same stream on both sides
    try:
        op.op(th_args[0], *th_args[1], **th_args[2])
        raise h.Skip("torch 2.13 accepts this error input")
    except h.Skip:
        raise
    except Exception as err:
        if not isinstance(err, e.error_type):
            raise h.Skip(f"torch raises {type(err).__name__}, not the declared "
                         f"{e.error_type.__name__}") from err
    nd_args = _nd_args(s)  # a sample ndgrad cannot hold is a Skip, not ndgrad's error
    try:
        ndgrad.manual_seed(0)
        h.nd_of(op.op)(nd_args[0], *nd_args[1], **nd_args[2])
    except Exception as err:
        want = h._nd_class(e.error_type)
        assert isinstance(err, want), f"ndgrad raises {type(err).__name__}({err}) where " \
            f"torch raises {e.error_type.__name__} matching {e.error_regex!r}"
        if message and e.error_regex:
            assert re.search(e.error_regex, str(err)), \
                f"message {str(err)!r} does not match torch's {e.error_regex!r}"
        return
    raise AssertionError(f"ndgrad accepts an input torch refuses with "
                         f"{e.error_type.__name__} matching {e.error_regex!r}")


def check_messages(op, dtype, e):
    check_errors(op, dtype, e, message=True)


CHECKS = {
    "forward": check_forward,
    "method": lambda op, d, s: check_forward(op, d, s, "method"),
    "inplace": lambda op, d, s: check_forward(op, d, s, "inplace"),
    "grad": check_grad,
    "gradgrad": check_gradgrad,
    "fwad": check_fwad,
    "vmap": check_vmap,
    "errors": check_errors,
    "messages": check_messages,
}


def run_mode(mode, op, dtype, sample):
    CHECKS[mode](op, dtype, sample)
