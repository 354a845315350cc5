"""A post hook on a leaf's AccumulateGrad node sees as grad_outputs[0] the memory that became
``.grad`` when the incoming gradient was stolen into it (so changes made by post-accumulate-grad
hooks show), the incoming gradient itself when ``.grad`` already existed, and never the
``.grad`` object itself. Differential against torch 2.13."""

import torch

import ndgrad


def _hook_order(L):
    tensor = L.rand(3, requires_grad=True)
    acc = tensor.view_as(tensor).grad_fn.next_functions[0][0]
    tensor.register_hook(lambda g: g.sub(2.0))
    acc.register_prehook(lambda go: (go[0].div(5.0),))
    def post_accumulate(t):
        t.grad.add_(0.5)
    tensor.register_post_accumulate_grad_hook(post_accumulate)

    def post(grad_in, grad_out):
        tensor.grad = grad_out[0].mul(10)
    acc.register_hook(post)
    tensor.sum().backward()
    return [round(v, 5) for v in tensor.grad.tolist()]


def _identity_and_values(L):
    seen = []
    t = L.ones(2, requires_grad=True)
    acc = t.view_as(t).grad_fn.next_functions[0][0]
    acc.register_hook(lambda gi, go: seen.append((go[0] is t.grad, go[0].tolist(),
                                                  t.grad.tolist())))
    (t * 3).sum().backward()
    (t * 5).sum().backward()      # .grad exists: accumulated in place
    kept = L.full((2,), 7.0)
    u = L.ones(2, requires_grad=True)
    acc_u = u.view_as(u).grad_fn.next_functions[0][0]
    acc_u.register_hook(lambda gi, go: seen.append((go[0] is u.grad, go[0] is kept)))
    u.backward(kept)              # the user holds the gradient: copied, not stolen
    return seen, u.grad is kept


def test_post_hook_sees_the_accumulated_gradient_after_post_accumulate_hooks():
    assert _hook_order(ndgrad) == _hook_order(torch) == [3.0, 3.0, 3.0]


def test_post_hook_grad_outputs_identity_and_values():
    assert _identity_and_values(ndgrad) == _identity_and_values(torch)
