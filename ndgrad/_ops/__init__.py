"""The op library: registry and dispatch, then one module per family of primitives."""
