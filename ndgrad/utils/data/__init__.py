"""Datasets, samplers and DataLoader."""

__all__ = []
