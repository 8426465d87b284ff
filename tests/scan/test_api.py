"""The scan API as Theano / PyTensor users write it: names, arguments, what the step may
return, test values."""

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.gradient import Lop
from tensorgraph.graph.utils import MissingInputError
from tensorgraph.scan import Scan, filter, reduce, scan


def _scan_node(f):
    return next(n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan))


def test_names_users_type():
    import tensorgraph.scan.basic
    import tensorgraph.scan.utils
    import tensorgraph.scan.views

    assert callable(tensorgraph.scan)  # tensorgraph.scan(fn, ...) as pytensor.scan(fn, ...)
    assert tensorgraph.scan.until is tensorgraph.scan.utils.until
    assert tensorgraph.map is tensorgraph.scan.views.map
    assert {tensorgraph.reduce, tensorgraph.foldl, tensorgraph.foldr} == {
        tensorgraph.scan.views.reduce, tensorgraph.scan.views.foldl, tensorgraph.scan.views.foldr}
    x = tt.dvector("x")
    doubled, updates = tensorgraph.scan(lambda v: v * 2, sequences=x)
    np.testing.assert_allclose(doubled.eval({x: np.arange(3.0)}), [0.0, 2.0, 4.0])


def test_step_returning_only_updates():
    acc = tensorgraph.shared(0.0, name="acc")
    outputs, updates = scan(lambda: {acc: acc + 1}, n_steps=5)
    assert outputs == [] and list(updates) == [acc]
    tensorgraph.function([], [], updates=updates)()
    assert acc.get_value() == 5.0


def test_step_returning_a_constant_and_a_shared_sequence():
    rows = tensorgraph.shared(np.arange(6.0).reshape(3, 2), name="rows")
    ones, _ = scan(lambda r: tt.constant(1.0, dtype="float64"), sequences=rows)
    weighted, _ = scan(lambda r, w: (r * w).sum(), sequences=rows,
                       non_sequences=np.array([1.0, 10.0]))
    f = tensorgraph.function([], [ones, weighted])
    a, b = f()
    np.testing.assert_allclose(a, [1.0, 1.0, 1.0])
    np.testing.assert_allclose(b, [10.0, 32.0, 54.0])


def test_return_list_and_strict():
    x = tt.dvector("x")
    w = tt.dscalar("w")
    out, _ = scan(lambda v: v * 2, sequences=x, return_list=True)
    assert isinstance(out, list) and len(out) == 1
    with pytest.raises(MissingInputError, match="strict=True but the step function reads w"):
        scan(lambda v: v * w, sequences=x, strict=True)
    scan(lambda v, w: v * w, sequences=x, non_sequences=w, strict=True)


def test_test_values_flow_into_the_step():
    with config.change_flags(compute_test_value="raise"):
        x = tt.dvector("x")
        x.tag.test_value = np.arange(3.0)
        seen = []

        def step(v, h):
            seen.append(v.tag.test_value)
            return h + v

        out, _ = scan(step, sequences=x, outputs_info=tt.constant(0.0, dtype="float64"))
    assert seen[0] == 0.0
    np.testing.assert_allclose(out.tag.test_value, [0.0, 1.0, 3.0])


def test_lop():
    x = tt.dvector("x")
    w = tt.dscalar("w")
    u = tt.dvector("u")
    h, _ = scan(lambda v, h, w: h * w + v, sequences=x,
                outputs_info=tt.constant(0.0, dtype="float64"), non_sequences=w)
    # h = [1, 2w + 1, ...]: d(sum h)/dw at w=2 is 0 + 1 + (3 + 2 * 1) = 6
    assert tensorgraph.function([x, w, u], Lop(h, w, u))(np.ones(3), 2.0, np.ones(3)) == 6.0


def test_inner_mode_and_allow_gc_given_to_scan():
    x = tt.dvector("x")
    h, _ = scan(lambda v, h: h + v, sequences=x, outputs_info=tt.constant(0.0, dtype="float64"),
                mode="FAST_COMPILE", allow_gc=True)
    with config.change_flags(scan__allow_gc=False):
        f = tensorgraph.function([x], h, mode="FAST_RUN")
    runner = Scan.runner_of(_scan_node(f))
    assert runner.function.maker.mode.optimizer == "fast_compile"
    assert runner.allow_gc
    np.testing.assert_allclose(f(np.ones(3)), [1.0, 2.0, 3.0])


def test_equal_scans_are_equal_ops_and_merge():
    x = tt.dvector("x")
    a, _ = scan(lambda v: v * 2, sequences=x, name="a")
    b, _ = scan(lambda v: v * 2, sequences=x, name="b")
    c, _ = scan(lambda v: v * 3, sequences=x)
    assert a.owner.op == b.owner.op and hash(a.owner.op) == hash(b.owner.op)
    assert a.owner.op != c.owner.op
    f = tensorgraph.function([x], [a, b])
    assert len([n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]) == 1


def test_the_node_gives_access_to_the_inner_graph_and_its_compiled_function():
    x = tt.dvector("x")
    h, _ = scan(lambda v, h: tt.exp(h) * v, sequences=x,
                outputs_info=tt.constant(0.0, dtype="float64"), name="loop")
    f = tensorgraph.function([x], h)
    node = _scan_node(f)
    assert node.op.fgraph.inputs[0].name == "x[t]"
    runner = Scan.runner_of(node)
    assert runner.function.maker.fgraph.rewrite_history is not None
    # one iteration at a time, as a stepper would run them
    from tensorgraph.scan.loop import ScanLoop

    inputs = [np.int64(3), np.ones(3), np.float64(0.0)]
    loop = ScanLoop(node.op, node, inputs)
    while not loop.done:
        loop.accept(runner.function(*loop.arguments()))
    cells = [[None]]
    loop.store_results(cells)
    np.testing.assert_allclose(cells[0][0], f(np.ones(3)))


def test_updates_returned_as_a_list_of_pairs():
    w = tensorgraph.shared(np.array([1.0, 2.0]), name="w")
    x = tt.dmatrix("x")
    out, updates = scan(lambda row: ([(row * w).sum()], [(w, w + 1.0)]), sequences=x)
    f = tensorgraph.function([x], out, updates=updates)
    np.testing.assert_allclose(f(np.ones((3, 2))), [3.0, 5.0, 7.0])
    np.testing.assert_allclose(w.get_value(), [4.0, 5.0])


def test_return_updates_false_as_pytensor_3():
    from tensorgraph.tensor.random.utils import RandomStream

    x = tt.dvector("x")
    doubled = scan(lambda v: v * 2, sequences=x, return_updates=False)
    np.testing.assert_allclose(doubled.eval({x: np.arange(3.0)}), [0.0, 2.0, 4.0])
    assert reduce(lambda v, a: a + v, sequences=x, outputs_info=tt.constant(0.0, dtype="float64"),
                  return_updates=False).eval({x: np.arange(4.0)}) == 6.0
    srng = RandomStream(seed=0)  # default updates are kept by the generators themselves
    draws = scan(lambda: srng.normal(0.0, 1.0, dtype="float64"), n_steps=3,
                 return_updates=False)
    f = tensorgraph.function([], draws)
    assert not np.allclose(f(), f())
    acc = tensorgraph.shared(0.0, name="acc")
    with pytest.raises(ValueError, match="return_updates=False but the step updates acc"):
        scan(lambda: {acc: acc + 1}, n_steps=2, return_updates=False)


def test_filter():
    x = tt.dvector("x")
    y = tt.dvector("y")
    positive = filter(lambda v: v > 0, sequences=x)
    np.testing.assert_allclose(positive.eval({x: np.array([1.0, -2.0, 3.0])}), [1.0, 3.0])
    a, b = filter(lambda u, v: (u > 0, v > 0), sequences=[x, y])
    f = tensorgraph.function([x, y], [a, b])
    got_a, got_b = f(np.array([1.0, -1.0]), np.array([-1.0, 2.0]))
    np.testing.assert_allclose(got_a, [1.0])
    np.testing.assert_allclose(got_b, [2.0])
    backwards = filter(lambda v: v > 0, sequences=x, go_backwards=True)
    np.testing.assert_allclose(backwards.eval({x: np.array([1.0, -2.0, 3.0])}), [3.0, 1.0])


def test_non_sequences_reach_the_step_as_themselves():
    # the step may differentiate an outer expression with respect to a non-sequence
    x1 = tt.dscalar("x1")
    x2 = tensorgraph.shared(np.array([1.0, 2.0, 3.0]), name="x2")
    k = x2 * x1
    out, _ = scan(lambda i, v: tensorgraph.grad(k[i], v), sequences=tt.arange(k.shape[0]),
                  non_sequences=x1)
    np.testing.assert_allclose(tensorgraph.function([x1], out)(3.0), [1.0, 2.0, 3.0])
