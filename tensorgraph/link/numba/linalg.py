"""Numba for ``Blockwise`` and the linear algebra core ops (``tensorgraph.tensor.linalg``).

``Blockwise``: the batch axes of the inputs broadcast and are flattened, and the core op's
own lines (its registered implementation, written through ``NodeCode.inner``) run inside a
loop over the batch, each item's outputs stored into the stacked outputs; so any core op
with a Numba implementation is batched, its errors naming the node.

The core ops call the compiled, disk-cached kernels of ``tensorgraph.link.numba.kernels``:
``np.linalg`` inside ``njit`` where Numba has the function (``cholesky``, ``eigh``, ``svd``,
``qr``, ``det``, ``slogdet``, ``pinv``, ``lstsq``, ``kron``), LAPACK's reference algorithms
where it has not (triangular solves, LU with its pivots, ``expm``): each computes what
``perform`` computes, in the output dtype, and a matrix ``perform`` refuses raises the same
``LinAlgError``. ``eig`` (complex results: Numba's
``eig`` refuses a real matrix with complex eigenvalues), ``schur``, QZ,
``solve_discrete_are`` and ``qr``'s ``pivoting=True`` and ``mode='raw'`` are refused, as is
any complex dtype.
"""

from __future__ import annotations

from tensorgraph.link.numba import implementation, register
from tensorgraph.link.numba.elemwise import check_dtypes
from tensorgraph.link.numba.shape import scalar, tuple_of
from tensorgraph.tensor.blockwise import Blockwise
from tensorgraph.tensor.linalg.core import matrix_error
from tensorgraph.tensor.linalg.decomposition.cholesky import Cholesky
from tensorgraph.tensor.linalg.decomposition.eigen import Eigh, Eigvalsh, GeneralizedEigh
from tensorgraph.tensor.linalg.decomposition.lu import LU, LUFactor, PivotToPermutations
from tensorgraph.tensor.linalg.decomposition.qr import QR
from tensorgraph.tensor.linalg.decomposition.svd import SVD
from tensorgraph.tensor.linalg.inverse import MatrixInverse, MatrixPinv, TensorInv
from tensorgraph.tensor.linalg.products import BlockDiagonal, Expm, KroneckerProduct
from tensorgraph.tensor.linalg.solvers import (CholeskySolve, LUSolve, Lstsq, Solve,
                                               SolveTriangular, TensorSolve)
from tensorgraph.tensor.linalg.summary import Det, SLogDet

# ----------------------------------------------------------------------------------------------
# Pieces of generated code


def _cast(code, name: str, dtype: str) -> str:
    """A C-contiguous copy of ``name`` in ``dtype`` (the dtype LAPACK computes in)."""
    check_dtypes([dtype])
    cast = code.name("a")
    code.line(f"{cast} = np.asarray({name}).astype(np.{dtype})")
    return cast


def _fail_if(code, condition: str, what: str, problem: str) -> None:
    with code.block(f"if {condition}:"):
        code.line(code.fail("np.linalg.LinAlgError", str(matrix_error(what, problem))))


def _columns(b: str, b_ndim: int) -> str:
    """``b`` as a matrix of right-hand sides."""
    return f"{b}.reshape(({b}.shape[0], 1))" if b_ndim == 1 else b


def _from_columns(code, out: str, x: str, b_ndim: int) -> None:
    code.line(f"{out} = {x}[:, 0].copy()" if b_ndim == 1 else f"{out} = {x}")


def _triangle(a: str, lower: bool) -> str:
    """The matrix whose lower triangle is ``a``'s ``lower`` (or upper) one."""
    return a if lower else f"np.ascontiguousarray({a}.T)"


def _factor(code, a: str, what: str) -> tuple[str, str]:
    """getrf's factors and pivots of ``a``, failing the node when it is singular."""
    lu, piv, ok = code.name("lu"), code.name("piv"), code.name("ok")
    code.line(f"{lu}, {piv}, {ok} = tg_kernels.getrf({a})")
    _fail_if(code, f"not {ok}", what, "is singular")
    return lu, piv


def _getrs(code, lu: str, piv: str, b: str, trans: bool) -> str:
    return f"tg_kernels.getrs({lu}, {piv}, {b}, {trans})"


def _trsm(code, a: str, b: str, lower: bool, trans: bool, unit: bool = False) -> str:
    return f"tg_kernels.trsm({a}, {b}, {lower}, {trans}, {unit})"


def _cholesky_factor(code, a: str, lower: bool) -> tuple[str, str]:
    """(the lower factor of the matrix in ``a``'s ``lower`` triangle, whether it exists)."""
    factor, ok = code.name("l"), code.name("ok")
    code.line(f"{factor}, {ok} = tg_kernels.cholesky({_triangle(a, lower)})")
    return factor, ok


def _symmetric(a: str, lower: bool) -> str:
    part = "tril" if lower else "triu"
    return f"(np.{part}({a}) + np.{part}({a}, {-1 if lower else 1}).T)"


# ----------------------------------------------------------------------------------------------
# Factorizations


@register(Cholesky)
def numba_cholesky(op, node, code):
    (x,), (out,) = code.inputs, code.outputs
    a = _cast(code, x, node.outputs[0].dtype)
    factor, ok = _cholesky_factor(code, a, op.lower)
    if op.on_error == "raise":
        _fail_if(code, f"not {ok}", "cholesky", "is not positive definite")
    code.line(f"{out} = {factor}" if op.lower else f"{out} = np.ascontiguousarray({factor}.T)")


@register(LUFactor)
def numba_lu_factor(op, node, code):
    (x,), (out, pivots) = code.inputs, code.outputs
    lu, piv = _factor(code, _cast(code, x, node.outputs[0].dtype), "lu_factor")
    code.line(f"{out} = {lu}")
    code.line(f"{pivots} = {piv}")


@register(LU)
def numba_lu(op, node, code):
    """scipy's ``lu`` of an m x n matrix from getrf: ``a = P @ L @ U``."""
    (x,), outs = code.inputs, code.outputs
    dtype = node.outputs[-1].dtype
    a = _cast(code, x, dtype)
    lu, piv, ok, rows = code.name("lu"), code.name("piv"), code.name("ok"), code.name("rows")
    code.line(f"{lu}, {piv}, {ok} = tg_kernels.getrf({a})")
    m, n, k = code.name("m"), code.name("n"), code.name("k")
    code.line(f"{m}, {n} = {a}.shape")
    code.line(f"{k} = min({m}, {n})")
    code.line(f"{rows} = tg_kernels.pivot_rows(np.concatenate(({piv}.astype(np.int64), "
              f"np.arange({k}, {m}).astype(np.int64))))")
    lower, upper = code.name("l"), code.name("u")
    code.line(f"{lower} = np.tril({lu}[:, :{k}], -1) + np.eye({m}, {k}, 0, np.{dtype})")
    code.line(f"{upper} = np.triu({lu}[:{k}, :])")
    if op.permute_l:
        code.line(f"{outs[0]} = np.empty(({m}, {k}), np.{dtype})")
        with code.block(f"for i in range({m}):"):  # P @ L: row i of L goes to row rows[i]
            code.line(f"{outs[0]}[{rows}[i]] = {lower}[i]")
    elif op.p_indices:
        code.line(f"{outs[0]} = np.argsort({rows}).astype(np.int32)")
    else:
        code.line(f"{outs[0]} = np.zeros(({m}, {m}), np.{dtype})")
        with code.block(f"for i in range({m}):"):
            code.line(f"{outs[0]}[{rows}[i], i] = 1")
    if not op.permute_l:
        code.line(f"{outs[1]} = {lower}")
    code.line(f"{outs[-1]} = {upper}")


@register(PivotToPermutations)
def numba_pivot_to_permutation(op, node, code):
    (pivots,), (out,) = code.inputs, code.outputs
    rows = f"tg_kernels.pivot_rows({pivots})"
    code.line(f"{out} = {rows}" if op.inverse
              else f"{out} = np.argsort({rows}).astype(np.int64)")


@register(QR)
def numba_qr(op, node, code):
    """Numba's ``qr`` is the economic one; the full Q of a tall matrix comes from the QR of
    the matrix with columns of the identity appended (the first n reflectors are the
    matrix's own, so R is the same)."""
    if op.pivoting or op.mode == "raw":
        variant = "pivoting=True" if op.pivoting else "mode='raw'"
        raise NotImplementedError(f"qr({variant}) has no Numba implementation (Numba's linalg "
                                  "has no geqp3 or geqrf)")
    (x,), outs = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    a = _cast(code, x, dtype)
    m, n, q, r = code.name("m"), code.name("n"), code.name("q"), code.name("r")
    code.line(f"{m}, {n} = {a}.shape")
    if op.mode == "economic":
        code.line(f"{q}, {r} = tg_kernels.qr({a})")
    else:
        with code.block(f"if {m} > {n}:"):
            code.line(f"{q}, {r} = tg_kernels.qr(np.hstack(({a}, np.eye({m}, {m} - {n}, 0, "
                      f"np.{dtype}))))")
            code.line(f"{r} = np.ascontiguousarray({r}[:, :{n}])")
        with code.block("else:"):
            code.line(f"{q}, {r} = tg_kernels.qr({a})")
            code.line(f"{r} = np.ascontiguousarray({r})")
    if op.mode == "r":
        code.line(f"{outs[0]} = {r}")
    else:
        code.line(f"{outs[0]} = {q}")
        code.line(f"{outs[1]} = {r}")


@register(SVD)
def numba_svd(op, node, code):
    (x,), outs = code.inputs, code.outputs
    a = _cast(code, x, node.outputs[-1].dtype if op.compute_uv else node.outputs[0].dtype)
    u, s, vh = code.name("u"), code.name("s"), code.name("vh")
    code.line(f"{u}, {s}, {vh} = tg_kernels.svd({a}, {op.full_matrices})")
    if not op.compute_uv:
        code.line(f"{outs[0]} = {s}")
        return
    for out, value, var in zip(outs, (u, s, vh), node.outputs):
        code.line(f"{out} = {value}.astype(np.{var.dtype})")


@register(Eigh)
def numba_eigh(op, node, code):
    (x,), (w, v) = code.inputs, code.outputs
    a = _cast(code, x, node.outputs[1].dtype)
    code.line(f"{w}, {v} = tg_kernels.eigh({_triangle(a, op.lower)})")


@register(Eigvalsh)
def numba_eigvalsh(op, node, code):
    (x,), (w,) = code.inputs, code.outputs
    a = _cast(code, x, node.outputs[0].dtype)
    code.line(f"{w} = tg_kernels.eigvalsh({_triangle(a, op.lower)})")


@register(GeneralizedEigh)
def numba_generalized_eigh(op, node, code):
    """scipy's ``eigh(a, b)``: with ``b = L L^T``, the eigenpairs of ``L^-1 a L^-T``, the
    vectors mapped back by ``L^-T`` (so that ``v^T b v = I``, scipy's normalization)."""
    (x, y), (w, v) = code.inputs, code.outputs
    dtype = node.outputs[1].dtype
    a, b = _cast(code, x, dtype), _cast(code, y, dtype)
    factor, ok = _cholesky_factor(code, b, op.lower)
    _fail_if(code, f"not {ok}", "eigh", "b is not positive definite")
    left, c, vectors = code.name("left"), code.name("c"), code.name("y")
    code.line(f"{left} = {_trsm(code, factor, _symmetric(a, op.lower), True, False)}")
    code.line(f"{c} = {_trsm(code, factor, f'np.ascontiguousarray({left}.T)', True, False)}")
    code.line(f"{w}, {vectors} = tg_kernels.eigh({c})")
    code.line(f"{v} = {_trsm(code, factor, vectors, True, True)}")


# ----------------------------------------------------------------------------------------------
# Solvers and inverses


@register(Solve)
def numba_solve(op, node, code):
    (x, y), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    a, b = _cast(code, x, dtype), _columns(_cast(code, y, dtype), op.b_ndim)
    result = code.name("x")
    if op.assume_a == "pos":
        factor, ok = _cholesky_factor(code, a, op.lower)
        _fail_if(code, f"not {ok}", "solve", "is not positive definite")
        code.line(f"{result} = {_solve_with_lower_factor(code, factor, b)}")
    else:
        matrix = {"sym": _symmetric(a, op.lower), "her": _symmetric(a, op.lower),
                  "tridiagonal": f"np.triu(np.tril({a}, 1), -1)"}.get(op.assume_a, a)
        lu, piv = _factor(code, matrix, "solve")
        code.line(f"{result} = {_getrs(code, lu, piv, b, False)}")
    _from_columns(code, out, result, op.b_ndim)


def _solve_with_lower_factor(code, factor: str, b: str) -> str:
    """``A x = b`` for ``A = L L^T`` given ``L``: two triangular solves (L, then L^T)."""
    half = code.name("y")
    code.line(f"{half} = {_trsm(code, factor, b, True, False)}")
    return _trsm(code, factor, half, True, True)


@register(SolveTriangular)
def numba_solve_triangular(op, node, code):
    (x, y), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    a, b = _cast(code, x, dtype), _columns(_cast(code, y, dtype), op.b_ndim)
    if not op.unit_diagonal:
        _fail_if(code, f"np.any(np.diag({a}) == 0)", "solve_triangular",
                 "is singular (a zero on its diagonal)")
    result = code.name("x")
    code.line(f"{result} = {_trsm(code, a, b, op.lower, op.trans > 0, op.unit_diagonal)}")
    _from_columns(code, out, result, op.b_ndim)


@register(CholeskySolve)
def numba_cho_solve(op, node, code):
    (x, y), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    c, b = _cast(code, x, dtype), _columns(_cast(code, y, dtype), op.b_ndim)
    factor = c if op.lower else f"np.ascontiguousarray({c}.T)"  # L of A = L L^T
    result = code.name("x")
    code.line(f"{result} = {_solve_with_lower_factor(code, factor, b)}")
    _from_columns(code, out, result, op.b_ndim)


@register(LUSolve)
def numba_lu_solve(op, node, code):
    (x, pivots, y), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    lu, b = _cast(code, x, dtype), _columns(_cast(code, y, dtype), op.b_ndim)
    result = code.name("x")
    code.line(f"{result} = {_getrs(code, lu, pivots, b, op.trans)}")
    _from_columns(code, out, result, op.b_ndim)


@register(MatrixInverse)
def numba_inv(op, node, code):
    (x,), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    a = _cast(code, x, dtype)
    lu, piv = _factor(code, a, "inv")
    code.line(f"{out} = {_getrs(code, lu, piv, _eye(a, dtype), False)}")


@register(MatrixPinv)
def numba_pinv(op, node, code):
    """numpy's ``pinv`` (singular values under 1e-15 times the largest dropped); a
    Hermitian matrix through ``eigh``, as numpy does."""
    (x,), (out,) = code.inputs, code.outputs
    a = _cast(code, x, node.outputs[0].dtype)
    if not op.hermitian:
        code.line(f"{out} = tg_kernels.pinv({a}, rcond=1e-15)")
        return
    w, v, keep = code.name("w"), code.name("v"), code.name("keep")
    w_dtype = node.outputs[0].dtype
    code.line(f"{w}, {v} = tg_kernels.eigh({a})")
    code.line(f"{keep} = np.abs({w}) > 1e-15 * np.max(np.abs({w}))")
    inverse = f"np.where({keep}, 1 / np.where({keep}, {w}, 1), 0).astype(np.{w_dtype})"
    code.line(f"{out} = ({v} * {inverse}) @ np.ascontiguousarray({v}.T)")


def _eye(a: str, dtype: str) -> str:
    """The identity matrix of the square matrix ``a``'s size."""
    return f"np.eye({a}.shape[0], {a}.shape[0], 0, np.{dtype})"


def _shape_product(shape: str, dims) -> str:
    return " * ".join(f"{shape}[{d}]" for d in dims) or "1"


@register(TensorInv)
def numba_tensorinv(op, node, code):
    """numpy's ``tensorinv``: the inverse of ``a`` read as a square matrix."""
    (x,), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    ndim = node.inputs[0].ndim
    a = _cast(code, x, dtype)
    rows = _shape_product(f"{a}.shape", range(op.ind))
    matrix = code.name("m")
    code.line(f"{matrix} = {a}.reshape(({rows}, {_shape_product(f'{a}.shape', range(op.ind, ndim))}))")
    lu, piv = _factor(code, matrix, "tensorinv")
    inverse = _getrs(code, lu, piv, _eye(matrix, dtype), False)
    order = list(range(op.ind, ndim)) + list(range(op.ind))
    code.line(f"{out} = {inverse}.reshape({tuple_of(f'{a}.shape[{d}]' for d in order)})")


@register(TensorSolve)
def numba_tensorsolve(op, node, code):
    """numpy's ``tensorsolve``: ``op.axes`` moved to the end, ``a`` read as a square
    matrix."""
    (x, y), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    ndim, b_ndim = node.inputs[0].ndim, node.inputs[1].ndim
    a = code.name("t")
    order = op._order(ndim)
    code.line(f"{a} = np.ascontiguousarray({_cast(code, x, dtype)}.transpose("
              f"{tuple_of(order)}))")
    b = _cast(code, y, dtype)
    matrix = code.name("m")
    columns = _shape_product(f"{a}.shape", range(b_ndim, ndim))
    code.line(f"{matrix} = {a}.reshape(({b}.size, {columns}))")
    lu, piv = _factor(code, matrix, "tensorsolve")
    solution = _getrs(code, lu, piv, f"{b}.reshape(({b}.size, 1))", False)
    code.line(f"{out} = {solution}.reshape({tuple_of(f'{a}.shape[{d}]' for d in range(b_ndim, ndim))})")


@register(Lstsq)
def numba_lstsq(op, node, code):
    """numpy's ``lstsq``; ``rcond < 0`` is numpy's default, machine epsilon times the
    larger size (Numba's own -1 would be epsilon alone)."""
    (x, y, rcond), (solution, residuals, rank, values) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    a, b = _cast(code, x, dtype), _cast(code, y, dtype)
    cut, r = code.name("rcond"), code.name("rank")
    code.line(f"{cut} = float({rcond}[()])")
    with code.block(f"if {cut} < 0:"):
        code.line(f"{cut} = np.finfo(np.{dtype}).eps * max({a}.shape[0], {a}.shape[1])")
    code.line(f"{solution}, {residuals}, {r}, {values} = tg_kernels.lstsq({a}, {b}, "
              f"rcond={cut})")
    scalar(code, rank, "int32", r)


# ----------------------------------------------------------------------------------------------
# Summaries and products


@register(Det)
def numba_det(op, node, code):
    (x,), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    scalar(code, out, dtype, f"tg_kernels.det({_cast(code, x, dtype)})")


@register(SLogDet)
def numba_slogdet(op, node, code):
    (x,), (sign, logabs) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    s, value = code.name("s"), code.name("l")
    code.line(f"{s}, {value} = tg_kernels.slogdet({_cast(code, x, dtype)})")
    scalar(code, sign, dtype, s)
    scalar(code, logabs, node.outputs[1].dtype, value)


@register(Expm)
def numba_expm(op, node, code):
    (x,), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    check_dtypes([dtype])
    code.line(f"{out} = tg_kernels.expm({x}).astype(np.{dtype})")


@register(KroneckerProduct)
def numba_kron(op, node, code):
    (x, y), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    code.line(f"{out} = tg_kernels.kron({_cast(code, x, dtype)}, {_cast(code, y, dtype)})")


@register(BlockDiagonal)
def numba_block_diag(op, node, code):
    (out,) = code.outputs
    dtype = node.outputs[0].dtype
    check_dtypes([dtype])
    rows = " + ".join(f"{m}.shape[0]" for m in code.inputs)
    columns = " + ".join(f"{m}.shape[1]" for m in code.inputs)
    code.line(f"{out} = np.zeros(({rows}, {columns}), np.{dtype})")
    i, j = code.name("i"), code.name("j")
    code.line(f"{i} = 0")
    code.line(f"{j} = 0")
    for m in code.inputs:
        code.line(f"{out}[{i}:{i} + {m}.shape[0], {j}:{j} + {m}.shape[1]] = {m}")
        code.line(f"{i} += {m}.shape[0]")
        code.line(f"{j} += {m}.shape[1]")


# ----------------------------------------------------------------------------------------------
# Batching


@register(Blockwise)
def numba_blockwise(op, node, code):
    """The core op's lines in a loop over the flattened, broadcast batch (see the module
    docstring); an empty batch gives what ``perform`` gives (zeros, the core sizes the types
    know, the others 0)."""
    core = op._core_node(node.inputs)
    impl = implementation(op.core_op)
    if impl is None:
        raise NotImplementedError(f"Blockwise: its core op {op.core_op} has no Numba "
                                  "implementation")
    nb = node.outputs[0].ndim - core.outputs[0].ndim
    batch_ndims = [0 if nd is None else var.ndim - nd
                   for var, nd in zip(node.inputs, op.core_ndims)]
    sizes = [code.name("b") for _ in range(nb)]
    for d, size in enumerate(sizes):
        code.line(f"{size} = 1")
        for x, b in zip(code.inputs, batch_ndims):
            if d >= nb - b:  # a size other than 1 is the batch's (0 included)
                with code.block(f"if {x}.shape[{d - (nb - b)}] != 1:"):
                    code.line(f"{size} = {x}.shape[{d - (nb - b)}]")
    batch = tuple_of(sizes)
    count = code.name("n")
    code.line(f"{count} = {' * '.join(sizes)}")
    flat = []
    for x, b, var in zip(code.inputs, batch_ndims, node.inputs):
        if b == 0:
            flat.append(None)
            continue
        name, core_shape = code.name("f"), tuple_of(f"{x}.shape[{d}]" for d in range(b, var.ndim))
        code.line(f"{name} = np.ascontiguousarray(np.broadcast_to({x}, {batch} + {core_shape}))"
                  f".reshape(({count},) + {core_shape})")
        flat.append(name)
    stacked = [code.name("s") for _ in node.outputs]
    for name, var in zip(stacked, core.outputs):
        zeros = tuple_of(str(s or 0) for s in var.type.shape)
        code.line(f"{name} = np.zeros(({count},) + {zeros}, np.{var.dtype})")
    i = code.name("i")
    item_outputs = [code.name("o") for _ in node.outputs]
    with code.block(f"for {i} in range({count}):"):
        item_inputs = [x if f is None else f"{f}[{i}]" if nd else  # 0-d items stay arrays
                       f"{f}[{i}:{i} + 1].reshape(())"
                       for x, f, nd in zip(code.inputs, flat, op.core_ndims)]
        impl(op.core_op, core, code.inner(core, item_inputs, item_outputs))
        for name, item, var in zip(stacked, item_outputs, core.outputs):
            with code.block(f"if {i} == 0:"):
                code.line(f"{name} = np.empty(({count},) + np.shape({item}), np.{var.dtype})")
            code.line(f"{name}[{i}, ...] = {item}")
    for out, name, var in zip(code.outputs, stacked, core.outputs):
        core_shape = tuple_of(f"{name}.shape[{d + 1}]" for d in range(var.ndim))
        code.line(f"{out} = {name}.reshape({batch} + {core_shape})")
