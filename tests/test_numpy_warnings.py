"""NumPy's floating-point RuntimeWarnings do not reach a user of ndgrad's ops (torch computes
inf and NaN silently), while the user's own NumPy code keeps them. Run in a fresh interpreter
with warnings shown (``-W default``, installed before ndgrad is imported, as a user's
interpreter options are); the values are torch's."""

import json
import subprocess
import sys

import numpy as np
import torch

CASES = {
    "div_by_zero": "x / 0",
    "log_zero": "L.log(L.zeros(2))",
    "sqrt_negative": "L.sqrt(x)",
    "exp_overflow": "L.exp(L.tensor([1000.0]))",
    "inplace_div": "x.clone().div_(0)",
    "inf_times_zero": "L.tensor([float('inf')]) * 0",
    "float16_overflow": "L.tensor([60000.0], dtype=L.float16) * 10",
    "mean_of_nothing": "L.zeros(0, 3).mean(0)",
    "log_backward": "L.autograd.grad(L.log(y).sum(), y)[0]",
    "compiled": "L.compile(lambda t: (t / 0).log())(x)",
}

SCRIPT = """
import json, sys, warnings
import numpy as np
import ndgrad as L
x = L.tensor([1.0, 0.0, -1.0])
y = L.zeros(2, requires_grad=True)
out = {}
with warnings.catch_warnings(record=True) as seen:
    for name, expr in json.loads(sys.argv[1]).items():
        for _ in range(2):
            v = eval(expr)
        out[name] = [repr(float(e)) for e in v.detach().reshape(-1).tolist()]
    ndgrad_warnings = [str(w.message) for w in seen]
with warnings.catch_warnings(record=True) as seen:
    np.log(np.zeros(1))
    user_warnings = [str(w.message) for w in seen]
print(json.dumps([out, ndgrad_warnings, user_warnings]))
"""


def test_ndgrad_ops_do_not_warn_and_user_numpy_still_does():
    run = subprocess.run([sys.executable, "-W", "default", "-c", SCRIPT, json.dumps(CASES)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    values, ndgrad_warnings, user_warnings = json.loads(run.stdout.strip().splitlines()[-1])
    assert ndgrad_warnings == []
    assert user_warnings == ["divide by zero encountered in log"]
    env = {"L": torch, "x": torch.tensor([1.0, 0.0, -1.0]),
           "y": torch.zeros(2, requires_grad=True)}
    for name, expr in CASES.items():
        if name == "compiled":
            expr = "(x / 0).log()"
        ref = eval(expr, env).detach().reshape(-1).tolist()
        assert np.array_equal(np.array([float(v) for v in values[name]]), np.array(ref),
                              equal_nan=True), name
