"""Rich display of configuration flags: an HTML table with a plain-text fallback.

Kept apart from the magic so that other notebook tools (and plain ``display()``) can
show flags the same way.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from tensorgraph.configparser import FlagInfo, format_flags

_CHANGED_STYLE = "font-weight:bold;background:var(--jp-warn-color3,#fff3cd)"
_CELL = "text-align:left;vertical-align:top"


class ConfigView:
    """A list of flags as Jupyter shows it: HTML table in notebooks, text elsewhere.

    Rows whose value differs from the default are highlighted, so a notebook's
    non-standard settings are visible at a glance.
    """

    def __init__(self, infos: Sequence[FlagInfo], title: str, note: str = ""):
        self.infos = list(infos)
        self.title = title
        self.note = note

    def __repr__(self) -> str:
        text = format_flags(self.infos, self.title)
        return f"{text}\n{self.note}" if self.note else text

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        head = "".join(
            f'<th style="{_CELL}">{h}</th>'
            for h in ("flag", "value", "default", "source", "allowed", "doc")
        )
        rows = "".join(self._row(i) for i in self.infos)
        note = f"<p>{html.escape(self.note)}</p>" if self.note else ""
        return (
            f'<div class="tg-config"><p><b>{html.escape(self.title)}</b></p>'
            f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>{note}</div>"
        )

    @staticmethod
    def _row(info: FlagInfo) -> str:
        changed = not info.is_default
        attrs = f' class="tg-changed" style="{_CHANGED_STYLE}"' if changed else ""
        allowed = info.allowed + ("" if info.mutable else " (read-only)")
        cells = (
            f"<code>{html.escape(info.name)}</code>",
            f"<code>{html.escape(repr(info.value))}</code>",
            f"<code>{html.escape(repr(info.default))}</code>",
            html.escape(info.source),
            html.escape(allowed),
            html.escape(info.doc),
        )
        tds = "".join(f'<td style="{_CELL}">{c}</td>' for c in cells)
        return f"<tr{attrs}>{tds}</tr>"
