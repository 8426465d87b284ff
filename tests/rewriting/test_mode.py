"""Modes and the rewrite presets: including/excluding/requiring, config tags, the history of a
compiled function."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import FAST_RUN, Mode, get_mode
from tensorgraph.configdefaults import config
from tensorgraph.rewriting import PRESETS, query_for_mode, structurally_equal


def useless_graph():
    x = tt.vector("x")
    return x, tt.exp(x * 1 + 0)


def test_including_excluding_requiring_return_new_modes():
    base = Mode("py", "fast_run")
    ex = base.excluding("useless")
    assert ex is not base and base.rewrite_excluding == () and ex.rewrite_excluding == ("useless",)
    assert ex != base and ex == Mode("py", "fast_run").excluding("useless")
    assert hash(ex) == hash(Mode("py", "fast_run").excluding("useless"))
    both = ex.including("unsafe").requiring("fast_run")
    assert "including('unsafe')" in repr(both) and "requiring('fast_run')" in repr(both)
    q = query_for_mode(both)
    assert "unsafe" in q.include and "unsafe" not in q.exclude and "useless" in q.exclude
    assert q.require == {"fast_run"}
    with pytest.raises(TypeError, match="non-empty strings"):
        base.including("")


def test_unknown_tags_are_refused_with_the_close_matches():
    base = Mode("py", "fast_run")
    with pytest.raises(ValueError, match="unknown rewrite name or tag 'fusoin'; did you mean "
                                         "'fusion'"):
        base.excluding("fusoin")
    with pytest.raises(ValueError, match="unknown rewrite name or tag 'a b c'"):
        base.including("a b c")
    with pytest.raises(ValueError, match="'nosuchrewrite'"):
        base.requiring("nosuchrewrite")
    assert base.rewrite_excluding == ()
    with config.change_flags(optimizer_including="local_stable_lgo"):
        with pytest.raises(ValueError, match="did you mean 'local_stable_log'"):
            get_mode(None)


def test_presets_exist_with_their_names():
    for name in ("None", "merge", "fast_compile", "o1", "o2", "o3", "fast_run", "o4", "unsafe",
                 "stabilize"):
        assert name in PRESETS
    with pytest.raises(ValueError, match="unknown rewrite preset 'nope'"):
        query_for_mode(Mode("py", "nope"))


def test_excluding_a_tag_keeps_the_rewrite_out():
    x, y = useless_graph()
    f = tg.function([x], y, mode=Mode("py", "fast_run"))
    assert len(f.maker.fgraph.apply_nodes) == 1
    g = tg.function([x], y, mode=Mode("py", "fast_run").excluding("useless", "canonical",
                                                                   "fusion"))
    assert len(g.maker.fgraph.apply_nodes) > len(f.maker.fgraph.apply_nodes)
    value = np.arange(3, dtype=x.dtype)
    np.testing.assert_allclose(f(value), g(value))


def test_config_tags_apply_to_the_default_mode_only():
    x, y = useless_graph()
    with config.change_flags(mode="FAST_RUN", optimizer_excluding="useless:canonical:fusion"):
        mode = get_mode(None)
        assert mode.rewrite_excluding == ("useless", "canonical", "fusion")
        assert get_mode("FAST_RUN").rewrite_excluding == ()
        f = tg.function([x], y)
    assert any("mul" in str(n.op) for n in f.maker.fgraph.apply_nodes)
    with config.change_flags(mode="FAST_RUN", optimizer_requiring="merge"):
        f = tg.function([x], y)
    assert [s.name for s in f.maker.fgraph.rewrite_history] == []


def test_no_rewrites_still_has_an_empty_history():
    x, y = useless_graph()
    f = tg.function([x], y, mode=Mode("py", None))
    assert len(f.maker.fgraph.rewrite_history) == 0
    assert len(f.maker.fgraph.apply_nodes) == 5  # two dimshuffled constants, mul, add, exp


def test_compiled_function_history_replays_to_the_compiled_graph():
    x, y = useless_graph()
    f = tg.function([x], [y, y * 2], mode=FAST_RUN)
    history = f.maker.fgraph.rewrite_history
    assert len(history) > 0
    assert all(step.location for step in history if step.rewriter is not None)
    assert structurally_equal(history.rebuild(), f.maker.fgraph)
    assert not structurally_equal(history.rebuild(0), f.maker.fgraph)


def test_presets_select_what_their_names_promise():
    from tensorgraph.rewriting import optdb
    from tensorgraph.rewriting.presets import load_rewrites

    load_rewrites()

    def picks(preset, rewrite):
        return PRESETS[preset].selects(optdb.tags_of(rewrite))

    assert optdb.tags_of("local_elemwise_fusion") >= {"fusion", "fast_run"}
    assert "slow_compile" in optdb.tags_of("local_shape_i_inferred")
    table = {  # rewrite: presets that must pick it (every other preset must not)
        "merge1": {"merge", "o1", "fast_compile", "o2", "o3", "o4", "fast_run", "unsafe"},
        "local_add_canonical": {"o1", "fast_compile", "o2", "o3", "o4", "fast_run", "unsafe"},
        "local_sigmoid_products": {"o1", "fast_compile", "o2", "o3", "o4", "fast_run",
                                   "unsafe", "stabilize"},
        "local_elemwise_fusion": {"o2", "o3", "o4", "fast_run", "unsafe"},
        "local_dot_to_blas": {"o3", "o4", "fast_run", "unsafe"},
        "local_shape_i_inferred": {"o4", "fast_run"},
        "elemwise_inplace": {"o4", "fast_run"},
        "local_remove_all_assert": {"unsafe"},
        "local_mul_canonical_unsafe": {"unsafe"},
        "local_add_canonical_unsafe": {"unsafe"},
    }
    for rewrite, presets in table.items():
        for preset in PRESETS:
            assert picks(preset, rewrite) == (preset in presets), (rewrite, preset)


@pytest.mark.parametrize("setting", ["off", "raise"])
def test_nodes_made_by_rewrites_get_test_values_when_asked(setting):
    x = tt.dvector("x")
    x.tag.test_value = np.array([1.0, 2.0])
    with config.change_flags(compute_test_value="raise", compute_test_value_opt=setting):
        y = (x + 2) + 3
        f = tg.function([x], y, mode=Mode("py", "fast_compile"))
    (node,) = f.maker.fgraph.apply_nodes
    has_value = hasattr(node.outputs[0].tag, "test_value")
    assert has_value == (setting == "raise")
    if has_value:
        np.testing.assert_allclose(node.outputs[0].tag.test_value, [6.0, 7.0])


ENTRY_POINT = """
import sys
import tensorgraph.tensor as tt
x = tt.dvector("x")
assert "tensorgraph.tensor.rewriting" not in sys.modules  # importing tensors loads no rewrite
{}
"""


@pytest.mark.parametrize("code", [
    # rewrite_graph, from the rewriting layer alone: x * 1 is x (a tensor rewrite)
    "from tensorgraph.rewriting import rewrite_graph\nassert rewrite_graph(x * 1) is x",
    # function: the compiled graph has no multiplication left
    "import tensorgraph as tg\nf = tg.function([x], x * 1, mode=tg.Mode('py', 'fast_run'))\n"
    "assert [n.op for n in f.maker.fgraph.toposort()] == []",
    # a Mode's tag check knows scan's rewrites before anything compiled
    "from tensorgraph.compile.mode import Mode\nMode('py', 'fast_run').including("
    "'scan_pushout_add').excluding('scan_pushout_seq_dots')",
], ids=["rewrite_graph", "function", "including"])
def test_every_entry_point_sees_the_tensor_and_scan_rewrites_in_a_fresh_process(code):
    """The rewrite database loads the tensor and scan rewrites itself (through
    tensorgraph.hooks.load_rewrites) whichever entry point queries it first."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", ENTRY_POINT.format(code)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
