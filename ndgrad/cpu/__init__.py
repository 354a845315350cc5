"""ndgrad.cpu: torch.cpu's device-module API for the only device ndgrad has."""

from . import amp  # noqa: F401

__all__ = ["is_available", "device_count", "synchronize", "current_device", "amp"]


def is_available():
    return True


def device_count():
    return 1


def synchronize(device=None):
    """CPU work is synchronous."""


def current_device():
    return "cpu"
