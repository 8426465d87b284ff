"""The PyMC benchmark case (``benchmarks/cases/pymc_logp.py``, issue 34) runs: one gallery model
in mode TENSORGRAPH and PyTensor's C, a row with both times and their ratio, and a report with
the median ratio. Timings belong to the benchmark (``benchmarks/run.py --cases pymc_logp``),
not to tests; NUMBA's compile (seconds) is left to the benchmark too."""

import io
import os
import sys

import pytest

pytest.importorskip("pymc")

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "benchmarks")


def test_pymc_logp_case_measures_a_model_and_reports_the_median():
    sys.path.insert(0, BENCHMARKS)
    try:
        from cases import pymc_logp
        from run import fmt_time, interleaved
    finally:
        sys.path.remove(BENCHMARKS)
    notes = []
    rows = pymc_logp.measure(interleaved, tiny=True, rounds=1, batch_seconds=0.002,
                             notes=notes, modes=["TENSORGRAPH", "PyTensor C"],
                             names=["eight_noncentered"])
    assert notes == []  # compiled in both modes, first results agree
    [row] = rows
    assert isinstance(row["TENSORGRAPH"], float) and isinstance(row["PyTensor C"], float)
    assert row["ratio"] == row["TENSORGRAPH"] / row["PyTensor C"]
    out = io.StringIO()
    missed = pymc_logp.report(rows, fmt_time, out=out)
    text = out.getvalue()
    assert "eight_noncentered" in text and "median TENSORGRAPH / PyTensor C over 1 models" in text
    assert missed in ([], ["PyMC logp median ratio"])
