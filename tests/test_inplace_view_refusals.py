"""In-place writes to views autograd cannot rebase are refused with torch's distinct message
for how the view was made (no_grad, inference mode, a multi-output op), and the refused write
changes nothing. Differential against torch 2.13."""

import pytest
import torch

import ndgrad


def _view(L, how, leaf):
    a = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
    base = a if leaf else a * 1
    ctx = {"no_grad": L.no_grad, "inference_mode": L.inference_mode}[how]
    with ctx():
        v = base[:2]
    return base, v


@pytest.mark.parametrize("how", ["no_grad", "inference_mode"])
@pytest.mark.parametrize("leaf", [True, False])
def test_in_place_on_a_view_made_in_a_no_grad_or_inference_block(how, leaf):
    outcomes = []
    for L in (torch, ndgrad):
        base, v = _view(L, how, leaf)
        with pytest.raises(RuntimeError) as info:
            v.mul_(2)
        assert base.tolist() == [1.0, 2.0, 3.0] and v._version == 0
        outcomes.append(str(info.value))
        # normal use afterwards: the same view written inside its block is allowed
        ctx = {"no_grad": L.no_grad, "inference_mode": L.inference_mode}[how]
        base, v = _view(L, how, leaf)
        with ctx():
            v.mul_(2)
        assert base.tolist() == [2.0, 4.0, 3.0]
    assert outcomes[1] == outcomes[0]
    word = "no_grad" if how == "no_grad" else "inference"
    assert f"A view was created in {word} mode" in outcomes[1]
