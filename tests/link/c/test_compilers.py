"""The same generated C builds and runs with gcc and with clang (config.cxx), and no module
either builds references an OpenMP runtime: parallel loops call tensorgraph's pool
explicitly (runtime.h's tg_run), so there is no GOMP_* / omp_* / __kmpc_* symbol to define or
to import, and no libgomp or libomp to link."""

import glob
import os
import re
import shutil
import subprocess
import textwrap

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 3))
GCC, CLANG, NM, READELF = (shutil.which(n) for n in ("gcc", "clang", "nm", "readelf"))
OPENMP_SYMBOL = re.compile(r"^(GOMP_|omp_|__kmpc_|kmp_)")

#: the seed step (benchmarks/cases/logreg.py, 400 x 784 float32: Gemv pair, elementwise
#: loops, reductions) and loops of every parallel kind, all split across 2 threads
SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import tensorgraph as tg, tensorgraph.tensor as tt
    sys.path.insert(0, {bench!r})
    from cases import logreg

    results = {{}}
    with tg.config.change_flags(floatX="float32"):
        step = logreg.make_tensorgraph(logreg.size(False))
    for k in range(3):
        prediction, xent = step()
        results[f"prediction{{k}}"], results[f"xent{{k}}"] = prediction, xent
    reference = logreg.make_numpy(logreg.size(False))
    for k in range(3):
        prediction, xent = reference()
        np.testing.assert_allclose(results[f"xent{{k}}"], xent, rtol=1e-4, atol=1e-5)
    x = tt.matrix("x", dtype="float64")
    f = tg.function([x], [tt.dot(x, x), tt.tanh(x).sum(axis=0), tt.exp(x) * 2, x.sum(),
                          tt.exp(x.T).sum(axis=1)])
    assert {{t.kind for t in f.vm.thunks}} == {{"c"}}
    a = np.random.default_rng(0).normal(size=(300, 300))
    for k, value in enumerate(f(a)):
        results[f"loop{{k}}"] = value
    np.savez({out!r}, **results)
""")


def _run(run_python, tmp_path, cxx):
    cache = tmp_path / os.path.basename(cxx)
    out = tmp_path / f"{os.path.basename(cxx)}.npz"
    flags = (f"cxx={cxx},base_compiledir={cache},openmp=True,pool__threads=2,"
             "openmp_elemwise_minsize=100,compile__tiers=False")
    code = SCRIPT.format(bench=os.path.join(ROOT, "benchmarks"), out=str(out))
    done = run_python("-c", code, env={"TENSORGRAPH_FLAGS": flags})
    assert done.returncode == 0, done.stderr[-3000:]
    libraries = glob.glob(os.path.join(cache, "**", "*.so"), recursive=True)
    assert len(libraries) >= 2, libraries  # the glue and node functions at least
    return dict(np.load(out)), libraries


def _openmp_references(library):
    """OpenMP symbols the library defines or imports, and OpenMP runtimes it needs."""
    symbols = subprocess.run([NM, "-D", library], capture_output=True, text=True,
                             check=True).stdout.split("\n")
    symbols += subprocess.run([NM, library], capture_output=True, text=True).stdout.split("\n")
    found = sorted({line.split()[-1] for line in symbols if line.split()
                    and OPENMP_SYMBOL.match(line.split()[-1])})
    needed = subprocess.run([READELF, "-d", library], capture_output=True, text=True).stdout
    found += re.findall(r"\[(lib(?:g|i5)?omp[^\]]*)\]", needed)
    return found


def _built_by(library) -> str:
    return subprocess.run([READELF, "-p", ".comment", library], capture_output=True,
                          text=True).stdout


@pytest.mark.skipif(None in (GCC, CLANG, NM, READELF), reason="needs gcc, clang, nm, readelf")
def test_the_seed_step_builds_and_runs_with_gcc_and_clang_alike(run_python, tmp_path):
    """Each compiler builds every module (its own cache), the results agree with numpy's
    step and with each other, and no module references OpenMP (checked with nm and the
    dynamic section: fails with the GOMP_parallel shim modules used to define)."""
    with_gcc, gcc_libraries = _run(run_python, tmp_path, GCC)
    with_clang, clang_libraries = _run(run_python, tmp_path, CLANG)
    assert with_gcc.keys() == with_clang.keys()
    for name in with_gcc:
        np.testing.assert_allclose(with_clang[name], with_gcc[name], rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    for library in clang_libraries:
        assert "clang version" in _built_by(library), library
    for library in gcc_libraries:
        assert "GCC:" in _built_by(library), library
    for library in gcc_libraries + clang_libraries:
        assert _openmp_references(library) == [], library
