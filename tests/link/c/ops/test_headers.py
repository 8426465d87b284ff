"""Every C file shipped beside the op implementations (tensorgraph/link/c/ops/*.h) compiles on
its own, so it can be compile-checked, highlighted and formatted as a file: with what every
unit of node functions starts with (runtime.h, tg_scalar.h), the files it says it needs
("Needs strided.h." in its text, included first) and nothing else."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

import tensorgraph.link.c as c_package

C_DIR = os.path.dirname(c_package.__file__)
OPS_DIR = os.path.join(C_DIR, "ops")
HEADERS = sorted(name for name in os.listdir(OPS_DIR) if name.endswith(".h"))
NEEDS = re.compile(r"\bNeeds ([\w.]+\.h(?:(?:, | and )[\w.]+\.h)*)\.")
GCC = shutil.which("gcc")
CLANG = shutil.which("clang")


def needs(name: str, chain: tuple = ()) -> list[str]:
    """The files ``name`` needs, theirs first, each once."""
    if name in chain:
        raise AssertionError(f"{' -> '.join(chain + (name,))}: the 'Needs' notes form a cycle")
    with open(os.path.join(OPS_DIR, name), encoding="utf-8") as f:
        text = f.read()
    order: list[str] = []
    for match in NEEDS.finditer(text):
        for needed in re.split(r", | and ", match.group(1)):
            assert needed in HEADERS, f"{name} needs {needed}, which is not in {OPS_DIR}"
            for dep in needs(needed, chain + (name,)) + [needed]:
                if dep not in order:
                    order.append(dep)
    return order


def test_there_are_headers():
    assert "strided.h" in HEADERS


def compile_alone(name: str, needed: list[str], cc: str | None = GCC
                  ) -> subprocess.CompletedProcess:
    # -fopenmp-simd as every unit is compiled (compiler.compile_flags): kernels use omp simd
    command = [cc, "-fsyntax-only", "-fopenmp-simd", "-Wall", "-Wextra", "-Werror", "-x", "c"]
    if cc == CLANG:  # clang also reports a file's unused static inline helpers
        command.append("-Wno-unused-function")
    for header in ("runtime.h", "tg_scalar.h"):
        command += ["-include", os.path.join(C_DIR, header)]
    for header in needed:
        command += ["-include", os.path.join(OPS_DIR, header)]
    return subprocess.run(command + [os.path.join(OPS_DIR, name)], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("cc", [GCC, CLANG], ids=["gcc", "clang"])
@pytest.mark.parametrize("name", HEADERS)
def test_header_compiles_alone(name, cc):
    """With gcc and with clang (config.cxx may be either)."""
    if cc is None:
        pytest.skip("compiler not installed")
    result = compile_alone(name, needs(name), cc)
    assert result.returncode == 0, f"{name} does not compile alone:\n{result.stderr}"


@pytest.mark.skipif(GCC is None, reason="gcc is not installed")
def test_a_missing_need_fails():
    """The check sees what a file leaves undeclared: join.h without strided.h."""
    assert needs("join.h") == ["strided.h"]
    assert needs("advanced_index.h") == ["strided.h"]
    result = compile_alone("join.h", [])
    assert result.returncode != 0 and "tg_copy_into" in result.stderr
