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


ROOT = Path(__file__).parent.parent
PATH_REF = re.compile(r"`((?:\.\./|docs/|notebooks/|benchmarks/|binder/|tensorgraph/)[^`\s]*)`"
                      r"|\]\(((?!https?:)[^)#\s]+)\)")


@pytest.mark.parametrize("page", [ROOT / "README.md", *DOCS], ids=lambda p: p.name)
def test_pages_point_only_at_files_inside_the_repository(page):
    """A reader of the repository (or of its wheel's README on PyPI) can follow every path."""
    for match in PATH_REF.finditer(page.read_text()):
        ref = match.group(1) or match.group(2)
        target = (page.parent / ref) if match.group(2) else ROOT / ref
        target = target.resolve()
        assert target.is_relative_to(ROOT), f"{page.name} points outside the repository: {ref}"
        if "*" not in ref and "<" not in ref:
            assert target.exists(), f"{page.name} points at a missing file: {ref}"


def test_readme_links_the_architecture_and_lists_the_notebooks_in_order():
    readme = (ROOT / "README.md").read_text()
    assert "docs/architecture.md" in readme
    listed = list(dict.fromkeys(re.findall(r"`notebooks/(\d\d)_\w+\.ipynb`", readme)))
    assert listed and listed[0] == "00" and listed == sorted(listed)


MODULE_ROW = re.compile(r"^\| `([\w/]+\.py)` \|", re.M)


def test_every_module_is_listed_in_the_module_index():
    """docs/modules.md names every module of the package, and only modules that exist."""
    package = ROOT / "tensorgraph"
    modules = {str(p.relative_to(package)) for p in package.rglob("*.py")}
    listed = MODULE_ROW.findall((ROOT / "docs" / "modules.md").read_text())
    assert len(listed) == len(set(listed)), "a module is listed twice in docs/modules.md"
    missing = sorted(modules - set(listed))
    stale = sorted(set(listed) - modules)
    assert not missing, f"modules missing from docs/modules.md: {missing}"
    assert not stale, f"docs/modules.md lists modules that do not exist: {stale}"
