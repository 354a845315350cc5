"""ndgrad.save / ndgrad.load in a safe format."""

__all__ = []
