"""The training examples (mlp_classifier, small_cnn, char_lstm, hvp_optimization) run on a
small setting, learn, and give torch 2.13's numbers: each file is executed twice, as written
(``import ndgrad as torch``) and with the imports replaced by real torch."""

import os
import types

import numpy as np
import pytest
import torch

import ndgrad

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "examples")

_SWAPS = [("import ndgrad as torch\n", "import torch\n"),
          ("from ndgrad import nn\n", "from torch import nn\n"),
          ("import ndgrad.nn.functional as F\n", "import torch.nn.functional as F\n"),
          ("from ndgrad.utils.data import", "from torch.utils.data import")]


@pytest.fixture(autouse=True)
def one_torch_thread():
    """torch's second OpenMP thread only adds contention on a loaded 2-core machine."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def load(name, lib):
    path = os.path.join(EXAMPLES, name + ".py")
    with open(path) as f:
        src = f.read()
    if lib is torch:
        for a, b in _SWAPS:
            src = src.replace(a, b)
        assert "ndgrad" not in src.replace('"ndgrad', "").split('"""', 2)[2]
    mod = types.ModuleType(f"{name}_{lib.__name__}")
    mod.__file__ = path
    exec(compile(src, path, "exec"), mod.__dict__)
    return mod


def both(name, argv):
    return load(name, ndgrad).main(argv), load(name, torch).main(argv)


def test_mlp_classifier(capsys):
    n, t = both("mlp_classifier", ["--epochs", "4", "--hidden", "16", "--samples", "60"])
    # float32 end to end: the same batches and updates, rounding differences only
    np.testing.assert_allclose(n["losses"], t["losses"], rtol=1e-5)
    assert n["losses"][-1] < 0.7 * n["losses"][0]
    assert abs(n["accuracy"] - t["accuracy"]) <= 1 / 36 and n["accuracy"] > 0.85
    assert "test accuracy" in capsys.readouterr().out


def test_small_cnn():
    n, t = both("small_cnn", ["--epochs", "3", "--per-class", "16"])
    np.testing.assert_allclose(n["losses"], t["losses"], rtol=1e-4)
    assert n["losses"][-1] < n["losses"][0]
    assert repr(n["model"]) == repr(t["model"])


def test_char_lstm():
    n, t = both("char_lstm", ["--steps", "25", "--hidden", "16", "--embed", "8",
                              "--seq-len", "10", "--batch", "4", "--sample", "20"])
    np.testing.assert_allclose(n["losses"], t["losses"], rtol=1e-4)
    assert np.mean(n["losses"][-5:]) < np.mean(n["losses"][:5])
    assert n["sample"].startswith("the ") and len(n["sample"]) == 24


def test_hvp_optimization():
    n, t = both("hvp_optimization", ["--samples", "120", "--features", "6",
                                     "--newton-steps", "6", "--gd-steps", "10"])
    np.testing.assert_allclose(n["newton"], t["newton"], rtol=1e-12)
    np.testing.assert_allclose(n["gd"], t["gd"], rtol=1e-12)
    assert n["hvp_errors"][0] < 1e-12 and n["hvp_errors"][1] < 1e-6
    assert n["newton"][-1] < n["gd"][-1] and n["grad_norm"] < 1e-6


@pytest.mark.parametrize("name", ["mlp_classifier", "small_cnn", "char_lstm",
                                  "hvp_optimization"])
def test_examples_have_a_docstring_and_main(name):
    mod = load(name, ndgrad)
    assert mod.__doc__ and "python examples/" + name + ".py" in mod.__doc__
    assert callable(mod.main)
