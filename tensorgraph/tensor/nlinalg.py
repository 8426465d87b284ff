"""PyTensor's ``pytensor.tensor.nlinalg`` names (numpy's linear algebra), kept so that code
written against it ports by changing the import; they live in ``tensorgraph.tensor.linalg``
(PyTensor 3 deprecates this module the same way)."""

from tensorgraph.tensor.linalg import (  # noqa: F401
    SVD, Det, Eig, Eigh, KroneckerProduct, Lstsq, MatrixInverse, MatrixPinv, SLogDet, det, eig,
    eigh, inv, kron, lstsq, matrix_dot, matrix_inverse, matrix_power, norm, pinv, slogdet, svd,
    tensorinv, tensorsolve, trace,
)

__all__ = ["det", "eig", "eigh", "inv", "kron", "lstsq", "matrix_dot", "matrix_inverse",
           "matrix_power", "norm", "pinv", "slogdet", "svd", "tensorinv", "tensorsolve", "trace"]
