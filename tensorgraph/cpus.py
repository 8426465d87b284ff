"""How many CPUs this process may keep busy (plain ``os``: the config imports it to choose the
defaults of ``pool__threads`` and ``openmp``, before anything heavy is loaded)."""

from __future__ import annotations

import math
import os


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
