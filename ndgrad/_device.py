"""``device``: ndgrad computes on the CPU only; the object exists so torch code that names
devices runs unchanged."""

__all__ = ["device"]


class device:
    """A compute device. Only ``cpu`` exists; other types raise when tensors are moved there."""

    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        if ":" in type:
            type, _, idx = type.partition(":")
            index = int(idx)
        self.type = type
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


cpu = device("cpu")


def check_device(d):
    """Raise for a device ndgrad cannot use (anything but the CPU)."""
    if d is None:
        return
    d = device(d) if not isinstance(d, device) else d
    if d.type != "cpu":
        raise RuntimeError(f"ndgrad runs on the CPU only; cannot use device '{d}'")
