"""Rewritten graphs kept by the graph's content, so a warm start skips rewriting.

Rewriting is most of a warm ``function()`` (the C comes from the module cache in a few
milliseconds; the rewrites of the seed program took 11 of its 14 ms,
2026-11-25 at b8674b3). The same graph rewritten
with the same mode, flags and code gives the same result, so it is kept: in this process (the
notebook's edit-compile loop recompiles the same cell) and on disk beside the C modules
(``compiledir/graphs``: a new process). The key is a hash of

* the graph as given: every node's op (class and props), its inputs' positions and the output
  types, every input's and constant's type (constants by their bytes), every variable's name,
  and every node's user source line (errors and widgets show them, so a moved line is a
  different graph);
* the mode's rewrite query, the values of every config flag, and tensorgraph's own code (the
  size and modification time of every module: a changed rewrite changes the key).

A hit gives the rewritten FunctionGraph as it was pickled (docs/architecture.md, "Pickling"),
without its rewrite history: the compile report, which shows the steps, rewrites as usual
(``rewriting_recorded()``), and so do the debug modes and graphs with test values. Stored
pickles pass the module cache's trust checks before loading (a pickle runs code when loaded),
and a pickle that fails to load is removed and the graph rewritten.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import threading

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.link.c import graph_files

__all__ = ["lookup", "store", "graph_key", "recording", "code_digest"]

#: graphs whose pickle is bigger are not kept (a big constant would fill the cache)
MAX_BYTES = 4 << 20
#: pickled graphs kept in this process
MAX_IN_MEMORY = 256

_memory: dict[str, bytes] = {}
_lock = threading.Lock()
_code_digest: list[str] = []
_recorded = threading.local()


@contextlib.contextmanager
def recording():
    """Inside, ``function()`` rewrites even graphs it has kept, so their rewrite history is
    recorded (the compile report shows every step)."""
    depth = getattr(_recorded, "depth", 0)
    _recorded.depth = depth + 1
    try:
        yield
    finally:
        _recorded.depth = depth


def usable(mode) -> bool:
    """Whether a graph compiled for ``mode`` may go to the cache (and, outside
    ``recording()``, come from it)."""
    from tensorgraph.compile.mode import Mode

    return (config.cache_rewritten_graphs and type(mode) is Mode
            and config.compute_test_value == "off")


def recorded() -> bool:
    """Whether ``function()`` must rewrite now, even a graph it has kept (``recording()``):
    the graph is still kept, and so is its generated C (link/c/codegen_cache.py)."""
    return bool(getattr(_recorded, "depth", 0))


def graph_key(inputs, outputs, mode) -> str | None:
    """The hash of everything a rewritten graph depends on (see the module docstring), or
    None when part of it has no stable description (then nothing is cached)."""
    from tensorgraph.graph.basic import Constant, io_toposort
    from tensorgraph.rewriting.presets import query_for_mode

    h = hashlib.sha256()
    index: dict = {}

    def name(var) -> int:
        found = index.get(var)
        if found is None:
            found = index[var] = len(index)
            if isinstance(var, Constant):
                data = np.asarray(var.data)
                h.update(f"c{found}:{var.type}:{data.dtype}:{data.shape}:".encode())
                h.update(np.ascontiguousarray(data).tobytes() if data.dtype != object
                         else repr(data).encode())
        return found

    try:
        for var in inputs:
            h.update(f"i{name(var)}:{var.type}:{var.name!r};".encode())
        for node in io_toposort(inputs, outputs):
            ins = [name(v) for v in node.inputs]
            op = node.op
            props = repr(op._props()) if op.__props__ is not None else None
            if props is None or " at 0x" in props:
                return None  # compared by identity, or a prop without a stable text
            trace = getattr(node.tag, "trace", ())
            where = (trace[0].filename, trace[0].lineno) if trace else None  # the line shown
            h.update(f"n:{type(op).__module__}.{type(op).__qualname__}{props}{ins}{where};"
                     .encode())
            for out in node.outputs:
                h.update(f"o{name(out)}:{out.type}:{out.name!r};".encode())
        h.update(f"out{[name(v) for v in outputs]};".encode())
        h.update(repr(query_for_mode(mode)).encode())
        h.update(repr(sorted((f, repr(config.info(f).value)) for f in config)).encode())
        h.update(_code().encode())
    except Exception:  # noqa: BLE001 - anything without a stable description: no caching
        return None
    return h.hexdigest()[:40]


def _code() -> str:
    """The digest of tensorgraph's own modules (``code_digest``), once per process."""
    if not _code_digest:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package
        _code_digest.append(code_digest(root))
    return _code_digest[0]


def code_digest(root: str) -> str:
    """A digest of the modules under ``root`` (the size and modification time of every
    ``.py`` and ``.h``): an edited module, rewrite or C header changes it."""
    h = hashlib.sha256()
    for directory, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".py", ".h")):
                st = os.stat(os.path.join(directory, f))
                h.update(f"{directory[len(root):]}/{f}:{st.st_size}:{st.st_mtime_ns};"
                         .encode())
    return h.hexdigest()


def _path(key: str) -> str:
    return graph_files.path(f"{key}.pkl")


def lookup(key: str):
    """``(fgraph, where)``: the rewritten FunctionGraph kept under ``key`` (a fresh copy) and
    where it was found, ``"memory"`` (this process) or ``"disk"``; ``(None, None)`` when it
    was not kept."""
    where = "memory"
    data = _memory.get(key)
    if data is None:
        where, data = "disk", graph_files.read(f"{key}.pkl")
        if data is None:
            return None, None
        _remember(key, data)
    try:
        return pickle.loads(data), where
    except Exception:  # noqa: BLE001 - a stale or damaged entry: rewrite instead
        _forget(key)
        return None, None


def store(key: str, fgraph) -> None:
    """Keep ``fgraph`` (rewritten) under ``key``, in memory and on disk; silently nothing when
    it does not pickle, is too big, or the disk refuses."""
    try:
        data = pickle.dumps(fgraph, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an op that does not pickle: no caching
        return
    if len(data) > MAX_BYTES:
        return
    _remember(key, data)
    graph_files.write(f"{key}.pkl", data)


def _remember(key: str, data: bytes) -> None:
    with _lock:
        if len(_memory) >= MAX_IN_MEMORY:
            _memory.pop(next(iter(_memory)))
        _memory[key] = data


def _forget(key: str) -> None:
    with _lock:
        _memory.pop(key, None)
    graph_files.remove(f"{key}.pkl")
