"""The autograd profiler."""

__all__ = []
