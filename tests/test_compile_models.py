"""ndgrad.compile engages on the real models of benchmarks/models.py (issue 26's set): each
model's loss function compiles with no graph break, and a compiled training loop (the loss
compiled, backward and the optimizer step eager) equals the eager loop bitwise over several
steps, dropout included (the same seed before each step on both sides)."""

import os
import sys

import numpy as np
import pytest

import ndgrad
from ndgrad import _dynamo

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "benchmarks"))
import models  # noqa: E402

SMALL = ("gpt2l", "mingpt", "vae", "lstm_lm", "transformer_lm", "mnist_cnn")

# A known gap, listed in docs/compile.md: the LSTM language model carries its hidden state
# between calls in a dict the function closes over (word_language_model's repackage_hidden);
# ndgrad.compile breaks on a tensor reached from outside the function, where torch.compile
# makes it an input of the graph.
CLOSURE_STATE_BREAK = {"lstm_lm"}


def _loop(name, compiled, steps=3):
    case = models.build(ndgrad, name, seed=0)
    loss_fn = ndgrad.compile(case.loss_fn) if compiled else case.loss_fn
    # the language models step by hand in the benchmark; plain SGD here
    opt = case.optimizer or ndgrad.optim.SGD(case.model.parameters(), lr=0.5)
    losses = []
    for i in range(steps):
        batch = case.make_batch(i)
        ndgrad.manual_seed(1000 + i)
        loss = loss_fn(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach().numpy().copy())
    params = [p.detach().numpy().copy() for p in case.model.parameters()]
    return losses, params


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="closure state: see docs"))
    if n in CLOSURE_STATE_BREAK else n for n in SMALL])
def test_model_compiles_without_graph_break(name):
    case = models.build(ndgrad, name, seed=0)
    ndgrad.manual_seed(5)
    out = _dynamo.explain(case.loss_fn)(case.make_batch(0))
    assert out.graph_break_count == 0, out.break_reasons
    assert out.graph_count == 1


@pytest.mark.parametrize("name", SMALL)
def test_compiled_training_loop_equals_eager(name):
    eager_losses, eager_params = _loop(name, compiled=False)
    comp_losses, comp_params = _loop(name, compiled=True)
    for a, b in zip(eager_losses, comp_losses):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(eager_params, comp_params):
        np.testing.assert_array_equal(a, b)
