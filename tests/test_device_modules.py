"""The device and backend modules a torch script's prologue and epilogue touch (torch.cuda,
torch.backends.*, torch.mps, torch.amp, torch.cpu, torch.onnx, nn.DataParallel, default
device/tensor type), line by line against torch 2.13's CPU build: same values, same
exceptions, same warnings."""

import math
import warnings

import numpy as np
import pytest
import torch

import ndgrad


def run(lib, line):
    """Evaluate `line` with `torch` bound to `lib`: ("ok", repr) or ("err", class, message),
    plus the warnings it raised (category and text)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = eval(line, {"torch": lib})
            out = ("ok", _norm(value))
        except Exception as e:  # noqa: BLE001  (the exception is the observable)
            out = ("err", type(e).__name__, str(e))
    return out, [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
                 for w in caught]


def _norm(v):
    if isinstance(v, (bool, int, float, str, type(None))):
        return v
    if type(v).__name__ in ("device", "dtype"):
        return str(v)
    return type(v).__name__


PROLOGUE = [
    "torch.cuda.is_available()", "torch.cuda.device_count()", "torch.cuda.is_initialized()",
    "torch.cuda.manual_seed(0)", "torch.cuda.manual_seed_all(0)", "torch.cuda.seed()",
    "torch.cuda.seed_all()", "torch.cuda.empty_cache()", "torch.cuda.memory_allocated()",
    "torch.cuda.max_memory_allocated()", "torch.cuda.memory_reserved()",
    "torch.cuda.max_memory_reserved()", "torch.cuda.is_bf16_supported()",
    "torch.cuda.synchronize()", "torch.cuda.current_device()", "torch.cuda.get_device_name()",
    "torch.cuda.get_device_name(0)", "torch.cuda.get_device_capability()",
    "torch.cuda.get_device_properties(0)", "torch.cuda.get_rng_state()",
    "torch.cuda.initial_seed()", "torch.cuda.mem_get_info()", "torch.cuda.init()",
    "torch.cuda.Stream()", "torch.cuda.Event()", "torch.cuda.get_arch_list()",
    "torch.cuda.get_gencode_flags()", "torch.cuda.has_half", "torch.cuda.has_magma",
    "torch.cuda.is_tf32_supported()", "torch.cuda.memory_stats()",
    "torch.cuda.memory_stats_as_nested_dict()", "torch.cuda.host_memory_stats()",
    "torch.cuda.current_blas_handle()", "torch.cuda.set_per_process_memory_fraction(0.5)",
    "torch.cuda.get_sync_debug_mode()", "torch.cuda.nvtx.range_push('step')",
    "torch.cuda.nvtx.range_pop()", "torch.cuda.nvtx.mark('x')",
    "torch.cuda.amp.GradScaler().is_enabled()",
    "torch.cuda.amp.GradScaler().get_scale()", "torch.cuda.amp.autocast()._enabled",
    "torch.backends.cudnn.is_available()", "torch.backends.cudnn.enabled",
    "torch.backends.cudnn.benchmark", "torch.backends.cudnn.deterministic",
    "torch.backends.cudnn.allow_tf32", "torch.backends.cudnn.version()",
    "torch.backends.cudnn.benchmark_limit",
    "torch.backends.mps.is_available()", "torch.backends.mps.is_built()",
    "torch.backends.mps.is_macos_or_newer(14, 0)",
    "torch.backends.mkldnn.is_available()", "torch.backends.mkldnn.enabled",
    "torch.backends.mkldnn.deterministic", "torch.backends.openmp.is_available()",
    "torch.backends.mkl.is_available()", "torch.backends.cuda.is_built()",
    "torch.backends.cuda.matmul.allow_tf32",
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "torch.backends.cuda.flash_sdp_enabled()",
    "torch.mps.is_available()", "torch.mps.device_count()", "torch.mps.manual_seed(0)",
    "torch.mps.synchronize()", "torch.mps.empty_cache()", "torch.mps.seed()",
    "torch.mps.current_allocated_memory()", "torch.mps.driver_allocated_memory()",
    "torch.cpu.is_available()", "torch.cpu.device_count()", "torch.cpu.synchronize()",
    "torch.cpu.current_device()",
    "torch.get_default_device()", "torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
    "torch.device('cuda')", "torch.device('cuda:1')", "torch.device('nope')",
    "torch.ones(1, device='cuda')", "torch.zeros(2, device=torch.device('cuda', 0))",
    "torch.zeros(1, device='xpu')", "torch.ones(2).to('cuda')", "torch.ones(2).cuda()",
    "torch.ones(2).cpu().tolist()", "torch.nn.Linear(2, 2).cuda()",
    "torch.nn.Linear(2, 2).to('cuda')",
    "torch.amp.GradScaler().is_enabled()", "torch.amp.GradScaler('cpu').is_enabled()",
    "torch.amp.GradScaler('cpu').get_scale()", "torch.amp.GradScaler('cpu').state_dict()",
    "torch.amp.is_autocast_available('cpu')", "torch.amp.is_autocast_available('cuda')",
    "torch.amp.autocast('cuda')._enabled",
    "torch.amp.autocast('cpu', dtype=torch.float32)._enabled",
    "torch.amp.autocast('nope')", "torch.amp.autocast(0)",
    "torch.is_autocast_enabled()", "torch.is_autocast_enabled('cpu')",
    "torch.cpu.amp.autocast(dtype=torch.float16)._enabled",
    "torch.nn.DataParallel(torch.nn.Linear(2, 2)).device_ids",
    "list(torch.nn.DataParallel(torch.nn.Linear(2, 2)).state_dict())",
    "torch.nn.parallel.data_parallel(torch.nn.Linear(2, 2), torch.ones(1, 2))",
]


@pytest.mark.parametrize("line", PROLOGUE)
def test_line_behaves_like_torch(line):
    assert run(ndgrad, line) == run(torch, line)


def test_nvtx_range_and_allocator_contexts():
    for lib in (torch, ndgrad):
        with pytest.raises(RuntimeError, match="NVTX functions not installed"):
            with lib.cuda.nvtx.range("block"):
                pass
    # (torch 2.13's CPU build fails there with an AttributeError from torch._C)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        with ndgrad.cuda.caching_allocator_disabled():
            pass


def test_flags_are_assignable_and_flags_context_restores():
    for lib in (torch, ndgrad):
        lib.backends.cudnn.benchmark = True
        lib.backends.cudnn.deterministic = True
        lib.backends.cuda.matmul.allow_tf32 = True
        assert lib.backends.cudnn.benchmark and lib.backends.cuda.matmul.allow_tf32
        with lib.backends.cudnn.flags(enabled=False, benchmark=False):
            assert not lib.backends.cudnn.enabled and not lib.backends.cudnn.benchmark
        assert lib.backends.cudnn.enabled and lib.backends.cudnn.benchmark
        lib.backends.cudnn.benchmark = False
        lib.backends.cudnn.deterministic = False
        lib.backends.cuda.matmul.allow_tf32 = False


def test_default_device_and_tensor_type():
    for lib in (torch, ndgrad):
        lib.set_default_device("cpu")
        assert str(lib.get_default_device()) == "cpu" and lib.ones(1).device.type == "cpu"
        lib.set_default_device("cuda")
        try:
            with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
                lib.ones(1)
        finally:
            lib.set_default_device(None)
        assert lib.ones(1).device.type == "cpu"
        # (torch warns that set_default_tensor_type is deprecated once per process)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                lib.set_default_tensor_type("torch.DoubleTensor")
                assert lib.get_default_dtype() == lib.float64
                assert lib.ones(1).dtype == lib.float64
            finally:
                lib.set_default_dtype(lib.float32)
            for bad in ("torch.cuda.FloatTensor", "torch.IntTensor", 3):
                with pytest.raises(TypeError) as te:
                    torch.set_default_tensor_type(bad)
                with pytest.raises(TypeError) as ne:
                    ndgrad.set_default_tensor_type(bad)
                assert str(ne.value) == str(te.value)


def test_autocast_state_nests_and_restores_on_error():
    for lib in (torch, ndgrad):
        assert not lib.is_autocast_enabled("cpu")
        with pytest.raises(ValueError):
            with lib.autocast("cpu", dtype=lib.float16):
                assert lib.is_autocast_enabled("cpu")
                assert lib.get_autocast_dtype("cpu") == lib.float16
                with lib.autocast("cpu", enabled=False):
                    assert not lib.is_autocast_enabled("cpu")
                assert lib.is_autocast_enabled("cpu")
                raise ValueError
        assert not lib.is_autocast_enabled("cpu")

        @lib.autocast("cpu", dtype=lib.float16)
        def inside(lib=lib):
            return lib.is_autocast_enabled("cpu")
        assert inside() and not lib.is_autocast_enabled("cpu")


def test_cpu_autocast_default_dtype_is_bfloat16_which_ndgrad_lacks():
    with pytest.warns(UserWarning, match="ndgrad has no bfloat16"):
        ac = ndgrad.autocast("cpu")
    with ac:
        assert not ndgrad.is_autocast_enabled("cpu")
        x = ndgrad.ones(2, 2)
        assert (x @ x).dtype == ndgrad.float32


def _train(lib, scaler_kw, steps=6, poison=(2,)):
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 1)
    with lib.no_grad():
        model.weight.copy_(lib.tensor([[0.5, -0.25, 0.125]]))
        model.bias.fill_(0.1)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu", **scaler_kw)
    x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    scales, outs = [], []
    for i in range(steps):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        if i in poison:
            loss = loss * float("inf")
        scaled = scaler.scale(loss)
        outs.append(scaled.item())
        scaled.backward()
        scaler.unscale_(opt)
        grads = model.weight.grad.detach().numpy().copy()
        outs.append(grads.tolist())
        ret = scaler.step(opt)
        outs.append(ret)
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, outs, model.weight.detach().numpy().copy(), scaler.state_dict()


def test_grad_scaler_on_cpu_matches_torch():
    kw = {"init_scale": 1024.0, "growth_interval": 2}
    n = _train(ndgrad, kw)
    t = _train(torch, kw)
    assert n[0] == t[0]                   # scales: backoff after the inf step, growth after 2
    assert [v for v in n[1] if v is None or isinstance(v, float) and math.isinf(v)] == \
        [v for v in t[1] if v is None or isinstance(v, float) and math.isinf(v)]
    flat = [np.asarray(v, dtype=np.float64).ravel() for v in n[1] if v is not None]
    want = [np.asarray(v, dtype=np.float64).ravel() for v in t[1] if v is not None]
    np.testing.assert_allclose(np.concatenate(flat), np.concatenate(want), rtol=1e-5)
    np.testing.assert_allclose(n[2], t[2], rtol=1e-5)
    assert n[3] == t[3]


def test_grad_scaler_errors_like_torch():
    for lib in (torch, ndgrad):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
            scaler.step(opt)
        scaler.scale(p.sum()).backward()
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
            scaler.unscale_(opt)
        scaler.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            scaler.step(opt)
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            scaler.step(opt, closure=lambda: 0)
        with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
            lib.amp.GradScaler("cpu", growth_factor=1.0)


def test_onnx_export_raises_clearly():
    with pytest.raises(RuntimeError, match="ndgrad cannot export to ONNX"):
        ndgrad.onnx.export(ndgrad.nn.Linear(2, 2), ndgrad.ones(1, 2), "model.onnx")


def test_data_parallel_forwards_to_the_module():
    torch.manual_seed(0)
    tl = torch.nn.Linear(3, 2)
    nl = ndgrad.nn.Linear(3, 2)
    nl.load_state_dict({k: ndgrad.tensor(v.detach().numpy()) for k, v in
                        tl.state_dict().items()})
    tdp, ndp = torch.nn.DataParallel(tl), ndgrad.nn.DataParallel(nl)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(ndp(ndgrad.tensor(x)).detach().numpy(),
                               tdp(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    assert repr(ndp) == repr(tdp)


def test_random_namespace_like_torch():
    def draws(lib):
        lib.random.manual_seed(7)
        out = [lib.rand(3).tolist()]
        with lib.random.fork_rng():
            out.append(lib.randn(2).tolist())
        out.append(lib.rand(3).tolist())             # as if the fork never drew
        state = lib.random.get_rng_state()
        out.append(lib.rand(2).tolist())
        lib.random.set_rng_state(state)
        out.append(lib.rand(2).tolist())
        out.append(lib.random.initial_seed())
        with lib.random.fork_rng(enabled=False):
            lib.rand(1)
        out.append(lib.rand(1).tolist())
        out.append(lib.random.thread_safe_generator())
        return out
    assert draws(ndgrad) == draws(torch)
