"""PyTensor's ``pytensor.tensor.slinalg`` names (scipy's linear algebra), kept so that code
written against it ports by changing the import. They live in ``tensorgraph.tensor.linalg``;
reading one here warns (a DeprecationWarning), as PyTensor 3 does for this module."""

from tensorgraph.tensor.linalg.moved import moved_names

__getattr__, __dir__ = moved_names(__name__, (
    "LU", "QR", "BlockDiagonal", "Cholesky", "CholeskySolve", "Eigvalsh", "Expm", "LUFactor",
    "PivotToPermutations", "Solve", "SolveBase", "SolveTriangular", "block_diag", "cho_solve",
    "cholesky", "eigvalsh", "expm", "lu", "lu_factor", "lu_solve", "pivot_to_permutation",
    "qr", "QZ", "qz", "ordqz", "Schur", "schur", "solve", "solve_discrete_are", "solve_sylvester",
    "solve_continuous_lyapunov", "solve_discrete_lyapunov", "solve_triangular"))
