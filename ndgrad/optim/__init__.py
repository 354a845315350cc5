"""ndgrad.optim: optimizers and learning-rate schedulers."""

__all__ = []
