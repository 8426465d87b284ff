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
