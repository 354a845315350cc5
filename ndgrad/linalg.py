"""ndgrad.linalg: torch.linalg's functions, implemented in ``ndgrad._ops``: products in
``matmul.py``, inverses and solves in ``solvers.py``, factorisations in ``decompositions.py``,
norms in ``norms.py``, the LDL factorisation in ``ldl.py``.

Decompositions return torch's named tuples (``Q, R = ndgrad.linalg.qr(A)``, ``.eigenvalues``);
failures on singular or non-positive-definite input raise ``LinAlgError`` (a RuntimeError)
with torch's wording.
"""

from ._ops import decompositions as _D
from ._ops import ldl as _LDL
from ._ops import matmul as _M
from ._ops import norms as _N
from ._ops import solvers as _S

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh",
    "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
    "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor",
    "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
    "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
    "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
    "vector_norm",
]

LinAlgError = _S.LinAlgError
inv = _S.linalg_inv
inv_ex = _S.linalg_inv_ex
solve = _S.linalg_solve
solve_ex = _S.linalg_solve_ex
det = _D.linalg_det
slogdet = _D.linalg_slogdet
cholesky = _D.linalg_cholesky
cholesky_ex = _D.linalg_cholesky_ex
qr = _D.linalg_qr
eigh = _D.linalg_eigh
eigvalsh = _D.linalg_eigvalsh
svd = _D.linalg_svd
svdvals = _D.linalg_svdvals
pinv = _S.linalg_pinv
lstsq = _S.linalg_lstsq
matrix_power = _M.linalg_matrix_power
multi_dot = _M.linalg_multi_dot
vector_norm = _N.linalg_vector_norm
matrix_norm = _N.linalg_matrix_norm
norm = _N.linalg_norm
cross = _M.linalg_cross
solve_triangular = _S.linalg_solve_triangular
cond = _N.linalg_cond
matrix_rank = _N.linalg_matrix_rank
vecdot = _M.linalg_vecdot
diagonal = _M.linalg_diagonal
matmul = _M.linalg_matmul
matrix_exp = _D.linalg_matrix_exp
eig = _D.linalg_eig
eigvals = _D.linalg_eigvals
lu = _D.linalg_lu
lu_factor = _D.linalg_lu_factor
lu_factor_ex = _D.linalg_lu_factor_ex
lu_solve = _D.linalg_lu_solve
tensorinv = _S.linalg_tensorinv
tensorsolve = _S.linalg_tensorsolve
vander = _M.linalg_vander
householder_product = _D.linalg_householder_product
ldl_factor = _LDL.linalg_ldl_factor
ldl_factor_ex = _LDL.linalg_ldl_factor_ex
ldl_solve = _LDL.linalg_ldl_solve
