"""docs/pymc.md's examples run: its ```py blocks (not ```python: the main test venv, which runs
those, has no PyMC), in order, in one namespace."""

import re
from pathlib import Path

import pytest

pytest.importorskip("pymc")

PAGE = Path(__file__).parents[2] / "docs" / "pymc.md"
BLOCK = re.compile(r"^```py\n(.*?)^```", re.DOTALL | re.MULTILINE)


def test_pymc_page_examples_run(capsys):
    blocks = BLOCK.findall(PAGE.read_text())
    assert len(blocks) >= 3
    namespace = {"__name__": "docs_pymc"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{PAGE}:block{i}", "exec"), namespace)
    assert "PyTensor[" not in capsys.readouterr().out  # the example graphs convert whole
