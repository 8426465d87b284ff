"""What users install is the wheel, not this checkout.

The wheel is built once per test session; it must hold every file of the package that is
not Python source (C headers today, the widgets' front-end under ``tensorgraph/nbext``), and
a FAST_RUN function must compile and run its C from the unpacked wheel with the checkout out
of reach. It holds what users run: the test and documentation tooling stays in the checkout.
"""

import os
import pathlib
import subprocess
import sys
import textwrap
import zipfile

import pytest

ROOT = pathlib.Path(__file__).parents[1]


def runtime_files() -> set[str]:
    """Every file the installed package may read: all of ``tensorgraph/`` that git tracks, plus
    the front-end assets that setuptools maps from ``nbext/`` into ``tensorgraph/nbext``."""
    tracked = subprocess.run(
        ["git", "ls-files", "tensorgraph", "nbext"], cwd=ROOT, capture_output=True, text=True,
        check=True,
    ).stdout.split()
    files = set()
    for name in tracked:
        if name.startswith("nbext/"):
            name = "tensorgraph/" + name
        files.add(name)
    return files


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> tuple[pathlib.Path, str]:
    """The built wheel and what the build printed to stderr."""
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")
    # Build from a copy of the tracked files so no stale build/ or egg-info of the checkout
    # leaks into the wheel.
    archive = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    for name in archive.stdout.decode().split("\0"):
        if name and (ROOT / name).is_file():
            dest = build / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes((ROOT / name).read_bytes())
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(build)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (path,) = out.glob("tensorgraph-*.whl")
    return path, proc.stderr


def test_building_prints_no_deprecation_banner(wheel):
    assert "deprecated" not in wheel[1].lower(), wheel[1]


def test_wheel_holds_every_file_the_package_reads(wheel):
    names = set(zipfile.ZipFile(wheel[0]).namelist())
    missing = sorted(runtime_files() - names)
    assert missing == []
    assert "tensorgraph/link/c/runtime.h" in names


def test_the_wheel_holds_what_users_run_and_no_test_or_doc_tooling(wheel):
    """The browser driver, the demo cells and the screenshot tool live in tests/browser and
    tools/; nothing in the wheel drives a browser or a second kernel client."""
    archive = zipfile.ZipFile(wheel[0])
    names = set(archive.namelist())
    for tool in ("lab_driver", "demo_graphs", "screenshots"):
        assert not [n for n in names if n.endswith(f"/{tool}.py")], tool
    tooling = ("playwright", "jupyter_client", "chromium", "nbclient")
    for name in sorted(n for n in names if n.endswith(".py")):
        source = archive.read(name).decode()
        assert not [t for t in tooling if t in source], name
    # the graph view's front end is there, every part of it
    parts = {p.name for p in (ROOT / "nbext").glob("*.js")}
    assert {"graph_view.js", "draw.js", "camera.js", "interaction.js", "panel.js"} <= parts
    assert {f"tensorgraph/nbext/{p}" for p in parts} <= names


def test_fast_run_compiles_and_runs_from_the_unpacked_wheel(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel[0]).extractall(site)
    code = textwrap.dedent("""
        import sys
        site = sys.argv[1]
        sys.path.insert(0, site)
        import numpy as np
        import tensorgraph as tg, tensorgraph.tensor as tt
        assert tg.__file__.startswith(site), tg.__file__
        x = tt.vector("x")
        f = tg.function([x], tt.exp(x) * 2 + 1).wait_optimized()  # the C built from the wheel
        kinds = {getattr(t, "kind", "py") for t in f.vm.thunks}
        assert kinds == {"c"}, kinds
        print(f(np.arange(3.0)).tolist())
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORGRAPH")}
    env["HOME"] = str(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", code, str(site)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    values = [float(v) for v in proc.stdout.strip().strip("[]").split(",")]
    assert values == pytest.approx([3.0, 2 * 2.718281828459045 + 1, 2 * 7.38905609893065 + 1])
