"""gradcheck and gradgradcheck."""

__all__ = []
