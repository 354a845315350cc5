"""Representative uses of third-party pure-torch libraries, run by tests/test_ecosystem.py.

The same file runs twice: as ``python _ecosystem_uses.py LIB...`` (real torch) and as
``python -m ndgrad.run _ecosystem_uses.py LIB...`` (the name ``torch`` bound to ndgrad). Each
library's use is a function below returning a flat list of floats: losses, parameters,
gradients along the way. The script prints one JSON object, library name to that list, or to
``{"error": traceback}`` when the use raised, so one failing library never hides the others.
The code is ours, written for these tests, not taken from the libraries' own suites.
"""

import json
import sys
import traceback

import torch


def flat(*tensors):
    """Every element of the given tensors (or lists of them), as Python floats."""
    out = []
    for t in tensors:
        if isinstance(t, (list, tuple)):
            out += flat(*t)
        elif isinstance(t, torch.Tensor):
            out += [float(v) for v in t.detach().reshape(-1).tolist()]
        else:
            out.append(float(t))
    return out


def small_regression(seed=0):
    """A two-layer float64 net and a batch: the common model of the optimizer-style uses."""
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    model.double()
    x = torch.linspace(-1, 1, 24, dtype=torch.float64).reshape(8, 3)
    y = (x ** 2).sum(1, keepdim=True) - x[:, :1]
    return model, x, y


def use_torch_optimizer():
    import torch_optimizer as optim
    makers = [
        lambda p: optim.AccSGD(p, lr=0.1), lambda p: optim.AdaBelief(p, lr=0.05),
        lambda p: optim.AdaBound(p, lr=0.05), lambda p: optim.AdaMod(p, lr=0.05),
        lambda p: optim.AdamP(p, lr=0.05), lambda p: optim.AggMo(p, lr=0.05),
        lambda p: optim.Apollo(p, lr=0.05), lambda p: optim.DiffGrad(p, lr=0.05),
        lambda p: optim.Lamb(p, lr=0.05), lambda p: optim.MADGRAD(p, lr=0.05),
        lambda p: optim.NovoGrad(p, lr=0.05), lambda p: optim.PID(p, lr=0.05),
        lambda p: optim.QHAdam(p, lr=0.05), lambda p: optim.QHM(p, lr=0.05),
        lambda p: optim.RAdam(p, lr=0.05), lambda p: optim.SGDP(p, lr=0.05),
        lambda p: optim.SGDW(p, lr=0.05), lambda p: optim.SWATS(p, lr=0.05),
        lambda p: optim.Yogi(p, lr=0.05), lambda p: optim.Shampoo(p, lr=0.05, epsilon=0.1),
        lambda p: optim.A2GradExp(p),
    ]
    out = []
    for make in makers:
        model, x, y = small_regression()
        opt = make(model.parameters())
        for _ in range(4):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            out.append(loss.item())
        out += flat(list(model.parameters()))
    # Adahessian needs create_graph=True: second derivatives through the net
    model, x, y = small_regression()
    opt = optim.Adahessian(model.parameters(), lr=0.1)
    torch.manual_seed(1)  # its Hutchinson probe vectors are drawn with torch's generator
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward(create_graph=True)
        opt.step()
        out.append(loss.item())
    return out + flat(list(model.parameters()))


def use_einops():
    from einops import einsum, pack, rearrange, reduce, repeat, unpack
    from einops.layers.torch import EinMix, Rearrange, Reduce
    torch.manual_seed(0)
    x = torch.randn(2, 6, 4, 4, dtype=torch.float64, requires_grad=True)
    a = rearrange(x, "b (g c) h w -> b g (h w) c", g=2)
    r = reduce(a, "b g hw c -> b c", "max") + reduce(a, "b g hw c -> b g", "mean").sum()
    t = repeat(x[:, 0], "b h w -> b h w k", k=3)
    packed, ps = pack([x.flatten(2), t.flatten(1)], "b *")
    parts = unpack(packed, ps, "b *")
    e = einsum(a, a, "b g n c, b g m c -> b g n m")
    total = r.sum() + (parts[1] ** 2).sum() + e.sin().sum()
    total.backward()
    net = torch.nn.Sequential(
        Rearrange("b (t c) -> b t c", c=4),
        EinMix("b t c -> b t co", weight_shape="c co", bias_shape="co", c=4, co=5),
        Reduce("b t co -> b co", "mean"),
    ).double()
    z = torch.linspace(-2, 2, 24, dtype=torch.float64).reshape(2, 12)
    out = net(z)
    out.pow(2).sum().backward()
    grads = [p.grad for p in net.parameters()]
    return flat(r, e, total, x.grad, out, grads)


def use_torchdiffeq():
    from torchdiffeq import odeint, odeint_adjoint

    class Field(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2).double()

        def forward(self, t, y):
            return torch.tanh(self.lin(y)) - 0.1 * y * t

    torch.manual_seed(0)
    f = Field()
    y0 = torch.tensor([1.0, -0.5], dtype=torch.float64, requires_grad=True)
    t = torch.linspace(0, 1, 5, dtype=torch.float64)
    out = []
    for method, opts in [("dopri5", {}), ("rk4", {"step_size": 0.1}), ("bosh3", {}),
                         ("implicit_adams", {"step_size": 0.1})]:
        ys = odeint(f, y0, t, method=method, options=opts, rtol=1e-7, atol=1e-9)
        g = torch.autograd.grad(ys[-1].sum(), [y0, *f.parameters()])
        out += flat(ys, g)
    ys = odeint_adjoint(f, y0, t, method="dopri5", rtol=1e-7, atol=1e-9)
    g = torch.autograd.grad(ys[-1].pow(2).sum(), [y0, *f.parameters()])
    return out + flat(ys, g)


def use_torchsde():
    import torchsde

    class SDE(torch.nn.Module):
        noise_type, sde_type = "diagonal", "ito"

        def __init__(self):
            super().__init__()
            self.theta = torch.nn.Parameter(torch.tensor([0.5, 1.0], dtype=torch.float64))
            self.sigma = torch.nn.Parameter(torch.tensor([0.2, 0.3], dtype=torch.float64))

        def f(self, t, y):
            return -self.theta * y + torch.sin(t)

        def g(self, t, y):
            return self.sigma * torch.cos(y)

    sde = SDE()
    y0 = torch.full((3, 2), 0.5, dtype=torch.float64)
    ts = torch.linspace(0, 1, 4, dtype=torch.float64)
    out = []
    for method in ["euler", "milstein", "srk"]:
        bm = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(3, 2), dtype=torch.float64,
                                       entropy=1234, levy_area_approximation="space-time")
        ys = torchsde.sdeint(sde, y0, ts, bm=bm, method=method, dt=0.05)
        g = torch.autograd.grad(ys[-1].sum(), list(sde.parameters()))
        out += flat(ys, g)
    bm = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(3, 2), dtype=torch.float64,
                                   entropy=7)
    ys = torchsde.sdeint_adjoint(sde, y0, ts, bm=bm, method="euler", dt=0.05)
    g = torch.autograd.grad(ys[-1].pow(2).sum(), list(sde.parameters()))
    return out + flat(ys, g)


def use_torchmin():
    from torchmin import minimize

    def rosen(x):
        return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()

    x0 = torch.tensor([-1.2, 1.0, 0.5, -0.3], dtype=torch.float64)
    out = []
    for method in ["bfgs", "l-bfgs", "newton-cg", "newton-exact", "trust-ncg", "trust-exact",
                   "dogleg"]:
        res = minimize(rosen, x0, method=method, max_iter=40)
        out += flat(res.x, res.fun, res.nit, res.nfev)
    # (nonlinear CG on Rosenbrock multiplies rounding differences by ~10 per iteration: after
    # 8 iterations the last-bit differences of dot products are still below 1e-9)
    res = minimize(rosen, x0, method="cg", max_iter=8)
    return out + flat(res.x, res.fun)


def use_torch_ema():
    from torch_ema import ExponentialMovingAverage
    model, x, y = small_regression()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ema = ExponentialMovingAverage(model.parameters(), decay=0.9)
    out = []
    for _ in range(5):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        ema.update()
        out.append(loss.item())
    with ema.average_parameters():
        out.append(float(torch.nn.functional.mse_loss(model(x), y)))
    out.append(float(torch.nn.functional.mse_loss(model(x), y)))
    state = ema.state_dict()
    other, _, _ = small_regression(seed=1)
    ema.copy_to(other.parameters())
    ema.store()
    ema.copy_to()
    averaged = flat(list(model.parameters()))
    ema.restore()
    return out + averaged + flat(list(model.parameters()), list(other.parameters()),
                                 state["shadow_params"], state["num_updates"])


def use_geotorch():
    import geotorch
    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 4).double()
    geotorch.orthogonal(layer, "weight")
    spd = torch.nn.Linear(3, 3).double()
    geotorch.positive_definite(spd, "weight")
    sph = torch.nn.Linear(3, 2).double()
    geotorch.sphere(sph, "weight")
    params = [*layer.parameters(), *spd.parameters(), *sph.parameters()]
    opt = torch.optim.SGD(params, lr=0.1)
    x = torch.linspace(-1, 1, 12, dtype=torch.float64).reshape(3, 4)
    out = []
    for _ in range(3):
        opt.zero_grad()
        loss = layer(x).pow(2).sum() + spd(x[:, :3]).sum() + sph(x[:, :3]).abs().sum()
        loss.backward()
        opt.step()
        out.append(loss.item())
    w = layer.weight
    return out + flat(w, w @ w.T, spd.weight, torch.linalg.eigvalsh(spd.weight), sph.weight)


def use_higher():
    import higher
    model, x, y = small_regression()
    meta_opt = torch.optim.Adam(model.parameters(), lr=0.01)
    inner_opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    out = []
    for _ in range(2):
        meta_opt.zero_grad()
        with higher.innerloop_ctx(model, inner_opt, copy_initial_weights=False) as (fmodel, diffopt):
            for _ in range(3):
                diffopt.step(torch.nn.functional.mse_loss(fmodel(x), y))
            meta_loss = torch.nn.functional.mse_loss(fmodel(x * 0.5), y)
            meta_loss.backward()
            out.append(float(meta_loss))
        meta_opt.step()
    return out + flat(list(model.parameters()))


USES = {"torch_optimizer": use_torch_optimizer, "einops": use_einops,
        "torchdiffeq": use_torchdiffeq, "torchsde": use_torchsde, "torchmin": use_torchmin,
        "torch_ema": use_torch_ema, "geotorch": use_geotorch, "higher": use_higher}


def main(names):
    results = {}
    for name in names or USES:
        try:
            results[name] = USES[name]()
        except Exception:
            results[name] = {"error": traceback.format_exc()}
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
