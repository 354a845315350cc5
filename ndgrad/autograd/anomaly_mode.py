"""Anomaly detection."""

__all__ = []
