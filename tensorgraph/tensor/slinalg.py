"""PyTensor's ``pytensor.tensor.slinalg`` names (scipy's linear algebra), kept so that code
written against it ports by changing the import; they live in ``tensorgraph.tensor.linalg``
(PyTensor 3 deprecates this module the same way)."""

from tensorgraph.tensor.linalg import (  # noqa: F401
    LU, QR, BlockDiagonal, Cholesky, CholeskySolve, Eigvalsh, Expm, LUFactor, PivotToPermutations,
    Solve, SolveBase, SolveTriangular, block_diag, cho_solve, cholesky, eigvalsh, expm, lu,
    lu_factor, lu_solve, pivot_to_permutation, qr, solve, solve_continuous_lyapunov,
    solve_discrete_lyapunov, solve_triangular,
)

__all__ = ["block_diag", "cho_solve", "cholesky", "eigvalsh", "expm", "lu", "lu_factor",
           "lu_solve", "pivot_to_permutation", "qr", "solve", "solve_continuous_lyapunov", "solve_discrete_lyapunov",
           "solve_triangular"]
