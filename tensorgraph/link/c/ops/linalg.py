"""C of ``tensorgraph.tensor.linalg``'s factorizations, solvers, inverses, determinants and
matrix constructors: one ``ItemC`` per core op (``batched.py``), so the op's own nodes and
its ``Blockwise`` nodes both compute in C.

The LAPACK kernels are ``linalg_kernels.h`` (pasted for float32 and float64, reading any real
or integer input but float16; complex and float16 inputs, and configurations without LAPACK,
run ``perform``); their shape checks and the integer kernel of
``pivot_to_permutation`` are ``linalg.h``; ``kron`` and ``block_diag`` (any real or integer
dtype, no LAPACK) are written here per dtype. Problems a kernel reports come out with the
words of the op's ``perform`` (``tensorgraph.tensor.linalg.core.matrix_error``): "cholesky:
the matrix is not positive definite (at batch index 3)"; ``cholesky(on_error='nan')`` gives
that matrix NaN instead.
"""

from __future__ import annotations

from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.ops.batched import ItemC, items_support, register_item
from tensorgraph.link.c.ops.lapack import LapackItem, lapack_template, letter
from tensorgraph.link.c.ops import read_c
from tensorgraph.tensor.linalg.decomposition.cholesky import Cholesky
from tensorgraph.tensor.linalg.decomposition.lu import LU, LUFactor, PivotToPermutations
from tensorgraph.tensor.linalg.inverse import MatrixInverse, MatrixPinv, TensorInv
from tensorgraph.tensor.linalg.products import BlockDiagonal, KroneckerProduct
from tensorgraph.tensor.linalg.solvers import (
    CholeskySolve, Lstsq, LUSolve, Solve, SolveTriangular, TensorSolve,
)
from tensorgraph.tensor.linalg.summary import Det, SLogDet


def _linalg_support() -> str:
    return "#ifndef TG_LINALG_DEFINED\n#define TG_LINALG_DEFINED\n" + read_c("linalg.h") + \
        "\n#endif  /* TG_LINALG_DEFINED */\n"


class _Lapack(LapackItem):
    """A kernel of ``linalg_kernels.h``: ``tg_la_<letter>_<name>``, computing in the dtype of
    output ``float_output``; shapes ``tg_la_shapes_<name>`` (``linalg.h``)."""

    name = ""
    float_output = 0

    def kernel(self, op, core_node):
        dtype = core_node.outputs[self.float_output].type.dtype
        return f"tg_la_{letter(dtype, core_node)}_{self.name}"

    def shapes(self, op, core_node):
        return f"tg_la_shapes_{self.name}"

    def support_code(self, op, core_node):
        return (super().support_code(op, core_node) + _linalg_support() +
                "#ifndef TG_LINALG_KERNELS_DEFINED\n#define TG_LINALG_KERNELS_DEFINED\n" +
                lapack_template("linalg_kernels.h") + "\n#endif\n")


@register_item(Cholesky)
class CholeskyItem(_Lapack):
    what, name, problems = "cholesky", "cholesky", ("is not positive definite",)

    def params(self, op, core_node):
        return [op.lower, op.on_error == "nan"]


@register_item(SolveTriangular)
class SolveTriangularItem(_Lapack):
    what, name = "solve_triangular", "solve_triangular"
    problems = ("is singular (a zero on its diagonal)",)

    def params(self, op, core_node):
        return [op.trans, op.lower, op.unit_diagonal]   # trans 2 ('C') is 'T' for real


@register_item(CholeskySolve)
class CholeskySolveItem(_Lapack):
    what, name = "cho_solve", "cho_solve"

    def params(self, op, core_node):
        return [op.lower]


@register_item(Solve)
class SolveItem(_Lapack):
    what, name, problems = "solve", "solve", ("is singular", "is not positive definite")
    _DRIVERS = {"gen": 0, "sym": 1, "her": 1, "pos": 2, "tridiagonal": 3}

    def params(self, op, core_node):
        return [self._DRIVERS[op.assume_a], op.lower]


@register_item(LUSolve)
class LUSolveItem(_Lapack):
    what, name = "lu_solve", "lu_solve"
    problems = ("ValueError: a pivot is out of range (expected lu_factor's pivots)",)

    def params(self, op, core_node):
        return [op.trans]


@register_item(LUFactor)
class LUFactorItem(_Lapack):
    what, name, problems = "lu_factor", "lu_factor", ("is singular",)


@register_item(LU)
class LUItem(_Lapack):
    what, name, float_output = "lu", "lu", -1

    def params(self, op, core_node):
        return [op.permute_l, op.p_indices]


@register_item(MatrixInverse)
class InverseItem(_Lapack):
    what, name, problems = "inv", "inv", ("is singular",)


@register_item(Det)
class DetItem(_Lapack):
    what, name = "det", "det"


@register_item(SLogDet)
class SLogDetItem(_Lapack):
    what, name = "slogdet", "slogdet"


@register_item(MatrixPinv)
class PinvItem(_Lapack):
    what, name = "pinv", "pinv"
    problems = ("is too ill-conditioned (the SVD did not converge)",)

    def params(self, op, core_node):
        return [op.hermitian]


@register_item(Lstsq)
class LstsqItem(_Lapack):
    what, name = "lstsq", "lstsq"
    problems = ("is too ill-conditioned (the SVD did not converge)",)

    def finish(self, op, core_node):
        return "tg_la_finish_lstsq"


@register_item(TensorSolve)
class TensorSolveItem(_Lapack):
    what, name, problems = "tensorsolve", "tensorsolve", ("(as a square matrix) is singular",)

    def params(self, op, core_node):
        a, b = core_node.inputs
        return [b.type.ndim, a.type.ndim, *op._order(a.type.ndim)]


@register_item(TensorInv)
class TensorInvItem(_Lapack):
    what, name, problems = "tensorinv", "tensorinv", ("(as a square matrix) is singular",)

    def params(self, op, core_node):
        return [op.ind]


@register_item(PivotToPermutations)
class PivotsItem(ItemC):
    what = "pivot_to_permutation"
    problems = ("IndexError: a pivot is out of bounds for the number of rows",)

    def kernel(self, op, core_node):
        return "tg_la_pivot_to_permutation"

    def shapes(self, op, core_node):
        return "tg_la_shapes_pivots"

    def params(self, op, core_node):
        return [op.inverse]

    def support_code(self, op, core_node):
        return items_support() + _linalg_support()


def _storage(dtype: str) -> str:
    if dtype.startswith("complex"):
        raise NotImplementedError(f"no C for {dtype}")
    return cd.storage_type(dtype)


class _Constructor(ItemC):
    """Items of any real or integer dtype, no LAPACK: kernels written per dtype here."""

    def shapes(self, op, core_node):
        return f"tg_la_shapes_{self.name}"

    def support_code(self, op, core_node):
        return items_support() + _linalg_support() + self.kernel_code(op, core_node)

    def headers(self, op, core_node):
        return ["<string.h>"]


@register_item(KroneckerProduct)
class KronItem(_Constructor):
    """numpy's ``kron`` of two matrices: each product in the output dtype (numpy's multiply:
    integers wrap, a float16 product is rounded from the exact float product)."""

    what, name = "kron", "kron"

    def kernel(self, op, core_node):
        return "tg_la_kron_" + "_".join(v.type.dtype for v in core_node.inputs +
                                        core_node.outputs)

    def kernel_code(self, op, core_node):
        (a, b), (z,) = core_node.inputs, core_node.outputs
        ta, tb, tz = (_storage(v.type.dtype) for v in (a, b, z))
        za, zb = (cd.cast(f"(({cd.compute_type(v.type.dtype)})x{s})", v.type.dtype, z.type.dtype)
                  for v, s in ((a, "a"), (b, "b")))
        product = cd.round_to(f"{za} * {zb}", z.type.dtype)
        name = self.kernel(op, core_node)
        return f"""
#ifndef {name.upper()}_DEFINED
#define {name.upper()}_DEFINED
static TG_NOINLINE int {name}(tg_item *it)
{{
    const tg_array *A = it->in[0], *B = it->in[1];
    const int64_t m = A->shape[0], n = A->shape[1], p = B->shape[0], q = B->shape[1];
    {tz} *o = ({tz} *)it->out[0]->data;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {{
            const {ta} xa = *(const {ta} *)(A->data + i * A->strides[0] + j * A->strides[1]);
            for (int64_t k = 0; k < p; k++)
                for (int64_t l = 0; l < q; l++) {{
                    const {tb} xb = *(const {tb} *)(B->data + k * B->strides[0] +
                                                     l * B->strides[1]);
                    o[(i * p + k) * (n * q) + j * q + l] = ({tz})({product});
                }}
        }}
    return 0;
}}
#endif
"""


@register_item(BlockDiagonal)
class BlockDiagItem(_Constructor):
    """scipy's ``block_diag``: zeros, each matrix cast to the output dtype on the diagonal."""

    what, name = "block_diag", "block_diag"

    def params(self, op, core_node):
        return [op.n_inputs]

    def kernel(self, op, core_node):
        return "tg_la_block_diag_" + "_".join(v.type.dtype for v in core_node.inputs +
                                              core_node.outputs)

    def kernel_code(self, op, core_node):
        (z,) = core_node.outputs
        tz = _storage(z.type.dtype)
        copies = []
        for k, v in enumerate(core_node.inputs):
            t = _storage(v.type.dtype)
            value = cd.cast(f"(({cd.compute_type(v.type.dtype)})*(const {t} *)"
                            f"(X->data + i * X->strides[0] + j * X->strides[1]))",
                            v.type.dtype, z.type.dtype)
            copies.append(f"""
    {{
        const tg_array *X = it->in[{k}];
        for (int64_t i = 0; i < X->shape[0]; i++)
            for (int64_t j = 0; j < X->shape[1]; j++)
                o[(r + i) * cols + c + j] = ({tz})({value});
        r += X->shape[0]; c += X->shape[1];
    }}""")
        name = self.kernel(op, core_node)
        return f"""
#ifndef {name.upper()}_DEFINED
#define {name.upper()}_DEFINED
static TG_NOINLINE int {name}(tg_item *it)
{{
    {tz} *o = ({tz} *)it->out[0]->data;
    const int64_t rows = it->out[0]->shape[0], cols = it->out[0]->shape[1];
    memset(o, 0, (size_t)(rows * cols) * sizeof({tz}));
    int64_t r = 0, c = 0;
    {"".join(copies)}
    return 0;
}}
#endif
"""
