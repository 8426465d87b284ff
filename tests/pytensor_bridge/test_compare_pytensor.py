"""tgn.compare given a PyTensor function (issue 34): rows for PyTensor's own C and NUMBA modes
beside TENSORGRAPH and tensorgraph's modes, all called with the same arguments and compared;
a PyTensor mode that cannot compile here is a row with its reason; shared variables are put
back; a PyMC compiled function takes a point; the notebook layer imports PyTensor only then."""

import subprocess
import sys

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.tensor as pt  # noqa: E402

import tensorgraph.pytensor as tgp  # noqa: E402
from tensorgraph.notebook.compare import compare  # noqa: E402

QUICK = {"repeat": 5, "budget": 0.05, "compile_times": False}


@pytest.fixture(scope="module")
def logistic():
    x, w = pt.matrix("x"), pt.vector("w")
    p = pt.sigmoid(x @ w)
    loss = -pt.log(p).sum()
    f = pytensor.function([x, w], [loss, pytensor.grad(loss, w)], mode="TENSORGRAPH")
    rng = np.random.default_rng(0)
    return f, (rng.normal(size=(20, 3)), rng.normal(size=3))


def test_pytensors_c_mode_is_a_row_beside_tensorgraph(logistic):
    f, args = logistic
    cmp = compare(f, modes=["FAST_RUN"], args=args, pytensor_modes=("C",), **QUICK)
    assert [r["mode"] for r in cmp.rows] == ["TENSORGRAPH", "FAST_RUN", "PyTensor C"]
    assert cmp.reference == "TENSORGRAPH" and cmp.function("TENSORGRAPH") is f
    for row in cmp.rows:
        assert row["error"] is None and row["call_median"] > 0 and row["nodes"] > 0
        assert [o["shape"] for o in row["outputs"]] == [[], [3]]
    assert all(r["agrees"] for r in cmp.rows[1:])
    assert cmp.row("PyTensor C")["compile_here"] > 0
    assert "PyTensor's modes" in cmp.row("PyTensor C")["compile_note"]
    # the graph view shows tensorgraph's graphs; PyTensor's own is text (PyTensor's debugprint)
    assert cmp.graph_function("TENSORGRAPH") is tgp.unwrap(f)
    assert cmp.graph_function("PyTensor C") is None
    assert "[id A]" in cmp.graph_text("PyTensor C")
    assert "PyTensor C" in cmp.table()
    pytest.importorskip("anywidget")
    from tensorgraph.notebook.compare_view import static_html

    view = cmp.view()
    assert view.graph is not None and view.selected == "TENSORGRAPH"
    view.selected = "PyTensor C"
    assert "runs PyTensor's graph" in view._graph_note.value
    view.selected = "FAST_RUN"
    assert view._graph_note.value == ""
    assert "PyTensor C" in static_html(cmp)


def test_a_pytensor_mode_that_cannot_compile_is_a_row_with_its_reason(logistic, monkeypatch):
    """NUMBA not installed: its row says so, the others are measured."""
    import pytensor.compile.mode as pt_mode

    real = pt_mode.get_mode

    def get_mode(name):
        if name == "NUMBA":
            raise ImportError("No module named 'numba'")
        return real(name)

    monkeypatch.setattr(pt_mode, "get_mode", get_mode)
    f, args = logistic
    cmp = compare(f, modes=["FAST_RUN"], args=args, pytensor_modes=("C", "NUMBA"), **QUICK)
    numba = cmp.row("PyTensor NUMBA")
    assert numba["error"] == "ImportError: No module named 'numba'"
    assert numba["call_median"] is None
    assert cmp.row("PyTensor C")["agrees"] is True
    assert "PyTensor NUMBA  error: ImportError" in cmp.table()


def test_shared_variables_and_updates_are_compared_and_put_back():
    x = pt.vector("x")
    acc = pytensor.shared(np.zeros(3), name="acc")
    f = pytensor.function([x], (x * acc).sum() + x.sum(), updates={acc: acc + x},
                          mode="FAST_RUN")  # another mode: compiled again in TENSORGRAPH
    acc.set_value(np.array([1.0, 2.0, 3.0]))
    cmp = compare(f, modes=["FAST_RUN"], args=(np.ones(3),), pytensor_modes=("C",), **QUICK)
    assert [r["mode"] for r in cmp.rows] == ["TENSORGRAPH", "FAST_RUN", "PyTensor C"]
    for row in cmp.rows:
        assert row["error"] is None, row
        assert row["outputs"][-1]["name"] == "acc (updated)" or row["mode"] == "FAST_RUN"
    assert all(r["agrees"] for r in cmp.rows[1:])
    np.testing.assert_array_equal(acc.get_value(), [1.0, 2.0, 3.0])


def test_a_pymc_function_is_compared_at_a_point():
    pm = pytest.importorskip("pymc")
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 1)
        sigma = pm.HalfNormal("sigma", 1)
        pm.Normal("y", mu, sigma, observed=np.array([0.3, -0.2, 1.1]))
    logp = model.compile_logp(mode="TENSORGRAPH")
    cmp = compare(logp, modes=["FAST_RUN"], args=model.initial_point(), pytensor_modes=("C",),
                  **QUICK)
    assert [r["error"] for r in cmp.rows] == [None, None, None]
    assert all(r["agrees"] for r in cmp.rows[1:])


def test_the_notebook_layer_imports_pytensor_only_when_given_a_pytensor_function():
    code = ("import sys, numpy as np, tensorgraph as tg, tensorgraph.tensor as tt\n"
            "import tensorgraph.notebook.compare_pytensor\n"
            "from tensorgraph.notebook.compare import compare\n"
            "x = tt.vector('x')\n"
            "compare(tg.function([x], x + 1), modes=['FAST_RUN'], args=(np.ones(2),),"
            " repeat=3, budget=0.01, compile_times=False)\n"
            "assert 'pytensor' not in sys.modules, 'pytensor imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_magic_compares_a_pymc_function_at_a_point(ipython_shell):
    pm = pytest.importorskip("pymc")
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 1)
        pm.Normal("y", mu, 1, observed=np.array([0.3, -0.2]))
    ipython_shell.user_ns.update(logp=model.compile_logp(), point=model.initial_point())
    cmp = ipython_shell.run_line_magic(
        "tg_compare", "-m FAST_RUN -p C -n 3 --budget 0.05 --no-compile-times logp(point)")
    cmp = getattr(cmp, "comparison", cmp)  # the view, or the comparison without a display
    assert [r["mode"] for r in cmp.rows] == ["TENSORGRAPH", "FAST_RUN", "PyTensor C"]
    assert all(r["agrees"] for r in cmp.rows[1:])
