"""Run every collective on 2+ ranks and save what each rank ends with (``out/rank{r}.npz``).

tests/test_distributed.py computes the expected values from the collectives' definitions on
the inputs of :func:`inputs` and compares.
"""

import sys

import numpy as np


def inputs(rank):
    """The tensor each rank contributes: distinct per rank, negative and positive values."""
    return (np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5) * (rank + 1) + rank


def main(folder):
    import ndgrad
    import ndgrad.distributed as dist
    from ndgrad.distributed import ReduceOp

    dist.init_process_group(backend="gloo", init_method="env://")
    r, n = dist.get_rank(), dist.get_world_size()
    res = {"rank": np.array(r), "world": np.array(n)}

    def x():
        return ndgrad.tensor(inputs(r))

    for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
        t = x()
        dist.all_reduce(t, op=getattr(ReduceOp, op))
        res[f"all_reduce_{op}"] = t.numpy()
    ti = ndgrad.tensor([[r + 1, 6 - r], [r ^ 3, 5]], dtype=ndgrad.int64)
    for op in ("SUM", "MIN", "MAX", "BAND", "BOR", "BXOR", "PRODUCT"):
        t = ti.clone()
        dist.all_reduce(t, op=getattr(ReduceOp, op))
        res[f"all_reduce_int_{op}"] = t.numpy()
    tb = ndgrad.tensor([True, r == 0, False])
    dist.all_reduce(tb, op=ReduceOp.MAX)
    res["all_reduce_bool_MAX"] = tb.numpy()
    t = x().double()
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    res["all_reduce_async"] = t.numpy()
    res["async_completed"] = np.array(work.is_completed())

    for src in range(n):
        t = x()
        dist.broadcast(t, src=src)
        res[f"broadcast_{src}"] = t.numpy()
    for dst in range(n):
        t = x()
        dist.reduce(t, dst=dst, op=ReduceOp.MAX)
        res[f"reduce_MAX_{dst}"] = t.numpy()

    outs = [ndgrad.zeros(2, 3) for _ in range(n)]
    dist.all_gather(outs, x())
    res["all_gather"] = np.stack([o.numpy() for o in outs])
    cat = ndgrad.zeros(2 * n, 3)
    dist.all_gather_into_tensor(cat, x())
    res["all_gather_into_tensor"] = cat.numpy()
    stk = ndgrad.zeros(n, 2, 3)
    dist.all_gather_into_tensor(stk, x(), async_op=True).wait()
    res["all_gather_into_tensor_stacked"] = stk.numpy()

    out = ndgrad.zeros(2, 3)
    dist.reduce_scatter(out, [x() * (j + 1) for j in range(n)], op=ReduceOp.SUM)
    res["reduce_scatter"] = out.numpy()
    out = ndgrad.zeros(1, 3)
    big = ndgrad.cat([x()[0:1] + j for j in range(n)])
    dist.reduce_scatter_tensor(out, big, op=ReduceOp.MIN)
    res["reduce_scatter_tensor"] = out.numpy()

    gl = [ndgrad.zeros(2, 3) for _ in range(n)] if r == 0 else None
    dist.gather(x(), gather_list=gl, dst=0)
    if r == 0:
        res["gather"] = np.stack([g.numpy() for g in gl])
    t = ndgrad.zeros(2, 3)
    sl = [ndgrad.full((2, 3), 10.0 * j + 1) for j in range(n)] if r == n - 1 else None
    dist.scatter(t, scatter_list=sl, src=n - 1)
    res["scatter"] = t.numpy()

    outs = [ndgrad.zeros(j + 1, 2) for j in range(n)]
    ins = [ndgrad.full((r + 1, 2), float(10 * r + j)) for j in range(n)]
    dist.all_to_all(outs, ins)
    res["all_to_all"] = np.concatenate([o.numpy().ravel() for o in outs])
    inp = ndgrad.arange(2 * n, dtype=ndgrad.float32) + 100 * r
    o = ndgrad.zeros(2 * n)
    dist.all_to_all_single(o, inp)
    res["all_to_all_single"] = o.numpy()

    dist.barrier()
    if r == 0:
        dist.send(x(), dst=1)
        t = ndgrad.zeros(2, 3)
        src = dist.recv(t)
        res["recv"], res["recv_src"] = t.numpy(), np.array(src)
    elif r == 1:
        t = ndgrad.zeros(2, 3)
        w = dist.irecv(t, src=0)
        w.wait()
        res["recv"] = t.numpy()
        dist.isend(x() * 2, dst=0).wait()

    objs = [{"rank": r}, f"s{r}", None] if r == 0 else [None, None, None]
    dist.broadcast_object_list(objs, src=0)
    res["bcast_obj"] = np.array(repr(objs))
    gathered = [None] * n
    dist.all_gather_object(gathered, {"r": r, "l": list(range(r + 1))})
    res["all_gather_obj"] = np.array(repr(gathered))
    go = [None] * n if r == 0 else None
    dist.gather_object(("g", r), go, dst=0)
    if r == 0:
        res["gather_obj"] = np.array(repr(go))
    so = [None]
    dist.scatter_object_list(so, [f"piece{j}" for j in range(n)] if r == 0 else None, src=0)
    res["scatter_obj"] = np.array(repr(so))

    # a sub-group of rank 0 only, and the group-rank / global-rank conversions
    sub = dist.new_group([0])
    t = x()
    dist.all_reduce(t, group=sub)
    res["subgroup"] = t.numpy() if r == 0 else np.array(dist.get_rank(sub))
    dist.destroy_process_group()
    np.savez(f"{folder}/rank{r}.npz", **res)


if __name__ == "__main__":
    main(sys.argv[1])
