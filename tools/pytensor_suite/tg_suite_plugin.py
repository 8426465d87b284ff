"""pytest plugin of the PyTensor suite runner (loaded with ``-p tg_suite_plugin``).

It installs the module mapping before anything imports ``pytensor``, imports the test module
itself first to keep the import error as an object (pytest keeps only its text), and writes
one JSON line per event to ``$TG_PYTENSOR_SUITE_OUT``: the import result, each test's start
(so the runner can name the test a crash killed) and each test's result with what the
classifier needs (exception type and message, where it was raised, the missing names the test
used).  Classification itself happens in ``classify.py``, from these lines.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

import pytest

import tg_pytensor_map as mapping

mapping.install()

_OUT = os.environ.get("TG_PYTENSOR_SUITE_OUT")
_TARGET = os.environ.get("TG_PYTENSOR_SUITE_TARGET", "")   # test file, relative to rootdir
_results: dict[str, dict] = {}


def _write(record: dict) -> None:
    if not _OUT:
        return
    with open(_OUT, "a") as f:
        f.write(json.dumps(record, default=str) + "\n")


def _frame_kind(filename: str) -> str:
    f = filename.replace("\\", "/")
    if "/tensorgraph/" in f:
        return "tensorgraph"
    if "/tg_pytensor_map.py" in f:
        return "mapping"
    if "/numpy/testing/" in f:
        return "numpy.testing"
    if "/tests/" in f and ("/site-packages/" not in f):
        return "test"
    return "other"


def exception_record(exc: BaseException) -> dict:
    """What the classifier reads from an exception (and its chained causes)."""
    tb = traceback.extract_tb(exc.__traceback__)
    frames = [{"kind": _frame_kind(fr.filename), "file": fr.filename, "line": fr.lineno,
               "func": fr.name} for fr in tb]
    # the innermost frame that is not pytest / stdlib plumbing
    raised_in = next((fr["kind"] for fr in reversed(frames) if fr["kind"] != "other"),
                     frames[-1]["kind"] if frames else "other")
    test_frame = next((fr for fr in reversed(frames) if fr["kind"] == "test"), None)
    rec = {
        "type": f"{type(exc).__module__}.{type(exc).__qualname__}",
        "bases": [f"{c.__module__}.{c.__qualname__}" for c in type(exc).__mro__[1:]],
        "message": str(exc)[:2000],
        "raised_in": raised_in,
        "kinds": sorted({fr["kind"] for fr in frames}),
        "innermost": frames[-1] if frames else None,
        "test_frame": test_frame,
        "tensorgraph_frame": next((fr for fr in reversed(frames)
                                   if fr["kind"] == "tensorgraph"), None),
    }
    if isinstance(exc, mapping.MissingName):
        rec["missing_name"] = exc.name
    if isinstance(exc, ImportError):
        rec["import_name"] = exc.name
    if isinstance(exc, AttributeError):
        obj = getattr(exc, "obj", None)
        rec["attr_name"] = getattr(exc, "name", None)
        if isinstance(obj, type(sys)):
            rec["attr_owner"] = obj.__name__
        elif isinstance(obj, type):
            rec["attr_owner"] = f"{obj.__module__}.{obj.__qualname__}"
        elif obj is not None:
            rec["attr_owner"] = f"{type(obj).__module__}.{type(obj).__qualname__}"
    cause = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    if cause is not None and cause is not exc:
        rec["cause"] = {"type": f"{type(cause).__module__}.{type(cause).__qualname__}",
                        "message": str(cause)[:500]}
        if isinstance(cause, mapping.MissingName):
            rec["cause"]["missing_name"] = cause.name
    return rec


# -- the test module's import ----------------------------------------------------------------

def pytest_configure(config):
    if mapping.MODE == "probe":
        import tg_probe_import

        tg_probe_import.install(str(config.rootpath), config, exception_record)


def pytest_collectstart(collector):
    if not isinstance(collector, pytest.Module) or not _TARGET:
        return
    rel = os.path.relpath(str(collector.path), str(collector.config.rootpath))
    if rel != _TARGET:
        return
    from _pytest.pathlib import import_path

    mapping.TOUCHED.clear()
    mapping.IN_TEST = False
    import tensorgraph

    record = {"event": "import", "module": rel, "mode": mapping.MODE,
              "tensorgraph": os.path.dirname(tensorgraph.__file__)}
    try:
        import_path(collector.path, mode=collector.config.getoption("--import-mode"),
                    root=collector.config.rootpath,
                    consider_namespace_packages=collector.config.getini(
                        "consider_namespace_packages"))
        record["ok"] = True
    except BaseException as exc:  # noqa: BLE001  (anything a module import can raise)
        record["ok"] = False
        record["exc"] = exception_record(exc)
    record["missing_used"] = sorted(set(mapping.TOUCHED))
    if mapping.MODE == "probe":
        import tg_probe_import

        record["blocked"] = list(tg_probe_import.BLOCKED)
    record["missing_modules"] = sorted(mapping.MISSING_MODULES)
    _write(record)


def pytest_collectreport(report):
    if report.failed:
        _write({"event": "collect_error", "nodeid": report.nodeid,
                "longrepr": str(report.longrepr)[-3000:]})


def _category_importable(mark) -> bool:
    """A filterwarnings mark whose warning class can be imported (PyTensor's tests name
    ``numba.NumbaWarning``; numba is a PyTensor dependency, not a tensorgraph one, and pytest
    stops with INTERNALERROR on every test when the class cannot be imported)."""
    import importlib

    for arg in mark.args:
        parts = str(arg).split(":")
        category = parts[2].strip() if len(parts) > 2 else ""
        if "." in category:
            try:
                importlib.import_module(category.rsplit(".", 1)[0])
            except ImportError:
                return False
    return True


def pytest_collection_modifyitems(session, config, items):
    seen = set()
    for item in items:
        for node in item.listchain():
            if id(node) in seen:
                continue
            seen.add(id(node))
            node.own_markers[:] = [m for m in node.own_markers
                                   if m.name != "filterwarnings" or _category_importable(m)]


def pytest_collection_finish(session):
    _write({"event": "collected", "count": len(session.items),
            "nodeids": [item.nodeid for item in session.items]})


# -- each test -----------------------------------------------------------------------------------

def pytest_runtest_logstart(nodeid, location):
    _write({"event": "start", "nodeid": nodeid})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    mapping.TOUCHED.clear()
    mapping.IN_TEST = True
    params = getattr(getattr(item, "callspec", None), "params", {})
    missing_params = sorted({n for v in params.values()
                             for n in [mapping.missing_name_of(v)] if n})
    _results[item.nodeid] = {"event": "result", "nodeid": item.nodeid, "phases": {},
                             "missing_params": missing_params}
    try:
        yield
    finally:
        mapping.IN_TEST = False
        rec = _results.pop(item.nodeid)
        rec["missing_used"] = sorted(set(mapping.TOUCHED))
        _write(rec)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    rec = _results.get(item.nodeid)
    if rec is None:
        return
    phase = {"outcome": report.outcome, "duration": round(call.duration, 4)}
    if hasattr(report, "wasxfail"):
        phase["xfail"] = str(report.wasxfail)[:300]
    if report.skipped and not hasattr(report, "wasxfail"):
        longrepr = report.longrepr
        phase["skip_reason"] = (longrepr[2] if isinstance(longrepr, tuple) else str(longrepr))[:300]
    if call.excinfo is not None and report.failed:
        phase["exc"] = exception_record(call.excinfo.value)
        phase["text"] = str(report.longrepr)[-1500:]
    rec["phases"][call.when] = phase
