"""Linear algebra (``tensorgraph.tensor.linalg``, PyTensor's ``pytensor.tensor.linalg``):
factorizations, solvers, inverses, determinants, norms and matrix functions.

Each op computes on one matrix with numpy / scipy (its ``perform``, the reference) and is
batched over leading axes by ``Blockwise``, as numpy's ``linalg``: ``det`` of a (10, 3, 3)
stack is ten determinants. The rewrites that simplify their graphs are in
``tensorgraph.tensor.rewriting.linalg``; docs/linalg.md lists what exists, the error rules
and what the back ends (C, JAX, NUMBA, PYTORCH) still lack.
"""

from tensorgraph.tensor.linalg.decomposition import (  # noqa: F401
    LU, QR, QZ, SVD, Cholesky, Eig, Eigh, Eigvalsh, GeneralizedEigh, LUFactor,
    PivotToPermutations, Schur, cholesky, eig, eigh, eigvalsh, lu, lu_factor, ordqz,
    pivot_to_permutation, qr, qz, schur, svd,
)
from tensorgraph.tensor.linalg.inverse import (  # noqa: F401
    MatrixInverse, MatrixPinv, TensorInv, inv, matrix_inverse, pinv, tensorinv,
)
from tensorgraph.tensor.linalg.products import (  # noqa: F401
    BlockDiagonal, Expm, KroneckerProduct, block_diag, expm, kron, matrix_dot, matrix_power,
)
from tensorgraph.tensor.linalg.solvers import (  # noqa: F401
    CholeskySolve, Lstsq, LUSolve, Solve, SolveBase, SolveDiscreteARE, SolveTriangular,
    TensorSolve, cho_solve, lstsq, lu_solve, solve, solve_continuous_lyapunov, solve_discrete_are,
    solve_discrete_lyapunov, solve_sylvester, solve_triangular, tensorsolve,
)
from tensorgraph.tensor.linalg.summary import Det, SLogDet, det, norm, slogdet, trace  # noqa: F401

__all__ = [
    "block_diag", "cho_solve", "cholesky", "det", "eig", "eigh", "eigvalsh", "expm", "inv",
    "kron", "lstsq", "lu", "lu_factor", "lu_solve", "matrix_dot", "matrix_power", "norm",
    "ordqz", "pinv", "pivot_to_permutation", "qr", "qz", "schur", "slogdet", "solve",
    "solve_continuous_lyapunov", "solve_discrete_are", "solve_discrete_lyapunov",
    "solve_sylvester", "solve_triangular", "svd", "tensorinv", "tensorsolve", "trace",
]
