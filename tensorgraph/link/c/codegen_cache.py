"""The generated C of a rewritten graph, kept by the graph's content key.

Writing the C of a graph is a walk over every node asking its op for a fragment, formatting
loops and hashing each function's text: 0.7-1.0 s of a warm 64-layer MLP step's compile of
1.6 s (715 nodes, on the loaded 2-core machine; 2026-12-07 at 8a61a85), more than finding
and loading the compiled code. The same rewritten graph under the same flags and the same
tensorgraph code gives the same C, so it is kept: in this process and beside the rewritten
graph on disk (``compiledir/graphs/<key>.c.json``, link/c/graph_files.py).

The key is the one the rewritten graph is kept by (compile/rewrite_cache.py: the graph as
given, the mode, every flag's value, tensorgraph's code); ``FunctionMaker`` gives it to the
FunctionGraph as ``content_key`` together with the graph's ``version``, so a graph changed
after rewriting (its version moved on) generates its C again. An entry lists, per node in
order, its op's class and what the generation made of it: no operands in C, no C, or one of
the entry's functions (symbol, text, headers, support code, build arguments); nodes that
do not match the entry (another order, another op) make it a miss.

JSON, not pickle: an entry holds only strings and numbers, and loading one runs no code.
"""

from __future__ import annotations

import json
import threading

from tensorgraph.link.c import graph_files

__all__ = ["key_of", "lookup", "store", "keepable", "NO_OPERANDS", "NO_CODE"]

#: an entry's mark for a node whose operands cannot live in C slots
NO_OPERANDS = -2
#: an entry's mark for a node whose operands can, but whose op gives no C for it
NO_CODE = -1
#: entries kept in this process
MAX_IN_MEMORY = 64

_memory: dict[str, dict] = {}
_lock = threading.Lock()


def key_of(fgraph, flat_only: bool) -> str | None:
    """The key of ``fgraph``'s generated C, or None (no content key, or changed since)."""
    content = getattr(fgraph, "content_key", None)
    if content is None or content[1] != fgraph.version:
        return None
    return f"{content[0]}.c{int(bool(flat_only))}"


def keepable(node, implementation) -> bool:
    """Whether what was written for ``node`` (C by ``implementation``, or None: no C)
    depends only on what the key covers: op, implementation and scalar ops all
    tensorgraph's own (a user's op or C may change without its name changing), the C
    versioned, no inner graph compiled apart."""
    op = node.op
    if implementation is not None and (not implementation.cacheable(op)
                                       or not _ours(type(implementation))):
        return False
    return not hasattr(op, "prepare_for_mode") and all(_ours(type(o)) for o in _ops_within(op))


def _ours(cls) -> bool:
    return cls.__module__.partition(".")[0] == "tensorgraph"


def _ops_within(op):
    """``op`` and the scalar ops it runs (an Elemwise's, a Composite's, nested)."""
    yield op
    scalar = getattr(op, "scalar_op", None)
    if scalar is not None:
        yield from _ops_within(scalar)
    for node in getattr(op, "nodes", None) or ():  # a Composite's scalar graph
        yield from _ops_within(node.op)


def _signature(node) -> str:
    op = type(node.op)
    return f"{op.__module__}.{op.__qualname__}/{len(node.inputs)}/{len(node.outputs)}"


def lookup(key: str, nodes):
    """``(marks, functions, where)`` kept under ``key`` for ``nodes`` (toposorted): per node
    ``NO_OPERANDS``, ``NO_CODE`` or the position of its function in ``functions`` (each a dict:
    symbol, text, headers, support, build, unversioned); ``where`` is ``"memory"`` or
    ``"disk"``. None when nothing is kept or the entry does not fit ``nodes``."""
    where, entry = "memory", _memory.get(key)
    if entry is None:
        where, data = "disk", graph_files.read(f"{key}.json")
        if data is None:
            return None
        try:
            entry = json.loads(data)
        except ValueError:
            graph_files.remove(f"{key}.json")
            return None
        _remember(key, entry)
    try:
        signatures, marks, functions = entry["nodes"], entry["marks"], entry["functions"]
    except (KeyError, TypeError):
        return None
    if len(signatures) != len(nodes) or any(
            s != _signature(n) for s, n in zip(signatures, nodes)):
        return None
    return marks, functions, where


def store(key: str, nodes, marks, functions) -> None:
    """Keep the C generated for ``nodes`` (see ``lookup``) under ``key``."""
    entry = {"nodes": [_signature(n) for n in nodes], "marks": list(marks),
             "functions": list(functions)}
    _remember(key, entry)
    graph_files.write(f"{key}.json", json.dumps(entry, separators=(",", ":")).encode())


def _remember(key: str, entry: dict) -> None:
    with _lock:
        if len(_memory) >= MAX_IN_MEMORY:
            _memory.pop(next(iter(_memory)))
        _memory[key] = entry
