"""The tutorial notebooks' graphs compile in modes JAX and NUMBA: every notebook runs (in this
process's IPython shell, magics included) as written, and every function it compiles is
compiled again, from the same graph and shared variables, in JAX and in NUMBA."""

import json
import warnings

import pytest
from tutorials import NOTEBOOKS as ALL_NOTEBOOKS
from tutorials import bridge_skip

from tensorgraph.link.compile_events import listening
from tensorgraph.compile.mode import get_mode
from tensorgraph.link.backend import UnsupportedOpsError

IPython = pytest.importorskip("IPython")
pytest.importorskip("jax")
pytest.importorskip("numba")

#: 00 sets flags and compiles nothing; 10 starts a Dask cluster (its graphs are 05's)
NOTEBOOKS = [p for p in ALL_NOTEBOOKS if not p.name.startswith(("00_", "10_"))]


def recompile(function, mode_name):
    """``function``'s graph (as given, before rewriting) compiled in another mode."""
    maker = function.maker
    other = object.__new__(type(maker))
    other.__dict__.update(maker.__getstate__())
    other.mode = get_mode(mode_name)
    other.profile = None
    other.fgraph = other._rewritten(*maker.original_graph)
    other.linker = other.mode.linker
    return other.create()


#: 08's RNNs and their gradients in NUMBA take 35 s cold, 11's linear algebra 19 s, 09's modes
#: 8 s (tests/link/test_backend_scan.py, test_linalg_backends.py and test_backend_modes.py run
#: such graphs in every mode): a slow sweep
@pytest.mark.parametrize("notebook", [
    pytest.param(p, marks=bridge_skip(p) + (
        [pytest.mark.slow] if p.name.startswith(("08_", "09_", "11_")) else []))
    for p in NOTEBOOKS], ids=lambda p: p.stem)
def test_every_function_of_the_notebook_compiles_in_jax_and_numba(notebook, ipython_shell,
                                                                    tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cells = [c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code"]
    compiled, failures = [], []

    def on_compile(event, info):
        if event != "done":
            return
        function = info["function"]
        for mode in ("JAX", "NUMBA"):
            try:
                recompile(function, mode)
            except UnsupportedOpsError as exc:
                # an op the notebook defines itself (06 writes one) has no JAX or Numba of
                # its own; every tensorgraph op must have, but for the one refusal JAX
                # documents: a while loop whose whole history is read (08's power iteration
                # counts its steps), as its length is known only when the loop has run
                own = [n for n, why in exc.problems if type(n.op).__module__ != "__main__"
                       and not (mode == "JAX" and "is a while loop (until)" in why)]
                if own:
                    failures.append(f"{function.name or function}: {mode}: {exc}")
            except Exception as exc:  # noqa: BLE001 - every failure is a finding
                failures.append(f"{function.name or function}: {mode}: {type(exc).__name__}: "
                                f"{str(exc)[:400]}")
        compiled.append(function)

    with listening(on_compile), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cell in cells:
            source = "".join(cell["source"])
            result = ipython_shell.run_cell(source, silent=True)
            allowed = "raises-exception" in cell.get("metadata", {}).get("tags", [])
            if not allowed and result.error_in_exec is not None:
                pytest.fail(f"cell failed: {source[:200]}: {result.error_in_exec!r}")
    assert compiled and failures == []
