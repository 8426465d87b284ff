"""The compiled-module cache in one process: keys, disk entries, errors, flags and the CLI.

Several processes sharing one cache are tested in test_cmodule_processes.py.
"""

import json
import os
import subprocess
import threading
import warnings

import pytest

import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.__main__ import main
from tensorgraph.link.c import cache, cmodule, compiler
from tensorgraph.link.c.cmodule import (
    CompilationUnavailable,
    CompileError,
    ModuleCacheWarning,
    get_module,
)
from tensorgraph.link.c.locking import stale_reason

pytestmark = pytest.mark.skipif(not config.cxx, reason="needs a C compiler")

SOURCE = "int add(int a, int b) { return a + b + OFFSET; }"
CDEF = "int add(int, int);"


def source(offset: int) -> str:
    return f"#define OFFSET {offset}\n{SOURCE}\n"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """An empty compiledir for this test (a read-only flag, so it is set the way the
    conftest fixture restores flags) and no modules remembered in memory."""
    root = tmp_path / "compiledir"
    config._values["compiledir"] = str(root)
    monkeypatch.setattr(cmodule, "_caches", {})
    return root


@pytest.fixture
def compiles(monkeypatch):
    """The list of compiler commands run during the test."""
    seen = []
    real = compiler.run

    def counting(cmd, *args, **kwargs):
        seen.append(cmd)
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(compiler, "run", counting)
    return seen


def forget_memory(monkeypatch):
    monkeypatch.setattr(cmodule, "_caches", {})


def only_entry(root):
    found = cache.entries(str(root))
    assert len(found) == 1, found
    return found[0]


def test_get_module_compiles_once_and_records_a_manifest(cache_dir, compiles):
    mod = get_module(source(1), CDEF, name_hint="add.one", origin="the test")
    assert mod.lib.add(2, 3) == 6
    assert mod.ffi is not None
    assert get_module(source(1), CDEF, name_hint="add.one") is mod
    assert len(compiles) == 1

    entry = only_entry(cache_dir)
    manifest = entry.manifest
    assert manifest["module"].startswith("_tg_add_one_")
    assert manifest["origin"] == "for the test"
    assert manifest["sha256"] == cache.sha256_file(os.path.join(entry.path, manifest["file"]))
    parts = manifest["key_parts"]
    assert parts["config"] == config.c_key_hash()
    assert parts["compiler"] == config.cxx and parts["compiler_version"]
    assert "-march=native" in parts["flags"]
    for name in ("source", "cdef", "numpy", "python", "cpu", "runtime"):
        assert name in parts
    assert mod.__file__ == os.path.join(entry.path, manifest["file"])


def test_key_follows_source_runtime_version_and_c_flags(cache_dir, compiles):
    get_module(source(1), CDEF, name_hint="k")
    get_module(source(2), CDEF, name_hint="k")
    get_module(source(1), CDEF, name_hint="k", runtime_version="runtime 2")
    with config.change_flags(gcc__cxxflags="-DUNUSED_FLAG=1"):
        assert get_module(source(1), CDEF, name_hint="k").lib.add(0, 0) == 1
    assert len(compiles) == 4
    assert len(cache.entries(str(cache_dir))) == 4
    # the hint only names the module: same code, same entry
    get_module(source(1), CDEF, name_hint="other name")
    assert len(compiles) == 4


def test_a_fresh_cache_loads_from_disk_without_the_compiler(cache_dir, compiles, monkeypatch):
    get_module(source(3), CDEF, name_hint="disk")
    forget_memory(monkeypatch)
    monkeypatch.setattr(compiler, "run", lambda *a, **k: pytest.fail("compiled again"))
    monkeypatch.setattr(compiler, "_versions", {})  # the version comes from its disk file
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("ran a program"))
    assert get_module(source(3), CDEF, name_hint="disk").lib.add(1, 1) == 5


def test_preload_cache_reads_all_manifests_once(cache_dir, monkeypatch, compiles):
    get_module(source(4), CDEF, name_hint="pre")
    forget_memory(monkeypatch)
    config._values["cmodule__preload_cache"] = True
    reads = []
    real = cache.entries
    monkeypatch.setattr(cache, "entries", lambda root: reads.append(root) or real(root))
    assert get_module(source(4), CDEF, name_hint="pre").lib.add(0, 0) == 4
    assert get_module(source(5), CDEF, name_hint="pre").lib.add(0, 0) == 5
    assert len(reads) == 1 and len(compiles) == 2


@pytest.mark.parametrize("damage", ["truncate library", "garbage manifest", "no manifest"])
def test_a_corrupt_entry_is_removed_and_rebuilt_with_one_warning(cache_dir, monkeypatch,
                                                                 compiles, damage):
    get_module(source(6), CDEF, name_hint="corrupt")
    entry = only_entry(cache_dir)
    manifest_path = os.path.join(entry.path, cache.MANIFEST)
    if damage == "truncate library":
        so = os.path.join(entry.path, entry.manifest["file"])
        with open(so, "r+b") as f:
            f.truncate(100)
    elif damage == "garbage manifest":
        with open(manifest_path, "w") as f:
            f.write("{not json")
    else:
        os.unlink(manifest_path)
    forget_memory(monkeypatch)
    with pytest.warns(ModuleCacheWarning, match="corrupt") as caught:
        mod = get_module(source(6), CDEF, name_hint="corrupt")
    assert len([w for w in caught if issubclass(w.category, ModuleCacheWarning)]) == 1
    assert mod.lib.add(1, 2) == 9
    assert len(compiles) == 2
    rebuilt = only_entry(cache_dir)
    assert rebuilt.manifest["sha256"] == cache.sha256_file(
        os.path.join(rebuilt.path, rebuilt.manifest["file"]))


def test_compile_error_shows_numbered_source_lines_and_origin(cache_dir):
    bad = "int add(int a, int b) {\n    int c = a;\n    return c + undefined_name;\n}\n"
    with pytest.raises(CompileError) as info:
        get_module(bad, CDEF, name_hint="bad", origin="my op")
    text = str(info.value)
    assert "C compilation of module '_tg_bad_" in text and "for my op" in text
    assert "module source, line 3: error:" in text and "undefined_name" in text
    assert ">    3 |     return c + undefined_name;" in text
    assert "    2 |     int c = a;" in text
    assert "nocleanup" in text
    assert cache.entries(str(cache_dir)) == []
    assert not os.listdir(cache_dir / cache.TMP)


@pytest.mark.parametrize("kwargs, expected", [
    ({"source": None}, "source must be a str, got NoneType"),
    ({"libraries": "m"}, "libraries must be a sequence of strings, got 'm'"),
    ({"include_dirs": [3]}, "include_dirs must be a sequence of strings"),
])
def test_bad_arguments_are_named(cache_dir, kwargs, expected):
    args = {"source": source(1), "cdef": CDEF, "name_hint": "args", **kwargs}
    with pytest.raises(TypeError, match=expected):
        get_module(args.pop("source"), args.pop("cdef"), **args)


def test_compile_error_keeps_to_the_first_errors(cache_dir):
    bad = "int add(int a, int b) {\n" + "".join(f"  a += u{i};\n" for i in range(12)) + "}\n"
    with pytest.raises(CompileError) as info:
        get_module(bad, CDEF, name_hint="many")
    text = str(info.value)
    assert text.count("error:") == compiler.MAX_ERRORS
    assert "more error(s)" in text
    assert len(text.splitlines()) < 40


def test_compile_error_names_the_node_and_the_user_line(cache_dir):
    x = tt.vector("x")
    node = tt.exp(x).owner
    with pytest.raises(CompileError) as info:
        get_module("int add(int a, int b) { return oops; }", CDEF, name_hint="n", origin=node)
    text = str(info.value)
    assert "for node" in text and "test_cmodule.py" in text


def test_nocleanup_keeps_the_generated_c(cache_dir):
    config.nocleanup = True
    with pytest.raises(CompileError) as info:
        get_module("int add(int a, int b) { return oops; }", CDEF, name_hint="kept")
    assert "generated C kept in" in str(info.value)
    get_module(source(7), CDEF, name_hint="kept")
    kept = [f for _, _, files in os.walk(cache_dir / cache.TMP) for f in files
            if f.endswith(".c")]
    assert len(kept) == 2


def test_bad_cdef_is_a_compile_error(cache_dir):
    with pytest.raises(CompileError, match="cdef of C module .* does not parse"):
        get_module(source(1), "int add(int, ;", name_hint="cdef")


@pytest.mark.parametrize("cxx", ["", "/nonexistent/cc"])
def test_no_compiler_raises_compilation_unavailable(cache_dir, cxx):
    config.cxx = cxx
    with pytest.raises(CompilationUnavailable, match="cxx"):
        get_module(source(1), CDEF, name_hint="none")


def test_unversioned_modules_stay_in_memory_and_warn(cache_dir, compiles):
    config.cmodule__warn_no_version = True
    with pytest.warns(ModuleCacheWarning, match="MyOp"):
        mod = get_module(source(8), CDEF, name_hint="unv", unversioned=["MyOp"])
    assert mod.lib.add(0, 0) == 8
    assert get_module(source(8), CDEF, name_hint="unv", unversioned=["MyOp"]) is mod
    assert len(compiles) == 1
    assert cache.entries(str(cache_dir)) == []
    assert not os.listdir(cache_dir / cache.TMP)


def test_products_and_sums_round_as_numpy(cache_dir):
    """No FMA contraction: a * b + c rounds the product first, as numpy does (with contraction
    gcc -march=native on an FMA CPU returns the exact -2**-60 here)."""
    import numpy as np

    mod = get_module("double madd(double a, double b, double c) { return a * b + c; }",
                     "double madd(double, double, double);", name_hint="madd")
    a, b = 1 + 2.0 ** -30, 1 - 2.0 ** -30
    assert mod.lib.madd(a, b, -1.0) == np.float64(a) * np.float64(b) - 1.0 == 0.0


def test_flags_shape_the_command(cache_dir, compiles, capsys):
    assert "-O3" in compiler.compile_flags()
    with config.change_flags(cmodule__remove_gxx_opt=True, gcc__cxxflags="-O2 -DX=1"):
        flags = compiler.compile_flags(["-Os"])
        assert not [f for f in flags if f.startswith("-O")] and "-DX=1" in flags
    for openmp in (False, True):  # no OpenMP runtime either way: -fopenmp-simd only
        with config.change_flags(openmp=openmp):
            flags = compiler.compile_flags()
            assert "-fopenmp-simd" in flags and "-fopenmp" not in flags
    with config.change_flags(cmodule__debug=True):
        assert {"-g", "-O0"} <= set(compiler.compile_flags())
        get_module(source(9), CDEF, name_hint="dbg")
    assert "-g" in compiles[-1]
    assert config.cxx in capsys.readouterr().err


def test_compilation_warning_flag_shows_compiler_output(cache_dir):
    noisy = '#warning "hello from the compiler"\n' + source(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        get_module(noisy, CDEF, name_hint="quiet")
    config.cmodule__compilation_warning = True
    with pytest.warns(ModuleCacheWarning, match="hello from the compiler"):
        get_module(noisy + "\n", CDEF, name_hint="noisy")


def test_libraries_are_found_through_the_run_path(cache_dir, tmp_path):
    libdir = tmp_path / "lib"
    libdir.mkdir()
    (libdir / "twice.c").write_text("int twice(int x) { return 2 * x; }\n")
    subprocess.run([config.cxx, "-shared", "-fPIC", str(libdir / "twice.c"), "-o",
                    str(libdir / "libtgtwice.so")], check=True)
    mod = get_module("int twice(int);\nint quad(int x) { return twice(twice(x)); }",
                     "int quad(int);", name_hint="rpath", libraries=["tgtwice"],
                     library_dirs=[str(libdir)])
    assert mod.lib.quad(3) == 12


def test_threads_asking_for_one_module_compile_it_once(cache_dir, compiles):
    results = []
    threads = [threading.Thread(target=lambda: results.append(
        get_module(source(10), CDEF, name_hint="threads"))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(r is results[0] for r in results)
    assert len(compiles) == 1


def test_stale_reason_of_a_dead_or_silent_holder():
    import socket
    import time

    finished = subprocess.Popen(["true"])
    finished.wait()
    dead = {"pid": finished.pid, "host": socket.gethostname(), "touched": 0.0}
    assert "dead" in stale_reason(dead, "", 0.0)
    alive = {"pid": os.getpid(), "host": socket.gethostname(), "touched": 0.0}
    assert "no activity" in stale_reason(alive, "", 0.0)
    fresh = dict(alive, touched=time.time())
    assert stale_reason(fresh, "", time.time()) == ""
    assert stale_reason(None, "", time.time()) == ""


def test_cache_command_lists_clears_unlocks_and_purges(cache_dir, capsys):
    get_module(source(11), CDEF, name_hint="cli", origin="the cli test")
    assert main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert str(cache_dir) in out and "_tg_cli_" in out and "for the cli test" in out
    assert "1 module(s)" in out

    assert main(["cache", "clear"]) == 0
    assert "removed 0 module(s)" in capsys.readouterr().out
    assert len(cache.entries(str(cache_dir))) == 1

    assert main(["cache", "unlock"]) == 0
    assert "removed 1 lock file(s) (0 held)" in capsys.readouterr().out
    assert not os.listdir(cache_dir / cache.LOCKS)

    assert main(["cache", "clear", "--age", "0"]) == 0
    assert "removed 1 module(s)" in capsys.readouterr().out
    assert cache.entries(str(cache_dir)) == []

    get_module(source(12), CDEF, name_hint="cli")
    assert main(["cache", "purge"]) == 0
    assert "1 module(s)" in capsys.readouterr().out
    assert not cache_dir.exists()


def test_clear_removes_modules_by_last_use(cache_dir, monkeypatch):
    get_module(source(13), CDEF, name_hint="old")
    get_module(source(14), CDEF, name_hint="new")
    old = [e for e in cache.entries(str(cache_dir)) if "_old_" in e.name][0]
    os.utime(os.path.join(old.path, cache.MANIFEST), (1, 1))
    removed = cache.clear(str(cache_dir), 3600)
    assert [e.name for e in removed] == [old.name]
    assert [e.name for e in cache.entries(str(cache_dir))] != [old.name]
    assert len(cache.entries(str(cache_dir))) == 1
    # a module used again is recorded as used
    forget_memory(monkeypatch)
    new = only_entry(cache_dir)
    os.utime(os.path.join(new.path, cache.MANIFEST), (1, 1))
    get_module(source(14), CDEF, name_hint="new")
    assert cache.clear(str(cache_dir), 3600) == []


def test_manifest_is_json_with_key_parts(cache_dir):
    get_module(source(15), CDEF, name_hint="json")
    entry = only_entry(cache_dir)
    with open(os.path.join(entry.path, cache.MANIFEST)) as f:
        data = json.load(f)
    assert data["key"] == entry.key and data["command"][0] == config.cxx


def test_old_modules_are_cleared_automatically_once_a_day(cache_dir, monkeypatch):
    get_module(source(16), CDEF, name_hint="aging")
    old = only_entry(cache_dir)
    os.utime(os.path.join(old.path, cache.MANIFEST), (1, 1))
    stamp = cache_dir / cache.CLEANUP_STAMP
    assert stamp.exists()
    forget_memory(monkeypatch)
    get_module(source(17), CDEF, name_hint="young")  # the stamp is fresh: nothing removed
    assert len(cache.entries(str(cache_dir))) == 2
    os.utime(stamp, (1, 1))
    forget_memory(monkeypatch)
    get_module(source(18), CDEF, name_hint="younger")
    assert old.name not in [e.name for e in cache.entries(str(cache_dir))]
    assert len(cache.entries(str(cache_dir))) == 2
