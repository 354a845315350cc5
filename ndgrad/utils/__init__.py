"""ndgrad.utils."""

__all__ = []
