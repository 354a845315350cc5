"""ndgrad.testing: ``assert_close``, ``make_tensor``, the deprecated ``assert_allclose`` and
the op database.

The op database (``ndgrad.testing.opdb``) is imported on demand: importing ``ndgrad`` does not
load it.
"""

from ._comparison import assert_allclose, assert_close, make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
