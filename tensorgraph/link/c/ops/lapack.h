/* ---- LAPACK declarations and column-major copies (tensorgraph/link/c/ops/lapack.h) ----
 * A template: lapack.py pastes it once per element type with the placeholders replaced (the
 * type, LAPACK's letter for it, the library's symbol prefix: scipy-openblas32 exports
 * scipy_dpotrf_ ...). The routines are LAPACK's Fortran interface: every argument by
 * address, column-major matrices, 32-bit integers, and one hidden length (size_t) after the
 * arguments per character argument (gfortran's convention; a C-built LAPACK ignores them).
 * Kernels copy each item into a column-major scratch matrix (any input dtype and strides),
 * call LAPACK on it and copy the result into the item's C-contiguous output.
 * Needs lapack_template.h. */

void LAPACK_TGSpotrf_(const char *uplo, const int *n, TGT *a, const int *lda, int *info,
                      size_t luplo);
void LAPACK_TGSpotrs_(const char *uplo, const int *n, const int *nrhs, const TGT *a,
                      const int *lda, TGT *b, const int *ldb, int *info, size_t luplo);
void LAPACK_TGSposv_(const char *uplo, const int *n, const int *nrhs, TGT *a, const int *lda,
                     TGT *b, const int *ldb, int *info, size_t luplo);
void LAPACK_TGStrtrs_(const char *uplo, const char *trans, const char *diag, const int *n,
                      const int *nrhs, const TGT *a, const int *lda, TGT *b, const int *ldb,
                      int *info, size_t luplo, size_t ltrans, size_t ldiag);
void LAPACK_TGSgetrf_(const int *m, const int *n, TGT *a, const int *lda, int *ipiv, int *info);
void LAPACK_TGSgetrs_(const char *trans, const int *n, const int *nrhs, const TGT *a,
                      const int *lda, const int *ipiv, TGT *b, const int *ldb, int *info,
                      size_t ltrans);
void LAPACK_TGSgesv_(const int *n, const int *nrhs, TGT *a, const int *lda, int *ipiv, TGT *b,
                     const int *ldb, int *info);
void LAPACK_TGSsysv_(const char *uplo, const int *n, const int *nrhs, TGT *a, const int *lda,
                     int *ipiv, TGT *b, const int *ldb, TGT *work, const int *lwork, int *info,
                     size_t luplo);
void LAPACK_TGSgtsv_(const int *n, const int *nrhs, TGT *dl, TGT *d, TGT *du, TGT *b,
                     const int *ldb, int *info);
void LAPACK_TGSgesdd_(const char *jobz, const int *m, const int *n, TGT *a, const int *lda,
                      TGT *s, TGT *u, const int *ldu, TGT *vt, const int *ldvt, TGT *work,
                      const int *lwork, int *iwork, int *info, size_t ljobz);
void LAPACK_TGSgelsd_(const int *m, const int *n, const int *nrhs, TGT *a, const int *lda,
                      TGT *b, const int *ldb, TGT *s, const TGT *rcond, int *rank, TGT *work,
                      const int *lwork, int *iwork, int *info);
void LAPACK_TGSsyevd_(const char *jobz, const char *uplo, const int *n, TGT *a, const int *lda,
                      TGT *w, TGT *work, const int *lwork, int *iwork, const int *liwork,
                      int *info, size_t ljobz, size_t luplo);

/* a (an item view of any real or integer dtype but float16, any strides) into dst column-major, leading
 * dimension ld, converted to TGT as numpy's astype does. */
static void tg_la_TGS_get(const tg_array *a, TGT *dst, int64_t ld)
{
    const int64_t m = tg_la_rows(a), n = tg_la_cols(a);
    const int64_t rs = a->ndim >= 1 ? a->strides[0] : 0, cs = a->ndim == 2 ? a->strides[1] : 0;
#define TG_LA_GET(CT) {                                                     \
        for (int64_t j = 0; j < n; j++)                                        \
            for (int64_t i = 0; i < m; i++)                                    \
                dst[i + j * ld] = (TGT)*(const CT *)(a->data + i * rs + j * cs); \
        break;                                                                 \
    }
    switch (a->typenum) {
    case TG_FLOAT64: TG_LA_GET(double)
    case TG_FLOAT32: TG_LA_GET(float)
    case TG_BOOL: case TG_UINT8: TG_LA_GET(uint8_t)
    case TG_INT8: TG_LA_GET(int8_t)
    case TG_INT16: TG_LA_GET(int16_t)
    case TG_UINT16: TG_LA_GET(uint16_t)
    case TG_INT32: TG_LA_GET(int32_t)
    case TG_UINT32: TG_LA_GET(uint32_t)
    case TG_LONG: case TG_INT64: TG_LA_GET(int64_t)
    case TG_ULONG: case TG_UINT64: TG_LA_GET(uint64_t)
    default: break;   /* lapack.py gives C only to these dtypes */
    }
#undef TG_LA_GET
}

/* src (column-major, leading dimension ld) into the C-contiguous item view out. */
static void tg_la_TGS_put(const TGT *src, int64_t ld, tg_array *out)
{
    const int64_t m = tg_la_rows(out), n = tg_la_cols(out);
    TGT *o = (TGT *)out->data;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) o[i * n + j] = src[i + j * ld];
}

/* The whole C-contiguous item view out set to NaN (a factorization that failed, when the op
 * says NaN rather than an error). */
static void tg_la_TGS_nan(tg_array *out)
{
    const int64_t count = tg_la_rows(out) * tg_la_cols(out);
    TGT *o = (TGT *)out->data;
    for (int64_t i = 0; i < count; i++) o[i] = (TGT)NAN;
}

/* The lwork LAPACK asks for in a workspace query (work[0] of a call with lwork = -1). */
static inline int tg_la_TGS_lwork(TGT query)
{
    return query < 1 ? 1 : (int)query;
}
