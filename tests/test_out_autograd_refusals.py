"""``out=`` kernels have no derivative: with grad mode on, a call whose inputs or ``out``
require grad is refused with torch's message naming the function, a dual tensor in forward
AD is refused as torch's NotImplementedError, an inference tensor is written only inside
inference mode, and a refused call leaves ``out`` (values and version) unchanged. Under
no_grad the write happens. Differential against torch 2.13."""

import pytest
import torch
import torch.autograd.forward_ad as fwAD_t

import ndgrad
import ndgrad.autograd.forward_ad as fwAD_n


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - class and message are compared
        return (type(e).__name__, str(e))


CALLS = {
    "mul": lambda L, a, out: L.mul(a, a, out=out),
    "add": lambda L, a, out: L.add(a, 1, out=out),
    "sin": lambda L, a, out: L.sin(a, out=out),
    "cat": lambda L, a, out: L.cat([a[:1], a[1:]], out=out),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("who", ["input", "out"])
def test_out_refused_when_an_argument_requires_grad(name, who):
    results = []
    for L in (torch, ndgrad):
        a = L.tensor([0.5, 2.0], requires_grad=(who == "input"))
        out = L.zeros(2, requires_grad=(who == "out"))
        outcome = _outcome(lambda: CALLS[name](L, a, out))
        results.append((outcome, out.tolist(), out._version))
    assert results[0][0][0] == "RuntimeError"
    assert results[1] == results[0]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_out_allowed_under_no_grad(name):
    results = []
    for L in (torch, ndgrad):
        a = L.tensor([0.5, 2.0], requires_grad=True)
        out = L.zeros(2)
        with L.no_grad():
            CALLS[name](L, a, out)
        results.append(([round(v, 6) for v in out.tolist()], out._version > 0))
    assert results[1] == results[0]


def test_out_with_a_reduction_returning_values_and_indices():
    results = []
    for L in (torch, ndgrad):
        a = L.tensor([0.5, 2.0], requires_grad=True)
        vals, idx = L.zeros(()), L.zeros((), dtype=L.long)
        results.append(_outcome(lambda: L.max(a, 0, out=(vals, idx))))
    assert results[0][0] == "RuntimeError" and "max(): functions with out=" in results[0][1]
    assert results[1] == results[0]


@pytest.mark.parametrize("dual_is_out", [True, False])
def test_out_refused_for_dual_tensors(dual_is_out):
    results = []
    for L, fwAD in ((torch, fwAD_t), (ndgrad, fwAD_n)):
        with fwAD.dual_level():
            dual = fwAD.make_dual(L.tensor([1.0, 2.0]), L.tensor([1.0, 1.0]))
            plain = L.tensor([3.0, 4.0])
            if dual_is_out:
                outcome = _outcome(lambda: L.add(plain, plain, out=dual))
            else:
                outcome = _outcome(lambda: L.add(dual, plain, out=plain))
            results.append((outcome, plain.tolist(), dual.tolist()))
    assert results[0][0][0] == "NotImplementedError"
    assert results[1][0] == results[0][0]
    # torch writes `out` before its forward-AD check raises; ndgrad refuses before writing
    # (a failed call changes nothing; decisions.md)
    assert results[1][1:] == ([3.0, 4.0], [1.0, 2.0])


@pytest.mark.parametrize("input_rg", [True, False])
def test_out_into_an_inference_tensor_outside_the_mode(input_rg):
    results = []
    for L in (torch, ndgrad):
        with L.inference_mode():
            c = L.ones(2)
        s = L.ones(2, requires_grad=input_rg)
        outcome = _outcome(lambda: L.mul(s, s, out=c))
        results.append((outcome, c.tolist()))
    assert results[0][0][0] == "RuntimeError"
    assert results[1] == results[0]


def test_out_write_clones_a_saved_tensor_under_allow_mutation_on_saved_tensors():
    results = []
    for L in (torch, ndgrad):
        with L.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = L.tensor([1.5], requires_grad=True)
            b = L.tensor([3.0])
            out = a * b                  # saves b
            L.sin(L.tensor([2.0]), out=b)
            cloned = len(list(ctx.cloned.items()))
            out.backward()
            results.append((cloned, len(list(ctx.cloned.items())), a.grad.tolist(),
                            [round(v, 6) for v in b.tolist()]))
    assert results[0][0] == 1 and results[1] == results[0]
