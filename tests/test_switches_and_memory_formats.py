"""torch's process-wide switches and layout types against torch 2.13: deterministic
algorithms and their debug mode, float32 matmul precision, interop threads, flush-denormal,
the deprecated autocast functions, ``torch.layout`` / ``torch.memory_format`` objects and the
memory formats of ``clone`` / ``contiguous`` / ``to`` / ``is_contiguous`` and
``nn.utils.convert_conv2d_weight_memory_format``.

The switches are process state (``set_num_interop_threads`` can be called once), so each
library runs the same probe script in a fresh process and the printed outcomes are compared.
"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SWITCHES = r'''
import sys, warnings
import importlib
t = importlib.import_module(sys.argv[1])
out = []
def probe(f):
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            r = f()
        out.append((repr(r), [(w.category.__name__, str(w.message).split(" (Triggered")[0])
                              for w in seen]))
    except Exception as e:
        out.append(f"{type(e).__name__}: {e}")
probe(t.are_deterministic_algorithms_enabled)
probe(t.get_deterministic_debug_mode)
probe(lambda: t.use_deterministic_algorithms(True, warn_only=True))
probe(lambda: (t.are_deterministic_algorithms_enabled(),
               t.is_deterministic_algorithms_warn_only_enabled(), t.get_deterministic_debug_mode()))
for mode in ["error", 0, "warn", 2, 3, "bad", 1.0]:
    probe(lambda: t.set_deterministic_debug_mode(mode))
    probe(lambda: (t.are_deterministic_algorithms_enabled(),
                   t.is_deterministic_algorithms_warn_only_enabled()))
probe(lambda: t.use_deterministic_algorithms(1))
probe(lambda: t.use_deterministic_algorithms(False, warn_only=1))
probe(lambda: t.use_deterministic_algorithms(False))
probe(t.get_float32_matmul_precision)
for p in ["high", "nope", "medium", "highest"]:
    probe(lambda: t.set_float32_matmul_precision(p))
    probe(lambda: (t.get_float32_matmul_precision(), t.backends.cuda.matmul.allow_tf32))
probe(lambda: t.set_num_interop_threads(0))
probe(lambda: t.set_num_interop_threads("2"))
probe(lambda: t.set_num_interop_threads(3))
probe(t.get_num_interop_threads)
probe(lambda: t.set_num_interop_threads(2))
probe(lambda: (t.pi, t.e, t.newaxis, t.has_lapack, t.has_spectral))
probe(lambda: t.is_autocast_cpu_enabled())
probe(lambda: t.set_autocast_cpu_enabled(True))
probe(lambda: (t.is_autocast_enabled("cpu"), t.is_autocast_cpu_enabled()))
probe(lambda: t.set_autocast_cpu_enabled(False))
probe(lambda: t.set_autocast_cpu_dtype(t.float16))
probe(lambda: t.get_autocast_dtype("cpu") == t.float16)
probe(lambda: t.get_autocast_gpu_dtype() == t.float16)
probe(lambda: (t.clear_autocast_cache(), t.autocast_increment_nesting(),
               t.autocast_increment_nesting(), t.autocast_decrement_nesting(),
               t.autocast_decrement_nesting()))
for line in out:
    print(line)
'''


def _run(lib, script):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", script, lib], capture_output=True, text=True,
                       env=env, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_switches_as_torch():
    ours, theirs = _run("ndgrad", SWITCHES), _run("torch", SWITCHES)
    assert len(ours) == len(theirs) == 44
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, (i, a, b)


def test_flush_denormal_answers_unsupported_and_changes_nothing():
    import numpy as np
    import ndgrad
    tiny = ndgrad.tensor([1e-310], dtype=ndgrad.float64)
    assert ndgrad.set_flush_denormal(True) is False
    assert (tiny * 1.0).item() == np.float64(1e-310)        # still a denormal
    assert ndgrad.set_flush_denormal(False) is False


def _layouts(t):
    import copy
    import pickle
    x = t.arange(120.).reshape(2, 3, 4, 5)
    cl = x.contiguous(memory_format=t.channels_last)
    return [repr(t.strided), str(t.channels_last), repr(t.channels_last_3d),
            repr(t.contiguous_format), repr(t.preserve_format),
            isinstance(t.strided, t.layout), isinstance(t.channels_last, t.memory_format),
            isinstance(t.strided, t.memory_format), x.layout is t.strided,
            x.layout == t.strided, pickle.loads(pickle.dumps(t.channels_last)) is
            t.channels_last, copy.deepcopy(t.strided) is t.strided,
            cl.stride(), cl.is_contiguous(), cl.is_contiguous(memory_format=t.channels_last),
            x.is_contiguous(memory_format=t.channels_last),
            x.is_contiguous(memory_format=t.preserve_format),
            t.ones(1, 3, 1, 1).is_contiguous(memory_format=t.channels_last),
            x[:, :, :2].is_contiguous(memory_format=t.channels_last),
            t.ones(2, 3, 4).is_contiguous(memory_format=t.channels_last),
            cl.contiguous().stride(), (cl * 2).stride(), cl.clone().stride(),
            cl.clone(memory_format=t.contiguous_format).stride(),
            x.clone(memory_format=t.channels_last).stride(),
            cl.contiguous(memory_format=t.channels_last) is cl,
            t.ones(2, 3, 4, 5, 6).contiguous(memory_format=t.channels_last_3d).stride(),
            cl.sum(dim=(2, 3)).tolist(), cl.tolist() == x.tolist(),
            x.to(memory_format=t.channels_last).stride(),
            x.to(t.float64, memory_format=t.channels_last).stride(),
            x.to(memory_format=t.contiguous_format) is x, cl.to(memory_format=t.channels_last)
            is cl]


def test_layout_and_memory_format_objects_as_torch():
    import torch
    import ndgrad
    assert _layouts(ndgrad) == _layouts(torch)


@pytest.mark.parametrize("call", [
    lambda t, x: x.clone(memory_format=t.channels_last),
    lambda t, x: x.contiguous(memory_format=t.channels_last_3d),
    lambda t, x: x.to(memory_format=t.channels_last),
    lambda t, x: x.is_contiguous(memory_format="channels_last"),
    lambda t, x: x.contiguous(memory_format="x"),
])
def test_memory_format_misuse_as_torch(call):
    import torch
    import ndgrad
    errors = []
    for t in (torch, ndgrad):
        x = t.ones(2, 3, 4)
        with pytest.raises((RuntimeError, TypeError)) as info:
            call(t, x)
        errors.append((info.type, str(info.value)))
    assert errors[0] == errors[1]


def test_channels_last_copy_gradient_as_torch():
    import numpy as np
    import torch
    import ndgrad
    grads = []
    for t in (torch, ndgrad):
        x = t.arange(24.).reshape(1, 2, 3, 4).requires_grad_()
        y = x.to(memory_format=t.channels_last)
        z = x.clone(memory_format=t.channels_last)
        assert type(y.grad_fn).__name__ == "ToCopyBackward0"
        assert type(z.grad_fn).__name__ == "CloneBackward0"
        ((y * z) ** 2).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def _converted_model_step(t):
    import numpy as np
    rng = np.random.default_rng(0)
    m = t.nn.Sequential(t.nn.Conv2d(3, 4, 3), t.nn.ReLU(), t.nn.ConvTranspose2d(4, 2, 2))
    with t.no_grad():
        for p in m.parameters():
            p.copy_(t.tensor(rng.standard_normal(tuple(p.shape)), dtype=t.float32))
    weight = m[0].weight
    assert t.nn.utils.convert_conv2d_weight_memory_format(m, t.channels_last) is m
    assert m[0].weight is weight                        # the same Parameter, relaid
    x = t.tensor(rng.standard_normal((2, 3, 6, 6)), dtype=t.float32)
    x = x.contiguous(memory_format=t.channels_last)
    m(x).square().sum().backward()
    return ([p.stride() for p in m.parameters()],
            [p.grad.numpy() for p in m.parameters()], m(x).detach().numpy())


def test_convert_conv2d_weight_memory_format_as_torch():
    import numpy as np
    import torch
    import ndgrad
    ours, theirs = _converted_model_step(ndgrad), _converted_model_step(torch)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1] + [ours[2]], theirs[1] + [theirs[2]]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
