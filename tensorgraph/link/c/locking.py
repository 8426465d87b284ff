"""Per-module compile locks that say who holds them and are never waited on forever.

A lock is an OS file lock (``filelock.FileLock``: ``flock``, released by the kernel when its
holder dies) plus an *owner file* beside it holding the holder's pid, host and start time. The
holder touches the owner file while its compiler runs (:meth:`KeyLock.heartbeat`), so a waiter
can tell a busy holder from a stuck or dead one:

* a waiter blocks on the lock in slices of ``config.compile__wait`` seconds (it gets the lock
  as soon as it is free; the slices only pace the checks below);
* after the first slice it says once which process holds the lock and since when, as an INFO
  line in the ``tensorgraph`` logger: waiting for another worker's compile is normal (two Dask
  workers of a machine needing the same module), not something to warn about;
* once it has waited ``config.compile__lock_warning`` seconds, it says so once more, as a
  ``CacheLockWarning``;
* it stops waiting when the holder is a dead process on this host, or when the owner file has
  not been touched for ``config.compile__timeout`` seconds (a hung holder, or a lock file left
  by a killed process on a file system where locks are plain files). It then goes on *without*
  the lock, which is safe because modules are published by an atomic rename: at worst the same
  module is compiled twice.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import tempfile
import time
import warnings

from tensorgraph.configdefaults import config

_log = logging.getLogger(__name__)


class CacheLockWarning(UserWarning):
    """Waiting for, or taking over, another process's compile lock."""


class KeyLock:
    """The compile lock of one module key in ``directory`` (``<name>.lock`` + ``<name>.owner``)."""

    def __init__(self, directory: str, name: str, what: str):
        import filelock

        os.makedirs(directory, mode=0o700, exist_ok=True)
        self.lock_path = os.path.join(directory, name + ".lock")
        self.owner_path = os.path.join(directory, name + ".owner")
        self.what = what
        self._lock = filelock.FileLock(self.lock_path)
        self._held = False
        self.taken_over = False

    def __enter__(self) -> KeyLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lock, or give up on a stale one (then ``taken_over`` is True)."""
        import filelock

        started = time.time()
        announced = warned = False
        while True:
            try:
                self._lock.acquire(timeout=config.compile__wait, poll_interval=0.02)
            except filelock.Timeout:
                owner = read_owner(self.owner_path)
                reason = stale_reason(owner, self.owner_path, started)
                if reason:
                    warnings.warn(f"tensorgraph: compiling {self.what} without the lock: "
                                  f"{reason}", CacheLockWarning, stacklevel=2)
                    self.taken_over = True
                    return
                waited = time.time() - started
                if not announced:
                    _log.info("%s", self._waiting_message(owner))
                    announced = True
                elif not warned and waited >= config.compile__lock_warning:
                    warnings.warn(f"{self._waiting_message(owner)}; waited {waited:.0f} s, "
                                  f"longer than compile__lock_warning="
                                  f"{config.compile__lock_warning} s", CacheLockWarning,
                                  stacklevel=2)
                    warned = True
                continue
            self._held = True
            write_owner(self.owner_path, self.what)
            return

    def heartbeat(self) -> None:
        """Show waiters that the holder is still working."""
        if self._held:
            try:
                os.utime(self.owner_path)
            except OSError:
                write_owner(self.owner_path, self.what)

    def release(self) -> None:
        if self._held:
            try:
                os.unlink(self.owner_path)
            except OSError:
                pass
            self._held = False
            self._lock.release()

    def _waiting_message(self, owner: dict | None) -> str:
        if owner is None:
            who = "another process (it left no owner information)"
        else:
            since = time.strftime("%H:%M:%S", time.localtime(owner.get("since", 0)))
            ago = time.time() - owner.get("since", time.time())
            who = (f"process {owner.get('pid')} on host {owner.get('host')}, which holds it "
                   f"since {since} ({ago:.0f} s ago)")
        return (f"tensorgraph: waiting for the compile lock of {self.what}, held by {who}; "
                f"a holder silent for compile__timeout={config.compile__timeout} s is "
                f"considered stale ({self.lock_path})")


def read_owner(path: str) -> dict | None:
    """The owner file's content, or None when there is none (or it is unreadable)."""
    try:
        with open(path, encoding="utf-8") as f:
            owner = json.load(f)
        owner["touched"] = os.stat(path).st_mtime
    except (OSError, ValueError, TypeError):
        return None
    return owner if isinstance(owner, dict) else None


def stale_reason(owner: dict | None, owner_path: str, waiting_since: float) -> str:
    """Why the lock described by ``owner`` should no longer be waited for, or ''."""
    timeout = config.compile__timeout
    now = time.time()
    if owner is None:
        if now - waiting_since > timeout:
            return f"its holder left no owner information and {timeout} s have passed"
        return ""
    if owner.get("host") == socket.gethostname() and not pid_alive(owner.get("pid")):
        return f"its holder, process {owner.get('pid')}, is dead"
    silent = now - owner.get("touched", now)
    if silent > timeout:
        return (f"its holder, process {owner.get('pid')} on host {owner.get('host')}, showed "
                f"no activity for {silent:.0f} s (compile__timeout={timeout} s)")
    return ""


def owner_is_dead(owner: dict | None) -> bool:
    """Whether ``owner`` (see :func:`read_owner`) names a process of this host that is gone."""
    return (owner is not None and owner.get("host") == socket.gethostname()
            and not pid_alive(owner.get("pid")))


def pid_alive(pid) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_owner(path: str, what: str) -> None:
    """Record this process (pid, host, start time, ``what`` it does) in ``path``."""
    info = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(),
            "what": what}
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".owner-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(info, f)
    os.replace(tmp, path)
