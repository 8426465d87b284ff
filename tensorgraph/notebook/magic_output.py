"""A line magic's view shows wherever the magic stands in its cell.

IPython treats a line magic's result as an expression's value: shown when the magic is the
cell's last line, dropped anywhere else. A ``%tg_compare`` that worked for minutes in the
middle of a cell then showed nothing. So each ``%tg_*`` line magic hands its result to
:func:`shown`, which displays it at once when the cell throws the result away (the magic is
a statement of its own, not the last line), and otherwise only returns it: as the last line
IPython shows it (once), and ``cmp = %tg_compare ...`` keeps it without showing it, as an
assignment of any other value does.
"""

from __future__ import annotations

import dis
import sys


def shown(result):
    """``result``, displayed now when the code that ran the magic discards it."""
    if result is not None and _discarded():
        from IPython.display import display

        display(result)
    return result


def _discarded() -> bool:
    """Whether the cell code that called ``run_line_magic`` (IPython turns ``%m line`` into
    ``get_ipython().run_line_magic('m', 'line')``) drops the result: its next instruction
    after the call is POP_TOP (an expression statement). As the cell's last line IPython
    compiles the statement to print it instead (PRINT_EXPR), and an assignment stores it."""
    from IPython.core.interactiveshell import InteractiveShell

    frame = sys._getframe(1)
    while frame is not None and frame.f_code is not InteractiveShell.run_line_magic.__code__:
        frame = frame.f_back
    caller = frame.f_back if frame is not None else None
    if caller is None:
        return False
    after = next((i for i in dis.get_instructions(caller.f_code) if i.offset > caller.f_lasti),
                 None)
    return after is not None and after.opname == "POP_TOP"
