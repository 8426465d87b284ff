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


def _human_size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return ""


def _human_age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def _run_cache(args: argparse.Namespace) -> int:
    import time

    from tensorgraph import config
    from tensorgraph.link.c import cache

    root = config.compiledir
    now = time.time()
    if args.action == "list":
        found = cache.entries(root)
        print(f"compiledir: {root}")
        for e in found:
            created = e.manifest.get("created", e.last_used) if e.manifest else e.last_used
            origin = (e.manifest or {}).get("origin") or ""
            print(f"  {e.name:<48} {_human_size(e.size):>10}  used {_human_age(now - e.last_used)}"
                  f" ago, created {_human_age(now - created)} ago  {origin[:60]}")
        total = sum(e.size for e in found)
        oldest = f"; least recently used {_human_age(now - found[-1].last_used)} ago" if found else ""
        print(f"{len(found)} module(s), {_human_size(total)}{oldest}")
    elif args.action == "clear":
        age = config.cmodule__age_thresh_use if args.age is None else args.age
        removed = cache.clear(root, age)
        size = sum(e.size for e in removed)
        print(f"removed {len(removed)} module(s) ({_human_size(size)}) unused for more than "
              f"{_human_age(age)} or broken, from {root}")
    elif args.action == "purge":
        count = cache.purge(root)
        print(f"removed {root} and its {count} module(s)")
    else:  # unlock
        count, held = cache.unlock(root)
        for stem, owner in held:
            who = (f"process {owner.get('pid')} on host {owner.get('host')}" if owner
                   else "an unknown process")
            print(f"  broke the lock of module key {stem}, held by {who}")
        print(f"removed {count} lock file(s) ({len(held)} held) in {root}")
    return 0


def _setup_cache(subparsers) -> None:
    p = subparsers.add_parser(
        "cache",
        help="show and manage the compiled C module cache",
        description="Show and manage the cache of compiled C modules in config.compiledir: "
        "'list' the modules (size, last use, origin), 'clear' those unused for "
        "cmodule__age_thresh_use seconds (and broken ones), 'purge' everything, 'unlock' "
        "remove every compile lock (only when no tensorgraph process is compiling).",
    )
    p.add_argument("action", choices=("list", "clear", "purge", "unlock"))
    p.add_argument("--age", type=float, default=None,
                   help="for clear: remove modules unused for this many seconds (default: "
                        "cmodule__age_thresh_use)")
    p.set_defaults(func=_run_cache)


_COMMANDS = (_setup_config, _setup_cache)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tensorgraph")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for setup in _COMMANDS:
        setup(subparsers)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
