"""tgn.compare and %tg_compare without a browser: the rows as plain data, a mode that fails as
a row, agreement, the display bundle (widget + static forms), the magic and its usage errors.

Modes used: FAST_RUN, FAST_COMPILE, JAX, NUMBA (PYTORCH's row is whatever torch gives here:
these tests never depend on torch)."""

import shutil
import subprocess

import numpy as np
import pytest

pytest.importorskip("IPython")
from IPython.core.error import UsageError  # noqa: E402

import tensorgraph as tg  # noqa: E402
import tensorgraph.tensor as tt  # noqa: E402
from seed_graphs import seed  # noqa: E402
from tensorgraph.notebook.compare import Comparison, _agreement, compare  # noqa: E402
from tensorgraph.notebook.compare_view import CompareView  # noqa: E402

WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def seed_comparison():
    train, data = seed()
    before = [s.get_value().copy() for s in train.maker.shared_inputs]
    cmp = compare(train, modes=["FAST_RUN", "JAX", "NUMBA", "NO_SUCH_MODE"], args=data,
                  repeat=7, compile_times=["FAST_RUN"])
    return cmp, train, data, before


def test_rows_are_plain_data_and_every_mode_ran_the_seed(seed_comparison):
    cmp, train, data, before = seed_comparison
    assert [r["mode"] for r in cmp.rows] == ["FAST_RUN", "JAX", "NUMBA", "NO_SUCH_MODE"]
    assert cmp.reference == "FAST_RUN"
    for row in cmp.rows[:3]:
        assert row["error"] is None
        assert 3 <= row["calls"] <= 7
        assert row["call_p25"] <= row["call_median"] <= row["call_p75"]
        assert row["call_min"] <= row["call_p25"] and row["call_p75"] <= row["call_max"]
        assert row["nodes"] == len(cmp.function(row["mode"]).maker.fgraph.apply_nodes)
        assert [o["name"] for o in row["outputs"]] == ["output 0", "output 1", "w (updated)",
                                                       "b (updated)"]
        assert [o["dtype"] for o in row["outputs"]] == ["bool", "float32", "float32", "float32"]
    assert cmp.rows[0]["agrees"] is None  # the reference
    for row in cmp.rows[1:3]:
        assert row["agrees"] is True and 0 <= row["max_abs_diff"] < 1e-4
    # the rows travel as JSON (scripts, the widget)
    import json

    assert json.loads(json.dumps(cmp.rows))[1]["mode"] == "JAX"
    # nothing changed: the shared variables are as before the comparison
    assert all(np.array_equal(a, s.get_value()) for a, s in zip(before, train.maker.shared_inputs))


def test_compile_times_come_from_fresh_processes_where_asked(seed_comparison):
    cmp = seed_comparison[0]
    fast_run = cmp.row("FAST_RUN")
    assert fast_run["compile_cold"] > 0 and fast_run["compile_warm"] > 0, fast_run["compile_note"]
    assert fast_run["compile_note"] is None
    jax = cmp.row("JAX")
    assert jax["compile_cold"] is None and "not measured" in jax["compile_note"]
    # the table's note names the modes it is about (FAST_RUN's times were measured)
    note = next(line for line in cmp.table().splitlines() if line.startswith("compile times"))
    assert note.startswith("compile times of ") and "not measured" in note
    assert "JAX" in note and "FAST_RUN" not in note
    assert all(r["compile_here"] > 0 for r in cmp.rows[:3])


def test_a_mode_that_fails_is_a_row_with_its_first_line(seed_comparison):
    cmp = seed_comparison[0]
    bad = cmp.row("NO_SUCH_MODE")
    assert bad["error"].startswith("ValueError: unknown mode 'NO_SUCH_MODE'")
    assert "\n" not in bad["error"] and bad["call_median"] is None
    with pytest.raises(RuntimeError, match="mode NO_SUCH_MODE did not compile"):
        cmp.function("NO_SUCH_MODE")
    with pytest.raises(KeyError, match="was not compared"):
        cmp.row("PYTORCH_NOT_ASKED")
    assert "NO_SUCH_MODE  error: ValueError: unknown mode" in cmp.table()


def test_a_back_end_that_refuses_the_graph_is_a_row_and_the_others_go_on():
    z = tt.vector("z", dtype="complex128")
    out = tt.exp(z) * 2
    cmp = compare(out, [z], ["FAST_COMPILE", "NUMBA", "JAX"],
                  args=(np.array([1 + 1j, 0.5j]),), repeat=3, compile_times=False)
    numba = cmp.row("NUMBA")
    assert numba["error"].startswith("UnsupportedOpsError: the Numba back end cannot compile")
    with pytest.raises(RuntimeError, match="mode NUMBA did not compile") as info:
        cmp.function("NUMBA")
    assert "complex" in str(info.value.__cause__).lower()  # the whole error stays at hand
    assert cmp.row("JAX")["agrees"] is True and cmp.reference == "FAST_COMPILE"
    assert cmp.fastest() in ("FAST_COMPILE", "JAX")


def test_agreement_checks_dtype_shape_and_values():
    ref = np.array([1.0, 2.0], dtype="float32")
    assert _agreement("y", ref + np.float32(1e-6), ref)["agrees"] is True
    off = _agreement("y", ref + 1, ref)
    assert off["agrees"] is False and off["max_abs_diff"] == 1.0
    widened = _agreement("y", ref.astype("float64"), ref)
    assert widened["agrees"] is False and "dtype float64" in widened["note"]
    assert _agreement("y", ref[:1], ref)["agrees"] is False
    assert _agreement("m", np.array([True]), np.array([False]))["agrees"] is False
    assert _agreement("n", np.array([np.nan]), np.array([np.nan]))["agrees"] is True


def test_graph_text_is_dprint_of_each_modes_rewritten_graph(seed_comparison):
    cmp = seed_comparison[0]
    text = cmp.graph_text("JAX")
    assert text == tg.printing.debugprint(cmp.function("JAX"), file="str")
    assert "(update of w)" in text and "[id A]" in text
    assert "Gemv" in cmp.graph_text("FAST_RUN") and "Gemv" not in text  # JAX: no BLAS rewrites


def test_bad_arguments_are_clear_errors():
    x = tt.vector("x")
    with pytest.raises(ValueError, match="at least one mode"):
        compare(x * 2, [x], [], args=(np.ones(2),))
    with pytest.raises(ValueError, match="repeat"):
        compare(x * 2, [x], ["FAST_RUN"], args=(np.ones(2),), repeat=0)
    with pytest.raises(TypeError, match="inputs is missing"):
        compare(x * 2)


def test_wrong_arguments_are_a_row_per_mode_not_a_crash():
    x = tt.matrix("x")
    cmp = compare(x.sum(), [x], ["FAST_RUN", "FAST_COMPILE"], args=(np.ones(3),),
                  compile_times=False)
    assert all(r["error"] and r["error"].startswith("TypeError") for r in cmp.rows)
    assert cmp.reference is None and cmp.fastest() is None
    view = CompareView(cmp)  # nothing ran: a table of errors, no graph
    assert view.graph is None and len(view.table.rows) == 2


def test_the_display_is_the_widget_then_its_static_form(ipython_shell, seed_comparison):
    from display_checks import displayed

    cmp = seed_comparison[0]
    data, static = displayed(ipython_shell, cmp)
    assert WIDGET in data and data["text/plain"] == cmp.table()
    html = static["text/html"]
    assert 'class="tg-static-fallback"' in html
    assert "NO_SUCH_MODE" in html and "unknown mode" in html
    assert html.count("<details>") == 3 and "(update of w)" in html  # a dprint per mode that ran


def test_the_view_shows_the_selected_modes_graph(seed_comparison):
    cmp = seed_comparison[0]
    view = CompareView(cmp)
    assert view.selected == "FAST_RUN" and view.table.reference == "FAST_RUN"
    assert view.table.fastest == cmp.fastest()
    assert [r["mode"] for r in view.table.rows] == cmp.modes
    view.table.selected = "JAX"  # what a click on the JAX row does
    assert view.selected == "JAX" and view.graph.model.title == "JAX: the graph after rewriting"
    jax_ids = set(view.graph.model.by_id)
    assert {"A", "B"} <= jax_ids
    view.selected = "NO_SUCH_MODE"
    assert "unknown mode" in view._graph_note.value


def test_the_magic_compares_a_compiled_function(ipython_shell):
    train, data = seed()
    ipython_shell.user_ns.update(train=train, X=data[0], Y=data[1])
    cmp = ipython_shell.run_line_magic(
        "tg_compare", "-m FAST_RUN,FAST_COMPILE -n 4 --no-compile-times train(X, Y)")
    assert isinstance(cmp, Comparison) and cmp.modes == ["FAST_RUN", "FAST_COMPILE"]
    assert all(r["error"] is None and r["calls"] <= 4 for r in cmp.rows)
    assert cmp.row("FAST_COMPILE")["agrees"] is True


def test_the_magic_shows_its_view_where_it_stands_not_only_as_the_last_line(ipython_shell):
    """A comparison takes minutes: a %tg_compare followed by other lines showed nothing."""
    from display_checks import widget_outputs

    train, data = seed()
    ipython_shell.user_ns.update(train=train, X=data[0], Y=data[1])
    line = "%tg_compare -m FAST_RUN,FAST_COMPILE -n 3 --no-compile-times train(X, Y)"
    (shown,) = widget_outputs(ipython_shell, f"{line}\nprint('next')")
    assert "FAST_COMPILE" in shown["text/plain"]
    assert len(widget_outputs(ipython_shell, line)) == 1  # the last line: shown once
    assert widget_outputs(ipython_shell, f"cmp = {line}") == []  # kept, not shown
    assert isinstance(ipython_shell.user_ns["cmp"], Comparison)


@pytest.mark.parametrize("line, message", [
    ("-m FAST_RUN,JAXX train(X, Y)", "%tg_compare: unknown mode 'JAXX'"),
    ("-n 0 train(X, Y)", "-n must be at least 1"),
    ("--budget 0 train(X, Y)", "--budget must be more than 0"),
    ("-m , train(X, Y)", "-m takes modes"),
    ("train", "expected a call"),
    ("X(1)", "not a compiled function"),
    ("train(X, Y, Z)", "%tg_compare:"),
    ("--nope train(X, Y)", "%tg_compare:"),
])
def test_bad_usage_is_a_one_line_usage_error(ipython_shell, line, message):
    train, data = seed()
    ipython_shell.user_ns.update(train=train, X=data[0], Y=data[1], Z=data[1])
    with pytest.raises(UsageError) as info:
        ipython_shell.run_line_magic("tg_compare", line)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_help_prints_the_usage(ipython_shell, capsys):
    assert ipython_shell.run_line_magic("tg_compare", "--help") is None
    out = capsys.readouterr().out
    assert "-m MODES, --modes MODES" in out and "-n REPEAT" in out and "--no-compile-times" in out
    assert "--wait" in out
    assert "%tg_compare -m FAST_RUN,JAX -n 100 train(X, Y)" in out


@pytest.mark.skipif(shutil.which("node") is None, reason="node checks the module's syntax")
def test_the_front_end_module_parses():
    from tensorgraph.notebook.assets import asset

    done = subprocess.run(["node", "--input-type=module", "--check"],
                          input=asset("compare.js").read_text(), capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr


def test_the_magic_returns_before_the_compile_times_unless_told_to_wait(ipython_shell):
    train, data = seed()
    ipython_shell.user_ns.update(train=train, X=data[0], Y=data[1])
    line = "-m FAST_RUN -n 3 {}train(X, Y)"
    waited = ipython_shell.run_line_magic("tg_compare", line.format("--wait "))
    assert waited.done and waited.row("FAST_RUN")["compile_warm"] > 0
    at_once = ipython_shell.run_line_magic("tg_compare", line.format(""))
    assert at_once.row("FAST_RUN")["call_median"] > 0 and at_once.progress[1] == 2
    at_once.wait(timeout=300)
    assert at_once.row("FAST_RUN")["compile_cold"] > 0


def test_compile_times_fill_in_the_background_and_the_view_follows():
    """``wait=False`` (what %tg_compare does): the call times are there at once, the compile
    columns come in as their fresh processes finish, and the view shows them as they come."""
    train, data = seed()
    cmp = compare(train, modes=["FAST_RUN", "FAST_COMPILE"], args=data, repeat=3,
                  compile_times=["FAST_RUN"], wait=False)
    assert all(r["call_median"] > 0 for r in cmp.rows)
    assert cmp.progress[1] == 2          # a cold and a warm process for FAST_RUN
    view = CompareView(cmp)
    if not cmp.done:
        assert view.table.progress.startswith("compile times: ")
        assert "..." in cmp.table() or cmp.done
    assert cmp.wait(timeout=300) is cmp and cmp.done and cmp.progress == (2, 2)
    fast_run = cmp.row("FAST_RUN")
    assert fast_run["compile_cold"] > 0 and fast_run["compile_warm"] > 0, fast_run["compile_note"]
    assert fast_run["compile_note"] is None
    assert cmp.row("FAST_COMPILE")["compile_note"].startswith("not measured")
    assert view.table.progress == ""      # the listener ran when the last one came in
    row = next(r for r in view.table.rows if r["mode"] == "FAST_RUN")
    assert row["compile_cold"] == fast_run["compile_cold"]


def test_cancelling_stops_the_fresh_processes_and_says_so():
    import psutil

    train, data = seed()
    cmp = compare(train, modes=["FAST_RUN", "FAST_COMPILE"], args=data, repeat=3,
                  compile_times=True, wait=False)
    view = CompareView(cmp)
    view.table.cancelled = True          # what the Cancel button does
    assert cmp.wait(timeout=60).done
    workers = [p for p in psutil.Process().children(recursive=True)
               if "compare_worker.py" in " ".join(p.cmdline())]
    assert workers == []
    notes = {r["mode"]: r["compile_note"] for r in cmp.rows}
    for mode, note in notes.items():
        row = cmp.row(mode)
        measured = row["compile_cold"] is not None and row["compile_warm"] is not None
        assert measured or note in ("cancelled", "measured in part"), (mode, note)
    assert view.table.progress == ""


def test_the_table_reads_when_every_mode_failed():
    x = tt.dvector("x")
    f = tg.function([x], x * 2)
    cmp = compare(f, modes=["NO_SUCH_MODE", "NOR_THIS_ONE"], args=[np.ones(3)],
                  compile_times=False)
    lines = cmp.table().splitlines()
    assert lines[0].startswith("mode") and "NOR_THIS_ONE  error: ValueError" in lines[2]
