"""Known gaps of ndgrad against torch's op_db: (mode, op, dtype or "*") -> reason.

Reviewed list; each entry is an (op, dtype, mode) whose samples ndgrad does not all pass yet,
with the cause. The test of such a param is a strict expected failure: the day it passes, the
entry must leave this list. docs/ops.md lists these (tools/torch_opdb_report.py).
"""

KNOWN_GAPS = {
    ('errors', '__radd__', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', '__rand__', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', '__rdiv__', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', '__rmul__', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', '__ror__', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', '__rxor__', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'arange', 'any'):
        'raises another exception class (3/7): AssertionError: ndgrad raises OverflowError(cannot convert float infinity to integer) where torch raises Runti',
    ('errors', 'atan2', 'any'):
        "accepts an error input torch refuses (1/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'bitwise_and', 'any'):
        "accepts an error input torch refuses (1/1): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'bitwise_left_shift', 'any'):
        "accepts an error input torch refuses (1/1): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'bitwise_or', 'any'):
        "accepts an error input torch refuses (1/1): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'bitwise_right_shift', 'any'):
        "accepts an error input torch refuses (1/1): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'bitwise_xor', 'any'):
        "accepts an error input torch refuses (1/1): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'cat', 'any'):
        "accepts an error input torch refuses (1/14): AssertionError: ndgrad accepts an input torch refuses with TypeError matching 'must be tuple of Tensors'",
    ('errors', 'clamp_max', 'any'):
        "accepts an error input torch refuses (2/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'clamp_min', 'any'):
        "accepts an error input torch refuses (2/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'complex', 'any'):
        'accepts an error input torch refuses (1/6): AssertionError: ndgrad accepts an input torch refuses with RuntimeError matching "Expected object of scalar ty',
    ('errors', 'copysign', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'eq', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'fmod', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'gcd', 'any'):
        "accepts an error input torch refuses (3/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'ge', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'gt', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'lcm', 'any'):
        "accepts an error input torch refuses (3/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'le', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'linspace', 'any'):
        "accepts an error input torch refuses (1/3): AssertionError: ndgrad accepts an input torch refuses with TypeError matching 'received an invalid combination",
    ('errors', 'linspace.tensor_overload', 'any'):
        "accepts an error input torch refuses (1/3): AssertionError: ndgrad accepts an input torch refuses with TypeError matching 'received an invalid combination",
    ('errors', 'logical_and', 'any'):
        "accepts an error input torch refuses (3/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'logical_or', 'any'):
        "accepts an error input torch refuses (3/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'logical_xor', 'any'):
        "accepts an error input torch refuses (3/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'logspace', 'any'):
        "accepts an error input torch refuses (1/3): AssertionError: ndgrad accepts an input torch refuses with TypeError matching 'received an invalid combination",
    ('errors', 'logspace.tensor_overload', 'any'):
        "accepts an error input torch refuses (1/3): AssertionError: ndgrad accepts an input torch refuses with TypeError matching 'received an invalid combination",
    ('errors', 'lt', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'max.binary', 'any'):
        "accepts an error input torch refuses (1/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'maximum', 'any'):
        "accepts an error input torch refuses (3/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'min.binary', 'any'):
        "accepts an error input torch refuses (1/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'minimum', 'any'):
        "accepts an error input torch refuses (3/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'narrow_copy', 'any'):
        'raises another exception class (1/7): AssertionError: ndgrad raises IndexError(Dimension out of range (expected to be in range of [-3, 2], but got 3',
    ('errors', 'native_layer_norm', 'any'):
        "accepts an error input torch refuses (1/4): AssertionError: ndgrad accepts an input torch refuses with RuntimeError matching 'Expected normalized_shape to",
    ('errors', 'ne', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'nn.functional.adaptive_avg_pool2d', 'any'):
        'raises another exception class (1/3): AssertionError: ndgrad raises RuntimeError(adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [2, 2]) wh',
    ('errors', 'nn.functional.adaptive_avg_pool3d', 'any'):
        'raises another exception class (1/3): AssertionError: ndgrad raises RuntimeError(adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got [2, 2, 2])',
    ('errors', 'nn.functional.adaptive_max_pool2d', 'any'):
        'raises another exception class (1/3): AssertionError: ndgrad raises RuntimeError(adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: [2, 2]) w',
    ('errors', 'nn.functional.adaptive_max_pool3d', 'any'):
        'raises another exception class (1/3): AssertionError: ndgrad raises RuntimeError(adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: [2, 2, 2]',
    ('errors', 'nn.functional.gaussian_nll_loss', 'any'):
        'raises another exception class (1/3): AssertionError: ndgrad raises RuntimeError(The size of tensor a (3) must match the size of tensor b (2) at non',
    ('errors', 'nn.functional.hardtanh', 'any'):
        "accepts an error input torch refuses (1/1): AssertionError: ndgrad accepts an input torch refuses with ValueError matching 'min_val cannot be greater than",
    ('errors', 'nn.functional.huber_loss', 'any'):
        "accepts an error input torch refuses (2/3): AssertionError: ndgrad accepts an input torch refuses with RuntimeError matching 'huber_loss does not support ",
    ('errors', 'nn.functional.rms_norm', 'any'):
        "accepts an error input torch refuses (1/3): AssertionError: ndgrad accepts an input torch refuses with RuntimeError matching 'Expected normalized_shape to",
    ('errors', 'nn.functional.softshrink', 'any'):
        "zero-size tensors (1/1): AssertionError: ndgrad accepts an input torch refuses with RuntimeError matching 'lambda must be in range \\\\[0",
    ('errors', 'nn.functional.triplet_margin_loss', 'any'):
        "accepts an error input torch refuses (1/8): AssertionError: ndgrad accepts an input torch refuses with ValueError matching 'margin must be greater than 0,",
    ('errors', 'pow', 'any'):
        "accepts an error input torch refuses (1/1): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'remainder', 'any'):
        "accepts an error input torch refuses (1/1): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'rsub', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'scatter_add', 'any'):
        "accepts an error input torch refuses (1/4): AssertionError: ndgrad accepts an input torch refuses with RuntimeError matching 'Expected self.dtype to be eq",
    ('errors', 'signal.windows.bartlett', 'any'):
        "an absent name (2/5): AttributeError: module 'ndgrad' has no attribute 'sparse_coo'",
    ('errors', 'signal.windows.blackman', 'any'):
        "an absent name (2/5): AttributeError: module 'ndgrad' has no attribute 'sparse_coo'",
    ('errors', 'signal.windows.cosine', 'any'):
        "an absent name (2/5): AttributeError: module 'ndgrad' has no attribute 'sparse_coo'",
    ('errors', 'signal.windows.exponential', 'any'):
        "an absent name (2/7): AttributeError: module 'ndgrad' has no attribute 'sparse_coo'",
    ('errors', 'signal.windows.gaussian', 'any'):
        "an absent name (2/6): AttributeError: module 'ndgrad' has no attribute 'sparse_coo'",
    ('errors', 'signal.windows.general_cosine', 'any'):
        "an absent name (2/7): AttributeError: module 'ndgrad' has no attribute 'sparse_coo'",
    ('errors', 'signal.windows.general_hamming', 'any'):
        "an absent name (2/5): AttributeError: module 'ndgrad' has no attribute 'sparse_coo'",
    ('errors', 'signal.windows.hamming', 'any'):
        "an absent name (2/5): AttributeError: module 'ndgrad' has no attribute 'sparse_coo'",
    ('errors', 'signal.windows.hann', 'any'):
        "an absent name (2/5): AttributeError: module 'ndgrad' has no attribute 'sparse_coo'",
    ('errors', 'signal.windows.kaiser', 'any'):
        "an absent name (2/6): AttributeError: module 'ndgrad' has no attribute 'sparse_coo'",
    ('errors', 'signal.windows.nuttall', 'any'):
        "an absent name (2/5): AttributeError: module 'ndgrad' has no attribute 'sparse_coo'",
    ('errors', 'special.xlog1py', 'any'):
        "accepts an error input torch refuses (1/1): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'xlogy', 'any'):
        "accepts an error input torch refuses (1/1): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('forward', 'bfloat16', 'complex128'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): AssertionError: ndgrad raises TypeError: ndgrad has no bfloat16 dtype: NumPy cannot hold it; convert to float3',
    ('forward', 'bfloat16', 'float32'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): AssertionError: ndgrad raises TypeError: ndgrad has no bfloat16 dtype: NumPy cannot hold it; convert to float3',
    ('forward', 'bfloat16', 'float64'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): AssertionError: ndgrad raises TypeError: ndgrad has no bfloat16 dtype: NumPy cannot hold it; convert to float3',
    ('forward', 'chalf', 'complex128'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): AssertionError: ndgrad raises TypeError: ndgrad has no complex32 (chalf) dtype: NumPy cannot hold it; convert ',
    ('forward', 'chalf', 'float32'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): AssertionError: ndgrad raises TypeError: ndgrad has no complex32 (chalf) dtype: NumPy cannot hold it; convert ',
    ('forward', 'chalf', 'float64'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): AssertionError: ndgrad raises TypeError: ndgrad has no complex32 (chalf) dtype: NumPy cannot hold it; convert ',
    ('forward', 'hash_tensor', 'float32'):
        'an absent name (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.hash_tensor',
    ('forward', 'hash_tensor', 'float64'):
        'an absent name (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.hash_tensor',
    ('forward', 'histogramdd', 'float32'):
        'other (8/16): AssertionError: ndgrad raises ValueError: `bins[4]` must be monotonically increasing, when an array',
    ('forward', 'histogramdd', 'float64'):
        'zero-size tensors (8/16): AssertionError: ndgrad raises ValueError: `bins[0]` must be monotonically increasing, when an array',
    ('forward', 'linalg.eig', 'float32'):
        'zero-size tensors (3/8): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result[1] Mismatched elements: 15 / 25 (60%) F',
    ('forward', 'linalg.eig', 'float64'):
        'zero-size tensors (3/8): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result[1] Mismatched elements: 10 / 25 (40%) Fir',
    ('forward', 'linalg.eigh', 'complex128'):
        'zero-size tensors (3/8): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result[1] Mismatched elements: 10 / 25 (40%) Fir',
    ('forward', 'linalg.eigh', 'float32'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result[1] Mismatched elements: 10 / 50 (20%) F',
    ('forward', 'linalg.eigh', 'float64'):
        'zero-size tensors (3/8): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result[1] Mismatched elements: 10 / 25 (40%) Fir',
    ('forward', 'matrix_exp', 'float32'):
        "values differ from torch's (1/2): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 125 (0.8%) Mis",
    ('forward', 'polygamma.polygamma_n_0', 'float32'):
        'zero-size tensors (1/10): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('forward', 'polygamma.polygamma_n_1', 'float32'):
        'zero-size tensors (1/10): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('forward', 'polygamma.polygamma_n_2', 'float32'):
        'zero-size tensors (1/10): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('forward', 'polygamma.polygamma_n_3', 'float32'):
        'zero-size tensors (1/10): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('forward', 'polygamma.polygamma_n_4', 'float32'):
        'zero-size tensors (1/10): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('forward', 'resize_as_', 'complex128'):
        "an absent name (3/3): AssertionError: ndgrad raises AttributeError: module 'ndgrad' has no attribute 'resize_as_'",
    ('forward', 'resize_as_', 'float32'):
        "an absent name (3/3): AssertionError: ndgrad raises AttributeError: module 'ndgrad' has no attribute 'resize_as_'",
    ('forward', 'resize_as_', 'float64'):
        "an absent name (3/3): AssertionError: ndgrad raises AttributeError: module 'ndgrad' has no attribute 'resize_as_'",
    ('forward', 'special.bessel_j0', 'float64'):
        "values differ from torch's (1/3): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result Mismatched elements: 3 / 20 (15%) Mismatc",
    ('forward', 'special.bessel_y1', 'float64'):
        "values differ from torch's (1/3): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result Mismatched elements: 1 / 20 (5%) Mismatch",
    ('forward', 'special.hermite_polynomial_he', 'float32'):
        "values differ from torch's (1/9): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 250 (0.4%) Mis",
    ('forward', 'special.polygamma.special_polygamma_n_0', 'float32'):
        'zero-size tensors (1/10): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('fwad', 'cholesky_inverse', 'complex128'):
        'zero-size tensors (2/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[1] Mismatched elements: 5 / 25 (2',
    ('fwad', 'cholesky_inverse', 'float64'):
        'zero-size tensors (2/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[1] Mismatched elements: 21 / 25 (',
    ('fwad', 'linalg.eig', 'complex128'):
        'complex support (3/8): RuntimeError: linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by ',
    ('fwad', 'linalg.eig', 'float64'):
        'complex support (3/8): RuntimeError: linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by ',
    ('fwad', 'linalg.eigvals', 'complex128'):
        'complex support (3/8): RuntimeError: linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by ',
    ('fwad', 'linalg.eigvals', 'float64'):
        'complex support (3/8): RuntimeError: linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by ',
    ('fwad', 'nn.functional.dropout2d', 'float64'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[0] Mismatched elements: 60 / 125 ',
    ('fwad', 'nn.functional.poisson_nll_loss', 'float64'):
        'zero-size tensors (4/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[1] Mismatched elements: 4 / 5 (80',
    ('grad', 'addr', 'complex128'):
        'zero-size tensors (2/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 50 / 50',
    ('grad', 'as_strided_scatter', 'complex128'):
        'zero-size tensors (7/7): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 1 / 1 (',
    ('grad', 'as_strided_scatter', 'float64'):
        'zero-size tensors (7/7): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 1 / 1 (',
    ('grad', 'bfloat16', 'complex128'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): TypeError: ndgrad has no bfloat16 dtype: NumPy cannot hold it; convert to float32 or complex64 instead',
    ('grad', 'bfloat16', 'float64'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): TypeError: ndgrad has no bfloat16 dtype: NumPy cannot hold it; convert to float32 or complex64 instead',
    ('grad', 'chalf', 'complex128'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): TypeError: ndgrad has no complex32 (chalf) dtype: NumPy cannot hold it; convert to float32 or complex64 instea',
    ('grad', 'chalf', 'float64'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): TypeError: ndgrad has no complex32 (chalf) dtype: NumPy cannot hold it; convert to float32 or complex64 instea',
    ('grad', 'lerp', 'complex128'):
        'zero-size tensors (2/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 25 / 25',
    ('grad', 'linalg.householder_product', 'complex128'):
        "other (2/8): AssertionError: 0 differentiable outputs (requires_grad) != torch's 1",
    ('grad', 'linalg.householder_product', 'float64'):
        "other (2/8): AssertionError: 0 differentiable outputs (requires_grad) != torch's 1",
    ('grad', 'nn.functional.dropout2d', 'float64'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 60 / 12',
    ('grad', 'nn.functional.poisson_nll_loss', 'float64'):
        'zero-size tensors (4/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 1 Mismatched elements: 4 / 5 (',
    ('gradgrad', 'addr', 'complex128'):
        'zero-size tensors (2/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 50 / 50',
    ('gradgrad', 'as_strided_scatter', 'complex128'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 1 / 1 (',
    ('gradgrad', 'as_strided_scatter', 'float64'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 1 / 1 (',
    ('gradgrad', 'bfloat16', 'complex128'):
        'Tensor.bfloat16 / Tensor.chalf are absent (4/4): TypeError: ndgrad has no bfloat16 dtype: NumPy cannot hold it; convert to float32 or complex64 instead',
    ('gradgrad', 'bfloat16', 'float64'):
        'Tensor.bfloat16 / Tensor.chalf are absent (4/4): TypeError: ndgrad has no bfloat16 dtype: NumPy cannot hold it; convert to float32 or complex64 instead',
    ('gradgrad', 'chalf', 'complex128'):
        'Tensor.bfloat16 / Tensor.chalf are absent (4/4): TypeError: ndgrad has no complex32 (chalf) dtype: NumPy cannot hold it; convert to float32 or complex64 instea',
    ('gradgrad', 'chalf', 'float64'):
        'Tensor.bfloat16 / Tensor.chalf are absent (4/4): TypeError: ndgrad has no complex32 (chalf) dtype: NumPy cannot hold it; convert to float32 or complex64 instea',
    ('gradgrad', 'nn.functional.dropout2d', 'float64'):
        'zero-size tensors (1/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 60 / 12',
    ('gradgrad', 'nn.functional.linear_cross_entropy.chunked', 'float64'):
        'zero-size tensors (3/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 second gradient of input 0 Mismatched elements: ',
    ('gradgrad', 'nn.functional.poisson_nll_loss', 'float64'):
        'zero-size tensors (2/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 1 Mismatched elements: 4 / 5 (',
    ('inplace', 'polygamma.polygamma_n_0', 'float32'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('inplace', 'polygamma.polygamma_n_1', 'float32'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('inplace', 'polygamma.polygamma_n_2', 'float32'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('inplace', 'polygamma.polygamma_n_3', 'float32'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('inplace', 'polygamma.polygamma_n_4', 'float32'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('method', 'bfloat16', 'complex128'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): AssertionError: ndgrad raises TypeError: ndgrad has no bfloat16 dtype: NumPy cannot hold it; convert to float3',
    ('method', 'bfloat16', 'float32'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): AssertionError: ndgrad raises TypeError: ndgrad has no bfloat16 dtype: NumPy cannot hold it; convert to float3',
    ('method', 'bfloat16', 'float64'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): AssertionError: ndgrad raises TypeError: ndgrad has no bfloat16 dtype: NumPy cannot hold it; convert to float3',
    ('method', 'chalf', 'complex128'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): AssertionError: ndgrad raises TypeError: ndgrad has no complex32 (chalf) dtype: NumPy cannot hold it; convert ',
    ('method', 'chalf', 'float32'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): AssertionError: ndgrad raises TypeError: ndgrad has no complex32 (chalf) dtype: NumPy cannot hold it; convert ',
    ('method', 'chalf', 'float64'):
        'Tensor.bfloat16 / Tensor.chalf are absent (5/5): AssertionError: ndgrad raises TypeError: ndgrad has no complex32 (chalf) dtype: NumPy cannot hold it; convert ',
    ('method', 'hash_tensor', 'float32'):
        'an absent name (8/8): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.Tensor.hash_tensor',
    ('method', 'hash_tensor', 'float64'):
        'an absent name (8/8): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.Tensor.hash_tensor',
    ('method', 'matrix_exp', 'float32'):
        "values differ from torch's (1/2): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 125 (0.8%) Mis",
    ('method', 'polygamma.polygamma_n_0', 'float32'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('method', 'polygamma.polygamma_n_1', 'float32'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('method', 'polygamma.polygamma_n_2', 'float32'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('method', 'polygamma.polygamma_n_3', 'float32'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('method', 'polygamma.polygamma_n_4', 'float32'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 25 (4%) Mismat',
    ('vmap', 'as_strided', 'complex128'):
        "zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 vmap vs torch's vmap[0] Mismatched elements: 2 /",
    ('vmap', 'as_strided', 'float64'):
        "zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 vmap vs torch's vmap[0] Mismatched elements: 2 /",
    ('vmap', 'as_strided.partial_views', 'complex128'):
        'zero-size tensors (2/3): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 8 / 12 (66.',
    ('vmap', 'as_strided.partial_views', 'float64'):
        'zero-size tensors (2/3): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 8 / 12 (66.',
    ('vmap', 'as_strided_copy', 'complex128'):
        "zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 vmap vs torch's vmap[0] Mismatched elements: 2 /",
    ('vmap', 'as_strided_copy', 'float64'):
        "zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 vmap vs torch's vmap[0] Mismatched elements: 2 /",
    ('vmap', 'bfloat16', 'complex128'):
        'Tensor.bfloat16 / Tensor.chalf are absent (4/4): TypeError: ndgrad has no bfloat16 dtype: NumPy cannot hold it; convert to float32 or complex64 instead',
    ('vmap', 'bfloat16', 'float64'):
        'Tensor.bfloat16 / Tensor.chalf are absent (4/4): TypeError: ndgrad has no bfloat16 dtype: NumPy cannot hold it; convert to float32 or complex64 instead',
    ('vmap', 'chalf', 'complex128'):
        'Tensor.bfloat16 / Tensor.chalf are absent (4/4): TypeError: ndgrad has no complex32 (chalf) dtype: NumPy cannot hold it; convert to float32 or complex64 instea',
    ('vmap', 'chalf', 'float64'):
        'Tensor.bfloat16 / Tensor.chalf are absent (4/4): TypeError: ndgrad has no complex32 (chalf) dtype: NumPy cannot hold it; convert to float32 or complex64 instea',
    ('vmap', 'index_put', 'complex128'):
        'zero-size tensors (2/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 30 / 75 (40',
    ('vmap', 'index_put', 'float64'):
        'zero-size tensors (2/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 30 / 75 (40',
    ('vmap', 'linalg.eig', 'float64'):
        "zero-size tensors (1/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 vmap vs torch's vmap[1] Mismatched elements: 30 ",
    ('vmap', 'linalg.eigh', 'complex128'):
        "zero-size tensors (1/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 vmap vs torch's vmap[1] Mismatched elements: 30 ",
    ('vmap', 'linalg.eigh', 'float64'):
        "zero-size tensors (1/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 vmap vs torch's vmap[1] Mismatched elements: 30 ",
    ('vmap', 'linalg.lstsq', 'complex128'):
        "other (2/4): AssertionError: vmap vs loop[1]: shape (3, 0) != torch's (3, 3)",
    ('vmap', 'linalg.lstsq', 'float64'):
        "other (2/4): AssertionError: vmap vs loop[1]: shape (3, 0) != torch's (3, 3)",
    ('vmap', 'linalg.lstsq.grad_oriented', 'complex128'):
        "other (1/4): AssertionError: vmap vs loop[1]: shape (3, 0) != torch's (3, 3)",
    ('vmap', 'linalg.lstsq.grad_oriented', 'float64'):
        "other (1/4): AssertionError: vmap vs loop[1]: shape (3, 0) != torch's (3, 3)",
    ('vmap', 'linalg.lu_solve', 'complex128'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 36 / 36 (10',
    ('vmap', 'lu_solve', 'complex128'):
        'zero-size tensors (2/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 36 / 36 (10',
    ('vmap', 'lu_unpack', 'complex128'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 12 / 27 (44',
    ('vmap', 'lu_unpack', 'float64'):
        'zero-size tensors (3/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 18 / 48 (37',
    ('vmap', 'nn.functional.ctc_loss', 'float64'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 48 / 48 (10',
    ('vmap', 'nn.functional.embedding_bag', 'float64'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 30 / 30 (10',
    ('vmap', 'nn.functional.poisson_nll_loss', 'float64'):
        'zero-size tensors (2/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 12 / 15 (80',
    ('vmap', 'view_as_complex', 'float64'):
        'other (1/1): RuntimeError: Tensor must have a last dimension with stride 1',
}
