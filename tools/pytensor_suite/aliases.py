"""Where each PyTensor name is defined, read statically from PyTensor's source (never imported).

Tests reach one name through several modules (``pytensor.compile.get_default_mode`` and
``pytensor.compile.mode.get_default_mode`` are the same function); the ranking of missing
names counts them as one, under the module that defines it.
"""

from __future__ import annotations

import ast
import os


def _module_name(rel_path: str) -> str:
    parts = rel_path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _top_level(body):
    for stmt in body:
        if isinstance(stmt, ast.Try):
            yield from _top_level(stmt.body)
        elif isinstance(stmt, ast.If):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
        else:
            yield stmt


def build(package_dir: str) -> dict[str, str]:
    """{"module.name": "defining_module.name"} for every name a module imports from another
    PyTensor module (``package_dir`` is the directory that contains ``pytensor/``)."""
    aliases: dict[str, str] = {}
    defined: set[str] = set()
    stars: dict[str, list[str]] = {}
    for dirpath, _, files in os.walk(os.path.join(package_dir, "pytensor")):
        for fname in files:
            if not fname.endswith(".py"):
                continue
            path = os.path.join(dirpath, fname)
            rel = os.path.relpath(path, package_dir).replace(os.sep, "/")
            module = _module_name(rel)
            try:
                tree = ast.parse(open(path, "rb").read())
            except SyntaxError:
                continue
            for stmt in _top_level(tree.body):
                if isinstance(stmt, ast.ImportFrom):
                    src = _resolve_relative(module, fname == "__init__.py", stmt.level,
                                            stmt.module)
                    if not src.startswith("pytensor"):
                        continue
                    for a in stmt.names:
                        if a.name == "*":
                            stars.setdefault(module, []).append(src)
                        else:
                            aliases[f"{module}.{a.asname or a.name}"] = f"{src}.{a.name}"
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    defined.add(f"{module}.{stmt.name}")
                elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    for t in targets:
                        for node in ast.walk(t):
                            if isinstance(node, ast.Name):
                                defined.add(f"{module}.{node.id}")
    # ``from X import *``: the names X defines or imports (public ones) become the module's
    for module, sources in stars.items():
        for src in sources:
            prefix = src + "."
            for name in [n for n in defined | set(aliases) if n.startswith(prefix)]:
                attr = name[len(prefix):]
                if "." in attr or attr.startswith("_"):
                    continue
                local = f"{module}.{attr}"
                if local not in defined and local not in aliases:
                    aliases[local] = name
    resolved = {name: canonical(name, aliases, defined) for name in aliases}
    return {k: v for k, v in resolved.items() if k != v}


def canonical(name: str, aliases: dict, defined: set) -> str:
    for _ in range(20):
        if name in defined or name not in aliases:
            return name
        name = aliases[name]
    return name
