"""The attention op of PyTorch's Autograd Onboarding Lab, written twice with ndgrad.

    attn(q, k, v):  x = q @ k.T,  a = tanh(x),  o = a @ v,  returns (o, a)

1. ``attn_composite``: a plain function of differentiable ops. Backward, double backward and
   forward mode come for free from the ops' rules.
2. ``Attention``: a custom ``autograd.Function`` with a hand-derived backward and jvp.

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

    python examples/attention.py
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
    for fn in (attn_composite, attn):
        assert gradcheck(fn, (q, k, v), check_forward_ad=fwd)
        assert gradgradcheck(fn, (q, k, v))
    o1, a1 = attn_composite(q, k, v)
    o2, a2 = attn(q, k, v)
    assert torch.allclose(o1, o2) and torch.allclose(a1, a2)
    go, ga = torch.randn_like(o1), torch.randn_like(a1)
    g1 = torch.autograd.grad((o1, a1), (q, k, v), (go, ga))
    g2 = torch.autograd.grad((o2, a2), (q, k, v), (go, ga))
    assert all(torch.allclose(x, y) for x, y in zip(g1, g2))
    return {"grad_fn": o2.grad_fn.name(), "forward_ad_checked": fwd}


if __name__ == "__main__":
    info = check()
    print(f"attention: gradcheck and gradgradcheck pass for the composite and the custom "
          f"Function ({info['grad_fn']}); forward mode checked: {info['forward_ad_checked']}")
