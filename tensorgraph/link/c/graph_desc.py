"""``tg_graph_desc`` and ``tg_scan_layout`` (graph_desc.h) as ``ctypes.Structure``s made from
the header's own text.

The glue is compiled with graph_desc.h; Python fills the same structs by field name. The
fields are read here from those very declarations (their plain ``type name;`` lines), so no
list of fields is kept in two places, and ctypes lays them out by the same C rules the
compiler uses; the glue's ``tg_graph_desc_size()`` is compared with ``ctypes.sizeof`` when it
loads, and the scan loop's entry point compares ``tg_scan_layout``'s size with the one it is
given.
(ctypes, not cffi's parser: pycparser costs about 80 ms of every process's first compile;
2026-11-25 at a90acd4.)
"""

from __future__ import annotations

import ctypes
import os
import re

__all__ = ["GraphDesc", "ScanLayout", "ELEMENT", "LAYOUT_ELEMENT"]

_BASE = {"int": ctypes.c_int, "unsigned char": ctypes.c_ubyte, "int64_t": ctypes.c_int64,
         "void": ctypes.c_void_p}
_LINE = re.compile(r"^\s*(?:const\s+)?(?P<base>int64_t|unsigned char|int|void)\s*"
                   r"(?P<stars>\*(?:\s*const)?\s*\*|\*)?\s*(?P<name>\w+);")


def _fields(text: str, struct: str) -> list[tuple[str, type]]:
    body = text.split(f"typedef struct {struct} {{", 1)[1].split(f"}} {struct};", 1)[0]
    fields = []
    for line in body.splitlines():
        code = line.split("/*", 1)[0].strip()
        if not code:
            continue
        match = _LINE.match(code)
        if match is None:
            raise ValueError(f"graph_desc.h: cannot read the field declaration {code!r} (only "
                             "'int', 'unsigned char', 'int64_t' and 'void' fields, plain or "
                             "pointers, are understood here)")
        base, stars = _BASE[match["base"]], (match["stars"] or "").replace(" ", "")
        if stars == "":
            ctype = base
        elif match["base"] == "void":
            ctype = ctypes.c_void_p if stars == "*" else ctypes.POINTER(ctypes.c_void_p)
        else:
            ctype = ctypes.POINTER(base)
        fields.append((match["name"], ctype))
    return fields


def _read_header() -> str:
    with open(os.path.join(os.path.dirname(__file__), "graph_desc.h"), encoding="utf-8") as f:
        return f.read()


class GraphDesc(ctypes.Structure):
    """A graph as the glue runs it (see graph_desc.h for what each field means)."""

    _fields_ = _fields(_read_header(), "tg_graph_desc")


class ScanLayout(ctypes.Structure):
    """How a loop runs a whole graph once per iteration (see graph_desc.h)."""

    _fields_ = _fields(_read_header(), "tg_scan_layout")


def _elements(structure) -> dict:
    return {name: ctype._type_ for name, ctype in structure._fields_
            if hasattr(ctype, "_type_") and not isinstance(ctype._type_, str)}


#: the element type of each pointer field (what its arrays hold)
ELEMENT = _elements(GraphDesc)
LAYOUT_ELEMENT = _elements(ScanLayout)
