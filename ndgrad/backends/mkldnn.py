"""torch.backends.mkldnn: the flags of torch's CPU build (oneDNN is reported available there;
ndgrad's kernels are NumPy's and read no flag)."""

enabled = True
deterministic = False


def is_available():
    return True
