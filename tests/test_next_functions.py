"""next_functions against torch 2.13: a node lists edges for the inputs its op is
differentiable in only (no entry for class indices, index or mask tensors, Python numbers, or
weights torch has no derivative for), in torch's order, whichever inputs require grad."""

import math

import pytest
import torch

import ndgrad


def _make(L):
    def r(*shape):
        n = max(1, math.prod(shape))
        return L.linspace(0.2, 1.7, n).reshape(shape).clone().requires_grad_()
    return r


def _bool(L):
    return L.tensor([True, False, True])


CASES = {
    "mse": lambda L, F, r: F.mse_loss(r(3), r(3)),
    "smooth_l1": lambda L, F, r: F.smooth_l1_loss(r(3), r(3)),
    "huber": lambda L, F, r: F.huber_loss(r(3), r(3)),
    "soft_margin": lambda L, F, r: F.soft_margin_loss(r(3), r(3).detach()),
    "bce": lambda L, F, r: F.binary_cross_entropy(r(3) * 0.5, r(3) * 0.5),
    "bce_w": lambda L, F, r: F.binary_cross_entropy(r(3) * 0.5, r(3) * 0.5, r(3).detach()),
    "bce_logits": lambda L, F, r: F.binary_cross_entropy_with_logits(
        r(3), r(3), r(3).detach(), pos_weight=r(3).detach()),
    "multi_margin": lambda L, F, r: F.multi_margin_loss(r(2, 3), L.tensor([0, 1]),
                                                        weight=r(3).detach()),
    "multilabel_margin": lambda L, F, r: F.multilabel_margin_loss(
        r(2, 3), L.tensor([[0, -1, 1], [1, -1, 0]])),
    "nll": lambda L, F, r: F.nll_loss(r(2, 3), L.tensor([0, 1]), r(3).detach()),
    "nll2d": lambda L, F, r: F.nll_loss(r(2, 3, 1, 2), L.tensor([[[0, 1]], [[2, 0]]])),
    "gather": lambda L, F, r: r(3, 4).gather(1, L.tensor([[0], [1], [2]])),
    "index_select": lambda L, F, r: r(3, 4).index_select(0, L.tensor([0, 2])),
    "index_add": lambda L, F, r: r(3, 4).index_add(0, L.tensor([0, 2]), r(2, 4)),
    "index_copy": lambda L, F, r: r(3, 4).index_copy(0, L.tensor([0, 2]), r(2, 4)),
    "index_fill": lambda L, F, r: r(3, 4).index_fill(0, L.tensor([0, 2]), 1.0),
    "index_fill_tensor": lambda L, F, r: r(3, 4).index_fill(0, L.tensor([0, 2]), r()),
    "index_reduce": lambda L, F, r: r(3, 4).index_reduce(0, L.tensor([0, 2]), r(2, 4), "amax"),
    "masked_fill": lambda L, F, r: r(3).masked_fill(_bool(L), 1.0),
    "masked_fill_tensor": lambda L, F, r: r(3).masked_fill(_bool(L), r()),
    "masked_scatter": lambda L, F, r: r(3).masked_scatter(_bool(L), r(3)),
    "masked_select": lambda L, F, r: r(3).masked_select(_bool(L)),
    "take": lambda L, F, r: r(3, 4).take(L.tensor([0, 2])),
    "put": lambda L, F, r: r(3, 4).put(L.tensor([0, 2]), r(2)),
    "scatter": lambda L, F, r: r(3, 4).scatter(0, L.tensor([[0, 1]]), r(1, 2)),
    "scatter_value": lambda L, F, r: r(3, 4).scatter(0, L.tensor([[0, 1]]), 2.0),
    "scatter_add": lambda L, F, r: r(3, 4).scatter_add(0, L.tensor([[0, 1]]), r(1, 2)),
    "scatter_reduce": lambda L, F, r: r(3, 4).scatter_reduce(0, L.tensor([[0, 1]]), r(1, 2),
                                                             "sum"),
    "embedding": lambda L, F, r: F.embedding(L.tensor([0, 2]), r(3, 4)),
    "max_unpool2d": lambda L, F, r: F.max_unpool2d(
        *F.max_pool2d(r(1, 1, 2, 2), 2, return_indices=True), 2),
    "rrelu": lambda L, F, r: F.rrelu(r(3), training=True),
    "fmod": lambda L, F, r: r(3).fmod(0.7),
    "remainder": lambda L, F, r: r(3).remainder(0.7),
    "rsub": lambda L, F, r: L.rsub(r(3), 2.0),
    "xlogy_self_scalar": lambda L, F, r: L.xlogy(2.0, r(3)),
    "xlogy_other_scalar": lambda L, F, r: L.xlogy(r(3), 2.0),
    "zeta_other_scalar": lambda L, F, r: L.special.zeta(r(3) + 1, 2.0),
    "zeta_self_scalar": lambda L, F, r: L.special.zeta(2.0, r(3)),
    "pow": lambda L, F, r: r(3) ** 2.5,
    "rpow": lambda L, F, r: 2.5 ** r(3),
    "where": lambda L, F, r: L.where(_bool(L), r(3), r(3)),
    "where_scalar": lambda L, F, r: L.where(_bool(L), r(3), 2.0),
    "where_scalar_self": lambda L, F, r: L.where(_bool(L), 2.0, r(3)),
    "repeat_interleave": lambda L, F, r: r(3).repeat_interleave(L.tensor([1, 2, 1])),
    # the input torch does not differentiate needs no grad: the other edges still show
    "masked_scatter_src_only": lambda L, F, r: r(3).detach().masked_scatter(_bool(L), r(3)),
    "where_one_side": lambda L, F, r: L.where(_bool(L), r(3).detach(), r(3)),
}


def _names(fn):
    return [None if n is None else type(n).__name__ for n, _ in fn.next_functions]


@pytest.mark.parametrize("name", sorted(CASES))
def test_next_functions_match_torch(name):
    res = []
    for L in (torch, ndgrad):
        out = CASES[name](L, L.nn.functional, _make(L))
        res.append((type(out.grad_fn).__name__, _names(out.grad_fn)))
    assert res[1] == res[0]


@pytest.mark.parametrize("name", ["nll", "nll2d", "soft_margin"])
def test_double_backward_node_edges_match_torch(name):
    res = []
    for L in (torch, ndgrad):
        r = _make(L)
        out = CASES[name](L, L.nn.functional, r)
        x = out.grad_fn.next_functions[0][0].variable
        g, = L.autograd.grad(out.sum(), x, create_graph=True)
        res.append((type(g.grad_fn).__name__, _names(g.grad_fn)))
    assert res[1] == res[0]


def test_a_real_edge_torch_lacks_is_not_hidden():
    # ndgrad differentiates where's condition input nowhere, but an op whose hidden input does
    # need grad keeps every edge: here a float "mask" through index_fill's value
    x = ndgrad.zeros(3, 4, requires_grad=True)
    v = ndgrad.tensor(2.0, requires_grad=True)
    out = x.index_fill(0, ndgrad.tensor([0, 2]), v)
    edges = [n for n, _ in out.grad_fn.next_functions]
    assert len(edges) == 2 and all(e is not None for e in edges)
