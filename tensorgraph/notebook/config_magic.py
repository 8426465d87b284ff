"""``%tg_config``: show, set and reset configuration flags from a notebook.

    %tg_config                          all flags (HTML table, text fallback)
    %tg_config floatX mode              just these flags
    %tg_config floatX=float32 mode=FAST_COMPILE
                                        set several flags, all or none
    %tg_config --diff                   flags whose value differs from the default
    %tg_config --reset [flag ...]       back to defaults (all mutable flags, or these)

Errors (unknown flag, invalid value, read-only flag) are raised as UsageError, which
IPython shows inline as one clear line, and nothing is changed.
"""

from __future__ import annotations

import shlex

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class

from tensorgraph.configdefaults import config as _config
from tensorgraph.configparser import ConfigError
from tensorgraph.notebook.config_view import ConfigView
from tensorgraph.notebook.magic_args import excerpt, usage_error

_OPTIONS = ("--diff", "--reset")


def _header(count: int, what: str) -> str:
    return f"tensorgraph config: {what} ({count})"


def tg_config(line: str) -> ConfigView | None:
    """Carry out one ``%tg_config`` line and return what to display (``--help``: print the
    usage, display nothing)."""
    if line.split()[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return None
    try:
        tokens = shlex.split(line)
    except ValueError as exc:
        raise usage_error("%tg_config", f"cannot split {excerpt(line)}: {exc}") from None
    options = [t for t in tokens if t.startswith("--")]
    words = [t for t in tokens if not t.startswith("--")]
    unknown = [o for o in options if o not in _OPTIONS]
    if unknown or len(options) > 1:
        raise usage_error(
            "%tg_config", f"unexpected option(s) {excerpt(' '.join(unknown or options))}; "
            "use at most one of --diff, --reset."
        )
    assignments = [w for w in words if "=" in w]
    if assignments and (options or len(assignments) != len(words)):
        raise UsageError(
            "%tg_config: either set flags (name=value ...) or name flags to show, "
            "not both, and without options."
        )
    try:
        if assignments:
            return _set(assignments)
        if options == ["--reset"]:
            return _reset(words)
        infos = [_config.info(w) for w in words] if words else [_config.info(n) for n in _config]
        if options == ["--diff"]:
            infos = [i for i in infos if not i.is_default]
            if not infos:
                return ConfigView([], "tensorgraph config: every flag has its default value")
            return ConfigView(infos, _header(len(infos), "flags that differ from the default"))
        return ConfigView(infos, _header(len(infos), "selected flags" if words else "all flags"))
    except ConfigError as exc:
        raise usage_error("%tg_config", str(exc)) from None


def _set(assignments: list[str]) -> ConfigView:
    flags = dict(a.split("=", 1) for a in assignments)
    _config.update({k.strip(): v for k, v in flags.items()})
    infos = [_config.info(k.strip()) for k in flags]
    return ConfigView(infos, _header(len(infos), "flags set"))


def _reset(names: list[str]) -> ConfigView:
    changed = _config.reset(names or None)
    infos = [_config.info(n) for n in changed]
    stuck = [i.name for i in (_config.info(n) for n in _config) if not i.is_default]
    note = (
        f"Still differing from the default (read-only after import): {', '.join(stuck)}"
        if stuck and not names
        else ""
    )
    return ConfigView(infos, _header(len(infos), "flags reset to the default"), note)


@magics_class
class ConfigMagics(Magics):
    """The ``%tg_config`` line magic (no attribute here may be named ``config``: that name
    belongs to traitlets' configuration of the Magics object itself)."""

    @line_magic("tg_config")
    def tg_config(self, line: str = ""):
        """Show, set or reset tensorgraph configuration flags.

        %tg_config | %tg_config NAME ... | %tg_config NAME=VALUE ... |
        %tg_config --diff | %tg_config --reset [NAME ...]
        """
        return tg_config(line)
