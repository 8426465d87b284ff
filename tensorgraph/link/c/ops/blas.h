/* ---- tensorgraph matrix-product helpers (tensorgraph/link/c/ops/blas.h) ----
 * Operands as a pointer, sizes and byte strides, whatever their layout; copies for kernels that
 * need contiguous ones; how a product is split across threads. Pasted once per unit, before the
 * kernels (blas_cblas.h or blas_own.h, then blas_split.h); TG_SPLIT is defined before it: 1 when
 * tensorgraph splits products across threads itself (config.openmp, and a BLAS that it keeps on
 * one thread or none). */
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

/* Splitting a product across threads: each block runs the one-thread kernel (tg_?gemv1,
 * tg_?gemm1) on its part; blocks are equal and depend only on the sizes (tg_split_block,
 * runtime.h), so consecutive products over the same matrix give each thread the same part of
 * it (the logistic regression's x @ w and x.T @ g both split x by rows: each core's half of x
 * stays in its own L2 cache from one product to the next). */
/* Multiply-adds per thread below which splitting costs more (thread wake-up, partial sums)
 * than it saves. */
#define TG_SPLIT_MIN_WORK 65536
static inline int tg_split_threads(const tg_ctx *ctx, int64_t work, int64_t parts)
{
#if TG_SPLIT
    if (work < 2 * TG_SPLIT_MIN_WORK || parts < 2) return 1;
    int64_t nt = tg_threads(ctx);
    if (nt > work / TG_SPLIT_MIN_WORK) nt = work / TG_SPLIT_MIN_WORK;
    if (nt > parts) nt = parts;
    return nt < 1 ? 1 : (int)nt;
#else
    (void)ctx; (void)work; (void)parts;
    return 1;
#endif
}
