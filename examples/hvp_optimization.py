"""Second-order optimisation with Hessian-vector products.

Newton-CG on L2-regularised logistic regression: every Newton step solves ``H d = -g`` with
conjugate gradients, where each ``H v`` is a double backward (``autograd.grad`` of ``g . v``
with ``create_graph=True`` on the first pass), so the Hessian is never formed. The HVP is
checked against ``autograd.functional.hvp`` and a finite difference of gradients, and the
Newton iterates are compared with plain gradient descent. Runs unchanged on torch with the
same numbers.

    python examples/hvp_optimization.py [--newton-steps 6] [--features 20] [--samples 400]
"""

import argparse

import ndgrad as torch
import ndgrad.nn.functional as F


def make_problem(samples, features, generator):
    X = torch.randn(samples, features, generator=generator, dtype=torch.float64)
    w_true = torch.randn(features, generator=generator, dtype=torch.float64)
    p = torch.sigmoid(X.matmul(w_true))
    y = (torch.rand(samples, generator=generator, dtype=torch.float64) < p).double()
    return X, y


def loss_fn(w, X, y, lam):
    return F.binary_cross_entropy_with_logits(X.matmul(w), y) + 0.5 * lam * w.dot(w)


def hvp(grad, w, v):
    """H v for the Hessian of the loss whose gradient graph is ``grad`` (create_graph=True)."""
    (hv,) = torch.autograd.grad(grad, w, grad_outputs=v, retain_graph=True)
    return hv


def conjugate_gradient(apply_h, b, iters, tol=1e-10):
    x = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rs = r.dot(r)
    for _ in range(iters):
        hp = apply_h(p)
        alpha = rs / p.dot(hp)
        x = x + alpha * p
        r = r - alpha * hp
        rs_new = r.dot(r)
        if rs_new.sqrt() < tol:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def newton_cg(X, y, lam, steps, cg_iters):
    w = torch.zeros(X.shape[1], dtype=torch.float64, requires_grad=True)
    history = []
    for _ in range(steps):
        loss = loss_fn(w, X, y, lam)
        (g,) = torch.autograd.grad(loss, w, create_graph=True)
        d = conjugate_gradient(lambda v: hvp(g, w, v), -g.detach(), cg_iters)
        # backtracking line search on the true loss
        t = 1.0
        with torch.no_grad():
            while loss_fn(w + t * d, X, y, lam) > loss + 1e-4 * t * g.dot(d) and t > 1e-8:
                t *= 0.5
            w.add_(t * d)
        history.append(loss.item())
    history.append(loss_fn(w, X, y, lam).item())
    return w, history


def gradient_descent(X, y, lam, steps, lr):
    w = torch.zeros(X.shape[1], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([w], lr=lr)
    history = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(w, X, y, lam)
        loss.backward()
        opt.step()
        history.append(loss.item())
    return w, history


def check_hvp(X, y, lam, generator):
    """Our double-backward HVP against autograd.functional.hvp and finite differences."""
    w = torch.randn(X.shape[1], dtype=torch.float64, generator=generator, requires_grad=True)
    v = torch.randn(X.shape[1], dtype=torch.float64, generator=generator)
    (g,) = torch.autograd.grad(loss_fn(w, X, y, lam), w, create_graph=True)
    ours = hvp(g, w, v)
    _, ref = torch.autograd.functional.hvp(lambda w_: loss_fn(w_, X, y, lam), w.detach(), v)
    eps = 1e-6
    wp = (w.detach() + eps * v).requires_grad_()
    wm = (w.detach() - eps * v).requires_grad_()
    (gp,) = torch.autograd.grad(loss_fn(wp, X, y, lam), wp)
    (gm,) = torch.autograd.grad(loss_fn(wm, X, y, lam), wm)
    fd = (gp - gm) / (2 * eps)
    return (ours - ref).abs().max().item(), (ours - fd).abs().max().item()


def main(argv=None):
    p = argparse.ArgumentParser(description="Newton-CG with Hessian-vector products.")
    p.add_argument("--samples", type=int, default=400)
    p.add_argument("--features", type=int, default=20)
    p.add_argument("--lam", type=float, default=1e-2)
    p.add_argument("--newton-steps", type=int, default=6)
    p.add_argument("--cg-iters", type=int, default=20)
    p.add_argument("--gd-steps", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    gen = torch.Generator().manual_seed(args.seed)
    X, y = make_problem(args.samples, args.features, gen)
    err_functional, err_fd = check_hvp(X, y, args.lam, gen)
    print(f"HVP vs autograd.functional.hvp: max |diff| = {err_functional:.2e}")
    print(f"HVP vs finite differences:      max |diff| = {err_fd:.2e}")

    w_newton, newton_hist = newton_cg(X, y, args.lam, args.newton_steps, args.cg_iters)
    _, gd_hist = gradient_descent(X, y, args.lam, args.gd_steps, lr=0.5)
    for i, loss in enumerate(newton_hist):
        print(f"newton-cg step {i}: loss {loss:.10f}")
    print(f"gradient descent after {args.gd_steps} steps: loss {gd_hist[-1]:.10f}")
    (g,) = torch.autograd.grad(loss_fn(w_newton, X, y, args.lam), w_newton)
    print(f"final gradient norm (newton-cg): {g.norm().item():.2e}")
    return {"newton": newton_hist, "gd": gd_hist, "hvp_errors": (err_functional, err_fd),
            "grad_norm": g.norm().item()}


if __name__ == "__main__":
    main()
