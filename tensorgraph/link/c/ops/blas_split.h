/* ---- matrix products split across threads (tensorgraph/link/c/ops/blas_split.h) ----
 * A template: blas.py pastes it once per element type, after that type's one-thread kernels,
 * with the placeholders replaced (see blas.py); either kernel file serves. Needs blas_own.h. */
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
