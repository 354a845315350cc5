"""ndgrad.nn: modules, parameters, functional, init."""

__all__ = []
