"""torch.backends.cuda without CUDA: not built; the matmul and SDP flags exist and are
assignable (``torch.backends.cuda.matmul.allow_tf32 = True``)."""


class _MatmulFlags:
    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()


def is_built():
    return False


def preferred_linalg_library(backend=None):
    return "default"


def flash_sdp_enabled():
    return True


def mem_efficient_sdp_enabled():
    return True


def math_sdp_enabled():
    return True


def enable_flash_sdp(enabled):
    """Accepted; ndgrad's attention is NumPy's."""


def enable_mem_efficient_sdp(enabled):
    """Accepted; ndgrad's attention is NumPy's."""


def enable_math_sdp(enabled):
    """Accepted; ndgrad's attention is NumPy's."""
