"""The compile report of the whole-graph back ends (``%%tg_compile --mode JAX`` / ``NUMBA`` /
``PYTORCH``):
the rewrite steps without the rewrites the mode leaves out, the compile time split into
rewriting, writing the back end's program and its compile, and the back end's own code where
C is shown for FAST_RUN."""

import numpy as np
import pytest

IPython = pytest.importorskip("IPython")
from IPython.utils.capture import capture_output  # noqa: E402

import tensorgraph as tg  # noqa: E402
from tensorgraph import config  # noqa: E402
from tensorgraph.notebook import CompileReport  # noqa: E402
from tensorgraph.rewriting.optdb import optdb  # noqa: E402

SEED = '''
x, y = tt.matrix("x"), tt.vector("y")
w = tg.shared(np.zeros(7, dtype="float32"), name="w")
b = tg.shared(np.float32(0.0), name="b")
p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
cost = xent.mean() + 0.01 * (w ** 2).sum()
gw, gb = tg.grad(cost, [w, b])
updates = [(w, w - 0.1 * gw), (b, b - 0.1 * gb)]
'''

LEFT_OUT = {"JAX": {"c_only", "blas", "fusion", "inplace"}, "NUMBA": {"c_only", "blas"},
            "PYTORCH": {"c_only", "blas"}}
BACKEND = {"JAX": "JAX", "NUMBA": "Numba", "PYTORCH": "PyTorch"}
LIBRARY = {"JAX": "jax", "NUMBA": "numba", "PYTORCH": "torch"}


@pytest.fixture
def ip(ipython_shell):
    ipython_shell.run_cell("import numpy as np\nimport tensorgraph as tg\n"
                           "import tensorgraph.tensor as tt")
    ipython_shell.user_ns.pop("train", None)
    return ipython_shell


@pytest.mark.parametrize("mode", ["JAX", "NUMBA", "PYTORCH"])
def test_tg_compile_reports_the_back_end(ip, mode):
    pytest.importorskip(LIBRARY[mode])
    with config.change_flags(floatX="float32"), capture_output() as out:
        ip.run_cell_magic("tg_compile", f"train --mode {mode}", SEED + "[p_1 > 0.5, xent]")
    train = ip.user_ns["train"]
    assert train.maker.mode.linker_name == mode.lower()
    reports = [o for o in out.outputs if "application/vnd.jupyter.widget-view+json" in o.data]
    assert len(reports) == 1
    report = CompileReport(train)
    record = report.record
    backend = BACKEND[mode]
    assert record.backend == backend and report.backend == backend
    assert record.mode == mode
    summary = report._summary.value
    assert f"writing the {backend} program" in summary and f"compiling it with {backend}" in summary
    assert "rewriting" in summary and "generating C" not in summary
    for step in report.steps:  # the left-out rewrites made no step
        if step.name in optdb:
            assert not (optdb.tags_of(step.name) & LEFT_OUT[mode]), step.name
    fast = CompileReport(tg.function(train.maker.inputs, [o.variable for o in
                                                          train.maker.outputs],
                                     mode="FAST_RUN", on_unused_input="ignore"))
    assert any(optdb.tags_of(s.name) & {"blas"} for s in fast.steps if s.name in optdb)
    X = np.random.default_rng(0).standard_normal((5, 7)).astype("float32")
    train(X, np.ones(5, dtype="float32"))
    code = report.backend_source()
    if mode == "JAX":
        assert "jaxpr" in code and "stablehlo" in code and "f32[5,7]" in code
    elif mode == "PYTORCH":  # the FX graph of aten ops and the C++ Inductor wrote for it
        assert "# FX graph" in code and "float32[5, 7]" in code and "aten.mm" in code
        assert "Inductor's code" in code
    else:
        assert "def graph(" in code and "@_jit" in code
    node = next(n for n in train.maker.fgraph.toposort() if "Dot" in str(n.op))
    part = report.backend_node_source(node)
    assert part.startswith("# [")
    if mode == "NUMBA":
        assert "np.dot" in part
    else:  # one traced program: the note names the code it is part of
        assert ("jaxpr" if mode == "JAX" else "FX graph") in part
    with pytest.raises(ValueError, match="not as one back-end program"):
        CompileReport(tg.function([], tg.tensor.constant(1.0) * 2)).backend_source()


def test_the_quiet_summary_line_splits_the_time():
    pytest.importorskip("numba")
    x = tg.tensor.vector("x")
    f = tg.function([x], tg.tensor.exp(x).sum(), mode="NUMBA", name="f")
    line = f.maker.compile_record.summary()
    assert "writing the Numba program" in line and "compiling it" in line
    assert "one numba.njit" in line
