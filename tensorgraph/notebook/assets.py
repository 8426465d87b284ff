"""The widgets' front-end files, and the graph view's one ES module made of its parts.

The files live in the checkout's top-level ``nbext/``, installed as the package
``tensorgraph.nbext``. anywidget loads one ES module per widget from a string (a ``blob:`` URL
in the browser), where a relative ``import`` cannot resolve, in JupyterLab, Notebook 7 and
nbconvert's HTML alike. The graph view is written as several modules with one job each, each
importing its siblings as ``import { a, b } from "./part.js";``; ``es_module`` joins them into
one: every part once, after the parts it imports, without those imports and without the
``export`` keyword of its declarations (the entry keeps its ``export default``). The parts
then share one scope, so their top-level names must differ: a module declaring a name twice
does not load (``tests/notebook/test_graph_view.py`` checks the joined module with node when there is
one; the browser tests load it for real).
"""

from __future__ import annotations

import importlib.resources
import pathlib
import re

__all__ = ["asset", "es_module"]

#: a sibling import, the only import a part may have
_IMPORT = re.compile(r'^import \{[^}]*\} from "\./([\w.-]+\.js)";[ \t]*\n', re.M)
_EXPORT = re.compile(r"^export (?=(?:async )?function |const |let |class )", re.M)


def asset(name: str) -> pathlib.Path:
    """A front-end file: from the installed ``tensorgraph.nbext`` package (the wheel), else
    the checkout's top-level ``nbext/`` (a lenient editable install)."""
    try:
        path = pathlib.Path(str(importlib.resources.files("tensorgraph.nbext") / name))
        if path.is_file():
            return path
    except ModuleNotFoundError:
        pass
    return pathlib.Path(__file__).resolve().parents[2] / "nbext" / name


def es_module(entry: str, read=lambda name: asset(name).read_text()) -> str:
    """The ES module ``entry`` (a file name in nbext/) with the parts it imports, joined (see
    the module docstring). ``read(name)`` gives a part's text. ValueError names a cycle, or a
    part whose import or export the joining would not keep."""
    order: list[tuple[str, str]] = []
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise ValueError(f"the graph view's modules import in a circle: "
                             f"{' -> '.join([*path, name])}")
        if name in done:
            return
        text = read(name)
        for part in _IMPORT.findall(text):
            visit(part, (*path, name))
        done.add(name)
        order.append((name, text))

    visit(entry, ())
    joined = []
    for name, text in order:
        body = _IMPORT.sub("", text)
        if name != entry:
            body = _EXPORT.sub("", body)
        left = [line for line in body.splitlines() if line.startswith(("import ", "export "))
                and not (name == entry and line.startswith("export default "))]
        if left:
            raise ValueError(f"nbext/{name}: {left[0]!r}: a part imports its siblings only as "
                             f'import {{ a, b }} from "./part.js"; and exports only '
                             f"declarations (function, const, let, class)")
        joined.append(f"// ---- nbext/{name}\n{body}")
    return "\n".join(joined)
