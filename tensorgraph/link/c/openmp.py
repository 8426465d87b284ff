"""How many threads OpenMP code may use, and the C that asks.

OpenMP's own default is one thread per CPU in the process's affinity mask. In a container
whose CPU time is capped by a cgroup quota (Binder, Kubernetes, ``docker --cpus=2``) the mask
still lists every CPU of the host, so a 64-core host with a 2-CPU quota would start 64
threads that mostly wait for each other's time slices. ``tensorgraph.cpus.usable_cpus`` takes
the quota into account; generated modules receive it in ``tg_ctx.nthreads`` and their parallel regions
ask :c:func:`tg_omp_threads`. ``OMP_NUM_THREADS``, when set, is left to OpenMP.
"""

from __future__ import annotations

import os

from tensorgraph.cpus import usable_cpus

#: C helper for parallel regions (``num_threads(tg_omp_threads(ctx))``); guarded so that every
#: support code needing it can paste it into one module.
THREADS_SUPPORT = r"""
#ifndef TG_OMP_THREADS_DEFINED
#define TG_OMP_THREADS_DEFINED
#if defined(_OPENMP)
#include <omp.h>
#endif
/* Threads for a parallel region: tg_ctx.nthreads (the CPUs this process may use) or, when it
 * is 0 (OMP_NUM_THREADS set, or no OpenMP), OpenMP's own default. */
static inline int tg_omp_threads(const tg_ctx *ctx)
{
#if defined(_OPENMP)
    return ctx->nthreads > 0 ? ctx->nthreads : omp_get_max_threads();
#else
    (void)ctx;
    return 1;
#endif
}
#endif
"""


def region_threads() -> int:
    """``tg_ctx.nthreads`` for generated modules: 0 (OpenMP decides) when the user set
    ``OMP_NUM_THREADS``, else :func:`usable_cpus`."""
    return 0 if os.environ.get("OMP_NUM_THREADS", "").strip() else usable_cpus()
