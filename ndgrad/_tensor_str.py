"""Tensor printing: ``repr(tensor)`` / ``str(tensor)`` text and the print options.

This module turns a NumPy array (the values of a tensor) plus a few autograd facts
(``grad_fn`` name, ``requires_grad``) into exactly the text PyTorch prints, e.g.::

    tensor([[1.0000, 2.5000],
            [3.0000, 4.0000]], dtype=torch.float64, grad_fn=<MulBackward0>)

It also holds the global print options (``set_printoptions``, ``get_printoptions``,
``printoptions``) with torch's defaults: precision 4, threshold 1000, edgeitems 3,
linewidth 80, automatic scientific notation.

It depends on NumPy only and knows nothing about the Tensor class: the caller passes the
array and the flags. Not here: the ``Parameter containing:`` header of ``nn.Parameter``
(the caller prepends it), sparse/quantized/nested layouts, devices and forward-mode
tangents.
"""

import contextlib
import math

import numpy as np

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "tensor_repr"]


class _PrintOptions:
    """The global print options, with torch's defaults."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


_OPTS = _PrintOptions()

# Values each profile sets: (precision, threshold, edgeitems, linewidth).
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    r"""Set options for printing tensors (same arguments and behaviour as torch).

    Args:
        precision: digits after the decimal point for floating point values (default 4).
        threshold: number of elements above which the output is summarized with
            ``...`` (default 1000).
        edgeitems: number of items shown at the start and end of each summarized
            dimension (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; the other arguments, when
            given, override the profile's values.
        sci_mode: ``True``/``False`` forces scientific notation on/off; ``None`` lets
            the formatter decide. Like torch, this argument is always applied, so a
            call without it resets it to ``None``.

    Example::

        >>> import numpy as np
        >>> set_printoptions(precision=2)
        >>> tensor_repr(np.array([1.12345], dtype=np.float32))
        'tensor([1.12])'
        >>> set_printoptions(profile="default")
    """
    if profile is not None:
        # Unknown profile names are ignored, as torch does.
        values = _PROFILES.get(profile)
        if values is not None:
            _OPTS.precision, _OPTS.threshold, _OPTS.edgeitems, _OPTS.linewidth = values
    if precision is not None:
        _OPTS.precision = precision
    if threshold is not None:
        _OPTS.threshold = threshold
    if edgeitems is not None:
        _OPTS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTS.linewidth = linewidth
    _OPTS.sci_mode = sci_mode


def get_printoptions():
    r"""Return the current print options as a dict that ``set_printoptions(**d)`` accepts.

    Example::

        >>> get_printoptions()["precision"]
        4
    """
    return {name: getattr(_OPTS, name) for name in _PrintOptions.__slots__}


@contextlib.contextmanager
def printoptions(**kwargs):
    r"""Context manager that sets print options and restores the previous ones on exit.

    Accepts the same keyword arguments as :func:`set_printoptions`.

    Example::

        >>> import numpy as np
        >>> with printoptions(precision=1):
        ...     tensor_repr(np.array([0.25, 3.0]))
        'tensor([0.2, 3.0], dtype=torch.float64)'
    """
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ---------------------------------------------------------------------------------------
# Formatting of single values
# ---------------------------------------------------------------------------------------


class _Formatter:
    """Formats the elements of one real (or integer/bool) array to a common width.

    The choices are made once from the values that will be shown (the summarized data
    when the tensor is summarized):

    * integers and bools print as Python's ``str``;
    * floats whose nonzero finite values are all integers print in "int mode": ``1.``,
      ``-3.``, with ``nan``/``inf`` left without the dot;
    * otherwise fixed point with ``precision`` digits, or scientific notation when the
      nonzero finite magnitudes span more than 1000x, exceed 1e8 or go below 1e-4
      (unless ``sci_mode`` is forced by the print options).

    Every formatted value is right-aligned to ``width``, the widest nonzero finite value.
    """

    __slots__ = ("floating", "int_mode", "sci_mode", "width")

    def __init__(self, values):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        flat = values.reshape(-1)
        if flat.size == 0:
            return
        if not self.floating:
            # str() length of an integer grows with its magnitude, so the extremes decide.
            if flat.dtype.kind == "b":
                candidates = np.unique(flat).tolist()
            else:
                candidates = [flat.min().item(), flat.max().item()]
            self.width = max(1, *(len(str(v)) for v in candidates))
            return

        shown = flat[np.isfinite(flat) & (flat != 0)]
        if shown.size == 0:
            # Only zeros and non-finite values: torch keeps int mode, no sci mode (even
            # when sci_mode is forced by the options) and width 1.
            return
        magnitudes = np.abs(shown).astype(np.float64)
        smallest, largest = magnitudes.min(), magnitudes.max()
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        if _OPTS.sci_mode is None:
            # The ratio may overflow to inf (e.g. 1e300 / 1e-300), which correctly
            # means "spans more than 1000x".
            with np.errstate(over="ignore"):
                ratio = largest / smallest
            self.sci_mode = bool(ratio > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4)
        else:
            self.sci_mode = bool(_OPTS.sci_mode)

        # The text length of "{:.Nf}" / "{:.0f}" grows with |v| on each side of zero, and
        # the exponent of "{:.Ne}" is longest at the largest or smallest magnitude, so the
        # widest text is always found among the extremes of the positive and negative
        # values.
        candidates = []
        for part in (shown[shown > 0], shown[shown < 0]):
            if part.size:
                candidates += [part.min().item(), part.max().item()]
        precision = _OPTS.precision
        if self.sci_mode:
            texts = [f"{v:.{precision}e}" for v in candidates]
        elif self.int_mode:
            # int mode appends "." to every value, hence the extra character.
            texts = [f"{v:.0f}." for v in candidates]
        else:
            texts = [f"{v:.{precision}f}" for v in candidates]
        self.width = max(1, *(len(t) for t in texts))

    def format(self, value):
        """Format one Python scalar, right-aligned to ``self.width``."""
        if self.floating:
            precision = _OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.width}.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if math.isfinite(value):
                    text += "."
            else:
                text = f"{value:.{precision}f}"
        else:
            text = str(value)
        return text.rjust(self.width)


def _format_value(value, real_fmt, imag_fmt):
    """Format one element; complex values get ``real+imagj`` with both parts aligned."""
    if imag_fmt is None:
        return real_fmt.format(value)
    real_text = real_fmt.format(value.real)
    # The imaginary part is padded by its formatter; strip that padding so the sign sits
    # right after the real part ("1.0000-2.0000j", "1.0000+nanj").
    imag_text = (imag_fmt.format(value.imag) + "j").lstrip()
    if imag_text[0] in "+-":
        return real_text + imag_text
    return real_text + "+" + imag_text


# ---------------------------------------------------------------------------------------
# Layout of whole arrays
# ---------------------------------------------------------------------------------------


def _summarized(values):
    """The elements a summarized print shows: ``edgeitems`` from each end of each dim.

    The formatter is built from this so that hidden elements do not affect widths.
    """
    edge = _OPTS.edgeitems
    if values.ndim == 0:
        return values
    if values.ndim == 1:
        if values.shape[0] > 2 * edge:
            # With edge == 0, values[-0:] is the whole array; torch does the same.
            return np.concatenate((values[:edge], values[-edge:]))
        return values
    if not edge:
        return np.empty((0,) * values.ndim, dtype=values.dtype)
    if values.shape[0] > 2 * edge:
        rows = list(range(edge)) + list(range(values.shape[0] - edge, values.shape[0]))
    else:
        rows = range(values.shape[0])
    return np.stack([_summarized(values[i]) for i in rows])


def _vector_str(values, indent, summarize, real_fmt, imag_fmt):
    """Format a 1-d array, wrapping lines at ``linewidth``."""
    # Each element takes its width plus ", "; complex adds the imaginary width and "j".
    element_length = real_fmt.width + 2
    if imag_fmt is not None:
        element_length += imag_fmt.width + 1
    per_line = max(1, (_OPTS.linewidth - indent) // element_length)

    edge = _OPTS.edgeitems
    if summarize and not edge:
        items = ["..."]
    elif summarize and values.shape[0] > 2 * edge:
        # The ellipsis item carries a leading space, so it reads ", ..., " in the output.
        items = (
            [_format_value(v, real_fmt, imag_fmt) for v in values[:edge].tolist()]
            + [" ..."]
            + [_format_value(v, real_fmt, imag_fmt) for v in values[-edge:].tolist()]
        )
    else:
        items = [_format_value(v, real_fmt, imag_fmt) for v in values.tolist()]

    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(values, indent, summarize, real_fmt, imag_fmt):
    """Format an array of any rank; ``indent`` is the column of its opening bracket."""
    if values.ndim == 0:
        return _format_value(values.item(), real_fmt, imag_fmt)
    if values.ndim == 1:
        return _vector_str(values, indent, summarize, real_fmt, imag_fmt)

    edge = _OPTS.edgeitems
    n = values.shape[0]
    if summarize and n > 2 * edge:
        head = [_array_str(values[i], indent + 1, summarize, real_fmt, imag_fmt)
                for i in range(edge)]
        tail = [_array_str(values[i], indent + 1, summarize, real_fmt, imag_fmt)
                for i in range(n - edge, n)]
        slices = head + ["..."] + tail
    else:
        slices = [_array_str(values[i], indent + 1, summarize, real_fmt, imag_fmt)
                  for i in range(n)]
    # Sub-arrays are separated by ndim - 1 newlines: one between the rows of a matrix,
    # two (a blank line) between the matrices of a 3-d array, and so on.
    separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(slices) + "]"


def _contents_str(values, indent):
    """The bracketed contents of a non-empty array."""
    summarize = values.size > _OPTS.threshold
    if values.dtype.kind == "c":
        real, imag = values.real, values.imag
        if summarize:
            real, imag = _summarized(real), _summarized(imag)
        # Real and imaginary parts are formatted independently (own mode and width).
        return _array_str(values, indent, summarize, _Formatter(real), _Formatter(imag))
    shown = _summarized(values) if summarize else values
    return _array_str(values, indent, summarize, _Formatter(shown), None)


def _dtype_name(dtype):
    """torch's spelling of a dtype: NumPy's names match torch's for all shared dtypes."""
    return "torch." + np.dtype(dtype).name


def _add_suffixes(text, suffixes, indent):
    """Append ``, suffix`` items and the closing parenthesis, wrapping at ``linewidth``."""
    parts = [text]
    # torch's bookkeeping of the current line length, including its off-by-two when the
    # text has no newline (rfind gives -1): kept so wrapping decisions match exactly.
    line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line_length + len(suffix) + 2 > _OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            line_length = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line_length += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(
    data,
    *,
    grad_fn_name=None,
    requires_grad=False,
    default_float=np.float32,
    prefix="tensor(",
    extra_suffixes=(),
):
    r"""Return the text torch prints for a tensor holding ``data``.

    Args:
        data: the tensor's values, a NumPy array of any shape (0-d and empty included)
            and of a bool, integer, floating or complex dtype.
        grad_fn_name: name of the tensor's ``grad_fn`` class, shown as
            ``grad_fn=<Name>``; when ``None``, ``requires_grad=True`` is shown instead
            if ``requires_grad``.
        requires_grad: whether the tensor requires grad.
        default_float: the current default floating dtype; it decides which dtypes are
            "default" and therefore printed without ``dtype=``.
        prefix: text before the contents; continuation lines are indented by its length.
        extra_suffixes: more ``name=value`` items appended after the standard ones.

    Example::

        >>> import numpy as np
        >>> tensor_repr(np.array([1.0, 2.5], dtype=np.float32), requires_grad=True)
        'tensor([1.0000, 2.5000], requires_grad=True)'
        >>> tensor_repr(np.zeros((0, 3), dtype=np.int32))
        'tensor([], size=(0, 3), dtype=torch.int32)'
    """
    values = np.asarray(data)
    dtype = values.dtype
    default_float = np.dtype(default_float)
    indent = len(prefix)
    suffixes = []

    if values.size == 0:
        # Shape (0,) is implied by "[]"; any other empty shape is spelled out.
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        # With no elements the dtype cannot be guessed from the text, so every dtype
        # but the default float one is shown (int64 and bool included).
        if dtype != default_float:
            suffixes.append(f"dtype={_dtype_name(dtype)}")
        contents = "[]"
    else:
        if not _OPTS.edgeitems:
            # With edgeitems=0 the contents show nothing, so the shape is printed.
            suffixes.append(f"size={tuple(values.shape)}")
        default_complex = np.complex128 if default_float == np.float64 else np.complex64
        default_dtypes = (default_float, np.dtype(default_complex), np.dtype(np.int64),
                          np.dtype(np.bool_))
        if dtype not in default_dtypes:
            suffixes.append(f"dtype={_dtype_name(dtype)}")
        contents = _contents_str(values, indent)

    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    suffixes.extend(extra_suffixes)
    return _add_suffixes(prefix + contents, suffixes, indent)
