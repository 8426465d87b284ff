"""The documentation's examples run: every ```python block of docs/*.md, in order, per page."""

import re
from pathlib import Path

import pytest

DOCS = sorted((Path(__file__).parent.parent / "docs").glob("*.md"))
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("page", DOCS, ids=[p.name for p in DOCS])
def test_doc_examples_run(page):
    blocks = BLOCK.findall(page.read_text())
    namespace = {"__name__": f"docs_{page.stem}"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{page}:block{i}", "exec"), namespace)


def test_readme_quick_start_runs():
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1]
    code = BLOCK.findall(section)[0]
    exec(compile(code, "README.md:quick-start", "exec"), {"__name__": "readme"})
