"""Command line: ``python -m tensorgraph <command>``.

Each command is a sub-parser registered in ``_COMMANDS``; add new ones (e.g. ``cache``)
by writing a ``_setup_<name>(subparsers)`` function and listing it there.
"""

from __future__ import annotations

import argparse
import sys


def _run_config(args: argparse.Namespace) -> int:
    from tensorgraph import config

    try:
        text = config.describe(args.flags or None, only_changed=args.diff)
    except AttributeError as exc:  # an unknown flag name (UnknownFlagError)
        print(exc, file=sys.stderr)
        return 2
    print(text)
    return 0


def _setup_config(subparsers) -> None:
    p = subparsers.add_parser(
        "config",
        help="list configuration flags with value, source, default and doc",
        description="List tensorgraph's configuration flags: type, current value, where the "
        "value came from (default, rc file, TENSORGRAPH_FLAGS) and documentation.",
    )
    p.add_argument("flags", nargs="*", help="only these flags (default: all)")
    p.add_argument("--diff", action="store_true", help="only flags not at their default")
    p.set_defaults(func=_run_config)


_COMMANDS = (_setup_config,)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tensorgraph")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for setup in _COMMANDS:
        setup(subparsers)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
