"""Process groups and collectives (torch.distributed's c10d API) on MPI.

A process group is an MPI communicator: the default group duplicates ``COMM_WORLD`` (so
destroying it and initialising again works: ``COMM_WORLD`` itself is never freed), and
``new_group`` splits the default one. Each collective is an MPI non-blocking operation on the
tensors' NumPy buffers; ``async_op=True`` returns a :class:`Work` whose ``wait()`` completes it,
otherwise the call waits itself. Ranks named in arguments (``src``, ``dst``) are global ranks,
as in torch; ``group_src`` / ``group_dst`` name ranks inside the group.

Invariants:
- Every wait has a deadline (the group's ``timeout``, torch's default 30 minutes): a rank that
  never joins makes the others raise :class:`DistBackendError` instead of hanging.
- Before a collective moves data, the ranks exchange a fingerprint of it (sequence number,
  op, dtype, shape, reduce op, root) and all raise the same RuntimeError if they differ, so
  mismatched collectives fail loudly instead of corrupting memory. The fingerprint travels in
  one small all-gather.
- A call that raises before posting the data operation leaves every tensor untouched.
"""

import datetime
import os
import pickle
from urllib.parse import parse_qs, urlparse

import numpy as np

from .. import _creation
from .._dtype import int64, uint8
from .._tensor import Tensor
from . import _mpi
from ._mpi import DistBackendError, DistError

__all__ = [
    "Backend", "ReduceOp", "GroupMember", "ProcessGroup", "Work", "DistError",
    "DistBackendError", "is_available", "is_initialized", "is_mpi_available",
    "is_gloo_available", "is_nccl_available", "is_torchelastic_launched",
    "init_process_group", "destroy_process_group", "new_group", "get_rank", "get_world_size",
    "get_backend", "get_group_rank", "get_global_rank", "get_process_group_ranks",
    "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
    "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "all_to_all",
    "all_to_all_single", "barrier", "send", "recv", "isend", "irecv", "broadcast_object_list",
    "all_gather_object", "gather_object", "scatter_object_list", "send_object_list",
    "recv_object_list", "default_pg_timeout",
]

default_pg_timeout = datetime.timedelta(minutes=30)


# --------------------------------------------------------------------------- names
class Backend(str):
    """Backend names. CPU names torch scripts use ("gloo", "mpi") all run on MPI here."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    MPI = "mpi"
    NCCL = "nccl"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name}")
        return str.__new__(cls, name.lower())


class ReduceOp:
    """Reduction operators (torch.distributed.ReduceOp)."""

    class RedOpType:
        def __init__(self, name, value):
            self.name, self.value = name, value

        def __repr__(self):
            return f"<RedOpType.{self.name}: {self.value}>"

        def __str__(self):
            return f"RedOpType.{self.name}"

        def __eq__(self, other):
            return isinstance(other, ReduceOp.RedOpType) and other.name == self.name

        def __hash__(self):
            return hash(self.name)


for _i, _n in enumerate(["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]):
    setattr(ReduceOp, _n, ReduceOp.RedOpType(_n, _i))
_OP_CODES = {n: i for i, n in enumerate(["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR",
                                          "BXOR"])}


# --------------------------------------------------------------------------- groups
class ProcessGroup:
    """A set of ranks that run collectives together: an MPI communicator and a timeout."""

    def __init__(self, comm, ranks, backend, timeout, name):
        self.comm = comm
        self._ranks = list(ranks)           # global rank of each group rank
        self._backend = backend
        self._timeout = timeout
        self._seq = 0
        self.group_name = name

    def rank(self):
        return self.comm.Get_rank()

    def size(self):
        return self.comm.Get_size()

    def name(self):
        return self._backend

    def __repr__(self):
        return f"<ndgrad.distributed.ProcessGroup {self.group_name} ranks={self._ranks}>"


class GroupMember:
    """``WORLD`` (the default group, None before init) and ``NON_GROUP_MEMBER``."""

    WORLD = None
    NON_GROUP_MEMBER = -100


_groups = []        # every live group, the default one first


def _default():
    if GroupMember.WORLD is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return GroupMember.WORLD


def _group(group):
    return _default() if group is None else group


def _seconds(timeout):
    if timeout is None:
        return default_pg_timeout.total_seconds()
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                    f"{type(timeout)}")


def is_available():
    """True when the MPI engine (mpi4py) is importable."""
    return _mpi.available()


def is_initialized():
    return GroupMember.WORLD is not None


def is_mpi_available():
    return _mpi.available()


def is_gloo_available():
    """"gloo" is accepted as a name and runs on MPI."""
    return _mpi.available()


def is_nccl_available():
    return False


def is_torchelastic_launched():
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


_CPU_BACKENDS = {"gloo", "mpi", "cpu:gloo", "cpu:mpi", "undefined"}


def _check_backend(backend):
    if backend is None:
        return Backend.GLOO
    name = str(backend).lower()
    if name not in _CPU_BACKENDS:
        if "nccl" in name:
            raise RuntimeError("Distributed package doesn't have NCCL built in")
        raise ValueError(f"Invalid backend: '{backend}'")
    return Backend(name.split(":")[-1] if name != "undefined" else "gloo")


def _from_env(init_method, world_size, rank):
    url = urlparse(init_method)
    if url.scheme not in ("env", "tcp", "file", "mpi"):
        raise ValueError(f"No rendezvous handler for {url.scheme}://")
    query = parse_qs(url.query)
    if world_size == -1 and "world_size" in query:
        world_size = int(query["world_size"][0])
    if rank == -1 and "rank" in query:
        rank = int(query["rank"][0])
    if url.scheme == "env":
        if world_size == -1 and "WORLD_SIZE" in os.environ:
            world_size = int(os.environ["WORLD_SIZE"])
        if rank == -1 and "RANK" in os.environ:
            rank = int(os.environ["RANK"])
    return world_size, rank


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the default process group.

    The ranks meet through MPI: the processes must be started by an MPI launcher
    (``python -m ndgrad.distributed.run`` or ``mpiexec``), or be a single process.
    ``world_size`` and ``rank`` (arguments, ``env://`` variables or the ``init_method`` query)
    are checked against what MPI reports; the address in ``init_method`` is not used.
    """
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    backend = _check_backend(backend)
    if store is not None:
        raise ValueError("ndgrad.distributed does not take a store: the ranks meet through the "
                         "MPI launcher")
    secs = _seconds(timeout)
    world_size, rank = _from_env(init_method or "env://", world_size, rank)
    MPI = _mpi.mpi()
    cw = MPI.COMM_WORLD
    n, r = cw.Get_size(), cw.Get_rank()
    if world_size not in (-1, n):
        raise RuntimeError(
            f"init_process_group: world_size={world_size}, but the MPI launcher started {n} "
            f"process(es). Start the ranks with `python -m ndgrad.distributed.run "
            f"--nproc-per-node {world_size} script.py` or `mpiexec -n {world_size} python "
            "script.py`.")
    if rank not in (-1, r):
        raise RuntimeError(f"init_process_group: rank={rank}, but MPI gave this process rank "
                           f"{r}; ranks come from the MPI launcher")
    _mpi.wait(cw.Ibarrier(), secs, "init_process_group (the other ranks to start)")
    comm = cw.Dup()
    pg = ProcessGroup(comm, range(n), backend, secs, group_name or "0")
    GroupMember.WORLD = pg
    _groups.append(pg)


def destroy_process_group(group=None):
    """Destroy ``group``, or every group (the default one included) when None."""
    if group is None or group is GroupMember.WORLD:
        for pg in _groups:
            pg.comm.Free()
        _groups.clear()
        GroupMember.WORLD = None
        return
    if group == GroupMember.NON_GROUP_MEMBER:
        return
    if group not in _groups:
        raise ValueError("Invalid process group specified")
    group.comm.Free()
    _groups.remove(group)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A group of the given global ranks (all of them when None). Every rank of the default
    group must call it; non-members get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _default()
    n = world.size()
    ranks = list(range(n)) if ranks is None else sorted(int(x) for x in ranks)
    for x in ranks:
        if x < 0 or x >= n:
            raise ValueError("The new group's rank should be within the world_size set by "
                             "init_process_group")
    backend = world._backend if backend is None else _check_backend(backend)
    secs = world._timeout if timeout is None else _seconds(timeout)
    _agree(world, "new_group", None, extra=[len(ranks)] + (ranks + [-1] * 5)[:5])
    me = world.rank()
    MPI = _mpi.mpi()
    member = me in ranks
    comm = world.comm.Split(0 if member else MPI.UNDEFINED, ranks.index(me) if member else 0)
    if not member:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, backend, secs, str(len(_groups)))
    _groups.append(pg)
    return pg


def _member(group):
    return group is not GroupMember.NON_GROUP_MEMBER and group != GroupMember.NON_GROUP_MEMBER


def get_rank(group=None):
    g = _group(group)
    if not _member(g):
        return -1
    return g._ranks[g.rank()]


def get_world_size(group=None):
    g = _group(group)
    if not _member(g):
        return -1
    return g.size()


def get_backend(group=None):
    g = _group(group)
    if not _member(g):
        raise ValueError("Invalid process group specified")
    return g._backend


def get_process_group_ranks(group):
    return list(_group(group)._ranks)


def get_group_rank(group, global_rank):
    g = _group(group)
    try:
        return g._ranks.index(global_rank)
    except ValueError:
        raise ValueError(f"Global rank {global_rank} is not part of group {g}") from None


def get_global_rank(group, group_rank):
    g = _group(group)
    if not 0 <= group_rank < g.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {g}")
    return g._ranks[group_rank]


def _root(group, peer, group_peer, name):
    """The group rank of a root given as a global rank (``peer``) or group rank."""
    if group_peer is not None:
        if peer is not None and get_global_rank(group, group_peer) != peer:
            raise ValueError(f"Can not specify both {name} and group_{name}")
        return group_peer
    return get_group_rank(group, 0 if peer is None else peer)


# --------------------------------------------------------------------------- work handles
class Work:
    """The handle of an asynchronous operation: ``wait()`` completes it (raising on timeout)."""

    def __init__(self, reqs, finish, timeout, what, result=()):
        self._reqs = reqs
        self._finish = finish
        self._timeout = timeout
        self._what = what
        self._done = False
        self._result = list(result)
        self._value = None

    def wait(self, timeout=None):
        if not self._done:
            secs = self._timeout if timeout is None else _seconds(timeout)
            _mpi.wait_all(self._reqs, secs, self._what)
            self._done = True
            if self._finish is not None:
                self._value = self._finish()
        return True

    def is_completed(self):
        if self._done:
            return True
        return all(r.Test() for r in self._reqs)

    def is_success(self):
        return self.is_completed()

    def exception(self):
        return None

    def result(self):
        self.wait()
        return self._result

    def source_rank(self):
        self.wait()
        return self._value

    def synchronize(self):
        self.wait()


def _run(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


# --------------------------------------------------------------------------- fingerprints
_OPS = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
        "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "all_to_all",
        "all_to_all_single", "barrier", "new_group"]
_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
           "float64", "complex64", "complex128", "uint16", "uint32", "uint64"]
_FP = 14


def _fingerprint(group, op, arr, redop=None, root=-1, extra=None):
    fp = np.full(_FP, -1, dtype=np.int64)
    fp[0], fp[1] = group._seq, _OPS.index(op)
    if arr is not None:
        fp[2] = _DTYPES.index(arr.dtype.name)
        shape = arr.shape if extra is None else ()
        fp[3] = len(shape)
        fp[4:4 + min(len(shape), 6)] = shape[:6]
    if extra is not None:
        fp[4:4 + len(extra)] = extra
    fp[10] = -1 if redop is None else _OP_CODES[redop.name]
    fp[11] = root
    return fp


def _describe(fp):
    if fp[1] < 0 or fp[1] >= len(_OPS):
        return "an unknown collective"
    parts = [f"SequenceNumber={int(fp[0])}", f"OpType={_OPS[fp[1]].upper()}"]
    if fp[2] >= 0:
        parts.append(f"TensorShape={[int(d) for d in fp[4:4 + min(fp[3], 6)]]}")
        parts.append(f"TensorDtype={_DTYPES[fp[2]]}")
    if fp[10] >= 0:
        parts.append(f"ReduceOp={list(_OP_CODES)[fp[10]]}")
    if fp[11] >= 0:
        parts.append(f"Root={fp[11]}")
    return "CollectiveFingerPrint(" + ", ".join(parts) + ")"


def _agree(group, op, arr, extra=None, redop=None, root=-1):
    """All ranks of ``group`` check that they run the same collective on the same shapes."""
    fp = _fingerprint(group, op, arr, redop, root, extra)
    group._seq += 1
    if group.size() == 1:
        return
    allfp = np.empty((group.size(), _FP), dtype=np.int64)
    _mpi.wait(group.comm.Iallgather(fp, allfp), group._timeout, op)
    me = group.rank()
    for r in range(group.size()):
        if not np.array_equal(allfp[r], fp):
            raise RuntimeError(
                f"Detected mismatch between collectives on ranks. Rank {group._ranks[me]} is "
                f"running collective: {_describe(fp)}, but Rank {group._ranks[r]} is running "
                f"collective: {_describe(allfp[r])}.")


# --------------------------------------------------------------------------- helpers
def _data(t, name="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        "torch.Tensor\n             but got {type(t)} instead.")
    return t._data


def _write(t, values):
    t._data[...] = values.reshape(t._data.shape)
    t._vc[0] += 1


def _reduce_dtype(arr, op):
    """The array MPI reduces, and the op: float16 widens to float32, bool reduces logically."""
    if arr.dtype == np.float16:
        return np.ascontiguousarray(arr, dtype=np.float32), _mpi.mpi_op(op.name)
    if arr.dtype == np.bool_:
        if op.name == "AVG":
            raise ValueError("Cannot use ReduceOp.AVG with bool tensors")
        return np.ascontiguousarray(arr).view(np.uint8), _mpi.bool_op(op.name)
    if arr.dtype.kind == "c" and op.name in ("MIN", "MAX"):
        raise ValueError(f"all_reduce does not support {op.name} on complex tensors")
    return np.ascontiguousarray(arr), _mpi.mpi_op(op.name)


def _finish_reduce(buf, op, size, dtype):
    if op.name == "AVG":
        buf = buf / size
    if dtype == np.bool_:
        return buf.astype(np.bool_)
    return buf.astype(dtype, copy=False)


def _check_op(op):
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(f"op should be a ReduceOp, got {op!r}")
    return op


# --------------------------------------------------------------------------- collectives
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over the ranks in place: every rank ends with the result."""
    g = _group(group)
    if not _member(g):
        return None
    arr = _data(tensor)
    op = _check_op(op)
    send, mop = _reduce_dtype(arr, op)
    _agree(g, "all_reduce", arr, redop=op)
    if send is arr and arr.dtype.kind in "fc" and arr.flags.c_contiguous:
        # The tensor's own buffer is reduced in place: no copies of large gradients.
        req = g.comm.Iallreduce(_mpi.mpi().IN_PLACE, arr, mop)

        def finish():
            if op.name == "AVG":
                arr[...] /= g.size()
            tensor._vc[0] += 1
        return _run(Work([req], finish, g._timeout, "all_reduce", [tensor]), async_op)
    recv = np.empty_like(send)
    req = g.comm.Iallreduce(send, recv, mop)
    work = Work([req], lambda: _write(tensor, _finish_reduce(recv, op, g.size(), arr.dtype)),
                g._timeout, "all_reduce", [tensor])
    return _run(work, async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every rank."""
    g = _group(group)
    if not _member(g):
        return None
    arr = _data(tensor)
    root = _root(g, src, group_src, "src")
    _agree(g, "broadcast", arr, root=root)
    buf = _mpi.wire(arr.copy())
    req = g.comm.Ibcast(buf, root=root)
    me = g.rank()

    def finish():
        if me != root:
            _write(tensor, buf.view(arr.dtype))
    return _run(Work([req], finish, g._timeout, "broadcast", [tensor]), async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over the ranks into ``tensor`` of rank ``dst`` (others unchanged)."""
    g = _group(group)
    if not _member(g):
        return None
    arr = _data(tensor)
    op = _check_op(op)
    root = _root(g, dst, group_dst, "dst")
    send, mop = _reduce_dtype(arr, op)
    _agree(g, "reduce", arr, redop=op, root=root)
    me = g.rank()
    recv = np.empty_like(send) if me == root else None
    req = g.comm.Ireduce(send, recv, mop, root=root)

    def finish():
        if me == root:
            _write(tensor, _finish_reduce(recv, op, g.size(), arr.dtype))
    return _run(Work([req], finish, g._timeout, "reduce", [tensor]), async_op)


def _check_list(tensors, n, like, what):
    if len(tensors) != n:
        raise ValueError(f"{what}: expected a list of {n} tensors (the group size), got "
                         f"{len(tensors)}")
    for t in tensors:
        a = _data(t, "tensor_list")
        if a.shape != like.shape or a.dtype != like.dtype:
            raise ValueError(f"{what}: every tensor in the list must have the shape "
                             f"{tuple(like.shape)} and dtype of the input, got "
                             f"{tuple(a.shape)}")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[i]`` receives ``tensor`` of group rank ``i``."""
    g = _group(group)
    if not _member(g):
        return None
    arr = _data(tensor)
    _check_list(tensor_list, g.size(), arr, "all_gather")
    _agree(g, "all_gather", arr)
    send = _mpi.wire(arr)
    recv = np.empty((g.size(),) + send.shape, dtype=send.dtype)
    req = g.comm.Iallgather(send, recv)

    def finish():
        for i, t in enumerate(tensor_list):
            _write(t, recv[i].view(arr.dtype))
    return _run(Work([req], finish, g._timeout, "all_gather", tensor_list), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """``output_tensor`` is the inputs of all ranks concatenated (or stacked) along dim 0."""
    g = _group(group)
    if not _member(g):
        return None
    arr, out = _data(input_tensor, "input_tensor"), _data(output_tensor, "output_tensor")
    if out.size != arr.size * g.size() or out.dtype != arr.dtype:
        raise ValueError("output tensor size must be equal to world_size times input tensor "
                         "size")
    _agree(g, "all_gather_into_tensor", arr)
    send = _mpi.wire(arr)
    recv = np.empty((g.size(),) + send.shape, dtype=send.dtype)
    req = g.comm.Iallgather(send, recv)
    return _run(Work([req], lambda: _write(output_tensor, recv.view(arr.dtype)), g._timeout,
                     "all_gather_into_tensor", [output_tensor]), async_op)


def _reduce_scatter(g, output_tensor, stacked, op, name, async_op):
    out = _data(output_tensor, "output")
    op = _check_op(op)
    send, mop = _reduce_dtype(stacked, op)
    _agree(g, name, stacked, redop=op)
    recv = np.empty(send.shape[1:], dtype=send.dtype)
    req = g.comm.Ireduce_scatter_block(send, recv, mop)
    work = Work([req], lambda: _write(output_tensor,
                                      _finish_reduce(recv, op, g.size(), out.dtype)),
                g._timeout, name, [output_tensor])
    return _run(work, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """``output`` on group rank ``i`` is the reduction over ranks of ``input_list[i]``."""
    g = _group(group)
    if not _member(g):
        return None
    out = _data(output, "output")
    _check_list(input_list, g.size(), out, "reduce_scatter")
    stacked = np.stack([t._data for t in input_list])
    return _reduce_scatter(g, output, stacked, op, "reduce_scatter", async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``input`` is ``group size`` chunks along dim 0; rank ``i`` gets the reduced chunk ``i``."""
    g = _group(group)
    if not _member(g):
        return None
    out, arr = _data(output, "output"), _data(input, "input")
    if arr.size != out.size * g.size() or arr.dtype != out.dtype:
        raise ValueError("input tensor must be the same size as output size times world size")
    stacked = arr.reshape((g.size(),) + out.shape)
    return _reduce_scatter(g, output, stacked, op, "reduce_scatter_tensor", async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """``gather_list[i]`` on rank ``dst`` receives ``tensor`` of group rank ``i``."""
    g = _group(group)
    if not _member(g):
        return None
    arr = _data(tensor)
    root = _root(g, dst, group_dst, "dst")
    me = g.rank()
    if me == root:
        _check_list(gather_list or [], g.size(), arr, "gather")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    _agree(g, "gather", arr, root=root)
    send = _mpi.wire(arr)
    recv = np.empty((g.size(),) + send.shape, dtype=send.dtype) if me == root else None
    req = g.comm.Igather(send, recv, root=root)

    def finish():
        if me == root:
            for i, t in enumerate(gather_list):
                _write(t, recv[i].view(arr.dtype))
    return _run(Work([req], finish, g._timeout, "gather", gather_list or []), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """``tensor`` on group rank ``i`` receives ``scatter_list[i]`` of rank ``src``."""
    g = _group(group)
    if not _member(g):
        return None
    arr = _data(tensor)
    root = _root(g, src, group_src, "src")
    me = g.rank()
    if me == root:
        _check_list(scatter_list or [], g.size(), arr, "scatter")
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    _agree(g, "scatter", arr, root=root)
    send = (_mpi.wire(np.stack([t._data for t in scatter_list])) if me == root else None)
    recv = np.empty_like(_mpi.wire(arr))
    req = g.comm.Iscatter(send, recv, root=root)
    return _run(Work([req], lambda: _write(tensor, recv.view(arr.dtype)), g._timeout,
                     "scatter", [tensor]), async_op)


def _alltoallv(g, name, sends, recv_shapes, dtype, async_op, write):
    sends = [_mpi.wire(s) for s in sends]
    wdt = _mpi.wire(np.empty(0, dtype)).dtype
    scounts = [s.size for s in sends]
    rcounts = [int(np.prod(s)) for s in recv_shapes]
    sbuf = np.concatenate([s.ravel() for s in sends]) if sends else np.empty(0, wdt)
    rbuf = np.empty(sum(rcounts), dtype=wdt)
    sdis = np.concatenate([[0], np.cumsum(scounts)[:-1]]).astype(np.int64)
    rdis = np.concatenate([[0], np.cumsum(rcounts)[:-1]]).astype(np.int64)
    req = g.comm.Ialltoallv([sbuf, (scounts, sdis.tolist())], [rbuf, (rcounts, rdis.tolist())])

    def finish():
        parts = [rbuf[d:d + c].view(dtype) for d, c in zip(rdis, rcounts)]
        write(parts)
    return _run(Work([req], finish, g._timeout, name), async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """``output_tensor_list[j]`` on rank ``i`` receives ``input_tensor_list[i]`` of rank ``j``."""
    g = _group(group)
    if not _member(g):
        return None
    n = g.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise ValueError(f"all_to_all: expected lists of {n} tensors (the group size)")
    ins = [_data(t, "input_tensor_list") for t in input_tensor_list]
    outs = [_data(t, "output_tensor_list") for t in output_tensor_list]
    dtype = ins[0].dtype
    if any(a.dtype != dtype for a in ins + outs):
        raise ValueError("all_to_all: all tensors must have the same dtype")
    _agree(g, "all_to_all", ins[0], extra=[n])

    def write(parts):
        for t, p in zip(output_tensor_list, parts):
            _write(t, p)
    return _alltoallv(g, "all_to_all", ins, [o.shape for o in outs], dtype, async_op, write)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Split ``input`` along dim 0, send chunk ``j`` to rank ``j``, concatenate what arrives."""
    g = _group(group)
    if not _member(g):
        return None
    n = g.size()
    arr, out = _data(input, "input"), _data(output, "output")
    if arr.dtype != out.dtype:
        raise ValueError("all_to_all_single: input and output must have the same dtype")

    def splits(sizes, a, what):
        if sizes is None or len(sizes) == 0:
            if a.shape[0] % n:
                raise ValueError(f"all_to_all_single: {what} size {a.shape[0]} along dim 0 is "
                                 f"not divisible by the group size {n}")
            return [a.shape[0] // n] * n
        if len(sizes) != n or sum(sizes) != a.shape[0]:
            raise ValueError(f"all_to_all_single: {what}_split_sizes must have {n} entries "
                             f"summing to {a.shape[0]}")
        return [int(s) for s in sizes]
    isz, osz = splits(input_split_sizes, arr, "input"), splits(output_split_sizes, out, "output")
    _agree(g, "all_to_all_single", arr, extra=[n])
    bounds = np.cumsum([0] + isz)
    sends = [arr[bounds[j]:bounds[j + 1]] for j in range(n)]
    rshapes = [(s,) + out.shape[1:] for s in osz]
    return _alltoallv(g, "all_to_all_single", sends, rshapes, arr.dtype, async_op,
                      lambda parts: _write(output, np.concatenate(
                          [p.reshape(s) for p, s in zip(parts, rshapes)])))


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group reaches the barrier."""
    g = _group(group)
    if not _member(g):
        return None
    _agree(g, "barrier", None)
    return _run(Work([g.comm.Ibarrier()], None, g._timeout, "barrier"), async_op)


# --------------------------------------------------------------------------- point to point
def _peer(g, peer, group_peer, name):
    if group_peer is not None:
        return group_peer
    if peer is None:
        raise ValueError(f"Must specify either {name} or group_{name}")
    return get_group_rank(g, peer)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to rank ``dst``; returns a Work."""
    g = _group(group)
    if not _member(g):
        return None
    arr = _data(tensor)
    peer = _peer(g, dst, group_dst, "dst")
    if peer == g.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same "
                         "as the rank of the current process.")
    buf = _mpi.wire(arr.copy())
    req = g.comm.Isend(buf, dest=peer, tag=tag)
    return Work([req], None, g._timeout, "send", [tensor])


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from rank ``src`` (any rank when None)."""
    g = _group(group)
    if not _member(g):
        return None
    arr = _data(tensor)
    MPI = _mpi.mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else _peer(g, src, group_src,
                                                                          "src")
    buf = np.empty_like(_mpi.wire(arr))
    status = MPI.Status()
    req = g.comm.Irecv(buf, source=peer, tag=tag)

    class _Recv(Work):
        def wait(self, timeout=None):
            if not self._done:
                secs = self._timeout if timeout is None else _seconds(timeout)
                _mpi.wait(req, secs, "recv", status)
                self._done = True
                _write(tensor, buf.view(arr.dtype))
                self._value = g._ranks[status.Get_source()]
            return True

    return _Recv([req], None, g._timeout, "recv", [tensor])


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` (returns when the buffer may be reused)."""
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any when None); returns the sender's rank."""
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    return w._value


# --------------------------------------------------------------------------- objects
def _to_bytes(obj):
    return _creation.from_numpy(np.frombuffer(pickle.dumps(obj), dtype=np.uint8).copy())


def _from_bytes(t, n):
    return pickle.loads(t._data[:n].tobytes())


def _cat_bytes(payload):
    """One uint8 tensor holding the pickled objects of `payload` back to back."""
    return _creation.from_numpy(np.concatenate([p._data for p in payload]))


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace ``object_list`` on every rank by rank ``src``'s (objects travel pickled)."""
    g = _group(group)
    if not _member(g):
        return None
    root = _root(g, src, group_src, "src")
    if g.rank() == root:
        payload = [_to_bytes(o) for o in object_list]
        sizes = _creation.tensor([p.numel() for p in payload], dtype=int64)
    else:
        sizes = _creation.empty(len(object_list), dtype=int64)
    broadcast(sizes, group=g, group_src=root)
    sz = sizes.tolist()
    buf = (_cat_bytes(payload) if g.rank() == root and payload
           else _creation.empty(sum(sz), dtype=uint8))
    broadcast(buf, group=g, group_src=root)
    if g.rank() != root:
        off = 0
        for i, n in enumerate(sz):
            object_list[i] = pickle.loads(buf._data[off:off + n].tobytes())
            off += n


def _gather_bytes(g, obj, to_all, root):
    mine = _to_bytes(obj)
    n = g.size()
    size = _creation.tensor([mine.numel()], dtype=int64)
    sizes = [_creation.empty(1, dtype=int64) for _ in range(n)]
    all_gather(sizes, size, group=g)
    sz = [int(s.item()) for s in sizes]
    padded = _creation.empty(max(sz), dtype=uint8)
    padded._data[:mine.numel()] = mine._data
    out = [_creation.empty(max(sz), dtype=uint8) for _ in range(n)]
    if to_all:
        all_gather(out, padded, group=g)
    else:
        gather(padded, out if g.rank() == root else None, group=g, group_dst=root)
    return out, sz


def all_gather_object(object_list, obj, group=None):
    """``object_list[i]`` receives ``obj`` of group rank ``i``."""
    g = _group(group)
    if not _member(g):
        return None
    out, sz = _gather_bytes(g, obj, True, 0)
    for i in range(g.size()):
        object_list[i] = _from_bytes(out[i], sz[i])


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """``object_gather_list[i]`` on rank ``dst`` receives ``obj`` of group rank ``i``."""
    g = _group(group)
    if not _member(g):
        return None
    root = _root(g, dst, group_dst, "dst")
    if g.rank() != root and object_gather_list is not None:
        raise ValueError("Argument ``object_gather_list`` must NOT be specified on "
                         "non-destination ranks.")
    out, sz = _gather_bytes(g, obj, False, root)
    if g.rank() == root:
        for i in range(g.size()):
            object_gather_list[i] = _from_bytes(out[i], sz[i])


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """``scatter_object_output_list[0]`` on group rank ``i`` receives input ``i`` of ``src``."""
    g = _group(group)
    if not _member(g):
        return None
    root = _root(g, src, group_src, "src")
    holder = [list(scatter_object_input_list) if g.rank() == root else None]
    broadcast_object_list(holder, group=g, group_src=root)
    scatter_object_output_list[0] = holder[0][g.rank()]


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None):
    g = _group(group)
    payload = [_to_bytes(o) for o in object_list]
    send(_creation.tensor([p.numel() for p in payload], dtype=int64), dst, g, group_dst=group_dst)
    if payload:
        send(_cat_bytes(payload), dst, g, group_dst=group_dst)


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None):
    g = _group(group)
    sizes = _creation.empty(len(object_list), dtype=int64)
    sender = recv(sizes, src, g, group_src=group_src)
    sz = sizes.tolist()
    buf = _creation.empty(sum(sz), dtype=uint8)
    if sz:
        recv(buf, sender, g)
    off = 0
    for i, n in enumerate(sz):
        object_list[i] = pickle.loads(buf._data[off:off + n].tobytes())
        off += n
    return sender
