"""torch.backends.cpu: the CPU capability string (ndgrad's kernels are NumPy's)."""


def get_cpu_capability():
    return "DEFAULT"
