"""Layers import downward (docs/architecture.md, "Layers").

The package is read with ``ast``: every import of a tensorgraph module, at the top of a module
or inside a function (``if TYPE_CHECKING:`` blocks excepted), and every module named by a
string (``importlib.import_module("tensorgraph.x")``, tables of lazy names) is an edge from the
importing module to the imported one: ``from tensorgraph.x import y`` goes to the module
``tensorgraph.x.y`` when there is one, else to ``tensorgraph.x``. The tests check that no
edge goes to a module of a higher layer (apart from the exceptions listed with their reason)
and that the largest import cycle stays inside the tensor layer. Counting what runs too (each
package ``__init__`` an import runs, the exceptions and function-level imports included), the
largest cycle and the number of function-level imports may only shrink (issue 32).
"""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys

import pytest

import tensorgraph

PACKAGE = pathlib.Path(tensorgraph.__file__).parent

#: lowest first; a module belongs to the layer of its longest listed prefix (the package
#: ``tensorgraph`` itself only by its exact name). Where a module sits outside the package
#: of its layer, docs/architecture.md says why.
LAYERS = [
    ("config", ["tensorgraph.configparser", "tensorgraph.configdefaults", "tensorgraph.cpus",
                "tensorgraph.utils", "tensorgraph.graphviz_run", "tensorgraph.hooks"]),
    ("graph", ["tensorgraph.graph", "tensorgraph.printing", "tensorgraph.raise_op"]),
    ("rewriting", ["tensorgraph.rewriting"]),
    ("scalar", ["tensorgraph.scalar"]),
    ("tensor", ["tensorgraph.tensor", "tensorgraph.gradient"]),
    ("scan", ["tensorgraph.scan", "tensorgraph.ifelse"]),
    ("link", ["tensorgraph.link"]),
    ("compile", ["tensorgraph.compile"]),
    ("front ends", ["tensorgraph.notebook", "tensorgraph.dask", "tensorgraph.pytensor"]),
    ("package", ["tensorgraph", "tensorgraph.__main__"]),
]

#: upward edges that stay, and why; each is resolved at run time, never while importing. None
#: is left: the rewrite database loads the tensor and scan rewrites through
#: ``tensorgraph.hooks.load_rewrites``, which the package fills (docs/architecture.md, "Layers")
EXCEPTIONS: dict[tuple[str, str], str] = {}

#: the largest import cycle: the tensor modules that build each other's graphs, with gradient
#: (21 modules; the package's __init__ and tensor.random are outside it, since nothing in the
#: cycle imports them); it may not leave the tensor layer, and should not grow
MAX_CYCLE = 21

HINT = ("a lower layer never imports a higher one, nor the package tensorgraph itself: "
        "import config from tensorgraph.configdefaults, reach the compiler or tensors "
        "through tensorgraph.hooks, or let the higher layer register what the lower one "
        "needs into a table the lower one owns (docs/architecture.md, 'Layers')")


def package_modules(root: pathlib.Path = PACKAGE) -> dict[str, pathlib.Path]:
    """Dotted name -> file of every module of the package (a package is its __init__.py)."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _resolve(modules, dotted: str) -> str | None:
    while dotted and dotted not in modules:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_edges(modules) -> list[tuple[str, str, int]]:
    """(importer, imported, line) for every import of one tensorgraph module by another."""
    edges = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]

        def add(target, line, name=name):
            if target and target != name:
                edges.append((name, target, line))

        def visit(node):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child.test):
                    for other in child.orelse:
                        visit_one(other)
                else:
                    visit_one(child)

        def visit_one(node, package=package):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(_resolve(modules, alias.name), node.lineno)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    add(full if full in modules else _resolve(modules, base), node.lineno)
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and node.value in modules and node.value != "tensorgraph"):
                add(node.value, node.lineno)  # a module imported by its name
            else:
                visit(node)

        visit(ast.parse(path.read_text(encoding="utf-8")))
    return edges


def layer_of(module: str) -> int:
    """The index in LAYERS of ``module``'s layer."""
    prefixes = {name: k for k, (_, names) in enumerate(LAYERS) for name in names}
    if module in prefixes:
        return prefixes[module]
    candidate = module.rpartition(".")[0]
    while candidate and candidate != "tensorgraph":
        if candidate in prefixes:
            return prefixes[candidate]
        candidate = candidate.rpartition(".")[0]
    raise KeyError(module)


def strongly_connected(nodes, successors) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), largest first."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(successors.get(root, ()))))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(successors.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(sorted(component))
    return sorted(found, key=len, reverse=True)


def run_time_successors(modules, edges) -> dict[str, set[str]]:
    """module -> the modules its imports run: each edge (the exceptions and function-level ones
    included), plus the ``__init__`` of every package above an imported module (Python runs it
    first), plus each module's own packages. The root package ``tensorgraph`` is left out: its
    ``__init__`` imports only the config layer at its top, and its lazy public names resolve on
    attribute access of ``tensorgraph.<name>``, which no module of the package does."""

    def packages(module):
        parent = module.rpartition(".")[0]
        while parent and parent != "tensorgraph":
            if parent in modules:
                yield parent
            parent = parent.rpartition(".")[0]

    successors: dict[str, set[str]] = {name: set(packages(name)) for name in modules}
    for importer, imported, _ in edges:
        successors[importer].add(imported)
        successors[importer].update(packages(imported))
    return successors


def function_level_imports(modules) -> list[tuple[str, int]]:
    """(module, line) of every import statement inside a function that imports a tensorgraph
    module: each is an import the module's top does not show."""
    found = []
    for name, path in modules.items():
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and (
                        node.level or (node.module or "").split(".")[0] == "tensorgraph"):
                    found.append((name, node.lineno))
                elif isinstance(node, ast.Import) and any(
                        alias.name.split(".")[0] == "tensorgraph" for alias in node.names):
                    found.append((name, node.lineno))
    return sorted(set(found))


@pytest.fixture(scope="module")
def graph():
    modules = package_modules()
    return modules, import_edges(modules)


def test_every_module_has_a_layer(graph):
    modules, _ = graph
    missing = []
    for name in modules:
        try:
            layer_of(name)
        except KeyError:
            missing.append(name)
    assert missing == [], f"place these modules in LAYERS (and docs/architecture.md): {missing}"


def test_no_module_imports_a_higher_layer(graph):
    _, edges = graph
    upward = sorted({
        f"{importer} (line {line}, layer {LAYERS[layer_of(importer)][0]}) imports {imported} "
        f"(layer {LAYERS[layer_of(imported)][0]})"
        for importer, imported, line in edges
        if layer_of(imported) > layer_of(importer) and (importer, imported) not in EXCEPTIONS
    })
    assert upward == [], HINT + ":\n" + "\n".join(upward)


def test_the_exceptions_go_upward(graph):
    modules, _ = graph
    for importer, imported in EXCEPTIONS:
        if importer in modules and imported in modules:
            assert layer_of(imported) > layer_of(importer), (importer, imported)


def test_the_largest_import_cycle_is_inside_the_tensor_layer(graph):
    modules, edges = graph
    successors: dict[str, set[str]] = {}
    for importer, imported, _ in edges:  # the exceptions too
        successors.setdefault(importer, set()).add(imported)
    largest = strongly_connected(list(modules), successors)[0]
    tensor = [k for k, (name, _) in enumerate(LAYERS) if name == "tensor"][0]
    outside = [m for m in largest if layer_of(m) != tensor]
    assert outside == [], f"the largest import cycle ({len(largest)} modules) leaves the " \
                          f"tensor layer: {outside}"
    assert len(largest) <= MAX_CYCLE, f"the tensor layer's cycle grew to {len(largest)}: {largest}"


def test_the_reader_sees_function_level_and_by_name_imports(tmp_path):
    pkg = tmp_path / "tensorgraph"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "high.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("from typing import TYPE_CHECKING\n"
                                             "if TYPE_CHECKING:\n    import tensorgraph.high\n")
    (pkg / "low" / "a.py").write_text("def f():\n    from tensorgraph import high\n"
                                      "    from . import b\n")
    (pkg / "low" / "b.py").write_text("import importlib\n"
                                      "M = importlib.import_module('tensorgraph.high')\n")
    edges = {(a, b) for a, b, _ in import_edges(package_modules(pkg))}
    assert edges == {("tensorgraph.low.a", "tensorgraph.high"),
                     ("tensorgraph.low.a", "tensorgraph.low.b"),
                     ("tensorgraph.low.b", "tensorgraph.high")}


def test_tarjan_finds_the_cycles():
    successors = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": set()}
    assert strongly_connected("abcdef", successors) == [["a", "b", "c"], ["d", "e"], ["f"]]


LOADED_PROBE = """
import importlib, json, sys
loaded = {}
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except ImportError as exc:  # an optional dependency (jax, numba) is absent
        if not (exc.name or "").startswith(("jax", "numba", "torch", "dask", "distributed")):
            raise
print(json.dumps(sorted(m for m in sys.modules if m.startswith("tensorgraph."))))
"""


@pytest.mark.parametrize("layer", [name for name, _ in LAYERS[:LAYERS.index(
    next(entry for entry in LAYERS if entry[0] == "compile")) + 1]])
def test_importing_a_layer_loads_no_higher_layer(graph, layer):
    """At run time too: importing every module of a layer (its packages' __init__ included)
    loads no module of a higher layer."""
    modules, _ = graph
    level = [name for name, _ in LAYERS].index(layer)
    names = [m for m in modules if m != "tensorgraph" and layer_of(m) == level]
    proc = subprocess.run([sys.executable, "-c", LOADED_PROBE, json.dumps(names)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout)
    higher = [m for m in loaded if m in modules and layer_of(m) > level]
    assert higher == [], f"importing the {layer} layer loaded {higher}"


#: the largest cycle counting every import that runs (run_time_successors), and the number of
#: function-level imports of tensorgraph modules (issue 32 targets 30 and 300); both only shrink
MAX_RUN_TIME_CYCLE = 30
MAX_FUNCTION_LEVEL_IMPORTS = 240


def test_the_largest_cycle_of_every_import_that_runs(graph):
    modules, edges = graph
    largest = strongly_connected(list(modules), run_time_successors(modules, edges))[0]
    assert len(largest) <= MAX_RUN_TIME_CYCLE, (
        f"counting every import that runs, the largest cycle grew to {len(largest)} modules "
        f"(at most {MAX_RUN_TIME_CYCLE}): {largest}")


def test_function_level_imports_do_not_grow(graph):
    modules, _ = graph
    found = function_level_imports(modules)
    assert len(found) <= MAX_FUNCTION_LEVEL_IMPORTS, (
        f"{len(found)} function-level imports of tensorgraph modules (at most "
        f"{MAX_FUNCTION_LEVEL_IMPORTS}): import at the top of the module instead")


def test_no_lazy_tensor_import_helper():
    """Modules above tensor import it at their top; modules inside it import the function they
    need from the module that defines it, not through a ``_tt()`` helper."""
    helpers = [f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
               for path in sorted(PACKAGE.rglob("*.py"))
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.FunctionDef) and node.name == "_tt"]
    assert helpers == [], f"lazy _tt() import helpers remain: {helpers}"


def test_the_run_time_reader_follows_packages_and_counts_function_imports(tmp_path):
    pkg = tmp_path / "tensorgraph"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("import tensorgraph.high\n")
    (pkg / "high.py").write_text("def f():\n    from tensorgraph.low import a\n")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("import os\n")
    modules = package_modules(pkg)
    successors = run_time_successors(modules, import_edges(modules))
    assert successors["tensorgraph.high"] == {"tensorgraph.low.a", "tensorgraph.low"}
    assert successors["tensorgraph.low.a"] == {"tensorgraph.low"}
    assert function_level_imports(modules) == [("tensorgraph.high", 2)]
