/* ---- row-block kernels of the Gemv pair (tensorgraph/link/c/ops/gemv_pair.h) ----
 * A template: gemv_pair.py pastes it once per element type with the placeholders replaced (the
 * type, its BLAS letter, its fma function). The 8 dot products share each load of w, the update
 * of g reads each of its elements once for 8 rows. Multiply-adds are explicit fma() (one
 * rounding, as BLAS kernels do; the elementwise code keeps numpy's two roundings with
 * -ffp-contract=off). Needs blas_template.h. */
/* out[r] = sum_j X[r * ld + j] w[j] for r < rows (rows <= 8) */
static inline void tg_TGSrows_dot(const TGT *X, int64_t ld, int64_t rows, const TGT *w,
                                  int64_t m, TGT *out)
{
    if (rows == 8) {
        const TGT *x0 = X, *x1 = x0 + ld, *x2 = x1 + ld, *x3 = x2 + ld, *x4 = x3 + ld,
                  *x5 = x4 + ld, *x6 = x5 + ld, *x7 = x6 + ld;
        TGT s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
        #pragma omp simd reduction(+:s0, s1, s2, s3, s4, s5, s6, s7)
        for (int64_t j = 0; j < m; j++) {
            const TGT v = w[j];
            s0 = TGFMA(x0[j], v, s0); s1 = TGFMA(x1[j], v, s1); s2 = TGFMA(x2[j], v, s2);
            s3 = TGFMA(x3[j], v, s3); s4 = TGFMA(x4[j], v, s4); s5 = TGFMA(x5[j], v, s5);
            s6 = TGFMA(x6[j], v, s6); s7 = TGFMA(x7[j], v, s7);
        }
        out[0] = s0; out[1] = s1; out[2] = s2; out[3] = s3;
        out[4] = s4; out[5] = s5; out[6] = s6; out[7] = s7;
        return;
    }
    for (int64_t r = 0; r < rows; r++) {
        const TGT *x = X + r * ld;
        TGT s = 0;
        #pragma omp simd reduction(+:s)
        for (int64_t j = 0; j < m; j++) s = TGFMA(x[j], w[j], s);
        out[r] = s;
    }
}

/* acc[j] += sum_r X[r * ld + j] d[r] for r < rows (rows <= 8) */
static inline void tg_TGSrows_axpy(const TGT *X, int64_t ld, int64_t rows, const TGT *d,
                                   int64_t m, TGT *restrict acc)
{
    if (rows == 8) {
        const TGT *x0 = X, *x1 = x0 + ld, *x2 = x1 + ld, *x3 = x2 + ld, *x4 = x3 + ld,
                  *x5 = x4 + ld, *x6 = x5 + ld, *x7 = x6 + ld;
        const TGT d0 = d[0], d1 = d[1], d2 = d[2], d3 = d[3], d4 = d[4], d5 = d[5],
                  d6 = d[6], d7 = d[7];
        #pragma omp simd
        for (int64_t j = 0; j < m; j++) {
            const TGT lo = TGFMA(x3[j], d3, TGFMA(x2[j], d2, TGFMA(x1[j], d1, x0[j] * d0)));
            const TGT hi = TGFMA(x7[j], d7, TGFMA(x6[j], d6, TGFMA(x5[j], d5, x4[j] * d4)));
            acc[j] += lo + hi;
        }
        return;
    }
    for (int64_t r = 0; r < rows; r++) {
        const TGT *x = X + r * ld;
        const TGT dr = d[r];
        #pragma omp simd
        for (int64_t j = 0; j < m; j++) acc[j] = TGFMA(x[j], dr, acc[j]);
    }
}
