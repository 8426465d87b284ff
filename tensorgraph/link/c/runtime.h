/* tensorgraph C runtime: the array struct every generated kernel works on.
 *
 * Included by every generated module (header-only: all functions are static). Kernels only see
 * tg_array / tg_ctx and never touch Python objects, so their loops may run on several threads
 * (tg_run). Memory is
 * reference counted per buffer: an output keeps its buffer between calls, and tg_alloc reuses
 * it when nobody else (no view, no ndarray handed to Python) holds it any more.
 *
 * Its text is part of every node function's name (codegen.py hashes it), so a change here
 * compiles every node function again; nothing needs bumping.
 */
#ifndef TG_RUNTIME_H
#define TG_RUNTIME_H

#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>
#include <math.h>
#include <time.h>

#define TG_MAXDIM 16
#define TG_ALIGN 64

/* Cold helpers (setup, checks, allocation, glue): run once per node or per call, never in a
 * hot loop. Out of line and at -O1, gcc optimises them once instead of again in every caller
 * at -O3 (most of a module's compile time went there). Kernels' loops stay at -O3. */
#if defined(__clang__)   /* clang has no per-function optimization level */
#define TG_COLD __attribute__((noinline, unused))
#else
#define TG_COLD __attribute__((noinline, optimize("O1"), unused))
#endif
/* Out of line but still at -O3: helpers whose copy loops move data. */
#define TG_NOINLINE __attribute__((noinline, unused))

/* numpy type numbers (stable across numpy 1.x / 2.x), so kernels need not include numpy. */
enum {
    TG_BOOL = 0, TG_INT8 = 1, TG_UINT8 = 2, TG_INT16 = 3, TG_UINT16 = 4, TG_INT32 = 5,
    TG_UINT32 = 6, TG_LONG = 7, TG_ULONG = 8, TG_INT64 = 9, TG_UINT64 = 10,
    TG_FLOAT32 = 11, TG_FLOAT64 = 12, TG_COMPLEX64 = 14, TG_COMPLEX128 = 15, TG_FLOAT16 = 23
};

/* A refcounted block of memory. Data starts TG_ALIGN bytes after the header for buffers made
 * by tg_alloc. A *foreign* buffer (release != NULL) wraps memory owned by someone else (an
 * ndarray given by the caller, a constant): it is never reused by tg_alloc and release() is
 * called instead of free() when the count drops to zero (the linker's job, with the GIL). */
typedef struct tg_buffer {
    int64_t refcount;
    size_t nbytes;
    void (*release)(struct tg_buffer *);
    void *owner;
} tg_buffer;

typedef struct tg_array {
    char *data;                     /* first element */
    int ndim;
    int typenum;                    /* numpy type number, fixed per variable at codegen */
    int64_t shape[TG_MAXDIM];
    int64_t strides[TG_MAXDIM];     /* in bytes, may be negative or 0 */
    tg_buffer *base;                /* owning refcounted buffer, or NULL (borrowed memory) */
} tg_array;

/* The body of a parallel loop: block k of n (see tg_run) */
typedef void (*tg_block_fn)(void *arg, int k, int n);

typedef struct tg_ctx {
    char errmsg[1024];
    int nthreads;                   /* threads a parallel loop may use (config.pool__threads) */
    void (*pool_run)(tg_block_fn fn, void *arg, int n);    /* the glue's tg_pool_run */
    double *node_seconds;           /* per-node seconds for the profiler, or NULL (not timing) */
    int64_t nallocs;                /* buffers tg_alloc allocated (not reused): a debug counter */
} tg_ctx;

/* Seconds on the monotonic clock (the profiler's per-node timer). */
static inline double tg_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Parallel loops are explicit: a kernel writes its loop's body as a function of the block
 * index, `static void body(void *args, int k, int n)` doing block k of n (tg_split_block says
 * which items), and hands it to tg_run with the number of blocks, usually tg_threads(ctx).
 * The blocks run on the glue's thread pool (pool.h), the calling thread's included, each once,
 * in any order, maybe at the same time: a block never waits for another. One block, or no
 * pool, is a plain call. Results a block computes (an error code, partial sums) go into its
 * own slot of an array the caller combines after tg_run returns. */
static inline int tg_threads(const tg_ctx *ctx)
{
    return ctx->nthreads > 0 ? ctx->nthreads : 1;
}

static inline void tg_run(tg_ctx *ctx, tg_block_fn body, void *args, int nblocks)
{
    if (nblocks > 1 && ctx->pool_run != NULL) {
        ctx->pool_run(body, args, nblocks);
        return;
    }
    for (int k = 0; k < nblocks; k++) body(args, k, nblocks);
}

/* The items [lo, hi) of n that block k of nb takes: equal shares that depend only on n and
 * nb, so a given block count always splits work (and sums partial results) the same way. */
static inline void tg_split_block(int64_t n, int k, int nb, int64_t *lo, int64_t *hi)
{
    *lo = n * k / nb;
    *hi = n * (k + 1) / nb;
}

static inline int tg_error(tg_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), unused));
static inline int tg_error(tg_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->errmsg, sizeof(ctx->errmsg), fmt, ap);
    va_end(ap);
    return -1;
}

static inline size_t tg_itemsize(int typenum)
{
    switch (typenum) {
    case TG_BOOL: case TG_INT8: case TG_UINT8: return 1;
    case TG_INT16: case TG_UINT16: case TG_FLOAT16: return 2;
    case TG_INT32: case TG_UINT32: case TG_FLOAT32: return 4;
    case TG_COMPLEX128: return 16;
    default: return 8;
    }
}

static inline int64_t tg_size(const tg_array *a)
{
    int64_t n = 1;
    for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
    return n;
}

/* Whether a's elements are laid out C-contiguously (sizes 0 and 1 accept any stride). */
static TG_COLD int tg_is_c_contiguous(const tg_array *a)
{
    int64_t expected = (int64_t)tg_itemsize(a->typenum);
    for (int d = a->ndim - 1; d >= 0; d--) {
        if (a->shape[d] == 0) return 1;
        if (a->shape[d] != 1 && a->strides[d] != expected) return 0;
        expected *= a->shape[d];
    }
    return 1;
}

/* Counts are atomic: a run without the GIL may drop a buffer while another thread frees an
 * ndarray over the same buffer. */
static inline void tg_buffer_incref(tg_buffer *b)
{
    __atomic_add_fetch(&b->refcount, 1, __ATOMIC_RELAXED);
}

static inline void tg_buffer_decref(tg_buffer *b)
{
    if (b != NULL && __atomic_sub_fetch(&b->refcount, 1, __ATOMIC_ACQ_REL) == 0) {
        if (b->release != NULL) b->release(b);
        else free(b);
    }
}

/* Drop a's reference to its buffer; a then describes nothing. */
static inline void tg_release(tg_array *a)
{
    tg_buffer_decref(a->base);
    a->base = NULL;
    a->data = NULL;
}

/* Make dst describe the same elements as src (sharing its buffer). The caller may then change
 * dst's data/shape/strides to select a part of it (a view). */
static TG_COLD void tg_view(tg_array *dst, const tg_array *src)
{
    if (src->base != NULL) tg_buffer_incref(src->base);
    tg_buffer *old = dst->base;
    *dst = *src;
    tg_buffer_decref(old);
}

/* Give a a C-contiguous array of `shape`: reuses a's own buffer when a holds the only
 * reference and it is big enough (so a node's output keeps its memory across calls), else
 * allocates a new TG_ALIGN-aligned one. Contents are uninitialised. */
static TG_COLD int tg_alloc(tg_array *a, int ndim, const int64_t *shape, int typenum, tg_ctx *ctx)
{
    if (ndim < 0 || ndim > TG_MAXDIM)
        return tg_error(ctx, "cannot allocate a %d-d array (at most %d dimensions)", ndim,
                        TG_MAXDIM);
    size_t item = tg_itemsize(typenum);
    size_t nbytes = item;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) return tg_error(ctx, "negative size %lld in dimension %d",
                                          (long long)shape[d], d);
        if (shape[d] != 0 && nbytes > (SIZE_MAX / 2) / (size_t)shape[d])
            return tg_error(ctx, "array too large to allocate");
        nbytes *= (size_t)shape[d];
    }
    tg_buffer *b = a->base;
    if (!(b != NULL && __atomic_load_n(&b->refcount, __ATOMIC_ACQUIRE) == 1 && b->release == NULL && b->nbytes >= nbytes)) {
        void *mem = NULL;
        if (posix_memalign(&mem, TG_ALIGN, TG_ALIGN + (nbytes ? nbytes : 1)) != 0)
            return tg_error(ctx, "out of memory allocating %zu bytes", nbytes);
        tg_buffer_decref(a->base);
        b = (tg_buffer *)mem;
        b->refcount = 1;
        b->nbytes = nbytes;
        b->release = NULL;
        b->owner = NULL;
        a->base = b;
        ctx->nallocs++;
    }
    a->data = (char *)b + TG_ALIGN;
    a->ndim = ndim;
    a->typenum = typenum;
    int64_t stride = (int64_t)item;
    for (int d = ndim - 1; d >= 0; d--) {
        a->shape[d] = shape[d];
        a->strides[d] = stride;
        stride *= shape[d] > 0 ? shape[d] : 1;
    }
    return 0;
}

/* Write the shape of a as "(2, 3)" into buf (for error messages). */
static TG_COLD const char *tg_shape_str(const tg_array *a, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "(");
    for (int d = 0; d < a->ndim && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, d ? ", %lld" : "%lld",
                                 (long long)a->shape[d]);
    if (used < len) snprintf(buf + used, len - used, a->ndim == 1 ? ",)" : ")");
    return buf;
}

#endif /* TG_RUNTIME_H */
