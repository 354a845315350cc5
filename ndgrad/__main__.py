"""``python -m ndgrad``: the tour. Train a small classifier on two interleaved spirals.

What it does, in order:

1. generates the data set itself (two interleaved spirals, seeded, no download);
2. checks a custom ``autograd.Function`` (a linear layer written by hand) with ``gradcheck``;
3. trains an MLP whose first layer is that Function inside an ``nn.Module``, with Adam,
   a cosine learning-rate schedule and a DataLoader, showing a progress bar with loss and
   accuracy;
4. writes the autograd graph of one training step (Graphviz DOT), the loss curve (a PNG when
   matplotlib is importable, always a CSV), the decision regions (PNG, matplotlib only) and a
   checkpoint (``ndgrad.save``), and prints where they went.

Options: ``--hidden`` (width of the hidden layers), ``--epochs``, ``--out`` (output folder,
default ``ndgrad_out``), ``--points`` (per spiral), ``--seed``. The defaults finish in a few
seconds.

``--nproc N`` trains data-parallel on N processes: the command relaunches itself through the
MPI launcher (``ndgrad.distributed.run``); every rank wraps the model in
DistributedDataParallel and reads its share of each epoch through a DistributedSampler (the
global batch stays ``--batch-size``); rank 0 prints, checks that the replicas ended identical,
and writes the artifacts. Needs the ``distributed`` extra (mpi4py and an MPI runtime).
"""

import argparse
import math
import os
import sys
import time

import ndgrad
import ndgrad.distributed as dist
import ndgrad.nn as nn
import ndgrad.nn.functional as F
from ndgrad.distributed.run import launch_env, mpiexec_command
from ndgrad.nn.parallel import DistributedDataParallel
from ndgrad.utils.data import DataLoader, DistributedSampler, TensorDataset


# ------------------------------------------------------------------------ the custom Function
class LinearFunction(ndgrad.autograd.Function):
    """``y = x @ W^T + b`` with a hand-written backward (the seed example of the project)."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x.matmul(weight.t()) + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_out.matmul(weight)
        if ctx.needs_input_grad[1]:
            grad_w = grad_out.t().matmul(x)
        if ctx.needs_input_grad[2]:
            grad_b = grad_out.sum(0)
        return grad_x, grad_w, grad_b


class CustomLinear(nn.Module):
    """A Linear layer whose forward and backward are the custom Function above."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(ndgrad.empty(out_features, in_features))
        self.bias = nn.Parameter(ndgrad.empty(out_features))
        bound = 1.0 / math.sqrt(in_features)
        nn.init.uniform_(self.weight, -bound, bound)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}"


class SpiralNet(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.inp = CustomLinear(2, hidden)
        self.body = nn.Sequential(nn.Tanh(), nn.Linear(hidden, hidden), nn.ReLU(),
                                  nn.Linear(hidden, 2))

    def forward(self, x):
        return self.body(self.inp(x))


# ------------------------------------------------------------------------ data
def two_spirals(points, noise=0.15, generator=None):
    """``2 * points`` samples on two interleaved spirals, labels 0 and 1, shuffled."""
    t = ndgrad.rand(points, 1, generator=generator).sqrt() * (3 * math.pi)
    xs, ys = [], []
    for label, sign in ((0, 1.0), (1, -1.0)):
        arm = ndgrad.cat([t * ndgrad.cos(t), t * ndgrad.sin(t)], dim=1) * sign
        arm = arm + noise * ndgrad.randn(points, 2, generator=generator)
        xs.append(arm / (3 * math.pi))
        ys.append(ndgrad.full((points,), label, dtype=ndgrad.int64))
    x, y = ndgrad.cat(xs), ndgrad.cat(ys)
    perm = ndgrad.randperm(2 * points, generator=generator)
    return x[perm], y[perm]


# ------------------------------------------------------------------------ output helpers
class ProgressBar:
    """A one-line text progress bar (``\\r``-updated on a terminal, one line per update
    otherwise)."""

    def __init__(self, total, width=30, stream=None):
        stream = sys.stdout if stream is None else stream
        self.total, self.width, self.stream = total, width, stream
        self.tty = getattr(stream, "isatty", lambda: False)()
        self.start = time.perf_counter()

    def update(self, done, text):
        filled = int(self.width * done / self.total)
        bar = "#" * filled + "-" * (self.width - filled)
        secs = time.perf_counter() - self.start
        line = f"epoch {done:>3}/{self.total} [{bar}] {text} {secs:5.1f}s"
        if self.tty:
            self.stream.write("\r" + line)
            if done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def write_dot(loss, model, path):
    """The backward graph of ``loss`` in DOT (via autograd.graph.to_dot when available)."""
    to_dot = getattr(ndgrad.autograd.graph, "to_dot", None)
    if to_dot is not None:
        src = to_dot(loss, params=dict(model.named_parameters()))
    else:
        src = _minimal_dot(loss)
    with open(path, "w") as fh:
        fh.write(src)
    return path


def _minimal_dot(loss):
    lines = ["digraph backward {", "  rankdir=BT;"]
    seen, stack = set(), [loss.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        lines.append(f'  n{id(fn)} [label="{fn.name()}"];')
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                lines.append(f"  n{id(nxt)} -> n{id(fn)};")
                stack.append(nxt)
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_curves(history, out):
    """Always a CSV; PNG pictures too when matplotlib is importable. Returns the paths."""
    paths = []
    csv_path = os.path.join(out, "loss_curve.csv")
    with open(csv_path, "w") as fh:
        fh.write("epoch,loss,train_accuracy,lr\n")
        for e, (loss, acc, lr) in enumerate(history, 1):
            fh.write(f"{e},{loss:.6f},{acc:.4f},{lr:.6g}\n")
    paths.append(csv_path)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:  # noqa: BLE001 - any failure to import means "no pictures"
        return paths, None
    fig, ax1 = plt.subplots(figsize=(6, 4))
    epochs = range(1, len(history) + 1)
    ax1.plot(epochs, [h[0] for h in history], color="tab:blue", label="loss")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("cross-entropy loss", color="tab:blue")
    ax2 = ax1.twinx()
    ax2.plot(epochs, [h[1] for h in history], color="tab:orange", label="accuracy")
    ax2.set_ylabel("train accuracy", color="tab:orange")
    ax1.set_title("ndgrad: two spirals")
    fig.tight_layout()
    png = os.path.join(out, "loss_curve.png")
    fig.savefig(png, dpi=100)
    plt.close(fig)
    paths.append(png)
    return paths, plt


def write_regions(plt, model, x, y, out, steps=120):
    with ndgrad.no_grad():
        g = ndgrad.linspace(-1.3, 1.3, steps)
        gx, gy = ndgrad.meshgrid(g, g, indexing="xy")
        grid = ndgrad.stack([gx.reshape(-1), gy.reshape(-1)], dim=1)
        pred = model(grid).argmax(1).reshape(steps, steps)
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.imshow(pred.numpy(), origin="lower", extent=(-1.3, 1.3, -1.3, 1.3), alpha=0.3,
              cmap="coolwarm")
    ax.scatter(x[:, 0].numpy(), x[:, 1].numpy(), c=y.numpy(), s=6, cmap="coolwarm")
    ax.set_title("decision regions")
    path = os.path.join(out, "decision_regions.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# ------------------------------------------------------------------------ main
def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m ndgrad",
                                description="Train a small classifier on two spirals with "
                                            "ndgrad and write the artifacts.")
    p.add_argument("--hidden", type=int, default=64, help="hidden layer width (default 64)")
    p.add_argument("--epochs", type=int, default=40, help="training epochs (default 40)")
    p.add_argument("--out", default="ndgrad_out", help="output folder (default ndgrad_out/)")
    p.add_argument("--points", type=int, default=400, help="points per spiral (default 400)")
    p.add_argument("--batch-size", type=int, default=64, help="batch size (default 64)")
    p.add_argument("--lr", type=float, default=0.02, help="Adam learning rate (default 0.02)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--nproc", type=int, default=1,
                   help="train data-parallel on this many processes (default 1)")
    args = p.parse_args(argv)
    for name in ("hidden", "epochs", "points", "batch_size", "nproc"):
        if getattr(args, name) <= 0:
            p.error(f"--{name.replace('_', '-')} must be positive")
    return args


def graph_tour():
    """Build a small graph, print its grad_fn chain and gradients, check them numerically."""
    x = ndgrad.tensor([0.5, -1.0, 2.0], dtype=ndgrad.float64, requires_grad=True)
    w = ndgrad.tensor([1.5, 0.3, -0.7], dtype=ndgrad.float64, requires_grad=True)

    def f(x, w):
        return (ndgrad.tanh(x * w + 1.0) * x.exp()).sum()

    y = f(x, w)
    print(f"y = (tanh(x * w + 1) * exp(x)).sum() = {y.item():.6f}")
    print("grad_fn chain:")
    seen, stack = set(), [(y.grad_fn, 1)]
    while stack:
        node, depth = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        print("  " * depth + node.name())
        stack.extend((nxt, depth + 1) for nxt, _ in reversed(node.next_functions))
    y.backward()
    eps = 1e-6
    worst = 0.0
    for t in (x, w):
        for i in range(t.numel()):
            with ndgrad.no_grad():
                old = t[i].item()
                t[i] = old + eps
                hi = f(x, w).item()
                t[i] = old - eps
                lo = f(x, w).item()
                t[i] = old
            worst = max(worst, abs((hi - lo) / (2 * eps) - t.grad[i].item()))
    print(f"dy/dx = {x.grad.tolist()}")
    print(f"dy/dw = {w.grad.tolist()}")
    print(f"largest difference from central finite differences: {worst:.1e} "
          f"({'passed' if worst < 1e-6 else 'FAILED'})")
    return worst < 1e-6


def check_custom_function():
    """gradcheck the hand-written backward against finite differences (float64)."""
    gen = ndgrad.Generator().manual_seed(1)
    x = ndgrad.randn(4, 3, dtype=ndgrad.float64, generator=gen, requires_grad=True)
    w = ndgrad.randn(5, 3, dtype=ndgrad.float64, generator=gen, requires_grad=True)
    b = ndgrad.randn(5, dtype=ndgrad.float64, generator=gen, requires_grad=True)
    return ndgrad.autograd.gradcheck(LinearFunction.apply, (x, w, b), eps=1e-6, atol=1e-4)


def launch_ranks(args, argv):
    """Run this command again on ``args.nproc`` ranks through the MPI launcher."""
    import subprocess
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = mpiexec_command(args.nproc, [sys.executable, "-m", "ndgrad.distributed._bootstrap",
                                       "--module", "ndgrad", *argv])
    env = launch_env()
    env["NDGRAD_DEMO_RANKS"] = str(args.nproc)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return subprocess.call(cmd, env=env)


def replicas_identical(model, dist):
    """True when every rank holds the same parameters (compared by an all-reduce MAX/MIN)."""
    flat = ndgrad.cat([p.detach().reshape(-1) for p in model.parameters()])
    hi, lo = flat.clone(), flat.clone()
    dist.all_reduce(hi, op=dist.ReduceOp.MAX)
    dist.all_reduce(lo, op=dist.ReduceOp.MIN)
    return bool((hi == lo).all())


def main(argv=None):
    args = parse_args(argv)
    distributed = args.nproc > 1
    if distributed and os.environ.get("NDGRAD_DEMO_RANKS") != str(args.nproc):
        return launch_ranks(args, argv)
    if distributed:
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
        if rank != 0:
            sys.stdout = open(os.devnull, "w")
    os.makedirs(args.out, exist_ok=True)
    ndgrad.manual_seed(args.seed)
    gen = ndgrad.Generator().manual_seed(args.seed)
    t0 = time.perf_counter()

    x, y = two_spirals(args.points, generator=gen)
    n_test = len(x) // 5
    x_test, y_test, x_train, y_train = x[:n_test], y[:n_test], x[n_test:], y[n_test:]
    print(f"ndgrad {ndgrad.__version__}: two spirals, {len(x_train)} training and {n_test} "
          f"test points")

    tour_ok = graph_tour()
    ok = check_custom_function()
    print(f"gradcheck of the custom LinearFunction (float64): {'passed' if ok else 'FAILED'}")

    model = SpiralNet(args.hidden)
    print(model)
    train_set = TensorDataset(x_train, y_train)
    if distributed:
        sampler = DistributedSampler(train_set, seed=args.seed)
        loader = DataLoader(train_set, batch_size=max(1, args.batch_size // world),
                            sampler=sampler)
        net = DistributedDataParallel(model)
        print(f"data-parallel on {world} ranks (MPI): DistributedDataParallel, "
              f"{len(sampler)} samples and batches of {loader.batch_size} per rank")
    else:
        loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, generator=gen)
        net = model
    opt = ndgrad.optim.Adam(model.parameters(), lr=args.lr)
    sched = ndgrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs,
                                                        eta_min=args.lr / 20)
    bar = ProgressBar(args.epochs)
    history = []
    dot_path = os.path.join(args.out, "autograd_graph.dot")
    for epoch in range(1, args.epochs + 1):
        model.train()
        if distributed:
            sampler.set_epoch(epoch)
        total, correct, loss_sum = 0, 0, 0.0
        for xb, yb in loader:
            logits = net(xb)
            loss = F.cross_entropy(logits, yb)
            if epoch == 1 and total == 0 and (not distributed or rank == 0):
                write_dot(loss, model, dot_path)        # the graph of one training step
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_sum += loss.item() * len(yb)
            correct += int((logits.argmax(1) == yb).sum().item())
            total += len(yb)
        if distributed:             # the epoch's figures over all ranks
            sums = ndgrad.tensor([loss_sum, float(correct), float(total)], dtype=ndgrad.float64)
            dist.all_reduce(sums)
            loss_sum, correct, total = sums[0].item(), int(sums[1].item()), int(sums[2].item())
        lr = opt.param_groups[0]["lr"]
        sched.step()
        history.append((loss_sum / total, correct / total, lr))
        bar.update(epoch, f"loss {loss_sum / total:.4f} acc {100 * correct / total:5.1f}%")

    model.eval()
    with ndgrad.no_grad():
        test_acc = (model(x_test).argmax(1) == y_test).float().mean().item()
    print(f"test accuracy: {100 * test_acc:.1f}% after {args.epochs} epochs "
          f"({time.perf_counter() - t0:.1f}s)")
    if distributed:
        same = replicas_identical(model, dist)
        print(f"replicas identical on all {world} ranks: {'yes' if same else 'NO'}")
        ok = ok and same
        if rank != 0:
            dist.destroy_process_group()
            return 0 if ok else 1

    paths, plt = write_curves(history, args.out)
    if plt is not None:
        paths.append(write_regions(plt, model, x, y, args.out))
    ckpt = os.path.join(args.out, "model.pt")
    ndgrad.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                 "epochs": args.epochs, "test_accuracy": test_acc}, ckpt)
    print("artifacts:")
    for p in [dot_path] + paths + [ckpt]:
        print(f"  {os.path.abspath(p)}")
    if plt is None:
        print("  (install matplotlib for loss_curve.png and decision_regions.png)")
    if distributed:
        dist.destroy_process_group()
    return 0 if ok and tour_ok else 1


if __name__ == "__main__":
    sys.exit(main())
