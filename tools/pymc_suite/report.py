"""Figures and the Markdown report of the PyMC suite runner, from the plugin's JSON lines.

Pure functions of the files of one run directory (``run.json``, ``<run>/<module>.jsonl``) and
of ``explained.toml``; no PyMC or PyTensor needed (``test_pymc_suite_tools.py`` checks them).
"""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from pathlib import Path

from suite_runs import read_jsonl  # tools/ is on sys.path (run.py, the tests)

OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "crash", "not run")
FAILING = ("failed", "error", "crash", "not run")


def outcome_of(rec: dict) -> tuple[str, dict | None]:
    """The outcome of one test result record and the exception that decided it."""
    phases = rec.get("phases", {})
    setup, call, teardown = (phases.get(w, {}) for w in ("setup", "call", "teardown"))
    for phase in (setup, call):
        if "xfail" in phase:
            return ("xpassed" if phase["outcome"] == "passed" else "xfailed"), None
    if setup.get("outcome") == "failed":
        return "error", setup.get("exc")
    if setup.get("outcome") == "skipped" or call.get("outcome") == "skipped":
        return "skipped", None
    if call.get("outcome") == "failed":
        return "failed", call.get("exc")
    if teardown.get("outcome") == "failed":
        return "error", teardown.get("exc")
    if call.get("outcome") == "passed":
        return "passed", None
    return "error", None


def module_results(events: list[dict]) -> dict:
    """Outcome per test, counts, compiled functions and session facts of one module's run."""
    tests: dict[str, dict] = {}
    compiled: dict[str, int] = {}
    session, collected, bound = {}, None, False
    other_sites: dict[str, int] = {}
    for e in events:
        kind = e.get("event")
        if kind == "result":
            outcome, exc = outcome_of(e)
            tests[e["nodeid"]] = {"outcome": outcome, "exc": exc,
                                  "compiled": e.get("compiled", {})}
            for k, v in e.get("compiled", {}).items():
                compiled[k] = compiled.get(k, 0) + v
        elif kind == "crash":
            why = e.get("why", "crash")
            tests[e["nodeid"]] = {"outcome": "not run" if why == "module time bound"
                                  else "crash",
                                  "exc": {"type": why, "first_line":
                                          f"process {why} (returncode {e.get('returncode')})"},
                                  "compiled": {}}
        elif kind == "session":
            session = e
        elif kind == "collected":
            collected = max(collected or 0, e["count"])
        elif kind == "bound":
            bound = True
        elif kind == "totals":
            for k, v in e.get("other_sites", {}).items():
                other_sites[k] = other_sites.get(k, 0) + v
        elif kind == "collect_error":
            tests[e["nodeid"] or "<collection>"] = {
                "outcome": "error", "compiled": {},
                "exc": {"type": "collection error",
                        "first_line": last_error_line(e.get("longrepr", ""))}}
    counts = {o: 0 for o in OUTCOMES}
    for t in tests.values():
        counts[t["outcome"]] += 1
    if bound and collected is not None:
        counts["not run"] += max(0, collected - len(tests))
    return {"tests": tests, "counts": counts, "compiled": compiled, "session": session,
            "other_sites": other_sites,
            "collected": collected, "bound": bound, "absent": any(
                e.get("event") == "absent" for e in events)}


def last_error_line(text: str) -> str:
    """The ``E   ...`` line (or the last line) of a pytest long representation."""
    lines = [ln for ln in text.splitlines() if ln.startswith("E ")]
    line = lines[0][1:].strip() if lines else (text.strip().splitlines() or [""])[-1]
    return line[:400]


def load_explained(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return tomllib.loads(path.read_text()).get("explained", [])


def explain(nodeid: str, exc: dict | None, explained: list[dict]) -> dict | None:
    """The first entry of explained.toml whose ``tests`` pattern matches the test id and whose
    ``error`` regular expression (optional) matches the exception's first line."""
    first = (exc or {}).get("first_line", "") or ""
    for entry in explained:
        patterns = entry.get("tests", ["*"])
        if isinstance(patterns, str):
            patterns = [patterns]
        if not any(fnmatch.fnmatchcase(nodeid, p) for p in patterns):
            continue
        if "error" in entry and not re.search(entry["error"], first):
            continue
        return entry
    return None


_NUM = re.compile(r"(?<![\w.])[-+]?\d+(\.\d+)?([eE][-+]?\d+)?(?![\w.])")


def cause_key(exc: dict | None) -> str:
    """Group key of an unexplained failure: exception type and first line, numbers elided."""
    if not exc:
        return "(no exception recorded)"
    typ = exc.get("type", "?").rsplit(".", 1)[-1]
    first = _NUM.sub("N", exc.get("first_line", ""))[:160]
    return f"{typ}: {first}"


def differing(outdir: Path, label: str) -> list[str]:
    """Node ids of one module that pass on C and fail on TENSORGRAPH."""
    name = f"{label.replace('/', '__')}.jsonl"
    c = module_results(read_jsonl(Path(outdir) / "c" / name))["tests"]
    tg = module_results(read_jsonl(Path(outdir) / "tensorgraph" / name))["tests"]
    return [n for n, t in c.items() if t["outcome"] == "passed"
            and tg.get(n, {}).get("outcome") in FAILING and "::" in n]


def build(outdir: Path, explained_path: Path) -> dict:
    outdir = Path(outdir)
    info = json.loads((outdir / "run.json").read_text())
    explained = load_explained(explained_path)
    runs = info.get("runs", ["c", "tensorgraph"])
    modules = {}
    for label in info["labels"]:
        per_run = {}
        for run in runs:
            events = read_jsonl(outdir / run / f"{label.replace('/', '__')}.jsonl")
            per_run[run] = module_results(events)
        modules[label] = per_run
    seconds = {}
    for t in read_jsonl(outdir / "timings.jsonl"):     # the last run of a module counts
        if "seconds" in t:
            seconds[t["label"], t["run"]] = t["seconds"]
    for label, per_run in modules.items():
        for run, res in per_run.items():
            res["seconds"] = seconds.get((label, run))
    differences, improvements = [], []
    for label, per_run in modules.items():
        if "c" not in per_run or "tensorgraph" not in per_run:
            continue
        c_tests, tg_tests = per_run["c"]["tests"], per_run["tensorgraph"]["tests"]
        py_tests = module_results(read_jsonl(
            outdir / "py" / f"{label.replace('/', '__')}.jsonl"))["tests"]
        for nodeid, c in c_tests.items():
            tg = tg_tests.get(nodeid)
            if tg is None:
                continue
            if c["outcome"] == "passed" and tg["outcome"] in FAILING:
                entry = explain(nodeid, tg["exc"], explained)
                differences.append({
                    "module": label, "nodeid": nodeid, "outcome": tg["outcome"],
                    "exc": tg["exc"], "first_line": (tg["exc"] or {}).get("first_line", ""),
                    "py": py_tests.get(nodeid, {}).get("outcome"),
                    "group": entry["group"] if entry else None,
                    "reason": entry.get("reason") if entry else None,
                    "cause": cause_key(tg["exc"])})
            elif c["outcome"] in FAILING and tg["outcome"] == "passed":
                improvements.append({"module": label, "nodeid": nodeid,
                                     "c_first_line": (c["exc"] or {}).get("first_line", "")})
    totals: dict[str, dict[str, int]] = {}
    for per_run in modules.values():
        for run, res in per_run.items():
            t = totals.setdefault(run, {})
            for k, v in res["compiled"].items():
                t[k] = t.get(k, 0) + v
    return {"info": info, "modules": {
                lb: {run: {k: v for k, v in res.items() if k != "tests"}
                     for run, res in per_run.items()} for lb, per_run in modules.items()},
            "outcomes": {lb: {run: {n: t["outcome"] for n, t in res["tests"].items()}
                              for run, res in per_run.items()}
                         for lb, per_run in modules.items()},
            "differences": differences, "improvements": improvements,
            "compiled_totals": totals}


def tg_compiled(compiled: dict) -> int:
    return compiled.get("tensorgraph.jit_compile", 0)


def other_compiled(compiled: dict) -> dict:
    return {k: v for k, v in compiled.items()
            if k not in ("tensorgraph.jit_compile", "TensorgraphLinker")}


def _fmt_other(d: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(d.items())) or "0"


def _outcomes(d: dict) -> str:
    py = d.get("py")
    return d["outcome"] + (f"; on PyTensor's Python: {py}" if py else "")


def markdown(rep: dict) -> str:
    info = rep["info"]
    out = ["# PyMC's own tests on PyTensor's C and on tensorgraph (mode TENSORGRAPH)", "",
           "Generated by tools/pymc_suite/run.py; see its README for the method.", "",
           f"- PyMC {info.get('pymc', {}).get('version')} (revision "
           f"{(info.get('pymc', {}).get('revision') or '')[:12]}), tests from "
           f"{info.get('source')}",
           f"- tensorgraph: {info.get('tensorgraph_commit')}",
           f"- per-test timeout {info.get('timeout')} s, per-module bound "
           f"{info.get('module_timeout')} s" + (f", -k `{info['k']}`" if info.get("k") else ""),
           ""]
    shims = sorted({s for per_run in rep["modules"].values() for res in per_run.values()
                    for s in res.get("session", {}).get("shims", [])})
    if shims:
        out += ["Names the tests import that the installed PyMC lacks (placeholders that "
                "raise when used, in both runs): " + ", ".join(f"`{s}`" for s in shims), ""]
    out += ["## Counts per module", "",
            "| module | run | passed | failed | error | skipped | xfailed | crash | not run "
            "| functions compiled by tensorgraph | other linkers | seconds |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, per_run in rep["modules"].items():
        for run, res in per_run.items():
            c = res["counts"]
            if res.get("absent"):
                out.append(f"| {label} | {run} | absent |||||||||")
                continue
            out.append(f"| {label} | {run} | {c['passed']} | {c['failed']} | {c['error']} | "
                       f"{c['skipped']} | {c['xfailed'] + c['xpassed']} | {c['crash']} | "
                       f"{c['not run']} | {tg_compiled(res['compiled'])} | "
                       f"{_fmt_other(other_compiled(res['compiled']))} | "
                       f"{'' if res.get('seconds') is None else round(res['seconds'])} |")
    out.append("")
    for run, t in rep["compiled_totals"].items():
        out.append(f"- {run}: {tg_compiled(t)} functions converted and compiled by tensorgraph; "
                   f"other linkers: {_fmt_other(other_compiled(t))}")
    sites: dict[str, int] = {}
    for per_run in rep["modules"].values():
        for k, v in per_run.get("tensorgraph", {}).get("other_sites", {}).items():
            sites[k] = sites.get(k, 0) + v
    if sites:
        out += ["", "Functions of the tensorgraph run that another linker compiled, by where "
                "they were compiled (a mode asked for there):", ""]
        out += [f"- {k}: {v}" for k, v in sorted(sites.items(), key=lambda kv: -kv[1])[:20]]
    out.append("")
    diffs = rep["differences"]
    out += [f"## Pass on C, fail on TENSORGRAPH: {len(diffs)}", "",
            "Each test that differs ran once more on PyTensor's Python implementations (mode "
            "FAST_COMPILE); its outcome there follows the one on TENSORGRAPH.", ""]
    explained = [d for d in diffs if d["group"]]
    unexplained = [d for d in diffs if not d["group"]]
    groups: dict[str, list[dict]] = {}
    for d in explained:
        groups.setdefault(d["group"], []).append(d)
    for group, items in sorted(groups.items()):
        out += [f"### Explained: {group} ({len(items)})", ""]
        reasons = sorted({d["reason"] for d in items if d["reason"]})
        for r in reasons:
            out.append(f"> {r}")
        out.append("")
        for d in items:
            out.append(f"- `{d['nodeid']}` ({_outcomes(d)}): {d['first_line'][:200]}")
        out.append("")
    causes: dict[str, list[dict]] = {}
    for d in unexplained:
        causes.setdefault(d["cause"], []).append(d)
    out += [f"### Not explained ({len(unexplained)})", ""]
    for cause, items in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        out += [f"#### {cause} ({len(items)})", ""]
        for d in items:
            out.append(f"- `{d['nodeid']}` ({_outcomes(d)}): {d['first_line'][:200]}")
        out.append("")
    imp = rep["improvements"]
    if imp:
        out += [f"## Fail on C, pass on TENSORGRAPH: {len(imp)}", ""]
        for d in imp:
            out.append(f"- `{d['nodeid']}`: C: {d['c_first_line'][:200]}")
        out.append("")
    return "\n".join(out)


def summary(rep: dict) -> str:
    lines = []
    for label, per_run in rep["modules"].items():
        parts = []
        for run, res in per_run.items():
            c = res["counts"]
            ran = sum(c[o] for o in ("passed", "failed", "error", "crash", "not run"))
            parts.append(f"{run} {c['passed']}/{ran} passed ({c['skipped']} skipped, "
                         f"{tg_compiled(res['compiled'])} tg functions)")
        lines.append(f"{label}: " + "; ".join(parts))
    d = rep["differences"]
    lines.append(f"pass on C, fail on TENSORGRAPH: {len(d)} "
                 f"({sum(1 for x in d if x['group'])} explained)")
    return "\n".join(lines)
