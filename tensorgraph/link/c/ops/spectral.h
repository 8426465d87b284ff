/* ---- spectral linear algebra through LAPACK (tensorgraph/link/c/ops/spectral.h) ----
 * A template: linalg_spectral.py pastes it once per element type with the placeholders
 * replaced (TGT float/double, TGS s/d, TGZ c/z for the complex routines of the same precision,
 * LAPACK_ the library's symbol prefix). One kernel per op, each computing one matrix (see
 * spectral_common.h for the calling convention). Complex numbers are pairs of TGT. The
 * prototypes are Fortran's (every argument by address, the hidden lengths of the character
 * arguments last). Needs spectral_template.h. */

void LAPACK_TGSsyevd_(const char *jobz, const char *uplo, const tg_lpint *n, TGT *a,
                      const tg_lpint *lda, TGT *w, TGT *work, const tg_lpint *lwork,
                      tg_lpint *iwork, const tg_lpint *liwork, tg_lpint *info, tg_lpstrlen,
                      tg_lpstrlen);
void LAPACK_TGSsygvd_(const tg_lpint *itype, const char *jobz, const char *uplo,
                      const tg_lpint *n, TGT *a, const tg_lpint *lda, TGT *b,
                      const tg_lpint *ldb, TGT *w, TGT *work, const tg_lpint *lwork,
                      tg_lpint *iwork, const tg_lpint *liwork, tg_lpint *info, tg_lpstrlen,
                      tg_lpstrlen);
void LAPACK_TGSgeev_(const char *jobvl, const char *jobvr, const tg_lpint *n, TGT *a,
                     const tg_lpint *lda, TGT *wr, TGT *wi, TGT *vl, const tg_lpint *ldvl,
                     TGT *vr, const tg_lpint *ldvr, TGT *work, const tg_lpint *lwork,
                     tg_lpint *info, tg_lpstrlen, tg_lpstrlen);
void LAPACK_TGSgesdd_(const char *jobz, const tg_lpint *m, const tg_lpint *n, TGT *a,
                      const tg_lpint *lda, TGT *s, TGT *u, const tg_lpint *ldu, TGT *vt,
                      const tg_lpint *ldvt, TGT *work, const tg_lpint *lwork, tg_lpint *iwork,
                      tg_lpint *info, tg_lpstrlen);
void LAPACK_TGSgeqrf_(const tg_lpint *m, const tg_lpint *n, TGT *a, const tg_lpint *lda,
                      TGT *tau, TGT *work, const tg_lpint *lwork, tg_lpint *info);
void LAPACK_TGSgeqp3_(const tg_lpint *m, const tg_lpint *n, TGT *a, const tg_lpint *lda,
                      tg_lpint *jpvt, TGT *tau, TGT *work, const tg_lpint *lwork,
                      tg_lpint *info);
void LAPACK_TGSorgqr_(const tg_lpint *m, const tg_lpint *n, const tg_lpint *k, TGT *a,
                      const tg_lpint *lda, const TGT *tau, TGT *work, const tg_lpint *lwork,
                      tg_lpint *info);
typedef tg_lpint (*tg_TGS_select2)(const TGT *, const TGT *);
typedef tg_lpint (*tg_TGS_select3)(const TGT *, const TGT *, const TGT *);
void LAPACK_TGSgees_(const char *jobvs, const char *sort, tg_TGS_select2 select,
                     const tg_lpint *n, TGT *a, const tg_lpint *lda, tg_lpint *sdim, TGT *wr,
                     TGT *wi, TGT *vs, const tg_lpint *ldvs, TGT *work, const tg_lpint *lwork,
                     tg_lpint *bwork, tg_lpint *info, tg_lpstrlen, tg_lpstrlen);
void LAPACK_TGSgges_(const char *jobvsl, const char *jobvsr, const char *sort,
                     tg_TGS_select3 selctg, const tg_lpint *n, TGT *a, const tg_lpint *lda,
                     TGT *b, const tg_lpint *ldb, tg_lpint *sdim, TGT *alphar, TGT *alphai,
                     TGT *beta, TGT *vsl, const tg_lpint *ldvsl, TGT *vsr,
                     const tg_lpint *ldvsr, TGT *work, const tg_lpint *lwork, tg_lpint *bwork,
                     tg_lpint *info, tg_lpstrlen, tg_lpstrlen, tg_lpstrlen);
/* the complex routines: complex arguments are TGT pairs */
void LAPACK_TGZheevd_(const char *jobz, const char *uplo, const tg_lpint *n, TGT *a,
                      const tg_lpint *lda, TGT *w, TGT *work, const tg_lpint *lwork,
                      TGT *rwork, const tg_lpint *lrwork, tg_lpint *iwork,
                      const tg_lpint *liwork, tg_lpint *info, tg_lpstrlen, tg_lpstrlen);
void LAPACK_TGZhegvd_(const tg_lpint *itype, const char *jobz, const char *uplo,
                      const tg_lpint *n, TGT *a, const tg_lpint *lda, TGT *b,
                      const tg_lpint *ldb, TGT *w, TGT *work, const tg_lpint *lwork,
                      TGT *rwork, const tg_lpint *lrwork, tg_lpint *iwork,
                      const tg_lpint *liwork, tg_lpint *info, tg_lpstrlen, tg_lpstrlen);
void LAPACK_TGZgeev_(const char *jobvl, const char *jobvr, const tg_lpint *n, TGT *a,
                     const tg_lpint *lda, TGT *w, TGT *vl, const tg_lpint *ldvl, TGT *vr,
                     const tg_lpint *ldvr, TGT *work, const tg_lpint *lwork, TGT *rwork,
                     tg_lpint *info, tg_lpstrlen, tg_lpstrlen);
void LAPACK_TGZgesdd_(const char *jobz, const tg_lpint *m, const tg_lpint *n, TGT *a,
                      const tg_lpint *lda, TGT *s, TGT *u, const tg_lpint *ldu, TGT *vt,
                      const tg_lpint *ldvt, TGT *work, const tg_lpint *lwork, TGT *rwork,
                      tg_lpint *iwork, tg_lpint *info, tg_lpstrlen);
void LAPACK_TGZgeqrf_(const tg_lpint *m, const tg_lpint *n, TGT *a, const tg_lpint *lda,
                      TGT *tau, TGT *work, const tg_lpint *lwork, tg_lpint *info);
void LAPACK_TGZgeqp3_(const tg_lpint *m, const tg_lpint *n, TGT *a, const tg_lpint *lda,
                      tg_lpint *jpvt, TGT *tau, TGT *work, const tg_lpint *lwork, TGT *rwork,
                      tg_lpint *info);
void LAPACK_TGZungqr_(const tg_lpint *m, const tg_lpint *n, const tg_lpint *k, TGT *a,
                      const tg_lpint *lda, const TGT *tau, TGT *work, const tg_lpint *lwork,
                      tg_lpint *info);
typedef tg_lpint (*tg_TGZ_select1)(const TGT *);
typedef tg_lpint (*tg_TGZ_select2)(const TGT *, const TGT *);
void LAPACK_TGZgees_(const char *jobvs, const char *sort, tg_TGZ_select1 select,
                     const tg_lpint *n, TGT *a, const tg_lpint *lda, tg_lpint *sdim, TGT *w,
                     TGT *vs, const tg_lpint *ldvs, TGT *work, const tg_lpint *lwork,
                     TGT *rwork, tg_lpint *bwork, tg_lpint *info, tg_lpstrlen, tg_lpstrlen);
void LAPACK_TGZgges_(const char *jobvsl, const char *jobvsr, const char *sort,
                     tg_TGZ_select2 selctg, const tg_lpint *n, TGT *a, const tg_lpint *lda,
                     TGT *b, const tg_lpint *ldb, tg_lpint *sdim, TGT *alpha, TGT *beta,
                     TGT *vsl, const tg_lpint *ldvsl, TGT *vsr, const tg_lpint *ldvsr,
                     TGT *work, const tg_lpint *lwork, TGT *rwork, tg_lpint *bwork,
                     tg_lpint *info, tg_lpstrlen, tg_lpstrlen, tg_lpstrlen);

/* dst (column-major, leading dimension ld) = the 2-d view a, converted to TGT */
static TG_COLD void tg_TGS_sp_load(TGT *dst, int64_t ld, const tg_array *a)
{
    for (int64_t j = 0; j < a->shape[1]; j++)
        for (int64_t i = 0; i < a->shape[0]; i++)
            dst[i + j * ld] = (TGT)tg_sp_read(TG_SP_AT2(a, i, j), a->typenum, NULL);
}

/* dst (column-major complex pairs, leading dimension ld) = the 2-d view a */
static TG_COLD void tg_TGZ_sp_load(TGT *dst, int64_t ld, const tg_array *a)
{
    for (int64_t j = 0; j < a->shape[1]; j++)
        for (int64_t i = 0; i < a->shape[0]; i++) {
            double im;
            dst[2 * (i + j * ld)] = (TGT)tg_sp_read(TG_SP_AT2(a, i, j), a->typenum, &im);
            dst[2 * (i + j * ld) + 1] = (TGT)im;
        }
}

/* the 2-d view o (of TGT, or of TGT pairs when ``pairs``) = src (column-major, ld) */
static TG_COLD void tg_TGS_sp_store(tg_array *o, const TGT *src, int64_t ld, int pairs)
{
    for (int64_t i = 0; i < o->shape[0]; i++)
        for (int64_t j = 0; j < o->shape[1]; j++) {
            TGT *to = (TGT *)TG_SP_AT2(o, i, j);
            to[0] = src[(pairs ? 2 : 1) * (i + j * ld)];
            if (pairs) to[1] = src[2 * (i + j * ld) + 1];
        }
}

/* the 1-d view o = src[0..n) */
static TG_COLD void tg_TGS_sp_store1(tg_array *o, const TGT *src)
{
    for (int64_t i = 0; i < o->shape[0]; i++) *(TGT *)TG_SP_AT1(o, i) = src[i];
}

/* a square 2-d view o = the identity (the unitary factors of an empty matrix; TGT pairs
 * when ``pairs``) */
static TG_COLD void tg_TGS_sp_eye(tg_array *o, int pairs)
{
    for (int64_t i = 0; i < o->shape[0]; i++)
        for (int64_t j = 0; j < o->shape[1]; j++) {
            TGT *to = (TGT *)TG_SP_AT2(o, i, j);
            to[0] = (TGT)(i == j);
            if (pairs) to[1] = 0;
        }
}

/* eigh (params: lower, vectors): out w (ascending), and v when ``vectors`` (eigvalsh not) */
static TG_COLD int tg_TGS_sp_eigh(tg_item *it)
{
    const tg_array *const *in = it->in;
    tg_array *const *out = it->out;
    const int *params = it->params;
    const tg_lpint n = (tg_lpint)in[0]->shape[0], q = -1;
    const char jobz = params[1] ? 'V' : 'N', uplo = params[0] ? 'L' : 'U';
    if (n == 0) return 0;
    tg_sp_threads();
    TGT *a = malloc(sizeof(TGT) * ((size_t)n * n + n)), *w = a + (int64_t)n * n, wq;
    tg_lpint iwq, info;
    if (a == NULL) return TG_ITEM_NOMEM;
    tg_TGS_sp_load(a, n, in[0]);
    LAPACK_TGSsyevd_(&jobz, &uplo, &n, a, &n, w, &wq, &q, &iwq, &q, &info, 1, 1);
    const tg_lpint lwork = tg_sp_lwork(wq, 1), liwork = iwq > 1 ? iwq : 1;
    TGT *work = malloc(sizeof(TGT) * lwork);
    tg_lpint *iwork = malloc(sizeof(tg_lpint) * liwork);
    if (work == NULL || iwork == NULL) info = TG_SP_NOMEM;
    else LAPACK_TGSsyevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
    if (info == 0) {
        tg_TGS_sp_store1(out[0], w);
        if (params[1]) tg_TGS_sp_store(out[1], a, n, 0);
    }
    free(work); free(iwork); free(a);
    return tg_sp_result(info, 1);
}

/* the generalized eigh (params: lower): a v = b v w; out w, v. INFO > n: b is not positive
 * definite */
static TG_COLD int tg_TGS_sp_eigh_general(tg_item *it)
{
    const tg_array *const *in = it->in;
    tg_array *const *out = it->out;
    const int *params = it->params;
    const tg_lpint n = (tg_lpint)in[0]->shape[0], q = -1, itype = 1;
    const char jobz = 'V', uplo = params[0] ? 'L' : 'U';
    if (n == 0) return 0;
    tg_sp_threads();
    TGT *a = malloc(sizeof(TGT) * (2 * (size_t)n * n + n)), *b = a + (int64_t)n * n;
    TGT *w = b + (int64_t)n * n, wq;
    tg_lpint iwq, info;
    if (a == NULL) return TG_ITEM_NOMEM;
    tg_TGS_sp_load(a, n, in[0]);
    tg_TGS_sp_load(b, n, in[1]);
    LAPACK_TGSsygvd_(&itype, &jobz, &uplo, &n, a, &n, b, &n, w, &wq, &q, &iwq, &q, &info, 1, 1);
    const tg_lpint lwork = tg_sp_lwork(wq, 1), liwork = iwq > 1 ? iwq : 1;
    TGT *work = malloc(sizeof(TGT) * lwork);
    tg_lpint *iwork = malloc(sizeof(tg_lpint) * liwork);
    if (work == NULL || iwork == NULL) info = TG_SP_NOMEM;
    else LAPACK_TGSsygvd_(&itype, &jobz, &uplo, &n, a, &n, b, &n, w, work, &lwork, iwork,
                          &liwork, &info, 1, 1);
    if (info == 0) {
        tg_TGS_sp_store1(out[0], w);
        tg_TGS_sp_store(out[1], a, n, 0);
    }
    free(work); free(iwork); free(a);
    return tg_sp_result(info, info > 0 && info <= n ? 1 : 2);
}

/* whether every element of the 2-d view a is finite */
static TG_COLD int tg_TGS_sp_finite(const tg_array *a)
{
    for (int64_t i = 0; i < a->shape[0]; i++)
        for (int64_t j = 0; j < a->shape[1]; j++) {
            double im, re = tg_sp_read(TG_SP_AT2(a, i, j), a->typenum, &im);
            if (!isfinite(re) || !isfinite(im)) return 0;
        }
    return 1;
}

/* eig: out w, v complex (numpy's: right eigenvectors of unit norm); refuses nan and inf */
static TG_COLD int tg_TGS_sp_eig(tg_item *it)
{
    const tg_array *const *in = it->in;
    tg_array *const *out = it->out;
    const int *params = it->params;
    const tg_lpint n = (tg_lpint)in[0]->shape[0], q = -1, one = 1;
    (void)params;
    if (n == 0) return 0;
    tg_sp_threads();
    if (!tg_TGS_sp_finite(in[0])) return 1;   /* 1: a nan or an inf */
    TGT *a = malloc(sizeof(TGT) * (2 * (size_t)n * n + 2 * n)), *vr = a + (int64_t)n * n;
    TGT *wr = vr + (int64_t)n * n, *wi = wr + n, wq, vl;
    tg_lpint info;
    if (a == NULL) return TG_ITEM_NOMEM;
    tg_TGS_sp_load(a, n, in[0]);
    LAPACK_TGSgeev_("N", "V", &n, a, &n, wr, wi, &vl, &one, vr, &n, &wq, &q, &info, 1, 1);
    const tg_lpint lwork = tg_sp_lwork(wq, 4 * n);
    TGT *work = malloc(sizeof(TGT) * lwork);
    if (work == NULL) info = TG_SP_NOMEM;
    else LAPACK_TGSgeev_("N", "V", &n, a, &n, wr, wi, &vl, &one, vr, &n, work, &lwork, &info,
                         1, 1);
    if (info == 0) {
        for (tg_lpint j = 0; j < n; j++) {
            TGT *to = (TGT *)TG_SP_AT1(out[0], j);
            to[0] = wr[j];
            to[1] = wi[j];
        }
        /* a complex pair's vectors are columns j (real part) and j + 1 (imaginary part) */
        for (tg_lpint j = 0; j < n; j++) {
            const int pair = wi[j] != 0 && j + 1 < n;
            for (tg_lpint i = 0; i < n; i++) {
                const TGT re = vr[i + (int64_t)j * n];
                const TGT im = pair ? vr[i + (int64_t)(j + 1) * n] : 0;
                TGT *to = (TGT *)TG_SP_AT2(out[1], i, j);
                to[0] = re;
                to[1] = im;
                if (pair) {
                    to = (TGT *)TG_SP_AT2(out[1], i, j + 1);
                    to[0] = re;
                    to[1] = -im;
                }
            }
            j += pair;
        }
    }
    free(work); free(a);
    return tg_sp_result(info, 2);
}

/* gesdd's factors into svd's outputs: u, s, vh (or s alone); pairs: u and vh are complex */
static TG_COLD void tg_TGS_sp_svd_store(tg_array *const *out, int uv, const TGT *s, const TGT *u,
                                        int64_t ldu, const TGT *vt, int64_t ldvt, int pairs)
{
    tg_TGS_sp_store1(out[uv ? 1 : 0], s);
    if (uv) {
        tg_TGS_sp_store(out[0], u, ldu, pairs);
        tg_TGS_sp_store(out[2], vt, ldvt, pairs);
    }
}

/* svd (params: full_matrices, compute_uv): out u, s, vh (or s); refuses nan and inf */
static TG_COLD int tg_TGS_sp_svd(tg_item *it)
{
    const tg_array *const *in = it->in;
    tg_array *const *out = it->out;
    const int *params = it->params;
    const tg_lpint m = (tg_lpint)in[0]->shape[0], n = (tg_lpint)in[0]->shape[1], q = -1;
    const tg_lpint k = m < n ? m : n, full = params[0], uv = params[1];
    const char jobz = !uv ? 'N' : full ? 'A' : 'S';
    if (k == 0) {  /* numpy: the full factors of an empty matrix are identities */
        if (uv && full) { tg_TGS_sp_eye(out[0], 0); tg_TGS_sp_eye(out[2], 0); }
        return 0;
    }
    if (!tg_TGS_sp_finite(in[0])) return 1;   /* 1: a nan or an inf */
    tg_sp_threads();
    const tg_lpint ucols = uv ? (full ? m : k) : 1, vrows = uv ? (full ? n : k) : 1;
    const tg_lpint ldu = uv ? m : 1, vcols = uv ? n : 1;
    TGT *a = malloc(sizeof(TGT) * ((size_t)m * n + k + (size_t)ldu * ucols +
                                   (size_t)vrows * vcols));
    TGT *s = a + (int64_t)m * n, *u = s + k, *vt = u + (int64_t)ldu * ucols, wq;
    tg_lpint *iwork = malloc(sizeof(tg_lpint) * 8 * (size_t)k), info;
    if (a == NULL || iwork == NULL) { free(a); free(iwork); return TG_ITEM_NOMEM; }
    tg_TGS_sp_load(a, m, in[0]);
    LAPACK_TGSgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &vrows, &wq, &q, iwork, &info, 1);
    const tg_lpint lwork = tg_sp_lwork(wq, 1);
    TGT *work = malloc(sizeof(TGT) * lwork);
    if (work == NULL) info = TG_SP_NOMEM;
    else LAPACK_TGSgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &vrows, work, &lwork, iwork,
                          &info, 1);
    if (info == 0) tg_TGS_sp_svd_store(out, uv, s, u, ldu, vt, vrows, 0);
    free(work); free(iwork); free(a);
    return tg_sp_result(info, 2);
}

/* qr (params: mode 0 full, 1 economic, 2 r, 3 raw; pivoting): out q, r / r / h, tau, r
 * (tg_sp_qr_outs), then with ``pivoting`` the column order (int32, 0-based); scipy's shapes.
 * ``geqp3`` instead of ``geqrf`` with pivoting, as scipy. ``cplx``: a, tau, work are TGT pairs
 * and rwork (2 n) is geqp3's. Both precisions' real and complex kernels call this one. */
static TG_COLD int tg_TGS_sp_qr_any(tg_item *it, int cplx)
{
    const tg_array *const *in = it->in;
    tg_array *const *out = it->out;
    const tg_lpint m = (tg_lpint)in[0]->shape[0], n = (tg_lpint)in[0]->shape[1], q = -1;
    const tg_lpint k = m < n ? m : n, mode = it->params[0], piv = it->params[1];
    const tg_lpint qcols = mode == 0 ? m : k, lda = m > 1 ? m : 1;
    const int64_t rrows = mode == 1 || mode == 3 ? k : m, cols = n > qcols ? n : qcols;
    const int c = cplx ? 2 : 1;
    tg_array *r = out[mode == 2 ? 0 : mode == 3 ? 2 : 1];
    TGT *a = malloc(c * sizeof(TGT) * ((size_t)lda * tg_sp_max1(cols) + tg_sp_max1(k))
                    + sizeof(TGT) * 2 * tg_sp_max1(n));
    TGT *tau = a + c * (int64_t)lda * tg_sp_max1(cols), *rwork = tau + c * tg_sp_max1(k);
    TGT *work = NULL, wq[2];
    tg_lpint *jpvt = piv ? calloc(tg_sp_max1(n), sizeof(tg_lpint)) : NULL;
    tg_lpint info = 0, lwork = 1;
    if (a == NULL || (piv && jpvt == NULL)) { free(a); free(jpvt); return TG_ITEM_NOMEM; }
    tg_sp_threads();
    if (cplx) tg_TGZ_sp_load(a, lda, in[0]);
    else tg_TGS_sp_load(a, lda, in[0]);
    if (k > 0) {
        if (piv && cplx) LAPACK_TGZgeqp3_(&m, &n, a, &lda, jpvt, tau, wq, &q, rwork, &info);
        else if (piv) LAPACK_TGSgeqp3_(&m, &n, a, &lda, jpvt, tau, wq, &q, &info);
        else if (cplx) LAPACK_TGZgeqrf_(&m, &n, a, &lda, tau, wq, &q, &info);
        else LAPACK_TGSgeqrf_(&m, &n, a, &lda, tau, wq, &q, &info);
        lwork = tg_sp_lwork(wq[0], piv ? 3 * n + 1 : n);
        if (mode < 2) {
            if (cplx) LAPACK_TGZungqr_(&m, &qcols, &k, a, &lda, tau, wq, &q, &info);
            else LAPACK_TGSorgqr_(&m, &qcols, &k, a, &lda, tau, wq, &q, &info);
            lwork = tg_sp_lwork(wq[0], lwork);
        }
        if ((work = malloc(c * sizeof(TGT) * lwork)) == NULL) {
            free(a); free(jpvt); return TG_ITEM_NOMEM;
        }
        if (piv && cplx) LAPACK_TGZgeqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, rwork, &info);
        else if (piv) LAPACK_TGSgeqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, &info);
        else if (cplx) LAPACK_TGZgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
        else LAPACK_TGSgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
    } else if (piv) {
        for (tg_lpint j = 0; j < n; j++) jpvt[j] = j + 1;   /* nothing to pivot: scipy's arange */
    }
    for (int64_t i = 0; i < rrows; i++)
        for (int64_t j = 0; j < n; j++) {
            TGT *to = (TGT *)TG_SP_AT2(r, i, j);
            for (int p = 0; p < c; p++) to[p] = i <= j ? a[c * (i + j * lda) + p] : 0;
        }
    if (piv) {
        tg_array *p = out[mode == 2 ? 1 : mode == 3 ? 3 : 2];
        for (int64_t j = 0; j < n; j++) *(int32_t *)TG_SP_AT1(p, j) = (int32_t)(jpvt[j] - 1);
    }
    if (mode == 3) {                     /* raw: geqrf's (or geqp3's) matrix and tau as LAPACK
                                          * left them */
        if (m > 0 && n > 0) tg_TGS_sp_store(out[0], a, lda, cplx);
        for (int64_t i = 0; i < k; i++)
            for (int p = 0; p < c; p++) ((TGT *)TG_SP_AT1(out[1], i))[p] = tau[c * i + p];
    } else if (mode != 2 && m > 0) {
        if (k > 0) {
            if (cplx) LAPACK_TGZungqr_(&m, &qcols, &k, a, &lda, tau, work, &lwork, &info);
            else LAPACK_TGSorgqr_(&m, &qcols, &k, a, &lda, tau, work, &lwork, &info);
            tg_TGS_sp_store(out[0], a, lda, cplx);
        } else tg_TGS_sp_eye(out[0], cplx);   /* no reflector: Q is the identity */
    }
    free(work); free(jpvt); free(a);
    return tg_sp_result(info, 1);
}

static TG_COLD int tg_TGS_sp_qr(tg_item *it) { return tg_TGS_sp_qr_any(it, 0); }

/* schur's and qz's sort orders as LAPACK's select functions (scipy's definitions: schur
 * tests the eigenvalue, qz the ratio alpha / beta, false for beta == 0 but in 'ouc') */
static tg_lpint tg_TGS_sel_none(const TGT *wr, const TGT *wi) { (void)wr; (void)wi; return 0; }
static tg_lpint tg_TGS_sel_lhp(const TGT *wr, const TGT *wi) { (void)wi; return *wr < 0; }
static tg_lpint tg_TGS_sel_rhp(const TGT *wr, const TGT *wi) { (void)wi; return *wr >= 0; }
static tg_lpint tg_TGS_sel_iuc(const TGT *wr, const TGT *wi) { return hypot(*wr, *wi) <= 1; }
static tg_lpint tg_TGS_sel_ouc(const TGT *wr, const TGT *wi) { return hypot(*wr, *wi) > 1; }
static tg_lpint tg_TGZ_sel_none(const TGT *w) { (void)w; return 0; }
static tg_lpint tg_TGZ_sel_lhp(const TGT *w) { return w[0] < 0; }
static tg_lpint tg_TGZ_sel_rhp(const TGT *w) { return w[0] >= 0; }
static tg_lpint tg_TGZ_sel_iuc(const TGT *w) { return hypot(w[0], w[1]) <= 1; }
static tg_lpint tg_TGZ_sel_ouc(const TGT *w) { return hypot(w[0], w[1]) > 1; }

/* whether alpha / beta (alpha = ar + i ai, beta = br + i bi) is selected by ``sort`` */
static int tg_TGS_qz_pick(int sort, double ar, double ai, double br, double bi)
{
    const double b2 = br * br + bi * bi;
    if (b2 == 0) return sort == TG_SORT_OUC && (ar != 0 || ai != 0);
    const double re = (ar * br + ai * bi) / b2, im = (ai * br - ar * bi) / b2;
    switch (sort) {
    case TG_SORT_LHP: return re < 0;
    case TG_SORT_RHP: return re > 0;
    case TG_SORT_IUC: return hypot(re, im) < 1;
    case TG_SORT_OUC: return hypot(re, im) > 1;
    default: return 0;
    }
}
#define TG_QZ_SELECTS(kind, code)                                                            \
    static tg_lpint tg_TGS_qz_##kind(const TGT *ar, const TGT *ai, const TGT *b)            \
    { return tg_TGS_qz_pick(code, *ar, *ai, *b, 0); }                                        \
    static tg_lpint tg_TGZ_qz_##kind(const TGT *a, const TGT *b)                            \
    { return tg_TGS_qz_pick(code, a[0], a[1], b[0], b[1]); }
TG_QZ_SELECTS(none, TG_SORT_NONE)
TG_QZ_SELECTS(lhp, TG_SORT_LHP)
TG_QZ_SELECTS(rhp, TG_SORT_RHP)
TG_QZ_SELECTS(iuc, TG_SORT_IUC)
TG_QZ_SELECTS(ouc, TG_SORT_OUC)
#undef TG_QZ_SELECTS

/* schur (params: sort, complex): out t, z (complex pairs when ``complex``) */
static TG_COLD int tg_TGS_sp_schur(tg_item *it)
{
    const tg_array *const *in = it->in;
    tg_array *const *out = it->out;
    const int *params = it->params;
    static const tg_TGS_select2 real_sel[] = {tg_TGS_sel_none, tg_TGS_sel_lhp, tg_TGS_sel_rhp,
                                              tg_TGS_sel_iuc, tg_TGS_sel_ouc};
    static const tg_TGZ_select1 cplx_sel[] = {tg_TGZ_sel_none, tg_TGZ_sel_lhp, tg_TGZ_sel_rhp,
                                              tg_TGZ_sel_iuc, tg_TGZ_sel_ouc};
    const tg_lpint n = (tg_lpint)in[0]->shape[0], q = -1;
    const int sort = params[0], cplx = params[1], c = cplx ? 2 : 1;
    const char sortc = sort ? 'S' : 'N';
    if (n == 0) return 0;
    tg_sp_threads();
    TGT *a = malloc(sizeof(TGT) * (2 * c * (size_t)n * n + 3 * (size_t)n));
    TGT *vs = a + c * (int64_t)n * n, *w = vs + c * (int64_t)n * n, *rwork = w + 2 * n;
    TGT wq[2], *work = NULL;
    tg_lpint *bwork = malloc(sizeof(tg_lpint) * n), sdim, info, lwork;
    if (a == NULL || bwork == NULL) { free(a); free(bwork); return TG_ITEM_NOMEM; }
    if (cplx) {
        tg_TGZ_sp_load(a, n, in[0]);
        LAPACK_TGZgees_("V", &sortc, cplx_sel[sort], &n, a, &n, &sdim, w, vs, &n, wq, &q,
                        rwork, bwork, &info, 1, 1);
        lwork = tg_sp_lwork(wq[0], 2 * n);
        if ((work = malloc(2 * sizeof(TGT) * lwork)) == NULL) info = TG_SP_NOMEM;
        else LAPACK_TGZgees_("V", &sortc, cplx_sel[sort], &n, a, &n, &sdim, w, vs, &n, work,
                             &lwork, rwork, bwork, &info, 1, 1);
    } else {
        tg_TGS_sp_load(a, n, in[0]);
        LAPACK_TGSgees_("V", &sortc, real_sel[sort], &n, a, &n, &sdim, w, w + n, vs, &n, wq,
                        &q, bwork, &info, 1, 1);
        lwork = tg_sp_lwork(wq[0], 3 * n);
        if ((work = malloc(sizeof(TGT) * lwork)) == NULL) info = TG_SP_NOMEM;
        else LAPACK_TGSgees_("V", &sortc, real_sel[sort], &n, a, &n, &sdim, w, w + n, vs, &n,
                             work, &lwork, bwork, &info, 1, 1);
    }
    if (info == 0) {
        tg_TGS_sp_store(out[0], a, n, cplx);
        tg_TGS_sp_store(out[1], vs, n, cplx);
    }
    free(work); free(bwork); free(a);
    return tg_sp_result(info, info <= n ? 1 : info == n + 1 ? 2 : 3);
}

/* qz (params: sort, complex, eigenvalues): out aa, bb, q, z (complex pairs when ``complex``);
 * with ``eigenvalues``, aa, bb, alpha (always complex pairs), beta, q, z (ordqz's order) */
static TG_COLD int tg_TGS_sp_qz(tg_item *it)
{
    const tg_array *const *in = it->in;
    tg_array *const *out = it->out;
    const int *params = it->params;
    static const tg_TGS_select3 real_sel[] = {tg_TGS_qz_none, tg_TGS_qz_lhp, tg_TGS_qz_rhp,
                                              tg_TGS_qz_iuc, tg_TGS_qz_ouc};
    static const tg_TGZ_select2 cplx_sel[] = {tg_TGZ_qz_none, tg_TGZ_qz_lhp, tg_TGZ_qz_rhp,
                                              tg_TGZ_qz_iuc, tg_TGZ_qz_ouc};
    const tg_lpint n = (tg_lpint)in[0]->shape[0], q = -1;
    const int sort = params[0], cplx = params[1], c = cplx ? 2 : 1, ev = params[2];
    const char sortc = sort ? 'S' : 'N';
    if (n == 0) return 0;
    tg_sp_threads();
    const int64_t nn = c * (int64_t)n * n;
    TGT *a = malloc(sizeof(TGT) * (4 * (size_t)nn + 4 * (size_t)n));
    TGT *b = a + nn, *vsl = b + nn, *vsr = vsl + nn, *alpha = vsr + nn, *beta = alpha + 2 * n;
    TGT wq[2], *work = NULL;
    tg_lpint *bwork = malloc(sizeof(tg_lpint) * n), sdim, info, lwork;
    if (a == NULL || bwork == NULL) { free(a); free(bwork); return TG_ITEM_NOMEM; }
    if (cplx) {
        TGT *rw = malloc(sizeof(TGT) * 8 * (size_t)n);
        tg_TGZ_sp_load(a, n, in[0]);
        tg_TGZ_sp_load(b, n, in[1]);
        if (rw == NULL) info = TG_SP_NOMEM;
        else {
            LAPACK_TGZgges_("V", "V", &sortc, cplx_sel[sort], &n, a, &n, b, &n, &sdim, alpha,
                            beta, vsl, &n, vsr, &n, wq, &q, rw, bwork, &info, 1, 1, 1);
            lwork = tg_sp_lwork(wq[0], 2 * n);
            if ((work = malloc(2 * sizeof(TGT) * lwork)) == NULL) info = TG_SP_NOMEM;
            else LAPACK_TGZgges_("V", "V", &sortc, cplx_sel[sort], &n, a, &n, b, &n, &sdim,
                                 alpha, beta, vsl, &n, vsr, &n, work, &lwork, rw, bwork,
                                 &info, 1, 1, 1);
        }
        free(rw);
    } else {
        tg_TGS_sp_load(a, n, in[0]);
        tg_TGS_sp_load(b, n, in[1]);
        LAPACK_TGSgges_("V", "V", &sortc, real_sel[sort], &n, a, &n, b, &n, &sdim, alpha,
                        alpha + n, beta, vsl, &n, vsr, &n, wq, &q, bwork, &info, 1, 1, 1);
        lwork = tg_sp_lwork(wq[0], 8 * n + 16);
        if ((work = malloc(sizeof(TGT) * lwork)) == NULL) info = TG_SP_NOMEM;
        else LAPACK_TGSgges_("V", "V", &sortc, real_sel[sort], &n, a, &n, b, &n, &sdim, alpha,
                             alpha + n, beta, vsl, &n, vsr, &n, work, &lwork, bwork, &info,
                             1, 1, 1);
    }
    if (info == 0) {
        tg_TGS_sp_store(out[0], a, n, cplx);
        tg_TGS_sp_store(out[1], b, n, cplx);
        tg_TGS_sp_store(out[ev ? 4 : 2], vsl, n, cplx);
        tg_TGS_sp_store(out[ev ? 5 : 3], vsr, n, cplx);
    }
    if (info == 0 && ev)   /* real: alphar, alphai, beta; complex: alpha, beta as pairs */
        for (tg_lpint j = 0; j < n; j++) {
            TGT *al = (TGT *)TG_SP_AT1(out[2], j), *be = (TGT *)TG_SP_AT1(out[3], j);
            al[0] = cplx ? alpha[2 * j] : alpha[j];
            al[1] = cplx ? alpha[2 * j + 1] : alpha[n + j];
            be[0] = cplx ? beta[2 * j] : beta[j];
            if (cplx) be[1] = beta[2 * j + 1];
        }
    free(work); free(bwork); free(a);
    return tg_sp_result(info, info <= n + 1 ? 1 : 2);
}

/* ---- the same ops of complex matrices (Hermitian for eigh): TGZ routines, pairs of TGT */

/* eigh of a Hermitian matrix (params: lower, vectors): w real, v complex */
static TG_COLD int tg_TGZ_sp_eigh(tg_item *it)
{
    const tg_lpint n = (tg_lpint)it->in[0]->shape[0], q = -1;
    const char jobz = it->params[1] ? 'V' : 'N', uplo = it->params[0] ? 'L' : 'U';
    if (n == 0) return 0;
    tg_sp_threads();
    TGT *a = malloc(sizeof(TGT) * (2 * (size_t)n * n + n)), *w = a + 2 * (int64_t)n * n;
    TGT wq[2], rwq, *work = NULL, *rwork = NULL;
    tg_lpint iwq, info, *iwork = NULL;
    if (a == NULL) return TG_ITEM_NOMEM;
    tg_TGZ_sp_load(a, n, it->in[0]);
    LAPACK_TGZheevd_(&jobz, &uplo, &n, a, &n, w, wq, &q, &rwq, &q, &iwq, &q, &info, 1, 1);
    const tg_lpint lwork = tg_sp_lwork(wq[0], 1), lrwork = tg_sp_lwork(rwq, 1);
    const tg_lpint liwork = iwq > 1 ? iwq : 1;
    work = malloc(2 * sizeof(TGT) * lwork);
    rwork = malloc(sizeof(TGT) * lrwork);
    iwork = malloc(sizeof(tg_lpint) * liwork);
    if (work == NULL || rwork == NULL || iwork == NULL) info = TG_SP_NOMEM;
    else LAPACK_TGZheevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, rwork, &lrwork, iwork,
                          &liwork, &info, 1, 1);
    if (info == 0) {
        tg_TGS_sp_store1(it->out[0], w);
        if (it->params[1]) tg_TGS_sp_store(it->out[1], a, n, 1);
    }
    free(work); free(rwork); free(iwork); free(a);
    return tg_sp_result(info, 1);
}

/* the generalized eigh of Hermitian a and Hermitian positive definite b (params: lower) */
static TG_COLD int tg_TGZ_sp_eigh_general(tg_item *it)
{
    const tg_lpint n = (tg_lpint)it->in[0]->shape[0], q = -1, itype = 1;
    const char uplo = it->params[0] ? 'L' : 'U';
    if (n == 0) return 0;
    tg_sp_threads();
    TGT *a = malloc(sizeof(TGT) * (4 * (size_t)n * n + n)), *b = a + 2 * (int64_t)n * n;
    TGT *w = b + 2 * (int64_t)n * n, wq[2], rwq, *work = NULL, *rwork = NULL;
    tg_lpint iwq, info, *iwork = NULL;
    if (a == NULL) return TG_ITEM_NOMEM;
    tg_TGZ_sp_load(a, n, it->in[0]);
    tg_TGZ_sp_load(b, n, it->in[1]);
    LAPACK_TGZhegvd_(&itype, "V", &uplo, &n, a, &n, b, &n, w, wq, &q, &rwq, &q, &iwq, &q,
                     &info, 1, 1);
    const tg_lpint lwork = tg_sp_lwork(wq[0], 1), lrwork = tg_sp_lwork(rwq, 1);
    const tg_lpint liwork = iwq > 1 ? iwq : 1;
    work = malloc(2 * sizeof(TGT) * lwork);
    rwork = malloc(sizeof(TGT) * lrwork);
    iwork = malloc(sizeof(tg_lpint) * liwork);
    if (work == NULL || rwork == NULL || iwork == NULL) info = TG_SP_NOMEM;
    else LAPACK_TGZhegvd_(&itype, "V", &uplo, &n, a, &n, b, &n, w, work, &lwork, rwork,
                          &lrwork, iwork, &liwork, &info, 1, 1);
    if (info == 0) {
        tg_TGS_sp_store1(it->out[0], w);
        tg_TGS_sp_store(it->out[1], a, n, 1);
    }
    free(work); free(rwork); free(iwork); free(a);
    return tg_sp_result(info, info > 0 && info <= n ? 1 : 2);
}

/* eig of a complex matrix: w, v complex; refuses nan and inf */
static TG_COLD int tg_TGZ_sp_eig(tg_item *it)
{
    const tg_lpint n = (tg_lpint)it->in[0]->shape[0], q = -1, one = 1;
    if (n == 0) return 0;
    if (!tg_TGS_sp_finite(it->in[0])) return 1;
    tg_sp_threads();
    TGT *a = malloc(sizeof(TGT) * (4 * (size_t)n * n + 4 * (size_t)n));
    TGT *vr = a + 2 * (int64_t)n * n, *w = vr + 2 * (int64_t)n * n, *rwork = w + 2 * n;
    TGT wq[2], vl[2], *work = NULL;
    tg_lpint info;
    if (a == NULL) return TG_ITEM_NOMEM;
    tg_TGZ_sp_load(a, n, it->in[0]);
    LAPACK_TGZgeev_("N", "V", &n, a, &n, w, vl, &one, vr, &n, wq, &q, rwork, &info, 1, 1);
    const tg_lpint lwork = tg_sp_lwork(wq[0], 2 * n);
    if ((work = malloc(2 * sizeof(TGT) * lwork)) == NULL) info = TG_SP_NOMEM;
    else LAPACK_TGZgeev_("N", "V", &n, a, &n, w, vl, &one, vr, &n, work, &lwork, rwork, &info,
                         1, 1);
    if (info == 0) {
        for (tg_lpint j = 0; j < n; j++) {
            TGT *to = (TGT *)TG_SP_AT1(it->out[0], j);
            to[0] = w[2 * j];
            to[1] = w[2 * j + 1];
        }
        tg_TGS_sp_store(it->out[1], vr, n, 1);
    }
    free(work); free(a);
    return tg_sp_result(info, 2);
}

/* svd of a complex matrix (params: full_matrices, compute_uv): u, vh complex, s real */
static TG_COLD int tg_TGZ_sp_svd(tg_item *it)
{
    const tg_array *x = it->in[0];
    tg_array *const *out = it->out;
    const tg_lpint m = (tg_lpint)x->shape[0], n = (tg_lpint)x->shape[1], q = -1;
    const tg_lpint k = m < n ? m : n, full = it->params[0], uv = it->params[1];
    const char jobz = !uv ? 'N' : full ? 'A' : 'S';
    if (k == 0) {
        if (uv && full) { tg_TGS_sp_eye(out[0], 1); tg_TGS_sp_eye(out[2], 1); }
        return 0;
    }
    if (!tg_TGS_sp_finite(x)) return 1;
    tg_sp_threads();
    const tg_lpint ucols = uv ? (full ? m : k) : 1, vrows = uv ? (full ? n : k) : 1;
    const tg_lpint ldu = uv ? m : 1, vcols = uv ? n : 1, big = m > n ? m : n;
    const int64_t lrwork = !uv ? 7 * (int64_t)k :
        (int64_t)k * (5 * k + 7 > 2 * big + 2 * k + 1 ? 5 * k + 7 : 2 * big + 2 * k + 1);
    TGT *a = malloc(sizeof(TGT) * (2 * ((size_t)m * n + (size_t)ldu * ucols +
                                        (size_t)vrows * vcols) + k + lrwork));
    TGT *u = a + 2 * (int64_t)m * n, *vt = u + 2 * (int64_t)ldu * ucols;
    TGT *s = vt + 2 * (int64_t)vrows * vcols, *rwork = s + k, wq[2], *work = NULL;
    tg_lpint *iwork = malloc(sizeof(tg_lpint) * 8 * (size_t)k), info;
    if (a == NULL || iwork == NULL) { free(a); free(iwork); return TG_ITEM_NOMEM; }
    tg_TGZ_sp_load(a, m, x);
    LAPACK_TGZgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &vrows, wq, &q, rwork, iwork, &info,
                     1);
    const tg_lpint lwork = tg_sp_lwork(wq[0], 1);
    if ((work = malloc(2 * sizeof(TGT) * lwork)) == NULL) info = TG_SP_NOMEM;
    else LAPACK_TGZgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &vrows, work, &lwork, rwork,
                          iwork, &info, 1);
    if (info == 0) tg_TGS_sp_svd_store(out, uv, s, u, ldu, vt, vrows, 1);
    free(work); free(iwork); free(a);
    return tg_sp_result(info, 2);
}

/* qr of a complex matrix (tg_TGS_sp_qr_any's params and outputs) */
static TG_COLD int tg_TGZ_sp_qr(tg_item *it) { return tg_TGS_sp_qr_any(it, 1); }
