"""The attention op of PyTorch's Autograd Onboarding Lab, written twice with ndgrad.

    attn(q, k, v):  x = q @ k.T,  a = tanh(x),  o = a @ v,  returns (o, a)

1. ``attn_composite``: a plain function of differentiable ops. Backward, double backward and
   forward mode come for free from the ops' rules.
2. ``Attention``: a custom ``autograd.Function`` with a hand-derived backward and jvp.
3. ``make_attention_primitive()``: the same formulas as a primitive of ndgrad's op registry
   (a NumPy kernel plus VJP and JVP rules) -- the route for a built-in op, the equivalent of
   the lab's native function with a ``derivatives.yaml`` entry. Only on ndgrad.

Derivation (shapes q: (n, d), k: (m, d), v: (m, p); ``go``/``ga`` the output gradients):

    backward:   da = ga + go @ v.T         (a feeds o and is itself an output)
                dx = da * (1 - a²)         (tanh' = 1 - tanh²)
                gq = dx @ k,   gk = dx.T @ q,   gv = a.T @ go
    jvp:        tx = tq @ k.T + q @ tk.T
                ta = (1 - a²) * tx
                to = ta @ v + a @ tv

The backward is written in ndgrad ops on saved tensors (not on raw arrays), so it is itself
recorded under ``create_graph=True`` and gradgradcheck passes. Run this file to check both
versions with gradcheck and gradgradcheck and against each other:

    PYTHONPATH=. python examples/attention.py   (from the repository root)
"""

import ndgrad as torch
from ndgrad.autograd import Function, gradcheck, gradgradcheck


def attn_composite(q, k, v):
    """The attention op as a composite of differentiable ops."""
    x = q @ k.T
    a = torch.tanh(x)
    o = a @ v
    return o, a


class Attention(Function):
    """The attention op with a hand-written backward (and jvp for forward mode)."""

    @staticmethod
    def forward(ctx, q, k, v):
        if q.dim() != 2 or k.dim() != 2 or v.dim() != 2:
            raise ValueError("attn expects 2-D q, k and v")
        if q.shape[1] != k.shape[1] or k.shape[0] != v.shape[0]:
            raise ValueError(f"attn: incompatible shapes q {tuple(q.shape)}, "
                             f"k {tuple(k.shape)}, v {tuple(v.shape)}")
        a = torch.tanh(q @ k.T)
        o = a @ v
        # q, k, v are inputs and a is an output: all are safe to save (version-checked, and
        # a unpacks with this node as grad_fn, so double backward sees its dependence on q, k).
        ctx.save_for_backward(q, k, v, a)
        ctx.save_for_forward(q, k, v, a)
        return o, a

    @staticmethod
    def backward(ctx, go, ga):
        q, k, v, a = ctx.saved_tensors
        gq = gk = gv = None
        da = ga + go @ v.T
        dx = da * (1 - a * a)
        if ctx.needs_input_grad[0]:
            gq = dx @ k
        if ctx.needs_input_grad[1]:
            gk = dx.T @ q
        if ctx.needs_input_grad[2]:
            gv = a.T @ go
        return gq, gk, gv

    @staticmethod
    def jvp(ctx, tq, tk, tv):
        q, k, v, a = ctx.saved_tensors
        tx = None
        if tq is not None:
            tx = tq @ k.T
        if tk is not None:
            tx = q @ tk.T if tx is None else tx + q @ tk.T
        ta = torch.zeros_like(a) if tx is None else (1 - a * a) * tx
        to = ta @ v
        if tv is not None:
            to = to + a @ tv
        return to, ta


def attn(q, k, v):
    """The custom-Function version, called like the composite one."""
    return Attention.apply(q, k, v)


_PRIMITIVE = None


def make_attention_primitive():
    """Declare attn as a registry primitive named "onboarding_attn" (created once).

    The forward kernel works on NumPy arrays; the rules are written in ndgrad ops, so the
    primitive supports double backward and forward mode like every built-in op.
    """
    global _PRIMITIVE
    if _PRIMITIVE is not None:
        return _PRIMITIVE
    import numpy as np

    from ndgrad._ops.registry import primitive

    def kernel(q, k, v, params):
        a = np.tanh(q @ k.T)
        return a @ v, a

    # Saved: the three inputs and output 1 (a); "out1" is kept without a reference cycle.
    op = primitive("onboarding_attn", kernel, "OnboardingAttnBackward0", n_out=2,
                   save=((0, None), (1, None), (2, None), ("out1", None)))

    @op.def_vjp
    def _(ctx, gs):
        q, k, v, a = ctx.saved
        # One entry per output that received a gradient so far (None, or missing at the end).
        go, ga = (tuple(gs) + (None, None))[:2]
        needs = ctx._next
        da = ga
        if go is not None:
            da = go @ v.T if da is None else da + go @ v.T
        if da is None:
            return None, None, None
        dx = da * (1 - a * a)
        gq = dx @ k if needs[0] else None
        gk = dx.T @ q if needs[1] else None
        gv = a.T @ go if needs[2] and go is not None else None
        return gq, gk, gv

    @op.def_jvp
    def _(ctx, tq, tk, tv):
        q, k, v = ctx.inputs
        a = ctx.outputs[1]
        tx = None
        if tq is not None:
            tx = tq @ k.T
        if tk is not None:
            tx = q @ tk.T if tx is None else tx + q @ tk.T
        ta = torch.zeros_like(a) if tx is None else (1 - a * a) * tx
        to = ta @ v
        if tv is not None:
            to = to + a @ tv
        return to, ta

    _PRIMITIVE = op
    return op


def attn_primitive(q, k, v):
    """The registry-primitive version (``make_attention_primitive`` declares it)."""
    return make_attention_primitive().call(q, k, v)


def _forward_ad_available():
    fw = getattr(torch.autograd, "forward_ad", None)
    return fw is not None and hasattr(fw, "dual_level") and hasattr(fw, "make_dual")


def check(n=3, m=4, d=2, p=5, seed=0):
    """gradcheck and gradgradcheck both versions; compare their outputs and gradients."""
    torch.manual_seed(seed)
    q = torch.randn(n, d, dtype=torch.float64, requires_grad=True)
    k = torch.randn(m, d, dtype=torch.float64, requires_grad=True)
    v = torch.randn(m, p, dtype=torch.float64, requires_grad=True)
    fwd = _forward_ad_available()
    versions = [attn_composite, attn]
    if torch.__name__ == "ndgrad":
        versions.append(attn_primitive)
    for fn in versions:
        assert gradcheck(fn, (q, k, v), check_forward_ad=fwd)
        assert gradgradcheck(fn, (q, k, v))
    o1, a1 = attn_composite(q, k, v)
    go, ga = torch.randn_like(o1), torch.randn_like(a1)
    g1 = torch.autograd.grad((o1, a1), (q, k, v), (go, ga))
    for fn in versions[1:]:
        o2, a2 = fn(q, k, v)
        assert torch.allclose(o1, o2) and torch.allclose(a1, a2)
        g2 = torch.autograd.grad((o2, a2), (q, k, v), (go, ga))
        assert all(torch.allclose(x, y) for x, y in zip(g1, g2))
    return {"grad_fn": attn(q, k, v)[0].grad_fn.name(), "forward_ad_checked": fwd,
            "versions": len(versions)}


if __name__ == "__main__":
    info = check()
    print(f"attention: gradcheck and gradgradcheck pass for {info['versions']} versions "
          f"(composite, custom Function {info['grad_fn']}, registry primitive); forward mode "
          f"checked: {info['forward_ad_checked']}")
