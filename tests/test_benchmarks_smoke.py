"""The benchmark runner works end to end: ``benchmarks/run.py --quick --tiny`` measures every
throughput case and prints the table; when PyTensor is installed, it joins on one case (its
function compiles take seconds each even with a warm cache). Only the table's shape is checked:
timings belong to the benchmark, not to tests. The compile-time rows (new processes, an empty
cache) are left to the real runs."""

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_table(tmp_path, cases, frameworks, extra=()):
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--quick", "--tiny",
         "--cases", ",".join(cases), "--frameworks", ",".join(frameworks), *extra],
        capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("case "))
    for fw in frameworks:
        assert fw in header
    return done.stdout, lines


def row(lines, title):
    found = next(line for line in lines if line.startswith(title))
    assert "error" not in found and any(unit in found for unit in (" ns", " us", " ms")), found
    return found


def test_quick_tiny_run_prints_every_case(tmp_path):
    out, lines = run_table(tmp_path, ["logreg", "mlp", "overhead", "overhead_trusted", "chain"],
                           ["tensorgraph", "numpy"])
    for title in ("logreg train step 40x78 f32", "MLP step 16x78-32-10 f32",
                  "call overhead f(x)=x+1, 10 floats", "call overhead, trust_input=True",
                  "elementwise chain, 1e+04 f32"):
        assert row(lines, title).split()[-1] in ("ok", "MISSED", "n/a"), out


@pytest.mark.skipif(importlib.util.find_spec("pytensor") is None,
                    reason="pytensor is not installed (the bench extra)")
def test_pytensor_joins_the_table(tmp_path):
    out, lines = run_table(tmp_path, ["overhead"], ["tensorgraph", "pytensor"])
    cells = row(lines, "call overhead f(x)=x+1, 10 floats")
    assert "x pytensor" in cells and cells.split()[-1] in ("ok", "MISSED"), out


def test_a_loaded_run_reports_the_spread(tmp_path):
    out, lines = run_table(tmp_path, ["logreg"], ["tensorgraph", "numpy"], ["--load", "1"])
    assert "1 CPU-bound processes beside it" in out
    note = next(line for line in lines if "under load 1: worst batch / median batch" in line)
    assert "tensorgraph" in note and "numpy" in note
    assert any("tensorgraph's spread" in line for line in lines), out
    assert "<= 1x numpy" in row(lines, "logreg train step 40x78 f32"), out


def test_compile_scaling_prints_its_table(tmp_path):
    """The scaling table (new processes, 1 and 2 layers when tiny) has a row per size."""
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--quick", "--tiny",
         "--cases", "scaling", "--frameworks", "tensorgraph"],
        capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = lines.index(next(line for line in lines if line.strip().startswith("layers")))
    for layers, line in zip((1, 2), lines[header + 2:header + 4]):
        cells = line.split()
        assert cells[0] == str(layers) and int(cells[1]) > 10, line
        assert all(unit in line for unit in ("ms",)), line


def test_rnn_cases_run(tmp_path):
    """The scan RNN cases (issue 22): forward and training step, the latter with two targets
    (numpy and PyTensor; the PyTensor one shows when PyTensor runs)."""
    out, lines = run_table(tmp_path, ["rnn_forward", "rnn_train"], ["tensorgraph", "numpy"])
    row(lines, "RNN forward 10 steps, 4x8-16 f32")
    train = row(lines, "RNN train step (BPTT) 10 steps, 4x8-16 f32")
    assert "<= 0.6x numpy" in train and train.split()[-1] in ("ok", "MISSED"), out


def cells_of(lines, title, frameworks):
    """framework -> cell of the main table's row ``title`` (cells are 2+ spaces apart)."""
    import re

    found = next(line for line in lines if line.startswith(title))
    cells = re.split(r"\s{2,}", found.strip())
    return dict(zip(frameworks, cells[1:1 + len(frameworks)]))


def is_time(cell):
    return any(cell.endswith(unit) for unit in (" ns", " us", " ms", " s"))


@pytest.mark.slow  # compiles every case in the three modes: 20 s
@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_the_modes_and_jax_by_hand_join_the_table(tmp_path):
    """Columns for JAX written by hand and tensorgraph's JAX, NUMBA and PYTORCH modes on one
    case (each a compile of its own: seconds for PyTorch): a time where the back end is
    installed, "n/a (not installed)" where not, never "error"; the first results agree with
    FAST_RUN's; the table of times over FAST_RUN's has the row."""
    frameworks = ["tensorgraph", "jax", "tg:JAX", "tg:NUMBA", "tg:PYTORCH"]
    out, lines = run_table(tmp_path, ["chain"], frameworks)
    cells = cells_of(lines, "elementwise chain, 1e+04 f32", frameworks)
    needs = {"jax": "jax", "tg:JAX": "jax", "tg:NUMBA": "numba", "tg:PYTORCH": "torch"}
    for fw, module in needs.items():
        if importlib.util.find_spec(module) is None:
            assert cells[fw] == "n/a (not installed)", (fw, out)
        else:
            assert is_time(cells[fw]), (fw, out)
    assert "differs from FAST_RUN" not in out, out
    relative = lines.index(next(line for line in lines if line.startswith("time over")))
    assert lines[relative + 1].split() == ["case"] + frameworks[1:], out
    ratios = cells_of(lines[relative:], "elementwise chain", frameworks[1:])
    for fw, ratio in ratios.items():
        assert ratio.endswith("x") if is_time(cells[fw]) else ratio == "n/a", (fw, out)


@pytest.mark.slow  # 12 s; test_rnn_cases_run runs the RNN cases in FAST_RUN
@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_the_scan_rnn_runs_by_hand_in_jax_and_in_the_modes(tmp_path):
    """The scan RNN: JAX by hand (lax.scan) and tensorgraph's JAX and NUMBA modes run it, and
    their results agree with FAST_RUN's (PYTORCH, whose cold start of Inductor is too long for
    a smoke test, is checked by tests/link/test_backend_scan.py)."""
    frameworks = ["tensorgraph", "jax", "tg:JAX", "tg:NUMBA"]
    out, lines = run_table(tmp_path, ["rnn_forward"], frameworks)
    cells = cells_of(lines, "RNN forward 10 steps, 4x8-16 f32", frameworks)
    assert all(is_time(cells[fw]) for fw in frameworks), out
    assert "differs from FAST_RUN" not in out, out
