"""torch._dynamo's public corner for ndgrad.compile: ``config``, ``reset``, ``explain``,
``exc`` (``Unsupported``). The compiler itself lives in ``ndgrad._compile``."""

from . import config, exc  # noqa: F401
from .._compile.api import explain as _explain
from .._compile.api import reset as _reset


def reset():
    """Clear every compiled function's cache: the next call of each traces again."""
    _reset()


def explain(fn, *args, **kwargs):
    """``explain(fn)(*args)``: trace `fn` once and report captured ops and graph breaks."""
    return _explain(fn, *args, **kwargs)
