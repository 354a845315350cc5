"""Learning-rate schedulers (filled in below)."""
