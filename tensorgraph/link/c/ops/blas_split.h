/* ---- matrix products split across threads (tensorgraph/link/c/ops/blas_split.h) ----
 * A template: blas.py pastes it once per element type, after that type's one-thread kernels,
 * with the placeholders replaced (see blas.py); either kernel file serves. Needs blas_own.h. */
/* What the blocks of a split product share: the operands, the partial products of a split
 * over columns, and each block's error code (0 or 1), combined after the run. */
typedef struct {
    tg_ctx *ctx;
    TGT alpha;
    tg_mat A, B;
    tg_vec x;
    TGT *out, *part;
    int64_t ldc;
    int accumulate;
    int *rc;
} tg_TGSsplit;

/* block t of nt of a gemv by rows: its rows of A and of y */
static void tg_TGSgemv_rows(void *arg, int t, int nt)
{
    const tg_TGSsplit *s = (const tg_TGSsplit *)arg;
    int64_t lo, hi;
    tg_split_block(s->A.rows, t, nt, &lo, &hi);
    tg_mat b = s->A;
    b.data += lo * s->A.rs; b.rows = hi - lo;
    s->rc[t] = tg_TGSgemv1(s->ctx, s->alpha, b, s->x, s->out + lo) != 0;
}

/* block t of nt of a gemv by columns: its columns of A times its part of x, into its own
 * partial product (A.rows values) */
static void tg_TGSgemv_cols(void *arg, int t, int nt)
{
    const tg_TGSsplit *s = (const tg_TGSsplit *)arg;
    int64_t lo, hi;
    tg_split_block(s->A.cols, t, nt, &lo, &hi);
    tg_mat b = s->A;
    b.data += lo * s->A.cs; b.cols = hi - lo;
    tg_vec v = s->x;
    v.data += lo * s->x.st; v.n = hi - lo;
    s->rc[t] = tg_TGSgemv1(s->ctx, s->alpha, b, v, s->part + t * s->A.rows) != 0;
}

/* y[i] += alpha * sum_j A[i, j] x[j]; y is contiguous with A.rows elements. When A's rows lie
 * contiguously each thread takes a block of rows (and of y); when A is the transpose of such a
 * matrix each thread takes a block of A's columns (rows of the stored matrix) and the partial
 * products are added in block order, so a given thread count always gives the same sums. */
static int tg_TGSgemv(tg_ctx *ctx, TGT alpha, tg_mat A, tg_vec x, TGT *y)
{
    tg_blas_threads();
    const int64_t m = A.rows, k = A.cols;
    const int rowwise = llabs(A.cs) <= llabs(A.rs);
    const int nt = alpha == 0 ? 1 : tg_split_threads(ctx, m * k, rowwise ? m : k);
    if (nt == 1) return tg_TGSgemv1(ctx, alpha, A, x, y);
    int rc[nt], failed = 0;
    tg_TGSsplit s = {.ctx = ctx, .alpha = alpha, .A = A, .x = x, .out = y, .rc = rc};
    if (rowwise) {
        tg_run(ctx, tg_TGSgemv_rows, &s, nt);
        for (int t = 0; t < nt; t++) failed |= rc[t];
        return failed ? -1 : 0;
    }
    s.part = (TGT *)calloc((size_t)(nt * m), sizeof(TGT));
    if (s.part == NULL) return tg_error(ctx, "out of memory in gemv");
    tg_run(ctx, tg_TGSgemv_cols, &s, nt);
    for (int t = 0; t < nt; t++) failed |= rc[t];
    if (!failed)
        for (int t = 0; t < nt; t++) {
            const TGT *p = s.part + t * m;
            #pragma omp simd
            for (int64_t i = 0; i < m; i++) y[i] += p[i];
        }
    free(s.part);
    return failed ? -1 : 0;
}

/* block t of nt of a gemm: its rows of C (C has at least as many rows as columns), else its
 * columns */
static void tg_TGSgemm_block(void *arg, int t, int nt)
{
    const tg_TGSsplit *s = (const tg_TGSsplit *)arg;
    const int64_t m = s->A.rows, n = s->B.cols;
    int64_t lo, hi;
    tg_mat a = s->A, b = s->B;
    if (m >= n) {
        tg_split_block(m, t, nt, &lo, &hi);
        a.data += lo * s->A.rs; a.rows = hi - lo;
        s->rc[t] = tg_TGSgemm1(s->ctx, s->alpha, a, b, s->out + lo * s->ldc, s->ldc,
                               s->accumulate) != 0;
    } else {
        tg_split_block(n, t, nt, &lo, &hi);
        b.data += lo * s->B.cs; b.cols = hi - lo;
        s->rc[t] = tg_TGSgemm1(s->ctx, s->alpha, a, b, s->out + lo, s->ldc,
                               s->accumulate) != 0;
    }
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
    int rc[nt], failed = 0;
    tg_TGSsplit s = {.ctx = ctx, .alpha = alpha, .A = A, .B = B, .out = C, .ldc = n,
                     .accumulate = accumulate, .rc = rc};
    tg_run(ctx, tg_TGSgemm_block, &s, nt);
    for (int t = 0; t < nt; t++) failed |= rc[t];
    return failed ? -1 : 0;
}
