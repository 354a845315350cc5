"""`python -m ndgrad`: runs, trains, checks its Function, writes the artifacts it announces."""

import csv
import os
import subprocess
import sys

import numpy as np
import torch

import ndgrad
from ndgrad import __main__ as job

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_command_line_run_writes_artifacts(tmp_path):
    out = tmp_path / "arts"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-m", "ndgrad", "--epochs", "3", "--hidden", "8",
                          "--points", "60", "--out", str(out)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert "gradcheck of the custom LinearFunction (float64): passed" in text
    assert "epoch   3/3 [" in text and "loss " in text and "acc " in text
    for name in ("autograd_graph.dot", "loss_curve.csv", "model.pt"):
        path = out / name
        assert path.exists() and str(path.resolve()) in text
    dot = (out / "autograd_graph.dot").read_text()
    assert dot.startswith("digraph") and "LinearFunctionBackward" in dot
    assert "NllLossBackward0" in dot
    rows = list(csv.DictReader(open(out / "loss_curve.csv")))
    assert [int(r["epoch"]) for r in rows] == [1, 2, 3]
    ckpt = ndgrad.load(str(out / "model.pt"))
    model = job.SpiralNet(8)
    model.load_state_dict(ckpt["model"])
    assert ckpt["epochs"] == 3 and 0.0 <= ckpt["test_accuracy"] <= 1.0


def test_default_training_learns_the_spirals(tmp_path, capsys):
    assert job.main(["--epochs", "40", "--points", "300", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    acc = float(text.split("test accuracy: ")[1].split("%")[0])
    assert acc > 90.0, text
    rows = list(csv.DictReader(open(tmp_path / "loss_curve.csv")))
    losses = [float(r["loss"]) for r in rows]
    assert losses[-1] < 0.5 * losses[0]
    lrs = [float(r["lr"]) for r in rows]
    assert lrs[0] == 0.02 and lrs[-1] < lrs[0]


def test_custom_function_gradients_match_torch_linear():
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal(5)
    g = rng.standard_normal((4, 5))
    nx, nw, nb = (ndgrad.tensor(a, requires_grad=True) for a in (x, w, b))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    out = job.LinearFunction.apply(nx, nw, nb)
    tout = torch.nn.functional.linear(tx, tw, tb)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    out.backward(ndgrad.tensor(g))
    tout.backward(torch.tensor(g))
    for n, t in ((nx, tx), (nw, tw), (nb, tb)):
        np.testing.assert_allclose(n.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    assert out.grad_fn.name() == "LinearFunctionBackward"
    assert job.check_custom_function() is True


def test_minimal_dot_fallback_lists_grad_fns():
    w = ndgrad.ones(2, requires_grad=True)
    loss = (w * 3).exp().sum()
    dot = job._minimal_dot(loss)
    for name in ("SumBackward0", "ExpBackward0", "MulBackward0", "AccumulateGrad"):
        assert name in dot
    assert dot.count("->") == 3


def test_spirals_are_two_balanced_classes():
    gen = ndgrad.Generator().manual_seed(3)
    x, y = job.two_spirals(100, generator=gen)
    assert tuple(x.shape) == (200, 2) and y.dtype == ndgrad.int64
    assert int(y.sum()) == 100 and float(x.abs().max()) < 1.6
