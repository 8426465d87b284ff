"""The package as a whole: import cost, what it imports, the command line, the invariant
that only the configparser reads the environment."""

import pathlib
import re

import tensorgraph

PACKAGE = pathlib.Path(tensorgraph.__file__).parent

IMPORT_PROBE = """
import sys
before = set(sys.modules)
import tensorgraph
loaded = sorted(set(sys.modules) - before)
print(",".join(m for m in loaded if m.startswith("tensorgraph")))
print(",".join(m for m in loaded if m.split(".")[0] in HEAVY) or "-")
""".replace("HEAVY", repr(("numpy", "IPython", "ipywidgets", "anywidget", "jupyterlab", "jax",
                           "numba", "torch", "dask", "distributed", "cffi", "scipy")))


def test_import_loads_only_the_config_layer_and_nothing_heavy(run_python):
    """``import tensorgraph`` stays fast because it loads only the configuration (the rest of
    the public API loads on first use): no numpy, no IPython, no back end. (How fast it is,
    benchmarks/ measures.)"""
    proc = run_python("-c", IMPORT_PROBE)
    assert proc.returncode == 0, proc.stderr
    ours, heavy = proc.stdout.split()
    assert heavy == "-", f"import tensorgraph imported {heavy}"
    assert set(ours.split(",")) <= {"tensorgraph", "tensorgraph.configdefaults",
                                     "tensorgraph.configparser", "tensorgraph.cpus",
                                     "tensorgraph.hooks", "tensorgraph.utils"}, ours


def test_python_m_tensorgraph_config_lists_all_flags(run_python):
    proc = run_python("-m", "tensorgraph", "config", env={"TENSORGRAPH_FLAGS": "floatX=float32"})
    assert proc.returncode == 0, proc.stderr
    for name in tensorgraph.config:
        assert f"\n{name} (" in proc.stdout
    assert "value: 'float32'  [env TENSORGRAPH_FLAGS; default 'float64']" in proc.stdout


def test_python_m_tensorgraph_config_selected_and_diff(run_python):
    env = {"TENSORGRAPH_FLAGS": "allow_gc=False"}
    proc = run_python("-m", "tensorgraph", "config", "--diff", env=env)
    assert proc.stdout.startswith("tensorgraph config: 1 flag(s)")
    assert "\nallow_gc (" in proc.stdout
    proc = run_python("-m", "tensorgraph", "config", "floatX", "mode")
    assert proc.stdout.count("\n    value: ") == 2


def test_python_m_tensorgraph_config_unknown_flag(run_python):
    proc = run_python("-m", "tensorgraph", "config", "floatx")
    assert proc.returncode == 2
    assert "Did you mean 'floatX'?" in proc.stderr


def test_python_m_tensorgraph_needs_a_command(run_python):
    proc = run_python("-m", "tensorgraph")
    assert proc.returncode == 2 and "config" in proc.stderr


def test_only_the_configparser_reads_tensorgraph_settings_from_the_environment():
    pattern = re.compile(r"TENSORGRAPH_FLAGS|TENSORGRAPHRC|environ\.get\(\s*[\"']TENSORGRAPH")
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name not in ("configparser.py", "__main__.py")
        and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_ipython_is_imported_only_by_the_notebook_package():
    pattern = re.compile(r"^\s*(from|import)\s+(IPython|ipywidgets|anywidget)\b", re.M)
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "notebook" not in path.relative_to(PACKAGE).parts
        and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_importlib_submodules_are_imported_where_they_are_used():
    # `import importlib` does not load importlib.util: `importlib.util.x` then works only when
    # something else imported it first (benchmarks/run.py failed so in a clean interpreter)
    import ast

    offenders = []
    for root in (PACKAGE, PACKAGE.parent / "benchmarks", PACKAGE.parent / "tools"):
        for path in root.rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                        for alias in node.names}
            imported |= {f"importlib.{alias.name}" for node in ast.walk(tree)
                         if isinstance(node, ast.ImportFrom) and node.module == "importlib"
                         for alias in node.names}
            used = {f"importlib.{node.attr}" for node in ast.walk(tree)
                    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "importlib"
                    and node.attr in ("abc", "machinery", "metadata", "resources", "util")}
            offenders += [f"{path.name}: {name}" for name in sorted(used - imported)]
    assert offenders == []


def test_load_ipython_extension_entry_point(run_python):
    code = (
        "from IPython.testing.globalipapp import start_ipython; ip = start_ipython();"
        "import tensorgraph; tensorgraph.load_ipython_extension(ip);"
        "print('tg_config' in ip.magics_manager.magics['line'])"
    )
    proc = run_python("-c", code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("True")


def test_every_lazy_export_resolves_and_is_listed():
    for name in tensorgraph._LAZY:
        assert getattr(tensorgraph, name) is not None, name
        assert name in dir(tensorgraph)
    assert "config" in dir(tensorgraph)


#: a duration quoted in the code (``0.15 s``, ``13 us``, ``6.7 ms``) and the date and commit
#: of its measurement (``2026-11-25 at 7fa313e``), which must sit within three lines of it
DURATION = re.compile(r"(?<![\w.])\d[\d.]*(?:-\d[\d.]*)? (?:s|ms|us|µs|ns)\b")
DATED = re.compile(r"\b20\d\d-\d\d-\d\d\b.{0,40}?\b[0-9a-f]{7,40}\b", re.S)


def test_every_duration_quoted_in_the_code_is_dated_with_a_commit():
    """Timings quoted in the code's comments and docstrings age as the code and the machines
    change (issue 32: figures "on the reference machine" had no date): each one carries the
    date and commit of its measurement within three lines, or lives in benchmarks/ instead."""
    undated = []
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix not in (".py", ".h", ".c") or "__pycache__" in path.parts:
            continue
        lines = path.read_text(encoding="utf-8").split("\n")
        for k, line in enumerate(lines):
            if DURATION.search(line):
                near = "\n".join(lines[max(k - 3, 0):k + 4])
                if not DATED.search(near):
                    undated.append(f"{path.relative_to(PACKAGE)}:{k + 1}: {line.strip()}")
    assert undated == [], "undated timings:\n" + "\n".join(undated)
