"""Custom autograd Functions: Function, ctx, once_differentiable."""

__all__ = []
