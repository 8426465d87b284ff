"""The browser benchmark of the graph view runs end to end (``benchmarks/graph_view_browser.py
--rounds 1``): every figure is measured for both graphs and for the compile report. Only the shape is checked here; the
figures and their targets belong to the benchmark."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parents[2]


@pytest.mark.slow  # starts a JupyterLab of its own: 30 s
def test_graph_view_browser_benchmark_measures_every_figure(lab_server, tmp_path):
    # lab_server: only for its skip (no chromium, no jupyterlab); the benchmark starts its own
    out = tmp_path / "figures.json"
    env = dict(os.environ, HOME=str(tmp_path))
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "graph_view_browser.py"), "--rounds", "1",
         "--json", str(out)], capture_output=True, text=True, timeout=400, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert set(figures) == {"seed train (compiled)", "64-layer MLP gradient", "compile report"}
    report = figures.pop("compile report")
    assert 0 < report["report_after_compile_ms"] < 60_000 and report["step_redraw_ms"] > 0
    assert report["step_nodes"] >= 500 and report["stepper_step_ms"] > 0
    mlp = figures["64-layer MLP gradient"]
    assert mlp["nodes"] > 1100 and mlp["expand_ms"] > 0
    for row in figures.values():
        assert row["first_drawing_ms"] > 0 and row["panel_ms"] > 0 and row["bytes_per_node"] > 0
    assert "first drawing" in done.stdout and "compile report: drawn" in done.stdout
