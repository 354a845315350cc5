"""The meta device (ndgrad/_device.py) against torch 2.13: what the ensembling tutorial and
``Module.to_empty`` use — ``to("meta")`` of tensors and modules, meta factories, printing,
strides, torch's errors when data is read, ``to_empty`` back to the CPU, and functional_call of
a meta base model with real stacked state under vmap."""

import copy

import numpy as np
from _diff import arr, raises_same, same, t


def test_to_meta_keeps_metadata():
    def sc(lib):
        x = t(lib, arr(0, 2, 3), requires_grad=True)
        m = x.to("meta")
        f = lib.zeros(4, 2, device="meta", dtype=lib.float64)
        e = lib.empty(3, device="meta")
        return (str(m.device), m.is_meta, tuple(m.shape), str(m.dtype), m.stride(), m.requires_grad,
                str(f.device), str(f.dtype), f.stride(), e.is_meta, lib.ones(2, device="meta").is_meta,
                lib.full((2,), 1.5, device="meta").is_meta, x.is_meta, str(x.device),
                repr(e), repr(lib.zeros(2, 2, device="meta", dtype=lib.float64)))
    same(sc)


def test_reading_meta_data_raises_torchs_errors():
    for f in (lambda x: x.item(), lambda x: x.tolist(), lambda x: x.numpy(),
              lambda x: x.to("cpu")):
        raises_same(lambda lib, f=f: f(lib.zeros(2, 3).to("meta")))
    raises_same(lambda lib: lib.ones(1).to("meta").item())


def test_module_to_meta_and_to_empty():
    def sc(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
        w = m[0].weight
        m.to("meta")
        state = [(k, str(v.device), tuple(v.shape), str(v.dtype), type(v).__name__)
                 for k, v in m.state_dict(keep_vars=True).items()]
        same_param = m[0].weight is w
        m.to_empty(device="cpu")
        after = [(k, str(v.device), tuple(v.shape)) for k, v in m.state_dict().items()]
        return state, same_param, after, repr(lib.nn.Linear(2, 1).to("meta").weight)
    same(sc)


def test_meta_base_model_with_stacked_state_under_vmap():
    # the ensembling tutorial: stack_module_state + a deepcopy of one model moved to meta
    def sc(lib):
        lib.manual_seed(0)
        models = [lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
                  for _ in range(3)]
        params, buffers = lib.func.stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")

        def fmodel(p, b, x):
            return lib.func.functional_call(base, (p, b), (x,))
        x = t(lib, arr(1, 3, 6, 5, dtype=np.float32))
        out = lib.vmap(fmodel)(params, buffers, x)
        out2 = lib.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x[0])
        loop = lib.stack([m(xi) for m, xi in zip(models, x)])
        return out, out2, loop, base[0].weight.is_meta
    same(sc, rtol=1e-5, atol=1e-6)
