/* ---- linear algebra items: shapes and integer kernels (tensorgraph/link/c/ops/linalg.h) ----
 * What the per-item C of tensorgraph.tensor.linalg's factorizations and solvers shares
 * whatever the float type: the item shape checks (tg_item_shapes, with the words of the ops'
 * perform), integer reads and the pivot permutation. The LAPACK kernels are the template
 * linalg_kernels.h. Needs batched.h. */

#define TG_LA_MAXINT 2147483647LL

/* Element i of the integer item vector v (any integer dtype and stride), as int64. */
static inline int64_t tg_la_int_at(const tg_array *v, int64_t i)
{
    const char *p = v->data + i * v->strides[0];
    switch (v->typenum) {
    case TG_BOOL: case TG_UINT8: return *(const uint8_t *)p;
    case TG_INT8: return *(const int8_t *)p;
    case TG_INT16: return *(const int16_t *)p;
    case TG_UINT16: return *(const uint16_t *)p;
    case TG_INT32: return *(const int32_t *)p;
    case TG_UINT32: return *(const uint32_t *)p;
    case TG_ULONG: case TG_UINT64: return (int64_t)*(const uint64_t *)p;
    default: return *(const int64_t *)p;
    }
}

static TG_COLD int tg_la_square_error(const char *what, const tg_array *a, char *msg, size_t len)
{
    char sb[96];
    snprintf(msg, len, "ValueError: %s: expected a square matrix, got shape %s", what,
             tg_shape_str(a, sb, sizeof sb));
    return 1;
}

/* A square matrix (params unused): one output of its shape (cholesky, inv, lu_factor ...). */
static TG_COLD int tg_la_square_shapes(const char *what, const tg_array *const *in,
                                       int64_t (*out)[TG_MAXDIM], int nout, char *msg,
                                       size_t len)
{
    const tg_array *a = in[0];
    for (int j = 0; j < nout; j++) { out[j][0] = a->shape[0]; out[j][1] = a->shape[0]; }
    if (a->shape[0] != a->shape[1]) return tg_la_square_error(what, a, msg, len);
    return 0;
}

/* A solve of a (m, m) system with b (m) or (m, n) as the last input: x shaped like b. */
static TG_COLD int tg_la_solve_shapes(const char *what, const tg_array *const *in, int nin,
                                      int64_t (*out)[TG_MAXDIM], char *msg, size_t len)
{
    const tg_array *a = in[0], *b = in[nin - 1];
    out[0][0] = a->shape[1];
    if (b->ndim == 2) out[0][1] = b->shape[1];
    if (a->shape[0] != a->shape[1]) return tg_la_square_error(what, a, msg, len);
    if (b->shape[0] != a->shape[0]) {
        char sa[96], sb[96];
        snprintf(msg, len, "ValueError: %s: b has %lld rows but the matrix is %lld x %lld "
                 "(shapes %s and %s)", what, (long long)b->shape[0], (long long)a->shape[0],
                 (long long)a->shape[1], tg_shape_str(a, sa, sizeof sa),
                 tg_shape_str(b, sb, sizeof sb));
        return 1;
    }
    return 0;
}

/* pivot_to_permutation: LAPACK's row swaps (0-based) as the row order q with A[q] = L U
 * (params[0] = inverse), or its inverse permutation. A pivot out of range is code 1. */
static TG_NOINLINE int tg_la_pivot_to_permutation(tg_item *it)
{
    const tg_array *p = it->in[0];
    tg_array *out = it->out[0];
    const int64_t m = p->shape[0];
    int64_t *rows = (int64_t *)out->data;
    int64_t *order = it->params[0] ? rows :
        (int64_t *)tg_scratch_get(it->scratch, (size_t)m * sizeof(int64_t));
    if (order == NULL) return TG_ITEM_NOMEM;
    for (int64_t i = 0; i < m; i++) order[i] = i;
    for (int64_t i = 0; i < m; i++) {
        int64_t j = tg_la_int_at(p, i);
        if (j < -m || j >= m) return 1;
        if (j < 0) j += m;
        const int64_t t = order[i]; order[i] = order[j]; order[j] = t;
    }
    if (!it->params[0])
        for (int64_t i = 0; i < m; i++) rows[order[i]] = i;
    return 0;
}

static TG_COLD int tg_la_shapes_pivots(const tg_array *const *in, int64_t (*out)[TG_MAXDIM],
                                       const int *params, char *msg, size_t len)
{
    (void)params; (void)msg; (void)len;
    out[0][0] = in[0]->shape[0];
    return 0;
}

/* ---- the shape function of each op (tg_item_shapes): perform's checks and words ---- */

#define TG_LA_SQUARE(NAME, WHAT, NOUT)                                                       \
static TG_COLD int tg_la_shapes_##NAME(const tg_array *const *in, int64_t (*out)[TG_MAXDIM], \
                                       const int *params, char *msg, size_t len)             \
{ (void)params; return tg_la_square_shapes(WHAT, in, out, NOUT, msg, len); }
TG_LA_SQUARE(cholesky, "cholesky", 1)
TG_LA_SQUARE(inv, "inv", 1)
TG_LA_SQUARE(lu_factor, "lu_factor", 2)
TG_LA_SQUARE(det, "det", 0)
TG_LA_SQUARE(slogdet, "slogdet", 0)
#undef TG_LA_SQUARE

#define TG_LA_SOLVE(NAME, WHAT, NIN)                                                         \
static TG_COLD int tg_la_shapes_##NAME(const tg_array *const *in, int64_t (*out)[TG_MAXDIM], \
                                       const int *params, char *msg, size_t len)             \
{ (void)params; return tg_la_solve_shapes(WHAT, in, NIN, out, msg, len); }
TG_LA_SOLVE(solve, "solve", 2)
TG_LA_SOLVE(solve_triangular, "solve_triangular", 2)
TG_LA_SOLVE(cho_solve, "cho_solve", 2)
TG_LA_SOLVE(lu_solve, "lu_solve", 3)
#undef TG_LA_SOLVE

/* lu of an (m, n) matrix, k = min(m, n): (P (m, m) or p (m), L (m, k), U (k, n)), or with
 * permute_l (params[0]) (P L (m, k), U (k, n)). */
static TG_COLD int tg_la_shapes_lu(const tg_array *const *in, int64_t (*out)[TG_MAXDIM],
                                   const int *params, char *msg, size_t len)
{
    (void)msg; (void)len;
    const int64_t m = in[0]->shape[0], n = in[0]->shape[1], k = m < n ? m : n;
    int j = 0;
    if (!params[0]) { out[0][0] = m; out[0][1] = m; j = 1; }
    out[j][0] = m; out[j][1] = k;
    out[j + 1][0] = k; out[j + 1][1] = n;
    return 0;
}

/* pinv of (m, n): (n, m); hermitian (params[0]) needs a square matrix. */
static TG_COLD int tg_la_shapes_pinv(const tg_array *const *in, int64_t (*out)[TG_MAXDIM],
                                     const int *params, char *msg, size_t len)
{
    out[0][0] = in[0]->shape[1]; out[0][1] = in[0]->shape[0];
    if (params[0] && in[0]->shape[0] != in[0]->shape[1])
        return tg_la_square_error("pinv", in[0], msg, len);
    return 0;
}

/* lstsq of a (m, n) and b (m) or (m, r): x (n) or (n, r), residuals (r, or 1 for a vector
 * b, when m > n; else 0: lstsq's finish sizes them), rank, singular values (min(m, n)). */
static TG_COLD int tg_la_shapes_lstsq(const tg_array *const *in, int64_t (*out)[TG_MAXDIM],
                                      const int *params, char *msg, size_t len)
{
    (void)params;
    const tg_array *a = in[0], *b = in[1];
    const int64_t m = a->shape[0], n = a->shape[1];
    out[0][0] = n;
    if (b->ndim == 2) out[0][1] = b->shape[1];
    out[1][0] = m > n ? (b->ndim == 2 ? b->shape[1] : 1) : 0;
    out[3][0] = m < n ? m : n;
    if (b->shape[0] != m) {
        char sa[96], sb[96];
        snprintf(msg, len, "ValueError: lstsq: b has %lld rows but a has %lld (shapes %s and %s)",
                 (long long)b->shape[0], (long long)m, tg_shape_str(a, sa, sizeof sa),
                 tg_shape_str(b, sb, sizeof sb));
        return 1;
    }
    return 0;
}

/* " (3,)" / "(1, 2)": a batch index as Python prints the tuple. */
static TG_COLD void tg_la_tuple(const int64_t *idx, int nd, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "(");
    for (int d = 0; d < nd && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, d ? ", %lld" : "%lld", (long long)idx[d]);
    if (used < len) snprintf(buf + used, len - used, nd == 1 ? ",)" : ")");
}

/* lstsq over a batch: the residuals exist for items of full column rank (rank == n) when
 * m > n; all of them or none (then the residuals have size 0), else Blockwise.perform's
 * error (the items' outputs differ in shape). */
static TG_COLD int tg_la_finish_lstsq(tg_ctx *ctx, const tg_item_spec *s, tg_array *const *out,
                                      int64_t nitems)
{
    tg_array *res = out[1];
    const int nb = s->nb;
    const int64_t n = out[0]->shape[nb], size = res->shape[nb];
    if (size == 0 || nitems == 0) return 0;
    const int32_t *rank = (const int32_t *)out[2]->data;
    const int first = rank[0] == n;
    for (int64_t k = 1; k < nitems; k++) {
        if ((rank[k] == n) == first) continue;
        int64_t idx[TG_MAXDIM], rest = k;
        for (int d = nb - 1; d >= 0; d--) { idx[d] = rest % res->shape[d]; rest /= res->shape[d]; }
        char where[160];
        tg_la_tuple(idx, nb, where, sizeof where);
        return tg_error(ctx, "%s: the core op gave outputs of different shapes across the batch "
                        "((%lld,) and (%lld,) at batch index %s)", s->node,
                        (long long)(first ? size : 0), (long long)(first ? 0 : size), where);
    }
    if (!first) res->shape[nb] = 0;
    return 0;
}

/* tensorsolve: params b.ndim, a.ndim, a's axes in order (`axes` moved to the end); x has
 * the shape of a's last axes (in that order) after b.ndim. */
static TG_COLD int tg_la_shapes_tensorsolve(const tg_array *const *in,
                                            int64_t (*out)[TG_MAXDIM], const int *params,
                                            char *msg, size_t len)
{
    const tg_array *a = in[0], *b = in[1];
    const int bnd = params[0], and_ = params[1];
    const int *perm = params + 2;
    int64_t rows = 1, cols = 1;
    for (int d = 0; d < and_; d++) {
        const int64_t size = a->shape[perm[d]];
        if (d < bnd) rows *= size;
        else { cols *= size; out[0][d - bnd] = size; }
    }
    char sa[96], sb[96];
    if (rows != cols || tg_size(b) != rows) {
        snprintf(msg, len, "ValueError: tensorsolve: a %s (with axes moved) must be a square "
                 "matrix of b.size = %lld rows, it is %lld x %lld (b %s)",
                 tg_shape_str(a, sa, sizeof sa), (long long)tg_size(b), (long long)rows,
                 (long long)cols, tg_shape_str(b, sb, sizeof sb));
        return 1;
    }
    return 0;
}

/* tensorinv: params ind; the output shape is a.shape[ind:] + a.shape[:ind] and a must be a
 * square matrix of prod(a.shape[ind:]) rows. */
static TG_COLD int tg_la_shapes_tensorinv(const tg_array *const *in, int64_t (*out)[TG_MAXDIM],
                                          const int *params, char *msg, size_t len)
{
    const tg_array *a = in[0];
    const int ind = params[0];
    int64_t rows = 1, cols = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (d >= ind) rows *= a->shape[d]; else cols *= a->shape[d];
        out[0][d >= ind ? d - ind : a->ndim - ind + d] = a->shape[d];
    }
    if (rows != cols) {
        char sa[96];
        snprintf(msg, len, "ValueError: tensorinv: a %s with ind=%d is not a square matrix "
                 "(%lld x %lld)", tg_shape_str(a, sa, sizeof sa), ind, (long long)rows,
                 (long long)cols);
        return 1;
    }
    return 0;
}

/* kron of (m, n) and (p, q): (m p, n q). */
static TG_COLD int tg_la_shapes_kron(const tg_array *const *in, int64_t (*out)[TG_MAXDIM],
                                     const int *params, char *msg, size_t len)
{
    (void)params; (void)msg; (void)len;
    out[0][0] = in[0]->shape[0] * in[1]->shape[0];
    out[0][1] = in[0]->shape[1] * in[1]->shape[1];
    return 0;
}

/* block_diag of params[0] matrices: the sums of their rows and columns. */
static TG_COLD int tg_la_shapes_block_diag(const tg_array *const *in, int64_t (*out)[TG_MAXDIM],
                                           const int *params, char *msg, size_t len)
{
    (void)msg; (void)len;
    out[0][0] = out[0][1] = 0;
    for (int k = 0; k < params[0]; k++) {
        out[0][0] += in[k]->shape[0];
        out[0][1] += in[k]->shape[1];
    }
    return 0;
}
