"""ndgrad.linalg: torch.linalg's functions."""

__all__ = []
