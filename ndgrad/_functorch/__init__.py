"""Internals of ``ndgrad.func`` (torch's functorch): the batching machinery of vmap
(``batching``), the transforms (``transforms``), pytrees (``pytree``) and the functional use
of modules (``module_state``). The public names live in ``ndgrad.func``."""
