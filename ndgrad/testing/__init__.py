"""ndgrad.testing: assert_close, make_tensor and the op database."""

__all__ = []
