"""DistributedDataParallel: one model replica per rank, gradients averaged across ranks.

At wrap time rank 0's parameters and buffers are broadcast to every rank. Parameters are
grouped into buckets (reverse registration order, about the order backward produces their
gradients; one dtype per bucket; the first bucket ~1 MiB, the others ``bucket_cap_mb``). A
post-accumulate-grad hook on every parameter counts the bucket's ready gradients; when a bucket
is complete its flattened gradients, divided by the world size, start a non-blocking all-reduce
(SUM) while backward goes on. When the last parameter is ready, the hook waits for all buckets
and copies the averages back into ``.grad``.

Invariants:
- Hooks act only after a forward that ran with grad enabled outside ``no_sync()``
  (``_expect_hooks``); inside ``no_sync`` gradients accumulate locally and the next synced
  backward reduces the accumulated ``.grad``.
- With ``find_unused_parameters``, forward walks the autograd graph from the outputs; the
  parameters it does not reach are ready at once (they contribute zeros), and a parameter
  unused on every rank keeps its ``.grad`` as it was.
"""

import contextlib

import numpy as np

from ... import _state
from ... import distributed as dist
from ...autograd.grad_mode import no_grad
from ..._tensor import Tensor
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_MB = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25
_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024


class _Bucket:
    __slots__ = ("index", "params", "dtype", "pending", "work", "flat", "buffer")

    def __init__(self, index, params, dtype):
        self.index, self.params, self.dtype = index, params, dtype
        self.pending = len(params)
        self.work = self.flat = self.buffer = None


def _assign_buckets(params, first_cap, cap):
    """Indices of ``params`` per bucket, filled in reverse order, one dtype per bucket."""
    open_, limit, out = {}, {}, []
    for i in reversed(range(len(params))):
        p = params[i]
        key = p._data.dtype
        cur = open_.setdefault(key, [[], 0])
        cur[0].append(i)
        cur[1] += p._data.nbytes
        if cur[1] >= limit.get(key, first_cap):
            out.append(cur[0])
            del open_[key]
            limit[key] = cap
    out.extend(b for b, _ in open_.values())
    return out


def _flatten(ts):
    return np.concatenate([t._data.ravel() for t in ts]) if ts else np.empty(0)


def _tensors_in(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors_in(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors_in(o)


class DistributedDataParallel(Module):
    """Data parallelism over the ranks of a process group (torch.nn.parallel's DDP)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None,
                 init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        super().__init__()
        params = []
        for p in module.parameters():
            if p.requires_grad and all(p is not q for q in params):
                params.append(p)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if device_ids or output_device:     # [] and None are torch's "no device" on CPU
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters "
                "{device(type='cpu')}.")
        if mixed_precision is not None or device_mesh is not None:
            raise NotImplementedError("DistributedDataParallel: mixed_precision and device_mesh "
                                      "are not supported by ndgrad")
        self.module = module
        self.device_ids, self.output_device, self.dim = None, None, dim
        if process_group is None:
            process_group = dist.distributed_c10d._default()
        self.process_group = process_group
        self._dist = dist
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.forward_sync_buffers = (self.broadcast_buffers if forward_sync_buffers is None
                                     else bool(forward_sync_buffers))
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap_mb = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap_mb * _MB)
        first = _DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        self._params = params
        self._pindex = {id(p): k for k, p in enumerate(params)}
        self._world = dist.get_world_size(self.process_group)
        self._buckets = [_Bucket(k, [params[i] for i in idx], params[idx[0]]._data.dtype)
                         for k, idx in enumerate(_assign_buckets(params, first,
                                                                 self.bucket_bytes_cap))]
        self._bucket_of = {}
        for b in self._buckets:
            for p in b.params:
                self._bucket_of[id(p)] = b
        self._expect_hooks = False
        self._ready = set()
        self._launched = []
        self._used_work = None
        if init_sync:
            with no_grad():
                self._broadcast_coalesced(params + (list(module.buffers())
                                                    if self.broadcast_buffers else []))
        self._hook_handles = [p.register_post_accumulate_grad_hook(self._grad_ready)
                              for p in params]

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs, **kwargs):
        prepare = _state.tls.grad_enabled and self.require_backward_grad_sync
        if prepare and self._expect_hooks:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
                "function outputs participate in calculating loss.")
        if self.require_forward_param_sync and self.forward_sync_buffers:
            buffers = list(self.module.buffers())
            if buffers:
                with no_grad():
                    self._broadcast_coalesced(buffers)
        out = self.module(*inputs, **kwargs)
        if prepare:
            self._prepare_for_backward(out)
        return out

    def _prepare_for_backward(self, out):
        self._expect_hooks = True
        self._ready = set()
        self._launched = []
        for b in self._buckets:
            b.pending, b.work, b.flat = len(b.params), None, None
        if not self.find_unused_parameters:
            return
        reached, stack, seen = set(), [t.grad_fn for t in _tensors_in(out)], set()
        while stack:
            fn = stack.pop()
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            var = getattr(fn, "variable", None)
            if var is not None:
                reached.add(id(var))
            stack.extend(nxt for nxt, _ in fn.next_functions)
        used = np.array([id(p) in reached for p in self._params], dtype=np.int32)
        self._used = Tensor(used)
        self._used_work = self._dist.all_reduce(self._used, group=self.process_group,
                                                async_op=True)
        for p, u in zip(self._params, used):
            if not u:
                self._mark_ready(p)

    # ------------------------------------------------------------------ reduction
    def _grad_ready(self, param):
        if self._expect_hooks:
            for b in self._launched:        # MPI progresses transfers only inside MPI calls
                b.work.is_completed()
            self._mark_ready(param)

    def _mark_ready(self, p):
        if id(p) in self._ready:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of "
                "the following reasons: 1) Use of a module parameter outside the `forward` "
                "function. 2) Reused parameters in multiple reentrant backward passes.")
        self._ready.add(id(p))
        b = self._bucket_of[id(p)]
        b.pending -= 1
        if b.pending == 0:
            self._launch(b)
        if len(self._ready) == len(self._params):
            self._finalize()

    def _launch(self, b):
        if b.buffer is None:        # one buffer per bucket, reused every iteration
            b.buffer = np.empty(sum(p._data.size for p in b.params), dtype=b.dtype)
        flat, off = b.buffer, 0
        for p in b.params:
            n = p._data.size
            if p.grad is None:
                flat[off:off + n] = 0
            else:
                np.divide(p.grad._data.ravel(), self._world, out=flat[off:off + n],
                          casting="unsafe")
            off += n
        b.flat = Tensor(flat)
        b.work = self._dist.all_reduce(b.flat, group=self.process_group, async_op=True)
        self._launched.append(b)

    def _finalize(self):
        self._expect_hooks = False
        self._launched = []
        used = None
        if self._used_work is not None:
            self._used_work.wait()
            used = self._used._data
            self._used_work = None
        for b in self._buckets:
            b.work.wait()
            flat, off = b.flat._data, 0
            for p in b.params:
                n = p._data.size
                chunk = flat[off:off + n].reshape(p._data.shape)
                off += n
                keep = used is None or used[self._pindex[id(p)]]
                if not keep:
                    continue
                if p.grad is None:
                    p.grad = Tensor(chunk.copy())
                else:
                    p.grad._data[...] = chunk
                    p.grad._vc[0] += 1
            b.work = b.flat = None

    # ------------------------------------------------------------------ helpers
    def _broadcast_coalesced(self, tensors):
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype, []).append(t)
        for dtype, ts in by_dtype.items():
            flat = Tensor(_flatten(ts).astype(dtype, copy=False))
            self._dist.broadcast(flat, src=self._dist.get_global_rank(self.process_group, 0),
                                 group=self.process_group)
            off = 0
            for t in ts:
                n = t._data.size
                t._data[...] = flat._data[off:off + n].reshape(t._data.shape)
                t._vc[0] += 1
                off += n

    @contextlib.contextmanager
    def no_sync(self):
        """Inside: backward accumulates gradients locally, with no communication."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def join(self, *args, **kwargs):
        raise NotImplementedError("DistributedDataParallel.join (uneven inputs) is not "
                                  "supported by ndgrad")

    def register_comm_hook(self, state, hook):
        raise NotImplementedError("DistributedDataParallel.register_comm_hook is not supported "
                                  "by ndgrad")
