"""Running Graphviz: find a ``dot`` program and run it with a time limit.

The pictures of graphs (``printing.pydotprint``, the notebook's graph view) are laid out by
Graphviz's ``dot``. It comes from the system (Debian's ``graphviz``, conda, Homebrew), or, on a
machine where only pip installs things, from the ``graphviz-pure`` package (a static,
dot-compatible program of that name, in the ``notebook`` extra). Without either, a
``GraphvizNotFound`` error says how to get one; nothing else in tensorgraph needs it.

``dot`` on a big graph can run for minutes, so every run has a time limit
(``GraphvizTimeout``); callers fall back to something cheaper.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

__all__ = ["GraphvizError", "GraphvizNotFound", "GraphvizTimeout", "dot_executable", "run_dot"]


class GraphvizError(RuntimeError):
    """Graphviz failed on a graph."""


class GraphvizNotFound(GraphvizError):
    """No ``dot`` program on this machine."""


class GraphvizTimeout(GraphvizError):
    """``dot`` did not finish within its time limit."""


_found: list[str] = []


def dot_executable() -> str:
    """The path of ``dot`` (the system's) or of ``graphviz-pure`` (next to this Python first)."""
    if _found:
        return _found[0]
    here = os.path.join(os.path.dirname(sys.executable), "graphviz-pure")
    for candidate in (shutil.which("dot"), here if os.access(here, os.X_OK) else None,
                      shutil.which("graphviz-pure")):
        if candidate:
            _found.append(candidate)
            return candidate
    raise GraphvizNotFound(
        "drawing a graph needs Graphviz's dot program: install Graphviz (apt install graphviz, "
        "conda install graphviz, brew install graphviz) or pip install graphviz-pure")


def run_dot(source: str, fmt: str, timeout: float | None = 10.0, engine_args=()) -> bytes:
    """``dot -T<fmt>`` on the DOT text ``source``; its output (bytes)."""
    exe = dot_executable()
    try:
        done = subprocess.run([exe, f"-T{fmt}", *engine_args], input=source.encode("utf-8"),
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GraphvizTimeout(f"dot did not lay out the graph within {timeout} s") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GraphvizError(f"{os.path.basename(exe)} failed (exit {done.returncode}): "
                            f"{said[0] if said else 'no message'}")
    return done.stdout
