/* ---- what the spectral LAPACK kernels share (tensorgraph/link/c/ops/spectral_common.h) ----
 * Every kernel of spectral.h (and expm, here) is a tg_item_kernel of batched.h: it computes
 * one matrix, one item of a Blockwise batch or the core op's one. It reads its inputs through
 * their strides into column-major work buffers (LAPACK's layout; a transposed or sliced input
 * costs one copy), calls LAPACK and writes the results through the outputs' strides. It owns
 * nothing when it returns and touches no tg_ctx, so items run on several threads at once; it
 * returns 0, TG_ITEM_NOMEM or a problem code (1, 2, ...: the op's list of problems in
 * linalg_spectral.py words the LinAlgError). Needs batched.h. */
#ifndef TG_SPECTRAL_COMMON_H
#define TG_SPECTRAL_COMMON_H

typedef int tg_lpint;            /* scipy-openblas32: 32-bit LAPACK integers and logicals */
typedef size_t tg_lpstrlen;      /* the hidden length of a Fortran character argument */
#define TG_LP_MAXINT 2147483647LL

/* INFO after a work buffer could not be allocated (no LAPACK routine returns it) */
#define TG_SP_NOMEM (-2147483647 - 1)

/* The sort orders of schur and qz (scipy's names): 0 none, then lhp, rhp, iuc, ouc. */
enum { TG_SORT_NONE = 0, TG_SORT_LHP = 1, TG_SORT_RHP = 2, TG_SORT_IUC = 3, TG_SORT_OUC = 4 };

/* The library's LAPACK calls BLAS on one thread: a batch is split across tensorgraph's pool
 * instead (lapack.py says why). Every kernel calls this first. */
void LAPACK_openblas_set_num_threads(int num_threads);
static void tg_sp_threads(void)
{
    static int done = 0;
    if (!__atomic_load_n(&done, __ATOMIC_RELAXED)) {
        LAPACK_openblas_set_num_threads(1);
        __atomic_store_n(&done, 1, __ATOMIC_RELAXED);
    }
}

/* A kernel's result for the driver (batched.h) from LAPACK's INFO: 0, TG_ITEM_NOMEM, or
 * ``code`` (the problem of the op's list, spectral.py) for any other failure. */
static inline int tg_sp_result(int64_t info, int code)
{
    return info == 0 ? 0 : info == TG_SP_NOMEM ? TG_ITEM_NOMEM : code;
}

/* The address of element (i, j) of a 2-d view, of element i of a 1-d one. */
#define TG_SP_AT2(a, i, j) ((a)->data + (int64_t)(i) * (a)->strides[0] + \
                            (int64_t)(j) * (a)->strides[1])
#define TG_SP_AT1(a, i) ((a)->data + (int64_t)(i) * (a)->strides[0])

static inline int64_t tg_sp_max1(int64_t v) { return v > 1 ? v : 1; }

/* The size LAPACK's workspace query reported (a float holding an integer). */
static inline tg_lpint tg_sp_lwork(double reported, tg_lpint least)
{
    tg_lpint n = (tg_lpint)reported;
    return n > least ? n : least;
}

/* A float16's value from its bits (without _Float16, which not every compiler has) */
static inline double tg_sp_half(uint16_t h)
{
    const int e = (h >> 10) & 31, m = h & 1023;
    const double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) :
        ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

/* The element at p of an array of numpy type ``typenum`` as a double (its imaginary part in
 * *im, 0 for real types, when im is not NULL): linalg ops compute integer inputs in floats. */
static inline double tg_sp_read(const char *p, int typenum, double *im)
{
    if (im) *im = 0;
    switch (typenum) {
    case TG_FLOAT64: return *(const double *)p;
    case TG_FLOAT32: return *(const float *)p;
    case TG_COMPLEX128: if (im) *im = ((const double *)p)[1]; return *(const double *)p;
    case TG_COMPLEX64: if (im) *im = ((const float *)p)[1]; return *(const float *)p;
    case TG_FLOAT16: return tg_sp_half(*(const uint16_t *)p);
    case TG_BOOL: case TG_UINT8: return *(const uint8_t *)p;
    case TG_INT8: return *(const int8_t *)p;
    case TG_INT16: return *(const int16_t *)p;
    case TG_UINT16: return *(const uint16_t *)p;
    case TG_INT32: return *(const int32_t *)p;
    case TG_UINT32: return *(const uint32_t *)p;
    case TG_INT64: case TG_LONG: return (double)*(const int64_t *)p;
    case TG_UINT64: case TG_ULONG: return (double)*(const uint64_t *)p;
    default: return NAN;
    }
}

/* ---- the item shape functions (tg_item_shapes of batched.h), with perform's words */

static TG_COLD int tg_sp_too_big(const char *what, const tg_array *const *in, int nin,
                                 char *msg, size_t len)
{
    for (int i = 0; i < nin; i++)
        for (int d = 0; d < in[i]->ndim; d++)
            if (in[i]->shape[d] > TG_LP_MAXINT / 8) {
                char sb[96];
                snprintf(msg, len, "ValueError: %s: a matrix of shape %s is too large for the "
                         "32-bit LAPACK", what, tg_shape_str(in[i], sb, sizeof sb));
                return 1;
            }
    return 0;
}

/* inputs square (and of one shape), outputs: ``nvec`` vectors of n then n x n matrices */
static TG_COLD int tg_sp_square(const char *what, const tg_array *const *in, int nin,
                                int64_t (*out)[TG_MAXDIM], int nvec, int nout, char *msg,
                                size_t len)
{
    const int64_t n = in[0]->shape[0];
    for (int j = 0; j < nout; j++) { out[j][0] = n; out[j][1] = n; }
    for (int i = 0; i < nin; i++)
        if (in[i]->shape[0] != in[i]->shape[1]) {
            char sb[96];
            snprintf(msg, len, "ValueError: %s: expected a square matrix, got shape %s", what,
                     tg_shape_str(in[i], sb, sizeof sb));
            return 1;
        }
    if (nin == 2 && in[1]->shape[0] != n) {
        char sa[96], sb[96];
        snprintf(msg, len, "ValueError: %s: a and b differ in shape: %s and %s", what,
                 tg_shape_str(in[0], sa, sizeof sa), tg_shape_str(in[1], sb, sizeof sb));
        return 1;
    }
    (void)nvec;
    return tg_sp_too_big(what, in, nin, msg, len);
}

#define TG_SP_SQUARE_SHAPES(name, what, nin, nvec, nout)                                     \
    static TG_COLD int tg_sp_shapes_##name(const tg_array *const *in,                       \
                                           int64_t (*out)[TG_MAXDIM], const int *params,     \
                                           char *msg, size_t len)                            \
    { (void)params; return tg_sp_square(what, in, nin, out, nvec, nout, msg, len); }
TG_SP_SQUARE_SHAPES(eigh, "eigh", 1, 1, 2)
TG_SP_SQUARE_SHAPES(eigvalsh, "eigvalsh", 1, 1, 1)
TG_SP_SQUARE_SHAPES(eigh_general, "eigh", 2, 1, 2)
TG_SP_SQUARE_SHAPES(eig, "eig", 1, 1, 2)
TG_SP_SQUARE_SHAPES(schur, "schur", 1, 0, 2)
TG_SP_SQUARE_SHAPES(qz, "qz", 2, 0, 4)
TG_SP_SQUARE_SHAPES(qz_eigenvalues, "qz", 2, 0, 6)   /* alpha, beta: n, of out[2..3] */
TG_SP_SQUARE_SHAPES(expm, "expm", 1, 0, 1)
#undef TG_SP_SQUARE_SHAPES

/* svd (params: full_matrices, compute_uv): u, s, vh, or s */
static TG_COLD int tg_sp_shapes_svd(const tg_array *const *in, int64_t (*out)[TG_MAXDIM],
                                    const int *params, char *msg, size_t len)
{
    const int64_t m = in[0]->shape[0], n = in[0]->shape[1], k = m < n ? m : n;
    if (!params[1]) out[0][0] = k;
    else {
        out[0][0] = m; out[0][1] = params[0] ? m : k;
        out[1][0] = k;
        out[2][0] = params[0] ? n : k; out[2][1] = n;
    }
    return tg_sp_too_big("svd", in, 1, msg, len);
}

/* qr (params: mode 0 full, 1 economic, 2 r, 3 raw; pivoting): q, r / r / h, tau, r, then the
 * column order with pivoting */
static TG_COLD int tg_sp_shapes_qr(const tg_array *const *in, int64_t (*out)[TG_MAXDIM],
                                   const int *params, char *msg, size_t len)
{
    const int64_t m = in[0]->shape[0], n = in[0]->shape[1], k = m < n ? m : n;
    const int mode = params[0];
    int64_t *r = out[mode == 2 ? 0 : mode == 3 ? 2 : 1];
    r[0] = mode == 1 || mode == 3 ? k : m;
    r[1] = n;
    if (mode < 2) { out[0][0] = m; out[0][1] = mode == 1 ? k : m; }
    if (mode == 3) { out[0][0] = m; out[0][1] = n; out[1][0] = k; }
    if (params[1]) out[mode == 2 ? 1 : mode == 3 ? 3 : 2][0] = n;
    return tg_sp_too_big("qr", in, 1, msg, len);
}

/* ---- expm: scaling and squaring with a Pade approximant (Higham 2005), in double for both
 * float types (float32 results are the double ones rounded) */
void LAPACK_dgemm_(const char *transa, const char *transb, const tg_lpint *m,
                   const tg_lpint *n, const tg_lpint *k, const double *alpha, const double *a,
                   const tg_lpint *lda, const double *b, const tg_lpint *ldb,
                   const double *beta, double *c, const tg_lpint *ldc, tg_lpstrlen,
                   tg_lpstrlen);
void LAPACK_dgetrf_(const tg_lpint *m, const tg_lpint *n, double *a, const tg_lpint *lda,
                    tg_lpint *ipiv, tg_lpint *info);
void LAPACK_dgetrs_(const char *trans, const tg_lpint *n, const tg_lpint *nrhs,
                    const double *a, const tg_lpint *lda, const tg_lpint *ipiv, double *b,
                    const tg_lpint *ldb, tg_lpint *info, tg_lpstrlen);

/* c = a @ b, n x n */
static TG_COLD void tg_sp_mm(tg_lpint n, const double *a, const double *b, double *c)
{
    const double one = 1, zero = 0;
    LAPACK_dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
}

/* out = sum_k coef[k] * terms[k] (n x n each; terms[k] NULL: the identity) */
static TG_COLD void tg_sp_combine(int64_t nn, tg_lpint n, int count, const double *coef,
                                  const double *const *terms, double *out)
{
    for (int64_t e = 0; e < nn; e++) {
        double v = 0;
        for (int k = 0; k < count; k++)
            v += coef[k] * (terms[k] ? terms[k][e] : (double)(e % (n + 1) == 0));
        out[e] = v;
    }
}

/* the largest Pade degree's table (Higham 2005, double precision) */
static const double tg_sp_theta[5] = {1.495585217958292e-2, 2.539398330063230e-1,
                                      9.504178996162932e-1, 2.097847961257068e0,
                                      5.371920351148152e0};
static const double tg_sp_pade[5][14] = {
    {120, 60, 12, 1},
    {30240, 15120, 3360, 420, 30, 1},
    {17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1},
    {17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960.,
     90., 1.},
    {64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
     129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920., 40840800.,
     960960., 16380., 182., 1.}};

/* expm: out[0] = exp(in[0]); a matrix with a nan or an inf gives nan (scipy's value) */
static TG_COLD int tg_sp_expm(tg_item *it)
{
    const tg_array *const *in = it->in;
    tg_array *const *out = it->out;
    const tg_array *x = in[0];
    const tg_lpint n = (tg_lpint)x->shape[0];
    const int64_t nn = (int64_t)n * n;
    tg_array *o = out[0];
    if (n == 0) return 0;
    tg_sp_threads();
    double *buf = malloc(sizeof(double) * 8 * (size_t)nn + sizeof(tg_lpint) * (size_t)n);
    if (buf == NULL) return TG_ITEM_NOMEM;
    double *a = buf, *a2 = a + nn, *a4 = a2 + nn, *a6 = a4 + nn, *u = a6 + nn, *v = u + nn;
    double *t = v + nn, *p = t + nn;
    tg_lpint *ipiv = (tg_lpint *)(p + nn), info = 0;
    double norm = 0;
    int finite = 1;
    for (tg_lpint j = 0; j < n; j++) {
        double col = 0;
        for (tg_lpint i = 0; i < n; i++) {
            const double e = tg_sp_read(TG_SP_AT2(x, i, j), x->typenum, NULL);
            a[i + (int64_t)j * n] = e;
            col += fabs(e);
            finite &= isfinite(e);
        }
        norm = col > norm ? col : norm;
    }
    if (finite) {
        int deg = 0, s = 0;
        while (deg < 4 && norm > tg_sp_theta[deg]) deg++;
        if (deg == 4 && norm > tg_sp_theta[4]) {
            s = (int)ceil(log2(norm / tg_sp_theta[4]));
            const double scale = ldexp(1.0, -s);
            for (int64_t e = 0; e < nn; e++) a[e] *= scale;
        }
        const double *b = tg_sp_pade[deg];
        tg_sp_mm(n, a, a, a2);
        tg_sp_mm(n, a2, a2, a4);
        tg_sp_mm(n, a4, a2, a6);
        if (deg < 4) {  /* degree m = 3, 5, 7, 9: U = A sum b_odd A^(k-1), V = sum b_even A^k */
            const int m = 2 * deg + 3;
            double *pw[5] = {NULL, a2, a4, a6, NULL};
            if (m == 9) { tg_sp_mm(n, a4, a4, p); pw[4] = p; }
            double odd[5], even[5];
            const double *terms[5];
            for (int k = 0; k <= m / 2; k++) {
                odd[k] = b[2 * k + 1];
                even[k] = b[2 * k];
                terms[k] = pw[k];
            }
            tg_sp_combine(nn, n, m / 2 + 1, odd, terms, t);
            tg_sp_mm(n, a, t, u);
            tg_sp_combine(nn, n, m / 2 + 1, even, terms, v);
        } else {        /* degree 13 */
            const double *high[3] = {a6, a4, a2}, *low[4] = {a6, a4, a2, NULL};
            const double cu_hi[3] = {b[13], b[11], b[9]}, cu_lo[4] = {b[7], b[5], b[3], b[1]};
            const double cv_hi[3] = {b[12], b[10], b[8]}, cv_lo[4] = {b[6], b[4], b[2], b[0]};
            tg_sp_combine(nn, n, 3, cu_hi, high, t);
            tg_sp_mm(n, a6, t, p);
            tg_sp_combine(nn, n, 4, cu_lo, low, t);
            for (int64_t e = 0; e < nn; e++) t[e] += p[e];
            tg_sp_mm(n, a, t, u);
            tg_sp_combine(nn, n, 3, cv_hi, high, t);
            tg_sp_mm(n, a6, t, p);
            tg_sp_combine(nn, n, 4, cv_lo, low, v);
            for (int64_t e = 0; e < nn; e++) v[e] += p[e];
        }
        /* (V - U) X = V + U */
        for (int64_t e = 0; e < nn; e++) {
            p[e] = v[e] + u[e];
            t[e] = v[e] - u[e];
        }
        LAPACK_dgetrf_(&n, &n, t, &n, ipiv, &info);
        if (info == 0) {
            LAPACK_dgetrs_("N", &n, &n, t, &n, ipiv, p, &n, &info, 1);
            for (int k = 0; k < s; k++) {   /* undo the scaling: square s times */
                tg_sp_mm(n, p, p, t);
                memcpy(p, t, sizeof(double) * (size_t)nn);
            }
        }
    }
    if (info == 0)
        for (tg_lpint i = 0; i < n; i++)
            for (tg_lpint j = 0; j < n; j++) {
                const double e = finite ? p[i + (int64_t)j * n] : NAN;
                if (o->typenum == TG_FLOAT32) *(float *)TG_SP_AT2(o, i, j) = (float)e;
                else *(double *)TG_SP_AT2(o, i, j) = e;
            }
    free(buf);
    return tg_sp_result(info, 1);   /* 1: the Pade denominator is singular */
}

/* ---- solve_discrete_are: scipy's algorithm (the balanced symplectic pencil deflated by a
 * QR, ordered by QZ, the stable subspace solved for X), in double as scipy computes it for
 * float32 too. Problems: 1 a nan or an inf, 2 / 3 q / r not symmetric, 4 QZ failed, 5 no
 * finite solution, 6 eigenvalues too close to the unit circle. */
void LAPACK_dgebal_(const char *job, const tg_lpint *n, double *a, const tg_lpint *lda,
                    tg_lpint *ilo, tg_lpint *ihi, double *scale, tg_lpint *info, tg_lpstrlen);
void LAPACK_dgeqrf_(const tg_lpint *m, const tg_lpint *n, double *a, const tg_lpint *lda,
                    double *tau, double *work, const tg_lpint *lwork, tg_lpint *info);
void LAPACK_dorgqr_(const tg_lpint *m, const tg_lpint *n, const tg_lpint *k, double *a,
                    const tg_lpint *lda, const double *tau, double *work,
                    const tg_lpint *lwork, tg_lpint *info);
void LAPACK_dgges_(const char *jobvsl, const char *jobvsr, const char *sort,
                   tg_lpint (*selctg)(const double *, const double *, const double *),
                   const tg_lpint *n, double *a, const tg_lpint *lda, double *b,
                   const tg_lpint *ldb, tg_lpint *sdim, double *alphar, double *alphai,
                   double *beta, double *vsl, const tg_lpint *ldvsl, double *vsr,
                   const tg_lpint *ldvsr, double *work, const tg_lpint *lwork,
                   tg_lpint *bwork, tg_lpint *info, tg_lpstrlen, tg_lpstrlen, tg_lpstrlen);
void LAPACK_dtrcon_(const char *norm, const char *uplo, const char *diag, const tg_lpint *n,
                    const double *a, const tg_lpint *lda, double *rcond, double *work,
                    tg_lpint *iwork, tg_lpint *info, tg_lpstrlen, tg_lpstrlen, tg_lpstrlen);

/* qz's 'iuc' (scipy's ordqz): |alpha / beta| < 1, false for beta == 0 */
static tg_lpint tg_sp_dare_iuc(const double *ar, const double *ai, const double *b)
{
    return *b != 0 && hypot(*ar, *ai) / fabs(*b) < 1;
}

/* the 1-norm of the m x n column-major a (leading dimension ld), of a - a^T when ``skew`` */
static TG_COLD double tg_sp_norm1(const double *a, int64_t m, int64_t n, int64_t ld, int skew)
{
    double best = 0;
    for (int64_t j = 0; j < n; j++) {
        double col = 0;
        for (int64_t i = 0; i < m; i++)
            col += fabs(a[i + j * ld] - (skew ? a[j + i * ld] : 0));
        best = col > best ? col : best;
    }
    return best;
}

static inline double tg_sp_spacing(double v) { return nextafter(v, INFINITY) - v; }

/* the 2-d view x into dst (column-major, ld), checking it is finite */
static TG_COLD int tg_sp_dare_load(double *dst, int64_t ld, const tg_array *x)
{
    int finite = 1;
    for (int64_t j = 0; j < x->shape[1]; j++)
        for (int64_t i = 0; i < x->shape[0]; i++) {
            dst[i + j * ld] = tg_sp_read(TG_SP_AT2(x, i, j), x->typenum, NULL);
            finite &= isfinite(dst[i + j * ld]);
        }
    return finite;
}

static TG_COLD int tg_sp_dare(tg_item *it)
{
    const tg_array *const *in = it->in;
    tg_array *out = it->out[0];
    const tg_lpint m = (tg_lpint)in[0]->shape[0], n = (tg_lpint)in[1]->shape[1];
    const tg_lpint big = 2 * m + n, m2 = 2 * m, q = -1;
    if (m == 0) return 0;
    const int64_t nn = (int64_t)big * big, mm = (int64_t)m2 * m2;
    const int64_t mn = (int64_t)m * n, sq = (int64_t)m * m;
    double *buf = calloc((size_t)(3 * nn + 4 * mm + 3 * m2 + 2 * big + 4 * sq + 2 * mn +
                                  (int64_t)n * n), sizeof(double));
    tg_lpint *ibuf = malloc(sizeof(tg_lpint) * (size_t)(m2 + 2 * m + 1));
    if (buf == NULL || ibuf == NULL) { free(buf); free(ibuf); return TG_ITEM_NOMEM; }
    double *h = buf, *j = h + nn, *qf = j + nn, *h2 = qf + nn, *j2 = h2 + mm, *vsl = j2 + mm;
    double *vsr = vsl + mm, *ab = vsr + mm, *sca = ab + 3 * (int64_t)m2, *tau = sca + big;
    double *am = tau + big, *bm = am + (int64_t)m * m, *qm = bm + 2 * (int64_t)m * n;
    double *rm = qm + (int64_t)m * m, *lu = rm + (int64_t)n * n, *xt = lu + (int64_t)m * m;
    double *work = NULL, wq;
    tg_lpint *bwork = ibuf, *ipiv = bwork + m2, info = 0, code = 0, ilo, ihi, sdim, lwork;
    /* the checks of scipy's _are_validate_args */
    if (!(tg_sp_dare_load(am, m, in[0]) & tg_sp_dare_load(bm, m, in[1]) &
          tg_sp_dare_load(qm, m, in[2]) & tg_sp_dare_load(rm, n, in[3]))) code = 1;
    else if (tg_sp_norm1(qm, m, m, m, 1) > tg_sp_spacing(tg_sp_norm1(qm, m, m, m, 0)) * 100)
        code = 2;
    else if (tg_sp_norm1(rm, n, n, n, 1) > tg_sp_spacing(tg_sp_norm1(rm, n, n, n, 0)) * 100)
        code = 3;
    if (code) goto done;
    tg_sp_threads();
    /* the pencil H - z J (calloc'd zeros elsewhere) */
    for (int64_t c = 0; c < m; c++)
        for (int64_t r = 0; r < m; r++) {
            h[r + c * big] = am[r + c * m];                       /* H[:m, :m] = a */
            h[(m + r) + c * big] = -qm[r + c * m];                /* H[m:2m, :m] = -q */
            j[(m + r) + (m + c) * big] = am[c + r * m];           /* J[m:2m, m:2m] = a^T */
        }
    for (int64_t r = 0; r < m; r++) {
        h[(m + r) + (m + r) * big] = 1;                           /* H[m:2m, m:2m] = I */
        j[r + r * big] = 1;                                       /* J[:m, :m] = I */
        for (int64_t c = 0; c < n; c++) {
            h[r + (m2 + c) * big] = bm[r + c * m];                /* H[:m, 2m:] = b */
            j[(m2 + c) + (m + r) * big] = -bm[r + c * m];         /* J[2m:, m:2m] = -b^T */
        }
    }
    for (int64_t c = 0; c < n; c++)
        for (int64_t r = 0; r < n; r++) h[(m2 + r) + (m2 + c) * big] = rm[r + c * n];
    /* balancing: gebal's scaling of |H| + |J| (zero diagonal), made symplectic */
    for (int64_t e = 0; e < nn; e++) qf[e] = fabs(h[e]) + fabs(j[e]);
    for (int64_t d = 0; d < big; d++) qf[d + d * big] = 0;
    LAPACK_dgebal_("S", &big, qf, &big, &ilo, &ihi, sca, &info, 1);
    int ones = 1;
    for (int64_t d = 0; d < big; d++) ones &= fabs(sca[d] - 1) <= 1e-8 + 1e-5;
    if (!ones) {
        for (int64_t d = 0; d < m; d++) {
            const double s = nearbyint((log2(sca[m + d]) - log2(sca[d])) / 2);
            sca[d] = exp2(s);
            sca[m + d] = exp2(-s);
        }
        for (int64_t c = 0; c < big; c++)
            for (int64_t r = 0; r < big; r++) {
                const double f = sca[r] * (1.0 / sca[c]);
                h[r + c * big] *= f;
                j[r + c * big] *= f;
            }
    }
    /* deflate by the QR of H's last n columns: Q[:, n:]^T H[:, :2m], the same of J */
    memcpy(qf, h + (int64_t)m2 * big, sizeof(double) * (size_t)((int64_t)n * big));
    LAPACK_dgeqrf_(&big, &n, qf, &big, tau, &wq, &q, &info);
    lwork = tg_sp_lwork(wq, big);
    LAPACK_dorgqr_(&big, &big, &n, qf, &big, tau, &wq, &q, &info);
    lwork = tg_sp_lwork(wq, lwork);
    LAPACK_dgges_("V", "V", "S", tg_sp_dare_iuc, &m2, h2, &m2, j2, &m2, &sdim, ab, ab + m2,
                  ab + 2 * m2, vsl, &m2, vsr, &m2, &wq, &q, bwork, &info, 1, 1, 1);
    lwork = tg_sp_lwork(wq, lwork > 8 * m2 + 16 ? lwork : 8 * m2 + 16);
    if ((work = malloc(sizeof(double) * (size_t)lwork)) == NULL) {
        code = TG_ITEM_NOMEM;
        goto done;
    }
    LAPACK_dgeqrf_(&big, &n, qf, &big, tau, work, &lwork, &info);
    LAPACK_dorgqr_(&big, &big, &n, qf, &big, tau, work, &lwork, &info);
    {
        const double one = 1, zero = 0;
        LAPACK_dgemm_("T", "N", &m2, &m2, &big, &one, qf + (int64_t)n * big, &big, h, &big,
                      &zero, h2, &m2, 1, 1);
        LAPACK_dgemm_("T", "N", &m2, &m2, &big, &one, qf + (int64_t)n * big, &big, j, &big,
                      &zero, j2, &m2, 1, 1);
    }
    LAPACK_dgges_("V", "V", "S", tg_sp_dare_iuc, &m2, h2, &m2, j2, &m2, &sdim, ab, ab + m2,
                  ab + 2 * m2, vsl, &m2, vsr, &m2, work, &lwork, bwork, &info, 1, 1, 1);
    if (info != 0) { code = 4; goto done; }
    /* X = u10 u00^-1 with u = vsr: u00^T X^T = u10^T */
    for (int64_t c = 0; c < m; c++)
        for (int64_t r = 0; r < m; r++) {
            lu[r + c * m] = vsr[r + c * m2];
            xt[r + c * m] = vsr[(m + c) + r * m2];
        }
    LAPACK_dgetrf_(&m, &m, lu, &m, ipiv, &info);
    double rcond = 0;
    if (info == 0) LAPACK_dtrcon_("1", "U", "N", &m, lu, &m, &rcond, work, ipiv + m, &info,
                                  1, 1, 1);
    if (info != 0 || rcond < 2.220446049250313e-16) { code = 5; goto done; }  /* spacing(1) */
    LAPACK_dgetrs_("T", &m, &m, lu, &m, ipiv, xt, &m, &info, 1);
    /* the symmetry of u00^T u10 (scipy's test of success) */
    for (int64_t c = 0; c < m; c++)
        for (int64_t r = 0; r < m; r++) {
            double v = 0;
            for (int64_t k = 0; k < m; k++) v += vsr[k + r * m2] * vsr[(m + k) + c * m2];
            lu[r + c * m] = v;
        }
    const double nsym = tg_sp_norm1(lu, m, m, m, 0);
    const double limit = fmax(tg_sp_spacing(1000.), 0.1 * nsym);
    if (tg_sp_norm1(lu, m, m, m, 1) > limit) { code = 6; goto done; }
    for (int64_t r = 0; r < m; r++)
        for (int64_t c = 0; c < m; c++) {
            const double x_rc = xt[c + r * m] * sca[r] * sca[c];
            const double x_cr = xt[r + c * m] * sca[c] * sca[r];
            const double v = (x_rc + x_cr) / 2;
            if (out->typenum == TG_FLOAT32) *(float *)TG_SP_AT2(out, r, c) = (float)v;
            else *(double *)TG_SP_AT2(out, r, c) = v;
        }
done:
    free(work); free(ibuf); free(buf);
    return code;
}

/* solve_discrete_are's inputs a (m, m), b (m, n), q (m, m), r (n, n), scipy's words */
static TG_COLD int tg_sp_shapes_dare(const tg_array *const *in, int64_t (*out)[TG_MAXDIM],
                                     const int *params, char *msg, size_t len)
{
    const char *bad = NULL;
    (void)params;
    out[0][0] = out[0][1] = in[0]->shape[0];
    if (in[0]->shape[0] != in[0]->shape[1]) bad = "Matrix a should be square.";
    else if (in[2]->shape[0] != in[2]->shape[1]) bad = "Matrix q should be square.";
    else if (in[3]->shape[0] != in[3]->shape[1]) bad = "Matrix r should be square.";
    else if (in[1]->shape[0] != in[0]->shape[0])
        bad = "Matrix a and b should have the same number of rows.";
    else if (in[2]->shape[0] != in[0]->shape[0]) bad = "Matrix a and q should have the same shape.";
    else if (in[3]->shape[0] != in[1]->shape[1])
        bad = "Matrix b and r should have the same number of cols.";
    if (bad != NULL) {
        snprintf(msg, len, "LinAlgError: solve_discrete_are: no stabilizing solution (%s)", bad);
        return 1;
    }
    return tg_sp_too_big("solve_discrete_are", in, 4, msg, len);
}

#endif  /* TG_SPECTRAL_COMMON_H */
