"""Keeping freed array memory in the process (``config.malloc__trim_threshold``).

glibc returns freed memory to the system when more than its trim threshold lies free at the
top of the heap, and serves large blocks with mmap; both thresholds grow with the largest
block freed so far, up to 32 MiB for mmap and twice that for trimming. A compiled function
that allocates and frees arrays of a few MB at every call (a scan's buffers, copies between
kernels, numpy's arrays around them) keeps crossing them: its memory goes back to the system
and faults in again, page by page, at the next call. Fixing the thresholds (mmap at 32 MiB,
trimming at the flag's value) keeps that memory in the process.
"""

from __future__ import annotations

import ctypes
import os
import threading

__all__ = ["tune_malloc"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20
_lock = threading.Lock()
_done: list[int] = []  # the threshold set, once per process


def tune_malloc() -> bool:
    """Set glibc's thresholds from ``config.malloc__trim_threshold`` (once per process; later
    calls do nothing). Returns whether they were set."""
    if _done:
        return bool(_done[0])
    from tensorgraph.configdefaults import config

    with _lock:
        if _done:
            return bool(_done[0])
        keep = int(config.malloc__trim_threshold)
        applied = 0
        if keep > 0 and _glibc():
            mallopt = ctypes.CDLL(None).mallopt
            mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
            applied = int(bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD))
                          and bool(mallopt(_M_TRIM_THRESHOLD, min(keep, 2 ** 31 - 1))))
        _done.append(applied)
        return bool(applied)


def _glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") is not None
    except (ValueError, OSError, AttributeError):
        return False
