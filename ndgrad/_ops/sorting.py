"""Sorting and selection ops: sort, argsort, topk, kthvalue, median, mode, unique (op-catalogue issue)."""

__all__ = []
