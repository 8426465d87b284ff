"""The C side of matrix products: which BLAS generated modules link, and the C helpers that
``Dot``, ``Gemv``, ``Gemm`` and ``Dot22`` call.

``config.blas__ldflags`` decides the library:

* ``''`` (default): the OpenBLAS of the ``scipy-openblas32`` wheel (a dependency; its CBLAS
  symbols are prefixed ``scipy_cblas_``). If the wheel is missing, tensorgraph's own kernels are
  used and one short line says so, once per process.
* ``'none'``: tensorgraph's own kernels (no BLAS library at all).
* anything else: linker flags of a library exporting the standard CBLAS interface
  (``cblas_sgemv``, ...), e.g. ``'-lopenblas'`` or ``'-L/opt/blas/lib -lblis'``.

The wheel's OpenBLAS always runs on one thread (two OpenBLAS thread pools in one process,
numpy's and this one, fight over the cores). With ``config.openmp`` tensorgraph splits large
products across OpenMP threads itself (with the wheel or the own kernels; a library given in
``blas__ldflags`` keeps its own threading and is called from one thread).

The helpers work on ``tg_mat`` / ``tg_vec`` (a pointer, sizes and byte strides), so any
strides are accepted: operands whose layout BLAS takes (unit stride along one axis, the other a
multiple of it; any non-zero vector increment) are passed as they are, with BLAS's transpose
flag for column-major matrices; others are copied to a contiguous buffer first. Every product
*adds* ``alpha * op(A) op(B)`` into an output that the caller has already filled with
``beta * y`` (or zeros), which keeps BLAS's quick returns (empty inner dimension, ``alpha ==
0``) from changing the result: with ``alpha == 0`` the product is still computed and multiplied
by 0, so a nan or inf in it shows, as in numpy's ``alpha * dot(A, x)``.

The own kernels (no BLAS) are plain C that gcc vectorizes: ``gemv`` as row dot products (four
rows at a time) or column updates, ``gemm`` blocked over the inner and column dimensions with
a vectorized row update in the middle.
"""

from __future__ import annotations

import shlex
import warnings

from tensorgraph.link.c.openmp import THREADS_SUPPORT

#: bump when the C below changes
BLAS_C_VERSION = 5

_warned_missing: list[bool] = []


def blas_setup() -> dict:
    """What modules using BLAS need, from ``config.blas__ldflags``: ``prefix`` of the CBLAS
    symbols (None: own kernels), ``libraries``, ``library_dirs``, ``extra_compile_args``."""
    from tensorgraph.configdefaults import config

    flags = config.blas__ldflags.strip()
    empty = {"prefix": None, "libraries": [], "library_dirs": [], "extra_compile_args": []}
    if flags.lower() == "none":
        return empty
    if not flags:
        try:
            import scipy_openblas32
        except ImportError:
            if not _warned_missing:
                _warned_missing.append(True)
                warnings.warn("tensorgraph: scipy-openblas32 is not installed; matrix products "
                              "use tensorgraph's own (slower) C kernels", stacklevel=2)
            return empty
        return {"prefix": "scipy_cblas_", "libraries": [scipy_openblas32.get_library()],
                "library_dirs": [scipy_openblas32.get_lib_dir()], "extra_compile_args": []}
    setup = dict(empty, prefix="cblas_", libraries=[], library_dirs=[], extra_compile_args=[])
    for item in shlex.split(flags):
        if item.startswith("-l") and len(item) > 2:
            setup["libraries"].append(item[2:])
        elif item.startswith("-L") and len(item) > 2:
            setup["library_dirs"].append(item[2:])
        else:  # one command compiles and links, so linker flags (-Wl,...) may go here
            setup["extra_compile_args"].append(item)
    return setup


def support_code() -> str:
    """The C helpers (identical text in every op that uses them, so emitted once)."""
    setup = blas_setup()
    parts = [_COMMON, _BLAS_COMMON if setup["prefix"] else ""]
    if setup["prefix"] == "scipy_cblas_":
        parts.append(_ONE_THREAD)
    else:
        parts.append("#define tg_blas_threads() ((void)0)")
    # Products are split across OpenMP threads only where tensorgraph decides the library's
    # own threading (the wheel's OpenBLAS is kept on one thread; the own kernels have none).
    split = _openmp() and setup["prefix"] in (None, "scipy_cblas_")
    parts.append(THREADS_SUPPORT)
    parts.append(_SPLIT_COMMON.replace("TG_SPLIT_ON", str(int(split))))
    for ctype, s in (("float", "s"), ("double", "d")):
        template = _BLAS_KERNELS if setup["prefix"] else _OWN_KERNELS
        for text in (template, _SPLIT):
            parts.append(text.replace("TGT", ctype).replace("TGS", s)
                         .replace("CBLAS_", setup["prefix"] or ""))
    return "\n".join(parts)


def _openmp() -> bool:
    from tensorgraph.configdefaults import config

    return bool(config.openmp)


def version() -> tuple:
    """Part of the ops' ``c_code_cache_version`` (the library choice is in the config key)."""
    return (BLAS_C_VERSION,)


def c_type(dtype: str) -> str | None:
    """The C type of a BLAS dtype, None for dtypes BLAS does not do."""
    return {"float32": "float", "float64": "double"}.get(dtype)


def blas_letter(dtype: str) -> str:
    return {"float32": "s", "float64": "d"}[dtype]


_COMMON = r"""
/* ---- tensorgraph matrix-product helpers (tensorgraph/tensor/blas_c.py) ---- */
typedef struct { char *data; int64_t rows, cols, rs, cs; } tg_mat;  /* byte strides */
typedef struct { char *data; int64_t n, st; } tg_vec;

static inline tg_mat tg_mat_of(const tg_array *a)
{
    tg_mat m = { a->data, a->shape[0], a->shape[1], a->strides[0], a->strides[1] };
    return m;
}
static inline tg_mat tg_mat_t(const tg_array *a)   /* the transpose of a, as a view */
{
    tg_mat m = { a->data, a->shape[1], a->shape[0], a->strides[1], a->strides[0] };
    return m;
}
static inline tg_vec tg_vec_of(const tg_array *a)
{
    tg_vec v = { a->data, a->shape[0], a->strides[0] };
    return v;
}
/* A matrix whose elements lie C-contiguously: a copy when m does not already. */
static TG_COLD int tg_mat_contiguous(tg_ctx *ctx, tg_mat *m, size_t item, char **owned)
{
    *owned = NULL;
    if ((m->cols <= 1 || m->cs == (int64_t)item) &&
        (m->rows <= 1 || m->rs == m->cols * (int64_t)item)) {
        m->cs = (int64_t)item; m->rs = m->cols * (int64_t)item;
        return 0;
    }
    char *buf = (char *)malloc((size_t)(m->rows * m->cols) * item + 1);
    if (buf == NULL) return tg_error(ctx, "out of memory copying a matrix operand");
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++)
            memcpy(buf + (i * m->cols + j) * item, m->data + i * m->rs + j * m->cs, item);
    m->data = buf; m->cs = (int64_t)item; m->rs = m->cols * (int64_t)item;
    *owned = buf;
    return 0;
}
/* A vector with unit stride: a copy when v has not. */
static TG_COLD int tg_vec_contiguous(tg_ctx *ctx, tg_vec *v, size_t item, char **owned)
{
    *owned = NULL;
    if (v->n <= 1 || v->st == (int64_t)item) { v->st = (int64_t)item; return 0; }
    char *buf = (char *)malloc((size_t)v->n * item + 1);
    if (buf == NULL) return tg_error(ctx, "out of memory copying a vector operand");
    for (int64_t i = 0; i < v->n; i++) memcpy(buf + i * item, v->data + i * v->st, item);
    v->data = buf; v->st = (int64_t)item;
    *owned = buf;
    return 0;
}
"""

# CBLAS through a library: prototypes declared here (no header needed; the enums are ints:
# CblasRowMajor 101, CblasNoTrans 111, CblasTrans 112).
_BLAS_COMMON = r"""
typedef int tg_blasint;  /* scipy-openblas32 and standard CBLAS take 32-bit ints */
#define TG_BLAS_MAXINT 2147483647LL
"""

# The wheel's OpenBLAS runs on one thread (with config.openmp, tensorgraph splits products
# across OpenMP threads itself, see _SPLIT): its own thread pool and numpy's OpenBLAS pool in
# the same process compete for the cores (measured on 2 cores: a 128x784 @ 784x256 sgemm next
# to numpy's took 1-17 ms with both pools, 0.57 ms with one; the MLP step 6.7 ms with the
# wheel's threads against 1.4 ms on one thread).
_ONE_THREAD = r"""
void scipy_openblas_set_num_threads(int num_threads);
static TG_COLD void tg_blas_threads(void)
{
    static int done = 0;
    if (!done) { scipy_openblas_set_num_threads(1); done = 1; }
}
"""

_BLAS_KERNELS = r"""
TGT CBLAS_TGSdot(tg_blasint n, const TGT *x, tg_blasint incx, const TGT *y, tg_blasint incy);
void CBLAS_TGSgemv(int order, int trans, tg_blasint m, tg_blasint n, TGT alpha, const TGT *a,
                   tg_blasint lda, const TGT *x, tg_blasint incx, TGT beta, TGT *y,
                   tg_blasint incy);
void CBLAS_TGSgemm(int order, int transa, int transb, tg_blasint m, tg_blasint n,
                   tg_blasint k, TGT alpha, const TGT *a, tg_blasint lda, const TGT *b,
                   tg_blasint ldb, TGT beta, TGT *c, tg_blasint ldc);

/* How BLAS sees m (row-major order): 111/112 (as is / transposed) and the leading dimension,
 * or 0 when it cannot (then m is copied). */
static TG_COLD int tg_TGS_layout(const tg_mat *m, tg_blasint *ld)
{
    const int64_t item = (int64_t)sizeof(TGT);
    int64_t rs = m->rows <= 1 ? m->cols * item : m->rs;
    int64_t cs = m->cols <= 1 ? item : m->cs;
    if (cs == item && rs % item == 0 && rs / item >= (m->cols > 1 ? m->cols : 1) &&
        rs / item <= TG_BLAS_MAXINT) { *ld = (tg_blasint)(rs / item); return 111; }
    rs = m->rows <= 1 ? item : m->rs;
    cs = m->cols <= 1 ? m->rows * item : m->cs;
    if (rs == item && cs % item == 0 && cs / item >= (m->rows > 1 ? m->rows : 1) &&
        cs / item <= TG_BLAS_MAXINT) { *ld = (tg_blasint)(cs / item); return 112; }
    return 0;
}

/* BLAS's pointer and increment for v (the lowest address for negative increments), or 0 as
 * the increment when v needs a copy (broadcast or misaligned stride). */
static TG_COLD const TGT *tg_TGS_vec(const tg_vec *v, tg_blasint *inc)
{
    const int64_t item = (int64_t)sizeof(TGT);
    int64_t st = v->n <= 1 ? item : v->st;
    if (st == 0 || st % item != 0 || st / item > TG_BLAS_MAXINT || -st / item > TG_BLAS_MAXINT) {
        *inc = 0;
        return NULL;
    }
    *inc = (tg_blasint)(st / item);
    return (const TGT *)(st > 0 ? v->data : v->data + (v->n - 1) * st);
}

static TG_COLD int tg_TGS_fits(int64_t a, int64_t b, int64_t c)
{
    return a <= TG_BLAS_MAXINT && b <= TG_BLAS_MAXINT && c <= TG_BLAS_MAXINT;
}

static TGT tg_TGSdot(tg_ctx *ctx, tg_vec x, tg_vec y, int *err)
{
    tg_blasint ix, iy;
    char *ox = NULL, *oy = NULL;
    const TGT *px = tg_TGS_vec(&x, &ix), *py = tg_TGS_vec(&y, &iy);
    *err = 0;
    tg_blas_threads();
    if (x.n == 0) return 0;
    if (!tg_TGS_fits(x.n, 0, 0)) { *err = tg_error(ctx, "dot: vectors of %lld elements are "
        "too long for the 32-bit BLAS (set blas__ldflags=none)", (long long)x.n); return 0; }
    if (ix == 0) {
        if (tg_vec_contiguous(ctx, &x, sizeof(TGT), &ox)) { *err = -1; return 0; }
        px = (const TGT *)x.data; ix = 1;
    }
    if (iy == 0) {
        if (tg_vec_contiguous(ctx, &y, sizeof(TGT), &oy)) { free(ox); *err = -1; return 0; }
        py = (const TGT *)y.data; iy = 1;
    }
    TGT r = CBLAS_TGSdot((tg_blasint)x.n, px, ix, py, iy);
    free(ox); free(oy);
    return r;
}

/* y[i] += alpha * sum_j A[i, j] x[j] on the calling thread; y is contiguous with A.rows
 * elements. */
static int tg_TGSgemv1(tg_ctx *ctx, TGT alpha, tg_mat A, tg_vec x, TGT *y)
{
    if (A.rows == 0 || A.cols == 0) return 0;
    if (alpha == 0) {  /* 0 * (A x), so that nan and inf in the product show */
        TGT *t = (TGT *)calloc((size_t)A.rows, sizeof(TGT));
        if (t == NULL) return tg_error(ctx, "out of memory in gemv");
        int rc = tg_TGSgemv1(ctx, 1, A, x, t);
        for (int64_t i = 0; i < A.rows && rc == 0; i++) y[i] += alpha * t[i];
        free(t);
        return rc;
    }
    if (!tg_TGS_fits(A.rows, A.cols, 0))
        return tg_error(ctx, "gemv: a %lld x %lld matrix is too large for the 32-bit BLAS "
                        "(set blas__ldflags=none)", (long long)A.rows, (long long)A.cols);
    char *oa = NULL, *ox = NULL;
    tg_blasint lda, incx;
    int trans = tg_TGS_layout(&A, &lda);
    if (trans == 0) {
        if (tg_mat_contiguous(ctx, &A, sizeof(TGT), &oa)) return -1;
        trans = tg_TGS_layout(&A, &lda);
    }
    const TGT *px = tg_TGS_vec(&x, &incx);
    if (incx == 0) {
        if (tg_vec_contiguous(ctx, &x, sizeof(TGT), &ox)) { free(oa); return -1; }
        px = (const TGT *)x.data; incx = 1;
    }
    /* row-major (rows x cols) as is, or the transpose of a row-major (cols x rows) */
    if (trans == 111)
        CBLAS_TGSgemv(101, 111, (tg_blasint)A.rows, (tg_blasint)A.cols, alpha,
                      (const TGT *)A.data, lda, px, incx, 1, y, 1);
    else
        CBLAS_TGSgemv(101, 112, (tg_blasint)A.cols, (tg_blasint)A.rows, alpha,
                      (const TGT *)A.data, lda, px, incx, 1, y, 1);
    free(oa); free(ox);
    return 0;
}

/* C[i, j] += alpha * sum_p A[i, p] B[p, j] on the calling thread; C is row-major
 * (A.rows x B.cols) with ldc elements between rows. */
static int tg_TGSgemm1(tg_ctx *ctx, TGT alpha, tg_mat A, tg_mat B, TGT *C, int64_t ldc,
                       int accumulate)
{
    const int64_t m = A.rows, n = B.cols, k = A.cols;
    if (m == 0 || n == 0 || k == 0) {
        if (!accumulate)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) C[i * ldc + j] = 0;
        return 0;
    }
    if (alpha == 0) {
        TGT *t = (TGT *)calloc((size_t)(m * n), sizeof(TGT));
        if (t == NULL) return tg_error(ctx, "out of memory in gemm");
        int rc = tg_TGSgemm1(ctx, 1, A, B, t, n, 0);
        for (int64_t i = 0; i < m && rc == 0; i++)
            for (int64_t j = 0; j < n; j++)
                C[i * ldc + j] = (accumulate ? C[i * ldc + j] : 0) + alpha * t[i * n + j];
        free(t);
        return rc;
    }
    if (!tg_TGS_fits(m, n > ldc ? n : ldc, k))
        return tg_error(ctx, "gemm: matrices of %lld x %lld and %lld x %lld are too large for "
                        "the 32-bit BLAS (set blas__ldflags=none)", (long long)m, (long long)k,
                        (long long)k, (long long)n);
    char *oa = NULL, *ob = NULL;
    tg_blasint lda, ldb;
    int ta = tg_TGS_layout(&A, &lda), tb = tg_TGS_layout(&B, &ldb);
    if (ta == 0) {
        if (tg_mat_contiguous(ctx, &A, sizeof(TGT), &oa)) return -1;
        ta = tg_TGS_layout(&A, &lda);
    }
    if (tb == 0) {
        if (tg_mat_contiguous(ctx, &B, sizeof(TGT), &ob)) { free(oa); return -1; }
        tb = tg_TGS_layout(&B, &ldb);
    }
    CBLAS_TGSgemm(101, ta, tb, (tg_blasint)m, (tg_blasint)n, (tg_blasint)k, alpha,
                  (const TGT *)A.data, lda, (const TGT *)B.data, ldb, accumulate ? 1 : 0, C,
                  (tg_blasint)(ldc > 1 ? ldc : 1));
    free(oa); free(ob);
    return 0;
}
"""

_OWN_KERNELS = r"""
static TGT tg_TGSdot(tg_ctx *ctx, tg_vec x, tg_vec y, int *err)
{
    TGT acc = 0;
    *err = 0;
    (void)ctx;
    if (x.st == (int64_t)sizeof(TGT) && y.st == (int64_t)sizeof(TGT)) {
        const TGT *px = (const TGT *)x.data, *py = (const TGT *)y.data;
        #pragma omp simd reduction(+:acc)
        for (int64_t i = 0; i < x.n; i++) acc += px[i] * py[i];
    } else {
        for (int64_t i = 0; i < x.n; i++)
            acc += *(const TGT *)(x.data + i * x.st) * *(const TGT *)(y.data + i * y.st);
    }
    return acc;
}

/* y[i] += alpha * sum_j A[i, j] x[j] on the calling thread; y is contiguous with A.rows
 * elements. */
static int tg_TGSgemv1(tg_ctx *ctx, TGT alpha, tg_mat A, tg_vec x, TGT *y)
{
    const int64_t m = A.rows, n = A.cols, item = (int64_t)sizeof(TGT);
    if (m == 0 || n == 0) return 0;
    char *oa = NULL, *ox = NULL;
    if (tg_vec_contiguous(ctx, &x, sizeof(TGT), &ox)) return -1;
    const TGT *px = (const TGT *)x.data;
    if (m > 1 && A.rs == item) {
        /* columns contiguous: y += (alpha x[j]) A[:, j] */
        TGT *t = (TGT *)calloc((size_t)m, sizeof(TGT));
        if (t == NULL) { free(ox); return tg_error(ctx, "out of memory in gemv"); }
        for (int64_t j = 0; j < n; j++) {
            const TGT *col = (const TGT *)(A.data + j * A.cs);
            const TGT xj = px[j];
            #pragma omp simd
            for (int64_t i = 0; i < m; i++) t[i] += col[i] * xj;
        }
        #pragma omp simd
        for (int64_t i = 0; i < m; i++) y[i] += alpha * t[i];
        free(t);
        free(ox);
        return 0;
    }
    if (tg_mat_contiguous(ctx, &A, sizeof(TGT), &oa)) { free(ox); return -1; }
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) {  /* four rows share each load of x */
        const TGT *r0 = (const TGT *)(A.data + i * A.rs), *r1 = r0 + n, *r2 = r1 + n,
                  *r3 = r2 + n;
        TGT s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        #pragma omp simd reduction(+:s0, s1, s2, s3)
        for (int64_t j = 0; j < n; j++) {
            const TGT v = px[j];
            s0 += r0[j] * v; s1 += r1[j] * v; s2 += r2[j] * v; s3 += r3[j] * v;
        }
        y[i] += alpha * s0; y[i + 1] += alpha * s1; y[i + 2] += alpha * s2;
        y[i + 3] += alpha * s3;
    }
    for (; i < m; i++) {
        const TGT *r = (const TGT *)(A.data + i * A.rs);
        TGT s = 0;
        #pragma omp simd reduction(+:s)
        for (int64_t j = 0; j < n; j++) s += r[j] * px[j];
        y[i] += alpha * s;
    }
    free(oa); free(ox);
    return 0;
}

/* C[i, j] += alpha * sum_p A[i, p] B[p, j] on the calling thread; C is row-major (A.rows x
 * B.cols) with ldc elements between rows. Blocked over p and j so a block of B stays in cache
 * while every row of A goes by. */
static int tg_TGSgemm1(tg_ctx *ctx, TGT alpha, tg_mat A, tg_mat B, TGT *C, int64_t ldc,
                       int accumulate)
{
    const int64_t m = A.rows, n = B.cols, k = A.cols;
    if (m == 0 || n == 0 || k == 0) {
        if (!accumulate)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) C[i * ldc + j] = 0;
        return 0;
    }
    char *ob = NULL;
    if (tg_mat_contiguous(ctx, &B, sizeof(TGT), &ob)) return -1;
    TGT *t = (TGT *)calloc((size_t)(m * n), sizeof(TGT));
    if (t == NULL) { free(ob); return tg_error(ctx, "out of memory in gemm"); }
    const int64_t PB = 128, JB = 512;
    for (int64_t p0 = 0; p0 < k; p0 += PB) {
        const int64_t p1 = p0 + PB < k ? p0 + PB : k;
        for (int64_t j0 = 0; j0 < n; j0 += JB) {
            const int64_t j1 = j0 + JB < n ? j0 + JB : n;
            for (int64_t i = 0; i < m; i++) {
                TGT *ti = t + i * n;
                for (int64_t p = p0; p < p1; p++) {
                    const TGT a = *(const TGT *)(A.data + i * A.rs + p * A.cs);
                    const TGT *bp = (const TGT *)(B.data + p * B.rs);
                    #pragma omp simd
                    for (int64_t j = j0; j < j1; j++) ti[j] += a * bp[j];
                }
            }
        }
    }
    for (int64_t i = 0; i < m; i++) {
        #pragma omp simd
        for (int64_t j = 0; j < n; j++)
            C[i * ldc + j] = (accumulate ? C[i * ldc + j] : 0) + alpha * t[i * n + j];
    }
    free(t); free(ob);
    return 0;
}
"""

# Splitting a product across OpenMP threads (config.openmp). Each thread runs the
# single-threaded kernel (tg_?gemv1 / tg_?gemm1) on a block; blocks are equal and depend only on
# the sizes, so consecutive products over the same matrix give each thread the same part of it
# (the logistic regression's ``x @ w`` and ``x.T @ g`` both split x by rows: each core's half of
# x stays in its own L2 cache from one product to the next).
_SPLIT_COMMON = r"""
#define TG_SPLIT TG_SPLIT_ON
/* Multiply-adds per thread below which splitting costs more (thread wake-up, partial sums)
 * than it saves. */
#define TG_SPLIT_MIN_WORK 65536
static inline int tg_split_threads(const tg_ctx *ctx, int64_t work, int64_t parts)
{
#if TG_SPLIT && defined(_OPENMP)
    if (work < 2 * TG_SPLIT_MIN_WORK || parts < 2 || omp_in_parallel()) return 1;
    int64_t nt = tg_omp_threads(ctx);
    if (nt > work / TG_SPLIT_MIN_WORK) nt = work / TG_SPLIT_MIN_WORK;
    if (nt > parts) nt = parts;
    return nt < 1 ? 1 : (int)nt;
#else
    (void)ctx; (void)work; (void)parts;
    return 1;
#endif
}
/* The block [lo, hi) of n items that thread t of nt takes. */
static inline void tg_split_block(int64_t n, int t, int nt, int64_t *lo, int64_t *hi)
{
    *lo = n * t / nt;
    *hi = n * (t + 1) / nt;
}
"""

_SPLIT = r"""
/* y[i] += alpha * sum_j A[i, j] x[j]; y is contiguous with A.rows elements. When A's rows lie
 * contiguously each thread takes a block of rows (and of y); when A is the transpose of such a
 * matrix each thread takes a block of A's columns (rows of the stored matrix) and the partial
 * products are added in thread order, so a given thread count always gives the same sums. */
static int tg_TGSgemv(tg_ctx *ctx, TGT alpha, tg_mat A, tg_vec x, TGT *y)
{
    tg_blas_threads();
    const int64_t m = A.rows, k = A.cols;
    const int rowwise = llabs(A.cs) <= llabs(A.rs);
    const int nt = alpha == 0 ? 1 : tg_split_threads(ctx, m * k, rowwise ? m : k);
    if (nt == 1) return tg_TGSgemv1(ctx, alpha, A, x, y);
    int rc = 0;
    if (rowwise) {
        #pragma omp parallel for num_threads(nt) schedule(static, 1) reduction(|:rc)
        for (int t = 0; t < nt; t++) {
            int64_t lo, hi;
            tg_split_block(m, t, nt, &lo, &hi);
            tg_mat b = A;
            b.data += lo * A.rs; b.rows = hi - lo;
            rc |= tg_TGSgemv1(ctx, alpha, b, x, y + lo) != 0;
        }
        return rc ? -1 : 0;
    }
    TGT *part = (TGT *)calloc((size_t)(nt * m), sizeof(TGT));
    if (part == NULL) return tg_error(ctx, "out of memory in gemv");
    #pragma omp parallel for num_threads(nt) schedule(static, 1) reduction(|:rc)
    for (int t = 0; t < nt; t++) {
        int64_t lo, hi;
        tg_split_block(k, t, nt, &lo, &hi);
        tg_mat b = A;
        b.data += lo * A.cs; b.cols = hi - lo;
        tg_vec v = x;
        v.data += lo * x.st; v.n = hi - lo;
        rc |= tg_TGSgemv1(ctx, alpha, b, v, part + t * m) != 0;
    }
    if (rc == 0)
        for (int t = 0; t < nt; t++) {
            const TGT *p = part + t * m;
            #pragma omp simd
            for (int64_t i = 0; i < m; i++) y[i] += p[i];
        }
    free(part);
    return rc ? -1 : 0;
}

/* C[i, j] += alpha * sum_p A[i, p] B[p, j] (with `accumulate`; else C[i, j] = ..., C not
 * read: a product into a new buffer needs no zeroing pass first); C is contiguous
 * (A.rows x B.cols). Threads take blocks of C's rows, or of its columns when it has more
 * columns than rows. */
static int tg_TGSgemm(tg_ctx *ctx, TGT alpha, tg_mat A, tg_mat B, TGT *C, int accumulate)
{
    tg_blas_threads();
    const int64_t m = A.rows, n = B.cols, k = A.cols;
    const int byrows = m >= n;
    const int nt = alpha == 0 ? 1 : tg_split_threads(ctx, m * n * k, byrows ? m : n);
    if (nt == 1) return tg_TGSgemm1(ctx, alpha, A, B, C, n, accumulate);
    int rc = 0;
    #pragma omp parallel for num_threads(nt) schedule(static, 1) reduction(|:rc)
    for (int t = 0; t < nt; t++) {
        int64_t lo, hi;
        tg_mat a = A, b = B;
        if (byrows) {
            tg_split_block(m, t, nt, &lo, &hi);
            a.data += lo * A.rs; a.rows = hi - lo;
            rc |= tg_TGSgemm1(ctx, alpha, a, b, C + lo * n, n, accumulate) != 0;
        } else {
            tg_split_block(n, t, nt, &lo, &hi);
            b.data += lo * B.cs; b.cols = hi - lo;
            rc |= tg_TGSgemm1(ctx, alpha, a, b, C + lo, n, accumulate) != 0;
        }
    }
    return rc ? -1 : 0;
}
"""


# ----------------------------------------------------------------------------------------------
# The ops' C fragments


def _shape_error(ctx: str, fail: str, fmt: str, arrays) -> str:
    """A statement block failing with ``fmt`` where each ``%s`` is one array's shape."""
    bufs = " ".join(f"char sb{k}[96];" for k in range(len(arrays)))
    shapes = ", ".join(f"tg_shape_str({a}, sb{k}, 96)" for k, a in enumerate(arrays))
    return f"{{ {bufs} tg_error({ctx}, \"{fmt}\", {shapes}); {fail} }}"


def _fill(out_ptr: str, n: str, ctype: str, beta: str, src: str, src_index: str) -> str:
    """``out_ptr[0:n] = beta * src[...]``, or zeros when beta is 0 (src is then not read)."""
    return (f"if ({beta} == 0) memset({out_ptr}, 0, (size_t)({n}) * sizeof({ctype}));\n"
            f"else for (int64_t i = 0; i < {n}; i++) "
            f"{out_ptr}[i] = {beta} * *(const {ctype} *)({src} + {src_index});")


def gemv_code(node, inputs, outputs, sub) -> str:
    """``out = beta * y + alpha * dot(A, x)`` (``beta == 0``: y not read)."""
    from tensorgraph.link.c import dtypes as cd

    dtype = node.outputs[0].type.dtype
    ctype = c_type(dtype)
    if ctype is None:
        raise NotImplementedError(f"Gemv has C for float32 and float64, not {dtype}")
    y, alpha, A, x, beta = inputs
    (out,), ctx, fail, s = outputs, sub["ctx"], sub["fail"], blas_letter(dtype)
    check = _shape_error(ctx, fail, "Gemv: shapes do not match: y %s, A %s, x %s", [y, A, x])
    return f"""
    const {ctype} alpha = *(const {ctype} *){alpha}->data, beta = *(const {ctype} *){beta}->data;
    if ({A}->shape[1] != {x}->shape[0] || (beta != 0 && {A}->shape[0] != {y}->shape[0])) {check}
    if (tg_alloc({out}, 1, {A}->shape, {cd.typenum(dtype)}, {ctx})) {{ {fail} }}
    {ctype} *o = ({ctype} *){out}->data;
    {_fill("o", f"{A}->shape[0]", ctype, "beta", f"{y}->data", f"i * {y}->strides[0]")}
    if (tg_{s}gemv({ctx}, alpha, tg_mat_of({A}), tg_vec_of({x}), o)) {{ {fail} }}
    """


def gemm_code(node, inputs, outputs, sub, op_name="Gemm") -> str:
    """``out = beta * z + alpha * dot(a, b)`` (``beta == 0``: z not read); ``Dot22`` passes
    ``(None, 1, a, b, 0)``."""
    from tensorgraph.link.c import dtypes as cd

    dtype = node.outputs[0].type.dtype
    ctype = c_type(dtype)
    if ctype is None:
        raise NotImplementedError(f"{op_name} has C for float32 and float64, not {dtype}")
    z, alpha, a, b, beta = inputs
    (out,), ctx, fail, s = outputs, sub["ctx"], sub["fail"], blas_letter(dtype)
    if z is None:  # Dot22
        scalars = f"const {ctype} alpha = 1, beta = 0;"
        check = _shape_error(ctx, fail, "Dot22: inner dimensions differ: %s and %s", [a, b])
        cond = f"{a}->shape[1] != {b}->shape[0]"
        fill, accumulate = "(void)beta;", 0
    else:
        scalars = (f"const {ctype} alpha = *(const {ctype} *){alpha}->data, "
                   f"beta = *(const {ctype} *){beta}->data;")
        check = _shape_error(ctx, fail, "Gemm: shapes do not match: z %s, a %s, b %s",
                             [z, a, b])
        cond = (f"{a}->shape[1] != {b}->shape[0] || (beta != 0 && ({a}->shape[0] != "
                f"{z}->shape[0] || {b}->shape[1] != {z}->shape[1]))")
        fill = _fill("o", "m * n", ctype, "beta", f"{z}->data",
                     f"(i / n) * {z}->strides[0] + (i % n) * {z}->strides[1]")
        accumulate = 1
    return f"""
    {scalars}
    if ({cond}) {check}
    const int64_t m = {a}->shape[0], n = {b}->shape[1];
    const int64_t shp[2] = {{m, n}};
    if (tg_alloc({out}, 2, shp, {cd.typenum(dtype)}, {ctx})) {{ {fail} }}
    {ctype} *o = ({ctype} *){out}->data;
    {fill}
    if (tg_{s}gemm({ctx}, alpha, tg_mat_of({a}), tg_mat_of({b}), o, {accumulate})) {{ {fail} }}
    """


def loop_accumulator(dtype: str) -> tuple[str, str]:
    """(C type of the sum, C expression storing the sum ``acc`` as ``dtype``) of a plain
    product loop for the dtypes BLAS does not do: a wide integer, or the float itself."""
    from tensorgraph.link.c import dtypes as cd

    if cd.is_float(dtype):
        return cd.compute_type(dtype), f"({cd.storage_type(dtype)})acc"
    acc = "uint64_t" if cd.is_unsigned(dtype) and dtype != "bool" else "int64_t"
    return acc, "(acc != 0)" if dtype == "bool" else f"({cd.storage_type(dtype)})acc"


def dot_code(node, inputs, outputs, sub) -> str:
    """``np.dot`` of vectors/matrices: BLAS when both inputs have the output's float32/float64
    dtype, a plain loop in a wide accumulator for the other dtypes."""
    from tensorgraph.link.c import dtypes as cd

    (a, b), (out,) = inputs, outputs
    va, vb = node.inputs
    dtype = node.outputs[0].type.dtype
    ctx, fail = sub["ctx"], sub["fail"]
    la, lb = va.ndim - 1, 0
    check = (f"if ({a}->shape[{la}] != {b}->shape[{lb}]) {{ char sb0[96], sb1[96]; "
             f"tg_error({ctx}, \"dot: inner dimensions differ: shapes %s and %s (%lld != %lld)\","
             f" tg_shape_str({a}, sb0, 96), tg_shape_str({b}, sb1, 96), "
             f"(long long){a}->shape[{la}], (long long){b}->shape[{lb}]); {fail} }}")
    out_dims = ([f"{a}->shape[0]"] if va.ndim == 2 else []) + \
               ([f"{b}->shape[1]"] if vb.ndim == 2 else [])
    alloc = (f"const int64_t shp[{max(len(out_dims), 1)}] = {{{', '.join(out_dims) or '0'}}};\n"
             f"if (tg_alloc({out}, {len(out_dims)}, shp, {cd.typenum(dtype)}, {ctx})) "
             f"{{ {fail} }}")
    ctype = c_type(dtype)
    if ctype is not None and va.dtype == vb.dtype == dtype:
        s = blas_letter(dtype)
        if va.ndim == 1 and vb.ndim == 1:
            work = (f"int err; const {ctype} r = tg_{s}dot({ctx}, tg_vec_of({a}), "
                    f"tg_vec_of({b}), &err);\nif (err) {{ {fail} }}\n"
                    f"*({ctype} *){out}->data = r;")
        else:
            size = " * ".join(f"shp[{d}]" for d in range(len(out_dims)))
            call = {(2, 1): f"tg_{s}gemv({ctx}, 1, tg_mat_of({a}), tg_vec_of({b}), o)",
                    (1, 2): f"tg_{s}gemv({ctx}, 1, tg_mat_t({b}), tg_vec_of({a}), o)",
                    (2, 2): f"tg_{s}gemm({ctx}, 1, tg_mat_of({a}), tg_mat_of({b}), o, 0)"}[
                (va.ndim, vb.ndim)]
            zero = ("" if va.ndim == vb.ndim == 2 else
                    f"memset(o, 0, (size_t)({size}) * sizeof({ctype}));\n")
            work = f"{ctype} *o = ({ctype} *){out}->data;\n{zero}if ({call}) {{ {fail} }}"
        return f"{check}\n{alloc}\n{work}"
    # any other dtypes: a plain triple loop
    for d in (va.dtype, vb.dtype, dtype):
        if not cd.has_c(d):
            raise NotImplementedError(f"dot has no C for dtype {d}")
    acc, store = loop_accumulator(dtype)
    ta, tb = cd.storage_type(va.dtype), cd.storage_type(vb.dtype)
    rows = f"{a}->shape[0]" if va.ndim == 2 else "1"
    cols = f"{b}->shape[1]" if vb.ndim == 2 else "1"
    sa0 = f"{a}->strides[0]" if va.ndim == 2 else "0"
    sb1 = f"{b}->strides[1]" if vb.ndim == 2 else "0"
    return f"""
    {check}
    {alloc}
    const int64_t M = {rows}, N = {cols}, K = {a}->shape[{la}];
    const int64_t sa0 = {sa0}, sa1 = {a}->strides[{la}], sb0 = {b}->strides[0], sb1 = {sb1};
    {cd.storage_type(dtype)} *o = ({cd.storage_type(dtype)} *){out}->data;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {{
            {acc} acc = 0;
            const char *pa = {a}->data + i * sa0, *pb = {b}->data + j * sb1;
            for (int64_t p = 0; p < K; p++)
                acc += ({acc})*(const {ta} *)(pa + p * sa1) * ({acc})*(const {tb} *)(pb + p * sb0);
            o[i * N + j] = {store};
        }}
    """


class BlasCOp:
    """Mixin of the ops whose C calls these helpers: support code, libraries, version."""

    def c_support_code(self, node=None):
        return support_code()

    def c_libraries(self):
        return blas_setup()["libraries"]

    def c_lib_dirs(self):
        return blas_setup()["library_dirs"]

    def c_compile_args(self):
        return blas_setup()["extra_compile_args"]

    def c_code_cache_version(self):
        return version()
