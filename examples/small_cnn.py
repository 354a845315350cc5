"""A small convolutional network: conv-ReLU-maxpool twice, then a linear classifier, trained
with Adam on synthetic 1x16x16 images of four kinds of strokes (horizontal, vertical and the
two diagonals) with noise. Runs unchanged on torch with the same numbers.

    python examples/small_cnn.py [--epochs 8] [--per-class 64]
"""

import argparse

import ndgrad as torch
import ndgrad.nn.functional as F
from ndgrad import nn
from ndgrad.utils.data import DataLoader, TensorDataset

SIZE = 16


def make_images(per_class, generator):
    """Images with one random stroke each; label = stroke direction (0..3)."""
    idx = torch.arange(SIZE)
    rows, cols = idx.view(-1, 1).expand(SIZE, SIZE), idx.view(1, -1).expand(SIZE, SIZE)
    images, labels = [], []
    for label in range(4):
        offsets = torch.randint(-5, 6, (per_class,), generator=generator)
        for off in offsets.tolist():
            if label == 0:
                mask = rows == SIZE // 2 + off
            elif label == 1:
                mask = cols == SIZE // 2 + off
            elif label == 2:
                mask = (rows - cols) == off
            else:
                mask = (rows + cols) == SIZE - 1 + off
            images.append(mask.float())
            labels.append(label)
    x = torch.stack(images).unsqueeze(1)
    x = x + 0.3 * torch.randn(x.shape, generator=generator)
    return TensorDataset(x, torch.tensor(labels))


class SmallCNN(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * (SIZE // 4) ** 2, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


def main(argv=None):
    p = argparse.ArgumentParser(description="Train a small CNN on synthetic strokes.")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--per-class", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    train = make_images(args.per_class, gen)
    test = make_images(max(8, args.per_class // 4), gen)
    loader = DataLoader(train, batch_size=32, shuffle=True, generator=gen)

    model = SmallCNN()
    print(model)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for epoch in range(args.epochs):
        total = 0.0
        for x, y in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item() * len(y)
        losses.append(total / len(train))
        print(f"epoch {epoch + 1:2d}  loss {losses[-1]:.4f}")
    model.eval()
    with torch.no_grad():
        x, y = test.tensors
        acc = (model(x).argmax(1) == y).float().mean().item()
    print(f"test accuracy: {100 * acc:.1f}%")
    return {"losses": losses, "accuracy": acc, "model": model}


if __name__ == "__main__":
    main()
