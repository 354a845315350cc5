"""State a compiled function keeps outside its arguments: tensors held in closure cells,
in dicts reached from the closure, and in globals, read where they are at every call and
written back there when the function stores new ones.

A training loop often carries tensors between calls this way (word_language_model's LSTM
hidden state, ``state["hidden"] = model(src, hidden)[1]`` with ``hidden`` detached first).
torch.compile makes such a tensor an input of the graph and replays the store as a side
effect; so does ndgrad.compile:

- a :class:`Place` is where the trace found a tensor: a cell's contents or a dict's item,
  optionally item ``index`` of a tuple or list held there. The compiled entry reads the
  tensor from its place at every call (``Place.get``, the protocol of a module's parameter
  dict in ``api._make_gather``), so a value stored since is the one used. A *detached*
  place reads a ``detach()`` alias of that tensor (the function detached it before use:
  the region sees a leaf that needs no gradient, as eager does).
- :class:`Containers` snapshots the cells and dicts the trace can reach before the function
  runs; after it, ``stores()`` lists the items that now hold other objects made of tensors.
  Those tensors become extra outputs of the region, and every compiled call writes its new
  ones to the same places (``Region.stores``).

Invariant: a place keeps its container alive, never a tensor (the previous step's graph is
freed as in eager mode); only items holding a tensor or a tuple/list of tensors (and
constants) take part: other Python side effects happen on the traced call only.
"""

from .._tensor import Tensor

__all__ = ["Place", "Target", "Containers"]


def _read(kind, obj, key):
    if kind == "cell":
        try:
            return obj.cell_contents
        except ValueError:
            return None
    return obj.get(key)


class Target:
    """A cell (`key` unused) or a dict item, compared by container identity and key."""

    __slots__ = ("kind", "obj", "key")

    def __init__(self, kind, obj, key):
        self.kind, self.obj, self.key = kind, obj, key

    def value(self):
        return _read(self.kind, self.obj, self.key)

    def set(self, value):
        if self.kind == "cell":
            self.obj.cell_contents = value
        else:
            self.obj[self.key] = value

    def __eq__(self, other):
        return type(other) is type(self) and self.obj is other.obj and \
            self.kind == other.kind and self.key == other.key

    def __hash__(self):
        return hash((id(self.obj), self.key))


class Place:
    """Where a tensor lives: `target`'s value, or its item `index`; `detach`: read as a
    ``detach()`` alias. ``get(_)`` returns the tensor or None (gone, or not a tensor)."""

    __slots__ = ("target", "index", "detach")

    def __init__(self, target, index=None, detach=False):
        self.target, self.index, self.detach = target, index, detach

    def detached(self):
        return Place(self.target, self.index, True)

    def get(self, _key=None):
        v = self.target.value()
        if self.index is not None:
            if type(v) not in (tuple, list) or len(v) <= self.index:
                return None
            v = v[self.index]
        if not isinstance(v, Tensor):
            return None
        return v.detach() if self.detach else v

    def __eq__(self, other):
        return type(other) is Place and self.target == other.target and \
            self.index == other.index and self.detach == other.detach

    def __hash__(self):
        return hash((self.target, self.index, self.detach))


def _tensors_of(v):
    """(index, tensor) pairs of `v`: a tensor (index None) or a tuple/list's tensor items;
    None when `v` holds no tensor or holds anything but tensors and constants."""
    if isinstance(v, Tensor):
        return [(None, v)]
    if type(v) in (tuple, list):
        items = [(i, o) for i, o in enumerate(v) if isinstance(o, Tensor)]
        if items and all(isinstance(o, Tensor) or o is None or
                         type(o) in (int, float, bool, str) for o in v):
            return items
    return None


class Containers:
    """The cells and dicts a trace can reach, with their contents before the call."""

    def __init__(self):
        self.seen = {}        # id(container) -> (Target list, {key: id(value)} snapshot)
        self.places = {}      # id(tensor) -> Place
        self.arrays = {}      # id(tensor's array) -> (tensor, Place)
        self.keep = []

    def add_cell(self, cell):
        self._add("cell", cell, (None,))

    def add_dict(self, d, keys=None):
        self._add("dict", d, d.keys() if keys is None else keys)

    def _add(self, kind, obj, keys):
        snap = self.seen.get(id(obj))
        if snap is None:
            snap = self.seen[id(obj)] = ([], {})
            self.keep.append(obj)
        for key in keys:
            if key in snap[1]:
                continue
            target = Target(kind, obj, key)
            v = target.value()
            snap[0].append(target)
            snap[1][key] = id(v)
            self.keep.append(v)
            for index, t in _tensors_of(v) or ():
                place = Place(target, index)
                self.places.setdefault(id(t), place)
                self.arrays.setdefault(id(t._data), (t, place))

    def place_of(self, t):
        """The place of tensor `t`, or of the tensor `t` is a plain alias of (same array,
        no history, no gradient: ``detach()`` or ``.data``), detached; or None."""
        place = self.places.get(id(t))
        if place is not None:
            return place
        found = self.arrays.get(id(t._data))
        if found is not None and t._grad_fn is None and not t._rg and t._base is None:
            return found[1].detached()
        return None

    def stores(self):
        """[(Target, new value)] for the items holding other objects than before the call,
        when the new object is made of tensors."""
        out = []
        for targets, snap in self.seen.values():
            for target in targets:
                v = target.value()
                if id(v) != snap[target.key] and _tensors_of(v) is not None:
                    out.append((target, v))
        return out
