"""A packed-sequence LSTM training step, ndgrad vs torch in one process, one BLAS thread.

The step packs a batch of 16 variable-length sequences (lengths 5 to 40, sorted descending as
``enforce_sorted=True`` asks) of 32 features with ``pack_padded_sequence``, runs a one-layer
``nn.LSTM`` (hidden 64) over the packed batch, unpacks it with ``pad_packed_sequence``, takes a
mean-squared loss against a padded target (masked by length), and runs backward. Both
libraries start from the same weights (copied from torch's module) and the same inputs; the
losses are checked equal before timing. Each figure is the best of ``--repeats`` runs of
``--steps`` steps, interleaving the libraries; the ratio is ndgrad / torch.

The same step on the padded batch without packing (the LSTM runs over all 40 steps of every
sequence, the mask still applied to the loss) is timed too: there torch runs a float32 LSTM
as one fused layer per direction (MkldnnRnnLayerBackward0), and so does ndgrad.

    python benchmarks/bench_packed_lstm.py [--repeats 7] [--steps 10] [--batch 16]
"""

import argparse
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ndgrad

FEATURES, HIDDEN = 32, 64


def make_data(batch):
    rng = np.random.default_rng(0)
    lengths = np.sort(rng.integers(5, 41, size=batch))[::-1].copy()
    lengths[0] = 40
    x = rng.standard_normal((40, batch, FEATURES)).astype(np.float32)
    target = rng.standard_normal((40, batch, HIDDEN)).astype(np.float32)
    mask = (np.arange(40)[:, None] < lengths[None, :]).astype(np.float32)[:, :, None]
    return lengths, x, target, mask


def make_step(lib, weights, data, packed=True):
    lengths, x, target, mask = data
    lstm = lib.nn.LSTM(FEATURES, HIDDEN)
    with lib.no_grad():
        for name, p in lstm.named_parameters():
            p.copy_(lib.tensor(weights[name]))
    xs = lib.tensor(x)
    ts, ms = lib.tensor(target), lib.tensor(mask)
    lens = lib.tensor(lengths)
    rnn = lib.nn.utils.rnn

    def step():
        lstm.zero_grad(set_to_none=True)
        if packed:
            out, _ = lstm(rnn.pack_padded_sequence(xs, lens, enforce_sorted=True))
            padded, _ = rnn.pad_packed_sequence(out, total_length=40)
        else:
            padded, _ = lstm(xs)
        loss = (((padded - ts) * ms) ** 2).sum() / ms.sum()
        loss.backward()
        return loss
    return step


def best_of(step, steps, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        best = min(best, (time.perf_counter() - t0) / steps)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch", type=int, default=16)
    args = p.parse_args()
    data = make_data(args.batch)
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        torch.manual_seed(0)
        ref = torch.nn.LSTM(FEATURES, HIDDEN)
        weights = {n: p.detach().numpy().copy() for n, p in ref.named_parameters()}
    else:
        ndgrad.manual_seed(0)
        ref = ndgrad.nn.LSTM(FEATURES, HIDDEN)
        weights = {n: p.detach().numpy().copy() for n, p in ref.named_parameters()}
    libs = {"ndgrad": ndgrad} if torch is None else {"ndgrad": ndgrad, "torch": torch}
    for packed in (True, False):
        steps = {name: make_step(lib, weights, data, packed) for name, lib in libs.items()}
        losses = {name: float(s().item()) for name, s in steps.items()}
        if "torch" in losses:
            assert abs(losses["ndgrad"] - losses["torch"]) <= 1e-5 * abs(losses["torch"]), \
                losses
        times = {name: float("inf") for name in steps}
        for _ in range(args.repeats):  # interleaved, best of all
            for name, s in steps.items():
                times[name] = min(times[name], best_of(s, args.steps, 1))
        what = "pack -> LSTM" if packed else "padded batch -> LSTM"
        print(f"{'packed' if packed else 'padded'} LSTM step ({what} {FEATURES}->{HIDDEN}"
              f"{' -> unpack' if packed else ''} -> masked mse -> backward), batch "
              f"{args.batch}, lengths {data[0].min()}..{data[0].max()}:")
        for name, t in times.items():
            print(f"  {name:7s} {t * 1e3:8.2f} ms/step")
        if "torch" in times:
            print(f"  ratio ndgrad/torch: {times['ndgrad'] / times['torch']:.2f}")


if __name__ == "__main__":
    main()
