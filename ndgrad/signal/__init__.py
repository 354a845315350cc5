"""torch.signal: signal-processing namespaces (``windows``)."""

from . import windows  # noqa: F401
