"""Temporary re-exports for ``linalg.py`` and ``nn_kernels.py``, which other branches edit this
session: at merge their imports move to ``pointwise``/``comparison`` and this file goes away.
Pointwise ops live in ``pointwise.py`` (functions of one tensor), ``arithmetic.py`` and
``comparison.py``.
"""

from .comparison import where  # noqa: F401
from .pointwise import _conj, _out, abs, log, sgn  # noqa: F401
