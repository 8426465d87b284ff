"""The optimized tier's compilers run at a lower priority than those a first result waits
for (docs/architecture.md, "Compile tiers"): on a busy machine the quick tier's compiles get
the cores first."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from tensorgraph.link import tiers
from tensorgraph.link.c import compiler

pytestmark = pytest.mark.skipif(shutil.which("nice") is None, reason="no nice command")

_NICENESS = [sys.executable, "-c", "import os; print(os.nice(0))"]


def _niceness_of_a_compiler() -> int:
    out, _ = compiler.spawn(_NICENESS).communicate(timeout=60)
    return int(out)


def test_compilers_started_in_the_background_are_niced():
    mine = os.nice(0)
    assert _niceness_of_a_compiler() == mine
    with compiler.in_background():
        assert _niceness_of_a_compiler() == min(19, mine + compiler.BACKGROUND_NICENESS)
    assert _niceness_of_a_compiler() == mine


def test_the_optimized_tiers_build_runs_in_the_background():
    job = tiers.TierJob(_niceness_of_a_compiler, 0.0)
    assert job.result(timeout=60) == min(19, os.nice(0) + compiler.BACKGROUND_NICENESS)
