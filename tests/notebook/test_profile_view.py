"""The profile view without a browser: its table, heat map and timeline come from
``ProfileStats.as_records()``; sorting and grouping; the Chrome trace it saves is valid; a
ProfileStats displays as the view; %tg_profile profiles a copy and leaves the function alone."""

import json

import numpy as np
import pytest
import traitlets

IPython = pytest.importorskip("IPython")
from IPython.core.error import UsageError  # noqa: E402

from tensorgraph.compile.profiling import ProfileStats  # noqa: E402
from tensorgraph.notebook import GraphView, ProfileView  # noqa: E402
from seed_graphs import seed  # noqa: E402


def profiled_seed(calls=5):
    train, data = seed()
    profile = ProfileStats("train", print_at_exit=False)
    fn = train.copy(profile=profile, name="train")
    for _ in range(calls):
        fn(*data)
    return profile, train


def test_table_heat_map_and_timeline_agree_with_as_records():
    profile, train = profiled_seed()
    view = ProfileView(profile)
    records = profile.as_records()
    assert view.heat() == {r["node_id"]: r["percent"] for r in records}
    assert view.view.overlay["values"] == pytest.approx(view.heat())
    assert view.view.overlay["title"] == "% of node time"
    rows = view.rows()
    assert [r["node_id"] for r in rows] == [r["node_id"] for r in
                                            sorted(records, key=lambda r: -r["percent"])]
    assert sum(r["percent"] for r in rows) == pytest.approx(100.0)
    assert f"<code>{rows[0]['node_id']}</code>" in view._table.value
    assert "5</td>" in view._table.value  # calls
    assert view._timeline.value.count("<rect") == len(train.vm.nodes)
    assert "compile train" in view._totals.value and "writing C" in view._totals.value
    ids = {n["id"] for n in view.view.graph["nodes"] if n["k"] == "apply"}
    assert set(view.heat()) == ids  # the ids the graph view shows


def test_sorting_and_grouping():
    profile, _ = profiled_seed()
    view = ProfileView(profile)
    view._sort.value = "calls"
    assert view.sort_by == "calls"
    view.sort_by = "op"
    ops = [r["op"] for r in view.rows()]
    assert ops == sorted(ops)
    view.grouping = "op_class"
    classes = view.rows()
    assert {r["op_class"] for r in classes} >= {"Gemv", "Elemwise"}
    assert sum(r["nodes"] for r in classes) == len(profile.as_records())
    assert "<th style='text-align:left;padding-right:10px'>op class</th>" in view._table.value
    with pytest.raises(traitlets.TraitError, match="sort_by must be one of"):
        view.sort_by = "nope"
    with pytest.raises(traitlets.TraitError, match="grouping must be one of"):
        view.grouping = "nope"
    assert view.sort_by == "op" and view._sort.value == "op"


def test_the_saved_chrome_trace_is_valid(tmp_path):
    profile, train = profiled_seed()
    path = ProfileView(profile).save_trace(tmp_path / "t.json")
    trace = json.loads(path.read_text())
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(events) == len(train.vm.nodes)
    for e in events:
        assert e["dur"] >= 0 and e["ts"] >= 0 and {"node_id", "calls"} <= set(e["args"])


def test_a_profile_displays_as_the_view_with_a_static_form(ipython_shell):
    from display_checks import displayed

    profile, _ = profiled_seed()
    data, static = displayed(ipython_shell, profile)
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/plain"].startswith("Function profile: train")
    assert 'class="tg-static-fallback"' in static["text/html"]
    assert "<svg" in static["text/html"] and "tg-profile-table" in static["text/html"]


def test_the_magic_profiles_a_copy(ipython_shell):
    train, data = seed()
    ipython_shell.user_ns.update(train=train, X=data[0], Y=data[1])
    before = [s.get_value().copy() for s in train.maker.shared_inputs]
    view = ipython_shell.run_line_magic("tg_profile", "-n 7 train(X, Y)")
    assert isinstance(view, ProfileView) and view.profile.call_count == 7  # warm-up not counted
    assert all(r["calls"] == 7 for r in view.profile.as_records())
    assert not hasattr(train, "profile") or train.profile is None  # train itself unprofiled
    after = [s.get_value() for s in train.maker.shared_inputs]
    assert not all(np.array_equal(a, b) for a, b in zip(before, after))  # 8 real calls
    counted = ipython_shell.run_line_magic("tg_profile", "-n 2 --no-warmup train(X, Y)")
    assert counted.profile.call_count == 2
    for line, message in [("-n 0 train(X, Y)", "at least 1"), ("train", "expected a call"),
                          ("X(1)", "not a compiled function")]:
        with pytest.raises(UsageError, match=message):
            ipython_shell.run_line_magic("tg_profile", line)


def test_memory_figures_show_when_profile_memory_is_on():
    import tensorgraph as tg

    with tg.config.change_flags(profile_memory=True):
        profile, _ = profiled_seed(calls=2)
        view = ProfileView(profile)
        peak = profile.memory_profile()[0]["peak"]
    assert "memory train" in view._totals.value and f"{peak / 1024:.1f} KiB" in view._totals.value


def test_every_public_name_of_the_notebook_layer_has_an_example():
    import tensorgraph.notebook as tgn

    missing = [name for name in tgn.__all__ if ">>>" not in (getattr(tgn, name).__doc__ or "")]
    assert missing == []


def test_the_heat_map_names_outputs_and_updates_as_the_graph_view_does():
    profile, train = profiled_seed()
    view = ProfileView(profile)
    labels = sorted(o for n in view.view.graph["nodes"] for o in n.get("o", ()))
    assert labels == sorted(o for n in GraphView(train).graph["nodes"] for o in n.get("o", ()))
    assert "update of w" in labels and "update of b" in labels


def test_the_static_form_has_the_heat_colours_and_their_legend():
    """nbconvert and GitHub show the static form: the hottest node is filled with the ramp's
    end, its text white, and the legend names the values."""
    from tensorgraph.notebook.static_svg import HEAT_STOPS

    profile, _ = profiled_seed()
    view = ProfileView(profile)
    heat = view.heat()
    svg = view.view.to_svg()
    hottest = max(heat, key=heat.get)
    if f'<g id="{hottest}">' not in svg:
        # on a busy machine a node folded into another (a DimShuffle: no box of its own) can
        # measure hottest; then make the hottest drawn node the hottest, as on a quiet one
        drawn = [k for k in heat if f'<g id="{k}">' in svg]
        hottest = max(drawn, key=heat.get)
        view.view.set_overlay({**heat, hottest: max(heat.values()) + 1},
                              title="% of node time")
        svg = view.view.to_svg()
    box = svg[svg.index(f'<g id="{hottest}">'):]
    box = box[:box.index("</g>")]
    assert 'fill="#%02x%02x%02x"' % HEAT_STOPS[-1] in box and 'fill="#ffffff"' in box
    assert "% of node time" in svg and "url(#heat)" in svg
