"""The profiler on the C linkers: node times measured by the C loop of 'cvm' (no Python in the
figures), the loop's own total as VM time, the timeline of the last call, the fallback to the
hooks where the loop is Python, and C module cache hits and misses in the summary."""

import json

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from tensorgraph.configdefaults import config
from tensorgraph.ifelse import ifelse
from tensorgraph.link.c import cmodule


def heavy_function(**kw):
    """A few nodes with real work (1e5 elements), so the node times dominate the loop."""
    x = tt.dvector("x")
    y = tt.exp(x) * 2
    return tg.function([x], [(tt.tanh(y) + tt.log1p(x * x)).sum(), tt.sin(x).max()], **kw)


VALUES = np.linspace(0.0, 1.0, 100_000)


def test_cvm_times_every_node_in_c_and_the_times_add_up_to_the_loop():
    f = heavy_function(profile=True, mode="FAST_RUN")
    vm = f.vm
    assert vm.supports_node_times and vm.collect_node_times
    f(VALUES)  # the first call records output shapes through a hook, then drops it
    assert vm.pre_hook is None and vm.post_hook is None
    assert f._c_vm.c_call is not None  # later calls run whole in C, not node by node
    times, calls = vm.node_times.copy(), vm.node_calls.copy()
    loop = vm.loop_seconds[0]
    for _ in range(5):
        f(VALUES)
    node_sum = (vm.node_times - times).sum()
    loop_sum = vm.loop_seconds[0] - loop
    assert list(vm.node_calls - calls) == [5] * len(vm.nodes)
    # the gaps between nodes (gc, the clock itself) are small next to the nodes
    assert 0.5 * loop_sum < node_sum <= loop_sum
    rows = f.profile.as_records()
    assert [r["node"] for r in rows] == [str(n) for n in vm.nodes]
    assert all(r["calls"] == 6 and r["seconds"] > 0 and r["kind"] == "C" for r in rows)
    assert all(r["output_shapes"] is not None for r in rows)
    stats = f.profile
    assert 0 < stats.node_time <= stats.vm_call_time <= stats.call_time
    text = stats.summary_text()
    assert "Time in the VM (the node loop)" in text and "measured by the linker" in text


def test_the_timeline_of_the_last_call_is_in_the_chrome_trace(tmp_path):
    f = heavy_function(profile=True, mode="FAST_RUN")
    for _ in range(3):
        f(VALUES)
    starts = f.vm.last_node_starts
    assert (starts >= 0).all() and list(starts) == sorted(starts)
    trace = f.profile.to_chrome_trace(tmp_path / "trace.json")
    events = [e for e in json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
              if e["ph"] == "X"]
    assert trace["traceEvents"][-1]["ph"] == "X"
    assert [e["args"]["position"] for e in events] == list(range(len(f.vm.nodes)))
    ids = tg.printing.debugprint(f, file="str")
    assert all(f"[id {e['args']['node_id']}]" in ids for e in events)
    np.testing.assert_allclose([e["ts"] for e in events], starts * 1e6)


def test_an_unprofiled_function_never_times_its_nodes():
    f = heavy_function(mode="FAST_RUN")
    f(VALUES)
    assert not f.vm.collect_node_times and f.vm.node_times is None
    assert f.vm.loop_seconds is None


def test_ignore_first_call_with_c_node_times():
    config.profiling__ignore_first_call = True
    f = heavy_function(profile=True, mode="FAST_RUN")
    for _ in range(3):
        f(VALUES)
    assert f.profile.call_count == 2
    assert [r["calls"] for r in f.profile.as_records()] == [2] * len(f.vm.nodes)
    assert 0 < f.profile.node_time <= f.profile.vm_call_time


@pytest.mark.parametrize("linker", ["c|py", "cvm"])
def test_python_loops_are_timed_through_the_hooks(linker):
    """'c|py' and graphs with a lazy ifelse loop in Python: the hooks time them."""
    c, x = tt.iscalar("c"), tt.dvector("x")
    out = ifelse(c > 0, tt.exp(x).sum(), tt.sin(x).max())
    f = tg.function([c, x], out, profile=True, mode=Mode(linker, None))
    assert not f.vm.supports_node_times
    with pytest.raises(ValueError, match="cannot time its nodes in C"):
        f.vm.collect_node_times = True
    f(1, VALUES[:10])
    f(1, VALUES[:10])
    rows = {r["node"]: r for r in f.profile.as_records()}
    assert rows[str(f.vm.nodes[-1])]["calls"] == 2
    assert all(r["calls"] == 0 for name, r in rows.items() if "sin" in name)


def test_summary_reports_cache_misses_and_hits(tmp_path, monkeypatch):
    config._values["compiledir"] = str(tmp_path / "compiledir")
    monkeypatch.setattr(cmodule, "_caches", {})
    x = tt.fvector("x")

    def compiled():
        return tg.function([x], tt.exp(x) * 3 + x, profile=True, mode="FAST_RUN")

    fresh = compiled()
    assert fresh.vm.cache_stats == {"hits": 0, "misses": 1, "from_memory": 0, "from_disk": 0}
    assert "C module cache: 0 hits (0 loaded from disk, 0 already in memory), 1 miss " \
           "(compiled)" in fresh.profile.summary_text()
    assert compiled().vm.cache_stats["from_memory"] == 1
    monkeypatch.setattr(cmodule, "_caches", {})  # as a new process would
    shared = tg.compile.ProfileStats()
    from_disk = tg.function([x], tt.exp(x) * 3 + x, profile=shared, mode="FAST_RUN")
    assert from_disk.vm.cache_stats == {"hits": 1, "misses": 0, "from_memory": 0,
                                        "from_disk": 1}
    tg.function([x], tt.exp(x) * 3 + x, profile=shared, mode="FAST_RUN")
    assert "C module cache: 2 hits (1 loaded from disk, 1 already in memory), 0 misses" \
        in shared.summary_text()


def test_the_profile_arrays_are_checked():
    f = heavy_function(mode="FAST_RUN")
    n = len(f.vm.nodes)
    profile = f.vm._entry["profile"]
    with pytest.raises(ValueError, match="calls must be a writeable contiguous 1-d int64"):
        profile(np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(1))
    with pytest.raises(ValueError, match=f"times must be .* of {n} elements"):
        profile(np.zeros(n + 1), np.zeros(n, "int64"), np.zeros(n), np.zeros(1))
