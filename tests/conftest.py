"""Shared test fixtures.

Every test starts and ends with the same flag values: ``_restore_config`` puts back any
flag a test changed, so tests can assign flags without leaking into each other.
"""

import os
import subprocess
import sys

import pytest

from tensorgraph import config


# Functions in tests wait for their optimized code (tests of what C computes, caches, VM
# structure); the tests of tiers turn them on (tests/link/test_tiers.py). run_python turns them off
# in the processes it starts, unless the test gives TENSORGRAPH_FLAGS itself.
config.compile__tiers = False
# and rewrite every graph (tests read rewrite histories); tests/compile/test_rewrite_cache.py turns
# the cache of rewritten graphs on
config.cache_rewritten_graphs = False


def pytest_addoption(parser):
    parser.addoption("--all", action="store_true",
                     help="also run the tests marked slow (CI runs everything)")


def pytest_collection_modifyitems(config, items):
    """Markers a developer selects by: ``browser`` (tests/browser: a real JupyterLab and
    chromium), ``binder`` (notebooks run in an environment built from binder/), ``slow``
    (long sweeps, skipped unless ``--all`` or ``-m slow``). The fast suite:
    ``pytest -m "not browser and not binder"``."""
    expression = config.getoption("markexpr") or ""
    run_slow = config.getoption("--all") or (
        "slow" in expression and "not slow" not in expression)
    skip_slow = pytest.mark.skip(reason="slow: run with --all or -m slow")
    for item in items:
        path = str(item.fspath).replace(os.sep, "/")
        if "/tests/browser/" in path:
            item.add_marker(pytest.mark.browser)
        if path.endswith("/tests/test_notebooks.py"):
            item.add_marker(pytest.mark.binder)
        if item.get_closest_marker("slow") is not None and not run_slow:
            item.add_marker(skip_slow)


@pytest.fixture(autouse=True)
def _restore_config():
    saved = {name: (config.info(name).value, config.info(name).source) for name in config}
    yield
    for name, (value, source) in saved.items():
        info = config.info(name)
        if info.value is not value or info.source != source:
            config._values[name] = value
            config._sources[name] = source


@pytest.fixture
def run_python(tmp_path):
    """Run Python code in a fresh interpreter with a controlled environment.

    HOME points at an empty temporary directory and tensorgraph's variables are removed,
    so the developer's own ~/.tensorgraphrc and TENSORGRAPH_FLAGS never leak in; pass
    ``env`` to set them.  ``run("-c", code)`` or ``run("-m", "tensorgraph", "config")``
    returns the CompletedProcess (text mode).
    """

    def run(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
        full = {k: v for k, v in os.environ.items() if not k.startswith("TENSORGRAPH")}
        full["HOME"] = str(tmp_path)
        full.update(env or {})
        if "TENSORGRAPH_FLAGS" not in (env or {}):  # as here: optimized code, no graph cache
            full["TENSORGRAPH_FLAGS"] = "compile__tiers=False,cache_rewritten_graphs=False"
        return subprocess.run(
            [sys.executable, *argv], env=full, capture_output=True, text=True, timeout=120
        )

    return run


@pytest.fixture
def reference_mode():
    """Run the test's functions in FAST_COMPILE: the numpy ``perform`` of every op, no C.

    The op test files check the numpy reference (and its gradients) this way, quickly and
    without compiling C; the ``test_c_*`` files check the C kernels against that reference.
    """
    config.mode = "FAST_COMPILE"


@pytest.fixture(scope="session")
def _global_ipython():
    """IPython's global test shell (one per process: ``start_ipython`` works only once, and
    ``get_ipython`` must be read from the module after it ran)."""
    globalipapp = pytest.importorskip("IPython.testing.globalipapp")
    globalipapp.start_ipython()
    return globalipapp.get_ipython()


@pytest.fixture
def ipython_shell(_global_ipython):
    """The global IPython shell with ``%load_ext tensorgraph`` in effect (a test may have
    unloaded it)."""
    if "tg_config" not in _global_ipython.magics_manager.magics["line"]:
        _global_ipython.run_line_magic("load_ext", "tensorgraph")
    return _global_ipython
