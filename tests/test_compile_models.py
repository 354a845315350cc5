"""ndgrad.compile engages on the real models of benchmarks/models.py (issue 26's set): each
model's loss function compiles with no graph break, and a compiled training loop (the loss
compiled, backward and the optimizer step eager) equals the eager loop bitwise over several
steps, dropout included (the same seed before each step on both sides), also when the batch
size and the sequence length change from step to step."""

import os
import sys

import numpy as np
import pytest

import ndgrad
from ndgrad import _dynamo
from ndgrad._compile.api import _EagerEntry

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "benchmarks"))
import models  # noqa: E402

SMALL = ("gpt2l", "mingpt", "vae", "lstm_lm", "transformer_lm", "mnist_cnn")

# Sizes per step for the changing-size loops: (batch, sequence) or (batch,). The LSTM model
# keeps its hidden state between steps, so only its sequence length (bptt) changes, as in
# word_language_model's shorter last batch.
SIZES = {
    "gpt2l": [(8, 32), (5, 32), (5, 17), (3, 9), (8, 32)],
    "mingpt": [(8, 32), (6, 20), (4, 32), (4, 11)],
    "vae": [(128,), (64,), (37,), (128,)],
    "mnist_cnn": [(16,), (9,), (4,)],
    "lstm_lm": [(20, 35), (20, 12), (20, 35), (20, 7)],
    "transformer_lm": [(20, 35), (13, 35), (13, 22), (7, 9)],
}
# (The LSTM language model carries its hidden state between calls in a dict the loss
# function closes over, word_language_model's repackage_hidden: the compiled region reads it
# there and stores the new state back, see ndgrad/_compile/state.py.)


def _loop(name, compiled, sizes):
    case = models.build(ndgrad, name, seed=0, compiled=compiled)
    # the language models step by hand in the benchmark; plain SGD here
    opt = case.optimizer or ndgrad.optim.SGD(case.model.parameters(), lr=0.5)
    losses = []
    for i, size in enumerate(sizes):
        batch = case.make_batch(i, size)
        ndgrad.manual_seed(1000 + i)
        loss = case.loss_fn(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach().numpy().copy())
    params = [p.detach().numpy().copy() for p in case.model.parameters()]
    return losses, params, case.loss_fn


@pytest.mark.parametrize("name", SMALL)
def test_model_compiles_without_graph_break(name):
    case = models.build(ndgrad, name, seed=0)
    ndgrad.manual_seed(5)
    out = _dynamo.explain(case.loss_fn)(case.make_batch(0))
    assert out.graph_break_count == 0, out.break_reasons
    assert out.graph_count == 1


def _assert_same(eager, comp):
    for a, b in zip(eager[0], comp[0]):
        np.testing.assert_array_equal(a, b)
    assert len(eager[1]) == len(comp[1])
    for a, b in zip(eager[1], comp[1]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", SMALL)
def test_compiled_training_loop_equals_eager(name):
    sizes = [None] * 3
    _assert_same(_loop(name, False, sizes), _loop(name, True, sizes))


@pytest.mark.parametrize("name", SMALL)
def test_compiled_loop_with_changing_sizes_equals_eager(name):
    sizes = SIZES[name]
    eager = _loop(name, False, sizes)
    comp = _loop(name, True, sizes)
    _assert_same(eager, comp)
    assert not eager[0][0].shape and len(eager[0]) == len(sizes)


@pytest.mark.parametrize("name", SMALL)
def test_compiled_loop_with_changing_sizes_engages(name):
    """Every call of the changing-size loop ran compiled: no signature fell back to eager."""
    fn = _loop(name, True, SIZES[name])[2]
    entries = [e for es in fn.cache.values() for e in es]
    assert entries and not any(type(e) is _EagerEntry for e in entries), \
        [b.reason for e in entries for b in e.breaks]
