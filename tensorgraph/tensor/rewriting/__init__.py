"""The tensor rewrites, registered into ``tensorgraph.rewriting.optdb`` on import.

Modes import this package on the first compile. One module per family: ``basic`` (constant
folding, useless ops), ``math`` (canonical add/mul chains), ``stabilize``, ``sigmoid`` (stable
products of sigmoids and exponentials), ``specialize``, ``tensordot`` (``TensorDot`` lowered to
``Dot``), ``shape`` (the shape feature, shape rewrites and run-time shape asserts), ``blas``,
``fusion``, ``gemv_pair`` (two products over one matrix with elementwise work between them, in
one pass), ``inplace`` and ``subtensor`` (gathers along one axis as ``AdvancedSubtensor1``,
useless ``Subtensor`` nodes removed), ``join`` (a join of one tensor removed, an axis input
that became constant fixed in the op), ``linalg`` (inverses turned into solves, determinants
of triangular factors, ``log(det)`` as ``slogdet``, ...).
"""

from tensorgraph.tensor.rewriting import basic  # noqa: F401
from tensorgraph.tensor.rewriting import math  # noqa: F401
from tensorgraph.tensor.rewriting import stabilize  # noqa: F401
from tensorgraph.tensor.rewriting import sigmoid  # noqa: F401
from tensorgraph.tensor.rewriting import blas  # noqa: F401
from tensorgraph.tensor.rewriting import specialize  # noqa: F401
from tensorgraph.tensor.rewriting import tensordot  # noqa: F401
from tensorgraph.tensor.rewriting import fusion  # noqa: F401
from tensorgraph.tensor.rewriting import gemv_pair  # noqa: F401
from tensorgraph.tensor.rewriting import inplace  # noqa: F401
from tensorgraph.tensor.rewriting import shape  # noqa: F401
from tensorgraph.tensor.rewriting import subtensor  # noqa: F401
from tensorgraph.tensor.rewriting import broadcast  # noqa: F401
from tensorgraph.tensor.rewriting import join  # noqa: F401
from tensorgraph.tensor.rewriting import linalg  # noqa: F401
