"""Source locations in notebook cells named as IPython names them: ``Cell In[3], line 2``.

ipykernel compiles each cell from a file such as ``/tmp/ipykernel_4242/1234567.py``; tracebacks
show it as ``Cell In[3], line 2`` and so should tensorgraph's errors ("created at ..."). The
core cannot import IPython, so the extension registers this formatter with it
(``tensorgraph.graph.utils.register_location_formatter``).
"""

from __future__ import annotations


class CellLocations:
    """``(filename, lineno) -> 'Cell In[N], line L'`` for the cells of one IPython shell."""

    def __init__(self, shell):
        self.shell = shell

    def __call__(self, filename: str, lineno: int) -> str | None:
        compiler = getattr(self.shell, "compile", None)
        naming = getattr(compiler, "format_code_name", None)
        named = naming(filename) if naming is not None else None
        if not named:
            return None
        label, name = named
        return f"{label} {name}, line {lineno}"


def cache_cell_magic_body(shell, magic: str, line: str, body: str) -> tuple[str, int]:
    """Register a cell magic's body as the code of the cell it is written in.

    Returns ``(filename, offset)``: code compiled from ``filename`` names the running cell's
    number (``Cell In[3]``, not the next one: IPython counts the cell before running it), and
    adding ``offset`` to a line number of the transformed body (IPython drops its leading
    blank lines) gives the line in the cell as the user sees it, the magic's line included.
    """
    result = getattr(shell.displayhook, "exec_result", None)  # set while a cell runs
    number = result.execution_count if result is not None else shell.execution_count
    raw = getattr(getattr(result, "info", None), "raw_cell", None) or ""
    lines = raw.splitlines()
    before = next((i for i, text in enumerate(lines) if text.strip()), 0)
    if not (lines and lines[before].lstrip().startswith(f"%%{magic}")):
        raw, before = f"%%{magic} {line}\n{body}", 0  # run from code: a cell of its own
    body_lines = body.splitlines()
    blank = next((i for i, text in enumerate(body_lines) if text.strip()), len(body_lines))
    return shell.compile.cache(raw, number), before + 1 + blank
