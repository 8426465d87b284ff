"""PyTensor's ``pytensor.tensor.nlinalg`` names (numpy's linear algebra), kept so that code
written against it ports by changing the import. They live in ``tensorgraph.tensor.linalg``;
reading one here warns (a DeprecationWarning), as PyTensor 3 does for this module."""

from tensorgraph.tensor.linalg.moved import moved_names

__getattr__, __dir__ = moved_names(__name__, (
    "SVD", "Det", "Eig", "Eigh", "KroneckerProduct", "Lstsq", "MatrixInverse", "MatrixPinv",
    "SLogDet", "TensorInv", "TensorSolve", "det", "eig", "eigh", "inv", "kron", "lstsq", "matrix_dot", "matrix_inverse",
    "matrix_power", "norm", "pinv", "slogdet", "svd", "tensorinv", "tensorsolve", "trace"))
