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
