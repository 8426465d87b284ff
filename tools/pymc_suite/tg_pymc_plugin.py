"""pytest plugin of the PyMC suite runner (loaded with ``-p tg_pymc_plugin``).

``$TG_PYMC_SUITE_MODE`` says which run this is:

* ``c``: PyTensor as installed (its default mode, the C VM); the plugin only records;
* ``py``: PyTensor's mode ``FAST_COMPILE`` (its Python ``perform`` implementations), the
  runner's check of a difference between the two runs above;
* ``tensorgraph``: ``import tensorgraph.pytensor`` and ``pytensor.config.mode`` set to the
  ``TENSORGRAPH`` mode (the ``Mode`` instance: PyTensor's ``config.mode`` accepts only its own
  mode names as strings), so every function compiled without an explicit mode (``.eval()``,
  ``pytensor.function``, PyMC's ``compile_fn`` / ``compile_logp`` / ``PointFunc``...) runs on
  tensorgraph. A test that asks for a mode itself (``Mode("py")``) keeps it.

In both runs every ``FunctionMaker.create`` (each compiled PyTensor function) is counted by the
class of its linker, and ``TensorgraphLinker.jit_compile`` (each graph converted and compiled by
tensorgraph) is counted on its own: the report shows how many functions really ran on
tensorgraph, so a run that silently used C cannot pass for a tensorgraph run.

``$TG_PYMC_SUITE_SHIM=1`` (the default) gives names that the test modules import from ``pymc``
and that the installed PyMC lacks (tests newer than the package) a placeholder that raises
``MissingInInstalledPyMC`` when called: only the tests that use such a name fail, in both runs.

One JSON line per event goes to ``$TG_PYMC_SUITE_OUT``: the session (mode, versions, shims),
each test's start (the runner names the test a crash or a time bound stopped), each test's
result (outcome per phase, the exception's type, first line and where it was raised, the
functions compiled per linker) and the session's totals.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import sys
import time
import traceback

import pytest

MODE = os.environ.get("TG_PYMC_SUITE_MODE", "c")
_OUT = os.environ.get("TG_PYMC_SUITE_OUT")
_SHIM = os.environ.get("TG_PYMC_SUITE_SHIM", "1") == "1"

COUNTS: dict[str, int] = {}          # linker class name -> functions compiled (this test)
TOTALS: dict[str, int] = {}          # the same over the session
SHIMMED: list[str] = []
OTHER_SITES: dict[str, int] = {}     # tensorgraph run: "linker site" -> functions not on it


class MissingInInstalledPyMC(RuntimeError):
    """A name the test module imports that the installed PyMC does not define."""


def _write(record: dict) -> None:
    if not _OUT:
        return
    with open(_OUT, "a") as f:
        f.write(json.dumps(record, default=str) + "\n")


def _count(key: str) -> None:
    COUNTS[key] = COUNTS.get(key, 0) + 1
    TOTALS[key] = TOTALS.get(key, 0) + 1


def _caller_site() -> str:
    """Where a function was compiled: the innermost frame outside PyTensor, PyMC's
    ``pytensorf.compile`` and this plugin, as ``package/module.py:line`` (PyMC's
    ``initial_point.py:176``) or a test file; inside tensorgraph, the PyTensor op whose own
    ``perform`` compiled it (``PyTensor perform of Scan``: the loop body of a perform node)."""
    frame = sys._getframe(2)
    while frame is not None:
        f = frame.f_code.co_filename.replace("\\", "/")
        if "/pytensor/" in f or f.endswith(("tg_pymc_plugin.py", "/pymc/pytensorf.py")):
            frame = frame.f_back
            continue                         # PyTensor, PyMC's compile wrapper, this plugin
        if "/tensorgraph/" in f:
            op = getattr(frame.f_locals.get("node"), "op", None)
            pt_op = getattr(op, "pt_op", None)
            if pt_op is not None:
                return f"PyTensor perform of {type(pt_op).__name__}"
        for marker in ("/site-packages/", "/tests/"):
            if marker in f:
                f = ("tests/" if marker == "/tests/" else "") + f.split(marker, 1)[1]
                break
        return f"{f}:{frame.f_lineno}"
    return "?"


def _install_counters() -> None:
    from pytensor.compile.function.types import FunctionMaker

    create = FunctionMaker.create

    def counted_create(self, *args, **kwargs):
        name = type(self.linker).__name__
        _count(name)
        if MODE == "tensorgraph" and name != "TensorgraphLinker":
            site = _caller_site()
            OTHER_SITES[f"{name} {site}"] = OTHER_SITES.get(f"{name} {site}", 0) + 1
        return create(self, *args, **kwargs)

    FunctionMaker.create = counted_create
    if MODE == "tensorgraph":
        from tensorgraph.pytensor.mode import TensorgraphLinker

        jit_compile = TensorgraphLinker.jit_compile

        def counted_jit_compile(self, converted):
            out = jit_compile(self, converted)
            _count("tensorgraph.jit_compile")     # converted and compiled by tensorgraph
            return out

        TensorgraphLinker.jit_compile = counted_jit_compile


def pymc_imports(source: str) -> list[tuple[str, str]]:
    """``(module, name)`` of every ``from pymc... import name`` in a test module's source."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and (
                node.module == "pymc" or node.module.startswith("pymc.")):
            out += [(node.module, a.name) for a in node.names if a.name != "*"]
    return out


def _placeholder(module: str, name: str):
    def missing(*args, **kwargs):
        raise MissingInInstalledPyMC(f"{module}.{name} is not in the installed PyMC "
                                     "(the test is newer than the package)")

    missing.__name__ = name
    return missing


def install_shims(paths: list[str]) -> list[str]:
    """Placeholders for the names the test files import from ``pymc`` that it lacks."""
    added = []
    for path in paths:
        try:
            source = open(path).read()
        except OSError:
            continue
        for module, name in pymc_imports(source):
            try:
                mod = importlib.import_module(module)
            except ImportError:
                continue
            if hasattr(mod, name):
                continue
            try:
                importlib.import_module(f"{module}.{name}")    # a submodule
                continue
            except ImportError:
                pass
            setattr(mod, name, _placeholder(module, name))
            added.append(f"{module}.{name}")
    return added


def pytest_configure(config):
    import pytensor

    if MODE == "tensorgraph":
        import tensorgraph.pytensor as tgp

        pytensor.config.mode = tgp.TENSORGRAPH
    elif MODE == "py":                  # PyTensor's Python implementations (the perform methods)
        pytensor.config.mode = "FAST_COMPILE"
    _install_counters()
    if _SHIM:
        # the test modules and the helper modules of PyMC's tests/ they import
        targets = [str(a).split("::")[0] for a in config.args]
        targets.append(str(config.rootpath / "tests"))
        files = []
        for t in dict.fromkeys(targets):
            if os.path.isdir(t):
                for dirpath, _, names in os.walk(t):
                    files += [os.path.join(dirpath, n) for n in names
                              if n.endswith(".py")]
            else:
                files.append(t)
        SHIMMED[:] = install_shims(files)
    import pymc

    info = {"event": "session", "mode": MODE, "pymc": pymc.__version__,
            "pytensor": pytensor.__version__,
            "config_mode": repr(pytensor.config.mode), "shims": SHIMMED}
    if MODE == "tensorgraph":
        import tensorgraph

        info["tensorgraph"] = os.path.dirname(tensorgraph.__file__)
    _write(info)


def pytest_collectreport(report):
    if report.failed:
        _write({"event": "collect_error", "nodeid": report.nodeid,
                "longrepr": str(report.longrepr)[-3000:]})


def pytest_collection_finish(session):
    _write({"event": "collected", "count": len(session.items)})


def pytest_runtest_logstart(nodeid, location):
    _write({"event": "start", "nodeid": nodeid, "time": time.time()})


_results: dict[str, dict] = {}


def exception_record(exc: BaseException) -> dict:
    tb = traceback.extract_tb(exc.__traceback__)
    text = str(exc).strip()
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    frames = [(fr.filename, fr.lineno, fr.name) for fr in tb]
    where = next((f"{f}:{n} {fn}" for f, n, fn in reversed(frames)
                  if "/tensorgraph/" in f.replace("\\", "/")), None)
    return {"type": f"{type(exc).__module__}.{type(exc).__qualname__}",
            "first_line": first[:400], "message": text[:1500],
            "tensorgraph_frame": where,
            "innermost": f"{frames[-1][0]}:{frames[-1][1]} {frames[-1][2]}" if frames else None}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    COUNTS.clear()
    _results[item.nodeid] = {"event": "result", "nodeid": item.nodeid, "phases": {}}
    started = time.monotonic()
    try:
        yield
    finally:
        rec = _results.pop(item.nodeid)
        rec["compiled"] = dict(COUNTS)
        rec["seconds"] = round(time.monotonic() - started, 2)
        _write(rec)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    rec = _results.get(item.nodeid)
    if rec is None:
        return
    phase = {"outcome": report.outcome}
    if hasattr(report, "wasxfail"):
        phase["xfail"] = str(report.wasxfail)[:300]
    if report.skipped and not hasattr(report, "wasxfail"):
        longrepr = report.longrepr
        phase["skip_reason"] = (longrepr[2] if isinstance(longrepr, tuple)
                                else str(longrepr))[:300]
    if call.excinfo is not None and report.failed:
        phase["exc"] = exception_record(call.excinfo.value)
    rec["phases"][call.when] = phase


def pytest_sessionfinish(session, exitstatus):
    _write({"event": "totals", "compiled": dict(TOTALS), "other_sites": dict(OTHER_SITES),
            "exitstatus": int(exitstatus)})
