"""Errors raised in a node: one short paragraph in every mode and linker, pointing at the
user's line (also for nodes made by rewrites); 'high' verbosity adds the inputs' graph and
the compile-time frames."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile import DebugMode, MonitorMode
from tensorgraph.configdefaults import config
from tensorgraph.graph.errors import node_report
from tensorgraph.graph.utils import TestValueError


def mismatched():
    x = tt.dvector("x")
    y = tt.dvector("y")
    z = tt.exp(x) * 2 + tt.log(y)  # the user line
    return x, y, z


MODES = ["FAST_COMPILE", "FAST_RUN", "DebugMode", "NanGuardMode", "MonitorMode",
         tg.Mode("vm", None)]


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_same_short_paragraph_in_every_mode(mode):
    x, y, z = mismatched()
    if mode == "DebugMode":
        mode = DebugMode(patience=1)
    f = tg.function([x, y], z, mode=mode)
    with pytest.raises(ValueError) as info:
        f(np.ones(3), np.ones(4))
    lines = str(info.value).splitlines()
    assert lines[1].startswith("  in node ") and "toposort position" in lines[1]
    assert "(3,)" in lines[2] and "(4,)" in lines[2] and lines[2].startswith("  inputs: ")
    assert lines[3].startswith("  created at ") and lines[3].endswith(
        "z = tt.exp(x) * 2 + tt.log(y)  # the user line")
    assert len(lines) == 4  # 'low' verbosity: no graph dump
    assert info.value.__cause__ is None


def test_nodes_made_by_rewrites_point_at_the_expression_not_at_function():
    x, y, z = mismatched()
    f = tg.function([x, y], z, mode=tg.Mode("vm", "fast_run"))
    (node,) = f.maker.fgraph.toposort()  # everything fused into one Composite
    assert "Composite" in str(node.op)
    assert node.tag.trace[0].line == "z = tt.exp(x) * 2 + tt.log(y)  # the user line"
    assert not hasattr(node.tag, "compile_trace")  # traceback__compile_limit=0 keeps none


def test_high_verbosity_adds_the_inputs_graph_and_compile_frames():
    x, y, z = mismatched()
    with config.change_flags(exception_verbosity="high", traceback__compile_limit=4):
        f = tg.function([x, y], z, mode=tg.Mode("vm", "fast_run"))
        (node,) = f.maker.fgraph.toposort()
        assert len(node.tag.compile_trace) == 4
        assert any("tensorgraph" in frame.filename for frame in node.tag.compile_trace)
        with pytest.raises(ValueError) as info:
            f(np.ones(3), np.ones(4))
    text = str(info.value)
    assert "inputs of the node:" in text and "x [id A]" in text
    assert "made during compilation at (innermost first):" in text
    assert "fusion" in text  # the rewrite that made the node
    assert info.value.__cause__ is not None  # the original traceback stays chained


def test_compile_limit_minus_one_keeps_every_frame():
    x, y, z = mismatched()
    with config.change_flags(traceback__compile_limit=-1):
        f = tg.function([x, y], z, mode=tg.Mode("vm", "fast_run"))
    (node,) = f.maker.fgraph.toposort()
    assert len(node.tag.compile_trace) > 4


def test_traceback_limit_zero_says_how_to_get_the_line():
    with config.change_flags(traceback__limit=0):
        x, y, z = mismatched()
    f = tg.function([x, y], z, mode="FAST_COMPILE")
    with pytest.raises(ValueError, match="unknown line \\(set config.traceback__limit > 0"):
        f(np.ones(3), np.ones(4))


def test_test_value_errors_name_the_users_line():
    x = tt.dvector("x")
    y = tt.dvector("y")
    x.tag.test_value = np.ones(3)
    y.tag.test_value = np.ones(4)
    with config.change_flags(compute_test_value="raise"):
        with pytest.raises(ValueError) as info:
            x + y  # noqa: B018  (the failing line)
    text = str(info.value)
    assert "created at" in text and "x + y  # noqa: B018" in text
    x2 = tt.dvector("x2")
    with config.change_flags(compute_test_value="raise"):
        with pytest.raises(TestValueError, match="x2 has no test value"):
            x2 * 2  # noqa: B018


def test_node_report_layout():
    x, y, z = mismatched()
    node = z.owner
    low = node_report("what failed", node, [np.ones((2, 2)), None], 7, verbosity="low")
    assert low.splitlines()[0] == "what failed"
    assert "(toposort position 7)" in low
    assert "float64 (2, 2)" in low and "not computed" in low
    typed = node_report("what failed", node, verbosity="low")
    assert "input types: " in typed
    high = node_report("what failed", node, verbosity="high")
    assert "inputs of the node:" in high


def test_errors_raised_by_monitor_hooks_reach_the_user_unchanged():
    x = tt.dvector("x")

    def broken(fgraph, i, node, thunk):
        raise KeyError("from the hook")

    f = tg.function([x], x + 1, mode=MonitorMode(post_func=broken))
    with pytest.raises(KeyError, match="from the hook"):
        f([1.0])


# ----------------------------------------------------------------------------------------------
# The lines named are the ones the user can find: notebook cells, and for a node made by
# rewriting, the expression it mostly stands for (then the others it absorbed)


def seed_train(features=784):
    """The seed logistic regression's train function (the Theano tutorial), float32."""
    with config.change_flags(floatX="float32"):
        rng = np.random.default_rng(0)
        x = tt.matrix("x")
        y = tt.vector("y")
        w = tg.shared(rng.standard_normal(features).astype("float32"), name="w")
        b = tg.shared(np.float32(0.0), name="b")
        p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))  # the dot line
        prediction = p_1 > 0.5
        xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)  # the xent line
        cost = xent.mean() + 0.01 * (w ** 2).sum()
        gw, gb = tg.grad(cost, [w, b])  # the grad line
        return tg.function([x, y], [prediction, xent],
                           updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)])


def test_a_fused_gemv_names_the_dot_line_and_the_users_inputs():
    train = seed_train()
    x = np.zeros((400, 700), dtype="float32")  # 700 features where w has 784
    with pytest.raises(ValueError) as info:
        train(x, np.zeros(400, dtype="float32"))
    lines = str(info.value).splitlines()
    created = next(line for line in lines if line.startswith("  created at "))
    assert created.endswith("p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))  # the dot line")
    also = next(line for line in lines if line.startswith("  also from: "))
    assert "# the grad line" in also and "# the xent line" in also
    inputs = next(line for line in lines if line.startswith("  inputs: "))
    assert "x float32 (400, 700)" in inputs and "w float32 (784,)" in inputs
    assert ".out" not in inputs and "intermediate values" in inputs


def test_errors_in_a_notebook_cell_name_the_cell_as_ipython_does(ipython_shell):
    ip = ipython_shell
    ip.run_cell("import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt", store_history=True)
    cell = ip.run_cell("a, b = tt.dvector('a'), tt.dvector('b')\n"
                       "c = tt.exp(a) * 2 + tt.log(b)\n"
                       "f = tg.function([a, b], c)", store_history=True)
    failed = ip.run_cell("f(np.ones(3), np.ones(4))", store_history=True)
    text = str(failed.error_in_exec)
    number = cell.execution_count
    assert f"created at Cell In[{number}], line 2: c = tt.exp(a) * 2 + tt.log(b)" in text
    assert "ipykernel" not in text and "<ipython-input" not in text


def test_errors_in_a_real_kernel_name_the_cell(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (
        "%load_ext tensorgraph\nimport numpy as np, tensorgraph as tg, tensorgraph.tensor as tt",
        "a, b = tt.dvector('a'), tt.dvector('b')\nc = tt.exp(a) * 2 + tt.log(b)\n"
        "f = tg.function([a, b], c)",
        "f(np.ones(3), np.ones(4))")]
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=120, allow_errors=True,
                                     resources={"metadata": {"path": str(tmp_path)}})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(tmp_path))
        client.execute()
    (error,) = [o for o in nb.cells[2].outputs if o.output_type == "error"]
    text = error.evalue
    assert "created at Cell In[2], line 2: c = tt.exp(a) * 2 + tt.log(b)" in text, text
    assert "ipykernel_" not in text


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_errors_name_the_node_by_the_id_dprint_prints(mode):
    x, y, z = mismatched()
    if mode == "DebugMode":
        mode = DebugMode(patience=1)
    f = tg.function([x, y], z, mode=mode)
    with pytest.raises(ValueError) as info:
        f(np.ones(3), np.ones(4))
    node = info.value.node
    (line,) = [ln for ln in tg.dprint(f, file="str").splitlines() if ln.startswith(str(node.op))]
    printed_id = line.split("[id ")[1].split("]")[0]
    assert f"in node {node} [id {printed_id}]" in str(info.value)


BLAS_MODES = ["FAST_RUN", tg.Mode("py", "fast_run"), tg.Mode("c|py", "fast_run")]


def _headline(f, *args) -> str:
    with pytest.raises(ValueError) as info:
        f(*args)
    return str(info.value).splitlines()[0]


@pytest.mark.parametrize("mode", BLAS_MODES, ids=str)
def test_blas_shape_errors_name_the_users_variables(mode):
    # the rewrites turn tt.dot into Gemv / Gemm / Dot22, whose own inputs (y, A, x, z, a, b)
    # the user never wrote: the headline speaks of the dot the user wrote
    x, W, b = tt.vector("x"), tt.matrix("W"), tt.vector("b")
    f = tg.function([W, x], tt.dot(W, x) + 1, mode=mode)
    assert any("Gemv" in str(n.op) for n in f.maker.fgraph.apply_nodes)
    assert _headline(f, np.ones((2, 3)), np.ones(4)) == (
        "dot: inner dimensions differ: W has shape (2, 3) and x has shape (4,) (3 != 4)")
    g = tg.function([W, x, b], tt.dot(W, x) + b, mode=mode)
    assert _headline(g, np.ones((2, 3)), np.ones(3), np.ones(5)) == (
        "dot(W, x) has shape (2,) and cannot be added to b of shape (5,)")
    A, B, C = tt.matrix("A"), tt.matrix("B"), tt.matrix("C")
    gemm = tg.function([A, B, C], tt.dot(A, B) + C, mode=mode)
    assert _headline(gemm, np.ones((2, 3)), np.ones((3, 2)), np.ones((3, 3))) == (
        "dot(A, B) has shape (2, 2) and cannot be added to C of shape (3, 3)")
    unrewritten = tg.function([W, x], tt.dot(W, x) + 1, mode="FAST_COMPILE")  # Dot: the same
    assert _headline(unrewritten, np.ones((2, 3)), np.ones(4)) == _headline(
        f, np.ones((2, 3)), np.ones(4))
    dot22 = tg.function([A, B], tt.dot(tt.exp(A), B), mode=mode)
    assert _headline(dot22, np.ones((2, 3)), np.ones((4, 2))) == (
        "dot: inner dimensions differ: the first operand has shape (2, 3) and B has shape "
        "(4, 2) (3 != 4)")


def test_a_fused_gemv_pair_names_the_users_variables():
    X, y = tt.matrix("X"), tt.vector("y")
    w = tg.shared(np.zeros(7), name="w")
    p = 1 / (1 + tt.exp(-tt.dot(X, w)))
    cost = (-y * tt.log(p) - (1 - y) * tt.log(1 - p)).mean()
    train = tg.function([X, y], cost, updates=[(w, w - 0.1 * tg.grad(cost, w))],
                        mode="FAST_RUN")
    assert any("pair" in str(n.op) for n in train.maker.fgraph.apply_nodes)
    assert _headline(train, np.ones((5, 6)), np.ones(5)) == (
        "dot: inner dimensions differ: X has shape (5, 6) and w has shape (7,) (6 != 7)")


def test_a_node_made_by_the_users_rewrite_names_that_rewrite():
    from tensorgraph.rewriting.basic import node_rewriter
    from tensorgraph.rewriting.db import EquilibriumDB

    @node_rewriter([tt.add])
    def doubles_y_bug(fgraph, node):
        a, b = node.inputs
        if b.owner is None:
            return [tt.add(a, tt.concatenate([b, b]))]
        return None

    db = EquilibriumDB()
    db.register("doubles_y_bug", doubles_y_bug, "all")
    x, y = tt.dvector("x"), tt.dvector("y")
    f = tg.function([x, y], x + y, mode=tg.Mode("vm", db.query("+all")))
    with pytest.raises(ValueError) as info:
        f(np.ones(2), np.ones(2))
    lines = str(info.value).splitlines()
    assert lines[-1].startswith("  made by your rewrite doubles_y_bug (")
    assert "test_errors.py:" in lines[-1]      # where the rewrite is defined
