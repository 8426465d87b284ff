"""Checks of the PyMC suite runner's own machinery (no PyMC or PyTensor needed):

    .venv/bin/pytest -n0 -p no:cacheprovider tools/pymc_suite/test_pymc_suite_tools.py -q
"""

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))  # tools/suite_runs.py

import report  # noqa: E402
import tg_pymc_plugin  # noqa: E402

C_FILE = "tests/distributions/test_x.py"


def _result(name, call="passed", setup="passed", exc=None, compiled=None, **phase):
    phases = {"setup": {"outcome": setup}, "teardown": {"outcome": "passed"}}
    if setup == "passed":
        phases["call"] = {"outcome": call, **phase}
        if exc:
            phases["call"]["exc"] = exc
    elif exc:
        phases["setup"]["exc"] = exc
    return {"event": "result", "nodeid": f"{C_FILE}::{name}", "phases": phases,
            "compiled": compiled or {}}


def _exc(typ, first):
    return {"type": typ, "first_line": first, "message": first}


def _write_run(tmp_path, events_by_run, labels=("distributions/x",), explained=None):
    out = tmp_path / "run"
    for run, events in events_by_run.items():
        (out / run).mkdir(parents=True, exist_ok=True)
        with open(out / run / "distributions__x.jsonl", "w") as f:
            for e in events:
                f.write(json.dumps(e) + "\n")
    (out / "run.json").write_text(json.dumps({
        "labels": list(labels), "runs": ["c", "tensorgraph"], "timeout": 300,
        "module_timeout": 900, "source": "test", "tensorgraph_commit": "abc",
        "pymc": {"version": "5.28.5", "revision": "1ad929ca6bce"}}))
    toml = tmp_path / "explained.toml"
    toml.write_text(explained or "")
    return out, toml


def test_outcome_of_each_phase_combination():
    assert report.outcome_of(_result("a"))[0] == "passed"
    assert report.outcome_of(_result("a", call="failed", exc=_exc("E", "x")))[0] == "failed"
    assert report.outcome_of(_result("a", setup="failed", exc=_exc("E", "x")))[0] == "error"
    assert report.outcome_of(_result("a", setup="skipped"))[0] == "skipped"
    assert report.outcome_of(_result("a", call="skipped", xfail="why"))[0] == "xfailed"
    assert report.outcome_of(_result("a", call="passed", xfail="why"))[0] == "xpassed"


def test_module_results_counts_crashes_bounds_and_compiled_functions():
    events = [
        {"event": "session", "mode": "tensorgraph", "shims": ["pymc.testing.check_logccdf"]},
        {"event": "collected", "count": 6},
        _result("t1", compiled={"TensorgraphLinker": 2, "tensorgraph.jit_compile": 2}),
        _result("t2", call="failed", exc=_exc("builtins.ValueError", "bad"),
                compiled={"tensorgraph.jit_compile": 1, "PerformLinker": 1}),
        {"event": "crash", "nodeid": f"{C_FILE}::t3", "why": "stall", "returncode": -9},
        {"event": "crash", "nodeid": f"{C_FILE}::t4", "why": "module time bound"},
        {"event": "bound", "seconds": 900},
    ]
    res = report.module_results(events)
    c = res["counts"]
    assert (c["passed"], c["failed"], c["crash"]) == (1, 1, 1)
    assert c["not run"] == 1 + 2          # the one stopped, two never started
    assert res["compiled"] == {"TensorgraphLinker": 2, "tensorgraph.jit_compile": 3,
                               "PerformLinker": 1}
    assert report.tg_compiled(res["compiled"]) == 3
    assert report.other_compiled(res["compiled"]) == {"PerformLinker": 1}


def test_a_collection_error_is_an_error_with_its_E_line():
    events = [{"event": "collect_error", "nodeid": C_FILE,
               "longrepr": "tests/x.py:3: in <module>\nE   ImportError: cannot import name 'y'\n"}]
    res = report.module_results(events)
    assert res["counts"]["error"] == 1
    assert res["tests"][C_FILE]["exc"]["first_line"] == "ImportError: cannot import name 'y'"


def test_explain_matches_test_pattern_and_error_regex():
    entries = [{"group": "g1", "tests": ["*::test_a*"], "error": "^Integers"},
               {"group": "g2", "tests": "*::test_b"}]
    assert report.explain(f"{C_FILE}::test_a1", _exc("E", "Integers to neg"), entries)["group"] == "g1"
    assert report.explain(f"{C_FILE}::test_a1", _exc("E", "other"), entries) is None
    assert report.explain(f"{C_FILE}::test_b", None, entries)["group"] == "g2"
    assert report.explain(f"{C_FILE}::test_c", None, entries) is None


def test_cause_key_elides_numbers_but_keeps_names():
    a = report.cause_key(_exc("numpy.AssertionError", "Arrays are not equal 1.5e-3 vs 2"))
    b = report.cause_key(_exc("numpy.AssertionError", "Arrays are not equal 0.25 vs 7"))
    assert a == b == "AssertionError: Arrays are not equal N vs N"
    assert report.cause_key(_exc("E", "float64 x2")) == "E: float64 x2"
    assert report.cause_key(None) == "(no exception recorded)"


def test_report_lists_differences_grouped_and_the_compiled_totals(tmp_path):
    diff_exc = _exc("builtins.ValueError", "Integers to negative integer powers are not allowed.")
    other = _exc("builtins.KeyError", "'x1'")
    events = {
        "c": [_result("test_a", compiled={"VMLinker": 3}), _result("test_b"), _result("test_c"),
              _result("test_d", call="failed", exc=_exc("E", "c only"))],
        "tensorgraph": [
            _result("test_a", call="failed", exc=diff_exc, compiled={"tensorgraph.jit_compile": 3}),
            _result("test_b", call="failed", exc=other),
            _result("test_c", compiled={"tensorgraph.jit_compile": 2}), _result("test_d"),
            {"event": "totals", "other_sites": {"VMLinker pymc/initial_point.py:176": 4}}],
        "py": [_result("test_a", call="failed", exc=diff_exc)],
    }
    explained = ('[[explained]]\ngroup = "integer power"\ntests = ["*::test_a"]\n'
                 'error = "negative integer powers"\nreason = "numpy raises"\n')
    out, toml = _write_run(tmp_path, events, explained=explained)
    (out / "timings.jsonl").write_text(
        json.dumps({"label": "distributions/x", "run": "tensorgraph", "seconds": 12.4}) + "\n")
    assert report.differing(out, "distributions/x") == [f"{C_FILE}::test_a", f"{C_FILE}::test_b"]
    rep = report.build(out, toml)
    diffs = {d["nodeid"].rsplit("::", 1)[1]: d for d in rep["differences"]}
    assert diffs["test_a"]["group"] == "integer power" and diffs["test_a"]["py"] == "failed"
    assert diffs["test_b"]["group"] is None and diffs["test_b"]["cause"] == "KeyError: 'x1'"
    assert [d["nodeid"].rsplit("::", 1)[1] for d in rep["improvements"]] == ["test_d"]
    assert report.tg_compiled(rep["compiled_totals"]["tensorgraph"]) == 5
    md = report.markdown(rep)
    assert "| distributions/x | tensorgraph | 2 | 2 | 0 |" in md
    assert md.count(" | 12 |") == 1           # the seconds of the tensorgraph run
    assert "| distributions/x | c | 3 | 1 | 0 |" in md
    assert "### Explained: integer power (1)" in md and "> numpy raises" in md
    assert "#### KeyError: 'x1' (1)" in md
    assert "on PyTensor's Python: failed" in md
    assert "tensorgraph: 5 functions converted and compiled by tensorgraph" in md
    assert "- VMLinker pymc/initial_point.py:176: 4" in md
    assert "distributions/x: c 3/4 passed" in report.summary(rep)


def test_plugin_reads_the_pymc_names_a_test_module_imports():
    src = ("import pymc as pm\nfrom pymc.testing import (check_logp,\n    check_logccdf)\n"
           "from pymc import Model\nfrom numpy import array\nfrom .helpers import x\n")
    assert tg_pymc_plugin.pymc_imports(src) == [
        ("pymc.testing", "check_logp"), ("pymc.testing", "check_logccdf"), ("pymc", "Model")]


def test_plugin_shims_only_the_missing_names(tmp_path, monkeypatch):
    pkg = tmp_path / "fakepymc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "testing.py").write_text("def check_logp():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    test_file = tmp_path / "test_mod.py"
    test_file.write_text("from fakepymc.testing import check_logp, check_logccdf\n")
    monkeypatch.setattr(tg_pymc_plugin, "pymc_imports", lambda source: [
        ("fakepymc.testing", "check_logp"), ("fakepymc.testing", "check_logccdf")])
    assert tg_pymc_plugin.install_shims([str(test_file)]) == ["fakepymc.testing.check_logccdf"]
    import fakepymc.testing as t

    assert t.check_logp() == 1
    with pytest.raises(tg_pymc_plugin.MissingInInstalledPyMC, match="check_logccdf"):
        t.check_logccdf()


def test_explained_toml_entries_are_complete():
    entries = report.load_explained(HERE / "explained.toml")
    assert entries
    for e in entries:
        assert e.get("group") and e.get("reason") and e.get("tests"), e
