"""``nn.utils.rnn.pad_sequence``: stack variable-length sequences with padding.

Packed sequences (``pack_padded_sequence``) are not provided: ndgrad's RNNs run on padded
batches only.
"""

from ..._ops import joins as J
from .. import functional as F

__all__ = ["pad_sequence"]


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Pad a list of (L_i, *) tensors to (L_max, B, *) or (B, L_max, *) (differentiable)."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = max_len - s.shape[0]
        pads = [0, 0] * (s.dim() - 1)
        pads += [extra, 0] if padding_side == "left" else [0, extra]
        padded.append(F.pad(s, pads, value=padding_value) if extra else s)
    return J.stack(padded, 0 if batch_first else 1)
