"""Third-party pure-torch libraries run on ndgrad with torch's numbers.

tests/_ecosystem_uses.py holds one representative use per library (an ODE solved with adjoint
gradients, each optimizer for a few steps, einops layers, ...). It runs twice, once with real
torch and once with the name ``torch`` bound to ndgrad (``python -m ndgrad.run``), each in a
fresh process; every number it prints under ndgrad must equal torch's to within rounding. The
libraries are pinned in the ``test`` extra of pyproject.toml (pure Python, torch their only
framework dependency). docs/ecosystem.md gives the figures of the libraries' own test suites.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "_ecosystem_uses.py")
LIBRARIES = ["torch_optimizer", "einops", "torchdiffeq", "torchsde", "torchmin", "torch_ema",
             "geotorch", "higher"]
# How close ndgrad's numbers must be to torch's. The uses run in float64, so only rounding
# differences (BLAS summation order) remain; torch_optimizer's RAdam computes its update in
# float32 whatever the parameter's dtype (``p.data.float()``), where torch's vectorised kernels
# round fused multiply-adds once: float32 rounding, compounded over four steps.
RTOL, ATOL = 1e-7, 1e-9
TOLERANCES = {"torch_optimizer": (1e-5, 1e-7)}


def _run(on_ndgrad):
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONWARNINGS="ignore")
    cmd = [sys.executable, *(["-m", "ndgrad.run"] if on_ndgrad else []), SCRIPT, *LIBRARIES]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def results():
    """Both runs, once for the module: (torch's results, ndgrad's results)."""
    return _run(False), _run(True)


@pytest.mark.parametrize("library", LIBRARIES)
def test_library_gives_torch_s_numbers(results, library):
    on_torch, on_ndgrad = results[0][library], results[1][library]
    assert not isinstance(on_torch, dict), f"the use fails on torch:\n{on_torch['error']}"
    assert not isinstance(on_ndgrad, dict), f"the use fails on ndgrad:\n{on_ndgrad['error']}"
    assert len(on_torch) > 10
    assert len(on_ndgrad) == len(on_torch)
    rtol, atol = TOLERANCES.get(library, (RTOL, ATOL))
    np.testing.assert_allclose(on_ndgrad, on_torch, rtol=rtol, atol=atol)
