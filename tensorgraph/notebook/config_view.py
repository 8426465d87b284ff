"""Rich display of configuration flags: an HTML table with a plain-text fallback.

Kept apart from the magic so that other notebook tools (and plain ``display()``) can
show flags the same way.  The table fits a notebook's width: four short columns (flag,
value, default, source); each flag's doc and allowed values fold out under its name
(``<details>``), so 76 flags stay readable without a horizontal scrollbar.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from tensorgraph.configparser import FlagInfo, format_flags

_CHANGED_STYLE = "font-weight:bold;background:var(--jp-warn-color3,#fff3cd)"
_CELL = "text-align:left;vertical-align:top;white-space:normal;padding:1px 12px 1px 0"
# values, defaults and sources may be long paths or flag strings: they wrap anywhere, within a
# bounded column, instead of widening the table past the notebook
_WRAP = "min-width:8ch;max-width:32ch;overflow-wrap:anywhere"
_TABLE = "width:auto;max-width:100%;border-collapse:collapse"
_DOC = ("font-weight:normal;max-width:60ch;margin:0.2em 0 0.4em 1em;"
        "color:var(--jp-ui-font-color1,inherit)")


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
        note = f"<p>{html.escape(self.note)}</p>" if self.note else ""
        table = ""
        if self.infos:
            head = "".join(f'<th style="{_CELL}">{h}</th>'
                           for h in ("flag (click for its doc)", "value", "default", "source"))
            rows = "".join(self._row(i) for i in self.infos)
            table = (f'<table style="{_TABLE}"><thead><tr>{head}</tr></thead>'
                     f"<tbody>{rows}</tbody></table>")
        return (f'<div class="tg-config"><p><b>{html.escape(self.title)}</b></p>'
                f"{table}{note}</div>")

    @staticmethod
    def _row(info: FlagInfo) -> str:
        changed = not info.is_default
        attrs = f' class="tg-changed" style="{_CHANGED_STYLE}"' if changed else ""
        allowed = info.allowed + ("" if info.mutable else " (read-only)")
        flag = (f"<details><summary><code>{html.escape(info.name)}</code></summary>"
                f'<div class="tg-doc" style="{_DOC}">{html.escape(info.doc)}<br>'
                f"<i>allowed:</i> {html.escape(allowed)}</div></details>")
        cells = (
            flag,
            f"<code>{html.escape(repr(info.value))}</code>",
            f"<code>{html.escape(repr(info.default))}</code>",
            html.escape(info.source),
        )
        tds = "".join(f'<td style="{_CELL}{";" + _WRAP if k else ""}">{c}</td>'
                      for k, c in enumerate(cells))
        return f"<tr{attrs}>{tds}</tr>"
