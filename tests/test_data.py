"""ndgrad.utils.data against torch 2.13: batching, shuffling with a generator (the same
batches as torch's), the default shuffle stream, drop_last, collate, samplers, random_split."""

import collections

import numpy as np
import pytest
import torch
import torch.utils.data as TD

import ndgrad
import ndgrad.utils.data as ND


def as_np(x):
    if isinstance(x, (list, tuple)):
        return [as_np(v) for v in x]
    if isinstance(x, dict):
        return {k: as_np(v) for k, v in x.items()}
    if hasattr(x, "detach"):
        return (str(x.dtype), x.detach().numpy().tolist())
    return x


def tensors(lib, n=10):
    x = lib.arange(n * 3, dtype=lib.float32).reshape(n, 3)
    y = lib.arange(n) % 3
    return x, y


def batches(lib, D, n=10, **kw):
    x, y = tensors(lib, n)
    if "generator" in kw:
        kw["generator"] = lib.Generator().manual_seed(kw["generator"])
    loader = D.DataLoader(D.TensorDataset(x, y), **kw)
    return len(loader), [as_np(b) for b in loader]


@pytest.mark.parametrize("kw", [dict(batch_size=4), dict(batch_size=4, drop_last=True),
                                dict(batch_size=3, shuffle=True, generator=7),
                                dict(batch_size=5, shuffle=True, generator=123, drop_last=True),
                                dict(batch_size=None), dict(batch_size=10)])
def test_tensor_dataset_batches_match_torch(kw):
    assert batches(ndgrad, ND, **dict(kw)) == batches(torch, TD, **dict(kw))


def test_shuffle_two_epochs_same_generator_matches_torch():
    def go(lib, D):
        g = lib.Generator().manual_seed(2024)
        x, y = tensors(lib, 37)
        loader = D.DataLoader(D.TensorDataset(x, y), batch_size=8, shuffle=True, generator=g)
        return [as_np(b[1]) for _ in range(3) for b in loader]
    assert go(ndgrad, ND) == go(torch, TD)


def test_shuffle_without_generator_uses_default_stream_like_torch():
    def go(lib, D):
        lib.manual_seed(5)
        x, y = tensors(lib, 23)
        loader = D.DataLoader(D.TensorDataset(x, y), batch_size=6, shuffle=True)
        out = [as_np(b[1]) for _ in range(2) for b in loader]
        return out, lib.rand(3).tolist()  # the default stream has advanced identically
    assert go(ndgrad, ND) == go(torch, TD)


def test_default_collate_structures_match_torch():
    Point = collections.namedtuple("Point", ["a", "b"])

    def samples(lib):
        return [{"x": lib.tensor([float(i), 2.0]), "n": i, "f": i / 3, "s": f"s{i}",
                 "t": (i, [i * 1.5, True]), "p": Point(i, np.float32(i) / 2),
                 "arr": np.arange(3) * i} for i in range(4)]
    t = as_np(TD.default_collate(samples(torch)))
    n = as_np(ND.default_collate(samples(ndgrad)))
    assert n == t
    Pn = ND.default_collate(samples(ndgrad))["p"]
    assert type(Pn) is Point


def test_collate_errors_and_custom_collate_fn():
    for D in (TD, ND):
        with pytest.raises(RuntimeError, match="each element in list of batch should be of "
                                               "equal size"):
            D.default_collate([[1, 2], [1]])
    ds = ND.TensorDataset(*tensors(ndgrad, 7))
    loader = ND.DataLoader(ds, batch_size=3, collate_fn=lambda b: len(b))
    assert list(loader) == [3, 3, 1]
    assert ND.default_convert(np.arange(3)).tolist() == [0, 1, 2]


def _squares(D):
    """The dataset (i * i, float(i)) for i < 9, subclassing ``D.Dataset``."""
    class Squares(D.Dataset):
        def __len__(self):
            return 9

        def __getitem__(self, i):
            return i * i, float(i)
    return Squares


Squares, TSquares = _squares(ND), _squares(TD)


def test_custom_dataset_and_samplers_match_torch():
    def go(lib, D, ds):
        out = []
        g = lib.Generator().manual_seed(3)
        out.append(list(D.SequentialSampler(ds)))
        out.append(list(D.RandomSampler(ds, generator=g)))
        out.append(list(D.RandomSampler(ds, replacement=True, num_samples=40, generator=g)))
        out.append(list(D.RandomSampler(ds, num_samples=20, generator=g)))
        out.append(list(D.SubsetRandomSampler([10, 20, 30, 40], generator=g)))
        out.append(list(D.BatchSampler(D.SequentialSampler(ds), 4, False)))
        out.append(list(D.BatchSampler(range(10), 4, True)))
        out.append(len(D.BatchSampler(range(10), 4, True)))
        out.append(list(D.WeightedRandomSampler([0.1, 0.9, 0.4, 0.0], 6, generator=g)))
        loader = D.DataLoader(ds, batch_size=4, sampler=D.SubsetRandomSampler([1, 3, 5, 7, 8],
                                                                             generator=g))
        out.append([as_np(b) for b in loader])
        out.append([as_np(b) for b in D.DataLoader(
            ds, batch_sampler=D.BatchSampler(D.SequentialSampler(ds), 2, True))])
        return out
    assert go(ndgrad, ND, Squares()) == go(torch, TD, TSquares())


def test_random_split_and_subset_match_torch():
    def go(lib, D):
        g = lib.Generator().manual_seed(42)
        a, b = D.random_split(range(10), [3, 7], generator=g)
        c = D.random_split(range(30), [0.3, 0.3, 0.4], generator=g)
        d = D.random_split(range(11), [0.5, 0.5], generator=g)
        sub = D.Subset(D.TensorDataset(*tensors(lib)), [5, 1, 8])
        return ([list(a), list(b)], [list(s) for s in c], [list(s) for s in d],
                as_np(sub[1]), len(sub), [as_np(x) for x in D.DataLoader(sub, batch_size=2)])
    assert go(ndgrad, ND) == go(torch, TD)


def test_argument_errors_match_torch():
    def go(lib, D):
        ds = D.TensorDataset(*tensors(lib))
        errs = []
        for bad in [lambda: D.DataLoader(ds, sampler=D.SequentialSampler(ds), shuffle=True),
                    lambda: D.DataLoader(ds, batch_sampler=D.BatchSampler(range(3), 2, False),
                                         batch_size=2),
                    lambda: D.DataLoader(ds, batch_size=None, drop_last=True),
                    lambda: D.BatchSampler(range(3), 0, False),
                    lambda: D.RandomSampler(ds, num_samples=0),
                    lambda: D.random_split(range(5), [2, 2]),
                    lambda: D.TensorDataset(lib.ones(3), lib.ones(4))]:
            try:
                bad()
                errs.append(None)
            except Exception as e:  # noqa: BLE001
                errs.append((type(e).__name__, str(e)))
        return errs
    assert go(ndgrad, ND) == go(torch, TD)


def test_iterable_dataset_and_concat():
    class Stream(ND.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    assert [b.tolist() for b in ND.DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5],
                                                                            [6]]
    assert [b.tolist() for b in ND.DataLoader(Stream(), batch_size=3, drop_last=True)] == [
        [0, 1, 2], [3, 4, 5]]
    cat = Squares() + Squares()
    assert len(cat) == 18 and cat[10] == (1, 1.0) and cat[-1] == (64, 8.0)


def test_batches_of_tensors_requiring_grad_keep_history_like_torch():
    def go(lib, D):
        x = lib.arange(12.0).reshape(6, 2).requires_grad_()
        b = next(iter(D.DataLoader(D.TensorDataset(x, lib.arange(6)), batch_size=4)))
        b[0].sum().backward()
        return b[0].grad_fn.name(), x.grad.tolist(), b[1].requires_grad
    assert go(ndgrad, ND) == go(torch, TD)


def test_fast_tensor_batches_are_fresh_contiguous_copies():
    x = ndgrad.arange(12.0).reshape(6, 2)
    b = next(iter(ND.DataLoader(ND.TensorDataset(x), batch_size=3, shuffle=False)))[0]
    b.mul_(0)
    assert x[0].tolist() == [0.0, 1.0] and b.is_contiguous() and b._version == 1


def test_each_epoch_draws_a_base_seed_like_torch_even_without_shuffle():
    def go(lib, D):
        lib.manual_seed(3)
        for _ in D.DataLoader(D.TensorDataset(lib.arange(5)), batch_size=2):
            pass

        class S(D.IterableDataset):
            def __iter__(self):
                return iter(range(3))
        batches = [b.tolist() for b in D.DataLoader(S(), batch_size=2)]
        return batches, lib.rand(2).tolist()
    assert go(ndgrad, ND) == go(torch, TD)
