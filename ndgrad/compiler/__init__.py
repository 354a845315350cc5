"""torch.compiler's functions for ndgrad.compile: ``reset`` and ``is_compiling``."""

from .._compile.tracer import active_tracer
from .._dynamo import reset as _reset

__all__ = ["reset", "is_compiling"]


def reset():
    """Clear every compiled function's cache (``torch.compiler.reset``)."""
    _reset()


def is_compiling():
    """True while ndgrad.compile traces a region on this thread."""
    return active_tracer() is not None
