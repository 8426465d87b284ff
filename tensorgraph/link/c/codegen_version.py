"""The version of the code generator: a hash of the files that shape generated C.

A node function is named by a hash of its own text (``codegen.NodeFunction``), and the module
cache finds it by that name and this version (``runtime_version``). What the name does not
cover must be in the version: the headers an op includes by name (``#include "blas.h"``),
the runtime the glue and every node share (``runtime.h``, ``graph_desc.h``, ``glue*.h``) and
the Python that writes the glue's calls and fills the graph description. A hand-bumped number
was forgotten when one of them changed, and a cache kept serving functions built against the
old layout; a hash of their contents changes by itself.

The hash is computed once per process, on first use (about a hundred small files), so
``import tensorgraph`` does not pay for it; every process of one installation gets the same.
"""

from __future__ import annotations

import functools
import hashlib
import os

__all__ = ["GENERATOR_SOURCES", "content_hash", "codegen_version"]

#: the Python of ``link/c`` that writes C other than an op's own text (which its node
#: function's name already hashes)
GENERATOR_SOURCES = ("codegen.py", "graph_desc.py", "parallel.py")
#: every file with one of these endings, in ``link/c`` and below, is C that generated code
#: includes or is joined from
C_ENDINGS = (".h", ".c")


def _shaping_files(directory: str) -> list[str]:
    """The paths, relative to ``directory``, of the files the version hashes, sorted."""
    found = [name for name in GENERATOR_SOURCES
             if os.path.isfile(os.path.join(directory, name))]
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        rel = os.path.relpath(root, directory)
        found += [os.path.normpath(os.path.join(rel, f)) for f in files if f.endswith(C_ENDINGS)]
    return sorted(found)


def content_hash(directory: str) -> str:
    """A hash of the names and bytes of the files in ``directory`` that shape generated C
    (``GENERATOR_SOURCES`` and every ``.h`` / ``.c`` file below it)."""
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"content_hash() takes the directory of the C back end, "
                                f"got {directory!r}, which is not a directory")
    digest = hashlib.sha256()
    for rel in _shaping_files(directory):
        with open(os.path.join(directory, rel), "rb") as f:
            data = f.read()
        digest.update(rel.replace(os.sep, "/").encode() + b"\0")
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()[:16]


@functools.cache
def codegen_version() -> str:
    """``codegen-<hash>``: the runtime version of every library the code generator builds."""
    return f"codegen-{content_hash(os.path.dirname(os.path.abspath(__file__)))}"
