"""A chain of thousands of reentrant backwards (a custom Function whose backward runs a
backward) completes as in torch instead of meeting Python's recursion limit; the modes the
outer code set (grad mode, saved-tensor hooks) hold at every depth, an error raised deep in
the chain reaches the caller unchanged, and nothing is left changed afterwards.
Differential against torch 2.13."""

import pytest
import torch

import ndgrad


def _deep(L, depth, fail_at=None, observe=None):
    class DeepReentrant(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with L.enable_grad():
                ctx.x = x.detach().requires_grad_(True) - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, g):
            if observe is not None:
                observe.append(L.is_grad_enabled())
            if fail_at is not None and ctx.x.item() == fail_at:
                raise ValueError(f"failed at {fail_at}")
            if ctx.x < 0:
                return g
            with L.enable_grad():
                DeepReentrant.apply(ctx.x).sum().backward()
            return g * 2

    v = L.tensor(float(depth), requires_grad=True)
    DeepReentrant.apply(v).sum().backward()
    return v.grad.item()


@pytest.mark.parametrize("depth", [5, 200, 2000])
def test_deep_chain_of_reentrant_backwards(depth):
    assert _deep(ndgrad, depth) == _deep(torch, depth)


def test_error_deep_in_the_chain_reaches_the_caller():
    outcomes = []
    for L in (torch, ndgrad):
        try:
            _deep(L, 300, fail_at=17)
            outcomes.append(None)
        except ValueError as e:
            outcomes.append(str(e))
        # afterwards the process is unharmed: grad mode on, a plain backward works
        a = L.ones(3, requires_grad=True)
        (a * a).sum().backward()
        outcomes.append((L.is_grad_enabled(), a.grad.tolist()))
    assert outcomes[0] == "failed at 17"
    assert outcomes[2:] == outcomes[:2]


def test_modes_hold_at_every_depth():
    results = []
    for L in (torch, ndgrad):
        seen, packed = [], []

        def pack(t):
            packed.append(1)
            return t

        with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            grad = _deep(L, 150, observe=seen)
        results.append((grad, set(seen), len(packed) > 0))
    assert results[1] == results[0]
