"""The stepper widget without a browser: buttons and methods drive the core stepper, the graph
view marks the current, done, failing and first-NaN nodes, the panel previews values computed
in the kernel, %tg_step parses a call; and the value previews themselves."""

import numpy as np
import pytest

IPython = pytest.importorskip("IPython")
from IPython.core.error import UsageError  # noqa: E402

import tensorgraph as tg  # noqa: E402
import tensorgraph.tensor as tt  # noqa: E402
from tensorgraph.compile.mode import Mode  # noqa: E402
from tensorgraph.notebook import Stepper  # noqa: E402
from tensorgraph.notebook.value_preview import preview, preview_html  # noqa: E402
from seed_graphs import seed  # noqa: E402


def test_buttons_step_and_the_view_marks_what_ran():
    train, data = seed()
    widget = Stepper(train, *data)
    ids = widget.run.ids
    assert widget.position == 0 and widget.view.marks == {ids[train.vm.nodes[0]]: "current"}
    widget._step.click()
    widget._n.value = 3
    widget._step_n.click()
    assert widget.position == widget.run.position == 4
    marks = widget.view.marks
    assert [marks[ids[n]] for n in train.vm.nodes[:4]] == ["done"] * 4
    assert marks[ids[train.vm.nodes[4]]] == "current"
    assert "4</b> of 15 nodes run" in widget.status
    last = train.vm.nodes[3]
    assert f"[{ids[last]}]" in widget._panel.value and "output 0" in widget._panel.value

    gemv = next(n for n in train.vm.nodes if type(n.op).__name__ == "Gemv")
    widget.view.select(ids[gemv])
    widget._to.click()
    assert widget.run.ran[-1] is gemv and "<svg class='tg-hist'" in widget._panel.value
    widget._finish.click()
    assert widget.run.finished and len(widget.outputs) == 2 and "finished" in widget.status
    widget._restart.click()
    assert widget.position == 0 and widget.outputs is None


def test_errors_go_to_the_status_line_and_mark_the_node():
    train, data = seed()
    widget = Stepper(train, np.ones((6, 5), dtype="float32"), data[1])
    widget._finish.click()  # the Gemv fails: 5 features against w's 7
    assert "ValueError" in widget.status and "error" in widget.view.marks.values()
    widget.view.select(None)
    widget._to.click()
    assert "select a node in the graph first" in widget.status


def test_run_to_nan_marks_the_first_node_and_names_the_line():
    x = tt.vector("x")
    y = tt.log(x)
    fn = tg.function([x], tt.exp(y) + tt.sqrt(x + 1), mode=Mode("cvm", "None"))
    widget = Stepper(fn, np.array([1.0, 0.0]))
    widget._nan.click()
    assert "nonfinite" in widget.view.marks.values()
    assert "first NaN/Inf" in widget.status and "y = tt.log(x)" in widget.status
    assert "1 Inf" in widget._panel.value


def test_run_to_nan_with_bad_shared_values_names_them_and_marks_them():
    x = tt.vector("x")
    w = tg.shared(np.array([np.nan, 1.0]), name="w")
    fn = tg.function([x], tt.exp(x * w), mode=Mode("cvm", "None"))
    widget = Stepper(fn, np.array([1.0, 0.0]))
    widget._nan.click()
    assert "NaN/Inf in the inputs" in widget.status and "shared variable w has 1 nan" in \
        widget.status
    w_id = widget.run.ids[fn.maker.fgraph.inputs[1]]
    assert widget.view.marks.get(w_id) == "nonfinite"


def test_the_magic_parses_a_call_and_refuses_anything_else(ipython_shell):
    train, data = seed()
    ipython_shell.user_ns.update(train=train, X=data[0], Y=data[1], number=3)
    widget = ipython_shell.run_line_magic("tg_step", "train(X, Y)")
    assert isinstance(widget, Stepper) and widget.position == 0
    ipython_shell.user_ns["D"] = data
    assert ipython_shell.run_line_magic("tg_step", "train(*D)").run.position == 0
    widget = ipython_shell.run_line_magic("tg_step", "train(X, **{'y': Y}) --nan")
    assert widget.run.done  # no NaN in the seed: ran to the end
    for line, message in [("train", "expected a call"), ("number(1)", "not a compiled function"),
                          ("nope(X)", "NameError"), ("train(X)", "missing value for input 1"),
                          ("train(X, Y", "expected a call")]:
        with pytest.raises(UsageError, match=message) as info:
            ipython_shell.run_line_magic("tg_step", line)
        assert "\n" not in str(info.value)


def test_previews_summarise_big_arrays_and_count_bad_values():
    big = np.random.default_rng(0).standard_normal((2000, 3000))
    big[0, 0], big[1, 1] = np.nan, np.inf
    p = preview(big)
    assert p["shape"] == [2000, 3000] and p["nan"] == 1 and p["inf"] == 1
    assert abs(p["mean"]) < 0.01 and 0.99 < p["std"] < 1.01 and sum(p["hist"]) == big.size - 2
    assert p["cut"] and len(p["corner"]) < 600
    page = preview_html("big", big)
    assert len(page) < 4000 and "1 NaN, 1 Inf" in page
    assert preview(np.int8(3))["corner"] == "3" and preview("text")["kind"] == "str"
    assert "hist" not in preview(np.zeros(4))  # nothing to bin


def test_the_static_form_shows_the_run():
    train, data = seed()
    widget = Stepper(train, *data)
    widget.step(3)
    widget.view.wait()
    bundle, _ = widget._repr_mimebundle_()
    assert bundle["text/plain"].startswith("<Stepper of train: 3 of 15 nodes run")
    html_form = bundle["text/html"]
    assert "3</b> of 15 nodes run" in html_form and "<svg" in html_form
    # the three done nodes, shaded: those drawn (shape plumbing folds into a badge, issue 36)
    done = [i for i, mark in widget.view.marks.items() if mark == "done"]
    assert len(done) == 3
    drawn = [i for i in done if i in widget.view.layout["items"]]
    assert drawn and html_form.count('fill="#cfdcf0"') == len(drawn)


def test_the_static_form_of_a_nan_hunt_draws_the_loop_open_as_the_widget(ipython_shell):
    """Run to NaN/Inf opens the loop holding the culprit; the static form (nbconvert,
    GitHub) drew the layout of before, the loop closed and the culprit hidden, when the new
    layout was still being made off the main thread."""
    from display_checks import displayed

    from tensorgraph.scan import scan

    xs = tt.tensor3("xs", dtype="float32")
    w = tg.shared(np.eye(3, dtype="float32") * 2, name="w")
    h, _ = scan(lambda x_t, h_prev: tt.maximum(tt.dot(h_prev, w) + x_t, 0), sequences=xs,
                outputs_info=tt.zeros((xs.shape[1], 3), dtype="float32"), name="boom")
    bad_train = tg.function([xs], [h[-1].mean(), tg.grad(h[-1].mean(), w)], name="bad_train")
    widget = Stepper(bad_train, np.ones((200, 2, 3), "float32"))
    widget.view.wait()  # the loop closed, laid out: as on the page before the click
    with np.errstate(all="ignore"):
        widget._nan.click()
    culprit = widget._nonfinite.node_id
    assert "/" in culprit and widget.view.marks[culprit] == "nonfinite"  # inside the loop
    live, static = displayed(ipython_shell, widget)
    assert f'<g id="{culprit}"><rect' in static["text/html"]
    assert 'fill="#f6d5d5" stroke="#d32f2f"' in static["text/html"]  # marked as in the view
