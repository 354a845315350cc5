"""An MLP classifier trained the usual torch way: Dataset, DataLoader, nn.Sequential,
cross-entropy, SGD with momentum, a learning-rate schedule, evaluation and a checkpoint.

The data are three Gaussian blobs in 2-D drawn from a seeded generator, so the script needs
nothing but ndgrad. Replace the imports by torch's and it runs unchanged on torch with the same
numbers (the test suite does exactly that).

    python examples/mlp_classifier.py [--epochs 20] [--hidden 32] [--samples 300]
"""

import argparse
import os
import tempfile

import ndgrad as torch
from ndgrad import nn
from ndgrad.utils.data import DataLoader, TensorDataset, random_split


def make_blobs(samples, generator):
    """``samples`` points per class around three centres; labels 0, 1, 2."""
    centres = torch.tensor([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]])
    xs = [c + 0.9 * torch.randn(samples, 2, generator=generator) for c in centres]
    ys = [torch.full((samples,), k, dtype=torch.int64) for k in range(3)]
    return TensorDataset(torch.cat(xs), torch.cat(ys))


def build_model(hidden):
    return nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, 3))


def accuracy(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(dim=1) == y).sum().item()
            total += len(y)
    model.train()
    return correct / total


def main(argv=None):
    p = argparse.ArgumentParser(description="Train an MLP on three Gaussian blobs.")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--samples", type=int, default=300, help="points per class")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    data = make_blobs(args.samples, gen)
    train_set, test_set = random_split(data, [0.8, 0.2], generator=gen)
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, generator=gen)
    test_loader = DataLoader(test_set, batch_size=128)

    model = build_model(args.hidden)
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=max(1, args.epochs // 3), gamma=0.5)

    losses = []
    for epoch in range(args.epochs):
        total = 0.0
        for x, y in train_loader:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item() * len(y)
        sched.step()
        losses.append(total / len(train_set))
        print(f"epoch {epoch + 1:3d}  loss {losses[-1]:.4f}  lr {sched.get_last_lr()[0]:.4f}")

    acc = accuracy(model, test_loader)
    print(f"test accuracy: {100 * acc:.1f}%")

    # a checkpoint round trip: the reloaded model predicts the same
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mlp.pt")
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, path)
        ckpt = torch.load(path)
    clone = build_model(args.hidden)
    clone.load_state_dict(ckpt["model"])
    assert accuracy(clone, test_loader) == acc
    return {"losses": losses, "accuracy": acc, "model": model}


if __name__ == "__main__":
    main()
