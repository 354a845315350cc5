"""Shape, joining and view ops, differential against torch 2.13: values, dtypes, shapes,
grad_fn names, gradients with random grad_outputs, view semantics (shared memory and version
counter), double backward on a subset, and error types/messages."""

import warnings

import numpy as np
import pytest
import torch
from _helpers import _arr, _name, backward_linspace, check, check_error, check_gradgrad

import ndgrad

warnings.filterwarnings("ignore", category=UserWarning)
RNG = np.random.default_rng(99)


def r(*shape, dtype=np.float64):
    return RNG.uniform(-2.0, 2.0, shape).astype(dtype)


A = r(3, 4)
B = r(3, 4)
C = r(2, 3, 4)
V = r(4)
W = r(3)
S = np.array(1.5)


# --------------------------------------------------------------------------- joins
@pytest.mark.parametrize("f", [
    lambda L, a, b: L.cat([a, b]), lambda L, a, b: L.cat((a, b), 1),
    lambda L, a, b: L.concat([a, b], dim=-1), lambda L, a, b: L.stack([a, b]),
    lambda L, a, b: L.stack([a, b], -1), lambda L, a, b: L.stack((a, b), dim=1),
    lambda L, a, b: L.hstack([a, b]), lambda L, a, b: L.vstack([a, b]),
    lambda L, a, b: L.dstack([a, b]), lambda L, a, b: L.column_stack([a, b]),
    lambda L, a, b: L.row_stack((a, b)), lambda L, a, b: L.kron(a, b),
    lambda L, a, b: L.broadcast_tensors(a, b[0]), lambda L, a, b: L.cat([a, b[:0]]),
])
def test_joins(f):
    check(f, A, B)


def test_joins_1d_and_mixed():
    check(lambda L, a, b: L.hstack([a, b]), V, W)
    check(lambda L, a, b: L.vstack([a, a]), V, W)
    check(lambda L, a, b: L.dstack([a, a]), V, W)
    check(lambda L, a, b: L.column_stack([b, b]), V, W)
    check(lambda L, a, b: L.kron(a, b), V, W)
    check(lambda L, a, b: L.kron(a, b), A, W)
    check(lambda L, a, b: L.cartesian_prod(a, b), V, W)
    check(lambda L, a, b: L.cartesian_prod(a), V, W)
    check(lambda L, a, b: L.meshgrid(a, b, indexing="ij"), V, W)
    check(lambda L, a, b: L.meshgrid(a, b, indexing="xy"), V, W)
    check(lambda L, a, b: L.meshgrid([a, b, a], indexing="xy"), V, W)
    check(lambda L, a, b: L.meshgrid(a, b), V, W)
    check(lambda L, a, b: L.cat([a, b.to(L.float32)]), V, W)
    check(lambda L, a, b: L.stack([a.to(L.float32), a]), V, W)
    check(lambda L, a, b: L.broadcast_tensors(a, b.unsqueeze(1)), V, W)
    assert tuple(ndgrad.broadcast_shapes((3, 1), (4,), 1)) == \
        tuple(torch.broadcast_shapes((3, 1), (4,), 1))


@pytest.mark.parametrize("f", [
    lambda L, a, b: L.cat([a, b.t()]), lambda L, a, b: L.stack([a, b.t()]),
    lambda L, a, b: L.cat([a, b], 2), lambda L, a, b: L.cat([a.sum(), b.sum()]),
    lambda L, a, b: L.cat([]), lambda L, a, b: L.stack([a, b], 3),
    lambda L, a, b: L.broadcast_tensors(a, b.t()), lambda L, a, b: L.cat([a, b[0]]),
])
def test_join_errors(f):
    check_error(f, A, B)


# --------------------------------------------------------------------------- splits
@pytest.mark.parametrize("f", [
    lambda L, x: x.split(2), lambda L, x: x.split([1, 2], 1), lambda L, x: L.split(x, 3, -1),
    lambda L, x: x.chunk(2), lambda L, x: x.chunk(3, -1), lambda L, x: x.chunk(4, 2),
    lambda L, x: x.unbind(), lambda L, x: x.unbind(-1), lambda L, x: L.tensor_split(x, 3, 2),
    lambda L, x: L.tensor_split(x, [1, 2], dim=1), lambda L, x: x.tensor_split((1, 5), 2),
    lambda L, x: L.tensor_split(x, L.tensor([0, 2]), 1), lambda L, x: L.hsplit(x, 3),
    lambda L, x: L.vsplit(x, [1]), lambda L, x: L.dsplit(x, 2),
    lambda L, x: L.tensor_split(x, L.tensor(2), 1), lambda L, x: x.split([3, 1], -1)[0],
    lambda L, x: x.unbind(1)[2],
])
def test_splits(f):
    check(f, C)


def test_split_errors():
    check_error(lambda L, x: x.split([1, 1]), A)
    check_error(lambda L, x: x.chunk(0), A)
    check_error(lambda L, x: L.tensor_split(x, 0), A)
    check_error(lambda L, x: L.dsplit(x, 2), A)
    check_error(lambda L, x: L.vsplit(x, 2), A)


# --------------------------------------------------------------------------- views
@pytest.mark.parametrize("f", [
    lambda L, x: x.view(4, 6), lambda L, x: x.view(-1), lambda L, x: x.view(2, -1, 2),
    lambda L, x: x.reshape(6, 4), lambda L, x: x.transpose(0, 2).reshape(-1),
    lambda L, x: x.transpose(0, 1).reshape(3, 8), lambda L, x: x.flatten(),
    lambda L, x: x.flatten(1), lambda L, x: x.flatten(0, 1), lambda L, x: x.unflatten(2, (2, 2)),
    lambda L, x: x.unflatten(-1, (-1, 2)), lambda L, x: x.transpose(0, -1),
    lambda L, x: x.permute(2, 0, 1), lambda L, x: x.permute((1, 2, 0)),
    lambda L, x: x.movedim(0, -1), lambda L, x: L.movedim(x, (0, 1), (2, 0)),
    lambda L, x: L.moveaxis(x, -1, 0), lambda L, x: x.swapaxes(1, 2),
    lambda L, x: L.swapdims(x, 0, 1), lambda L, x: x.squeeze(), lambda L, x: x.unsqueeze(1),
    lambda L, x: x.unsqueeze(-1), lambda L, x: x[:, :1].squeeze(1),
    lambda L, x: x[:1, :, :1].squeeze((0, 2)), lambda L, x: x.squeeze(0),
    lambda L, x: x.narrow(1, 1, 2), lambda L, x: x.narrow(-1, -2, 2),
    lambda L, x: L.narrow(x, 0, L.tensor(1), 1), lambda L, x: x.select(1, -1),
    lambda L, x: L.select(x, 0, 1), lambda L, x: x.diagonal(), lambda L, x: x.diagonal(1, 1, 2),
    lambda L, x: L.diagonal(x, -1, -1, 0), lambda L, x: x.expand(2, 2, 3, 4),
    lambda L, x: x[:, :1].expand(-1, 3, -1), lambda L, x: x.expand_as(L.ones(5, 2, 3, 4)),
    lambda L, x: L.broadcast_to(x[0, 0], (3, 4)), lambda L, x: x.clone(),
    lambda L, x: x.t().contiguous() if x.dim() == 2 else x.mT.contiguous(),
    lambda L, x: x.view_as(L.ones(6, 4)), lambda L, x: x.reshape_as(L.ones(4, 6)),
    lambda L, x: x.mT, lambda L, x: L.atleast_1d(x), lambda L, x: L.atleast_2d(x),
    lambda L, x: L.atleast_3d(x),
])
def test_views(f):
    check(f, C)


def test_2d_and_0d_views():
    check(lambda L, x: x.t(), A)
    check(lambda L, x: x.T, A)
    check(lambda L, x: L.t(x), V)
    check(lambda L, x: x.squeeze(), S)
    check(lambda L, x: x.unsqueeze(0), S)
    check(lambda L, x: x.view(1, 1), S)
    check(lambda L, x: x.flatten(), S)
    check(lambda L, x: L.atleast_1d(x), S)
    check(lambda L, x: L.atleast_2d(x), S)
    check(lambda L, x: L.atleast_3d(x), S)
    check(lambda L, x: L.atleast_3d(x), V)
    check(lambda L, x: L.atleast_3d(x, x * 2), A)
    check(lambda L, x: L.atleast_2d([x, x]), V)
    check(lambda L, x: x.reshape(()), np.array([2.0]))
    check(lambda L, x: x.expand(3, 2), S)


def test_views_share_memory_and_version():
    x = ndgrad.arange(12.0).reshape(3, 4).clone()
    for v in (x.view(4, 3), x.t(), x[1], x[:, 1:3], x.narrow(0, 1, 1), x.diagonal(),
              x.unsqueeze(0), x.permute(1, 0), x.expand(2, 3, 4), x.unflatten(1, (2, 2)),
              x.split(1)[0], x.unbind(1)[0], x.movedim(0, 1), x.swapaxes(0, 1)):
        assert v._base is x
        before = x._version
        x.add_(1)
        assert v._version == before + 1
    flat = x.t().reshape(-1)  # not viewable: a copy
    assert flat._base is None


def test_view_errors():
    check_error(lambda L, x: x.t().view(-1), A)
    check_error(lambda L, x: x.view(5, -1), A)
    check_error(lambda L, x: x.view(-1, -1), A)
    check_error(lambda L, x: x.reshape(7), A)
    check_error(lambda L, x: x.t(), C)
    check_error(lambda L, x: x.permute(0, 1), C)
    check_error(lambda L, x: x.permute(0, 1, 1), C)
    check_error(lambda L, x: x.transpose(0, 3), C)
    check_error(lambda L, x: x.unsqueeze(4), C)
    check_error(lambda L, x: x.squeeze(3), C)
    check_error(lambda L, x: x.select(1, 3), C)
    check_error(lambda L, x: x.select(3, 0), C)
    check_error(lambda L, x: x.narrow(1, 2, 2), C)
    check_error(lambda L, x: x.expand(3, 3, 4), C)
    check_error(lambda L, x: x.expand(3, 4), C)
    check_error(lambda L, x: x.flatten(2, 1), C)
    check_error(lambda L, x: x.unflatten(1, (2, 2)), C)
    check_error(lambda L, x: x.diagonal(0, 1, 1), C)
    check_error(lambda L, x: x.select(0, 0), S)


# --------------------------------------------------------------------------- copies
@pytest.mark.parametrize("f", [
    lambda L, x: x.flip(0), lambda L, x: x.flip((0, 2)), lambda L, x: L.flip(x, [-1]),
    lambda L, x: x.fliplr(), lambda L, x: L.flipud(x), lambda L, x: x.roll(1),
    lambda L, x: x.roll(-2, 1), lambda L, x: L.roll(x, (1, 2), (0, 2)),
    lambda L, x: x.rot90(), lambda L, x: x.rot90(2, (1, 2)), lambda L, x: L.rot90(x, -1, [2, 0]),
    lambda L, x: x.rot90(0), lambda L, x: x.rot90(5, (0, -1)), lambda L, x: x.repeat(2, 1, 1),
    lambda L, x: x.repeat(2, 1, 2, 1), lambda L, x: x.tile((2,)),
    lambda L, x: L.tile(x, (2, 1, 1, 1)),
    lambda L, x: x.repeat_interleave(2), lambda L, x: x.repeat_interleave(2, dim=1),
    lambda L, x: L.repeat_interleave(x, L.tensor([1, 0, 3]), dim=1),
    lambda L, x: x.repeat_interleave(L.tensor([2]), dim=-1),
    lambda L, x: x.tril(), lambda L, x: x.triu(1), lambda L, x: L.tril(x, -1),
    lambda L, x: L.triu(x, diagonal=-1), lambda L, x: L.diag_embed(x),
    lambda L, x: L.diag_embed(x, 1, 0, 2), lambda L, x: L.diag_embed(x, -2, dim1=-1, dim2=1),
])
def test_copies(f):
    check(f, C)


def test_matrix_ops():
    check(lambda L, x: x.diag(), A)
    check(lambda L, x: x.diag(1), A)
    check(lambda L, x: L.diag(x, -2), A)
    check(lambda L, x: x.diag(), V)
    check(lambda L, x: x.diag(-1), V)
    check(lambda L, x: x.trace(), A)
    check(lambda L, x: L.trace(x.t()), A)
    check(lambda L, x: x.trace(), np.arange(6).reshape(2, 3))
    check(lambda L, x: x.tril(), np.arange(6).reshape(2, 3))
    check(lambda L, x: L.select_scatter(x, x[0] * 2, 0, 1), A)
    check(lambda L, x: L.slice_scatter(x, x[:, :2] * 2, 1, 1, 3), A)
    check(lambda L, x: L.slice_scatter(x, x[::2] * 2, step=2), A)
    check(lambda L, x: L.diagonal_scatter(x, x.diagonal() * 3, 0), A)
    check(lambda L, x: L.diagonal_scatter(x, x.diagonal(1) * 3, 1), A)
    check(lambda L, x: L.repeat_interleave(L.tensor([1, 0, 2])), A, grad=False)


def test_copy_errors():
    check_error(lambda L, x: x.rot90(1, (0, 0)), A)
    check_error(lambda L, x: x.rot90(1, (0,)), A)
    check_error(lambda L, x: x.rot90(1), V)
    check_error(lambda L, x: x.fliplr(), V)
    check_error(lambda L, x: x.flipud(), S)
    check_error(lambda L, x: x.roll((1, 2), 0), A)
    check_error(lambda L, x: x.repeat(2), A)
    check_error(lambda L, x: x.repeat_interleave(L.tensor([1, 2]), dim=0), A)
    check_error(lambda L, x: x.repeat_interleave(-1), A)
    check_error(lambda L, x: x.tril(), V)
    check_error(lambda L, x: x.triu(), V)
    check_error(lambda L, x: x.diag(), C)
    check_error(lambda L, x: x.trace(), V)
    check_error(lambda L, x: L.diag_embed(x, 0, 0, 0), A)
    check_error(lambda L, x: L.meshgrid(x, x, indexing="ji"), V)
    check_error(lambda L, x: L.meshgrid(x, indexing="ij"), A, match_message=False)


def test_empty_and_0d():
    e = np.zeros((0, 3))
    check(lambda L, x: L.cat([x, x]), e)
    check(lambda L, x: L.stack([x, x], 1), e)
    check(lambda L, x: x.flip(0), e)
    check(lambda L, x: x.roll(1, 1), e)
    check(lambda L, x: x.repeat(2, 2), e)
    check(lambda L, x: x.split(1, 1), e)
    check(lambda L, x: x.chunk(2), e)
    check(lambda L, x: x.tril(), e)
    check(lambda L, x: L.stack([x, x]), S)
    check(lambda L, x: x.repeat(2, 3), S)
    check(lambda L, x: x.roll(1), S)
    check(lambda L, x: x.flip(0) if x.dim() else x.flip(()), S)


# --------------------------------------------------------------------------- double backward
@pytest.mark.parametrize("f", [
    lambda L, x: L.stack([x, x * 2], 1) ** 2, lambda L, x: L.cat([x, x ** 2], -1),
    lambda L, x: x.split(1)[1] ** 2, lambda L, x: x.unbind(1)[0] * x.unbind(1)[1],
    lambda L, x: x.flip(0) * x, lambda L, x: x.roll(1, 1) * x, lambda L, x: x.rot90() ** 2,
    lambda L, x: x.repeat(2, 2) ** 2, lambda L, x: x.repeat_interleave(2, 0) ** 2,
    lambda L, x: x.tril() * x, lambda L, x: x.diag() ** 3, lambda L, x: L.diag_embed(x) ** 2,
    lambda L, x: x.trace() ** 2, lambda L, x: L.kron(x, x),
    lambda L, x: x.t().reshape(-1) ** 2, lambda L, x: x.expand(2, 3, 4) ** 2,
    lambda L, x: x.diagonal() * x[0, :3], lambda L, x: L.tensor_split(x, 2, 1)[0] ** 2,
])
def test_double_backward(f):
    check_gradgrad(f, A)


def test_inplace_through_views_matches_torch():
    a = np.arange(12.0).reshape(3, 4)
    for make_view in (lambda b: b[0], lambda b: b[:, 1:3], lambda b: b.diagonal(),
                      lambda b: b.t(), lambda b: b.view(4, 3), lambda b: b.narrow(0, 1, 2),
                      lambda b: b.movedim(0, 1), lambda b: b[None]):
        res = []
        for lib in (torch, ndgrad):
            leaf = lib.tensor(a, requires_grad=True)
            b = leaf * 1
            v = make_view(b)
            v.mul_(3)
            (b * lib.arange(12.0).reshape(3, 4)).sum().backward()
            res.append((type(b.grad_fn).__name__, _arr(b).tolist(), _arr(leaf.grad).tolist()))
        assert res[0] == res[1]
        res = []
        for lib in (torch, ndgrad):  # the base written in place, the view used afterwards
            leaf = lib.tensor(a, requires_grad=True)
            b = leaf * 1
            v = make_view(b)
            b.mul_(2)
            (v * lib.arange(float(v.numel())).reshape(tuple(v.shape))).sum().backward()
            res.append((_arr(v).tolist(), _arr(leaf.grad).tolist()))
        assert res[0] == res[1]


def test_inplace_tril_triu_cumsum_cumprod():
    for f in (lambda L, x: x.clone().tril_(), lambda L, x: x.clone().triu_(1),
              lambda L, x: x.clone().cumsum_(1), lambda L, x: x.clone().cumprod_(0),
              lambda L, x: x.clone().tril_(-1).cumsum_(-1)):
        check(f, A)
    check_error(lambda L, x: x.clone().tril_(), V)


def _shape_fuzz_ops():
    def D(rnd, nd):
        return rnd.randint(-nd - 1, nd) if nd else rnd.choice([0, -1, 1])
    return {
        "view": lambda L, x, nd, r: x.view(*[r.choice([-1, 1, 2, 3, 6])
                                             for _ in range(r.randint(1, 3))]),
        "reshape": lambda L, x, nd, r: x.reshape(*[r.choice([-1, 1, 2, 3, 6])
                                                   for _ in range(r.randint(1, 3))]),
        "permute": lambda L, x, nd, r: x.permute(*r.sample(range(nd), nd)) if nd else x.permute(()),
        "transpose": lambda L, x, nd, r: x.transpose(D(r, nd), D(r, nd)),
        "squeeze": lambda L, x, nd, r: x.squeeze(D(r, nd)),
        "unsqueeze": lambda L, x, nd, r: x.unsqueeze(r.randint(-nd - 2, nd + 1)),
        "flatten": lambda L, x, nd, r: x.flatten(D(r, nd), D(r, nd)),
        "movedim": lambda L, x, nd, r: x.movedim(D(r, nd), D(r, nd)),
        "narrow": lambda L, x, nd, r: x.narrow(D(r, nd), r.randint(-3, 3), r.randint(0, 3)),
        "select": lambda L, x, nd, r: x.select(D(r, nd), r.randint(-3, 3)),
        "split": lambda L, x, nd, r: x.split(r.randint(1, 3), D(r, nd)),
        "chunk": lambda L, x, nd, r: x.chunk(r.randint(1, 4), D(r, nd)),
        "tensor_split": lambda L, x, nd, r: x.tensor_split(r.randint(1, 4), D(r, nd)),
        "unbind": lambda L, x, nd, r: x.unbind(D(r, nd)),
        "repeat": lambda L, x, nd, r: x.repeat(*[r.randint(0, 2)
                                                 for _ in range(r.randint(max(nd, 1), nd + 1))]),
        "flip": lambda L, x, nd, r: x.flip(D(r, nd)),
        "rot90": lambda L, x, nd, r: x.rot90(r.randint(-2, 3), (D(r, nd), D(r, nd))),
        "diagonal": lambda L, x, nd, r: x.diagonal(r.randint(-2, 2), D(r, nd), D(r, nd)),
        "tril": lambda L, x, nd, r: x.tril(r.randint(-2, 2)),
        "stack": lambda L, x, nd, r: L.stack([x, x], r.randint(-nd - 2, nd + 1)),
        "diag_embed": lambda L, x, nd, r: L.diag_embed(x, r.randint(-1, 1), D(r, nd + 1),
                                                        D(r, nd + 1)),
        "atleast_3d": lambda L, x, nd, r: L.atleast_3d(x),
        "hstack": lambda L, x, nd, r: L.hstack([x, x]),
        "dstack": lambda L, x, nd, r: L.dstack([x, x]),
        "kron": lambda L, x, nd, r: L.kron(x, x),
        "trace": lambda L, x, nd, r: x.trace(),
        "diag": lambda L, x, nd, r: x.diag(r.randint(-1, 1)),
    }


def test_random_shapes_and_args_match_torch():
    """Random shapes (0-d and empty included) and arguments (negative and out-of-range dims):
    shapes, values, grad_fn names and gradients, or the same error, as torch."""
    import random
    ops = _shape_fuzz_ops()
    names = sorted(ops)
    rnd = random.Random(0)
    for trial in range(700):
        nd = rnd.randint(0, 3)
        shape = tuple(rnd.randint(0, 3) for _ in range(nd))
        name = rnd.choice(names)
        state = rnd.getstate()
        a = np.random.default_rng(trial).standard_normal(shape)
        res = []
        for lib in (torch, ndgrad):
            rnd.setstate(state)
            x = lib.tensor(a, requires_grad=True)
            try:
                o = backward_linspace(lib, ops[name](lib, x, nd, rnd))
                res.append(([(tuple(t.shape), _arr(t).tolist(), _name(t)) for t in o],
                            None if x.grad is None else _arr(x.grad).round(10).tolist()))
            except Exception as e:  # noqa: BLE001 - compared with torch's
                res.append(f"{type(e).__name__}: {e}")
        assert res[0] == res[1], (name, shape)


def test_reshape_of_non_contiguous_viewable_input_is_reshape_alias_as_torch():
    """reshape views a contiguous input (ViewBackward0) and aliases a non-contiguous one whose
    strides allow a view (ReshapeAliasBackward0), copying otherwise, as torch does."""
    import numpy as np
    import torch

    import ndgrad
    xa = np.arange(24, dtype=np.float32).reshape(4, 6)
    for make, shape in [(lambda x: x, (2, 12)), (lambda x: x.t(), (2, 3, 4)),
                        (lambda x: x[:, :4], (2, 2, 4)), (lambda x: x.t(), (24,))]:
        res = []
        for L in (ndgrad, torch):
            x = L.tensor(xa, requires_grad=True)
            y = make(x).reshape(shape)
            y.backward(L.ones(shape))
            res.append((y.grad_fn.name(), y._is_view(), y.stride(), y.detach().numpy().copy(),
                        x.grad.numpy().copy()))
        assert res[0][:3] == res[1][:3]
        np.testing.assert_array_equal(res[0][3], res[1][3])
        np.testing.assert_array_equal(res[0][4], res[1][4])


_SQUEEZE_CASES = [
    lambda L, x: x.squeeze(), lambda L, x: x.squeeze(1), lambda L, x: x.squeeze(-1),
    lambda L, x: x.squeeze(0), lambda L, x: x.squeeze((1, 3)), lambda L, x: x.squeeze((1,)),
    lambda L, x: x.squeeze([1, -1]), lambda L, x: x.squeeze(()),
    lambda L, x: x.squeeze((0, 2)), lambda L, x: L.squeeze(x, -3),
    lambda L, x: L.squeeze(x, (1, 3)), lambda L, x: x[0, :, 0].squeeze(),
    lambda L, x: x[0, 0, 0, 0].squeeze(0), lambda L, x: x[0, 0, 0, 0].squeeze((0,)),
    lambda L, x: x.clone().squeeze_(), lambda L, x: x.clone().squeeze_(-1),
    lambda L, x: x.clone().squeeze_((1, -1)), lambda L, x: x.clone().squeeze_(0),
    lambda L, x: L.squeeze_copy(x, (1, 3)), lambda L, x: L.squeeze_copy(x, -3),
    lambda L, x: L.squeeze_copy(x),
]


@pytest.mark.parametrize("k", range(len(_SQUEEZE_CASES)))
def test_squeeze_nodes_and_saved_attributes(k):
    # SqueezeBackward0/1/2 (out of place), 3/4/5 (in place), *_copy: torch's name, the dim
    # as given (unwrapped, unfiltered: a dim of size > 1 is saved too) and the input sizes
    res = []
    for L in (torch, ndgrad):
        x = L.tensor(np.arange(6.0).reshape(2, 1, 3, 1), requires_grad=True)
        out = _SQUEEZE_CASES[k](L, x)
        fn = out.grad_fn
        names = sorted(a for a in dir(fn) if a.startswith("_saved_"))
        out.backward(L.ones_like(out))
        res.append((type(fn).__name__, names, {a: getattr(fn, a) for a in names},
                    tuple(out.shape), x.grad.numpy().tolist()))
    assert res[1] == res[0]
