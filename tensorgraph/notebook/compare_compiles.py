"""The cold and warm compile times of a comparison (``tgn.compare``), measured in fresh
processes, side by side and in the background, cancellable.

Each measurement is one fresh process (``compare_worker.py``) compiling the graph in one mode
up to the first result:

* **cold**: with an empty compile directory of its own, so nothing of this graph is cached;
* **warm**: with the compile directory this process uses, which compiling the mode here (the
  comparison's per-call part) has just filled: what a restarted kernel pays. The warm
  measurement therefore needs no cold one before it, and all of them are independent.

They run ``workers`` at a time (the number of cores, at most 4: each process is mostly one
busy thread), warm ones first (they are short and fill a column soon). Every finished
measurement is written into its row at once and ``on_change`` is called, so a widget fills
its columns as they come. ``cancel()`` kills the running processes and skips the rest; the
rows not measured say so in ``compile_note``.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref

__all__ = ["CompileTimes", "CACHE_ENVIRONMENT", "MEASURING"]

#: the ``compile_note`` of a row whose compile times are being measured
MEASURING = "measuring in new processes"

#: environment variables that would point a fresh process at a back end's cache outside the
#: empty compile directory (a cold compile must find nothing)
CACHE_ENVIRONMENT = ("JAX_COMPILATION_CACHE_DIR", "NUMBA_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR")
#: run as a script by its path, so the fresh process does not import the notebook layer
#: (IPython, ipywidgets): only what compiling needs
WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare_worker.py")
MARK = "TG_COMPARE "  # the worker's answer line
#: measurements still running when the interpreter exits are stopped with it
_LIVE: weakref.WeakSet = weakref.WeakSet()


def default_workers() -> int:
    """How many fresh processes run at once: one per core, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


class CompileTimes:
    """The compile-time measurements of ``rows`` (dicts with ``mode``; ``compile_cold`` /
    ``compile_warm`` / ``compile_note`` are written) for the modes in ``modes``, from the
    pickled job ``job`` (bytes: the graph, the arguments, the notebook's changed flags)."""

    def __init__(self, rows: list, modes: list, job: bytes, *, timeout: float,
                 workers: int | None = None, on_change=None):
        self._rows = {r["mode"]: r for r in rows}
        self._timeout = timeout
        self._on_change = on_change
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self._running: dict = {}     # (mode, kind) -> Popen
        self._workdir = tempfile.mkdtemp(prefix="tg-compare-")
        self._job_path = os.path.join(self._workdir, "job.pickle")
        with open(self._job_path, "wb") as f:
            f.write(job)
        self.jobs = [(mode, kind) for kind in ("warm", "cold") for mode in modes]
        self.finished: list = []
        for mode in modes:
            self._rows[mode]["compile_note"] = MEASURING
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers or default_workers(), thread_name_prefix="tg-compare")
        self._futures = [self._pool.submit(self._measure, mode, kind) for mode, kind in self.jobs]
        self._pool.shutdown(wait=False)
        self._closer = threading.Thread(target=self._close_when_done, daemon=True,
                                        name="tg-compare-done")
        self._closer.start()
        _LIVE.add(self)

    # -- what the comparison uses ------------------------------------------------------------

    @property
    def done(self) -> bool:
        """Whether every measurement has finished (or was cancelled)."""
        return all(f.done() for f in self._futures)

    @property
    def progress(self) -> tuple[int, int]:
        """(measurements finished, measurements in all)."""
        return len(self.finished), len(self.jobs)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every measurement has finished; False if ``timeout`` seconds passed
        first."""
        _, pending = concurrent.futures.wait(self._futures, timeout=timeout)
        if pending:
            return False
        self._closer.join(timeout)
        return True

    def cancel(self) -> None:
        """Stop: kill the running processes, skip the others (their rows say so)."""
        self._cancelled.set()
        for future in self._futures:
            future.cancel()
        with self._lock:
            running = list(self._running.values())
        for process in running:
            process.kill()
        self._close_when_done()

    # -- inside --------------------------------------------------------------------------------

    def _measure(self, mode: str, kind: str) -> None:
        if self._cancelled.is_set():
            return
        answer = self._run_worker(mode, kind)
        with self._lock:
            row = self._rows[mode]
            if "error" in answer:
                if not self._cancelled.is_set():
                    row["compile_note"] = f"{kind} compile failed: {answer['error']}"
            else:
                row[f"compile_{kind}"] = answer["seconds"]
                if row["compile_note"] == MEASURING and (
                        row["compile_cold"] is not None and row["compile_warm"] is not None):
                    row["compile_note"] = None
            self.finished.append((mode, kind))
        self._changed()

    def _run_worker(self, mode: str, kind: str) -> dict:
        """One fresh process compiling the job in ``mode``; its answer, or {"error": why}."""
        from tensorgraph.configparser import ENV_FLAGS

        env = dict(os.environ)
        if kind == "cold":   # an empty compile directory, no back end's cache from outside
            compiledir = os.path.join(self._workdir, f"cache-{mode}")
            env = {k: v for k, v in env.items() if k not in CACHE_ENVIRONMENT}
            flags = env.get(ENV_FLAGS, "")  # the user's flags go along; the directory is ours
            env[ENV_FLAGS] = ",".join(p for p in (
                flags, f"base_compiledir={compiledir}", f"compiledir={compiledir}/c") if p)
        with self._lock:
            if self._cancelled.is_set():
                return {"error": "cancelled"}
            process = subprocess.Popen([sys.executable, WORKER, self._job_path, mode], env=env,
                                       cwd=self._workdir, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
            self._running[(mode, kind)] = process
        try:
            out, err = process.communicate(timeout=self._timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            return {"error": f"a fresh process took more than {self._timeout:.0f} s"}
        finally:
            with self._lock:
                self._running.pop((mode, kind), None)
        for line in reversed(out.splitlines()):
            if line.startswith(MARK):
                return json.loads(line[len(MARK):])
        if self._cancelled.is_set():
            return {"error": "cancelled"}
        last = (err.strip().splitlines() or ["no output"])[-1]
        return {"error": f"the fresh process ended with code {process.returncode}: {last[:200]}"}

    def _close_when_done(self) -> None:
        """When every measurement has ended: mark the rows left unmeasured, remove the work
        directory, tell the listener once more."""
        concurrent.futures.wait(self._futures)
        with self._lock:
            if self._workdir is None:
                return
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
            for row in self._rows.values():
                if row["compile_note"] == MEASURING:
                    row["compile_note"] = ("cancelled" if self._cancelled.is_set()
                                           else "measured in part")
        self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            try:
                self._on_change()
            except Exception:  # noqa: BLE001 - a display that fails must not stop measuring
                pass


@atexit.register
def _stop_all() -> None:
    for times in list(_LIVE):
        times.cancel()
