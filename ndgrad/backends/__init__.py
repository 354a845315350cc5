"""ndgrad.backends: torch.backends' flags and availability probes, answering as torch's CPU
build does. The flags are plain module attributes, assignable as in torch
(``torch.backends.cudnn.benchmark = True``); ndgrad's NumPy kernels read none of them."""

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
