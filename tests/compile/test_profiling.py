"""The profiler: per-node times and calls, the summary, memory, rewrites, the chrome trace,
records for the notebook, node times supplied by a linker, and printing at exit."""

import io
import json
import warnings

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.link import registry as linkers
from tensorgraph.compile import ProfileStats
from tensorgraph.configdefaults import config
from tensorgraph.link.vm import PyVMLinker


def small_function(**kw):
    x = tt.dvector("x")
    m = tt.dmatrix("m")
    return tg.function([x, m], (tt.dot(m, tt.exp(x)) + 1).sum(), name="small", **kw)


def call(f, n=3):
    for _ in range(n):
        f(np.arange(3.0), np.ones((4, 3)))


def test_profile_true_records_every_node_of_every_call():
    f = small_function(profile=True)
    assert isinstance(f.profile, ProfileStats)
    call(f, 3)
    stats = f.profile
    assert stats.call_count == 3
    rows = stats.as_records()
    nodes = f.maker.fgraph.toposort()
    assert [r["position"] for r in rows] == list(range(len(nodes)))
    printed = tg.dprint(f, file="str").splitlines()
    for row, node in zip(rows, nodes):  # the id is the one dprint prints on that node's line
        first = next(line for line in printed if f"[id {row['node_id']}]" in line)
        assert str(node.op) in first, (row["node_id"], first)
    assert [r["node"] for r in rows] == [str(n) for n in nodes]
    assert all(r["calls"] == 3 and r["seconds"] > 0 for r in rows)
    assert sum(r["percent"] for r in rows) == pytest.approx(100.0)
    assert {r["kind"] for r in rows} <= {"C", "Py"}
    assert all(r["output_shapes"] is not None for r in rows)
    assert 0 < stats.node_time <= stats.vm_call_time <= stats.call_time


def test_summary_sections_and_limits():
    f = small_function(profile=True)
    call(f)
    out = io.StringIO()
    f.profile.summary(file=out, n_ops_to_print=1, n_apply_to_print=2)
    text = out.getvalue()
    for section in ("Function profile: small", "Time in 3 calls to Function.__call__",
                    "Time in the VM", "Time in the nodes", "Rewriting:", "Linking:",
                    "C module cache", "Ops by class", "Ops\n---", "Apply nodes", "Tips"):
        assert section in text, section
    apply_part = text.split("Apply nodes")[1].split("Tips")[0]
    assert apply_part.count("us ") == 2 and "more nodes" in apply_part
    assert "<% time> <sum %>" in text


def test_summary_destinations(tmp_path, capsys):
    f = small_function(profile=True)
    call(f, 1)
    path = tmp_path / "profile.txt"
    f.profile.summary(file=str(path))
    f.profile.summary(file=str(path))  # appends
    assert path.read_text().count("Function profile: small") == 2
    f.profile.summary(file="stdout")
    assert "Function profile" in capsys.readouterr().out
    f.profile.summary()  # the default destination is stdout (notebooks paint stderr red)
    printed = capsys.readouterr()
    assert "Function profile" in printed.out and printed.err == ""
    with config.change_flags(profiling__destination="stderr"):
        f.profile.summary()
    assert "Function profile" in capsys.readouterr().err
    with config.change_flags(profiling__output_line_width=40):
        assert max(map(len, f.profile.summary_text().splitlines())) <= 40


def test_one_profile_shared_by_two_functions():
    shared = ProfileStats("both")
    x = tt.dvector("x")
    f = tg.function([x], tt.exp(x), name="f", profile=shared)
    g = tg.function([x], tt.log(x), name="g", profile=shared)
    f([1.0])
    g([1.0])
    g([2.0])
    assert f.profile is g.profile is shared
    assert shared.call_count == 3
    functions = {r["function"] for r in shared.as_records()}
    assert functions == {"f", "g"}
    text = shared.summary_text()
    assert "Functions: f, g" in text and "g:A" in text  # ids as dprint shows them


def test_ignore_first_call():
    with config.change_flags(profiling__ignore_first_call=True):
        f = small_function(profile=True)
    call(f, 3)
    assert f.profile.call_count == 2
    assert {r["calls"] for r in f.profile.as_records()} == {2}


def test_seed_train_profile_lists_every_node_with_its_time():
    import test_logreg as logreg

    with config.change_flags(**dict(logreg.FLAGS, profile=True)), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        g = logreg.build()
        train = g["train"]
        train.profile.print_at_exit = False
        for _ in range(5):
            train(*g["D"])
    stats = train.profile
    n = len(train.maker.fgraph.toposort())
    text = stats.summary_text(n_apply_to_print=n)
    apply_part = text.split("Apply nodes")[1]
    for node in train.maker.fgraph.toposort():
        assert str(node) in apply_part
    assert all(r["calls"] == 5 and r["seconds"] > 0 for r in stats.as_records())


def test_memory_profile():
    x = tt.dvector("x")
    y = tt.exp(x)
    z = (y * 2 + y).sum()
    with config.change_flags(profile_memory=True, profiling__min_peak_memory=True,
                             profiling__min_memory_size=0):
        f = tg.function([x], z, profile=True, mode=tg.Mode("vm", "fast_run"))
        f(np.ones(1000))
        (entry,) = f.profile.memory_profile()
        text = f.profile.summary_text()
    assert entry["peak_without_gc"] >= entry["peak"] >= 8000
    assert entry["peak_without_inplace"] >= entry["peak"]
    assert entry["min_peak"] is not None and entry["min_peak"] <= entry["peak"]
    assert "Memory profile" in text and "peak with allow_gc=False" in text
    assert "smallest peak of any node order" in text


def test_debugprint_flag_adds_the_graph():
    f = small_function(profile=True)
    call(f, 1)
    assert "Graph of 'small'" not in f.profile.summary_text()
    with config.change_flags(profiling__debugprint=True):
        text = f.profile.summary_text()
    assert "Graph of 'small'" in text and "[id A]" in text


def test_profile_optimizer_section():
    with config.change_flags(profile_optimizer=True):
        f = small_function(profile=True)
        call(f, 1)
    # shown after the flag is off again: it was recorded when the function was compiled
    text = f.profile.summary_text()
    assert "Rewriter Profile of 'small'" in text and "node rewriters" in text
    with config.change_flags(profile_optimizer=False):
        g = small_function(profile=True)
    call(g, 1)
    assert "Rewriter Profile" not in g.profile.summary_text()


def test_chrome_trace_is_valid_json_with_complete_events(tmp_path):
    f = small_function(profile=True)
    call(f, 2)
    path = tmp_path / "trace.json"
    returned = f.profile.to_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    assert trace == json.loads(json.dumps(returned))
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(events) == len(f.maker.fgraph.toposort())
    for e in events:
        assert {"name", "ts", "dur", "pid", "tid", "args"} <= set(e)
        assert e["ts"] >= 0 and e["dur"] >= 0 and e["args"]["calls"] == 2
    starts = [e["ts"] for e in events]
    assert starts == sorted(starts)  # the last call's real timeline, in toposort order
    assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in trace["traceEvents"])


class NativeTimesLinker(PyVMLinker):
    """A linker whose VM measures node times itself (as the C loop of cvm does): each node
    'takes' exactly 0.25 s per run."""

    def make_vm(self, fgraph, input_storage=None, storage_map=None):
        vm = super().make_vm(fgraph, input_storage, storage_map)
        return NativeVM(vm)


class NativeVM:
    supports_node_times = True

    def __init__(self, vm):
        self.__dict__["_vm"] = vm
        self.__dict__["node_times"] = np.zeros(len(vm.nodes))
        self.__dict__["node_calls"] = np.zeros(len(vm.nodes), dtype=np.int64)
        self.__dict__["collect_node_times"] = False

    def __call__(self):
        self._vm()
        if self.collect_node_times:
            self.node_times += 0.25
            self.node_calls += 1

    def __getattr__(self, name):
        return getattr(self._vm, name)

    def __setattr__(self, name, value):
        if name in self.__dict__:
            self.__dict__[name] = value
        else:
            setattr(self._vm, name, value)


def test_node_times_supplied_by_the_linker_are_used():
    linkers.register_linker("test_native", lambda: NativeTimesLinker(None, "test_native"))
    try:
        x = tt.dvector("x")
        f = tg.function([x], tt.exp(x) + 1, profile=True, mode=tg.Mode("test_native", None))
        f([1.0, 2.0])
        f([1.0, 2.0])
    finally:
        linkers._LINKERS.pop("test_native")
    rows = f.profile.as_records()
    assert [r["seconds"] for r in rows] == [0.5] * len(rows)
    assert [r["calls"] for r in rows] == [2] * len(rows)
    assert rows[-1]["output_shapes"] == [(2,)]  # recorded on the first call
    assert all(r["output_shapes"] is not None for r in rows)
    assert f.vm.post_hook is None  # ... and the hook removed afterwards
    assert "measured by the linker" in f.profile.summary_text()


def test_config_profile_prints_at_exit(run_python):
    code = ("import tensorgraph as tg, tensorgraph.tensor as tt\n"
            "x = tt.dvector('x')\n"
            "f = tg.function([x], tt.exp(x) * 2, name='atexit_fn')\n"
            "f([1.0, 2.0])\n"
            "g = tg.function([x], x + 1, name='collected')\n"
            "del g\n")
    result = run_python("-c", code, env={"TENSORGRAPH_FLAGS": "profile=True,linker=vm"})
    assert result.returncode == 0, result.stderr
    assert "Function profile: atexit_fn" in result.stdout
    assert "Time in 1 call to Function.__call__" in result.stdout
    assert "collected" not in result.stdout


def test_profile_argument_checks():
    x = tt.dvector("x")
    with pytest.raises(TypeError, match="profile=.*ProfileStats"):
        tg.function([x], x, profile="yes")
    assert not hasattr(tg.function([x], x, profile=False), "profile")


def test_copy_with_profile_true_makes_its_own_stats():
    import tensorgraph as tg
    import tensorgraph.tensor as tt

    x = tt.vector("x")
    f = tg.function([x], tt.exp(x).sum(), name="f")
    p = f.copy(profile=True)
    p(np.ones(3, x.dtype))
    assert f.maker.profile is None
    assert p.maker.profile.call_count == 1
