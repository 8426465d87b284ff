/* ---- linear algebra item kernels through LAPACK (tensorgraph/link/c/ops/linalg_kernels.h) ----
 * A template pasted once per float type (TGT, TGS, LAPACK_ as in lapack.h): the tg_item_kernel
 * of each factorization and solver of tensorgraph.tensor.linalg that linalg.py gives C. Each
 * copies its item into column-major scratch (tg_la_TGS_get), calls LAPACK and copies the
 * result out; problem codes are the positions in the problems list linalg.py gives the op.
 * Needs lapack.h and linalg.h. */

/* Scratch for `count` blocks of bytes[k] each, 64-byte aligned: block k at *ptrs[k]. */
static int tg_la_TGS_carve(tg_scratch *s, int count, const size_t *bytes, void **ptrs)
{
    size_t total = 0;
    for (int k = 0; k < count; k++) total += (bytes[k] + 63) / 64 * 64;
    char *p = (char *)tg_scratch_get(s, total);
    if (p == NULL) return TG_ITEM_NOMEM;
    for (int k = 0; k < count; k++) { ptrs[k] = p; p += (bytes[k] + 63) / 64 * 64; }
    return 0;
}

static inline int tg_la_TGS_ld(int64_t n) { return n > 1 ? (int)n : 1; }

/* The elements of a (any real or integer dtype but float16, any strides), in C order over its axes taken in the order
 * perm (NULL: as they are), into dst: element f at dst[f] (rows == 0) or, seen as a matrix of
 * `rows` rows in C order, column-major at dst[f / cols + (f % cols) * rows]. */
static void tg_la_TGS_get_flat(const tg_array *a, const int *perm, TGT *dst, int64_t rows)
{
    const int nd = a->ndim;
    int64_t shape[TG_MAXDIM], strides[TG_MAXDIM], idx[TG_MAXDIM], size = 1;
    for (int d = 0; d < nd; d++) {
        const int src = perm ? perm[d] : d;
        shape[d] = a->shape[src]; strides[d] = a->strides[src]; idx[d] = 0; size *= shape[d];
    }
    const int64_t cols = rows > 0 && size > 0 ? size / rows : 1;
    int64_t off = 0;
    for (int64_t f = 0; f < size; f++) {
        const char *p = a->data + off;
        TGT v;
        switch (a->typenum) {
        case TG_FLOAT64: v = (TGT)*(const double *)p; break;
        case TG_FLOAT32: v = (TGT)*(const float *)p; break;
        case TG_BOOL: case TG_UINT8: v = (TGT)*(const uint8_t *)p; break;
        case TG_INT8: v = (TGT)*(const int8_t *)p; break;
        case TG_INT16: v = (TGT)*(const int16_t *)p; break;
        case TG_UINT16: v = (TGT)*(const uint16_t *)p; break;
        case TG_INT32: v = (TGT)*(const int32_t *)p; break;
        case TG_UINT32: v = (TGT)*(const uint32_t *)p; break;
        case TG_ULONG: case TG_UINT64: v = (TGT)*(const uint64_t *)p; break;
        default: v = (TGT)*(const int64_t *)p; break;
        }
        dst[rows > 0 ? f / cols + (f % cols) * rows : f] = v;
        for (int d = nd - 1; d >= 0; d--) {
            off += strides[d];
            if (++idx[d] < shape[d]) break;
            off -= strides[d] * shape[d];
            idx[d] = 0;
        }
    }
}

/* cholesky: params lower, nan-on-error; problem 1: not positive definite. */
static TG_NOINLINE int tg_la_TGS_cholesky(tg_item *it)
{
    const int64_t n64 = it->in[0]->shape[0];
    if (n64 > TG_LA_MAXINT) return TG_ITEM_TOO_BIG;
    const int n = (int)n64, ld = tg_la_TGS_ld(n64), lower = it->params[0];
    TGT *a = (TGT *)tg_scratch_get(it->scratch, (size_t)ld * (size_t)n64 * sizeof(TGT));
    if (a == NULL) return TG_ITEM_NOMEM;
    tg_la_TGS_get(it->in[0], a, ld);
    int info = 0;
    tg_lapack_threads();
    LAPACK_TGSpotrf_(lower ? "L" : "U", &n, a, &ld, &info, 1);
    if (info > 0) {
        if (!it->params[1]) return 1;
        tg_la_TGS_nan(it->out[0]);
        return 0;
    }
    for (int64_t j = 0; j < n64; j++)
        for (int64_t i = 0; i < n64; i++)
            if (lower ? i < j : i > j) a[i + j * ld] = 0;
    tg_la_TGS_put(a, ld, it->out[0]);
    return 0;
}

/* The (n, n) matrix of input 0 and the right-hand sides of input `bi` copied into scratch
 * (column-major, A then B), ipiv after them (n ints) when `pivots`. */
static int tg_la_TGS_system(tg_item *it, int bi, int pivots, TGT **A, TGT **B, int **ipiv,
                            int *n, int *nrhs)
{
    const int64_t n64 = it->in[0]->shape[0], k64 = tg_la_cols(it->in[bi]);
    if (n64 > TG_LA_MAXINT || k64 > TG_LA_MAXINT) return TG_ITEM_TOO_BIG;
    const int64_t ld = tg_la_TGS_ld(n64);
    size_t bytes[3] = {(size_t)(ld * n64) * sizeof(TGT), (size_t)(ld * k64) * sizeof(TGT),
                       pivots ? (size_t)ld * sizeof(int) : 0};
    void *ptrs[3];
    if (tg_la_TGS_carve(it->scratch, 3, bytes, ptrs)) return TG_ITEM_NOMEM;
    *A = (TGT *)ptrs[0]; *B = (TGT *)ptrs[1]; *ipiv = (int *)ptrs[2];
    tg_la_TGS_get(it->in[0], *A, ld);
    tg_la_TGS_get(it->in[bi], *B, ld);
    *n = (int)n64; *nrhs = (int)k64;
    tg_lapack_threads();
    return 0;
}

/* solve_triangular: params trans (0, 1, 2), lower, unit diagonal; problem 1: singular. */
static TG_NOINLINE int tg_la_TGS_solve_triangular(tg_item *it)
{
    TGT *A, *B; int *ipiv, n, nrhs, info = 0;
    int rc = tg_la_TGS_system(it, 1, 0, &A, &B, &ipiv, &n, &nrhs);
    if (rc) return rc;
    const int ld = tg_la_TGS_ld(n);
    LAPACK_TGStrtrs_(it->params[1] ? "L" : "U", it->params[0] ? "T" : "N",
                     it->params[2] ? "U" : "N", &n, &nrhs, A, &ld, B, &ld, &info, 1, 1, 1);
    if (info > 0) return 1;
    tg_la_TGS_put(B, ld, it->out[0]);
    return 0;
}

/* cho_solve: params lower. */
static TG_NOINLINE int tg_la_TGS_cho_solve(tg_item *it)
{
    TGT *A, *B; int *ipiv, n, nrhs, info = 0;
    int rc = tg_la_TGS_system(it, 1, 0, &A, &B, &ipiv, &n, &nrhs);
    if (rc) return rc;
    const int ld = tg_la_TGS_ld(n);
    LAPACK_TGSpotrs_(it->params[0] ? "L" : "U", &n, &nrhs, A, &ld, B, &ld, &info, 1);
    tg_la_TGS_put(B, ld, it->out[0]);
    return 0;
}

/* solve: params assume_a (0 gen, 1 sym / her, 2 pos, 3 tridiagonal), lower; problems 1:
 * singular, 2: not positive definite. */
static TG_NOINLINE int tg_la_TGS_solve(tg_item *it)
{
    TGT *A, *B; int *ipiv, n, nrhs, info = 0;
    int rc = tg_la_TGS_system(it, 1, 1, &A, &B, &ipiv, &n, &nrhs);
    if (rc) return rc;
    const int ld = tg_la_TGS_ld(n);
    const char *uplo = it->params[1] ? "L" : "U";
    switch (it->params[0]) {
    case 0:
        LAPACK_TGSgesv_(&n, &nrhs, A, &ld, ipiv, B, &ld, &info);
        break;
    case 1: {
        TGT query = 0;
        int lwork = -1;
        LAPACK_TGSsysv_(uplo, &n, &nrhs, A, &ld, ipiv, B, &ld, &query, &lwork, &info, 1);
        lwork = tg_la_TGS_lwork(query);
        TGT *work = (TGT *)malloc((size_t)lwork * sizeof(TGT));
        if (work == NULL) return TG_ITEM_NOMEM;
        LAPACK_TGSsysv_(uplo, &n, &nrhs, A, &ld, ipiv, B, &ld, work, &lwork, &info, 1);
        free(work);
        break;
    }
    case 2:
        LAPACK_TGSposv_(uplo, &n, &nrhs, A, &ld, B, &ld, &info, 1);
        if (info > 0) return 2;
        break;
    default: {  /* the three central diagonals */
        TGT *diags = (TGT *)malloc((size_t)(3 * ld) * sizeof(TGT));
        if (diags == NULL) return TG_ITEM_NOMEM;
        TGT *dl = diags, *d = diags + ld, *du = diags + 2 * ld;
        for (int i = 0; i < n; i++) d[i] = A[i + (int64_t)i * ld];
        for (int i = 0; i + 1 < n; i++) {
            dl[i] = A[(i + 1) + (int64_t)i * ld];
            du[i] = A[i + (int64_t)(i + 1) * ld];
        }
        LAPACK_TGSgtsv_(&n, &nrhs, dl, d, du, B, &ld, &info);
        free(diags);
    }
    }
    if (info > 0) return 1;
    tg_la_TGS_put(B, ld, it->out[0]);
    return 0;
}

/* inv: A X = I (numpy's way); problem 1: singular. */
static TG_NOINLINE int tg_la_TGS_inv(tg_item *it)
{
    const int64_t n64 = it->in[0]->shape[0];
    if (n64 > TG_LA_MAXINT) return TG_ITEM_TOO_BIG;
    const int n = (int)n64, ld = tg_la_TGS_ld(n64);
    size_t bytes[3] = {(size_t)(ld * n64) * sizeof(TGT), (size_t)(ld * n64) * sizeof(TGT),
                       (size_t)ld * sizeof(int)};
    void *ptrs[3];
    if (tg_la_TGS_carve(it->scratch, 3, bytes, ptrs)) return TG_ITEM_NOMEM;
    TGT *A = (TGT *)ptrs[0], *B = (TGT *)ptrs[1];
    tg_la_TGS_get(it->in[0], A, ld);
    memset(B, 0, (size_t)(ld * n64) * sizeof(TGT));
    for (int64_t i = 0; i < n64; i++) B[i + i * ld] = 1;
    int info = 0;
    tg_lapack_threads();
    LAPACK_TGSgesv_(&n, &n, A, &ld, (int *)ptrs[2], B, &ld, &info);
    if (info > 0) return 1;
    tg_la_TGS_put(B, ld, it->out[0]);
    return 0;
}

/* The LU factorization of the (m, n) input 0 in scratch: A (column-major, leading dimension
 * *ld) and ipiv (min(m, n) 1-based pivots); info > 0 (a zero pivot) is no failure here. */
static int tg_la_TGS_getrf(tg_item *it, TGT **A, int **ipiv, int *ld, int *info)
{
    const int64_t m64 = it->in[0]->shape[0], n64 = it->in[0]->shape[1];
    if (m64 > TG_LA_MAXINT || n64 > TG_LA_MAXINT) return TG_ITEM_TOO_BIG;
    const int m = (int)m64, n = (int)n64;
    *ld = tg_la_TGS_ld(m64);
    size_t bytes[2] = {(size_t)(*ld * n64) * sizeof(TGT),
                       (size_t)(m < n ? (m > 0 ? m : 1) : (n > 0 ? n : 1)) * sizeof(int)};
    void *ptrs[2];
    if (tg_la_TGS_carve(it->scratch, 2, bytes, ptrs)) return TG_ITEM_NOMEM;
    *A = (TGT *)ptrs[0]; *ipiv = (int *)ptrs[1];
    tg_la_TGS_get(it->in[0], *A, *ld);
    *info = 0;
    tg_lapack_threads();
    if (m > 0 && n > 0) LAPACK_TGSgetrf_(&m, &n, *A, ld, *ipiv, info);
    return 0;
}

/* lu_factor: the packed factors and 0-based int32 pivots; problem 1: singular. */
static TG_NOINLINE int tg_la_TGS_lu_factor(tg_item *it)
{
    TGT *A; int *ipiv, ld, info;
    int rc = tg_la_TGS_getrf(it, &A, &ipiv, &ld, &info);
    if (rc) return rc;
    if (info > 0) return 1;
    tg_la_TGS_put(A, ld, it->out[0]);
    int32_t *piv = (int32_t *)it->out[1]->data;
    for (int64_t i = 0; i < it->out[1]->shape[0]; i++) piv[i] = ipiv[i] - 1;
    return 0;
}

/* lu: params permute_l, p_indices; outputs (P, L, U), (p, L, U) or (P L, U). The row order
 * q of the pivots has A[q] = L U. */
static TG_NOINLINE int tg_la_TGS_lu(tg_item *it)
{
    TGT *A; int *ipiv, ld, info;
    int rc = tg_la_TGS_getrf(it, &A, &ipiv, &ld, &info);
    if (rc) return rc;
    const int64_t m = it->in[0]->shape[0], n = it->in[0]->shape[1], k = m < n ? m : n;
    const int permute_l = it->params[0], p_indices = it->params[1];
    int64_t *q = (int64_t *)malloc((size_t)(m > 0 ? m : 1) * sizeof(int64_t));
    if (q == NULL) return TG_ITEM_NOMEM;
    for (int64_t i = 0; i < m; i++) q[i] = i;
    for (int64_t i = 0; i < k; i++) {
        const int64_t j = ipiv[i] - 1, t = q[i];
        q[i] = q[j]; q[j] = t;
    }
    tg_array *lo = it->out[permute_l ? 0 : 1], *up = it->out[permute_l ? 1 : 2];
    TGT *L = (TGT *)lo->data, *U = (TGT *)up->data;
    for (int64_t i = 0; i < m; i++)          /* row i of L goes to row q[i] with permute_l */
        for (int64_t j = 0; j < k; j++)
            L[(permute_l ? q[i] : i) * k + j] = i > j ? A[i + j * ld] : i == j ? (TGT)1 : (TGT)0;
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < n; j++) U[i * n + j] = i <= j ? A[i + j * ld] : (TGT)0;
    if (!permute_l && p_indices) {
        int32_t *p = (int32_t *)it->out[0]->data;
        for (int64_t i = 0; i < m; i++) p[q[i]] = (int32_t)i;
    } else if (!permute_l) {
        TGT *P = (TGT *)it->out[0]->data;
        memset(P, 0, (size_t)(m * m) * sizeof(TGT));
        for (int64_t i = 0; i < m; i++) P[q[i] * m + i] = 1;
    }
    free(q);
    return 0;
}

/* lu_solve: params trans; inputs the packed factors, the 0-based pivots (any integer dtype),
 * b; problem 1: a pivot out of range. */
static TG_NOINLINE int tg_la_TGS_lu_solve(tg_item *it)
{
    TGT *A, *B; int *ipiv, n, nrhs, info = 0;
    int rc = tg_la_TGS_system(it, 2, 1, &A, &B, &ipiv, &n, &nrhs);
    if (rc) return rc;
    const tg_array *piv = it->in[1];
    if (piv->shape[0] != n) return 1;
    for (int i = 0; i < n; i++) {
        const int64_t p = tg_la_int_at(piv, i);
        if (p < 0 || p >= n) return 1;
        ipiv[i] = (int)p + 1;
    }
    const int ld = tg_la_TGS_ld(n);
    LAPACK_TGSgetrs_(it->params[0] ? "T" : "N", &n, &nrhs, A, &ld, ipiv, B, &ld, &info, 1);
    tg_la_TGS_put(B, ld, it->out[0]);
    return 0;
}

/* The sign and log |det| of the square input 0 (numpy's slogdet: 0 and -inf if singular). */
static int tg_la_TGS_logdet(tg_item *it, TGT *sign, TGT *logdet)
{
    TGT *A; int *ipiv, ld, info;
    int rc = tg_la_TGS_getrf(it, &A, &ipiv, &ld, &info);
    if (rc) return rc;
    const int64_t n = it->in[0]->shape[0];
    if (info > 0) { *sign = 0; *logdet = -(TGT)INFINITY; return 0; }
    TGT s = 1, acc = 0;
    for (int64_t i = 0; i < n; i++) {
        const TGT d = A[i + i * ld];
        if (ipiv[i] != i + 1) s = -s;
        if (d < 0) s = -s;
        acc += TG_LA_TGS_LOG(d < 0 ? -d : d);
    }
    *sign = s; *logdet = acc;
    return 0;
}

/* det: sign * exp(log |det|), as numpy computes it. */
static TG_NOINLINE int tg_la_TGS_det(tg_item *it)
{
    TGT sign, logdet;
    int rc = tg_la_TGS_logdet(it, &sign, &logdet);
    if (rc) return rc;
    *(TGT *)it->out[0]->data = sign * TG_LA_TGS_EXP(logdet);
    return 0;
}

static TG_NOINLINE int tg_la_TGS_slogdet(tg_item *it)
{
    TGT sign, logdet;
    int rc = tg_la_TGS_logdet(it, &sign, &logdet);
    if (rc) return rc;
    *(TGT *)it->out[0]->data = sign;
    *(TGT *)it->out[1]->data = logdet;
    return 0;
}

/* The thin SVD of the (m, n) matrix A (column-major, leading dimension lda; overwritten):
 * s (k), U (m, k) and VT (k, n), leading dimensions max(1, m) and max(1, k). 0, 1 when it
 * did not converge, or TG_ITEM_NOMEM. */
static int tg_la_TGS_svd(TGT *A, int m, int n, int lda, TGT *s, TGT *U, TGT *VT)
{
    const int k = m < n ? m : n, ldu = tg_la_TGS_ld(m), ldvt = tg_la_TGS_ld(k);
    int lwork = -1, info = 0;
    TGT query = 0;
    int *iwork = (int *)malloc((size_t)(8 * (k > 0 ? k : 1)) * sizeof(int));
    if (iwork == NULL) return TG_ITEM_NOMEM;
    LAPACK_TGSgesdd_("S", &m, &n, A, &lda, s, U, &ldu, VT, &ldvt, &query, &lwork, iwork, &info,
                     1);
    lwork = tg_la_TGS_lwork(query);
    TGT *work = (TGT *)malloc((size_t)lwork * sizeof(TGT));
    if (work == NULL) { free(iwork); return TG_ITEM_NOMEM; }
    LAPACK_TGSgesdd_("S", &m, &n, A, &lda, s, U, &ldu, VT, &ldvt, work, &lwork, iwork, &info, 1);
    free(work);
    free(iwork);
    return info > 0 ? 1 : 0;
}

/* pinv: params hermitian (the lower triangle read, as numpy's eigh); numpy's cut-off:
 * singular values up to 1e-15 times the largest count as zero; problem 1: no convergence. */
static TG_NOINLINE int tg_la_TGS_pinv(tg_item *it)
{
    const int64_t m64 = it->in[0]->shape[0], n64 = it->in[0]->shape[1];
    if (m64 > TG_LA_MAXINT || n64 > TG_LA_MAXINT) return TG_ITEM_TOO_BIG;
    if (m64 == 0 || n64 == 0) return 0;
    const int m = (int)m64, n = (int)n64, k = m < n ? m : n;
    const int64_t ld = tg_la_TGS_ld(m64), ldvt = tg_la_TGS_ld(k);
    size_t bytes[4] = {(size_t)(ld * n64) * sizeof(TGT), (size_t)k * sizeof(TGT),
                       (size_t)(ld * k) * sizeof(TGT), (size_t)(ldvt * n64) * sizeof(TGT)};
    void *ptrs[4];
    if (tg_la_TGS_carve(it->scratch, 4, bytes, ptrs)) return TG_ITEM_NOMEM;
    TGT *A = (TGT *)ptrs[0], *s = (TGT *)ptrs[1], *U = (TGT *)ptrs[2], *VT = (TGT *)ptrs[3];
    tg_la_TGS_get(it->in[0], A, ld);
    if (it->params[0])
        for (int64_t j = 0; j < n64; j++)
            for (int64_t i = 0; i < j; i++) A[i + j * ld] = A[j + i * ld];
    tg_lapack_threads();
    int rc = tg_la_TGS_svd(A, m, n, (int)ld, s, U, VT);
    if (rc) return rc;
    TGT top = 0;
    for (int l = 0; l < k; l++) top = s[l] > top ? s[l] : top;
    const double cutoff = 1e-15 * (double)top;
    for (int l = 0; l < k; l++) s[l] = (double)s[l] > cutoff ? (TGT)1 / s[l] : (TGT)0;
    TGT *o = (TGT *)it->out[0]->data;       /* (n, m): o[j, i] = sum_l VT[l, j] s[l] U[i, l] */
    for (int64_t j = 0; j < n64; j++)
        for (int64_t i = 0; i < m64; i++) {
            TGT acc = 0;
            for (int l = 0; l < k; l++) acc += VT[l + j * ldvt] * (s[l] * U[i + l * ld]);
            o[j * m64 + i] = acc;
        }
    return 0;
}

/* lstsq: inputs a (m, n), b (m) or (m, r), rcond (below zero: numpy's eps * max(m, n));
 * outputs x, the residuals (filled when the rank is n and m > n; linalg.py's finish sizes
 * them), the rank (int32) and the singular values; problem 1: no convergence. */
static TG_NOINLINE int tg_la_TGS_lstsq(tg_item *it)
{
    const int64_t m64 = it->in[0]->shape[0], n64 = it->in[0]->shape[1];
    const int64_t r64 = tg_la_cols(it->in[1]);
    if (m64 > TG_LA_MAXINT || n64 > TG_LA_MAXINT || r64 > TG_LA_MAXINT) return TG_ITEM_TOO_BIG;
    const int m = (int)m64, n = (int)n64, r = (int)r64, k = m < n ? m : n;
    const int lda = tg_la_TGS_ld(m64), ldb = tg_la_TGS_ld(m64 > n64 ? m64 : n64);
    size_t bytes[3] = {(size_t)((int64_t)lda * n64) * sizeof(TGT),
                       (size_t)((int64_t)ldb * r64) * sizeof(TGT),
                       (size_t)(k > 0 ? k : 1) * sizeof(TGT)};
    void *ptrs[3];
    if (tg_la_TGS_carve(it->scratch, 3, bytes, ptrs)) return TG_ITEM_NOMEM;
    TGT *A = (TGT *)ptrs[0], *B = (TGT *)ptrs[1], *s = (TGT *)ptrs[2];
    tg_la_TGS_get(it->in[0], A, lda);
    memset(B, 0, bytes[1]);
    tg_la_TGS_get(it->in[1], B, ldb);
    TGT rcond;
    tg_la_TGS_get(it->in[2], &rcond, 1);
    if (rcond < 0) rcond = TG_LA_TGS_EPS * (TGT)(m > n ? m : n);
    int rank = 0, info = 0;
    if (m > 0 && n > 0 && r > 0) {
        tg_lapack_threads();
        TGT query = 0;
        int lwork = -1, iquery = 0;
        LAPACK_TGSgelsd_(&m, &n, &r, A, &lda, B, &ldb, s, &rcond, &rank, &query, &lwork,
                         &iquery, &info);
        lwork = tg_la_TGS_lwork(query);
        const int liwork = iquery > 1 ? iquery : 1;
        TGT *work = (TGT *)malloc((size_t)lwork * sizeof(TGT));
        int *iwork = (int *)malloc((size_t)liwork * sizeof(int));
        if (work == NULL || iwork == NULL) { free(work); free(iwork); return TG_ITEM_NOMEM; }
        LAPACK_TGSgelsd_(&m, &n, &r, A, &lda, B, &ldb, s, &rcond, &rank, work, &lwork, iwork,
                         &info);
        free(work);
        free(iwork);
        if (info > 0) return 1;
    } else {
        for (int l = 0; l < k; l++) s[l] = 0;
        for (int64_t i = 0; i < (int64_t)ldb * r64; i++) B[i] = 0;
    }
    tg_la_TGS_put(B, ldb, it->out[0]);
    tg_array *res = it->out[1];
    if (rank == n && m > n && res->shape[0] > 0) {
        TGT *o = (TGT *)res->data;
        for (int c = 0; c < r; c++) {
            TGT acc = 0;
            for (int i = n; i < m; i++) acc += B[i + (int64_t)c * ldb] * B[i + (int64_t)c * ldb];
            o[c] = acc;
        }
    }
    *(int32_t *)it->out[2]->data = rank;
    TGT *so = (TGT *)it->out[3]->data;
    for (int l = 0; l < k; l++) so[l] = s[l];
    return 0;
}

/* tensorsolve: params b's ndim, a's ndim, then a's axes in the order that moves `axes` to
 * the end; a (in that order) is a square matrix of b.size rows; problem 1: singular. */
static TG_NOINLINE int tg_la_TGS_tensorsolve(tg_item *it)
{
    const int64_t N = tg_size(it->in[1]);
    if (N > TG_LA_MAXINT) return TG_ITEM_TOO_BIG;
    const int n = (int)N, ld = tg_la_TGS_ld(N), one = 1;
    size_t bytes[3] = {(size_t)(ld * N) * sizeof(TGT), (size_t)ld * sizeof(TGT),
                       (size_t)ld * sizeof(int)};
    void *ptrs[3];
    if (tg_la_TGS_carve(it->scratch, 3, bytes, ptrs)) return TG_ITEM_NOMEM;
    TGT *A = (TGT *)ptrs[0], *B = (TGT *)ptrs[1];
    tg_la_TGS_get_flat(it->in[0], it->params + 2, A, N);
    tg_la_TGS_get_flat(it->in[1], NULL, B, 0);
    int info = 0;
    tg_lapack_threads();
    if (n > 0) LAPACK_TGSgesv_(&n, &one, A, &ld, (int *)ptrs[2], B, &ld, &info);
    if (info > 0) return 1;
    memcpy(it->out[0]->data, B, (size_t)N * sizeof(TGT));
    return 0;
}

/* tensorinv: a seen as the square matrix of its C-order elements, (prod(shape[ind:]), ...);
 * the inverse written in C order into the output (shape[ind:] + shape[:ind]); problem 1:
 * singular. */
static TG_NOINLINE int tg_la_TGS_tensorinv(tg_item *it)
{
    const int64_t size = tg_size(it->in[0]);
    int64_t N = 1;
    for (int d = it->params[0]; d < it->in[0]->ndim; d++) N *= it->in[0]->shape[d];
    if (N > TG_LA_MAXINT) return TG_ITEM_TOO_BIG;
    (void)size;
    const int n = (int)N, ld = tg_la_TGS_ld(N);
    size_t bytes[3] = {(size_t)(ld * N) * sizeof(TGT), (size_t)(ld * N) * sizeof(TGT),
                       (size_t)ld * sizeof(int)};
    void *ptrs[3];
    if (tg_la_TGS_carve(it->scratch, 3, bytes, ptrs)) return TG_ITEM_NOMEM;
    TGT *A = (TGT *)ptrs[0], *B = (TGT *)ptrs[1];
    tg_la_TGS_get_flat(it->in[0], NULL, A, N);
    memset(B, 0, bytes[1]);
    for (int64_t i = 0; i < N; i++) B[i + i * ld] = 1;
    int info = 0;
    tg_lapack_threads();
    if (n > 0) LAPACK_TGSgesv_(&n, &n, A, &ld, (int *)ptrs[2], B, &ld, &info);
    if (info > 0) return 1;
    TGT *o = (TGT *)it->out[0]->data;
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j++) o[i * N + j] = B[i + j * ld];
    return 0;
}
