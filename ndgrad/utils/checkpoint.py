"""Activation checkpointing."""

__all__ = []
