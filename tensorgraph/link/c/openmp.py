"""How many threads OpenMP code may use, and the C that asks.

OpenMP's own default is one thread per CPU in the process's affinity mask. In a container
whose CPU time is capped by a cgroup quota (Binder, Kubernetes, ``docker --cpus=2``) the mask
still lists every CPU of the host, so a 64-core host with a 2-CPU quota would start 64
threads that mostly wait for each other's time slices. :func:`usable_cpus` takes the quota
into account; generated modules receive it in ``tg_ctx.nthreads`` and their parallel regions
ask :c:func:`tg_omp_threads`. ``OMP_NUM_THREADS``, when set, is left to OpenMP.
"""

from __future__ import annotations

import math
import os

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


def cgroup_cpu_limit(root: str = "/sys/fs/cgroup") -> float | None:
    """The CPU quota of this process's cgroup in CPUs (``1.5`` = one and a half), or ``None``
    when there is none (or it cannot be read). Reads cgroup v2 ``cpu.max`` and v1
    ``cpu/cpu.cfs_quota_us`` / ``cpu.cfs_period_us``."""
    try:
        with open(os.path.join(root, "cpu.max")) as f:
            quota, period = f.read().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(root, "cpu", "cpu.cfs_quota_us")) as f:
            quota = int(f.read())
        with open(os.path.join(root, "cpu", "cpu.cfs_period_us")) as f:
            period = int(f.read())
    except (OSError, ValueError):
        return None
    return None if quota <= 0 or period <= 0 else quota / period


def usable_cpus() -> int:
    """CPUs this process may keep busy: its affinity mask, capped by a cgroup quota."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    limit = cgroup_cpu_limit()
    if limit is not None:
        cpus = min(cpus, max(1, math.ceil(limit)))
    return max(1, cpus)


def region_threads() -> int:
    """``tg_ctx.nthreads`` for generated modules: 0 (OpenMP decides) when the user set
    ``OMP_NUM_THREADS``, else :func:`usable_cpus`."""
    return 0 if os.environ.get("OMP_NUM_THREADS", "").strip() else usable_cpus()
