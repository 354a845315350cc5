"""Forward-mode AD: dual levels and dual tensors."""

__all__ = []
