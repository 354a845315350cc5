"""Real-model training steps written once against a torch-like module (``torch`` or ``ndgrad``).

Our own implementations of public architectures at their CPU sizes (issue 26): nanoGPT-style
GPT (exact GELU, LayerNorm, causal ``scaled_dot_product_attention``, weight tying, AdamW with
decay/no-decay groups, dropout), minGPT-style GPT (tanh GELU, hand-written masked attention),
the pytorch/examples MNIST CNN (Adadelta), VAE (Adam), word-language-model LSTM and
Transformer encoder LMs (clip_grad_norm_, hand-written SGD), and the time-sequence-prediction
LSTMCell model (LBFGS, float64).

``build(tm, name, seed=0)`` returns a :class:`Case`; the same call with ``tm=torch`` and
``tm=ndgrad`` gives the same architecture, and ``copy_weights`` makes the weights identical.
Invariant: every random draw (weights aside) goes through ``tm``'s global generator after
``tm.manual_seed(seed + i)`` in ``make_batch(i)``, so dropout and the VAE's noise agree
between the two libraries (ndgrad's generator reproduces torch's stream); data are NumPy
arrays made from ``seed + i``.
"""

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class Case:
    """One model's training setup. ``make_batch(i, size=None)`` is batch i at the model's
    sizes, or at ``size``: (batch, sequence length) for the GPTs, the language models and the
    sequence model, (batch,) for the CNN and the VAE. ``loss_fn(batch)`` runs the forward and
    returns the loss; ``train_step(batch)`` is the whole step (forward, loss, zero_grad,
    backward, clip where the original clips, optimizer step) and returns the loss tensor."""
    model: object
    optimizer: object
    make_batch: Callable
    loss_fn: Callable
    train_step: Callable


MODELS = ("gpt2l", "gpt4l", "mingpt", "mnist_cnn", "vae", "lstm_lm", "transformer_lm",
          "time_seq")


def _standard_step(tm, model, optimizer, loss_fn, clip=None):
    def train_step(batch):
        loss = loss_fn(batch)
        optimizer.zero_grad()
        loss.backward()
        if clip is not None:
            tm.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        return loss
    return train_step


def _tokens(tm, seed, shape, vocab):
    rng = np.random.RandomState(seed)
    return tm.tensor(rng.randint(0, vocab, size=shape).astype(np.int64))


# ---------------------------------------------------------------- GPT (nanoGPT / minGPT)

def _gpt_classes(tm, exact_gelu, use_sdpa):
    nn = tm.nn
    F = tm.nn.functional

    class NewGELU(nn.Module):
        """minGPT's tanh GELU, written out."""
        def forward(self, x):
            return 0.5 * x * (1.0 + tm.tanh(math.sqrt(2.0 / math.pi)
                                            * (x + 0.044715 * tm.pow(x, 3.0))))

    class SelfAttention(nn.Module):
        def __init__(self, width, heads, block, dropout):
            super().__init__()
            self.c_attn = nn.Linear(width, 3 * width)
            self.c_proj = nn.Linear(width, width)
            self.attn_dropout = nn.Dropout(dropout)
            self.resid_dropout = nn.Dropout(dropout)
            self.heads, self.width, self.dropout = heads, width, dropout
            if not use_sdpa:
                self.register_buffer("bias", tm.tril(tm.ones(block, block))
                                     .view(1, 1, block, block))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.width, dim=2)
            hs = C // self.heads
            q = q.view(B, T, self.heads, hs).transpose(1, 2)
            k = k.view(B, T, self.heads, hs).transpose(1, 2)
            v = v.view(B, T, self.heads, hs).transpose(1, 2)
            if use_sdpa:
                y = F.scaled_dot_product_attention(
                    q, k, v, attn_mask=None, is_causal=True,
                    dropout_p=self.dropout if self.training else 0.0)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
                att = self.attn_dropout(F.softmax(att, dim=-1))
                y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self, width, dropout):
            super().__init__()
            self.c_fc = nn.Linear(width, 4 * width)
            self.gelu = nn.GELU() if exact_gelu else NewGELU()
            self.c_proj = nn.Linear(4 * width, width)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self, width, heads, block, dropout):
            super().__init__()
            self.ln_1 = nn.LayerNorm(width)
            self.attn = SelfAttention(width, heads, block, dropout)
            self.ln_2 = nn.LayerNorm(width)
            self.mlp = MLP(width, dropout)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, vocab, block, layers, heads, width, dropout):
            super().__init__()
            self.block = block
            self.wte = nn.Embedding(vocab, width)
            self.wpe = nn.Embedding(block, width)
            self.drop = nn.Dropout(dropout)
            self.h = nn.ModuleList([Block(width, heads, block, dropout) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(width)
            self.lm_head = nn.Linear(width, vocab, bias=False)
            self.wte.weight = self.lm_head.weight          # weight tying
            self.apply(self._init_weights)
            for name, p in self.named_parameters():
                if name.endswith("c_proj.weight"):
                    nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * layers))

        @staticmethod
        def _init_weights(module):
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets):
            b, t = idx.size()
            pos = tm.arange(0, t, dtype=tm.long)
            x = self.drop(self.wte(idx) + self.wpe(pos))
            for blk in self.h:
                x = blk(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)

    return GPT


def _gpt(tm, seed, wrap, layers, heads, width, block, batch, exact_gelu, use_sdpa, lr, dropout):
    vocab = 65
    GPT = _gpt_classes(tm, exact_gelu, use_sdpa)
    model = GPT(vocab, block, layers, heads, width, dropout)
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    opt = tm.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))

    def make_batch(i, size=None):
        b, t = size or (batch, block)
        tm.manual_seed(seed + i)
        data = _tokens(tm, seed + i, (b, t + 1), vocab)
        return data[:, :-1].contiguous(), data[:, 1:].contiguous()

    def loss_fn(batch_):
        return model(*batch_)

    loss_fn = wrap(loss_fn)
    return Case(model, opt, make_batch, loss_fn, _standard_step(tm, model, opt, loss_fn, 1.0))


# ---------------------------------------------------------------- MNIST CNN and VAE

def _mnist_cnn(tm, seed, wrap):
    nn, F = tm.nn, tm.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv2(F.relu(self.conv1(x))))
            x = self.dropout1(F.max_pool2d(x, 2))
            x = self.dropout2(F.relu(self.fc1(tm.flatten(x, 1))))
            return F.log_softmax(self.fc2(x), dim=1)

    model = Net()
    opt = tm.optim.Adadelta(model.parameters(), lr=1.0)

    def make_batch(i, size=None):
        (b,) = size or (64,)
        tm.manual_seed(seed + i)
        rng = np.random.RandomState(seed + i)
        x = ((rng.rand(b, 1, 28, 28) - 0.1307) / 0.3081).astype(np.float32)
        return tm.tensor(x), tm.tensor(rng.randint(0, 10, size=b).astype(np.int64))

    def loss_fn(batch_):
        x, y = batch_
        return F.nll_loss(model(x), y)

    loss_fn = wrap(loss_fn)
    return Case(model, opt, make_batch, loss_fn, _standard_step(tm, model, opt, loss_fn))


def _vae(tm, seed, wrap):
    nn, F = tm.nn, tm.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 400)
            self.fc21 = nn.Linear(400, 20)
            self.fc22 = nn.Linear(400, 20)
            self.fc3 = nn.Linear(20, 400)
            self.fc4 = nn.Linear(400, 784)

        def forward(self, x):
            h1 = F.relu(self.fc1(x))
            mu, logvar = self.fc21(h1), self.fc22(h1)
            z = mu + tm.randn_like(mu) * tm.exp(0.5 * logvar)
            return tm.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar

    model = VAE()
    opt = tm.optim.Adam(model.parameters(), lr=1e-3)

    def make_batch(i, size=None):
        (b,) = size or (128,)
        tm.manual_seed(seed + i)
        rng = np.random.RandomState(seed + i)
        return (tm.tensor(rng.rand(b, 784).astype(np.float32)),)

    def loss_fn(batch_):
        (x,) = batch_
        recon, mu, logvar = model(x)
        bce = F.binary_cross_entropy(recon, x, reduction="sum")
        kld = -0.5 * tm.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return bce + kld

    loss_fn = wrap(loss_fn)
    return Case(model, opt, make_batch, loss_fn, _standard_step(tm, model, opt, loss_fn))


# ---------------------------------------------------------------- word language models

def _lm_data(tm, seed, i, ntoken, bptt, batch, size=None):
    """Batch i of a language model: (bptt, batch) tokens and the next tokens, flattened;
    `size`, (batch, bptt), overrides the two."""
    if size is not None:
        batch, bptt = size
    tm.manual_seed(seed + i)
    data = _tokens(tm, seed + i, (bptt + 1, batch), ntoken)
    return data[:-1].contiguous(), data[1:].reshape(-1).contiguous()


def _sgd_clip_step(tm, model, loss_fn, lr, clip):
    """word_language_model's step: zero_grad, backward, clip_grad_norm_, p -= lr * grad."""
    def train_step(batch_):
        model.zero_grad()
        loss = loss_fn(batch_)
        loss.backward()
        tm.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        return loss
    return train_step


def _lstm_lm(tm, seed, wrap, ntoken=1000, width=64, layers=2, bptt=35, batch=20):
    nn, F = tm.nn, tm.nn.functional

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.2)
            self.encoder = nn.Embedding(ntoken, width)
            self.rnn = nn.LSTM(width, width, layers, dropout=0.2)
            self.decoder = nn.Linear(width, ntoken)
            self.decoder.weight = self.encoder.weight      # --tied
            nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
            nn.init.zeros_(self.decoder.bias)

        def forward(self, src, hidden):
            output, hidden = self.rnn(self.drop(self.encoder(src)), hidden)
            decoded = self.decoder(self.drop(output)).view(-1, ntoken)
            return F.log_softmax(decoded, dim=1), hidden

    model = RNNModel()
    state = {"hidden": (tm.zeros(layers, batch, width), tm.zeros(layers, batch, width))}

    def loss_fn(batch_):
        src, target = batch_
        hidden = tuple(h.detach() for h in state["hidden"])     # repackage_hidden
        output, state["hidden"] = model(src, hidden)
        return F.nll_loss(output, target)

    loss_fn = wrap(loss_fn)
    return Case(model, None,
                lambda i, size=None: _lm_data(tm, seed, i, ntoken, bptt, batch, size), loss_fn,
                _sgd_clip_step(tm, model, loss_fn, lr=20.0, clip=0.25))


def _transformer_lm(tm, seed, wrap, ntoken=1000, width=64, heads=2, hidden=64, layers=2,
                    bptt=35, batch=20):
    nn, F = tm.nn, tm.nn.functional

    class PositionalEncoding(nn.Module):
        def __init__(self, max_len=5000):
            super().__init__()
            self.dropout = nn.Dropout(0.2)
            position = tm.arange(0, max_len, dtype=tm.float).unsqueeze(1)
            div_term = tm.exp(tm.arange(0, width, 2).float() * (-math.log(10000.0) / width))
            pe = tm.zeros(max_len, width)
            pe[:, 0::2] = tm.sin(position * div_term)
            pe[:, 1::2] = tm.cos(position * div_term)
            self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

        def forward(self, x):
            return self.dropout(x + self.pe[:x.size(0), :])

    class TransformerModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.pos_encoder = PositionalEncoding()
            layer = nn.TransformerEncoderLayer(width, heads, hidden, 0.2)
            self.transformer_encoder = nn.TransformerEncoder(layer, layers,
                                                             enable_nested_tensor=False)
            self.encoder = nn.Embedding(ntoken, width)
            self.decoder = nn.Linear(width, ntoken)
            nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

        def forward(self, src, mask):
            src = self.pos_encoder(self.encoder(src) * math.sqrt(width))
            out = self.decoder(self.transformer_encoder(src, mask))
            return F.log_softmax(out, dim=-1)

    model = TransformerModel()
    mask = nn.Transformer.generate_square_subsequent_mask(bptt)

    def loss_fn(batch_):
        src, target = batch_
        n = src.size(0)        # word_language_model: a shorter last batch, a cut mask
        return F.nll_loss(model(src, mask[:n, :n]).view(-1, ntoken), target)

    loss_fn = wrap(loss_fn)
    return Case(model, None,
                lambda i, size=None: _lm_data(tm, seed, i, ntoken, bptt, batch, size), loss_fn,
                _sgd_clip_step(tm, model, loss_fn, lr=20.0, clip=0.25))


# ---------------------------------------------------------------- time sequence prediction

def _time_seq(tm, seed, wrap, samples=97, length=100, width=51):
    nn = tm.nn

    class Sequence(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm1 = nn.LSTMCell(1, width)
            self.lstm2 = nn.LSTMCell(width, width)
            self.linear = nn.Linear(width, 1)

        def forward(self, inp):
            n = inp.size(0)
            h_t = tm.zeros(n, width, dtype=tm.double)
            c_t = tm.zeros(n, width, dtype=tm.double)
            h_t2 = tm.zeros(n, width, dtype=tm.double)
            c_t2 = tm.zeros(n, width, dtype=tm.double)
            outputs = []
            for input_t in inp.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                outputs.append(self.linear(h_t2))
            return tm.cat(outputs, dim=1)

    model = Sequence().double()
    opt = tm.optim.LBFGS(model.parameters(), lr=0.8)
    criterion = nn.MSELoss()

    def make_batch(i, size=None):
        n, t = size or (samples, length)
        rng = np.random.RandomState(seed + i)
        x = np.arange(t + 1) + rng.randint(-80, 80, size=(n, 1))
        wave = np.sin(x / 20.0).astype(np.float64)
        return tm.tensor(wave[:, :-1]), tm.tensor(wave[:, 1:])

    def loss_fn(batch_):
        inp, target = batch_
        return criterion(model(inp), target)

    def train_step(batch_):
        def closure():
            opt.zero_grad()
            loss = loss_fn(batch_)
            loss.backward()
            return loss
        return opt.step(closure)

    loss_fn = wrap(loss_fn)
    return Case(model, opt, make_batch, loss_fn, train_step)


# ---------------------------------------------------------------- entry points

def build(tm, name, seed=0, compiled=False):
    """The :class:`Case` ``name`` (one of ``MODELS``) built with the library ``tm``; weights
    drawn from ``tm``'s generator seeded with ``seed`` (use ``copy_weights`` to make two
    libraries' weights identical). ``compiled``: the loss function is ``tm.compile``'d
    (forward and loss; zero_grad, backward, clip and the optimizer step stay eager), and
    ``train_step`` calls the compiled one."""
    tm.manual_seed(seed)
    wrap = tm.compile if compiled else (lambda fn: fn)
    if name == "gpt2l":
        return _gpt(tm, seed, wrap, 2, 2, 32, 32, 8, True, True, 6e-4, 0.1)
    if name == "gpt4l":
        return _gpt(tm, seed, wrap, 4, 4, 128, 64, 12, True, True, 6e-4, 0.1)
    if name == "mingpt":
        return _gpt(tm, seed, wrap, 2, 3, 48, 32, 8, False, False, 5e-4, 0.1)
    builders = {"mnist_cnn": _mnist_cnn, "vae": _vae, "lstm_lm": _lstm_lm,
                "transformer_lm": _transformer_lm, "time_seq": _time_seq}
    if name in builders:
        return builders[name](tm, seed, wrap)
    raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODELS)}")


def copy_weights(src_model, dst_tm, dst_model):
    """Load ``src_model``'s state (any library's tensors) into ``dst_model`` of ``dst_tm``."""
    state = {k: dst_tm.tensor(v.detach().cpu().numpy().copy())
             for k, v in src_model.state_dict().items()}
    dst_model.load_state_dict(state)
