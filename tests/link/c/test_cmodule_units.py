"""Libraries of several translation units (get_library), the glue module shared by every
graph, and node functions compiled once and reused by later graphs of the process."""

import os

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.compile.mode import Mode
from tensorgraph.link.c import cache, cmodule, codegen, compiler
from tensorgraph.link.c.cmodule import CompileError, ModuleCacheWarning, get_library, get_module

pytestmark = pytest.mark.skipif(not config.cxx, reason="needs a C compiler")

HELPER = "int tg_test_twice(int x) { return 2 * x; }\n"
CALLER = ("int tg_test_twice(int x);\n"
          "int tg_test_quad(int x) { return tg_test_twice(tg_test_twice(x)); }\n")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """An empty compiledir, and no modules (nor node functions) remembered in memory."""
    root = tmp_path / "compiledir"
    config._values["compiledir"] = str(root)
    monkeypatch.setattr(cmodule, "_caches", {})
    return root


@pytest.fixture
def commands(monkeypatch):
    """Every compiler command run during the test, in order (``compiler.run`` runs its one
    command through ``run_many`` too)."""
    seen = []
    real_many = compiler.run_many

    def run_many(cmds, *args, **kwargs):
        seen.extend(cmds)
        return real_many(cmds, *args, **kwargs)

    monkeypatch.setattr(compiler, "run_many", run_many)
    return seen


def test_library_of_two_units_compiles_them_apart_links_and_is_cached(cache_dir, commands,
                                                                      monkeypatch):
    lib = get_library([CALLER, HELPER], name_hint="units")
    assert lib.tg_test_quad(3) == 12
    objects = [cmd for cmd in commands if "-c" in cmd]
    assert len(objects) == 2 and len(commands) == 3  # two units, then one link
    link = commands[-1]
    assert "-shared" in link and sum(arg.endswith(".o") for arg in link) == 2

    assert get_library([CALLER, HELPER], name_hint="units") is lib  # memory
    monkeypatch.setattr(cmodule, "_caches", {})
    found = []
    again = get_library([CALLER, HELPER], name_hint="units", found=found.append)
    assert again.tg_test_quad(5) == 20 and found == ["disk"] and len(commands) == 3
    (entry,) = cache.entries(str(cache_dir))
    assert entry.manifest["kind"] == "library"


@pytest.mark.parametrize("damage", ["checksum", "not loadable"])
def test_a_corrupt_library_is_removed_and_rebuilt_with_one_warning(cache_dir, commands,
                                                                   monkeypatch, damage):
    get_library([CALLER, HELPER], name_hint="units")
    (entry,) = cache.entries(str(cache_dir))
    so = os.path.join(entry.path, entry.manifest["file"])
    with open(so, "r+b") as f:
        f.truncate(100)
    if damage == "not loadable":  # the manifest agrees with the damaged file: dlopen fails
        manifest = dict(entry.manifest, size=100, sha256=cache.sha256_file(so))
        cache.write_manifest(entry.path, manifest)
    monkeypatch.setattr(cmodule, "_caches", {})
    with pytest.warns(ModuleCacheWarning, match="corrupt") as caught:
        lib = get_library([CALLER, HELPER], name_hint="units")
    assert len([w for w in caught if issubclass(w.category, ModuleCacheWarning)]) == 1
    assert lib.tg_test_quad(2) == 8 and len(commands) == 6


def test_changing_one_unit_makes_another_library(cache_dir, commands):
    get_library([CALLER, HELPER], name_hint="units")
    other = get_library([CALLER, HELPER.replace("2 * x", "3 * x")], name_hint="units")
    assert other.tg_test_quad(1) == 9
    assert len(cache.entries(str(cache_dir))) == 2


def test_error_in_the_second_unit_shows_that_units_lines(cache_dir):
    broken = HELPER.replace("2 * x", "2 * undefined_name")
    with pytest.raises(CompileError) as info:
        get_library([CALLER, broken], name_hint="units", origin="the unit test")
    text = str(info.value)
    assert "undefined_name" in text and "undeclared" in text and "for the unit test" in text
    assert "2 * undefined_name" in text
    assert not cache.entries(str(cache_dir))


def test_a_library_needs_units(cache_dir):
    with pytest.raises(ValueError, match="units is empty"):
        get_library([], name_hint="none")
    with pytest.raises(TypeError, match="units must be a sequence of strings"):
        get_library(HELPER, name_hint="str")


def test_cached_only_never_compiles(cache_dir, commands):
    src = "int tg_test_one(void) { return 1; }"
    assert get_module(src, "int tg_test_one(void);", name_hint="one", cached_only=True) is None
    assert not commands
    module = get_module(src, "int tg_test_one(void);", name_hint="one")
    assert get_module(src, "int tg_test_one(void);", name_hint="one",
                      cached_only=True) is module


def _symbols(f):
    return [fn.symbol for fn in f.vm.cgraph.functions]


def test_later_graphs_reuse_the_node_functions_compiled_before(cache_dir, commands):
    x = tt.dmatrix("x")
    fast = Mode("cvm", "fast_run")
    first = tensorgraph.function([x], x.sum(axis=0), mode=fast)
    assert first.vm.cgraph.found == "compiled"
    glue_and_first = len(commands)

    second = tensorgraph.function([x], [x.sum(axis=0), x.max(axis=1)], mode=fast)
    assert second.vm.cgraph.found == "compiled"
    shared = set(_symbols(first)) & set(_symbols(second))
    assert shared
    library = second.vm.cgraph.library
    for symbol in shared:  # not compiled again: the second library lacks them
        with pytest.raises(AttributeError):
            getattr(library, symbol)
    assert len(commands) == glue_and_first + 1  # a one-unit library, no second glue

    third = tensorgraph.function([x], x.max(axis=1), mode=fast)
    assert third.vm.cgraph.found == "memory" and third.vm.cgraph.library is None
    assert len(commands) == glue_and_first + 1

    value = np.arange(12.0).reshape(3, 4)[:, ::-1]
    np.testing.assert_array_equal(first(value), value.sum(axis=0))
    a, b = second(value)
    np.testing.assert_array_equal(a, value.sum(axis=0))
    np.testing.assert_array_equal(b, value.max(axis=1))
    np.testing.assert_array_equal(third(value), value.max(axis=1))
    glue = [e for e in cache.entries(str(cache_dir)) if e.manifest["module"].startswith("_tg_glue")]
    assert len(glue) == 1


def test_a_new_process_finds_node_functions_in_any_order(cache_dir, commands, monkeypatch):
    x = tt.dmatrix("x")
    fast = Mode("cvm", "fast_run")
    tensorgraph.function([x], x.sum(axis=0), mode=fast)
    tensorgraph.function([x], [x.sum(axis=0), x.max(axis=1)], mode=fast)
    compiled = len(commands)
    monkeypatch.setattr(cmodule, "_caches", {})  # as a new process would
    second_first = tensorgraph.function([x], [x.max(axis=1), x.sum(axis=0)], mode=fast)
    assert second_first.vm.cgraph.found == "disk" and second_first.vm.cgraph.library is None
    assert len(commands) == compiled  # every function found through the symbol records
    value = np.arange(6.0).reshape(2, 3)
    a, b = second_first(value)
    np.testing.assert_array_equal(a, value.max(axis=1))
    np.testing.assert_array_equal(b, value.sum(axis=0))

    for entry in cache.entries(str(cache_dir)):  # libraries gone: records are orphans
        if entry.manifest["kind"] == "library":
            cache.remove_entry(str(cache_dir), entry.path)
    cache.clear(str(cache_dir), max_age=1e9)
    assert not os.listdir(cache_dir / cache.SYMBOLS)
    monkeypatch.setattr(cmodule, "_caches", {})
    again = tensorgraph.function([x], x.max(axis=1), mode=fast)
    assert again.vm.cgraph.found == "compiled"
    np.testing.assert_array_equal(again(value), value.max(axis=1))


def test_node_function_names_change_with_the_headers_every_unit_includes(cache_dir,
                                                                        monkeypatch):
    x = tt.dvector("x")
    f = tensorgraph.function([x], x.sum(), mode=Mode("cvm", None))
    node = f.vm.nodes[0]
    assert codegen.NodeFunction(node, "/* same */").symbol == \
        codegen.NodeFunction(node, "/* same */").symbol
    before = codegen.NodeFunction(node, "/* same */").symbol
    files = dict(codegen._FILES)
    files["tg_scalar.h"] = codegen._read("tg_scalar.h") + "\n/* changed */\n"
    files.pop("prelude digest", None)
    monkeypatch.setattr(codegen, "_FILES", files)
    assert codegen.NodeFunction(node, "/* same */").symbol != before


def test_straight_line_linker_with_a_node_function_used_twice(cache_dir):
    x = tt.dvector("x")
    f = tensorgraph.function([x], [x.sum(), (x * 2.0).sum()], mode=Mode("c", None))
    symbols = _symbols(f)
    assert symbols[0] == symbols[-1] and len(set(symbols)) == len(symbols) - 1  # both sums
    assert f.vm.cgraph.straight
    a, b = f(np.array([1.0, 2.0, 4.0])[::-1])
    assert a == 7.0 and b == 14.0


def test_split_keeps_work_even_and_big_support_together():
    class Fn:
        def __init__(self, text, support):
            self.text, self.support = text, support

    blas = "b" * 20000
    functions = [Fn("g" * 1000, blas), Fn("h" * 1200, blas)] + [
        Fn("e" * 4000, "s" * 700) for _ in range(6)]
    groups = codegen._split(functions)
    assert len(groups) == 2 and sorted(sum(groups, [])) == list(range(8))
    assert any({0, 1} <= set(g) for g in groups)  # the long support text compiled once
    small = [Fn("e" * 2000, "s" * 700), Fn("f" * 2000, "s" * 700)]
    assert codegen._split(small) == [[0, 1]]  # little work: one unit
