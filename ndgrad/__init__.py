"""ndgrad: PyTorch's autograd rebuilt in pure Python on NumPy, with torch's API."""
