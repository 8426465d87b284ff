"""Turn the plugin's JSON lines into per-module figures, failure causes and the ranking of
missing names (report.json), and a Markdown table (report.md).

Causes, first match wins (README.md explains why):

1. ``internals``  the test is listed in internals.toml [tests], or the missing name it needs
   is listed in internals.toml [names].
2. ``missing name``  the test needs a PyTensor name tensorgraph lacks: MissingName (probe),
   ModuleNotFoundError / ImportError / AttributeError naming a pytensor module or a
   tensorgraph object's attribute, ``unexpected keyword argument`` (a missing parameter), a
   placeholder quoted in the message, or (probe) any use of a placeholder during the test.
3. ``wrong value``  AssertionError (numpy.testing, allclose, a plain assert, pytest.raises'
   match), pytest's "DID NOT RAISE" / "DID NOT WARN", or the tests' own WrongValue.
4. ``refusal``  TypeError / ValueError / NotImplementedError (or a subclass) raised inside
   tensorgraph.
5. ``other``  anything else: an error raised in tensorgraph of another type, an error in the
   test's own code, a timeout, a crash.
"""

from __future__ import annotations

import collections
import fnmatch
import json
import re
import tomllib
from pathlib import Path

CAUSES = ("missing name", "wrong value", "refusal", "internals", "other")
_REFUSALS = {"builtins.TypeError", "builtins.ValueError", "builtins.NotImplementedError"}
_MISSING_RE = re.compile(r"missing (pytensor[\w.]*)")
_IMPORT_RE = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")
_NOMOD_RE = re.compile(r"No module named '([\w.]+)'")
_KWARG_RE = re.compile(r"([\w.<>]+)\(\) got an unexpected keyword argument '(\w+)'")
_SIGNATURE_RE = re.compile(r"\(\) (missing \d+ required|takes \d+ positional|takes from "
                           r"\d+ to \d+ positional|got multiple values|takes no arguments)")
_TYPEATTR_RE = re.compile(r"type object '(\w+)' has no attribute '(\w+)'")
_OPERAND_RE = re.compile(r"unsupported operand type\(s\) for (\S+): '(\w+)' and '(\w+)'")
_OPERATORS = {"+": "__add__", "-": "__sub__", "*": "__mul__", "/": "__truediv__",
              "//": "__floordiv__", "%": "__mod__", "**": "__pow__", "@": "__matmul__",
              "&": "__and__", "|": "__or__", "^": "__xor__", "<<": "__lshift__",
              ">>": "__rshift__", "** or pow()": "__pow__"}
_PLAIN_TYPES = {"int", "float", "complex", "str", "list", "tuple", "dict", "NoneType",
                "ndarray", "bool", "set", "bytes"}
_MODATTR_RE = re.compile(r"module '([\w.]+)' has no attribute '(\w+)'")


def _read(path: Path) -> list[dict]:
    out = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


def load_internals(path: Path) -> dict:
    if not path.exists():
        return {"names": {}, "tests": {}, "helpers": {}}
    data = tomllib.loads(path.read_text())
    return {k: data.get(k, {}) for k in ("names", "tests", "helpers")}


def _match(table: dict, key: str) -> str | None:
    for pattern, reason in table.items():
        if fnmatch.fnmatchcase(key, pattern):
            return reason
    return None


def missing_from_exc(exc: dict) -> str | None:
    """The missing name an exception record shows, in PyTensor's (or tensorgraph's) terms."""
    if not exc:
        return None
    if exc.get("missing_name"):
        return exc["missing_name"]
    if (exc.get("cause") or {}).get("missing_name"):
        return exc["cause"]["missing_name"]
    typ, msg = exc.get("type", ""), exc.get("message", "")
    found = _MISSING_RE.search(msg)
    if found:
        return found.group(1)
    if typ in ("builtins.ModuleNotFoundError", "builtins.ImportError"):
        m = _IMPORT_RE.search(msg)
        if m and (m.group(2).startswith(("pytensor", "tensorgraph"))):
            return f"{m.group(2)}.{m.group(1)}"
        m = _NOMOD_RE.search(msg)
        if m and m.group(1).startswith(("pytensor", "tensorgraph")):
            return m.group(1)
    if typ == "builtins.AttributeError":
        owner, attr = exc.get("attr_owner"), exc.get("attr_name")
        if owner and attr and owner.startswith(("pytensor", "tensorgraph")):
            return f"{owner}.{attr}"
        m = _MODATTR_RE.search(msg)
        if m and m.group(1).startswith(("pytensor", "tensorgraph")):
            return f"{m.group(1)}.{m.group(2)}"
        m = _TYPEATTR_RE.search(msg)
        if m and exc.get("raised_in") == "test":
            return f"{m.group(1)}.{m.group(2)}"
    if typ == "builtins.TypeError":
        m = _KWARG_RE.search(msg)
        if m:
            return f"{m.group(1)}({m.group(2)}=)"
        m = _OPERAND_RE.search(msg)
        if m and exc.get("raised_in") == "test" and m.group(2) not in _PLAIN_TYPES:
            return f"{m.group(2)}.{_OPERATORS.get(m.group(1), m.group(1))}"
    return None


def _is_wrong_value(exc: dict) -> str | None:
    typ, msg = exc.get("type", ""), exc.get("message", "")
    names = [typ] + exc.get("bases", [])
    if "builtins.AssertionError" in names:
        if "numpy.testing" in exc.get("kinds", []) or "Not equal to tolerance" in msg \
                or "Arrays are not" in msg:
            return "numeric"
        if "Regex pattern did not match" in msg:
            return "error message"
        if not msg.strip() and exc.get("test_frame"):
            frame = exc["test_frame"]
            return f"assert at {frame['file'].split('/tests/', 1)[-1]}:{frame['line']}"
        return "assert"
    if typ.endswith("WrongValue"):
        return "numeric"
    if _is_pytest_failed(exc) and ("DID NOT RAISE" in msg or "DID NOT WARN" in msg):
        return "no error raised"
    return None


def _is_pytest_failed(exc: dict) -> bool:
    """pytest.fail / pytest.raises' failure (its class reports the module 'builtins')."""
    return exc.get("type", "").endswith(".Failed") and \
        "_pytest.outcomes.OutcomeException" in exc.get("bases", [])


_BLOCKED_RE = re.compile(r"<import-blocked ([^>]+)>")


def classify_failure(nodeid: str, exc: dict, used: list[str], internals: dict,
                     mode: str, blocked: dict | None = None,
                     aliases: dict | None = None) -> tuple[str, str, str | None]:
    """(cause, detail, missing name or None) of one failed or errored test.

    ``blocked`` (probe): statements that raised while the module was imported, by
    "file:line"; a test that needed what such a statement defines gets that error's cause.
    """
    reason = _match(internals["tests"], nodeid)
    if reason:
        return "internals", reason, None
    name = missing_from_exc(exc)
    if name is None and _BLOCKED_RE.search(exc.get("message", "")):
        name = _BLOCKED_RE.search(exc["message"]).group(0)
    if name is None and used:   # strict: used holds only NOT_PROVIDED / internal placeholders
        name = used[0]
    found = _BLOCKED_RE.search(name or "")
    if found:
        where = found.group(1)
        record = (blocked or {}).get(where)
        if record is None:
            return "other", f"needs what {where} defines (its import failed)", None
        cause, detail, name = classify_failure(nodeid, record["exc"], [], internals, mode,
                                               aliases=aliases)
        return cause, f"import {where}: {detail}", name
    if name:
        name = (aliases or {}).get(name, name)
        reason = _match(internals["names"], name)
        if reason:
            return "internals", reason, name
        return "missing name", name, name
    typ = exc.get("type", "")
    msg = exc.get("message", "").strip().splitlines()
    first = msg[0][:160] if msg else ""
    kind = _is_wrong_value(exc)
    if kind:
        return "wrong value", f"{kind}: {first}", None
    if typ.endswith("Timeout") or (_is_pytest_failed(exc) and first.startswith("Timeout")):
        return "other", "timeout", None
    if typ == "builtins.TypeError" and _SIGNATURE_RE.search(first):
        return "refusal", f"signature: {first}", None
    if exc.get("raised_in") == "tensorgraph":
        if _REFUSALS & set([typ] + exc.get("bases", [])):
            return "refusal", f"{typ.rsplit('.', 1)[-1]}: {first}", None
        return "other", f"error in tensorgraph: {typ.rsplit('.', 1)[-1]}: {first}", None
    return "other", f"{typ.rsplit('.', 1)[-1]} in {exc.get('raised_in')}: {first}", None


def _outcome(phases: dict) -> tuple[str, dict | None]:
    setup, call, teardown = (phases.get(k, {}) for k in ("setup", "call", "teardown"))
    if setup.get("outcome") == "failed":
        return "error", setup.get("exc")
    if setup.get("outcome") == "skipped":
        return ("xfailed" if "xfail" in setup else "skipped"), None
    if call.get("outcome") == "failed":
        return "failed", call.get("exc")
    if call.get("outcome") == "skipped":
        return ("xfailed" if "xfail" in call else "skipped"), None
    if teardown.get("outcome") == "failed":
        return "error", teardown.get("exc")
    if call.get("outcome") == "passed":
        return ("xpassed" if "xfail" in call else "passed"), None
    return "error", None


def module_figures(events: list[dict], mode: str, internals: dict,
                   aliases: dict | None = None) -> dict:
    aliases = aliases or {}
    imp = next((e for e in events if e.get("event") == "import"), None)
    collected = next((e for e in events if e.get("event") == "collected"), None)
    absent = any(e.get("event") == "absent" for e in events)
    results: dict[str, dict] = {}
    for e in events:
        if e.get("event") == "result":
            results[e["nodeid"]] = e
        elif e.get("event") == "crash":
            results[e["nodeid"]] = {"nodeid": e["nodeid"], "crash": e.get("returncode")}
    fig = {"absent": absent, "imports": bool(imp and imp.get("ok")),
           "import_error": None,
           "import_missing": sorted({aliases.get(n, n) for n in (imp or {}).get("missing_used", [])}),
           "collected": (collected or {}).get("count", 0),
           "counts": collections.Counter(), "causes": collections.Counter(), "tests": {}}
    if imp and not imp.get("ok"):
        exc = imp.get("exc", {})
        fig["import_error"] = f"{exc.get('type', '').rsplit('.', 1)[-1]}: " \
                              f"{exc.get('message', '').splitlines()[0][:200] if exc.get('message') else ''}"
        name = missing_from_exc(exc)
        fig["import_missing_name"] = aliases.get(name, name) if name else None
    blocked = {f"{b['file']}:{b['line']}": b for b in (imp or {}).get("blocked", [])}
    fig["blocked"] = []
    for where, b in blocked.items():
        cause, detail, name = classify_failure(where, b["exc"], [], internals, mode,
                                               aliases=aliases)
        fig["blocked"].append({"where": where, "names": b["names"], "cause": cause,
                               "detail": detail, "missing": name})
    for nodeid, rec in results.items():
        if "crash" in rec:
            outcome, exc = "error", {"type": "crash", "message": f"process ended ({rec['crash']})"}
        else:
            outcome, exc = _outcome(rec.get("phases", {}))
        used = list(rec.get("missing_params", [])) + [
            n for n in rec.get("missing_used", []) if n not in rec.get("missing_params", [])]
        entry = {"outcome": outcome}
        if outcome in ("failed", "error"):
            if "crash" in rec:
                cause, detail, name = "other", "crash or hang (process killed)", None
            else:
                cause, detail, name = classify_failure(nodeid, exc or {}, used, internals,
                                                       mode, blocked, aliases)
            entry.update(cause=cause, detail=detail, missing=name, used=used)
            fig["causes"][cause] += 1
        elif outcome == "skipped":
            phases = rec.get("phases", {})
            entry["reason"] = next((p.get("skip_reason") for p in phases.values()
                                    if p.get("skip_reason")), "")
        elif outcome == "passed" and _match(internals["tests"], nodeid):
            entry["internals"] = True
        fig["counts"][outcome] += 1
        fig["tests"][nodeid] = entry
    c = fig["counts"]
    fig["run"] = c["passed"] + c["failed"] + c["error"]
    fig["internals_run"] = sum(1 for t in fig["tests"].values()
                               if t.get("cause") == "internals" or t.get("internals"))
    return fig


def _rate(passed: int, run: int) -> float | None:
    return round(100.0 * passed / run, 1) if run else None


def _totals(figs: dict, labels: list[str]) -> dict:
    run = sum(figs[lb]["run"] for lb in labels)
    passed = sum(figs[lb]["counts"]["passed"] for lb in labels)
    internal_run = sum(figs[lb]["internals_run"] for lb in labels)
    internal_passed = sum(1 for lb in labels for t in figs[lb]["tests"].values()
                          if t.get("internals") and t["outcome"] == "passed")
    return {"run": run, "passed": passed, "pass_rate": _rate(passed, run),
            "run_without_internals": run - internal_run,
            "pass_rate_without_internals": _rate(passed - internal_passed, run - internal_run),
            "imports": sum(1 for lb in labels if figs[lb]["imports"]),
            "modules": len(labels)}


def build_report(outdir: Path, modules: dict[str, str], math_label: str,
                 internals_path: Path, aliases_path: Path | None = None) -> dict:
    internals = load_internals(internals_path)
    aliases = json.loads(aliases_path.read_text()) if aliases_path and aliases_path.exists() \
        else {}
    run_info = json.loads((outdir / "run.json").read_text()) if (outdir / "run.json").exists() \
        else {}
    report = {"run": run_info, "modes": {}}
    for mode in ("strict", "probe"):
        figs = {}
        for label in modules:
            path = outdir / mode / f"{label.replace('/', '__')}.jsonl"
            if path.exists():
                figs[label] = module_figures(_read(path), mode, internals, aliases)
        if not figs:
            continue
        labels = list(figs)
        report["modes"][mode] = {
            "modules": figs,
            "total": _totals(figs, labels),
            "total_without_math": _totals(figs, [lb for lb in labels if lb != math_label]),
        }
    report["missing_names"] = rank_missing(report, internals)
    report["wrong_values"], report["refusals"] = _common_failures(report)
    return report


def rank_missing(report: dict, internals: dict | None = None) -> list[dict]:
    """Names whose absence blocks the most tests.

    A name needed while a test module is imported blocks every test of that module (the
    module cannot import until all of them exist; counts from the probe run, which collects
    it anyway); a name a test needs while running blocks that test.  Each test counts once
    per name.
    """
    probe = report["modes"].get("probe") or report["modes"].get("strict")
    if not probe:
        return []
    blocked: dict[str, set] = collections.defaultdict(set)
    at_import: dict[str, set] = collections.defaultdict(set)
    at_run: dict[str, set] = collections.defaultdict(set)
    for label, fig in probe["modules"].items():
        needed = list(fig["import_missing"])
        if fig.get("import_missing_name"):
            needed.append(fig["import_missing_name"])
        for name in needed:
            at_import[name].add(label)
            blocked[name] |= set(fig["tests"])
        for nodeid, t in fig["tests"].items():
            if t.get("missing"):
                at_run[t["missing"]].add(nodeid)
                blocked[t["missing"]].add(nodeid)
    internals = internals or {"names": {}, "helpers": {}}
    ranking = []
    for name, tests in blocked.items():
        ranking.append({"name": name, "blocks": len(tests),
                        "import_of": sorted(at_import.get(name, ())),
                        "failing_tests": len(at_run.get(name, ())),
                        "module": any(other.startswith(name + ".") for other in blocked),
                        "internals": _match(internals["names"], name),
                        "helper": _match(internals["helpers"], name)})
    ranking.sort(key=lambda r: (-r["blocks"], -r["failing_tests"], r["name"]))
    return ranking


def _common_failures(report: dict) -> tuple[list, list]:
    wrong, refusal = [], []
    seen = set()
    for mode in ("strict", "probe"):
        data = report["modes"].get(mode)
        if not data:
            continue
        for label, fig in data["modules"].items():
            for nodeid, t in fig["tests"].items():
                if nodeid in seen:
                    continue
                if t.get("cause") == "wrong value":
                    wrong.append({"module": label, "test": nodeid, "detail": t["detail"],
                                  "mode": mode})
                    seen.add(nodeid)
                elif t.get("cause") == "refusal":
                    refusal.append({"module": label, "test": nodeid, "detail": t["detail"],
                                    "mode": mode})
                    seen.add(nodeid)
    return wrong, refusal


# -- presentation ----------------------------------------------------------------------------

def _pct(x) -> str:
    return "-" if x is None else f"{x:.1f}%"


def _mode_table(data: dict, mode: str) -> list[str]:
    head = "imports" if mode == "strict" else "import needs (names / failed stmts)"
    lines = [f"| module | {head} | collected | run | pass | fail | error | skip | xfail "
             "| missing name | wrong value | refusal | internals | other |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, f in data["modules"].items():
        c, k = f["counts"], f["causes"]
        if f["absent"]:
            imp = "absent"
        elif mode == "strict":
            n = len(f["import_missing"])
            imp = ("yes" + (f" ({n} placeholders)" if n else "")) if f["imports"] else "no"
        else:
            imp = f"{len(f['import_missing'])} / {len(f.get('blocked', []))}"
        lines.append(
            f"| {label} | {imp} | {f['collected']} | {f['run']} | {c['passed']} | "
            f"{c['failed']} | {c['error']} | {c['skipped']} | {c['xfailed'] + c['xpassed']} | "
            f"{k['missing name']} | {k['wrong value']} | {k['refusal']} | {k['internals']} | "
            f"{k['other']} |")
    return lines


def summary(report: dict) -> str:
    out = []
    for mode, data in report["modes"].items():
        t, w = data["total"], data["total_without_math"]
        out.append(f"{mode}: {t['imports']}/{t['modules']} modules import; "
                   f"pass {t['passed']}/{t['run']} ({_pct(t['pass_rate'])}); outside test_math "
                   f"{w['passed']}/{w['run']} ({_pct(w['pass_rate'])}), without internals "
                   f"{_pct(w['pass_rate_without_internals'])}")
    return "\n".join(out)


def markdown(report: dict, top: int = 40) -> str:
    run = report.get("run", {})
    out = [f"# PyTensor {run.get('pytensor', '?')} tests against tensorgraph "
           f"{run.get('tensorgraph_commit', '')}", "",
           "Generated by tools/pytensor_suite/run.py; see its README for the method.", "",
           summary(report), ""]
    for mode, data in report["modes"].items():
        out += [f"## {mode}", ""] + _mode_table(data, mode) + [""]
        failed_imports = [(lb, f) for lb, f in data["modules"].items()
                          if not f["imports"] and not f["absent"]]
        if failed_imports:
            out += ["Import errors:", ""]
            out += [f"- {lb}: {f['import_error']}" for lb, f in failed_imports]
            out.append("")
        if mode == "strict":
            held = [(lb, f["import_missing"]) for lb, f in data["modules"].items()
                    if f["imports"] and f["import_missing"]]
            if held:
                out += ["Placeholders the imports needed (names of NOT_PROVIDED modules and "
                        "PyTensor internals listed in internals.toml; a test using one fails):",
                        ""]
                out += [f"- {lb}: " + ", ".join(f"`{n}`" for n in names) for lb, names in held]
                out.append("")
        blocked = [(lb, b) for lb, f in data["modules"].items() for b in f.get("blocked", [])]
        if blocked:
            out += ["Module-level statements that raised (probe runs the rest):", ""]
            out += [f"- {lb}: `{b['where']}` ({', '.join(b['names'])}): {b['cause']}: "
                    f"{b['detail'][:160]}" for lb, b in blocked]
            out.append("")
    out += [f"## Top {top} missing names", "",
            "| # | name | tests blocked | needed to import | tests failing on it | note |",
            "|---|---|---|---|---|---|"]
    for i, r in enumerate(report["missing_names"][:top], 1):
        note = "; ".join(x for x in (
            "module" if r["module"] else "",
            f"internal: {r['internals']}" if r["internals"] else "",
            f"test helper: {r['helper']}" if r["helper"] else "") if x)
        out.append(f"| {i} | `{r['name']}` | {r['blocks']} | {', '.join(r['import_of'])} | "
                   f"{r['failing_tests']} | {note} |")
    probe = report["modes"].get("probe")
    if probe:
        out += ["", "## What each module needs to import (from the probe run)", ""]
        for label, f in probe["modules"].items():
            names = [n for n in f["import_missing"]
                     if not any(o.startswith(n + ".") for o in f["import_missing"])]
            stmts = [f"{b['where']} ({b['cause']})" for b in f.get("blocked", [])]
            out.append(f"- {label} ({len(names)} names{', ' if stmts else ''}"
                       f"{', '.join(stmts)}): " + ", ".join(f"`{n}`" for n in names))
    if probe:
        by_reason = collections.defaultdict(list)
        for label, f in probe["modules"].items():
            for nodeid, t in f["tests"].items():
                if t.get("cause") == "internals":
                    by_reason[t["detail"]].append(nodeid)
        total = sum(len(v) for v in by_reason.values())
        out += ["", f"## Tests of PyTensor internals ({total} failing tests, internals.toml)", ""]
        for reason, tests in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
            more = f" and {len(tests) - 1} more" if len(tests) > 1 else ""
            out.append(f"- {len(tests)}: {reason} (e.g. `{tests[0]}`{more})")
    for title, rows in (("Wrong values", report["wrong_values"]),
                        ("Refusals", report["refusals"])):
        groups = collections.defaultdict(list)
        for r in rows:
            groups[(r["module"], _generic(r["detail"]))].append(r["test"])
        out += ["", f"## {title} ({len(rows)} tests, by module and message)", ""]
        for (label, detail), tests in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            more = f" and {len(tests) - 1} more" if len(tests) > 1 else ""
            out.append(f"- {label}, {len(tests)}: {detail[:200]} (e.g. `{tests[0]}`{more})")
    return "\n".join(out) + "\n"


_NUMBERS = re.compile(r"0x[0-9a-f]+|\bbool\b|\b(u?int|float|complex)(8|16|32|64|128)\b|'[^']*'|\d+")


def _generic(detail: str) -> str:
    """A failure message with its numbers, dtypes and quoted names masked, to group alike."""
    return _NUMBERS.sub("…", detail)
