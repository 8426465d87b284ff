"""Tiered linking: a function runs at once on what is ready while its optimized code builds.

A linker that supports tiers (``CLinker.make_tiered``) returns a *quick* VM at once (node
functions already in the module cache run their C, the others their numpy ``perform``) and a
``TierJob`` building the optimized VM (the missing C compiled at -O3, the whole graph run in
C). The ``Function`` switches to the optimized VM between two calls once the job is done
(``tensorgraph/compile/compiled.py``).

Jobs run one at a time, in the order they were made, in one background thread: each compile
already runs its translation units side by side, and a notebook that defines twenty functions
should not start forty compilers at once.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from time import perf_counter

__all__ = ["TierJob"]

_executor: list[ThreadPoolExecutor] = []
_executor_lock = threading.Lock()


def _background() -> ThreadPoolExecutor:
    with _executor_lock:
        if not _executor:
            _executor.append(ThreadPoolExecutor(max_workers=1,
                                                thread_name_prefix="tensorgraph-optimize"))
        return _executor[0]


class TierJob:
    """The optimized VM of one function, built by ``build()`` in the background.

    ``estimate_seconds``: how long the compiler was expected to take (shown to the user as
    "optimized code ready in ~N s").
    """

    def __init__(self, build, estimate_seconds: float):
        from tensorgraph.link.compile_events import silenced

        self.estimate_seconds = float(estimate_seconds)
        self.created = perf_counter()
        self.seconds = None  # how long it took, once done

        def run():
            started = perf_counter()
            try:
                with silenced():
                    return build()
            finally:
                self.seconds = perf_counter() - started

        self._future = _background().submit(run)

    def done(self) -> bool:
        return self._future.done()

    def result(self, timeout: float | None = None):
        """The optimized VM (waiting for it); the compile's error if it failed."""
        return self._future.result(timeout)

    def failed(self) -> BaseException | None:
        """The error of a finished job, else None."""
        return self._future.exception() if self._future.done() else None

    def remaining_seconds(self) -> float:
        """The estimate minus the time since the job was made (at least 0)."""
        return max(0.0, self.estimate_seconds - (perf_counter() - self.created))
