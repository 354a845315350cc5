"""Pointwise catalogue beyond the foundation (op-catalogue issue)."""

__all__ = []
