"""Files kept per graph under ``compiledir/graphs``: the rewritten graphs
(compile/rewrite_cache.py) and their generated C (link/c/codegen_cache.py).

One place for what both need: an entry is read only after the trust checks of the module
cache (link/c/cachedir.py; a pickle runs code when loaded, and generated C becomes machine
code), written whole or not at all (readers see the old file or the new one), and a disk that
refuses a write costs the cache, never the compile. ``cache clear`` removes old entries with
the old modules (link/c/cache.py).
"""

from __future__ import annotations

import contextlib
import os
import threading

from tensorgraph.configdefaults import config
from tensorgraph.link.c import cachedir
from tensorgraph.link.c.cache import GRAPHS

__all__ = ["path", "read", "write", "remove"]


def path(name: str) -> str:
    """Where entry ``name`` lives (under the current ``config.compiledir``)."""
    return os.path.join(config.compiledir, GRAPHS, name)


def read(name: str) -> bytes | None:
    """The bytes of entry ``name``, or None (absent, unreadable or untrusted)."""
    where = path(name)
    try:
        cachedir.check_trusted(where, config.compiledir)
        with open(where, "rb") as f:
            return f.read()
    except (OSError, cachedir.CompiledirError):
        return None


def write(name: str, data: bytes) -> None:
    """Entry ``name`` replaced by ``data`` at once; silently nothing when the disk refuses."""
    where, tmp = path(name), None
    try:
        cachedir.prepare(config.compiledir)
        os.makedirs(os.path.dirname(where), mode=0o700, exist_ok=True)
        tmp = f"{where}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, where)  # readers see the old entry or the new one, never half
    except (OSError, cachedir.CompiledirError):
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def remove(name: str) -> None:
    """Entry ``name`` gone (a damaged one: the next compile writes it again)."""
    with contextlib.suppress(OSError):
        os.unlink(path(name))
