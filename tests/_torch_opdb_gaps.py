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
    ('errors', 'amax', 'any'):
        'zero-size tensors (3/7): AssertionError: ndgrad raises ValueError(number of dimensions must be within [0, 64]) where torch raises Runti',
    ('errors', 'amin', 'any'):
        'zero-size tensors (3/7): AssertionError: ndgrad raises ValueError(number of dimensions must be within [0, 64]) where torch raises Runti',
    ('errors', 'aminmax', 'any'):
        'zero-size tensors (3/5): AssertionError: ndgrad raises ValueError(number of dimensions must be within [0, 64]) where torch raises Runti',
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
    ('errors', 'eye', 'any'):
        'raises another exception class (3/3): AssertionError: ndgrad raises ValueError(negative dimensions are not allowed) where torch raises RuntimeError ',
    ('errors', 'fmod', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'gcd', 'any'):
        "accepts an error input torch refuses (3/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'ge', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'gradient', 'any'):
        "raises another exception class (3/21): AssertionError: ndgrad raises TypeError(can't convert meta device type tensor to numpy. Use Tensor.cpu() to co",
    ('errors', 'gt', 'any'):
        "accepts an error input torch refuses (2/2): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'hsplit', 'any'):
        "raises another exception class (1/3): AssertionError: ndgrad raises ValueError(invalid literal for int() with base 10: 'a') where torch raises TypeE",
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
    ('errors', 'masked_fill', 'any'):
        "raises another exception class (2/3): AssertionError: ndgrad raises TypeError(float() argument must be a string or a real number, not 'complex') whe",
    ('errors', 'max.binary', 'any'):
        "accepts an error input torch refuses (1/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'maximum', 'any'):
        "accepts an error input torch refuses (3/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'min.binary', 'any'):
        "accepts an error input torch refuses (1/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'minimum', 'any'):
        "accepts an error input torch refuses (3/3): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'narrow', 'any'):
        'raises another exception class (2/9): AssertionError: ndgrad raises ValueError(only one element tensors can be converted to Python scalars) where to',
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
    ('errors', 'nn.functional.avg_pool1d', 'any'):
        "raises another exception class (1/2): AssertionError: ndgrad raises ValueError(index can't contain negative values) where torch raises RuntimeError ",
    ('errors', 'nn.functional.conv1d', 'any'):
        "raises another exception class (3/10): AssertionError: ndgrad raises UFuncTypeError(Cannot cast ufunc 'add' output from dtype('float64') to dtype('in",
    ('errors', 'nn.functional.conv2d', 'any'):
        "raises another exception class (3/10): AssertionError: ndgrad raises UFuncTypeError(Cannot cast ufunc 'add' output from dtype('float64') to dtype('in",
    ('errors', 'nn.functional.conv3d', 'any'):
        "raises another exception class (3/10): AssertionError: ndgrad raises UFuncTypeError(Cannot cast ufunc 'add' output from dtype('float64') to dtype('in",
    ('errors', 'nn.functional.embedding', 'any'):
        'raises another exception class (2/2): AssertionError: ndgrad raises IndexError(tuple index out of range) where torch raises RuntimeError matching "\'',
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
        "raises another exception class (2/5): AssertionError: ndgrad raises AttributeError(module 'ndgrad' has no attribute 'sparse_coo') where torch raises",
    ('errors', 'signal.windows.blackman', 'any'):
        "raises another exception class (2/5): AssertionError: ndgrad raises AttributeError(module 'ndgrad' has no attribute 'sparse_coo') where torch raises",
    ('errors', 'signal.windows.cosine', 'any'):
        "raises another exception class (2/5): AssertionError: ndgrad raises AttributeError(module 'ndgrad' has no attribute 'sparse_coo') where torch raises",
    ('errors', 'signal.windows.exponential', 'any'):
        "raises another exception class (2/7): AssertionError: ndgrad raises AttributeError(module 'ndgrad' has no attribute 'sparse_coo') where torch raises",
    ('errors', 'signal.windows.gaussian', 'any'):
        "raises another exception class (2/6): AssertionError: ndgrad raises AttributeError(module 'ndgrad' has no attribute 'sparse_coo') where torch raises",
    ('errors', 'signal.windows.general_cosine', 'any'):
        "raises another exception class (2/7): AssertionError: ndgrad raises AttributeError(module 'ndgrad' has no attribute 'sparse_coo') where torch raises",
    ('errors', 'signal.windows.general_hamming', 'any'):
        "raises another exception class (2/5): AssertionError: ndgrad raises AttributeError(module 'ndgrad' has no attribute 'sparse_coo') where torch raises",
    ('errors', 'signal.windows.hamming', 'any'):
        "raises another exception class (2/5): AssertionError: ndgrad raises AttributeError(module 'ndgrad' has no attribute 'sparse_coo') where torch raises",
    ('errors', 'signal.windows.hann', 'any'):
        "raises another exception class (2/5): AssertionError: ndgrad raises AttributeError(module 'ndgrad' has no attribute 'sparse_coo') where torch raises",
    ('errors', 'signal.windows.kaiser', 'any'):
        "raises another exception class (2/6): AssertionError: ndgrad raises AttributeError(module 'ndgrad' has no attribute 'sparse_coo') where torch raises",
    ('errors', 'signal.windows.nuttall', 'any'):
        "raises another exception class (2/5): AssertionError: ndgrad raises AttributeError(module 'ndgrad' has no attribute 'sparse_coo') where torch raises",
    ('errors', 'special.xlog1py', 'any'):
        "accepts an error input torch refuses (1/1): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('errors', 'sum_to_size', 'any'):
        'raises another exception class (2/2): AssertionError: ndgrad raises ValueError(cannot reshape array of size 50 into shape (10,10)) where torch raise',
    ('errors', 'vsplit', 'any'):
        "raises another exception class (1/3): AssertionError: ndgrad raises ValueError(invalid literal for int() with base 10: 'a') where torch raises TypeE",
    ('errors', 'xlogy', 'any'):
        "accepts an error input torch refuses (1/1): AssertionError: ndgrad accepts an input torch refuses with Exception matching ''",
    ('forward', '__rmatmul__', 'complex128'):
        "zero-size tensors (1/15): AssertionError: ndgrad raises RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('forward', '__rmatmul__', 'float32'):
        "zero-size tensors (1/15): AssertionError: ndgrad raises RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('forward', '__rmatmul__', 'float64'):
        "zero-size tensors (1/15): AssertionError: ndgrad raises RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
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
    ('forward', 'gather', 'complex128'):
        'other (2/7): AssertionError: ndgrad raises RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('forward', 'gather', 'float32'):
        'other (2/7): AssertionError: ndgrad raises RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('forward', 'gather', 'float64'):
        'other (2/7): AssertionError: ndgrad raises RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('forward', 'gradient', 'complex128'):
        'other (2/8): AssertionError: ndgrad raises TypeError: unsupported scalar type NoneType',
    ('forward', 'gradient', 'float32'):
        'other (2/8): AssertionError: ndgrad raises TypeError: unsupported scalar type NoneType',
    ('forward', 'gradient', 'float64'):
        'other (2/8): AssertionError: ndgrad raises TypeError: unsupported scalar type NoneType',
    ('forward', 'hash_tensor', 'float32'):
        'an absent name (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.hash_tensor',
    ('forward', 'hash_tensor', 'float64'):
        'an absent name (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.hash_tensor',
    ('forward', 'histogramdd', 'float32'):
        'other (8/16): AssertionError: ndgrad raises ValueError: `bins[4]` must be monotonically increasing, when an array',
    ('forward', 'histogramdd', 'float64'):
        'zero-size tensors (8/16): AssertionError: ndgrad raises ValueError: `bins[0]` must be monotonically increasing, when an array',
    ('forward', 'index_reduce.amax', 'float32'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('forward', 'index_reduce.amax', 'float64'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('forward', 'index_reduce.amin', 'float32'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('forward', 'index_reduce.amin', 'float64'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('forward', 'index_reduce.mean', 'float32'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('forward', 'index_reduce.mean', 'float64'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('forward', 'index_reduce.prod', 'float32'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('forward', 'index_reduce.prod', 'float64'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
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
    ('forward', 'linalg.lu', 'complex128'):
        'zero-size tensors (8/16): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result[0] Mismatched elements: 4 / 48 (8.33%) Mi',
    ('forward', 'linalg.lu_factor', 'complex128'):
        'zero-size tensors (9/16): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result[0] Mismatched elements: 14 / 30 (46.7%) F',
    ('forward', 'linalg.lu_factor_ex', 'complex128'):
        'zero-size tensors (8/16): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result[0] Mismatched elements: 10 / 60 (16.7%) F',
    ('forward', 'logcumsumexp', 'complex128'):
        "other (4/6): AssertionError: ndgrad raises TypeError: ufunc 'logaddexp' not supported for the input types, and the inputs c",
    ('forward', 'logsumexp', 'complex128'):
        "values differ from torch's (15/15): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result Mismatched elements: 1 / 1 (100%) Max abs",
    ('forward', 'lu', 'complex128'):
        'zero-size tensors (5/16): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result[0] Mismatched elements: 14 / 30 (46.7%) F',
    ('forward', 'masked.amax', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.amax',
    ('forward', 'masked.amax', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.amax',
    ('forward', 'masked.amin', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.amin',
    ('forward', 'masked.amin', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.amin',
    ('forward', 'masked.argmax', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.argmax',
    ('forward', 'masked.argmax', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.argmax',
    ('forward', 'masked.argmin', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.argmin',
    ('forward', 'masked.argmin', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.argmin',
    ('forward', 'masked.cumprod', 'complex128'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.cumprod',
    ('forward', 'masked.cumprod', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.cumprod',
    ('forward', 'masked.cumprod', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.cumprod',
    ('forward', 'masked.cumsum', 'complex128'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.cumsum',
    ('forward', 'masked.cumsum', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.cumsum',
    ('forward', 'masked.cumsum', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.cumsum',
    ('forward', 'masked.log_softmax', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.log_softmax',
    ('forward', 'masked.log_softmax', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.log_softmax',
    ('forward', 'masked.logaddexp', 'float32'):
        'torch.masked is absent (11/11): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.logaddexp',
    ('forward', 'masked.logaddexp', 'float64'):
        'torch.masked is absent (11/11): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.logaddexp',
    ('forward', 'masked.logsumexp', 'complex128'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.logsumexp',
    ('forward', 'masked.logsumexp', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.logsumexp',
    ('forward', 'masked.logsumexp', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.logsumexp',
    ('forward', 'masked.mean', 'complex128'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.mean',
    ('forward', 'masked.mean', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.mean',
    ('forward', 'masked.mean', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.mean',
    ('forward', 'masked.median', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.median',
    ('forward', 'masked.median', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.median',
    ('forward', 'masked.norm', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.norm',
    ('forward', 'masked.norm', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.norm',
    ('forward', 'masked.normalize', 'complex128'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.normalize',
    ('forward', 'masked.normalize', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.normalize',
    ('forward', 'masked.normalize', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.normalize',
    ('forward', 'masked.prod', 'complex128'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.prod',
    ('forward', 'masked.prod', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.prod',
    ('forward', 'masked.prod', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.prod',
    ('forward', 'masked.softmax', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.softmax',
    ('forward', 'masked.softmax', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.softmax',
    ('forward', 'masked.softmin', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.softmin',
    ('forward', 'masked.softmin', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.softmin',
    ('forward', 'masked.std', 'complex128'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.std',
    ('forward', 'masked.std', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.std',
    ('forward', 'masked.std', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.std',
    ('forward', 'masked.sum', 'complex128'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.sum',
    ('forward', 'masked.sum', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.sum',
    ('forward', 'masked.sum', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.sum',
    ('forward', 'masked.var', 'complex128'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.var',
    ('forward', 'masked.var', 'float32'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.var',
    ('forward', 'masked.var', 'float64'):
        'torch.masked is absent (16/16): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.masked.var',
    ('forward', 'matmul', 'complex128'):
        "zero-size tensors (1/15): AssertionError: ndgrad raises RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('forward', 'matmul', 'float32'):
        "zero-size tensors (1/15): AssertionError: ndgrad raises RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('forward', 'matmul', 'float64'):
        "zero-size tensors (1/15): AssertionError: ndgrad raises RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('forward', 'matrix_exp', 'float32'):
        "values differ from torch's (1/2): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 1 / 125 (0.8%) Mis",
    ('forward', 'native_group_norm', 'float32'):
        'zero-size tensors (4/16): AssertionError: ndgrad raises ValueError: cannot reshape array of size 0 into shape (0,1,newaxis)',
    ('forward', 'native_group_norm', 'float64'):
        'zero-size tensors (4/16): AssertionError: ndgrad raises ValueError: cannot reshape array of size 0 into shape (0,1,newaxis)',
    ('forward', 'nn.functional.batch_norm', 'float32'):
        'other (2/12): AssertionError: ndgrad raises IndexError: tuple index out of range',
    ('forward', 'nn.functional.batch_norm', 'float64'):
        'other (2/12): AssertionError: ndgrad raises IndexError: tuple index out of range',
    ('forward', 'nn.functional.cosine_similarity', 'float32'):
        'zero-size tensors (1/9): AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05 result Mismatched elements: 6 / 6 (100%) First',
    ('forward', 'nn.functional.cosine_similarity', 'float64'):
        'zero-size tensors (1/9): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result Mismatched elements: 6 / 6 (100%) First 5',
    ('forward', 'nn.functional.pad.circular', 'complex128'):
        "other (1/8): AssertionError: ndgrad raises ValueError: index can't contain negative values",
    ('forward', 'nn.functional.pad.circular', 'float32'):
        "other (1/8): AssertionError: ndgrad raises ValueError: index can't contain negative values",
    ('forward', 'nn.functional.pad.circular', 'float64'):
        "other (1/8): AssertionError: ndgrad raises ValueError: index can't contain negative values",
    ('forward', 'nn.functional.pad.reflect', 'complex128'):
        "other (1/12): AssertionError: ndgrad raises ValueError: index can't contain negative values",
    ('forward', 'nn.functional.pad.reflect', 'float32'):
        "other (1/12): AssertionError: ndgrad raises ValueError: index can't contain negative values",
    ('forward', 'nn.functional.pad.reflect', 'float64'):
        "other (1/12): AssertionError: ndgrad raises ValueError: index can't contain negative values",
    ('forward', 'nn.functional.pad.replicate', 'complex128'):
        "other (1/12): AssertionError: ndgrad raises ValueError: index can't contain negative values",
    ('forward', 'nn.functional.pad.replicate', 'float32'):
        "other (1/12): AssertionError: ndgrad raises ValueError: index can't contain negative values",
    ('forward', 'nn.functional.pad.replicate', 'float64'):
        "other (1/12): AssertionError: ndgrad raises ValueError: index can't contain negative values",
    ('forward', 'nn.functional.pad.replicate_negative', 'complex128'):
        "other (6/6): AssertionError: ndgrad raises ValueError: index can't contain negative values",
    ('forward', 'nn.functional.pad.replicate_negative', 'float32'):
        "other (6/6): AssertionError: ndgrad raises ValueError: index can't contain negative values",
    ('forward', 'nn.functional.pad.replicate_negative', 'float64'):
        "other (6/6): AssertionError: ndgrad raises ValueError: index can't contain negative values",
    ('forward', 'normal', 'float64'):
        "result dtype differs from torch's (1/5): AssertionError: result: dtype float32 != torch's float64",
    ('forward', 'normal.in_place', 'complex128'):
        'complex support (2/2): AssertionError: ndgrad raises NotImplementedError: "normal_kernel_cpu" not implemented for \'ComplexDouble\'',
    ('forward', 'pca_lowrank', 'complex128'):
        "an absent name (16/16): AssertionError: ndgrad raises AttributeError: module 'ndgrad' has no attribute 'pca_lowrank'",
    ('forward', 'pca_lowrank', 'float32'):
        "an absent name (16/16): AssertionError: ndgrad raises AttributeError: module 'ndgrad' has no attribute 'pca_lowrank'",
    ('forward', 'pca_lowrank', 'float64'):
        "an absent name (16/16): AssertionError: ndgrad raises AttributeError: module 'ndgrad' has no attribute 'pca_lowrank'",
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
    ('forward', 'renorm', 'complex128'):
        'complex support (4/4): AssertionError: ndgrad raises RuntimeError: renorm: Expected a real-valued input but got complex',
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
    ('forward', 'svd_lowrank', 'complex128'):
        "an absent name (16/16): AssertionError: ndgrad raises AttributeError: module 'ndgrad' has no attribute 'svd_lowrank'",
    ('forward', 'svd_lowrank', 'float32'):
        "an absent name (16/16): AssertionError: ndgrad raises AttributeError: module 'ndgrad' has no attribute 'svd_lowrank'",
    ('forward', 'svd_lowrank', 'float64'):
        "an absent name (16/16): AssertionError: ndgrad raises AttributeError: module 'ndgrad' has no attribute 'svd_lowrank'",
    ('forward', 'take_along_dim', 'complex128'):
        'other (1/5): AssertionError: ndgrad raises RuntimeError: index -1 is out of bounds for dimension 1 with size 5',
    ('forward', 'take_along_dim', 'float32'):
        'other (1/5): AssertionError: ndgrad raises RuntimeError: index -1 is out of bounds for dimension 1 with size 5',
    ('forward', 'take_along_dim', 'float64'):
        'other (1/5): AssertionError: ndgrad raises RuntimeError: index -1 is out of bounds for dimension 1 with size 5',
    ('forward', 'tensordot', 'complex128'):
        'other (1/3): AssertionError: ndgrad raises RuntimeError: contracted dimensions need to match, but first has size 1 in dim 0',
    ('forward', 'tensordot', 'float32'):
        'other (1/3): AssertionError: ndgrad raises RuntimeError: contracted dimensions need to match, but first has size 1 in dim 0',
    ('forward', 'tensordot', 'float64'):
        'other (1/3): AssertionError: ndgrad raises RuntimeError: contracted dimensions need to match, but first has size 1 in dim 0',
    ('forward', 'uniform', 'complex128'):
        'complex support (3/3): AssertionError: ndgrad raises NotImplementedError: "check_uniform_bounds" not implemented for \'ComplexDouble\'',
    ('fwad', '__rmatmul__', 'complex128'):
        "zero-size tensors (1/8): RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('fwad', '__rmatmul__', 'float64'):
        "zero-size tensors (1/8): RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('fwad', '__rpow__', 'complex128'):
        'complex support (8/8): NotImplementedError: "lt_cpu" not implemented for \'ComplexDouble\'',
    ('fwad', '__rpow__', 'float64'):
        "complex support (8/8): AssertionError: primal/tangent[1]: dtype complex128 != torch's float64",
    ('fwad', 'cholesky_inverse', 'complex128'):
        'zero-size tensors (2/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[1] Mismatched elements: 5 / 25 (2',
    ('fwad', 'cholesky_inverse', 'float64'):
        'zero-size tensors (2/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[1] Mismatched elements: 21 / 25 (',
    ('fwad', 'float_power', 'complex128'):
        'complex support (8/8): NotImplementedError: "ge_cpu" not implemented for \'ComplexDouble\'',
    ('fwad', 'gather', 'complex128'):
        'other (2/7): RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('fwad', 'gather', 'float64'):
        'other (2/7): RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('fwad', 'gradient', 'complex128'):
        'other (2/8): TypeError: unsupported scalar type NoneType',
    ('fwad', 'gradient', 'float64'):
        'other (2/8): TypeError: unsupported scalar type NoneType',
    ('fwad', 'ldexp', 'complex128'):
        "values differ from torch's (8/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[1] Mismatched elements: 1 / 1 (10",
    ('fwad', 'linalg.cond', 'complex128'):
        'complex support (3/3): RuntimeError: svd_backward: The singular vectors in the complex case are specified up to multiplication by e^{',
    ('fwad', 'linalg.eig', 'complex128'):
        'complex support (3/8): RuntimeError: linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by ',
    ('fwad', 'linalg.eig', 'float64'):
        'complex support (3/8): RuntimeError: linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by ',
    ('fwad', 'linalg.eigvals', 'complex128'):
        'complex support (3/8): RuntimeError: linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by ',
    ('fwad', 'linalg.eigvals', 'float64'):
        'complex support (3/8): RuntimeError: linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by ',
    ('fwad', 'linalg.lu', 'complex128'):
        'zero-size tensors (2/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[0] Mismatched elements: 5 / 48 (1',
    ('fwad', 'linalg.lu_factor', 'complex128'):
        'zero-size tensors (2/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[0] Mismatched elements: 14 / 30 (',
    ('fwad', 'linalg.lu_factor_ex', 'complex128'):
        'zero-size tensors (2/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[0] Mismatched elements: 10 / 60 (',
    ('fwad', 'linalg.matrix_norm', 'complex128'):
        'complex support (4/8): RuntimeError: svd_backward: The singular vectors in the complex case are specified up to multiplication by e^{',
    ('fwad', 'linalg.svdvals', 'complex128'):
        'complex support (4/8): RuntimeError: svd_backward: The singular vectors in the complex case are specified up to multiplication by e^{',
    ('fwad', 'logcumsumexp', 'complex128'):
        "other (4/6): TypeError: ufunc 'logaddexp' not supported for the input types, and the inputs could not be safely coerced to ",
    ('fwad', 'logcumsumexp', 'float64'):
        'zero-size tensors (2/6): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[1] Mismatched elements: 2 / 125 (',
    ('fwad', 'logsumexp', 'complex128'):
        'zero-size tensors (8/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[0] Mismatched elements: 1 / 1 (10',
    ('fwad', 'lu', 'complex128'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[0] Mismatched elements: 14 / 30 (',
    ('fwad', 'masked.amax', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.amax',
    ('fwad', 'masked.amin', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.amin',
    ('fwad', 'masked.cumprod', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.cumprod',
    ('fwad', 'masked.cumprod', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.cumprod',
    ('fwad', 'masked.cumsum', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.cumsum',
    ('fwad', 'masked.cumsum', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.cumsum',
    ('fwad', 'masked.log_softmax', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.log_softmax',
    ('fwad', 'masked.logaddexp', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.logaddexp',
    ('fwad', 'masked.logsumexp', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.logsumexp',
    ('fwad', 'masked.logsumexp', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.logsumexp',
    ('fwad', 'masked.mean', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.mean',
    ('fwad', 'masked.mean', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.mean',
    ('fwad', 'masked.median', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.median',
    ('fwad', 'masked.norm', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.norm',
    ('fwad', 'masked.normalize', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.normalize',
    ('fwad', 'masked.normalize', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.normalize',
    ('fwad', 'masked.prod', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.prod',
    ('fwad', 'masked.prod', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.prod',
    ('fwad', 'masked.softmax', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.softmax',
    ('fwad', 'masked.softmin', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.softmin',
    ('fwad', 'masked.std', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.std',
    ('fwad', 'masked.std', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.std',
    ('fwad', 'masked.sum', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.sum',
    ('fwad', 'masked.sum', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.sum',
    ('fwad', 'masked.var', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.var',
    ('fwad', 'masked.var', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.var',
    ('fwad', 'matmul', 'complex128'):
        "zero-size tensors (1/8): RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('fwad', 'matmul', 'float64'):
        "zero-size tensors (1/8): RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('fwad', 'native_group_norm', 'float64'):
        'zero-size tensors (8/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[3] Mismatched elements: 2 / 2 (10',
    ('fwad', 'nn.functional.batch_norm', 'float64'):
        'other (2/8): IndexError: tuple index out of range',
    ('fwad', 'nn.functional.cosine_similarity', 'float64'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[0] Mismatched elements: 6 / 6 (10',
    ('fwad', 'nn.functional.dropout2d', 'float64'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[0] Mismatched elements: 60 / 125 ',
    ('fwad', 'nn.functional.layer_norm', 'float64'):
        "other (1/6): RuntimeError: shape '[1, 2, 3]' is invalid for input of size 1",
    ('fwad', 'nn.functional.pad.circular', 'complex128'):
        "other (1/8): ValueError: index can't contain negative values",
    ('fwad', 'nn.functional.pad.circular', 'float64'):
        "other (1/8): ValueError: index can't contain negative values",
    ('fwad', 'nn.functional.pad.replicate_negative', 'complex128'):
        "other (6/6): ValueError: index can't contain negative values",
    ('fwad', 'nn.functional.pad.replicate_negative', 'float64'):
        "other (6/6): ValueError: index can't contain negative values",
    ('fwad', 'nn.functional.poisson_nll_loss', 'float64'):
        'zero-size tensors (4/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 primal/tangent[1] Mismatched elements: 4 / 5 (80',
    ('fwad', 'norm.nuc', 'complex128'):
        'complex support (2/2): RuntimeError: svd_backward: The singular vectors in the complex case are specified up to multiplication by e^{',
    ('fwad', 'pca_lowrank', 'complex128'):
        "an absent name (8/8): AttributeError: module 'ndgrad' has no attribute 'pca_lowrank'",
    ('fwad', 'pca_lowrank', 'float64'):
        "an absent name (8/8): AttributeError: module 'ndgrad' has no attribute 'pca_lowrank'",
    ('fwad', 'pow', 'complex128'):
        'complex support (8/8): NotImplementedError: "ge_cpu" not implemented for \'ComplexDouble\'',
    ('fwad', 'renorm', 'complex128'):
        'complex support (4/4): RuntimeError: renorm: Expected a real-valued input but got complex',
    ('fwad', 'svd_lowrank', 'complex128'):
        "an absent name (8/8): AttributeError: module 'ndgrad' has no attribute 'svd_lowrank'",
    ('fwad', 'svd_lowrank', 'float64'):
        "an absent name (8/8): AttributeError: module 'ndgrad' has no attribute 'svd_lowrank'",
    ('fwad', 'take_along_dim', 'complex128'):
        'other (1/5): RuntimeError: index -1 is out of bounds for dimension 1 with size 5',
    ('fwad', 'take_along_dim', 'float64'):
        'other (1/5): RuntimeError: index -1 is out of bounds for dimension 1 with size 5',
    ('fwad', 'tensordot', 'complex128'):
        'other (1/3): RuntimeError: contracted dimensions need to match, but first has size 1 in dim 0 and second has size 2 in dim ',
    ('fwad', 'tensordot', 'float64'):
        'other (1/3): RuntimeError: contracted dimensions need to match, but first has size 1 in dim 0 and second has size 2 in dim ',
    ('grad', '__rmatmul__', 'complex128'):
        "zero-size tensors (1/8): RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('grad', '__rmatmul__', 'float64'):
        "zero-size tensors (1/8): RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('grad', '__rpow__', 'complex128'):
        'complex support (8/8): NotImplementedError: "lt_cpu" not implemented for \'ComplexDouble\'',
    ('grad', '__rpow__', 'float64'):
        "complex support (8/8): AssertionError: gradient of input 0: dtype complex128 != torch's float64",
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
    ('grad', 'gather', 'complex128'):
        'other (2/7): RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('grad', 'gather', 'float64'):
        'other (2/7): RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('grad', 'gradient', 'complex128'):
        'other (2/8): TypeError: unsupported scalar type NoneType',
    ('grad', 'gradient', 'float64'):
        'other (2/8): TypeError: unsupported scalar type NoneType',
    ('grad', 'index_reduce.amax', 'float64'):
        'other (2/8): IndexError: list assignment index out of range',
    ('grad', 'index_reduce.amin', 'float64'):
        'other (2/8): IndexError: list assignment index out of range',
    ('grad', 'index_reduce.mean', 'float64'):
        'other (2/8): IndexError: list assignment index out of range',
    ('grad', 'index_reduce.prod', 'float64'):
        'other (2/8): IndexError: list assignment index out of range',
    ('grad', 'ldexp', 'complex128'):
        "values differ from torch's (8/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 1 / 1 (",
    ('grad', 'lerp', 'complex128'):
        'zero-size tensors (2/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 25 / 25',
    ('grad', 'linalg.householder_product', 'complex128'):
        "other (2/8): AssertionError: 0 differentiable outputs (requires_grad) != torch's 1",
    ('grad', 'linalg.householder_product', 'float64'):
        "other (2/8): AssertionError: 0 differentiable outputs (requires_grad) != torch's 1",
    ('grad', 'linalg.lu', 'complex128'):
        'zero-size tensors (2/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 20 / 60',
    ('grad', 'linalg.lu_factor', 'complex128'):
        'zero-size tensors (2/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 28 / 30',
    ('grad', 'linalg.lu_factor_ex', 'complex128'):
        'zero-size tensors (2/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 20 / 60',
    ('grad', 'logcumsumexp', 'complex128'):
        "other (4/6): TypeError: ufunc 'logaddexp' not supported for the input types, and the inputs could not be safely coerced to ",
    ('grad', 'lu', 'complex128'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 28 / 30',
    ('grad', 'masked.amax', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.amax',
    ('grad', 'masked.amin', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.amin',
    ('grad', 'masked.cumprod', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.cumprod',
    ('grad', 'masked.cumprod', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.cumprod',
    ('grad', 'masked.cumsum', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.cumsum',
    ('grad', 'masked.cumsum', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.cumsum',
    ('grad', 'masked.log_softmax', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.log_softmax',
    ('grad', 'masked.logaddexp', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.logaddexp',
    ('grad', 'masked.logsumexp', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.logsumexp',
    ('grad', 'masked.logsumexp', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.logsumexp',
    ('grad', 'masked.mean', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.mean',
    ('grad', 'masked.mean', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.mean',
    ('grad', 'masked.median', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.median',
    ('grad', 'masked.norm', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.norm',
    ('grad', 'masked.normalize', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.normalize',
    ('grad', 'masked.normalize', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.normalize',
    ('grad', 'masked.prod', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.prod',
    ('grad', 'masked.prod', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.prod',
    ('grad', 'masked.softmax', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.softmax',
    ('grad', 'masked.softmin', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.softmin',
    ('grad', 'masked.std', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.std',
    ('grad', 'masked.std', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.std',
    ('grad', 'masked.sum', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.sum',
    ('grad', 'masked.sum', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.sum',
    ('grad', 'masked.var', 'complex128'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.var',
    ('grad', 'masked.var', 'float64'):
        'torch.masked is absent (8/8): AttributeError: ndgrad has no torch.masked.var',
    ('grad', 'matmul', 'complex128'):
        "zero-size tensors (1/8): RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('grad', 'matmul', 'float64'):
        "zero-size tensors (1/8): RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('grad', 'native_group_norm', 'float64'):
        "other (8/8): AssertionError: 1 differentiable outputs (requires_grad) != torch's 3",
    ('grad', 'native_layer_norm', 'float64'):
        "other (3/8): RuntimeError: shape '[1, 2, 3]' is invalid for input of size 1",
    ('grad', 'nn.functional.batch_norm', 'float64'):
        'other (2/8): IndexError: tuple index out of range',
    ('grad', 'nn.functional.conv1d', 'complex128'):
        'zero-size tensors (8/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 12 / 12',
    ('grad', 'nn.functional.conv2d', 'complex128'):
        'zero-size tensors (8/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 48 / 48',
    ('grad', 'nn.functional.conv3d', 'complex128'):
        'zero-size tensors (8/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 64 / 64',
    ('grad', 'nn.functional.conv_transpose1d', 'complex128'):
        'zero-size tensors (8/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 12 / 12',
    ('grad', 'nn.functional.conv_transpose2d', 'complex128'):
        'zero-size tensors (8/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 48 / 48',
    ('grad', 'nn.functional.conv_transpose3d', 'complex128'):
        'zero-size tensors (8/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 192 / 1',
    ('grad', 'nn.functional.cosine_similarity', 'float64'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 6 / 6 (',
    ('grad', 'nn.functional.dropout2d', 'float64'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 60 / 12',
    ('grad', 'nn.functional.layer_norm', 'float64'):
        "other (1/6): RuntimeError: shape '[1, 2, 3]' is invalid for input of size 1",
    ('grad', 'nn.functional.pad.circular', 'complex128'):
        "other (1/8): ValueError: index can't contain negative values",
    ('grad', 'nn.functional.pad.circular', 'float64'):
        "other (1/8): ValueError: index can't contain negative values",
    ('grad', 'nn.functional.pad.replicate_negative', 'complex128'):
        "other (6/6): ValueError: index can't contain negative values",
    ('grad', 'nn.functional.pad.replicate_negative', 'float64'):
        "other (6/6): ValueError: index can't contain negative values",
    ('grad', 'nn.functional.poisson_nll_loss', 'float64'):
        'zero-size tensors (4/8): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 1 Mismatched elements: 4 / 5 (',
    ('grad', 'normal', 'float64'):
        "other (5/5): AssertionError: 0 differentiable outputs (requires_grad) != torch's 1",
    ('grad', 'normal.number_mean', 'float64'):
        "other (1/3): AssertionError: 0 differentiable outputs (requires_grad) != torch's 1",
    ('grad', 'pca_lowrank', 'complex128'):
        "an absent name (8/8): AttributeError: module 'ndgrad' has no attribute 'pca_lowrank'",
    ('grad', 'pca_lowrank', 'float64'):
        "an absent name (8/8): AttributeError: module 'ndgrad' has no attribute 'pca_lowrank'",
    ('grad', 'renorm', 'complex128'):
        'complex support (4/4): RuntimeError: renorm: Expected a real-valued input but got complex',
    ('grad', 'sgn', 'float64'):
        'other (1/1): RuntimeError: Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array.',
    ('grad', 'svd_lowrank', 'complex128'):
        "an absent name (8/8): AttributeError: module 'ndgrad' has no attribute 'svd_lowrank'",
    ('grad', 'svd_lowrank', 'float64'):
        "an absent name (8/8): AttributeError: module 'ndgrad' has no attribute 'svd_lowrank'",
    ('grad', 'take_along_dim', 'complex128'):
        'other (1/5): RuntimeError: index -1 is out of bounds for dimension 1 with size 5',
    ('grad', 'take_along_dim', 'float64'):
        'other (1/5): RuntimeError: index -1 is out of bounds for dimension 1 with size 5',
    ('grad', 'tensordot', 'complex128'):
        'other (1/3): RuntimeError: contracted dimensions need to match, but first has size 1 in dim 0 and second has size 2 in dim ',
    ('grad', 'tensordot', 'float64'):
        'other (1/3): RuntimeError: contracted dimensions need to match, but first has size 1 in dim 0 and second has size 2 in dim ',
    ('gradgrad', '__rpow__', 'complex128'):
        'complex support (4/4): NotImplementedError: "lt_cpu" not implemented for \'ComplexDouble\'',
    ('gradgrad', '__rpow__', 'float64'):
        "complex support (4/4): AssertionError: gradient of input 0: dtype complex128 != torch's float64",
    ('gradgrad', 'abs', 'float64'):
        'other (1/1): RuntimeError: Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array.',
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
    ('gradgrad', 'gather', 'complex128'):
        'other (1/4): RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('gradgrad', 'gather', 'float64'):
        'other (1/4): RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('gradgrad', 'gradient', 'complex128'):
        'other (2/4): TypeError: unsupported scalar type NoneType',
    ('gradgrad', 'gradient', 'float64'):
        'other (2/4): TypeError: unsupported scalar type NoneType',
    ('gradgrad', 'index_reduce.amax', 'float64'):
        'other (2/4): IndexError: list assignment index out of range',
    ('gradgrad', 'index_reduce.amin', 'float64'):
        'other (2/4): IndexError: list assignment index out of range',
    ('gradgrad', 'index_reduce.mean', 'float64'):
        'other (2/4): IndexError: list assignment index out of range',
    ('gradgrad', 'index_reduce.prod', 'float64'):
        'other (2/4): IndexError: list assignment index out of range',
    ('gradgrad', 'ldexp', 'complex128'):
        "values differ from torch's (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 1 / 1 (",
    ('gradgrad', 'linalg.lu_factor', 'complex128'):
        'zero-size tensors (1/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 28 / 30',
    ('gradgrad', 'linalg.norm.subgradients_at_zero', 'float64'):
        'other (1/4): RuntimeError: Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array.',
    ('gradgrad', 'linalg.vector_norm', 'float64'):
        'other (1/4): RuntimeError: Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array.',
    ('gradgrad', 'logcumsumexp', 'complex128'):
        "other (3/4): TypeError: ufunc 'logaddexp' not supported for the input types, and the inputs could not be safely coerced to ",
    ('gradgrad', 'lu', 'complex128'):
        'zero-size tensors (1/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 28 / 30',
    ('gradgrad', 'masked.amax', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.amax',
    ('gradgrad', 'masked.amin', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.amin',
    ('gradgrad', 'masked.cumprod', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.cumprod',
    ('gradgrad', 'masked.cumprod', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.cumprod',
    ('gradgrad', 'masked.cumsum', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.cumsum',
    ('gradgrad', 'masked.cumsum', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.cumsum',
    ('gradgrad', 'masked.log_softmax', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.log_softmax',
    ('gradgrad', 'masked.logaddexp', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.logaddexp',
    ('gradgrad', 'masked.logsumexp', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.logsumexp',
    ('gradgrad', 'masked.logsumexp', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.logsumexp',
    ('gradgrad', 'masked.mean', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.mean',
    ('gradgrad', 'masked.mean', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.mean',
    ('gradgrad', 'masked.median', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.median',
    ('gradgrad', 'masked.norm', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.norm',
    ('gradgrad', 'masked.normalize', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.normalize',
    ('gradgrad', 'masked.normalize', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.normalize',
    ('gradgrad', 'masked.prod', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.prod',
    ('gradgrad', 'masked.prod', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.prod',
    ('gradgrad', 'masked.softmax', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.softmax',
    ('gradgrad', 'masked.softmin', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.softmin',
    ('gradgrad', 'masked.std', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.std',
    ('gradgrad', 'masked.std', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.std',
    ('gradgrad', 'masked.sum', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.sum',
    ('gradgrad', 'masked.sum', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.sum',
    ('gradgrad', 'masked.var', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.var',
    ('gradgrad', 'masked.var', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.var',
    ('gradgrad', 'native_group_norm', 'float64'):
        "other (4/4): AssertionError: 1 differentiable outputs (requires_grad) != torch's 3",
    ('gradgrad', 'native_layer_norm', 'float64'):
        "other (3/4): RuntimeError: shape '[1, 2, 3]' is invalid for input of size 1",
    ('gradgrad', 'nn.functional.batch_norm', 'float64'):
        'other (1/4): IndexError: tuple index out of range',
    ('gradgrad', 'nn.functional.conv1d', 'complex128'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 12 / 12',
    ('gradgrad', 'nn.functional.conv2d', 'complex128'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 48 / 48',
    ('gradgrad', 'nn.functional.conv3d', 'complex128'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 64 / 64',
    ('gradgrad', 'nn.functional.conv_transpose1d', 'complex128'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 12 / 12',
    ('gradgrad', 'nn.functional.conv_transpose2d', 'complex128'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 48 / 48',
    ('gradgrad', 'nn.functional.conv_transpose2d', 'float64'):
        "other (2/4): AssertionError: second gradient of input 0: shape (2, 2, 4, 5) != torch's (2, 2, 4, 4)",
    ('gradgrad', 'nn.functional.conv_transpose3d', 'complex128'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 192 / 1',
    ('gradgrad', 'nn.functional.conv_transpose3d', 'float64'):
        "other (2/4): AssertionError: second gradient of input 0: shape (2, 2, 4, 5, 5) != torch's (2, 2, 4, 4, 4)",
    ('gradgrad', 'nn.functional.ctc_loss', 'float64'):
        'other (4/4): RuntimeError: derivative for aten::_ctc_loss_backward is not implemented',
    ('gradgrad', 'nn.functional.dropout2d', 'float64'):
        'zero-size tensors (1/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 0 Mismatched elements: 60 / 12',
    ('gradgrad', 'nn.functional.l1_loss', 'float64'):
        'other (4/4): RuntimeError: Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array.',
    ('gradgrad', 'nn.functional.layer_norm', 'float64'):
        "other (1/4): RuntimeError: shape '[1, 2, 3]' is invalid for input of size 1",
    ('gradgrad', 'nn.functional.linear_cross_entropy.chunked', 'float64'):
        'zero-size tensors (3/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 second gradient of input 0 Mismatched elements: ',
    ('gradgrad', 'nn.functional.pad.replicate_negative', 'complex128'):
        "other (4/4): ValueError: index can't contain negative values",
    ('gradgrad', 'nn.functional.pad.replicate_negative', 'float64'):
        "other (4/4): ValueError: index can't contain negative values",
    ('gradgrad', 'nn.functional.poisson_nll_loss', 'float64'):
        'zero-size tensors (2/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 gradient of input 1 Mismatched elements: 4 / 5 (',
    ('gradgrad', 'norm', 'float64'):
        'other (1/4): RuntimeError: Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array.',
    ('gradgrad', 'norm.inf', 'float64'):
        'other (4/4): RuntimeError: Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array.',
    ('gradgrad', 'normal', 'float64'):
        "other (4/4): AssertionError: 0 differentiable outputs (requires_grad) != torch's 1",
    ('gradgrad', 'normal.number_mean', 'float64'):
        "other (1/3): AssertionError: 0 differentiable outputs (requires_grad) != torch's 1",
    ('gradgrad', 'pca_lowrank', 'complex128'):
        "an absent name (4/4): AttributeError: module 'ndgrad' has no attribute 'pca_lowrank'",
    ('gradgrad', 'pca_lowrank', 'float64'):
        "an absent name (4/4): AttributeError: module 'ndgrad' has no attribute 'pca_lowrank'",
    ('gradgrad', 'renorm', 'complex128'):
        'complex support (4/4): RuntimeError: renorm: Expected a real-valued input but got complex',
    ('gradgrad', 'sgn', 'float64'):
        'other (1/1): RuntimeError: Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array.',
    ('gradgrad', 'svd_lowrank', 'complex128'):
        "an absent name (4/4): AttributeError: module 'ndgrad' has no attribute 'svd_lowrank'",
    ('gradgrad', 'svd_lowrank', 'float64'):
        "an absent name (4/4): AttributeError: module 'ndgrad' has no attribute 'svd_lowrank'",
    ('gradgrad', 'tensordot', 'complex128'):
        'other (1/3): RuntimeError: contracted dimensions need to match, but first has size 1 in dim 0 and second has size 2 in dim ',
    ('gradgrad', 'tensordot', 'float64'):
        'other (1/3): RuntimeError: contracted dimensions need to match, but first has size 1 in dim 0 and second has size 2 in dim ',
    ('inplace', 'addbmm', 'complex128'):
        'other (4/8): AssertionError: ndgrad raises RuntimeError: Bad in-place call: input tensor size [1] and output tensor size [5',
    ('inplace', 'addbmm', 'float32'):
        'other (4/6): AssertionError: ndgrad raises RuntimeError: Bad in-place call: input tensor size [1] and output tensor size [5',
    ('inplace', 'addbmm', 'float64'):
        'other (4/6): AssertionError: ndgrad raises RuntimeError: Bad in-place call: input tensor size [1] and output tensor size [5',
    ('inplace', 'index_reduce.amax', 'float32'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('inplace', 'index_reduce.amax', 'float64'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('inplace', 'index_reduce.amin', 'float32'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('inplace', 'index_reduce.amin', 'float64'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('inplace', 'index_reduce.mean', 'float32'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('inplace', 'index_reduce.mean', 'float64'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('inplace', 'index_reduce.prod', 'float32'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('inplace', 'index_reduce.prod', 'float64'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('inplace', 'normal.in_place', 'complex128'):
        'complex support (2/2): AssertionError: ndgrad raises NotImplementedError: "normal_kernel_cpu" not implemented for \'ComplexDouble\'',
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
    ('inplace', 'renorm', 'complex128'):
        'complex support (4/4): AssertionError: ndgrad raises RuntimeError: renorm: Expected a real-valued input but got complex',
    ('inplace', 'uniform', 'complex128'):
        'complex support (3/3): AssertionError: ndgrad raises NotImplementedError: "check_uniform_bounds" not implemented for \'ComplexDouble\'',
    ('method', '__rmatmul__', 'complex128'):
        "zero-size tensors (1/8): AssertionError: ndgrad raises RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('method', '__rmatmul__', 'float32'):
        "zero-size tensors (1/8): AssertionError: ndgrad raises RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('method', '__rmatmul__', 'float64'):
        "zero-size tensors (1/8): AssertionError: ndgrad raises RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
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
    ('method', 'gather', 'complex128'):
        'other (2/7): AssertionError: ndgrad raises RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('method', 'gather', 'float32'):
        'other (2/7): AssertionError: ndgrad raises RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('method', 'gather', 'float64'):
        'other (2/7): AssertionError: ndgrad raises RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('method', 'hash_tensor', 'float32'):
        'an absent name (8/8): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.Tensor.hash_tensor',
    ('method', 'hash_tensor', 'float64'):
        'an absent name (8/8): AssertionError: ndgrad raises AttributeError: ndgrad has no torch.Tensor.hash_tensor',
    ('method', 'index_reduce.amax', 'float32'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('method', 'index_reduce.amax', 'float64'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('method', 'index_reduce.amin', 'float32'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('method', 'index_reduce.amin', 'float64'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('method', 'index_reduce.mean', 'float32'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('method', 'index_reduce.mean', 'float64'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('method', 'index_reduce.prod', 'float32'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('method', 'index_reduce.prod', 'float64'):
        'other (2/8): AssertionError: ndgrad raises IndexError: list assignment index out of range',
    ('method', 'logcumsumexp', 'complex128'):
        "other (4/6): AssertionError: ndgrad raises TypeError: ufunc 'logaddexp' not supported for the input types, and the inputs c",
    ('method', 'logsumexp', 'complex128'):
        "values differ from torch's (8/8): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result Mismatched elements: 1 / 1 (100%) Max abs",
    ('method', 'lu', 'complex128'):
        'zero-size tensors (1/8): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 result[0] Mismatched elements: 14 / 30 (46.7%) F',
    ('method', 'matmul', 'complex128'):
        "zero-size tensors (1/8): AssertionError: ndgrad raises RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('method', 'matmul', 'float32'):
        "zero-size tensors (1/8): AssertionError: ndgrad raises RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
    ('method', 'matmul', 'float64'):
        "zero-size tensors (1/8): AssertionError: ndgrad raises RuntimeError: shape '[-1, 0]' is invalid for input of size 0",
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
    ('method', 'renorm', 'complex128'):
        'complex support (4/4): AssertionError: ndgrad raises RuntimeError: renorm: Expected a real-valued input but got complex',
    ('method', 'take_along_dim', 'complex128'):
        'other (1/5): AssertionError: ndgrad raises RuntimeError: index -1 is out of bounds for dimension 1 with size 5',
    ('method', 'take_along_dim', 'float32'):
        'other (1/5): AssertionError: ndgrad raises RuntimeError: index -1 is out of bounds for dimension 1 with size 5',
    ('method', 'take_along_dim', 'float64'):
        'other (1/5): AssertionError: ndgrad raises RuntimeError: index -1 is out of bounds for dimension 1 with size 5',
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
    ('vmap', 'gather', 'complex128'):
        'other (1/4): RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('vmap', 'gather', 'float64'):
        'other (1/4): RuntimeError: gather(): Expected dtype int32/int64 for index',
    ('vmap', 'gradient', 'complex128'):
        'other (2/4): TypeError: unsupported scalar type NoneType',
    ('vmap', 'gradient', 'float64'):
        'other (2/4): TypeError: unsupported scalar type NoneType',
    ('vmap', 'index_put', 'complex128'):
        'zero-size tensors (2/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 30 / 75 (40',
    ('vmap', 'index_put', 'float64'):
        'zero-size tensors (2/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 30 / 75 (40',
    ('vmap', 'index_reduce.amax', 'float64'):
        'other (2/4): IndexError: list assignment index out of range',
    ('vmap', 'index_reduce.amin', 'float64'):
        'other (2/4): IndexError: list assignment index out of range',
    ('vmap', 'index_reduce.mean', 'float64'):
        'other (2/4): IndexError: list assignment index out of range',
    ('vmap', 'index_reduce.prod', 'float64'):
        'other (2/4): IndexError: list assignment index out of range',
    ('vmap', 'linalg.cholesky_ex', 'complex128'):
        'zero-size tensors (4/4): AssertionError: Arrays are not equal vmap vs loop[1] Mismatched elements: 3 / 3 (100%) Mismatch at indices: [0',
    ('vmap', 'linalg.cholesky_ex', 'float64'):
        'zero-size tensors (4/4): AssertionError: Arrays are not equal vmap vs loop[1] Mismatched elements: 3 / 3 (100%) Mismatch at indices: [0',
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
    ('vmap', 'linalg.lu_factor', 'complex128'):
        "zero-size tensors (1/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 vmap vs torch's vmap[0] Mismatched elements: 42 ",
    ('vmap', 'linalg.lu_solve', 'complex128'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 36 / 36 (10',
    ('vmap', 'logcumsumexp', 'complex128'):
        "other (3/4): TypeError: ufunc 'logaddexp' not supported for the input types, and the inputs could not be safely coerced to ",
    ('vmap', 'logsumexp', 'complex128'):
        "zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 vmap vs torch's vmap[0] Mismatched elements: 3 /",
    ('vmap', 'lu', 'complex128'):
        "zero-size tensors (1/4): AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06 vmap vs torch's vmap[0] Mismatched elements: 42 ",
    ('vmap', 'lu_solve', 'complex128'):
        'zero-size tensors (2/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 36 / 36 (10',
    ('vmap', 'lu_unpack', 'complex128'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 12 / 27 (44',
    ('vmap', 'lu_unpack', 'float64'):
        'zero-size tensors (3/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 18 / 48 (37',
    ('vmap', 'masked.amax', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.amax',
    ('vmap', 'masked.amin', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.amin',
    ('vmap', 'masked.cumprod', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.cumprod',
    ('vmap', 'masked.cumprod', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.cumprod',
    ('vmap', 'masked.cumsum', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.cumsum',
    ('vmap', 'masked.cumsum', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.cumsum',
    ('vmap', 'masked.log_softmax', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.log_softmax',
    ('vmap', 'masked.logaddexp', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.logaddexp',
    ('vmap', 'masked.logsumexp', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.logsumexp',
    ('vmap', 'masked.logsumexp', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.logsumexp',
    ('vmap', 'masked.mean', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.mean',
    ('vmap', 'masked.mean', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.mean',
    ('vmap', 'masked.median', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.median',
    ('vmap', 'masked.norm', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.norm',
    ('vmap', 'masked.normalize', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.normalize',
    ('vmap', 'masked.normalize', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.normalize',
    ('vmap', 'masked.prod', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.prod',
    ('vmap', 'masked.prod', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.prod',
    ('vmap', 'masked.softmax', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.softmax',
    ('vmap', 'masked.softmin', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.softmin',
    ('vmap', 'masked.std', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.std',
    ('vmap', 'masked.std', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.std',
    ('vmap', 'masked.sum', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.sum',
    ('vmap', 'masked.sum', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.sum',
    ('vmap', 'masked.var', 'complex128'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.var',
    ('vmap', 'masked.var', 'float64'):
        'torch.masked is absent (4/4): AttributeError: ndgrad has no torch.masked.var',
    ('vmap', 'native_batch_norm', 'float64'):
        'zero-size tensors (3/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[1] Mismatched elements: 15 / 15 (10',
    ('vmap', 'native_group_norm', 'float64'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[1] Mismatched elements: 6 / 6 (100%',
    ('vmap', 'native_layer_norm', 'float64'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[1] Mismatched elements: 3 / 3 (100%',
    ('vmap', 'nn.functional.batch_norm', 'float64'):
        'other (1/4): IndexError: tuple index out of range',
    ('vmap', 'nn.functional.ctc_loss', 'float64'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 48 / 48 (10',
    ('vmap', 'nn.functional.embedding_bag', 'float64'):
        'zero-size tensors (4/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 30 / 30 (10',
    ('vmap', 'nn.functional.pad.replicate_negative', 'complex128'):
        "other (4/4): ValueError: index can't contain negative values",
    ('vmap', 'nn.functional.pad.replicate_negative', 'float64'):
        "other (4/4): ValueError: index can't contain negative values",
    ('vmap', 'nn.functional.poisson_nll_loss', 'float64'):
        'zero-size tensors (2/4): AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07 vmap vs loop[0] Mismatched elements: 12 / 15 (80',
    ('vmap', 'renorm', 'complex128'):
        'complex support (4/4): RuntimeError: renorm: Expected a real-valued input but got complex',
    ('vmap', 'tensordot', 'complex128'):
        'other (1/3): RuntimeError: contracted dimensions need to match, but first has size 1 in dim 0 and second has size 2 in dim ',
    ('vmap', 'tensordot', 'float64'):
        'other (1/3): RuntimeError: contracted dimensions need to match, but first has size 1 in dim 0 and second has size 2 in dim ',
    ('vmap', 'view_as_complex', 'float64'):
        'other (1/1): RuntimeError: Tensor must have a last dimension with stride 1',
}
