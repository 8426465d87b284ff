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
