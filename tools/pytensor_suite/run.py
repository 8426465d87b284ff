#!/usr/bin/env python3
"""Run PyTensor's own tests against tensorgraph through the module mapping (issue 21).

    python tools/pytensor_suite/run.py                  # fetch the tests, run, write the report
    python tools/pytensor_suite/run.py --modules maker,printing --modes strict
    python tools/pytensor_suite/run.py --reclassify     # rebuild the report from the last run

PyTensor's test files are fetched at run time into a cache directory outside the checkout
(``~/.cache/tensorgraph-pytensor-suite`` or ``$TG_PYTENSOR_SUITE_CACHE``) and never enter the
repository; so does the report.  See README.md for what is measured and how failures are
classified.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
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

PYTENSOR_VERSION = "3.0.7"                 # the release whose tests are measured
GIT_TAG = f"rel-{PYTENSOR_VERSION}"
GIT_URL = "https://github.com/pymc-devs/pytensor"

# The 20 user-facing test modules of issue 21, then issue 33's linear algebra and special
# functions: label -> path in PyTensor's tests/ tree.
MODULES: dict[str, str] = {
    "tensor/basic": "tests/tensor/test_basic.py",
    "tensor/math": "tests/tensor/test_math.py",
    "tensor/elemwise": "tests/tensor/test_elemwise.py",
    "tensor/subtensor": "tests/tensor/test_subtensor.py",
    "tensor/shape": "tests/tensor/test_shape.py",
    "tensor/extra_ops": "tests/tensor/test_extra_ops.py",
    "tensor/special": "tests/tensor/test_special.py",
    "tensor/blas": "tests/tensor/test_blas.py",
    "tensor/random": "tests/tensor/random/test_basic.py",
    "gradient": "tests/test_gradient.py",
    "ifelse": "tests/test_ifelse.py",
    "compile/function": "tests/compile/test_maker.py",  # function() lives in compile/maker.py
    "compile/mode": "tests/compile/test_mode.py",
    "compile/shared": "tests/compile/test_shared.py",
    "compile/debugmode": "tests/compile/debug/test_debugmode.py",
    "compile/nanguardmode": "tests/compile/debug/test_nanguardmode.py",
    "compile/monitormode": "tests/compile/debug/test_monitormode.py",
    "compile/profiling": "tests/compile/debug/test_profiling.py",
    "printing": "tests/test_printing.py",
    "config": "tests/test_config.py",
    # issue 33: linear algebra and the special functions of PyMC's distributions
    **{f"tensor/linalg/{name}": f"tests/tensor/linalg/{path}" for name, path in (
        ("constructors", "test_constructors.py"),
        ("cholesky", "test_decomposition/test_cholesky.py"),
        ("eigen", "test_decomposition/test_eigen.py"),
        ("lu", "test_decomposition/test_lu.py"),
        ("qr", "test_decomposition/test_qr.py"),
        ("schur", "test_decomposition/test_schur.py"),
        ("svd", "test_decomposition/test_svd.py"),
        ("deprecation_shim", "test_deprecation_shim.py"),
        ("doc_api", "test_doc_api.py"),
        ("inverse", "test_inverse.py"),
        ("products", "test_products.py"),
        ("solvers_general", "test_solvers/test_general.py"),
        ("solvers_linear_control", "test_solvers/test_linear_control.py"),
        ("solvers_lstsq", "test_solvers/test_lstsq.py"),
        ("solvers_psd", "test_solvers/test_psd.py"),
        ("solvers_triangular", "test_solvers/test_triangular.py"),
        ("summary", "test_summary.py"))},
    "tensor/math_scipy": "tests/tensor/test_math_scipy.py",
    "scalar/math": "tests/scalar/test_math.py",
    "tensor/einsum": "tests/tensor/test_einsum.py",
}
MATH = "tensor/math"
# PyTensor's doc pages that its tests read (test_doc_api.py: linalg's __all__ against its page)
DOC_PAGES = ["doc/library/tensor/linalg.rst"]

# Third-party packages the 20 modules import that tensorgraph's venv lacks: test_printing.py
# calls pytest.importorskip("rich") in a class body, which skips the whole module without it.
# They go to a directory of the cache on the test processes' PYTHONPATH, never into the venv
# (their dependency Pygments comes from the venv).
EXTRAS = ("rich", "markdown-it-py", "mdurl")


def cache_dir() -> Path:
    return Path(os.environ.get("TG_PYTENSOR_SUITE_CACHE",
                               Path.home() / ".cache" / "tensorgraph-pytensor-suite"))


# -- getting PyTensor's tests -------------------------------------------------------------------

def _git_dir(git_dir: str | None) -> str | None:
    """A git directory holding ``GIT_TAG``: the one given, or a shallow clone from GitHub
    into the cache; None when neither is available."""
    git_dir = git_dir or os.environ.get("TG_PYTENSOR_SUITE_GIT")
    if git_dir:
        return git_dir
    clone = cache_dir() / "pytensor.git"
    if not clone.exists():
        try:
            subprocess.run(["git", "clone", "--bare", "--depth", "1", "--branch", GIT_TAG,
                            GIT_URL, str(clone)], check=True, timeout=600)
        except (subprocess.SubprocessError, OSError) as exc:
            print(f"git clone of {GIT_URL} failed ({exc}); falling back to PyPI's sdist, "
                  "which lacks tests/tensor and tests/compile", file=sys.stderr)
            shutil.rmtree(clone, ignore_errors=True)
            return None
    return str(clone)


def _extract(git_dir: str | None, paths: list[str], dest: Path) -> None:
    """Extract ``paths`` (directories or files of PyTensor's tree at ``GIT_TAG``) into dest,
    from git, or else from PyPI's source distribution (which lacks most of tests/)."""
    dest.mkdir(parents=True, exist_ok=True)
    if git_dir:
        archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", GIT_TAG, *paths],
                                 check=True, capture_output=True).stdout
        with tempfile.NamedTemporaryFile(suffix=".tar") as tmp:
            tmp.write(archive)
            tmp.flush()
            with tarfile.open(tmp.name) as tar:
                tar.extractall(dest, filter="data")
        return
    dl = cache_dir() / "sdist"
    dl.mkdir(parents=True, exist_ok=True)
    tarball = dl / f"pytensor-{PYTENSOR_VERSION}.tar.gz"
    if not tarball.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                        "pytensor", f"pytensor=={PYTENSOR_VERSION}", "-d", str(dl)], check=True)
    prefix = f"pytensor-{PYTENSOR_VERSION}/"
    with tarfile.open(tarball) as tar:
        members = []
        for m in tar.getmembers():
            rel = m.name[len(prefix):] if m.name.startswith(prefix) else m.name
            if any(rel == p or rel.startswith(p.rstrip("/") + "/") for p in paths):
                m.name = rel
                members.append(m)
        tar.extractall(dest, members=members, filter="data")


def prepare_source(git_dir: str | None) -> Path:
    """The run root: PyTensor's tests/ and conftest.py, our pytest.ini, the list of PyTensor's
    modules and where each name is defined.

    PyTensor's own package goes to a separate directory, read as text only (module names,
    aliases): ``import pytensor`` must reach the mapping, never PyTensor.
    """
    root = cache_dir() / f"pytensor-{PYTENSOR_VERSION}"
    package = cache_dir() / f"pytensor-{PYTENSOR_VERSION}-package"
    if not (root / ".complete").exists():
        git_dir = _git_dir(git_dir)
        if root.exists():
            shutil.rmtree(root)
        _extract(git_dir, ["tests", "conftest.py"], root)
        _extract(git_dir, DOC_PAGES, root)
        (root / "pytest.ini").write_text(
            "[pytest]\n"
            "# written by tensorgraph's tools/pytensor_suite/run.py\n"
            "addopts = -p no:cacheprovider\n"
            "xfail_strict = false\n"
            "consider_namespace_packages = false\n")
        (root / ".complete").write_text(f"{GIT_TAG}\n")
    if not all((root / page).exists() for page in DOC_PAGES):   # a root made before they were
        _extract(_git_dir(git_dir), DOC_PAGES, root)
    if not (package / ".complete").exists():
        git_dir = _git_dir(git_dir)
        if package.exists():
            shutil.rmtree(package)
        _extract(git_dir, ["pytensor"], package)
        (package / ".complete").write_text(f"{GIT_TAG}\n")
    if not (root / "pytensor_modules.txt").exists():
        modules = set()
        for path in (package / "pytensor").rglob("*.py"):
            parts = list(path.relative_to(package).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        (root / "pytensor_modules.txt").write_text("\n".join(sorted(modules)) + "\n")
    if not (root / "pytensor_aliases.json").exists():
        import aliases

        (root / "pytensor_aliases.json").write_text(json.dumps(aliases.build(str(package))))
    return root


def ensure_extras(python: str) -> Path:
    """``EXTRAS`` installed (``pip --target``) into a directory of the cache, once."""
    version = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    target = cache_dir() / f"site-extra-{version.strip('()').replace(', ', '.')}"
    if not (target / ".complete").exists():
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                        str(target), *EXTRAS], check=True)
        (target / ".complete").write_text(" ".join(EXTRAS) + "\n")
    return target


def snapshot_tensorgraph(ref: str) -> tuple[Path | None, str]:
    return suite_runs.snapshot_tensorgraph(ref, cache_dir())


# -- running one test module ------------------------------------------------------------------







def run_module(label: str, mode: str, root: Path, outdir: Path, args) -> dict:
    """pytest on one module in a subprocess; a crash or a hang is charged to the running test
    and the module is run again without it (at most ``args.max_restarts`` times)."""
    path = MODULES[label]
    jsonl = outdir / mode / f"{suite_runs.slug(label)}.jsonl"
    log = outdir / "logs" / f"{mode}-{suite_runs.slug(label)}.log"
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    jsonl.unlink(missing_ok=True)
    if not (root / path).exists():
        with open(jsonl, "a") as f:
            f.write(json.dumps({"event": "absent", "module": path}) + "\n")
        return {"label": label, "mode": mode, "absent": True}
    env = dict(os.environ)
    env.update({
        "PYTHONPATH": os.pathsep.join(
            ([str(args.tensorgraph_dir)] if args.tensorgraph_dir else [])
            + [str(HERE), str(args.extras_dir)]
            + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])),
        "TG_PYTENSOR_SUITE_MODE": mode,
        "TG_PYTENSOR_SUITE_OUT": str(jsonl),
        "TG_PYTENSOR_SUITE_TARGET": path,
        "TG_PYTENSOR_SUITE_MODULES": str(root / "pytensor_modules.txt"),
        "TENSORGRAPH_FLAGS": f"base_compiledir={cache_dir() / 'compiledir'}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": env.get("OMP_NUM_THREADS", "1"),
    })
    deselected: list[str] = []
    restarts = 0
    started = time.monotonic()
    while True:
        cmd = [args.python, "-m", "pytest", path, "-p", "tg_suite_plugin", "-p",
               "no:cacheprovider", "-c", str(root / "pytest.ini"), "--rootdir", str(root),
               "-q", "--no-header", "-rN", "--continue-on-collection-errors",
               f"--timeout={args.timeout}", "-o", "timeout_method=signal"]
        if args.runslow:
            cmd.append("--runslow")
        for nodeid in deselected:
            cmd += ["--deselect", nodeid]
        with open(log, "a") as logf:
            logf.write(f"\n$ {' '.join(cmd)}\n")
            logf.flush()
            proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=logf,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            rc = _wait_watched(proc, jsonl, stall=args.timeout * 3)
        events = suite_runs.read_jsonl(jsonl)
        hung = suite_runs.unfinished(events)
        if not hung:
            break
        with open(jsonl, "a") as f:
            for nodeid in hung:
                f.write(json.dumps({"event": "crash", "nodeid": nodeid, "returncode": rc}) + "\n")
        deselected += hung
        restarts += 1
        if restarts > args.max_restarts:
            break
    return {"label": label, "mode": mode, "returncode": rc, "restarts": restarts,
            "seconds": round(time.monotonic() - started, 1)}


def _wait_watched(proc: subprocess.Popen, jsonl: Path, stall: float) -> int:
    """Wait for pytest; kill its process group when its output file stops growing for
    ``stall`` seconds (a test stuck where pytest-timeout's signal cannot reach it)."""
    last_size, last_change = -1, time.monotonic()
    while True:
        try:
            return proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            size = jsonl.stat().st_size if jsonl.exists() else 0
            if size != last_size:
                last_size, last_change = size, time.monotonic()
            elif time.monotonic() - last_change > stall:
                os.killpg(proc.pid, signal.SIGKILL)
                return proc.wait()


# -- main ---------------------------------------------------------------------------------------

def _default_python() -> str:
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", help="comma-separated labels or substrings (default: all)")
    ap.add_argument("--modes", default="strict,probe",
                    help="strict (the figure), probe (the missing-name ranking); default both")
    ap.add_argument("--workers", type=int, default=2, help="pytest processes at once (2)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per test (120)")
    ap.add_argument("--max-restarts", type=int, default=10,
                    help="reruns of a module after a crash or hang (10)")
    ap.add_argument("--runslow", action="store_true", help="also PyTensor's slow tests")
    ap.add_argument("--python", default=_default_python(),
                    help="interpreter with tensorgraph, pytest and pytest-timeout "
                         "(default: the checkout's .venv)")
    ap.add_argument("--tensorgraph", default="HEAD", metavar="REF",
                    help="git ref of tensorgraph to measure, exported into the cache "
                         "(default HEAD); 'working-tree' for the checkout as it is")
    ap.add_argument("--git-dir", help="a local clone of PyTensor to take the tag from "
                                      "(default: clone from GitHub into the cache)")
    ap.add_argument("--out", help="output directory (default: <cache>/results/<time>)")
    ap.add_argument("--reclassify", nargs="?", const="latest", metavar="DIR",
                    help="only rebuild report.json / report.md from a previous run's raw files")
    args = ap.parse_args(argv)

    import classify

    results = cache_dir() / "results"
    if args.reclassify:
        outdir = results / "latest" if args.reclassify == "latest" else Path(args.reclassify)
        outdir = outdir.resolve()
    else:
        root = prepare_source(args.git_dir)
        args.extras_dir = ensure_extras(args.python)
        args.tensorgraph_dir, measured = snapshot_tensorgraph(args.tensorgraph)
        labels = list(MODULES)
        if args.modules:
            wanted = [w.strip() for w in args.modules.split(",") if w.strip()]
            labels = [lb for lb in labels if any(w == lb or w in lb for w in wanted)]
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        outdir = Path(args.out) if args.out else (
            results / datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
        outdir.mkdir(parents=True, exist_ok=True)
        info = {"modes": modes, "labels": labels, "timeout": args.timeout,
                "tensorgraph_commit": measured,
                "started": datetime.datetime.now().isoformat(timespec="seconds")}
        run_file = outdir / "run.json"
        if run_file.exists():      # some modules run again into an earlier run's directory
            previous = json.loads(run_file.read_text())
            previous.setdefault("reruns", []).append(info)
            info = previous
        else:
            info.update(pytensor=PYTENSOR_VERSION, tag=GIT_TAG, python=args.python)
        run_file.write_text(json.dumps(info, indent=1))
        if not args.out:
            latest = results / "latest"
            if latest.is_symlink() or latest.exists():
                latest.unlink()
            latest.symlink_to(outdir.name)
        # the biggest modules first, so that two workers finish together
        tasks = [(mode, lb) for mode in modes for lb in sorted(
            labels, key=lambda lb: -(root / MODULES[lb]).stat().st_size
            if (root / MODULES[lb]).exists() else 0)]
        with concurrent.futures.ThreadPoolExecutor(args.workers) as pool:
            futures = {pool.submit(run_module, lb, mode, root, outdir, args): (mode, lb)
                       for mode, lb in tasks}
            for fut in concurrent.futures.as_completed(futures):
                info = fut.result()
                print(json.dumps(info), flush=True)
    report = classify.build_report(outdir, MODULES, MATH, HERE / "internals.toml",
                                   cache_dir() / f"pytensor-{PYTENSOR_VERSION}"
                                   / "pytensor_aliases.json")
    (outdir / "report.json").write_text(json.dumps(report, indent=1))
    (outdir / "report.md").write_text(classify.markdown(report))
    print(classify.summary(report))
    print(f"report: {outdir / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
