"""A character-level language model: an Embedding, an LSTM layer written out gate by gate
(autograd carries the gradient back through every time step), and a Linear read-out, trained
with Adam and gradient clipping on a short built-in text, then sampled from with a seeded
generator. Runs unchanged on torch with the same numbers.

    python examples/char_lstm.py [--steps 200] [--hidden 64] [--seq-len 16]
"""

import argparse
import math

import ndgrad as torch
import ndgrad.nn.functional as F
from ndgrad import nn

TEXT = (
    "autograd records every operation on tensors that require gradients and replays the "
    "record backwards to compute them. the chain rule does the rest: each node multiplies "
    "the incoming gradient by its local derivative and passes it on to its inputs. "
    "a language model learns which character tends to follow which, one gradient step at "
    "a time. "
)


class LSTMLayer(nn.Module):
    """One LSTM layer over a (time, batch, features) input, with torch.nn.LSTM's gate order
    (input, forget, cell, output) and initialisation."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.weight_ih = nn.Parameter(torch.empty(4 * hidden_size, input_size))
        self.weight_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size))
        self.bias = nn.Parameter(torch.empty(4 * hidden_size))
        bound = 1.0 / math.sqrt(hidden_size)
        for w in self.parameters():
            nn.init.uniform_(w, -bound, bound)

    def forward(self, x, state=None):
        steps, batch = x.shape[0], x.shape[1]
        if state is None:
            h = x.new_zeros(batch, self.hidden_size)
            c = x.new_zeros(batch, self.hidden_size)
        else:
            h, c = state
        x_gates = x.matmul(self.weight_ih.t()) + self.bias      # all time steps at once
        outputs = []
        for t in range(steps):
            gates = x_gates[t] + h.matmul(self.weight_hh.t())
            i, f, g, o = gates.chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(h)
        return torch.stack(outputs), (h, c)


class CharModel(nn.Module):
    def __init__(self, vocab, embed, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = LSTMLayer(embed, hidden)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, idx, state=None):
        out, state = self.lstm(self.embed(idx), state)
        return self.head(out), state


def batches(data, seq_len, batch, generator):
    starts = torch.randint(0, len(data) - seq_len - 1, (batch,), generator=generator)
    x = torch.stack([data[s:s + seq_len] for s in starts.tolist()], dim=1)
    y = torch.stack([data[s + 1:s + seq_len + 1] for s in starts.tolist()], dim=1)
    return x, y


def sample(model, stoi, itos, prefix, length, generator, temperature=0.8):
    model.eval()
    with torch.no_grad():
        idx = torch.tensor([stoi[ch] for ch in prefix]).view(-1, 1)
        logits, state = model(idx)
        out = prefix
        for _ in range(length):
            probs = F.softmax(logits[-1, 0] / temperature, dim=0)
            nxt = torch.multinomial(probs, 1, generator=generator)
            out += itos[nxt.item()]
            logits, state = model(nxt.view(1, 1), state)
    model.train()
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description="Train a character-level LSTM on a short text.")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--embed", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=16)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--sample", type=int, default=120, help="characters to generate")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    chars = sorted(set(TEXT))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = dict(enumerate(chars))
    data = torch.tensor([stoi[ch] for ch in TEXT])

    model = CharModel(len(chars), args.embed, args.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step in range(1, args.steps + 1):
        x, y = batches(data, args.seq_len, args.batch, gen)
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if step % max(1, args.steps // 10) == 0 or step == args.steps:
            print(f"step {step:4d}  loss {loss.item():.4f}  (uniform guess: "
                  f"{math.log(len(chars)):.2f})")
    text = sample(model, stoi, itos, "the ", args.sample, gen)
    print("sample:", repr(text))
    return {"losses": losses, "sample": text, "model": model}


if __name__ == "__main__":
    main()
