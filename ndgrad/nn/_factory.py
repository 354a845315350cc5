"""``torch.nn.factory_kwargs``: merge the device/dtype/memory_format keyword arguments of a
module constructor with an explicit ``factory_kwargs`` dict, as torch's."""

__all__ = ["factory_kwargs"]


def factory_kwargs(kwargs):
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    expected = simple | {"factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in simple:
        if key in kwargs:
            if key in out:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            out[key] = kwargs[key]
    return out
