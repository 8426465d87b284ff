"""Matrix factorizations (PyTensor's ``pytensor.tensor.linalg.decomposition``): Cholesky,
LU, QR, SVD, eigendecompositions and Schur forms, one module each; each op computes on one
matrix with numpy / scipy and is batched by ``Blockwise``. The gradients are graphs of the
other linalg ops, so they batch and differentiate again.
"""

from tensorgraph.tensor.linalg.decomposition.cholesky import Cholesky, cholesky  # noqa: F401
from tensorgraph.tensor.linalg.decomposition.eigen import (  # noqa: F401
    Eig, Eigh, Eigvalsh, GeneralizedEigh, eig, eigh, eigvalsh,
)
from tensorgraph.tensor.linalg.decomposition.lu import (  # noqa: F401
    LU, LUFactor, PivotToPermutations, lu, lu_factor, pivot_to_permutation,
)
from tensorgraph.tensor.linalg.decomposition.qr import QR, qr  # noqa: F401
from tensorgraph.tensor.linalg.decomposition.schur import (  # noqa: F401
    QZ, Schur, ordqz, qz, schur,
)
from tensorgraph.tensor.linalg.decomposition.svd import SVD, svd  # noqa: F401
