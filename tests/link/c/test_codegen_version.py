"""The code generator's version is a hash of the files that shape generated C
(``tensorgraph/link/c/codegen_version.py``): editing a header or the generator changes it, so
cached node functions built against the old text are not found any more, without a bump."""

import os
import shutil

import pytest

import tensorgraph.link.c as c_package
from tensorgraph.link.c.codegen_version import codegen_version, content_hash

C_DIR = os.path.dirname(c_package.__file__)


@pytest.fixture
def c_copy(tmp_path):
    """A temporary copy of the C back end's directory."""
    copy = tmp_path / "c"
    shutil.copytree(C_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _append(path, text):
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


def test_the_version_is_the_hash_of_the_package_files():
    assert codegen_version() == f"codegen-{content_hash(C_DIR)}"


@pytest.mark.parametrize("edited", ["runtime.h", "ops/blas.h", "glue.h", "codegen.py"])
def test_editing_a_header_or_the_generator_changes_the_hash(c_copy, edited):
    before = content_hash(str(c_copy))
    assert before == content_hash(C_DIR)
    _append(c_copy / edited, "\n/* edited */\n" if edited.endswith(".h") else "\n# edited\n")
    assert content_hash(str(c_copy)) != before


def test_an_ops_own_python_is_not_hashed_its_node_functions_name_is(c_copy):
    """An op's C text is hashed into its node function's name: editing it must not make
    every cached library of every other op stale."""
    before = content_hash(str(c_copy))
    _append(c_copy / "ops" / "reduction.py", "\n# edited\n")
    assert content_hash(str(c_copy)) == before


def test_a_new_header_changes_the_hash(c_copy):
    before = content_hash(str(c_copy))
    (c_copy / "ops" / "new.h").write_text("/* new */\n")
    assert content_hash(str(c_copy)) != before


def test_every_process_gets_the_same_version(run_python):
    code = ("from tensorgraph.link.c.codegen_version import codegen_version\n"
            "print(codegen_version())\n")
    runs = [run_python("-c", code) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert [r.stdout.strip() for r in runs] == [codegen_version()] * 2


def test_a_path_that_is_no_directory_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="takes the directory of the C back end"):
        content_hash(str(tmp_path / "missing"))
