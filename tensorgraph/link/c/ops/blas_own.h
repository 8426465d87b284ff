/* ---- tensorgraph's own matrix-product kernels, no BLAS (tensorgraph/link/c/ops/blas_own.h) ----
 * A template: blas.py pastes it once per element type with the placeholders replaced (see
 * blas.py). Plain C that gcc vectorizes: gemv as row dot products (four rows at a time) or
 * column updates, gemm blocked over the inner and column dimensions with a vectorized row
 * update in the middle. Needs blas_template.h. */
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
