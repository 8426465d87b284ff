"""The checks of the products the traced back ends (JAX, PyTorch) share: the shapes a ``Dot``,
``TensorDot``, ``MatMul``, ``Gemv`` or ``Gemm`` needs of its operands, with ``perform``'s
messages, and the BLAS-style scaled sums written once against the array library (``xp``).

Split from ``traced_shape`` (sizes known while tracing) so each module has one job; each back
end's ``dot`` module calls these with its own array library.
"""

from __future__ import annotations

__all__ = ["check_inner", "check_tensordot", "check_matmul", "gemv_mismatch", "check_gemv",
           "check_gemm", "scaled_sum", "gemv_result"]


def check_inner(sa, sb, what: str = "dot") -> None:
    """The last dimension of ``sa`` is the first of ``sb``, or ValueError."""
    if sa[-1] != sb[0]:
        raise ValueError(f"{what}: inner dimensions differ: shapes {tuple(sa)} and {tuple(sb)} "
                         f"({sa[-1]} != {sb[0]})")


def check_tensordot(op, sa, sb) -> None:
    """The axes a ``TensorDot`` sums over have the same lengths, or ValueError."""
    for ia, ib in zip(op.axes_a, op.axes_b):
        if sa[ia] != sb[ib]:
            raise ValueError(f"tensordot: axis {ia} of the first input (shape {sa}) and axis "
                             f"{ib} of the second (shape {sb}) have different lengths "
                             f"({sa[ia]} != {sb[ib]})")


def check_matmul(node, sa, sb) -> None:
    """A ``MatMul``'s inner dimensions agree and its batch dimensions broadcast (size 1 only
    where the type says so), or ValueError."""
    if sa[-1] != sb[-2]:
        raise ValueError(f"matmul: inner dimensions differ: shapes {sa} and {sb} "
                         f"({sa[-1]} != {sb[-2]})")
    for d, (x, y) in enumerate(zip(sa[:-2], sb[:-2])):
        if x == y:
            continue
        for var, size in zip(node.inputs, (x, y)):
            if size == 1 and var.type.shape[d] != 1:
                raise ValueError(f"matmul: {var} has size 1 in batch dimension {d} at run "
                                 f"time but its type {var.type} does not declare it "
                                 f"broadcastable; shapes {sa} and {sb}")
        if x != 1 and y != 1:
            raise ValueError(f"matmul: batch dimension {d} differs: shapes {sa} and {sb}")


def gemv_mismatch(sy, sA, sx) -> str:
    return f"Gemv: shapes do not match: y {sy}, A {sA}, x {sx}"


def check_gemv(sy, sA, sx) -> None:
    if sA[1] != sx[0]:
        raise ValueError(gemv_mismatch(sy, sA, sx))


def check_gemm(sz, sa, sb) -> None:
    if sa[1] != sb[0]:
        raise ValueError(f"Gemm: shapes do not match: z {sz}, a {sa}, b {sb}")


def scaled_sum(xp, alpha, product, beta, y):
    """``alpha * product + beta * y``, with ``y`` not read where ``beta == 0`` (as BLAS);
    ``xp``: the array library (its ``where``)."""
    scaled = alpha * product
    return xp.where(beta == 0, scaled, scaled + beta * y)


def gemv_result(xp, alpha, product, beta, y, shapes, runtime_check, given_beta=None):
    """``alpha * product + beta * y`` of a ``Gemv`` (``shapes``: y's, A's, x's). A ``y`` that
    does not fit must not be read: then ``beta`` (as given, before any cast) must be 0, checked
    when the call runs if it is known only then."""
    sy, sA, sx = shapes
    if sy != (sA[0],):
        runtime_check((beta if given_beta is None else given_beta) != 0, ValueError,
                      gemv_mismatch(sy, sA, sx))
        return alpha * product
    return scaled_sum(xp, alpha, product, beta, y)
