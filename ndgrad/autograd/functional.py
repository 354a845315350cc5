"""The functional API: jacobian, hessian, vjp, jvp, vhp, hvp."""

__all__ = []
