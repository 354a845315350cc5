"""torch.compiler's functions for ndgrad.compile: ``reset`` and ``is_compiling``."""

__all__ = ["reset", "is_compiling"]


def reset():
    """Clear every compiled function's cache (``torch.compiler.reset``)."""
    from .._dynamo import reset as _reset
    _reset()


def is_compiling():
    """True while ndgrad.compile traces a region on this thread."""
    from .._compile.tracer import active_tracer
    return active_tracer() is not None
