"""Tiered linking: a function runs at once on what is ready while its optimized code builds.

A linker that supports tiers (``CLinker.make_tiered``) returns a *quick* VM at once (node
functions already in the module cache run their C, the others their numpy ``perform``) and a
``TierJob`` building the optimized VM (the missing C compiled at -O3, the whole graph run in
C). The ``Function`` switches to the optimized VM between two calls once the job is done
(``tensorgraph/compile/compiled.py``).

Jobs run one at a time, in the order they were made, in one background thread: each compile
already runs its translation units side by side, and a notebook that defines twenty functions
should not start forty compilers at once.

Fork (multiprocessing's default start method on Linux): a child inherits the jobs but not the
thread. A job unfinished at the fork is built again in the child, by the child's own
background thread, the first time the child asks about it (so a Pool worker compiles only
the functions it calls). Locks the parent's thread held at the fork are not waited on: the
executor is made anew, the module cache resets its in-process locks (``link/c/cmodule.py``).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from time import perf_counter

__all__ = ["TierJob"]

_executor: list[ThreadPoolExecutor] = []
_executor_lock = threading.Lock()
_rebuild_lock = threading.Lock()  # one resubmission per job in a forked child


def _background() -> ThreadPoolExecutor:
    with _executor_lock:
        if not _executor:
            _executor.append(ThreadPoolExecutor(max_workers=1,
                                                thread_name_prefix="tensorgraph-optimize"))
        return _executor[0]


def _after_fork_in_child() -> None:
    """The parent's executor has no thread here, and its lock may have been held."""
    global _executor_lock, _rebuild_lock
    _executor_lock, _rebuild_lock = threading.Lock(), threading.Lock()
    _executor.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


class TierJob:
    """The optimized VM of one function, built by ``build()`` in the background.

    ``estimate_seconds``: how long the compiler was expected to take (shown to the user as
    "optimized code ready in ~N s").
    """

    def __init__(self, build, estimate_seconds: float):
        self.estimate_seconds = float(estimate_seconds)
        self.created = perf_counter()
        self.seconds = None  # how long it took, once done
        self._build = build
        # (vm, None) or (None, error) once built: set by the building thread itself, so a
        # forked child sees whether the parent finished without touching the parent's future
        self._outcome = None
        self._submit()

    def _submit(self) -> None:
        self._pid = os.getpid()
        self._future: Future = _background().submit(self._run)

    def _run(self):
        from tensorgraph.link.c.compiler import in_background
        from tensorgraph.link.compile_events import silenced

        started = perf_counter()
        try:
            with silenced(), in_background():  # the quick tier's compiles go first
                vm = self._build()
        except BaseException as exc:
            self._outcome = (None, exc)
            raise
        finally:
            self.seconds = perf_counter() - started
        self._outcome = (vm, None)
        return vm

    def _in_this_process(self) -> None:
        """In a child forked before the job finished: build it again here."""
        if self._pid != os.getpid() and self._outcome is None:
            with _rebuild_lock:
                if self._pid != os.getpid():
                    self.created = perf_counter()
                    self._submit()

    def done(self) -> bool:
        self._in_this_process()
        return self._outcome is not None

    def result(self, timeout: float | None = None):
        """The optimized VM (waiting for it at most ``timeout`` seconds: a
        ``TimeoutError`` then); the compile's error if it failed."""
        self._in_this_process()
        if self._outcome is None:
            self._future.result(timeout)
        vm, error = self._outcome
        if error is not None:
            raise error
        return vm

    def failed(self) -> BaseException | None:
        """The error of a finished job, else None."""
        return self._outcome[1] if self.done() else None

    def remaining_seconds(self) -> float:
        """The estimate minus the time since the job was made (at least 0)."""
        return max(0.0, self.estimate_seconds - (perf_counter() - self.created))
