"""The PyTensor mode TENSORGRAPH and the graph import on plain PyTensor graphs (no PyMC: these
also run against PyTensor 3.x): PyTensor's semantics kept, shared variables, updates and
random generators, ops without a conversion (PyTensor perform nodes), threads."""


import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.tensor as pt
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from thread_checks import run_in_threads

import tensorgraph as tg
import tensorgraph.pytensor as tgp
from tensorgraph import config


class Twice(Op):
    """A user's PyTensor op with a perform only: no conversion exists for it."""

    __props__ = ()

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2


def test_int_true_division_whatever_int_division_says():
    config.int_division = "int"
    i, j = pt.lvector("i"), pt.lvector("j")
    f = pytensor.function([i, j], i / j, mode="TENSORGRAPH")
    out = f([1, 3], [2, 2])
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [0.5, 1.5])


def test_shared_variables_and_updates():
    acc = pytensor.shared(np.zeros(2), name="acc")
    x = pt.vector("x")
    f = pytensor.function([x], acc.sum(), updates={acc: acc + x}, mode="TENSORGRAPH")
    assert f([1.0, 2.0]) == 0.0
    assert f([1.0, 2.0]) == 3.0
    np.testing.assert_array_equal(acc.get_value(), [2.0, 4.0])


def test_random_generators_advance_as_in_pytensor():
    def draws(mode):
        rng = pytensor.shared(np.random.default_rng(7))
        next_rng, draw = pt.random.normal(0, 1, size=3, rng=rng).owner.outputs
        f = pytensor.function([], draw, updates={rng: next_rng}, mode=mode)
        return [f() for _ in range(3)]

    got, want = draws("TENSORGRAPH"), draws("FAST_RUN")
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got[0], got[1])


def test_an_op_without_conversion_runs_its_perform_and_is_listed():
    x = pt.vector("x")
    f = pytensor.function([x], Twice()(pt.exp(x)).sum(), mode="TENSORGRAPH")
    np.testing.assert_allclose(f([0.0, 1.0]), 2 * (1 + np.e))
    [(op, reason)] = tgp.unsupported(f)
    assert op == "Twice" and "no conversion is registered for Twice" in reason
    assert "PyTensor[Twice]" in tgp.unwrap(f).dprint(file="str")


def test_a_registered_conversion_replaces_the_perform_node():
    tgp.register(Twice)(lambda op, node, x: x * 2)
    try:
        x = pt.vector("x")
        ins, out = tgp.from_pytensor(Twice()(x))
        assert tgp.unsupported(out) == []
        np.testing.assert_array_equal(tg.function(ins, out)([1.0, 2.0]), [2.0, 4.0])
    finally:
        tgp.convert.TABLE._table.pop(Twice)


def test_the_tensorgraph_function_runs_in_many_threads_at_once():
    x = pt.matrix("x")
    fn = tgp.unwrap(pytensor.function([x], pt.log1p(pt.exp(x)).sum(axis=0), mode="TENSORGRAPH"))
    inputs = [np.full((50, 4), float(k)) for k in range(8)]
    want = [fn(v) for v in inputs]
    found = {}

    def work(k):
        found[k] = [fn(inputs[k]) for _ in range(20)]

    run_in_threads(work, 8)
    for k in range(8):
        for value in found[k]:
            np.testing.assert_array_equal(value, want[k])


def test_the_ops_pymc_uses_convert_and_compute_as_in_pytensor():
    """One function over the op classes PyMC's log-densities use (indexing and its increments,
    shapes, joins, reductions, cumulative sums, diagonals, products, Cholesky, triangular
    solves, a Blockwise): every node converts, and the values are PyTensor's C's."""
    x, m = pt.vector("x"), pt.matrix("m")
    i = pt.lvector("i")
    spd = m @ m.T + 3 * pt.eye(4)
    chol = pt.linalg.cholesky(spd)
    outs = [
        x[1:-1].sum() + x[::2].prod(), x[i], m[i, 1:], m[i[:2], i[1:3]], x[None, 1:],
        pt.set_subtensor(x[1:3], 0.0), pt.inc_subtensor(x[i], 1.0), pt.inc_subtensor(m[i, :2], 2.0),
        pt.set_subtensor(m[1, 2], 5.0), pt.join(0, x, x[:2]), pt.split(x, [1, 3], n_splits=2)[1],
        pt.reshape(m, (2, -1)), pt.cumsum(x), pt.cumprod(m, axis=1), pt.diagonal(m),
        pt.diag(x), m.max(axis=0), (x > 0).all(), pt.stack([x.sum(), x.shape[0]]),
        pt.alloc(x.sum(), 2, 3), m @ x, m.T @ m, chol,
        pt.linalg.solve_triangular(chol, x, lower=True), x // 2, x % 3, pt.switch(x > 1, x, -x),
        pt.special.softmax(m, axis=1), pt.logsumexp(m, axis=0),
        pt.linalg.solve_triangular(pt.stack([chol, chol]), pt.stack([m, m]), lower=True),
    ]
    f = pytensor.function([x, m, i], outs, mode="TENSORGRAPH")
    ref = pytensor.function([x, m, i], outs, mode="FAST_RUN")
    args = (np.array([0.5, -1.0, 2.0, 3.0]), np.arange(16.0).reshape(4, 4) / 7, np.array([2, 0, 3]))
    for got, want in zip(f(*args), ref(*args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert tgp.unsupported(f) == []


def test_small_graphs_keep_their_buffers_and_the_outputs_stay_the_callers():
    """A graph whose intermediates are small by their static shapes keeps their buffers
    between calls (cvm_nogc); what a call returned is not overwritten by the next call."""
    x = pt.vector("x", shape=(4,))
    y = pt.exp(x) * 2 + x
    f = pytensor.function([x], [y.sum(), y, -y], mode="TENSORGRAPH")
    assert tgp.unwrap(f).maker.mode.linker_name == "cvm_nogc"
    first = f(np.arange(4.0))
    kept = [np.array(v, copy=True) for v in first]
    second = f(np.ones(4))
    for a, b in zip(first, kept, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(second[1], 2 * np.exp(1.0) + 1)


def test_unknown_shapes_free_the_intermediates_unless_told():
    from pytensor.compile.mode import Mode

    x = pt.vector("x")  # no static length: the intermediates may be big
    assert tgp.unwrap(pytensor.function([x], pt.exp(x).sum(), mode="TENSORGRAPH")
                      ).maker.mode.linker_name == "cvm"
    keep = Mode(tgp.TensorgraphLinker(allow_gc=False), tgp.TENSORGRAPH.provided_optimizer)
    f = pytensor.function([x], pt.exp(x).sum(), mode=keep)
    assert tgp.unwrap(f).maker.mode.linker_name == "cvm_nogc"
    assert f(np.zeros(3)) == 3.0


def test_a_scan_perform_node_unpickles_with_a_working_inner_graph():
    """PyTensor's ReplaceValidate drops its history from a pickle and never makes it again,
    and a FunctionGraph its execute_callbacks_times: a Scan's inner graph unpickled from
    tensorgraph's graph cache (or in pm.sample's workers) failed every rewrite that checkpoints
    ("no attribute 'history'", logged), or, with the history alone repaired, a replacement
    half done (a LookupError). The perform node repairs both when unpickled."""
    import logging
    import pickle

    from pytensor.graph.features import History

    x, a = pt.dvector("x"), pt.dscalar("a")
    ys, _ = pytensor.scan(lambda v, prev, a: pt.exp(a * v) * 0.1 + pt.tanh(prev * (1 - a)) * 2,
                          sequences=[x], outputs_info=[pt.as_tensor(np.float64(0.0))],
                          non_sequences=[a])
    f = pytensor.function([x, a], ys.sum(), mode="TENSORGRAPH")
    op = next(n.op for n in tgp.unwrap(f).maker.fgraph.apply_nodes
              if isinstance(n.op, tgp.PyTensorPerform) and hasattr(n.op.pt_op, "fgraph"))
    # pickled before its first call, as the graph cache keeps it: the inner function is
    # compiled (and its inner graph rewritten) in the unpickling process
    again = pickle.loads(pickle.dumps(op))
    histories = [ft for ft in again.pt_op.fgraph._features if isinstance(ft, History)]
    assert histories and all(hasattr(ft, "history") for ft in histories)
    again.pt_op._fn = None
    logged = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = logged.append  # PyTensor logs a failed rewrite and goes on
    logging.getLogger("pytensor").addHandler(handler)
    try:
        fn = again.pt_op.fn
    finally:
        logging.getLogger("pytensor").removeHandler(handler)
    assert len(fn.maker.fgraph.apply_nodes) > 0
    assert [r.getMessage() for r in logged] == []
    ref = pytensor.function([x, a], ys.sum(), mode="FAST_RUN")
    assert f(np.arange(4.0), 0.5) == pytest.approx(ref(np.arange(4.0), 0.5), rel=1e-12)


def test_a_scan_runs_pytensors_own_thunk_from_any_thread():
    """A Scan perform node runs PyTensor's thunk of the node (its Cython loop): what a call
    returned is never overwritten by the next one, calls from many threads at once give
    PyTensor's values, and the function pickles (the thunk is made again where it runs)."""
    import pickle

    x = pt.dvector("x")
    ys, _ = pytensor.scan(lambda v, prev: prev * 0.5 + v, sequences=[x],
                          outputs_info=[pt.as_tensor(np.float64(0.0))])
    f = pytensor.function([x], ys, mode="TENSORGRAPH")
    ref = pytensor.function([x], ys, mode="FAST_RUN")
    first = f(np.arange(5.0))
    kept = first.copy()
    np.testing.assert_allclose(f(np.ones(5)), ref(np.ones(5)), rtol=1e-15)
    np.testing.assert_array_equal(first, kept)
    op = next(n.op for n in tgp.unwrap(f).maker.fgraph.apply_nodes
              if isinstance(n.op, tgp.PyTensorPerform) and hasattr(n.op.pt_op, "fgraph"))
    assert op._pt_thunk() is not None
    inputs = [np.full(6, float(k)) for k in range(6)]
    found = {}
    fn = tgp.unwrap(f)  # thread-safe, as every tensorgraph Function

    def work(k):
        found[k] = [fn(inputs[k])[0] for _ in range(10)]

    run_in_threads(work, 6)
    for k in range(6):
        for value in found[k]:
            np.testing.assert_allclose(value, ref(inputs[k]), rtol=1e-15)
    again = pickle.loads(pickle.dumps(f))
    np.testing.assert_allclose(again(np.arange(5.0)), kept, rtol=1e-15)
