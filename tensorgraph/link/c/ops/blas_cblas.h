/* ---- matrix-product kernels calling a CBLAS library (tensorgraph/link/c/ops/blas_cblas.h) ----
 * A template: blas.py pastes it once per element type with the placeholders replaced (the
 * type, BLAS's letter for it, the library's symbol prefix; see blas.py). The prototypes are
 * declared here, so no CBLAS header is needed; the enums are ints (CblasRowMajor 101,
 * CblasNoTrans 111, CblasTrans 112). Needs blas_template.h. */
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
