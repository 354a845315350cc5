"""Saved-tensor hooks: packing and unpacking saved values."""

__all__ = []
