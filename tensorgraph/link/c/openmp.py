"""How parallel regions of generated C run: OpenMP's syntax, tensorgraph's thread pool.

Kernels write ``#pragma omp parallel for ... num_threads(tg_omp_threads(ctx))`` and gcc
(``-fopenmp``) outlines the loop body into a function it hands to ``GOMP_parallel``. Generated
modules do not link libgomp: :data:`THREADS_SUPPORT` defines ``GOMP_parallel`` and the few
``omp_*`` queries the outlined code calls, and runs the region on the glue's pool (pool.h),
whose blocks are the region's OpenMP threads. A block runs the body as thread k of n wherever
a thread is free, the calling thread included, so the caller never waits for a worker that has
not started: on a busy machine a region degrades to one thread's speed instead of waiting for
the scheduler (pool.h says why and what was measured). Only the constructs the kernels use
are supported: combined ``parallel for`` with static schedules and reductions that gcc
turns into atomics. Nothing else (barriers, locks, tasks, dynamic schedules) can work: the
blocks of a region may run one after the other on one thread. The tests check that no module
loads libgomp (``-Wl,--as-needed`` drops it when nothing calls it).

How many threads: OpenMP's own default is one per CPU in the affinity mask. In a container
whose CPU time is capped by a cgroup quota (Binder, Kubernetes, ``docker --cpus=2``) the mask
still lists every CPU of the host, so a 64-core host with a 2-CPU quota would split work 64
ways. ``tensorgraph.cpus.usable_cpus`` takes the quota into account; generated modules receive
it in ``tg_ctx.nthreads``. ``OMP_NUM_THREADS``, when set to a number, wins.
"""

from __future__ import annotations

import os

from tensorgraph.cpus import usable_cpus

#: The OpenMP entry points of a module (weak and hidden: every unit of a module carries a copy,
#: the linker keeps one, and nothing is exported) and ``tg_omp_threads`` for ``num_threads``;
#: guarded so that every support code needing it can paste it into one unit.
THREADS_SUPPORT = r"""
#ifndef TG_OMP_THREADS_DEFINED
#define TG_OMP_THREADS_DEFINED
#if defined(_OPENMP)
#define TG_OMP_SHIM __attribute__((weak, visibility("hidden")))
/* the pool of the glue module (taken from the context of the node that opens a region) */
TG_OMP_SHIM void (*tg_omp_pool)(tg_block_fn fn, void *arg, int n);
/* the region's thread number and size as the body running on this thread sees them */
TG_OMP_SHIM __thread int tg_omp_num, tg_omp_team = 1, tg_omp_inside;
typedef struct { void (*body)(void *); void *data; } tg_omp_region;

TG_OMP_SHIM int omp_get_thread_num(void) { return tg_omp_num; }
TG_OMP_SHIM int omp_get_num_threads(void) { return tg_omp_team; }
TG_OMP_SHIM int omp_in_parallel(void) { return tg_omp_inside; }

/* block k of n: the region's body as its thread k */
TG_OMP_SHIM void tg_omp_block(void *arg, int k, int n)
{
    const tg_omp_region *r = (const tg_omp_region *)arg;
    const int num = tg_omp_num, team = tg_omp_team, inside = tg_omp_inside;
    tg_omp_num = k; tg_omp_team = n; tg_omp_inside = 1;
    r->body(r->data);
    tg_omp_num = num; tg_omp_team = team; tg_omp_inside = inside;
}

/* what gcc calls for `#pragma omp parallel`; a region inside a region runs on its thread */
TG_OMP_SHIM void GOMP_parallel(void (*body)(void *), void *data, unsigned nthreads,
                               unsigned flags)
{
    (void)flags;
    tg_omp_region r = {body, data};
    const int n = nthreads < 1 ? 1 : (int)nthreads;
    void (*pool)(tg_block_fn, void *, int) = __atomic_load_n(&tg_omp_pool, __ATOMIC_RELAXED);
    if (n == 1 || tg_omp_inside || pool == NULL) {
        for (int k = 0; k < n; k++) tg_omp_block(&r, k, n);
        return;
    }
    pool(tg_omp_block, &r, n);
}
#endif

/* Threads for a parallel region: tg_ctx.nthreads (the CPUs this process may use). */
static inline int tg_omp_threads(const tg_ctx *ctx)
{
#if defined(_OPENMP)
    __atomic_store_n(&tg_omp_pool, ctx->pool_run, __ATOMIC_RELAXED);
    return ctx->nthreads > 0 ? ctx->nthreads : 1;
#else
    (void)ctx;
    return 1;
#endif
}
#endif
"""


def region_threads() -> int:
    """``tg_ctx.nthreads`` for generated modules: ``OMP_NUM_THREADS`` when it is a positive
    number (OpenMP's convention; a list such as ``4,2`` counts by its first), else
    :func:`usable_cpus`."""
    first = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if first.isdigit() and int(first) > 0:
        return int(first)
    return usable_cpus()
