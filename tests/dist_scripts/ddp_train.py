"""One DDP training script run by both libraries: ``ddp_train.py ndgrad|torch OUT``.

Every rank seeds its model differently (DDP must broadcast rank 0's parameters and buffers),
trains with a DistributedSampler, then accumulates over two micro-batches with ``no_sync``,
then trains a model with a branch only rank 0 uses (``find_unused_parameters``). Each rank
saves what it ends with in ``OUT/rank{r}.npz``; tests/test_distributed.py compares with
single-process training on the full batches and with torch's DDP.
"""

import sys

import numpy as np

N, D, H, C = 16, 8, 16, 3
LOCAL_BATCH = 4


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, D)).astype(np.float32)
    y = rng.integers(0, C, N)
    return x, y


def build(torch, rank):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(D, H), nn.Tanh(), nn.Linear(H, C))
            self.register_buffer("scale", torch.full((C,), float(rank + 1)))

        def forward(self, x):
            return self.body(x) * self.scale

    torch.manual_seed(100 + rank)
    return Net()


class Branchy:
    @staticmethod
    def build(torch, rank):
        nn = torch.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(D, C)
                self.extra = nn.Linear(D, C)
                self.never = nn.Linear(D, C)

            def forward(self, x, use_extra):
                out = self.a(x)
                return out + self.extra(x) if use_extra else out

        torch.manual_seed(200 + rank)
        return Net()


def params(model):
    return {k: v.detach().numpy().copy() for k, v in model.named_parameters()}


def main(lib, folder):
    import importlib
    torch = importlib.import_module(lib)
    dist = importlib.import_module(lib + ".distributed")
    DDP = importlib.import_module(lib + ".nn.parallel").DistributedDataParallel
    tud = importlib.import_module(lib + ".utils.data")
    F = torch.nn.functional

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    res = {}
    x, y = data()
    ds = tud.TensorDataset(torch.tensor(x), torch.tensor(y))

    # 1. plain DDP training: 2 epochs of 2 steps, global batch 2 * LOCAL_BATCH
    model = build(torch, rank)
    ddp = DDP(model, bucket_cap_mb=0.0005)      # a small cap: several buckets
    res["scale"] = model.scale.numpy().copy()
    res["init"] = params(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    sampler = tud.DistributedSampler(ds, shuffle=True, seed=3)
    loader = tud.DataLoader(ds, batch_size=LOCAL_BATCH, sampler=sampler)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for xb, yb in loader:
            opt.zero_grad()
            F.cross_entropy(ddp(xb), yb).backward()
            opt.step()
    res["trained"] = params(model)
    res["keys"] = np.array(list(ddp.state_dict().keys()))

    # 2. accumulation: micro-batch a inside no_sync, micro-batch b synced, one step
    opt.zero_grad()
    ia = [rank * LOCAL_BATCH + i for i in range(LOCAL_BATCH)]
    ib = [8 + rank * LOCAL_BATCH + i for i in range(LOCAL_BATCH)]
    with ddp.no_sync():
        F.cross_entropy(ddp(ds[ia][0]), ds[ia][1]).backward()
    res["nosync_grads"] = {k: v.grad.numpy().copy() for k, v in model.named_parameters()}
    F.cross_entropy(ddp(ds[ib][0]), ds[ib][1]).backward()
    opt.step()
    res["accumulated"] = params(model)

    # 3. find_unused_parameters: only rank 0 uses `extra`; nobody uses `never`
    net = Branchy.build(torch, rank)
    bddp = DDP(net, find_unused_parameters=True)
    res["branch_init"] = params(net)
    out = bddp(ds[ia][0], use_extra=(rank == 0))
    F.cross_entropy(out, ds[ia][1]).backward()
    res["branch_grads"] = {k: (v.grad.numpy().copy() if v.grad is not None else np.array("None"))
                           for k, v in net.named_parameters()}
    dist.destroy_process_group()
    flat = {}
    for k, v in res.items():
        if isinstance(v, dict):
            flat.update({f"{k}/{n}": a for n, a in v.items()})
        else:
            flat[k] = v
    np.savez(f"{folder}/rank{rank}.npz", **flat)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
