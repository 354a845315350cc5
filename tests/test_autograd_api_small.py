"""Small pieces of torch.autograd's and Tensor's API that PyTorch's own autograd tests reach
(test/test_autograd.py), each compared with torch 2.13: deleting autograd attributes,
``Tensor.type`` with a legacy typed class, and the small autograd helpers."""

import pytest

from _diff import arr, raises_same, same, t


# ----------------------------------------------------------------- deleting attributes
@pytest.mark.parametrize("name", ["_grad_fn", "_backward_hooks", "requires_grad", "data"])
def test_deleting_autograd_state_raises_like_torch(name):
    def scenario(lib):
        x = t(lib, arr(0, 3), requires_grad=True)
        delattr(x, name)
    raises_same(scenario)


def test_failed_delete_leaves_tensor_usable():
    def scenario(lib):
        x = t(lib, arr(1, 3), requires_grad=True)
        y = x * 2
        with pytest.raises(RuntimeError):
            del y._grad_fn
        y.sum().backward()
        return [x.grad, y.grad_fn.name(), y.requires_grad]
    same(scenario)


def test_deleting_grad_and_plain_attributes_works():
    def scenario(lib):
        x = t(lib, arr(2, 3), requires_grad=True)
        x.sum().backward()
        del x.grad
        x.note = 1
        del x.note
        return [x.grad is None, hasattr(x, "note")]
    same(scenario)


# ----------------------------------------------------------------- Tensor.type
@pytest.mark.parametrize("cls", ["DoubleTensor", "FloatTensor", "IntTensor", "ByteTensor",
                                 "LongTensor"])
def test_type_with_legacy_class(cls):
    def scenario(lib):
        x = t(lib, arr(3, 2, 3) * 3, dtype=lib.float32)
        y = x.type(getattr(lib, cls))
        return [y, str(y.dtype), isinstance(y, getattr(lib, cls)),
                x.type(y.dtype).dtype is y.dtype]
    same(scenario)


def test_type_same_class_returns_self_and_keeps_grad_path():
    def scenario(lib):
        x = t(lib, arr(4, 3), requires_grad=True, dtype=lib.float32)
        same_obj = x.type(lib.FloatTensor) is x
        x.type(lib.DoubleTensor).sum().backward()
        return [same_obj, x.grad, str(x.grad.dtype)]
    same(scenario)


@pytest.mark.parametrize("bad", [int, type(None), 3, "torch.Nothing"])
def test_type_rejects_non_types_like_torch(bad):
    raises_same(lambda lib: t(lib, arr(5, 2)).type(bad))
