#!/usr/bin/env python3
"""Run PyMC's own test modules twice: on PyTensor's C and with every function in mode TENSORGRAPH.

    .venv-pymc/bin/python tools/pymc_suite/run.py                   # fetch, run, report
    .venv-pymc/bin/python tools/pymc_suite/run.py --modules continuous,discrete --runs tensorgraph
    .venv-pymc/bin/python tools/pymc_suite/run.py --report-only     # rebuild the last report

PyMC's test files are extracted at run time into a cache directory outside the checkout
(``~/.cache/tensorgraph-pymc-suite`` or ``$TG_PYMC_SUITE_CACHE``) and never enter the
repository; so does the report. See README.md.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))  # tools/suite_runs.py, shared with the other runner

import suite_runs  # noqa: E402

GIT_URL = "https://github.com/pymc-devs/pymc"

# label -> path in PyMC's tree (a file, or a directory: every test_*.py in it)
MODULES: dict[str, str] = {
    "distributions/continuous": "tests/distributions/test_continuous.py",
    "distributions/discrete": "tests/distributions/test_discrete.py",
    "distributions/multivariate": "tests/distributions/test_multivariate.py",
    "logprob/basic": "tests/logprob/test_basic.py",
    "logprob/censoring": "tests/logprob/test_censoring.py",
    "logprob/cumsum": "tests/logprob/test_cumsum.py",
    "logprob/order": "tests/logprob/test_order.py",
    "model/core": "tests/model/test_core.py",            # compile_logp / compile_fn / PointFunc
    "pytensorf": "tests/test_pytensorf.py",              # pymc.pytensorf.compile, compile_fn
    "math": "tests/test_math.py",
    "initial_point": "tests/test_initial_point.py",
    "data": "tests/test_data.py",                        # pm.Data: shared variables, set_data
}
# what the modules import besides themselves (extracted with them)
SUPPORT = ["tests/__init__.py", "tests/conftest.py", "tests/helpers.py", "tests/models.py",
           "tests/distributions/__init__.py", "tests/logprob/__init__.py",
           "tests/logprob/utils.py", "tests/model/__init__.py"]
RUNS = ("c", "tensorgraph")


def cache_dir() -> Path:
    return Path(os.environ.get("TG_PYMC_SUITE_CACHE",
                               Path.home() / ".cache" / "tensorgraph-pymc-suite"))


def installed_pymc(python: str) -> dict:
    """Version and git revision of the PyMC that ``python`` imports (versioneer records it)."""
    code = ("import json, pymc, pymc._version as v; "
            "print(json.dumps({'version': pymc.__version__, "
            "'revision': v.get_versions().get('full-revisionid')}))")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- getting PyMC's tests -------------------------------------------------------------------------

def _git_dir(git_dir: str | None, tag: str) -> str | None:
    git_dir = git_dir or os.environ.get("TG_PYMC_SUITE_GIT")
    if git_dir:
        return git_dir
    clone = cache_dir() / "pymc.git"
    if not clone.exists():
        try:
            subprocess.run(["git", "clone", "--bare", "--depth", "1", "--branch", tag,
                            GIT_URL, str(clone)], check=True, timeout=600,
                           capture_output=True)
        except (subprocess.SubprocessError, OSError) as exc:
            print(f"git clone of {GIT_URL} failed ({exc})", file=sys.stderr)
            shutil.rmtree(clone, ignore_errors=True)
            return None
    return str(clone)


def _git_paths(git_dir: str, ref: str, paths: list[str]) -> list[str]:
    """The paths (files or directories) that exist at ``ref``."""
    listed = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only",
                             ref, "tests"], capture_output=True, text=True, check=True).stdout
    names = set(listed.split())
    return [p for p in paths if p in names or any(n.startswith(p.rstrip("/") + "/")
                                                  for n in names)]


def sdist_tests(python: str, version: str) -> Path | None:
    """PyPI's source distribution of the installed PyMC, unpacked into the cache: its
    ``tests/test_*.py`` (only the top-level test modules; none of ``tests/distributions``,
    ``tests/logprob``, ``tests/model``), the exact version installed. None when pip cannot
    get it."""
    dest = cache_dir() / f"sdist-pymc-{version}"
    if (dest / ".complete").exists():
        return dest
    dl = cache_dir() / "sdist"
    dl.mkdir(parents=True, exist_ok=True)
    tarball = dl / f"pymc-{version}.tar.gz"
    if not tarball.exists():
        try:
            subprocess.run([python, "-m", "pip", "download", "--quiet", "--no-deps",
                            "--no-binary", "pymc", f"pymc=={version}", "-d", str(dl)],
                           check=True, timeout=600)
        except (subprocess.SubprocessError, OSError) as exc:
            print(f"pip download of pymc=={version} failed ({exc})", file=sys.stderr)
            return None
    prefix = f"pymc-{version}/"
    shutil.rmtree(dest, ignore_errors=True)
    with tarfile.open(tarball) as tar:
        members = []
        for m in tar.getmembers():
            rel = m.name[len(prefix):] if m.name.startswith(prefix) else m.name
            if rel.startswith("tests/") and rel.count("/") == 1 and rel.endswith(".py"):
                m.name = rel
                members.append(m)
        tar.extractall(dest, members=members, filter="data")
    (dest / ".complete").write_text(f"{version}\n")
    return dest


def prepare_source(args, pymc: dict) -> tuple[Path, str]:
    """The run root (PyMC's tests/ at the installed version, our pytest.ini) and where it
    came from. Sources, first that works: ``--tests-dir`` (a directory holding PyMC's
    ``tests/`` tree), ``--git-dir`` / a shallow clone at the tag ``v<version>`` (or the
    installed revision)."""
    ref = args.ref or f"v{pymc['version']}"
    if args.tests_dir:
        src = Path(args.tests_dir).resolve()
        # the installed version's own top-level test modules win over the directory's
        sdist = sdist_tests(args.python, pymc["version"]) if args.sdist else None
        sdist_files = sorted((sdist / "tests").glob("test_*.py")) if sdist else []
        # one root per content: a run going on keeps its copy while the directory changes
        digest = hashlib.sha1()
        for f in sorted((src / "tests").rglob("*.py")) + sdist_files:
            digest.update(f.name.encode() + f.read_bytes())
        root = cache_dir() / f"pymc-{pymc['version']}-dir-{digest.hexdigest()[:10]}"
        if not root.exists():
            tmp = root.with_name(root.name + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(src / "tests", tmp / "tests")
            for f in sdist_files:
                shutil.copy(f, tmp / "tests" / f.name)
            sources = (src / "SOURCES.txt").read_text() if (src / "SOURCES.txt").exists() else ""
            sources = "".join(line + "\n" for line in sources.splitlines()
                              if line.split(" ", 1)[0] not in
                              {f"tests/{f.name}" for f in sdist_files})
            sources += "".join(f"tests/{f.name} PyPI source distribution pymc-"
                               f"{pymc['version']} (whole, the installed version)\n"
                               for f in sdist_files)
            (tmp / "SOURCES.txt").write_text(sources)
            tmp.rename(root)
        origin = f"directory {src}" + (f" and PyPI's pymc-{pymc['version']} source "
                                       "distribution" if sdist_files else "")
        origin += " (where each file comes from: SOURCES.txt)"
    else:
        root = cache_dir() / f"pymc-{ref}"
        if not (root / ".complete").exists():
            git_dir = _git_dir(args.git_dir, ref)
            if not git_dir:
                raise SystemExit("no source of PyMC's tests: give --tests-dir DIR or "
                                 "--git-dir CLONE (GitHub could not be reached)")
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            paths = _git_paths(git_dir, ref, list(MODULES.values()) + SUPPORT)
            archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", ref, *paths],
                                     check=True, capture_output=True).stdout
            with tempfile.NamedTemporaryFile(suffix=".tar") as tmp:
                tmp.write(archive)
                tmp.flush()
                with tarfile.open(tmp.name) as tar:
                    tar.extractall(root, filter="data")
            (root / ".complete").write_text(f"{ref}\n")
        origin = f"git {ref}"
    (root / "pytest.ini").write_text(
        "[pytest]\n"
        "# written by tensorgraph's tools/pymc_suite/run.py\n"
        "addopts = -p no:cacheprovider\n"
        "xfail_strict = false\n")
    return root, origin


def snapshot_tensorgraph(ref: str) -> tuple[Path | None, str]:
    return suite_runs.snapshot_tensorgraph(ref, cache_dir())


# -- one module in one run -------------------------------------------------------------------------







def run_module(label: str, run: str, root: Path, outdir: Path, args,
               nodeids: list[str] | None = None) -> dict:
    """pytest on one module in a subprocess with a wall-clock bound. A test that crashes the
    process or hangs past the per-test timeout is charged as a crash and the module goes on
    without it; when the module's bound is reached the tests not run are "not run"."""
    path = MODULES[label]
    targets = nodeids or [path]
    jsonl = outdir / run / f"{suite_runs.slug(label)}.jsonl"
    log = outdir / "logs" / f"{run}-{suite_runs.slug(label)}.log"
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    jsonl.unlink(missing_ok=True)
    if not (root / path).exists():
        with open(jsonl, "a") as f:
            f.write(json.dumps({"event": "absent", "module": path}) + "\n")
        return {"label": label, "run": run, "absent": True}
    env = dict(os.environ)
    env.update({
        "PYTHONPATH": os.pathsep.join(
            ([str(args.tensorgraph_dir)] if args.tensorgraph_dir else []) + [str(HERE)]
            + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])),
        "TG_PYMC_SUITE_MODE": run,
        "TG_PYMC_SUITE_OUT": str(jsonl),
        "TG_PYMC_SUITE_SHIM": "1" if args.shim else "0",
        "OMP_NUM_THREADS": env.get("OMP_NUM_THREADS", "1"),
    })
    deselected: list[str] = []
    restarts = 0
    started = time.monotonic()
    deadline = started + args.module_timeout
    bound_hit = False
    rc = None
    while True:
        cmd = [args.python, "-m", "pytest", *targets, "-p", "tg_pymc_plugin",
               "-c", str(root / "pytest.ini"), "--rootdir", str(root), "-q", "--no-header",
               "-rN", "-W", "ignore::UserWarning", f"--timeout={args.timeout}",
               "-o", "timeout_method=signal"]
        if args.k and not nodeids:
            cmd += ["-k", args.k]
        for nodeid in deselected:
            cmd += ["--deselect", nodeid]
        with open(log, "a") as logf:
            logf.write(f"\n$ {' '.join(cmd)}\n")
            logf.flush()
            proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=logf,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            rc, why = wait_watched(proc, jsonl, stall=args.timeout * 2, deadline=deadline)
        events = suite_runs.read_jsonl(jsonl)
        hung = suite_runs.unfinished(events)
        if why == "deadline":
            bound_hit = True
            with open(jsonl, "a") as f:
                for nodeid in hung:
                    f.write(json.dumps({"event": "crash", "nodeid": nodeid,
                                        "why": "module time bound"}) + "\n")
                f.write(json.dumps({"event": "bound", "seconds": args.module_timeout}) + "\n")
            break
        if not hung:
            break
        with open(jsonl, "a") as f:
            for nodeid in hung:
                f.write(json.dumps({"event": "crash", "nodeid": nodeid, "returncode": rc,
                                    "why": why}) + "\n")
        deselected += hung
        restarts += 1
        if restarts > args.max_restarts:
            break
    return {"label": label, "run": run, "returncode": rc, "restarts": restarts,
            "bound_hit": bound_hit, "seconds": round(time.monotonic() - started, 1)}


def wait_watched(proc: subprocess.Popen, jsonl: Path, stall: float,
                 deadline: float) -> tuple[int, str]:
    """Wait for pytest; kill its process group when its output stops growing for ``stall``
    seconds or when the module's wall-clock bound ``deadline`` passes."""
    last_size, last_change = -1, time.monotonic()
    while True:
        try:
            return proc.wait(timeout=5), "exit"
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            size = jsonl.stat().st_size if jsonl.exists() else 0
            if size != last_size:
                last_size, last_change = size, now
            why = ("deadline" if now > deadline
                   else "stall" if now - last_change > stall else None)
            if why:
                os.killpg(proc.pid, signal.SIGKILL)
                return proc.wait(), why


# -- main ------------------------------------------------------------------------------------------

def _default_python() -> str:
    venv = REPO / ".venv-pymc" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def select(labels: list[str], wanted: str | None) -> list[str]:
    if not wanted:
        return labels
    names = [w.strip() for w in wanted.split(",") if w.strip()]
    return [lb for lb in labels if any(w == lb or w in lb for w in names)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", help="comma-separated labels or substrings (default: all)")
    ap.add_argument("--runs", default="c,tensorgraph", help="c, tensorgraph (default both)")
    ap.add_argument("--workers", type=int, default=1, help="pytest processes at once (1)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per test (300)")
    ap.add_argument("--module-timeout", type=int, default=1500,
                    help="wall-clock seconds per module and run (1500)")
    ap.add_argument("--max-restarts", type=int, default=10)
    ap.add_argument("-k", help="pytest -k expression for every module (a documented subset)")
    ap.add_argument("--no-confirm-py", dest="confirm_py", action="store_false",
                    help="do not run the differing tests again on PyTensor's Python "
                         "(mode FAST_COMPILE)")
    ap.add_argument("--no-shim", dest="shim", action="store_false",
                    help="no placeholders for names the installed PyMC lacks")
    ap.add_argument("--python", default=_default_python(),
                    help="interpreter with PyMC, tensorgraph, pytest and pytest-timeout "
                         "(default: the checkout's .venv-pymc)")
    ap.add_argument("--tensorgraph", default="HEAD", metavar="REF",
                    help="git ref of tensorgraph to measure (default HEAD); 'working-tree'")
    ap.add_argument("--git-dir", help="a local clone of PyMC holding the tag")
    ap.add_argument("--ref", help="git ref of PyMC's tests (default: v<installed version>)")
    ap.add_argument("--tests-dir", help="a directory holding PyMC's tests/ tree "
                                        "(instead of git)")
    ap.add_argument("--no-sdist", dest="sdist", action="store_false",
                    help="with --tests-dir: do not take the top-level test modules from "
                         "PyPI's source distribution of the installed PyMC")
    ap.add_argument("--out", help="output directory (default: <cache>/results/<time>)")
    ap.add_argument("--report-only", nargs="?", const="latest", metavar="DIR",
                    help="rebuild report.md / report.json from a previous run's files")
    args = ap.parse_args(argv)

    import report as report_mod

    results = cache_dir() / "results"
    if args.report_only:
        outdir = (results / "latest" if args.report_only == "latest"
                  else Path(args.report_only)).resolve()
    else:
        pymc = installed_pymc(args.python)
        root, origin = prepare_source(args, pymc)
        args.tensorgraph_dir, measured = snapshot_tensorgraph(args.tensorgraph)
        labels = select(list(MODULES), args.modules)
        runs = [r.strip() for r in args.runs.split(",") if r.strip()]
        outdir = Path(args.out) if args.out else (
            results / datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
        outdir.mkdir(parents=True, exist_ok=True)
        info = {"labels": labels, "runs": runs, "timeout": args.timeout,
                "module_timeout": args.module_timeout, "k": args.k,
                "tensorgraph_commit": measured, "source": origin,
                "pymc": pymc, "modules": {lb: MODULES[lb] for lb in labels},
                "started": datetime.datetime.now().isoformat(timespec="seconds")}
        run_file = outdir / "run.json"
        if run_file.exists():             # modules run again into an earlier directory
            previous = json.loads(run_file.read_text())
            previous.setdefault("reruns", []).append(info)
            previous["labels"] = sorted(set(previous["labels"]) | set(labels),
                                        key=list(MODULES).index)
            previous["modules"] = {lb: MODULES[lb] for lb in previous["labels"]}
            info = previous
        run_file.write_text(json.dumps(info, indent=1))
        if (root / "SOURCES.txt").exists():
            shutil.copy(root / "SOURCES.txt", outdir / "SOURCES.txt")
        if not args.out:
            latest = results / "latest"
            if latest.is_symlink() or latest.exists():
                latest.unlink()
            latest.symlink_to(outdir.name)
        tasks = [(run, lb) for lb in labels for run in runs]
        with concurrent.futures.ThreadPoolExecutor(args.workers) as pool:
            futures = [pool.submit(run_module, lb, run, root, outdir, args)
                       for run, lb in tasks]
            for fut in concurrent.futures.as_completed(futures):
                done = fut.result()
                print(json.dumps(done), flush=True)
                with open(outdir / "timings.jsonl", "a") as f:
                    f.write(json.dumps(done) + "\n")
        if args.confirm_py and {"c", "tensorgraph"} <= set(runs):
            # the tests that pass on C and fail on TENSORGRAPH, once more on PyTensor's Python
            for lb in labels:
                differing = report_mod.differing(outdir, lb)
                if differing:
                    print(json.dumps(run_module(lb, "py", root, outdir, args, differing)),
                          flush=True)
    rep = report_mod.build(outdir, HERE / "explained.toml")
    (outdir / "report.json").write_text(json.dumps(rep, indent=1))
    (outdir / "report.md").write_text(report_mod.markdown(rep))
    print(report_mod.summary(rep))
    print(f"report: {outdir / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
