"""Whether the compile directory can hold the C module cache, and whether its code can be trusted.

Loading a module from the cache runs its code (a shared library's constructors run on load).
So before anything is loaded from ``config.compiledir``, the directories tensorgraph owns there
(``config.base_compiledir`` down to ``compiledir``, and each entry's directory and file) must be
owned by the current user and not writable by group or others, as ssh reasons about
``~/.ssh``: anyone else who can write there could replace a module. Directories tensorgraph
creates are created 0700.

A directory that cannot be made (a regular file in the way, no permission) is reported with
the flag, the path and what is wrong instead of a bare ``OSError``.
"""

from __future__ import annotations

import os
import stat

from tensorgraph.configdefaults import config
from tensorgraph.configparser import ENV_FLAGS

__all__ = ["CompiledirError", "UntrustedCacheError", "CacheDiskFullError", "prepare",
           "check_trusted", "disk_full"]


class CompiledirError(RuntimeError):
    """``config.base_compiledir`` / ``config.compiledir`` cannot hold the C module cache."""


class UntrustedCacheError(CompiledirError):
    """A directory or file of the cache could be written by another user: nothing is loaded."""


class CacheDiskFullError(CompiledirError):
    """The disk (or quota) holding the module cache is full: a module could not be written."""


def disk_full(path: str) -> CacheDiskFullError:
    """The error for a write under the cache that failed for lack of space (what was being
    written is removed by its writer: the cache holds only complete entries)."""
    flag = _flag_for(path)
    return CacheDiskFullError(
        f"no space left on the device holding the C module cache: writing {path} failed "
        f"(config.{flag}={getattr(config, flag)!r}). Free space there (`python -m tensorgraph "
        f"cache clear` removes modules unused for a while, `... cache purge` all of them), or "
        f"{_fix_hint()} on a disk with room. Nothing half-written was kept.")


_prepared: set[str] = set()


def _flag_for(path: str) -> str:
    """The flag to name for a problem at ``path``: ``compiledir`` when the user set it, else
    ``base_compiledir`` (compiledir is derived from it)."""
    explicit = config.info("compiledir").source != "default"
    return "compiledir" if explicit and _inside(path, config.compiledir) else "base_compiledir"


def _inside(path: str, parent: str) -> bool:
    path, parent = os.path.abspath(path), os.path.abspath(parent)
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)


def _fix_hint() -> str:
    return (f"set base_compiledir ({ENV_FLAGS}=base_compiledir=/some/dir, or in an rc file) "
            "to a directory you own")


def _make_dir(path: str) -> None:
    """``path`` made (0700, parents too) or explained: which component is in the way."""
    try:
        _makedirs_private(path)
    except OSError as exc:
        flag = _flag_for(path)
        what = f"config.{flag}={getattr(config, flag)!r}"
        blocker = path
        while blocker and not os.path.exists(blocker):
            blocker = os.path.dirname(blocker)
        if blocker and not os.path.isdir(blocker):
            kind = "regular file" if os.path.isfile(blocker) else "special file"
            reason = f"{blocker} is a {kind}, not a directory"
        elif blocker and not os.access(blocker, os.W_OK | os.X_OK):
            reason = f"{blocker} is not writable by this user"
        else:
            reason = f"cannot create a directory in {blocker or '/'} ({exc.strerror or exc})"
        raise CompiledirError(
            f"{what} cannot hold the C module cache: {reason}; {_fix_hint()}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        flag = _flag_for(path)
        raise CompiledirError(
            f"config.{flag}={getattr(config, flag)!r} cannot hold the C module cache: {path} is "
            f"not writable by this user; {_fix_hint()}")


def _makedirs_private(path: str) -> None:
    """Every missing directory down to ``path`` created 0700 (``os.makedirs`` gives the
    intermediate ones the default mode)."""
    missing, current = [], os.path.abspath(path)
    while not os.path.isdir(current):
        # another thread or process may create it between the two checks: only something
        # that exists and is still not a directory is in the way
        if os.path.lexists(current) and not os.path.isdir(current):
            raise NotADirectoryError(current)
        missing.append(current)
        current = os.path.dirname(current)
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            if not os.path.isdir(directory):
                raise


def _check_owned(path: str) -> None:
    """``path`` owned by this user and not writable by group or others (not a symlink)."""
    st = os.lstat(path)
    uid = os.geteuid()
    writers = [who for who, bit in (("its group", stat.S_IWGRP), ("others", stat.S_IWOTH))
               if st.st_mode & bit]
    if stat.S_ISLNK(st.st_mode):
        problem, fix = "is a symbolic link", "replace it by a directory you own"
    elif st.st_uid != uid:
        problem = f"belongs to uid {st.st_uid}, not to this user (uid {uid})"
        fix = "remove it (python -m tensorgraph cache purge) or give it back to this user"
    elif writers:
        problem = (f"is writable by {' and '.join(writers)} "
                   f"(mode {stat.S_IMODE(st.st_mode):04o})")
        fix = f"chmod go-w {path}"
    else:
        return
    raise UntrustedCacheError(
        f"tensorgraph refuses to load compiled C code from {path}: it {problem}, so another "
        f"user could have replaced the code that would run. Fix: {fix}; or {_fix_hint()}.")


def _chain(path: str) -> list[str]:
    """The directories tensorgraph owns from ``base_compiledir`` (or ``compiledir`` when it lies
    elsewhere) down to ``path``."""
    top = os.path.abspath(config.base_compiledir)
    if not _inside(path, top):
        top = os.path.abspath(config.compiledir)
    chain, current = [], os.path.abspath(path)
    while True:
        chain.append(current)
        if current == top or os.path.dirname(current) == current:
            break
        current = os.path.dirname(current)
    return chain[::-1]


def prepare(root: str) -> None:
    """Make ``root`` (a compile directory) and check the chain above it, once per process."""
    if root in _prepared:
        return
    _make_dir(root)
    for directory in _chain(root):
        _check_owned(directory)
    _prepared.add(root)


def check_trusted(path: str, root: str) -> None:
    """Before loading ``path`` (a file under the compile directory ``root``): the directories
    from ``base_compiledir`` down to it and the file itself pass the ownership check (a few
    ``lstat`` calls, once per module a process loads from disk)."""
    prepare(root)
    for directory in _chain(os.path.dirname(os.path.abspath(path))):
        _check_owned(directory)
    _check_owned(path)
