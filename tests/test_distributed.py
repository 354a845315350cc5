"""ndgrad.distributed, DistributedDataParallel, DistributedSampler and DataLoader workers.

Multi-process runs use 2 ranks on this machine, started by the MPI launcher (``mpiexec``
beside this Python, from the ``mpich`` wheel) or by ``python -m ndgrad.distributed.run``.
Every launch has a timeout and runs in its own session, killed whole if it overruns. Each
script runs once per test session: the first xdist worker that needs it runs it under a file
lock and the other one reuses its output.
"""

import fcntl
import importlib
import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import ndgrad
import ndgrad.utils.data as nud
from ndgrad.distributed.run import launch_env, mpiexec_command

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "dist_scripts")
RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID", str(os.getpid()))
CACHE = os.path.join(tempfile.gettempdir(), f"ndgrad_dist_{RUN_ID}")


def _script(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(SCRIPTS, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run(cmd, timeout=90, env=None):
    """Run ``cmd`` in its own session; kill the whole session when it overruns."""
    env = launch_env(env)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{cmd} did not finish in {timeout} s\n{out}\n{err}")
    return proc.returncode, out, err, time.monotonic() - start


def once(name, produce):
    """The output folder of ``produce(folder)``, run once per test session."""
    folder = os.path.join(CACHE, name)
    os.makedirs(CACHE, exist_ok=True)
    with open(folder + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(folder + ".done"):
            os.makedirs(folder, exist_ok=True)
            produce(folder)
            open(folder + ".done", "w").close()
    return folder


def mpi_run(script, *args, n=2, timeout=90):
    cmd = mpiexec_command(n, [sys.executable, os.path.join(SCRIPTS, script), *args])
    return run(cmd, timeout)


def torchrun_like(script, *args, n=2, timeout=120, attempts=2):
    """Launch the ranks as torchrun would (env:// variables), for the torch oracle. A failed
    start is tried once more on a fresh port: the free port found below can be taken by
    another process before torch's rendezvous binds it (the suite runs in parallel)."""
    for _ in range(attempts):
        errs = _torchrun_once(script, args, n, timeout)
        if errs is None:
            return
    pytest.fail("torch ranks failed:\n" + "\n".join(errs))


def _torchrun_once(script, args, n, timeout):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(n):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(n), LOCAL_RANK=str(r),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, os.path.join(SCRIPTS, script), *args],
                                      cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True,
                                      start_new_session=True))
    deadline = time.monotonic() + timeout
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=max(1, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            for q in procs:
                os.killpg(q.pid, signal.SIGKILL)
            pytest.fail(f"torch ranks did not finish in {timeout} s")
    errs = [err for p, (out, err) in zip(procs, outs) if p.returncode != 0]
    return errs or None


def ranks(folder, n=2, ext="npz"):
    if ext == "npz":
        return [dict(np.load(os.path.join(folder, f"rank{r}.npz"))) for r in range(n)]
    return [json.load(open(os.path.join(folder, f"rank{r}.json"))) for r in range(n)]


# --------------------------------------------------------------------------- import
def test_import_ndgrad_does_not_import_mpi4py_and_works_without_it():
    code = ("import sys; import ndgrad, ndgrad.distributed, ndgrad.nn.parallel, "
            "ndgrad.utils.data; print('mpi4py' in sys.modules); "
            "sys.modules['mpi4py'] = None; import ndgrad.distributed._mpi as m; "
            "print(ndgrad.distributed.is_available())\n"
            "try:\n ndgrad.distributed.init_process_group('gloo')\n"
            "except RuntimeError as e: print('RuntimeError', e)")
    rc, out, err, _ = run([sys.executable, "-c", code], timeout=60)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "False" and lines[1] == "False"
    assert lines[2].startswith("RuntimeError ndgrad.distributed needs mpi4py")


def test_not_initialized_errors_and_backends():
    import ndgrad.distributed as dist
    import torch.distributed as tdist
    assert dist.is_initialized() is False and dist.is_available() is True
    for mod in (dist, tdist):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            mod.get_rank()
    with pytest.raises(RuntimeError, match="doesn't have NCCL built in"):
        dist.init_process_group("nccl")
    assert dist.is_initialized() is False
    assert repr(dist.ReduceOp.SUM) == repr(tdist.ReduceOp.SUM)
    assert str(dist.ReduceOp.MAX) == str(tdist.ReduceOp.MAX)


# --------------------------------------------------------------------------- collectives
@pytest.fixture(scope="module")
def coll():
    def produce(folder):
        rc, out, err, _ = mpi_run("collectives.py", folder)
        assert rc == 0, out + err
    return ranks(once("collectives", produce))


def _expected_collectives():
    inputs = _script("collectives").inputs
    n = 2
    xs = [inputs(r) for r in range(n)]
    red = {"SUM": sum(xs), "AVG": sum(xs) / n, "PRODUCT": xs[0] * xs[1],
           "MIN": np.minimum(*xs), "MAX": np.maximum(*xs)}
    ints = [np.array([[r + 1, 6 - r], [r ^ 3, 5]], dtype=np.int64) for r in range(n)]
    ired = {"SUM": ints[0] + ints[1], "MIN": np.minimum(*ints), "MAX": np.maximum(*ints),
            "BAND": ints[0] & ints[1], "BOR": ints[0] | ints[1], "BXOR": ints[0] ^ ints[1],
            "PRODUCT": ints[0] * ints[1]}
    exp = []
    for r in range(n):
        e = {f"all_reduce_{k}": v for k, v in red.items()}
        e.update({f"all_reduce_int_{k}": v for k, v in ired.items()})
        e["all_reduce_bool_MAX"] = np.array([True, True, False])
        e["all_reduce_async"] = red["SUM"].astype(np.float64)
        e["async_completed"] = np.array(True)
        for s in range(n):
            e[f"broadcast_{s}"] = xs[s]
            e[f"reduce_MAX_{s}"] = red["MAX"] if r == s else xs[r]
        e["all_gather"] = np.stack(xs)
        e["all_gather_into_tensor"] = np.concatenate(xs)
        e["all_gather_into_tensor_stacked"] = np.stack(xs)
        e["reduce_scatter"] = sum(x * (r + 1) for x in xs)
        e["reduce_scatter_tensor"] = np.minimum(*[x[0:1] + r for x in xs])
        if r == 0:
            e["gather"] = np.stack(xs)
        e["scatter"] = np.full((2, 3), 10.0 * r + 1)
        e["all_to_all"] = np.concatenate([np.full((j + 1) * 2, 10.0 * j + r) for j in range(n)])
        e["all_to_all_single"] = np.concatenate(
            [np.arange(2 * n, dtype=np.float32)[2 * r:2 * r + 2] + 100 * j for j in range(n)])
        e["recv"] = xs[1] * 2 if r == 0 else xs[0]
        if r == 0:
            e["recv_src"] = np.array(1)
        e["bcast_obj"] = np.array(repr([{"rank": 0}, "s0", None]))
        e["all_gather_obj"] = np.array(repr([{"r": j, "l": list(range(j + 1))}
                                             for j in range(n)]))
        if r == 0:
            e["gather_obj"] = np.array(repr([("g", j) for j in range(n)]))
        e["scatter_obj"] = np.array(repr([f"piece{r}"]))
        e["subgroup"] = xs[0] if r == 0 else np.array(-1)
        for k, v in e.items():      # every tensor is float32 but the float64 async one
            if v.dtype == np.float64 and k != "all_reduce_async":
                e[k] = v.astype(np.float32)
        exp.append(e)
    return exp


EXPECTED = _expected_collectives()


@pytest.mark.parametrize("name", sorted({k for e in EXPECTED for k in e}))
def test_collective_matches_its_definition(coll, name):
    for r in range(2):
        if name not in EXPECTED[r]:
            assert name not in coll[r]
            continue
        got, exp = coll[r][name], EXPECTED[r][name]
        assert got.shape == exp.shape and got.dtype == exp.dtype, (r, name)
        if exp.dtype.kind in "fc":
            np.testing.assert_allclose(got, exp, rtol=1e-6, err_msg=f"rank {r}")
        else:
            assert (got == exp).all(), (r, name, got, exp)


def test_every_rank_saw_the_world(coll):
    assert [int(c["rank"]) for c in coll] == [0, 1]
    assert all(int(c["world"]) == 2 for c in coll)


# --------------------------------------------------------------------------- faults
@pytest.fixture(scope="module")
def faults():
    def produce(folder):
        rc, out, err, _ = mpi_run("faults.py", "mismatch", folder, timeout=60)
        assert rc == 0, out + err
    return ranks(once("faults", produce), ext="json")


@pytest.mark.parametrize("case,what", [("shape", "TensorShape=[3]"),
                                       ("optype", "OpType=BROADCAST"),
                                       ("redop", "ReduceOp=MAX")])
def test_mismatched_collectives_raise_on_every_rank(faults, case, what):
    for r in range(2):
        msg = faults[r][case]
        assert msg.startswith("RuntimeError: Detected mismatch between collectives on ranks."), msg
        assert what in msg


def test_group_works_after_mismatch_and_reinitialises(faults):
    for r in range(2):
        assert faults[r]["after_mismatch"] == [3.0, 3.0]
        assert faults[r]["destroyed"] is False
        assert faults[r]["reinit"] == [True, 2, [2.0, 2.0]]


def test_a_rank_that_never_joins_times_out(faults):
    msg = faults[0]["timeout"]
    assert msg.startswith("DistBackendError: [ndgrad.distributed] Timed out after 1 s"), msg
    assert 0.9 < faults[0]["timeout_seconds"] < 10


def test_a_rank_that_raises_stops_the_others(tmp_path):
    cmd = [sys.executable, "-m", "ndgrad.distributed.run", "--nproc-per-node", "2",
           os.path.join(SCRIPTS, "faults.py"), "raise", str(tmp_path)]
    rc, out, err, secs = run(cmd, timeout=60)
    assert rc != 0
    # The launcher's closing summary carries the traceback even when MPI's relay of the rank's
    # own stderr lost it (seen once under load: err held nothing of rank 1's).
    summary = err[err.index("ndgrad.distributed.run: the job failed; rank 1 raised:"):]
    assert "[rank 1] failed:" in summary
    assert "ValueError: rank 1 failed on purpose" in summary
    assert secs < 50        # rank 0 waited in a 30-minute collective: it was stopped


# --------------------------------------------------------------------------- DDP
@pytest.fixture(scope="module")
def ddp_ndgrad():
    def produce(folder):
        cmd = [sys.executable, "-m", "ndgrad.distributed.run", "--nproc-per-node", "2",
               os.path.join(SCRIPTS, "ddp_train.py"), "ndgrad", folder]
        rc, out, err, _ = run(cmd, timeout=90)
        assert rc == 0, out + err
    return ranks(once("ddp_ndgrad", produce))


@pytest.fixture(scope="module")
def ddp_torch():
    return ranks(once("ddp_torch", lambda folder: torchrun_like("ddp_train.py", "torch",
                                                                 folder)))


def _reference():
    """Single-process training on the full (global) batches, from rank 0's initial model."""
    s = _script("ddp_train")
    F = ndgrad.nn.functional
    x, y = s.data()
    X, Y = ndgrad.tensor(x), ndgrad.tensor(y)
    model = s.build(ndgrad, 0)
    opt = ndgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ds = list(range(s.N))
    ref = {"init": s.params(model)}
    for epoch in range(2):
        streams = []
        for r in range(2):
            smp = nud.DistributedSampler(ds, num_replicas=2, rank=r, shuffle=True, seed=3)
            smp.set_epoch(epoch)
            streams.append(list(smp))
        for k in range(0, len(streams[0]), s.LOCAL_BATCH):
            idx = streams[0][k:k + s.LOCAL_BATCH] + streams[1][k:k + s.LOCAL_BATCH]
            opt.zero_grad()
            F.cross_entropy(model(X[idx]), Y[idx]).backward()
            opt.step()
    ref["trained"] = s.params(model)
    ia = [[r * s.LOCAL_BATCH + i for i in range(s.LOCAL_BATCH)] for r in range(2)]
    ib = [[8 + r * s.LOCAL_BATCH + i for i in range(s.LOCAL_BATCH)] for r in range(2)]
    for r in range(2):
        model.zero_grad()
        F.cross_entropy(model(X[ia[r]]), Y[ia[r]]).backward()
        ref[f"nosync{r}"] = {k: v.grad.numpy().copy() for k, v in model.named_parameters()}
    opt.zero_grad()
    F.cross_entropy(model(X[ia[0] + ia[1]]), Y[ia[0] + ia[1]]).backward()
    F.cross_entropy(model(X[ib[0] + ib[1]]), Y[ib[0] + ib[1]]).backward()
    opt.step()
    ref["accumulated"] = s.params(model)
    net = s.Branchy.build(ndgrad, 0)
    grads = []
    for r in range(2):
        net.zero_grad(set_to_none=True)
        F.cross_entropy(net(X[ia[r]], use_extra=(r == 0)), Y[ia[r]]).backward()
        grads.append({k: (v.grad.numpy().copy() if v.grad is not None else None)
                      for k, v in net.named_parameters()})
    ref["branch"] = {"a.weight": (grads[0]["a.weight"] + grads[1]["a.weight"]) / 2,
                     "a.bias": (grads[0]["a.bias"] + grads[1]["a.bias"]) / 2,
                     "extra.weight": grads[0]["extra.weight"] / 2,
                     "extra.bias": grads[0]["extra.bias"] / 2}
    ref["branch_init"] = s.params(net)
    return ref


@pytest.fixture(scope="module")
def reference():
    return _reference()


def _prefixed(d, prefix):
    return {k[len(prefix) + 1:]: v for k, v in d.items() if k.startswith(prefix + "/")}


def test_ddp_broadcasts_rank0_state_at_wrap(ddp_ndgrad, reference):
    for r in range(2):
        assert (ddp_ndgrad[r]["scale"] == 1.0).all()
        for k, v in reference["init"].items():
            np.testing.assert_array_equal(ddp_ndgrad[r][f"init/{k}"], v)


@pytest.mark.parametrize("phase", ["trained", "accumulated"])
def test_ddp_training_equals_single_process_full_batch(ddp_ndgrad, reference, phase):
    for r in range(2):
        got = _prefixed(ddp_ndgrad[r], phase)
        assert set(got) == set(reference[phase])
        for k, v in reference[phase].items():
            np.testing.assert_allclose(got[k], v, rtol=1e-5, atol=1e-6, err_msg=f"{r} {k}")
    for k in reference[phase]:      # the replicas stay identical
        np.testing.assert_array_equal(ddp_ndgrad[0][f"{phase}/{k}"],
                                      ddp_ndgrad[1][f"{phase}/{k}"])


def test_ddp_no_sync_keeps_gradients_local(ddp_ndgrad, reference):
    for r in range(2):
        for k, v in reference[f"nosync{r}"].items():
            np.testing.assert_allclose(ddp_ndgrad[r][f"nosync_grads/{k}"], v, rtol=1e-5,
                                       atol=1e-7)


def test_ddp_find_unused_parameters(ddp_ndgrad, reference):
    for r in range(2):
        for k, v in reference["branch"].items():
            np.testing.assert_allclose(ddp_ndgrad[r][f"branch_grads/{k}"], v, rtol=1e-5,
                                       atol=1e-7)
        for k in ("never.weight", "never.bias"):     # unused everywhere: .grad stays None
            assert str(ddp_ndgrad[r][f"branch_grads/{k}"]) == "None"


def test_ddp_equals_torch_ddp(ddp_ndgrad, ddp_torch):
    for r in range(2):
        assert set(ddp_ndgrad[r]) == set(ddp_torch[r])
        for k, v in ddp_torch[r].items():
            if v.dtype.kind == "f":
                np.testing.assert_allclose(ddp_ndgrad[r][k], v, rtol=1e-5, atol=1e-6,
                                           err_msg=f"rank {r} {k}")
            else:
                assert (ddp_ndgrad[r][k] == v).all(), k
        assert list(ddp_ndgrad[r]["keys"]) == list(ddp_torch[r]["keys"])
        assert list(ddp_torch[r]["keys"])[0] == "module.scale"


def test_ddp_rejects_what_torch_rejects():
    import ndgrad.distributed as dist
    from ndgrad.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("gloo")         # a single-process group
    try:
        with pytest.raises(RuntimeError, match="doesn't have any parameter that requires"):
            DDP(ndgrad.nn.ReLU())
        with pytest.raises(ValueError, match="device_ids and output_device arguments only"):
            DDP(ndgrad.nn.Linear(2, 2), device_ids=[0])
        lin = ndgrad.nn.Linear(3, 2)
        ddp = DDP(lin)
        assert ddp.module is lin
        assert list(ddp.state_dict()) == ["module.weight", "module.bias"]
        ddp(ndgrad.ones(1, 3)).sum().backward()
        np.testing.assert_allclose(lin.weight.grad.numpy(), np.ones((2, 3)))
        two = ndgrad.nn.ModuleList([ndgrad.nn.Linear(3, 2), ndgrad.nn.Linear(3, 2)])
        two.forward = lambda x: two[0](x)               # two[1] never gets a gradient
        ddp = DDP(two)
        ddp(ndgrad.ones(1, 3)).sum().backward()
        with pytest.raises(RuntimeError, match="Expected to have finished reduction in the "
                                               "prior iteration"):
            ddp(ndgrad.ones(1, 3))
        with ddp.no_sync(), ndgrad.no_grad():          # no reduction expected: no error
            ddp(ndgrad.ones(1, 3))
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()


# --------------------------------------------------------------------------- sampler
@pytest.mark.parametrize("n", [0, 1, 5, 7, 16])
@pytest.mark.parametrize("replicas", [1, 2, 3])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("drop_last", [True, False])
def test_distributed_sampler_streams_equal_torch(n, replicas, shuffle, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        a = nud.DistributedSampler(data, replicas, rank, shuffle, seed=11, drop_last=drop_last)
        b = tud.DistributedSampler(data, replicas, rank, shuffle, seed=11, drop_last=drop_last)
        for epoch in (0, 1, 5):
            a.set_epoch(epoch)
            b.set_epoch(epoch)
            assert list(a) == list(b) and len(a) == len(b)


def test_distributed_sampler_errors():
    for mod in (nud, tud):
        with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval "
                                             r"\[0, 1\]"):
            mod.DistributedSampler(list(range(4)), num_replicas=2, rank=2)


# --------------------------------------------------------------------------- workers
def _random_ds(lib):
    """Samples that draw from every RNG a worker seeds, plus the worker's identity."""
    data = lib.utils.data

    class RandomDS(data.Dataset):
        def __len__(self):
            return 11

        def __getitem__(self, i):
            info = data.get_worker_info()
            return (lib.tensor(float(i)), lib.rand(2), float(np.random.rand()),
                    random.random(), -1 if info is None else info.id,
                    -1 if info is None else info.seed)
    return RandomDS()


def _batches(lib, **kw):
    lib.manual_seed(7)
    loader = lib.utils.data.DataLoader(_random_ds(lib), batch_size=3, shuffle=True, **kw)
    out = []
    for _ in range(2):
        for b in loader:
            out.append([v.tolist() if hasattr(v, "tolist") else v for v in b])
    out.append(lib.rand(1).item())      # the main generator's state afterwards
    return out


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.parametrize("kw", [dict(num_workers=2), dict(num_workers=2, persistent_workers=True),
                                dict(num_workers=3, prefetch_factor=1)])
def test_worker_loading_equals_torch_workers(kw):
    assert _batches(ndgrad, **kw) == _batches(torch, **kw)


def test_worker_loading_equals_in_process_loading():
    x = ndgrad.arange(40.0).reshape(20, 2)
    ds = nud.TensorDataset(x, ndgrad.arange(20))

    def epochs(**kw):
        ndgrad.manual_seed(3)
        loader = nud.DataLoader(ds, batch_size=3, **kw)
        return [[t.tolist() for t in b] for _ in range(2) for b in loader] + [ndgrad.rand(1).item()]
    for opts in (dict(drop_last=False), dict(drop_last=True, shuffle=True)):
        ref = epochs(**opts)
        assert epochs(num_workers=2, **opts) == ref
        assert epochs(num_workers=3, prefetch_factor=1, **opts) == ref
    # persistent workers draw the base seed once, so only the first epoch's state matches
    ndgrad.manual_seed(3)
    a = [[t.tolist() for t in b] for b in nud.DataLoader(ds, batch_size=4, shuffle=True)]
    ndgrad.manual_seed(3)
    b = [[t.tolist() for t in b] for b in nud.DataLoader(ds, batch_size=4, shuffle=True,
                                                           num_workers=2,
                                                           persistent_workers=True)]
    assert a == b


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_iterable_dataset_workers_equal_torch():
    def go(lib, **kw):
        data = lib.utils.data

        class Shards(data.IterableDataset):
            def __iter__(self):
                info = data.get_worker_info()
                for i in range(info.id, 7 + 3 * info.id, info.num_workers):
                    yield lib.tensor([i, info.id])
        loader = data.DataLoader(Shards(), batch_size=2, **kw)
        return [b.tolist() for _ in range(2) for b in loader]
    for kw in (dict(num_workers=2), dict(num_workers=3, persistent_workers=True)):
        assert go(ndgrad, **kw) == go(torch, **kw)


def test_worker_errors_and_options():
    class Bad(nud.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 2:
                raise KeyError("no sample 2")
            return ndgrad.tensor(i)
    loader = nud.DataLoader(Bad(), batch_size=1, num_workers=2)
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(loader)
    seen = []
    nud.DataLoader(list(range(4)), num_workers=2,
                   worker_init_fn=lambda i: seen.append(i))     # not started until iterated
    assert nud.get_worker_info() is None and seen == []
    for mod in (nud, tud):
        with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
            mod.DataLoader([1], prefetch_factor=2)
        with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
            mod.DataLoader([1], persistent_workers=True)


def test_worker_init_fn_runs_in_each_worker():
    def init(worker_id):
        np.random.seed(1000 + worker_id)

    class DS(nud.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return ndgrad.tensor([nud.get_worker_info().id, np.random.randint(1 << 30)])
    got = [b.tolist() for b in nud.DataLoader(DS(), batch_size=None, num_workers=2,
                                              worker_init_fn=init)]
    exp = []
    rngs = {w: np.random.RandomState(1000 + w) for w in (0, 1)}
    for i in range(4):
        exp.append([i % 2, int(rngs[i % 2].randint(1 << 30))])
    assert got == exp


# --------------------------------------------------------------------------- launcher, demo
def test_launcher_exports_torchrun_variables_and_hosts_option(tmp_path):
    script = tmp_path / "env.py"
    # each rank writes its own file: the launcher forwards the ranks' stdout in chunks that
    # may interleave within a line
    script.write_text("import os, sys\nimport ndgrad.distributed as dist\n"
                      "dist.init_process_group('gloo', init_method='env://')\n"
                      "line = ' '.join(map(str, (os.environ['RANK'], os.environ['LOCAL_RANK'], "
                      "os.environ['WORLD_SIZE'], os.environ['LOCAL_WORLD_SIZE'], "
                      "dist.get_rank(), dist.get_world_size())))\n"
                      "open(os.path.join(sys.argv[1], 'rank' + os.environ['RANK']), 'w')"
                      ".write(line)\n"
                      "dist.destroy_process_group()\n")
    cmd = [sys.executable, "-m", "ndgrad.distributed.run", "--nnodes", "1", "--hosts",
           "localhost", "--nproc-per-node", "2", str(script), str(tmp_path)]
    rc, out, err, _ = run(cmd, timeout=60)
    assert rc == 0, err
    assert [(tmp_path / f"rank{r}").read_text() for r in range(2)] == \
        ["0 0 2 2 0 2", "1 1 2 2 1 2"]


def test_demo_data_parallel_mode(tmp_path):
    out = tmp_path / "demo"
    cmd = [sys.executable, "-m", "ndgrad", "--nproc", "2", "--epochs", "3", "--points", "100",
           "--out", str(out)]
    rc, stdout, err, _ = run(cmd, timeout=90)
    assert rc == 0, stdout + err
    assert "data-parallel on 2 ranks (MPI): DistributedDataParallel, 80 samples" in stdout
    assert "replicas identical on all 2 ranks: yes" in stdout
    assert stdout.count("epoch   3/3") == 1          # rank 0 alone prints
    rows = (out / "loss_curve.csv").read_text().splitlines()
    assert rows[0] == "epoch,loss,train_accuracy,lr" and len(rows) == 4
    assert (out / "model.pt").exists()


def test_dataloader_timeout_and_iterator_length():
    class Slow(nud.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            time.sleep(1)
            return ndgrad.tensor(i)
    loader = nud.DataLoader(Slow(), batch_size=1, num_workers=1, timeout=0.5)
    it = iter(loader)
    assert len(it) == 2
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.5 seconds$"):
        next(it)
    del it


def _ddp_device_argument_outcomes(tm, store):
    """What building a CPU DDP does with each form of device_ids / output_device."""
    dist = importlib.import_module(tm.__name__ + ".distributed")
    DDP = tm.nn.parallel.DistributedDataParallel
    dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
    outcomes = []
    try:
        for kw in [{}, {"device_ids": []}, {"device_ids": ()}, {"device_ids": [0]},
                   {"device_ids": [0, 1]}, {"output_device": 0}, {"output_device": 1},
                   {"device_ids": None, "output_device": None}]:
            try:
                DDP(tm.nn.Linear(2, 2), **kw)
                outcomes.append("built")
            except Exception as e:                  # the class and text are compared
                outcomes.append(f"{type(e).__name__}: {e}".split(", and module")[0])
    finally:
        dist.destroy_process_group()
    return outcomes


def test_ddp_device_ids_forms_as_torch(tmp_path):
    import torch
    ours = _ddp_device_argument_outcomes(ndgrad, str(tmp_path / "nd"))
    theirs = _ddp_device_argument_outcomes(torch, str(tmp_path / "pt"))
    assert ours == theirs
    assert ours.count("built") == 5            # [] and () are torch's "no device" on CPU
