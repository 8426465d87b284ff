"""Probe mode: import PyTensor's test modules (``tests.*``) one statement at a time.

A test module's import runs module-level code: ``mode = get_mode("CVM")``, a class body's
``mode = get_default_mode().excluding(...)``.  When tensorgraph refuses such a statement the
whole module fails to import and none of its tests say anything.  In probe mode every
statement of a module body and of each class body is wrapped in ``try``; a statement that
raises is recorded (line, the names it would have bound, the exception) and those names are
bound to placeholders named ``<import-blocked FILE:LINE>``, so the tests that use them fail
and are charged to that statement's error while every other test runs.  Strict mode never
does this: there a test module imports or it does not.

pytest's assertion rewriting is applied to ``test_*.py`` files as pytest would.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.util
import os
import sys

import tg_pytensor_map as mapping

BLOCKED: list[dict] = []        # statements that raised, in import order
_HOOK = "__tg_probe_blocked__"
_EXC = "__tg_exc__"


def _stored_names(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in stmt.names if a.name != "*"]
    names, todo = [], list(ast.iter_child_nodes(stmt))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
            continue
        if isinstance(node, (ast.Lambda, ast.comprehension)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        todo.extend(ast.iter_child_nodes(node))
    return sorted(set(names))


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and \
        isinstance(stmt.value.value, str)


def _wrap(body: list[ast.stmt]) -> list[ast.stmt]:
    out = []
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.ClassDef):
            stmt.body = _wrap(stmt.body)
        if (i == 0 and _is_docstring(stmt)) or (
                isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
            out.append(stmt)
            continue
        call = ast.Call(
            func=ast.Name(_HOOK, ast.Load()),
            args=[ast.Name(_EXC, ast.Load()), ast.Constant(stmt.lineno),
                  ast.Tuple([ast.Constant(n) for n in _stored_names(stmt)], ast.Load()),
                  ast.Call(ast.Name("locals", ast.Load()), [], [])],
            keywords=[])
        handler = ast.ExceptHandler(type=ast.Name("Exception", ast.Load()), name=_EXC,
                                    body=[ast.Expr(call)])
        wrapped = ast.Try(body=[stmt], handlers=[handler], orelse=[], finalbody=[])
        ast.copy_location(wrapped, stmt)
        for node in ast.walk(wrapped):
            if not hasattr(node, "lineno") or node in (call, handler):
                ast.copy_location(node, stmt)
        out.append(wrapped)
    return out


class _TestsFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Claims ``tests`` and ``tests.*`` modules that live under the run root."""

    def __init__(self, root: str, config, record_exception):
        self.root = root
        self.config = config
        self.record_exception = record_exception

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tests" and not fullname.startswith("tests."):
            return None
        base = os.path.join(self.root, *fullname.split("."))
        if os.path.isfile(os.path.join(base, "__init__.py")):
            return importlib.util.spec_from_file_location(
                fullname, os.path.join(base, "__init__.py"), loader=self,
                submodule_search_locations=[base])
        if os.path.isfile(base + ".py"):
            return importlib.util.spec_from_file_location(fullname, base + ".py", loader=self)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        filename = module.__spec__.origin
        rel = os.path.relpath(filename, self.root)
        with open(filename, "rb") as f:
            source = f.read()
        tree = ast.parse(source, filename=filename)
        tree.body = _wrap(tree.body)
        ast.fix_missing_locations(tree)
        if os.path.basename(filename).startswith("test_") and self.config is not None:
            from _pytest.assertion.rewrite import rewrite_asserts

            rewrite_asserts(tree, source, filename, self.config)
        code = compile(tree, filename, "exec", dont_inherit=True)

        def blocked(exc, line, names, namespace):
            BLOCKED.append({"file": rel, "line": line, "names": list(names),
                            "exc": self.record_exception(exc)})
            for name in names:
                namespace[name] = mapping.placeholder(f"<import-blocked {rel}:{line}>")

        module.__dict__[_HOOK] = blocked
        exec(code, module.__dict__)


def install(root: str, config, record_exception) -> None:
    """Put the statement-wise loader for ``tests.*`` first on ``sys.meta_path``."""
    sys.meta_path.insert(0, _TestsFinder(root, config, record_exception))
