"""The on-disk layout of the compiled-module cache, and its housekeeping.

Inside ``config.compiledir``::

    modules/<key>/manifest.json     key parts, checksum and size of the .so, creation time, origin
    modules/<key>/<module>-<tag>.so the compiled cffi module or library (the tag is unique per
                                    build)
    symbols/<id>                    the key of the library exporting a symbol (id: a hash of
                                    the symbol and what its code depends on)
    locks/<key>.lock, <key>.owner   the key's compile lock and who holds it (see locking.py)
    compilers/<id>.txt              ``cxx --version`` answers, so a new process needs no compiler
    tmp/<name>-<random>/.owner       builds in progress, with the building process (pid, host);
                                    removed when it is gone (kept with config.nocleanup)
    last_cleanup                    when the automatic cleanup last ran (its mtime)

An entry appears only whole: it is built in ``tmp/`` and renamed into ``modules/`` in one step,
and disappears the same way (renamed into ``tmp/`` first, then deleted). The manifest's mtime
is the module's last use (touched whenever a process loads the module from disk).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass

MODULES, LOCKS, TMP, COMPILERS, SYMBOLS = "modules", "locks", "tmp", "compilers", "symbols"
GRAPHS = "graphs"  # rewritten graphs (tensorgraph/compile/rewrite_cache.py)
MANIFEST = "manifest.json"
OWNER = ".owner"  # in a tmp/ build directory: the building process (see locking.py)
CLEANUP_STAMP = "last_cleanup"  # its mtime: when cache.clear last ran automatically
# leftovers in tmp/ older than this are not builds in progress any more
TMP_MAX_AGE = 3600


class CorruptEntry(Exception):
    """A cache entry that cannot be trusted (bad manifest, checksum, or import failure)."""


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(entry: str) -> dict | None:
    """The entry's manifest; None if the entry does not exist; CorruptEntry if unreadable."""
    path = os.path.join(entry, MANIFEST)
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except FileNotFoundError:
        if os.path.isdir(entry):
            raise CorruptEntry("its manifest.json is missing") from None
        return None
    except (OSError, ValueError) as exc:
        raise CorruptEntry(f"its manifest.json is unreadable ({exc})") from None
    if not isinstance(manifest, dict) or not {"file", "sha256", "module"} <= set(manifest):
        raise CorruptEntry("its manifest.json lacks the module's file, name or checksum")
    return manifest


def checked_library(entry: str, manifest: dict) -> str:
    """Path of the entry's .so after checking its size and checksum against the manifest."""
    path = os.path.join(entry, os.path.basename(manifest["file"]))
    try:
        size = os.path.getsize(path)
    except OSError:
        raise CorruptEntry(f"its library {os.path.basename(path)} is missing") from None
    if size != manifest.get("size", size):
        raise CorruptEntry(f"its library has {size} bytes, the manifest says "
                           f"{manifest['size']}")
    if sha256_file(path) != manifest["sha256"]:
        raise CorruptEntry("its library's checksum does not match the manifest")
    return path


def write_manifest(entry: str, manifest: dict) -> None:
    with open(os.path.join(entry, MANIFEST), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)


def write_symbol(root: str, symbol_id: str, key: str) -> None:
    """Record that the library entry ``key`` exports the symbol ``symbol_id`` (atomically: a
    reader sees the old key or the new one)."""
    directory = os.path.join(root, SYMBOLS)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(key)
        os.replace(tmp, os.path.join(directory, symbol_id))
    except BaseException:
        _unlink(tmp)
        raise


def read_symbol(root: str, symbol_id: str) -> str | None:
    """The key of the entry recorded for ``symbol_id``, None if there is none (or it looks
    wrong: the entry is then simply not found)."""
    try:
        with open(os.path.join(root, SYMBOLS, symbol_id), encoding="utf-8") as f:
            key = f.read().strip()
    except OSError:
        return None
    return key if key.isalnum() else None


def touch(entry: str) -> None:
    """Record a use of the entry (the manifest's mtime)."""
    try:
        os.utime(os.path.join(entry, MANIFEST))
    except OSError:
        pass


def publish(built: str, entry: str) -> bool:
    """Move a finished entry into place atomically; False if one is already there."""
    os.makedirs(os.path.dirname(entry), mode=0o700, exist_ok=True)
    try:
        os.rename(built, entry)
    except OSError:
        if os.path.isdir(entry):  # published by a process that took over a stale lock
            return False
        raise
    return True


def remove_entry(root: str, entry: str) -> None:
    """Make the entry disappear at once (rename), then delete its files."""
    os.makedirs(os.path.join(root, TMP), mode=0o700, exist_ok=True)
    trash = tempfile.mkdtemp(prefix="removed-", dir=os.path.join(root, TMP))
    try:
        os.rename(entry, os.path.join(trash, "entry"))
    except FileNotFoundError:
        pass
    shutil.rmtree(trash, ignore_errors=True)


# -- what the CLI shows and does ------------------------------------------------------------

@dataclass
class EntryInfo:
    key: str
    path: str
    manifest: dict | None  # None: broken entry
    size: int
    last_used: float

    @property
    def name(self) -> str:
        return self.manifest["module"] if self.manifest else "(broken entry)"


def entries(root: str) -> list[EntryInfo]:
    """Every entry under ``root/modules``, most recently used first."""
    base = os.path.join(root, MODULES)
    try:
        keys = os.listdir(base)
    except FileNotFoundError:
        return []
    found = []
    for key in keys:
        path = os.path.join(base, key)
        try:
            manifest = read_manifest(path)
        except CorruptEntry:
            manifest = None
        size, newest = 0, 0.0
        for dirpath, _, files in os.walk(path):
            for name in files:
                try:
                    st = os.stat(os.path.join(dirpath, name))
                except OSError:
                    continue
                size += st.st_size
                newest = max(newest, st.st_mtime)
        last = newest
        if manifest is not None:
            try:
                last = os.stat(os.path.join(path, MANIFEST)).st_mtime
            except OSError:
                pass
        found.append(EntryInfo(key, path, manifest, size, last))
    found.sort(key=lambda e: -e.last_used)
    return found


def clear(root: str, max_age: float) -> list[EntryInfo]:
    """Remove entries unused for ``max_age`` seconds, broken entries, and stale tmp/ leftovers.

    Each removal holds the entry's compile lock without waiting, so a module being built or
    repaired right now is left alone."""
    import filelock

    now = time.time()
    removed = []
    for info in entries(root):
        if info.manifest is not None and now - info.last_used < max_age:
            continue
        lock = filelock.FileLock(os.path.join(root, LOCKS, info.key + ".lock"))
        try:
            os.makedirs(os.path.join(root, LOCKS), mode=0o700, exist_ok=True)
            lock.acquire(timeout=0)
        except filelock.Timeout:
            continue
        try:
            remove_entry(root, info.path)
        finally:
            lock.release()
        removed.append(info)
    sweep_dead(root)
    _remove_old(os.path.join(root, TMP), now - TMP_MAX_AGE)
    _remove_old(os.path.join(root, GRAPHS), now - max_age)  # rewritten graphs (rewrite_cache)
    _remove_orphan_symbols(root)
    return removed


def sweep_dead(root: str) -> list[str]:
    """Remove what compiles killed midway left behind: build directories in ``tmp/`` and
    compile locks (``.owner`` + ``.lock``) whose owner, a process on this host, is gone.
    Returns the paths removed. Cheap (a listing of ``tmp/`` and of the owner files), so it runs
    before the first compilation of every process."""
    from tensorgraph.link.c.locking import owner_is_dead, read_owner

    removed = []
    tmp = os.path.join(root, TMP)
    for name in _listdir(tmp):
        path = os.path.join(tmp, name)
        if owner_is_dead(read_owner(os.path.join(path, OWNER))):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    locks = os.path.join(root, LOCKS)
    for name in _listdir(locks):
        if name.endswith(".owner"):
            owner_path = os.path.join(locks, name)
            if owner_is_dead(read_owner(owner_path)):
                for path in (owner_path, owner_path[: -len(".owner")] + ".lock"):
                    _unlink(path)
                    removed.append(path)
    return removed


def _listdir(directory: str) -> list[str]:
    try:
        return sorted(os.listdir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return []


def _remove_orphan_symbols(root: str) -> None:
    """Symbol records whose library is gone."""
    directory = os.path.join(root, SYMBOLS)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return
    for name in names:
        key = read_symbol(root, name)
        if key is None or not os.path.isdir(os.path.join(root, MODULES, key)):
            _unlink(os.path.join(directory, name))


def purge(root: str) -> int:
    """Delete the whole cache directory; returns the number of modules it held."""
    count = len(entries(root))
    shutil.rmtree(root, ignore_errors=True)
    return count


def unlock(root: str) -> tuple[int, list[tuple[str, dict | None]]]:
    """Delete every lock and owner file. Returns the number of lock files removed and, for
    each lock that was held (by a live process, or a soft lock left behind), its name and
    owner information."""
    import filelock

    from tensorgraph.link.c.locking import read_owner

    base = os.path.join(root, LOCKS)
    try:
        names = sorted(os.listdir(base))
    except FileNotFoundError:
        return 0, []
    count, held = 0, []
    for name in names:
        if not name.endswith(".lock"):
            continue
        path = os.path.join(base, name)
        stem = name[: -len(".lock")]
        owner_path = os.path.join(base, stem + ".owner")
        lock = filelock.FileLock(path)
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            held.append((stem, read_owner(owner_path)))
            _unlink(path)
        else:
            _unlink(path)
            lock.release()
        count += 1
    for name in os.listdir(base):  # owner files, with or without a lock
        if name.endswith(".owner"):
            _unlink(os.path.join(base, name))
    return count, held


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _remove_old(directory: str, before: float) -> None:
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return
    for name in names:
        path = os.path.join(directory, name)
        try:
            if os.stat(path).st_mtime < before:
                shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.unlink(path)
        except OSError:
            pass
