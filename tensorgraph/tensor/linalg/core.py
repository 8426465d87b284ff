"""What every linear algebra op shares: the dtype rule, input checks, the one error wording,
the gradient of an op that reads one triangle, and the batching of a per-matrix op (or of a
graph of them).

Each op of ``tensorgraph.tensor.linalg`` computes on one matrix (its ``perform`` is the
numpy / scipy reference) and is batched over leading axes by wrapping it in a ``Blockwise``
with a gufunc signature, as numpy's ``linalg`` and PyTensor do: ``cholesky`` of a
(5, 3, 3) stack is five Cholesky factorizations.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.op import Op
from tensorgraph.graph.replace import vectorize_graph
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.blockwise import Blockwise
from tensorgraph.tensor.creation import eye, tril, triu
from tensorgraph.tensor.type import TensorType


def linalg_dtype(*dtypes: str) -> str:
    """The dtype LAPACK computes in for inputs of ``dtypes`` (PyTensor's rule): float32 for
    float16/float32 and for integers of at most 16 bits, float64 for everything wider,
    complex kept (complex64 or complex128), then numpy's promotion between the inputs."""

    def lapack(dtype):
        dt = np.dtype(dtype)
        if dt.kind == "c":
            return np.dtype("complex64" if dt.itemsize <= 8 else "complex128")
        wide = dt.kind == "f" and dt.itemsize > 4 or dt.kind in "iub" and dt.itemsize > 2
        return np.dtype("float64" if wide else "float32")

    return np.result_type(*(lapack(d) for d in dtypes)).name


def real_dtype(dtype: str) -> str:
    """The real dtype of the same precision (singular values, eigenvalues of a Hermitian
    matrix, norms and log-determinants are real whatever the input)."""
    dt = np.dtype(dtype)
    return np.finfo(dt).dtype.name if dt.kind == "c" else dt.name


def transposed(x):
    """The transpose of a core (2-d) variable (gradient formulas read better with it)."""
    return x.T


def eye_like(x):
    """The identity matrix of a square core variable's size and dtype."""
    return eye(x.shape[0], dtype=x.dtype)


def as_matrix(x, what: str, square: bool = False):
    """``x`` as a 2-d tensor for the per-matrix op ``what``, with a clear error otherwise (a
    static non-square shape is refused when ``square``)."""
    x = as_tensor_variable(x)
    if x.type.ndim != 2:
        raise TypeError(f"{what}: expected a matrix (2-d tensor), got {x} ({x.type})")
    if square:
        m, n = x.type.shape
        if m is not None and n is not None and m != n:
            raise ValueError(f"{what}: expected a square matrix, got {x} of static shape "
                             f"({m}, {n})")
    return x


def check_square(what: str, value) -> None:
    """Refuse a non-square matrix at run time (a ValueError naming the shape)."""
    if value.ndim != 2 or value.shape[0] != value.shape[1]:
        raise ValueError(f"{what}: expected a square matrix, got shape {value.shape}")


def matrix_error(what: str, problem: str) -> np.linalg.LinAlgError:
    """numpy's LinAlgError for a matrix the op cannot handle: ``"cholesky: the matrix is not
    positive definite"``. ``Blockwise`` adds the batch index, the linker the user's line."""
    return np.linalg.LinAlgError(f"{what}: the matrix {problem}")


def batched(core_op: Op) -> Blockwise:
    """``core_op`` batched over leading axes, as its ``gufunc_signature`` says (PyTensor's
    attribute: ``'(m,m),(m,n)->(m,n)'``, the core dimensions of each input and output)."""
    return Blockwise(core_op, signature=core_op.gufunc_signature)


def fold_to_triangle(g, lower: bool):
    """The gradient ``g`` of a matrix's entries (a core, 2-d variable) for an op that reads
    only one triangle of it (``lower`` or upper): each entry of that triangle stands for
    itself and its mirror, the other triangle gets zero."""

    both = g + g.T
    diag = g * eye(g.shape[0], dtype=g.dtype)
    return (tril(both, -1) if lower else triu(both, 1)) + diag


def batched_graph(fn, inputs, what: str):
    """``fn``, a graph of linalg functions of matrices, applied to each matrix of the
    stacks ``inputs`` (leading axes broadcast): built once on 2-d stand-ins, then
    vectorized (its ops batch as they do: ``solve`` through ``Blockwise``...)."""
    inputs = [matrix_input(x, 2, what) for x in inputs]
    if all(x.type.ndim == 2 for x in inputs):
        return fn(*inputs)
    core = [TensorType(x.type.dtype, x.type.shape[-2:])() for x in inputs]
    return vectorize_graph(fn(*core), dict(zip(core, inputs)))


def matrix_input(x, core_ndim: int, what: str):
    """``x`` as a tensor with at least ``core_ndim`` dimensions (the batched functions'
    check, naming the function)."""
    x = as_tensor_variable(x)
    if x.type.ndim < core_ndim:
        kind = "a matrix" if core_ndim == 2 else "a vector"
        raise TypeError(f"{what}: expected {kind} or a stack of them (at least {core_ndim}-d), "
                        f"got {x} ({x.type})")
    return x
