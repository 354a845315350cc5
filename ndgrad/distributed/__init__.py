"""torch.distributed on MPI: process groups, collectives, and the launcher
(``python -m ndgrad.distributed.run``).

The engine is MPI through mpi4py, imported only when a process group is created, so
``import ndgrad`` and ``import ndgrad.distributed`` work without it. See docs/distributed.md.
"""

from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import __all__  # noqa: F401
