"""``nn.utils.rnn``: variable-length sequence batches, padded or packed.

A ``PackedSequence`` holds ``data`` (the valid steps of every sequence, time-major: step ``t``
of all sequences longer than ``t``, longest first), ``batch_sizes`` (an int64 tensor: how many
sequences are still running at each step), and, when the batch was sorted for packing,
``sorted_indices`` / ``unsorted_indices`` (the permutation to the length-sorted order and its
inverse). RNN, LSTM and GRU accept it as input (see ``nn/modules/rnn.py``).

Invariant: ``batch_sizes`` is non-increasing and sums to ``data.shape[0]``; packing and
unpacking are differentiable (``PackPaddedSequenceBackward0`` for the packing, slice copies
for the padding, as in torch).
"""

import itertools
from collections import namedtuple

from ... import _creation
from ..._ops import joins as J
from ..._ops.packed_sequence import PACK_PADDED
from ..._tensor import Tensor
from .. import functional as F
from ... import _dtype as D

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


def _map(t, fn):
    return None if t is None else fn(t)


class PackedSequence(namedtuple("PackedSequence_",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A packed batch of variable-length sequences (see the module docstring)."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Convert ``data`` (dtype/device); ``self`` when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args, **kwargs):
        return self.to("cpu")

    def pin_memory(self):
        return self

    def double(self):
        return self.to(dtype=_dtype("float64"))

    def float(self):
        return self.to(dtype=_dtype("float32"))

    def half(self):
        return self.to(dtype=_dtype("float16"))

    def long(self):
        return self.to(dtype=_dtype("int64"))

    def int(self):
        return self.to(dtype=_dtype("int32"))

    def short(self):
        return self.to(dtype=_dtype("int16"))

    def char(self):
        return self.to(dtype=_dtype("int8"))

    def byte(self):
        return self.to(dtype=_dtype("uint8"))

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _dtype(name):
    return getattr(D, name)


def invert_permutation(permutation):
    """The inverse of a 1-D index permutation (``None`` stays ``None``)."""
    if permutation is None:
        return None
    out = _creation.empty_like(permutation)
    out.scatter_(0, permutation, _creation.arange(permutation.numel()))
    return out


def _lengths_list(lengths, batch_size):
    """Validate ``lengths`` (sorted, positive, one per batch element) as a list of ints."""
    if lengths.dim() != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D cpu Long tensor")
    values = [int(v) for v in lengths.tolist()]
    if len(values) != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(values)} (batch_size={batch_size})")
    if values and values[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in itertools.pairwise(values)):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    return values


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded ``(T, B, *)`` (or ``(B, T, *)``) batch given each sequence's length."""
    if isinstance(lengths, Tensor):
        lengths = lengths.to(dtype=_dtype("int64"))
    else:
        lengths = _creation.as_tensor(lengths, dtype=_dtype("int64"))
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = lengths.sort(descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    steps = input.shape[1] if batch_first else input.shape[0]
    values = _lengths_list(lengths, input.shape[0] if batch_first else input.shape[1])
    if values[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: the longest length ({values[0]}) exceeds "
                           f"the {steps} time steps of the input")
    batch_sizes = tuple(sum(1 for n in values if n > t) for t in range(values[0]))
    data = PACK_PADDED.call(input, params=(batch_sizes, bool(batch_first), tuple(input.shape)))
    return PackedSequence(data, _creation.tensor(batch_sizes, dtype=_dtype("int64")),
                          sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Unpack a ``PackedSequence`` into a padded batch and the int64 lengths, in the
    batch's original order."""
    batch_sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
        max_len = total_length
    data = sequence.data
    batch = batch_sizes[0]
    out = _creation.full((max_len, batch) + tuple(data.shape[1:]), padding_value,
                         dtype=data.dtype)
    # One copy per run of steps with the same batch size, as torch's kernel does: the run's
    # rows of `data` viewed as (steps, b, *) into out[t:t + steps, :b].
    start = t = 0
    rest = tuple(data.shape[1:])
    while t < len(batch_sizes):
        b = batch_sizes[t]
        end = t
        while end < len(batch_sizes) and batch_sizes[end] == b:
            end += 1
        steps = end - t
        src = data.narrow(0, start, steps * b).view((steps, b) + rest)
        out.narrow(0, t, steps).narrow(1, 0, b).copy_(src)
        start += steps * b
        t = end
    if batch_first:
        out = out.transpose(0, 1)
    lengths = [sum(1 for b in batch_sizes if b > i) for i in range(batch)]
    lengths = _creation.tensor(lengths, dtype=_dtype("int64"))
    if sequence.unsorted_indices is not None:
        unsorted = sequence.unsorted_indices
        return out.index_select(0 if batch_first else 1, unsorted), lengths[unsorted]
    return out, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Pad a list of (L_i, *) tensors to (L_max, B, *) or (B, L_max, *) (differentiable)."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    sequences = tuple(sequences)
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = max_len - s.shape[0]
        pads = [0, 0] * (s.dim() - 1)
        pads += [extra, 0] if padding_side == "left" else [0, extra]
        padded.append(F.pad(s, pads, value=padding_value) if extra else s)
    return J.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch into its sequences, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    steps = _creation.arange(padded_sequences.shape[1])
    return [seq[steps < n] for seq, n in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of (L_i, *) tensors (``pad_sequence`` then ``pack_padded_sequence``)."""
    lengths = _creation.as_tensor([s.shape[0] for s in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences held by a ``PackedSequence``, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
