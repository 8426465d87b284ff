"""The kernels the Numba linear algebra calls (``tensorgraph.link.numba.linalg``): the LAPACK
routines ``np.linalg`` inside ``njit`` lacks, and ``np.linalg``'s own functions wrapped.

Numba's ``np.linalg`` has no triangular solve, no LU with its pivots, no ``expm``, and raises
on a matrix LAPACK refuses where an op must choose (NaN, or the op's error naming the node).
The routines here are the textbook algorithms LAPACK's reference routines run (``getrf``'s
partial pivoting picks the first largest entry, as ``idamax`` does; a zero pivot is reported,
not raised), so results agree with ``perform``'s scipy to rounding. Each works on one matrix
(``Blockwise`` calls it per item).

Why a module of compiled functions and not lines of each graph's generated module: Numba
compiles its ``np.linalg`` functions slowly (seconds each, per dtype), and a generated module
compiles everything it calls again. These functions are compiled once per signature and
cached on disk (``cache=True``); a graph's code only calls them (the generated module imports
this one as ``tg_kernels``, and its cache key includes a hash of this file, so an edit here
compiles the graphs again).
"""

from __future__ import annotations

import numba
import numpy as np

_kernel = numba.njit(cache=True, nogil=True, error_model="numpy")


@_kernel
def cholesky(a):
    """(the lower Cholesky factor of a's lower triangle, whether a is positive definite);
    NaN where it is not."""
    ok = True
    try:
        factor = np.linalg.cholesky(a)
    except Exception:
        factor = np.full(a.shape, np.nan, a.dtype)
        ok = False
    return factor, ok


@_kernel
def getrf(a):
    """LAPACK's getrf of an m x n matrix: (the packed factors L (unit) and U, the 0-based row
    swaps, whether no pivot is zero)."""
    lu = np.empty(a.shape, a.dtype)
    lu[:] = a
    m, n = lu.shape
    k = min(m, n)
    piv = np.zeros(k, np.int32)
    ok = True
    for j in range(k):
        p = j
        big = abs(lu[j, j])
        for i in range(j + 1, m):
            if abs(lu[i, j]) > big:
                big = abs(lu[i, j])
                p = i
        piv[j] = p
        if p != j:
            for c in range(n):
                t = lu[j, c]
                lu[j, c] = lu[p, c]
                lu[p, c] = t
        if lu[j, j] == 0:
            ok = False
            continue
        for i in range(j + 1, m):
            lu[i, j] /= lu[j, j]
            f = lu[i, j]
            for c in range(j + 1, n):
                lu[i, c] -= f * lu[j, c]
    return lu, piv, ok


@_kernel
def getrs(lu, piv, b, trans):
    """x with A x = b (A^T x = b when trans) from getrf's factors of A; b is n x r."""
    n, r = b.shape
    x = np.empty(b.shape, lu.dtype)
    x[:] = b
    if not trans:
        for i in range(n):
            p = piv[i]
            for c in range(r):
                t = x[i, c]
                x[i, c] = x[p, c]
                x[p, c] = t
        for i in range(n):
            for j in range(i):
                for c in range(r):
                    x[i, c] -= lu[i, j] * x[j, c]
        for i in range(n - 1, -1, -1):
            for j in range(i + 1, n):
                for c in range(r):
                    x[i, c] -= lu[i, j] * x[j, c]
            for c in range(r):
                x[i, c] /= lu[i, i]
        return x
    for i in range(n):
        for j in range(i):
            for c in range(r):
                x[i, c] -= lu[j, i] * x[j, c]
        for c in range(r):
            x[i, c] /= lu[i, i]
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            for c in range(r):
                x[i, c] -= lu[j, i] * x[j, c]
    for i in range(n - 1, -1, -1):
        p = piv[i]
        for c in range(r):
            t = x[i, c]
            x[i, c] = x[p, c]
            x[p, c] = t
    return x


@_kernel
def trsm(a, b, lower, trans, unit):
    """x with op(a) x = b (op: a, or a^T when trans), reading only a's lower (or upper)
    triangle, its diagonal taken as ones when unit; b is n x r."""
    n, r = b.shape
    x = np.empty(b.shape, a.dtype)
    x[:] = b
    forward = lower != trans
    for step in range(n):
        i = step if forward else n - 1 - step
        start = 0 if forward else i + 1
        stop = i if forward else n
        for j in range(start, stop):
            f = a[j, i] if trans else a[i, j]
            for c in range(r):
                x[i, c] -= f * x[j, c]
        if not unit:
            for c in range(r):
                x[i, c] /= a[i, i]
    return x


@_kernel
def pivot_rows(piv):
    """The row order LAPACK's row swaps piv (0-based, in order) make of 0, 1, ..., m - 1."""
    rows = np.arange(piv.shape[0]).astype(np.int64)
    for i in range(piv.shape[0]):
        j = piv[i]
        t = rows[i]
        rows[i] = rows[j]
        rows[j] = t
    return rows


@_kernel
def expm(a):
    """exp(a) by scaling and squaring with the degree-13 Pade approximant (Higham 2005),
    computed in float64."""
    b = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0)
    x = a.astype(np.float64)
    n = x.shape[0]
    norm = 0.0
    for j in range(n):
        norm = max(norm, np.sum(np.abs(x[:, j])))
    s = 0
    if norm > 5.371920351148152:
        s = int(np.ceil(np.log2(norm / 5.371920351148152)))
    x = x * 0.5 ** s
    eye = np.eye(n)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2
             + b[1] * eye)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 \
        + b[0] * eye
    result = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        result = result @ result
    return result


@_kernel
def eigh(a):
    """The eigenpairs of the symmetric matrix in a's lower triangle."""
    return np.linalg.eigh(a)


@_kernel
def eigvalsh(a):
    return np.linalg.eigvalsh(a)


@_kernel
def svd(a, full_matrices):
    return np.linalg.svd(a, full_matrices)


@_kernel
def qr(a):
    """The economic QR, both factors C-contiguous."""
    q, r = np.linalg.qr(a)
    return np.ascontiguousarray(q), np.ascontiguousarray(r)


@_kernel
def det(a):
    return np.linalg.det(a)


@_kernel
def slogdet(a):
    return np.linalg.slogdet(a)


@_kernel
def pinv(a, rcond):
    return np.linalg.pinv(a, rcond=rcond)


@_kernel
def lstsq(a, b, rcond):
    return np.linalg.lstsq(a, b, rcond=rcond)


@_kernel
def kron(a, b):
    return np.kron(a, b)
