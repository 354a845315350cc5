"""torch._dynamo's exception classes, as ndgrad.compile raises them."""

__all__ = ["TorchDynamoException", "Unsupported"]


class TorchDynamoException(RuntimeError):
    """Base of the compiler's errors (a RuntimeError, as in torch)."""


class Unsupported(TorchDynamoException):
    """Something the tracer cannot capture (raised under ``fullgraph=True``; otherwise the
    call falls back to eager and ``explain`` reports the reason)."""
