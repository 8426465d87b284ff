/* ---- one core op over a batch, item by item (tensorgraph/link/c/ops/batched.h) ----
 * The driver of every per-item C kernel (linear algebra first): a node of the core op (no
 * batch) or of Blockwise{core op} gives its operands, the core ndims of each and the item
 * kernel; tg_items_run broadcasts the leading (batch) axes, checks the item shapes once,
 * allocates the outputs (batch shape + core shape, C-contiguous) and calls the kernel on
 * each item through views of it (any strides; broadcast axes read the same item again),
 * splitting the items across the pool (one item per task, small batches on this thread).
 *
 * A kernel returns 0, a positive problem code (its spec's problems[code - 1] says what is
 * wrong with the matrix: "is not positive definite") or TG_ITEM_NOMEM / TG_ITEM_TOO_BIG. It
 * never calls tg_error (several run at once): the driver reports the first failing item in
 * batch order, as the Python loop of Blockwise.perform does, with the same words:
 * "cholesky: the matrix is not positive definite (at batch index 3)". */

#define TG_ITEM_MAXARGS 16
#define TG_ITEM_TASKS 256
#define TG_ITEM_NOMEM (-1)
#define TG_ITEM_TOO_BIG (-2)

/* What a block of items may reuse from one item to the next: a growing scratch buffer. */
typedef struct tg_scratch { void *p; size_t n; } tg_scratch;

/* At least `bytes` of scratch (64-byte aligned, contents undefined), or NULL. */
static void *tg_scratch_get(tg_scratch *s, size_t bytes)
{
    if (bytes == 0) bytes = 1;
    if (s->n < bytes) {
        free(s->p);
        s->n = 0;
        size_t rounded = (bytes + 63) / 64 * 64;
        if (posix_memalign(&s->p, 64, rounded) != 0) { s->p = NULL; return NULL; }
        s->n = rounded;
    }
    return s->p;
}

/* One item: views of its inputs and outputs (core dims only), the op's parameters. */
typedef struct tg_item {
    const tg_array *in[TG_ITEM_MAXARGS];
    tg_array *out[TG_ITEM_MAXARGS];
    const int *params;
    tg_scratch *scratch;
} tg_item;

typedef int (*tg_item_kernel)(tg_item *it);
/* The output core shapes of items with these (item-0) inputs, or an error: returns 0, or 1
 * with the message (starting with "ValueError: " or another class prefix) in msg. */
typedef int (*tg_item_shapes)(const tg_array *const *in, int64_t (*out)[TG_MAXDIM],
                              const int *params, char *msg, size_t len);
struct tg_item_spec;
/* After every item ran: outputs whose core shape depends on the values (lstsq's residuals);
 * 0, or -1 after tg_error. */
typedef int (*tg_item_finish)(tg_ctx *ctx, const struct tg_item_spec *s, tg_array *const *out,
                              int64_t nitems);

typedef struct tg_item_spec {
    const char *what;                    /* the op's name in messages: "cholesky" */
    int nin, nout, nb;                   /* nb: batch ndim of the outputs (0: the core op) */
    int in_nd[TG_ITEM_MAXARGS];          /* core ndim of each input */
    int out_nd[TG_ITEM_MAXARGS];         /* core ndim of each output */
    int out_typenum[TG_ITEM_MAXARGS];
    tg_item_kernel kernel;
    tg_item_shapes shapes;
    const int *params;
    /* problems[code - 1]: what is wrong with the matrix ("is singular": a LinAlgError
     * "<what>: the matrix is singular"), or a whole message after an exception class
     * ("ValueError: a pivot is out of range": "<what>: a pivot is out of range") */
    const char *const *problems;
    tg_item_finish finish;               /* or NULL */
    const char *node;                    /* the node's op as printed (broadcast errors) */
} tg_item_spec;

typedef struct tg_items_args {
    const tg_item_spec *s;
    int64_t nitems;
    int64_t batch[TG_MAXDIM];
    int64_t bstride[TG_ITEM_MAXARGS][TG_MAXDIM];   /* 0 along broadcast batch axes */
    const char *in_data[TG_ITEM_MAXARGS];
    char *out_data[TG_ITEM_MAXARGS];
    int64_t out_item_bytes[TG_ITEM_MAXARGS];
    tg_array in0[TG_ITEM_MAXARGS];                 /* item views at item 0 */
    tg_array out0[TG_ITEM_MAXARGS];
    int64_t *bad_index;                            /* per block: first failing item or -1 */
    int *bad_code;
} tg_items_args;

static TG_NOINLINE void tg_items_block(void *arg, int k, int nblocks)
{
    const tg_items_args *a = (const tg_items_args *)arg;
    const tg_item_spec *s = a->s;
    int64_t lo, hi;
    tg_split_block(a->nitems, k, nblocks, &lo, &hi);
    tg_array in[TG_ITEM_MAXARGS], out[TG_ITEM_MAXARGS];
    tg_scratch scratch = {NULL, 0};
    tg_item it;
    it.params = s->params;
    it.scratch = &scratch;
    for (int i = 0; i < s->nin; i++) { in[i] = a->in0[i]; it.in[i] = &in[i]; }
    for (int j = 0; j < s->nout; j++) { out[j] = a->out0[j]; it.out[j] = &out[j]; }
    a->bad_index[k] = -1;
    for (int64_t item = lo; item < hi; item++) {
        int64_t rest = item;
        int64_t off[TG_ITEM_MAXARGS] = {0};
        for (int d = s->nb - 1; d >= 0; d--) {
            int64_t at = rest % a->batch[d];
            rest /= a->batch[d];
            for (int i = 0; i < s->nin; i++) off[i] += at * a->bstride[i][d];
        }
        for (int i = 0; i < s->nin; i++) in[i].data = (char *)a->in_data[i] + off[i];
        for (int j = 0; j < s->nout; j++) out[j].data = a->out_data[j] + item * a->out_item_bytes[j];
        int code = s->kernel(&it);
        if (code != 0) { a->bad_index[k] = item; a->bad_code[k] = code; break; }
    }
    free(scratch.p);
}

/* " (at batch index 3)" or " (at batch index (1, 2))" for flat item `item` (Python's words,
 * tensor/blockwise.py _reraise_at); nothing without batch axes. */
static TG_COLD void tg_items_where(const tg_items_args *a, int64_t item, char *buf, size_t len)
{
    const int nb = a->s->nb;
    buf[0] = 0;
    if (nb == 0) return;
    int64_t idx[TG_MAXDIM];
    for (int d = nb - 1; d >= 0; d--) { idx[d] = item % a->batch[d]; item /= a->batch[d]; }
    size_t used = (size_t)snprintf(buf, len, nb == 1 ? " (at batch index %lld" :
                                   " (at batch index (%lld", (long long)idx[0]);
    for (int d = 1; d < nb && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, ", %lld", (long long)idx[d]);
    if (used < len) snprintf(buf + used, len - used, nb == 1 ? ")" : "))");
}

/* A view of one item of x (its last `core` axes) at x's first item. */
static TG_COLD void tg_items_view(tg_array *v, const tg_array *x, int core)
{
    memset(v, 0, sizeof *v);
    v->data = x->data;
    v->typenum = x->typenum;
    v->ndim = core;
    for (int d = 0; d < core; d++) {
        v->shape[d] = x->shape[x->ndim - core + d];
        v->strides[d] = x->strides[x->ndim - core + d];
    }
}

static TG_COLD int tg_items_run(tg_ctx *ctx, tg_item_spec *s, tg_array *const *in,
                                tg_array *const *out)
{
    tg_items_args a;
    memset(&a, 0, sizeof a);
    a.s = s;
    const int nb = s->nb;
    /* the batch shape: each input's batch axes right-aligned, sizes 1 or the common one */
    for (int d = 0; d < nb; d++) {
        int64_t size = 1;
        for (int i = 0; i < s->nin; i++) {
            const int bi = in[i]->ndim - s->in_nd[i], dim = d - (nb - bi);
            if (dim < 0 || in[i]->shape[dim] == 1) continue;
            if (size != 1 && in[i]->shape[dim] != size)
                return tg_error(ctx, "%s: batch dimension %d has sizes [%lld, %lld] at run time",
                                s->node, d, (long long)(size < in[i]->shape[dim] ? size :
                                in[i]->shape[dim]), (long long)(size < in[i]->shape[dim] ?
                                in[i]->shape[dim] : size));
            size = in[i]->shape[dim];
        }
        a.batch[d] = size;
    }
    a.nitems = 1;
    for (int d = 0; d < nb; d++) a.nitems *= a.batch[d];
    for (int i = 0; i < s->nin; i++) {
        const int bi = in[i]->ndim - s->in_nd[i];
        for (int d = 0; d < nb; d++) {
            const int dim = d - (nb - bi);
            a.bstride[i][d] = dim < 0 || in[i]->shape[dim] == 1 ? 0 : in[i]->strides[dim];
        }
        tg_items_view(&a.in0[i], in[i], s->in_nd[i]);
        a.in_data[i] = in[i]->data;
    }
    const tg_array *views[TG_ITEM_MAXARGS];
    for (int i = 0; i < s->nin; i++) views[i] = &a.in0[i];
    int64_t core[TG_ITEM_MAXARGS][TG_MAXDIM];
    char msg[512], where[160];
    memset(core, 0, sizeof core);
    if (s->shapes(views, core, s->params, msg, sizeof msg) && a.nitems > 0) {
        tg_items_where(&a, 0, where, sizeof where);
        return tg_error(ctx, "%s%s", msg, where);
    }
    for (int j = 0; j < s->nout; j++) {
        int64_t shape[TG_MAXDIM];
        for (int d = 0; d < nb; d++) shape[d] = a.batch[d];
        for (int d = 0; d < s->out_nd[j]; d++) shape[nb + d] = core[j][d] < 0 ? 0 : core[j][d];
        if (tg_alloc(out[j], nb + s->out_nd[j], shape, s->out_typenum[j], ctx)) return -1;
        tg_items_view(&a.out0[j], out[j], s->out_nd[j]);
        int64_t bytes = (int64_t)tg_itemsize(s->out_typenum[j]);
        for (int d = 0; d < s->out_nd[j]; d++) bytes *= shape[nb + d];
        a.out_item_bytes[j] = bytes;
        a.out_data[j] = out[j]->data;
    }
    if (a.nitems == 0) return 0;
    /* one item per task (the pool hands the next one to whichever thread is free), up to
     * TG_ITEM_TASKS tasks of consecutive items; a batch of items of a few thousand flops
     * in all stays on this thread */
    int64_t n = 1;
    for (int i = 0; i < s->nin; i++)
        for (int d = 0; d < s->in_nd[i]; d++) n = a.in0[i].shape[d] > n ? a.in0[i].shape[d] : n;
    int nblocks = (int)(a.nitems < TG_ITEM_TASKS ? a.nitems : TG_ITEM_TASKS);
    if (tg_threads(ctx) < 2 || n * n * n * a.nitems < 32768) nblocks = 1;
    int64_t bad_index[TG_ITEM_TASKS];
    int bad_code[TG_ITEM_TASKS];
    a.bad_index = bad_index;
    a.bad_code = bad_code;
    tg_run(ctx, tg_items_block, &a, nblocks);
    for (int k = 0; k < nblocks; k++) {
        if (bad_index[k] < 0) continue;
        tg_items_where(&a, bad_index[k], where, sizeof where);
        const int code = bad_code[k];
        if (code == TG_ITEM_NOMEM)
            return tg_error(ctx, "%s: out of memory%s", s->what, where);
        if (code == TG_ITEM_TOO_BIG)
            return tg_error(ctx, "%s: the matrix is too large for the 32-bit LAPACK%s", s->what,
                            where);
        const char *problem = s->problems[code - 1], *colon = strstr(problem, ": ");
        if (colon != NULL && strncmp(problem, "ValueError", 10) && strncmp(problem, "IndexError", 10))
            colon = NULL;
        if (colon != NULL)
            return tg_error(ctx, "%.*s: %s: %s%s", (int)(colon - problem), problem, s->what,
                            colon + 2, where);
        return tg_error(ctx, "LinAlgError: %s: the matrix %s%s", s->what, problem, where);
    }
    return s->finish != NULL ? s->finish(ctx, s, out, a.nitems) : 0;
}
