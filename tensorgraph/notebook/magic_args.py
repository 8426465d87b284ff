"""What every ``%tg_*`` magic does with its line first: ``--help`` prints the usage, and bad
usage becomes a one-line ``UsageError`` that names the magic."""

from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic_arguments import parse_argstring


def help_requested(line: str, magic, more: str = "") -> bool:
    """When ``line`` starts with ``-h`` or ``--help``: print ``magic``'s usage (its docstring,
    which ``magic_arguments`` makes the usage) and ``more``, and answer True."""
    if line.split()[:1] not in (["-h"], ["--help"]):
        return False
    print(magic.__doc__)
    if more:
        print(more)
    return True


def parse_magic_args(magic, name: str, line: str):
    """``magic``'s arguments parsed from ``line``; a parse error is a UsageError naming the
    magic (``name``, e.g. ``"%tg_step"``)."""
    try:
        return parse_argstring(magic, line)
    except UsageError as exc:
        raise UsageError(f"{name}: {exc}") from None
