"""Indexing rewrites (tensorgraph/tensor/rewriting/subtensor.py): gathers along one axis become
AdvancedSubtensor1 / AdvancedIncSubtensor1, useless Subtensors go, values match numpy, and
the rewrites answer to PyTensor's names in including/excluding."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import get_mode
from tensorgraph.tensor.subtensor import (AdvancedIncSubtensor, AdvancedIncSubtensor1,
                                          AdvancedSubtensor, AdvancedSubtensor1, Subtensor)

RNG = np.random.default_rng(3)
MODE = get_mode("FAST_RUN")


def op_classes(f):
    return [type(n.op) for n in f.maker.fgraph.toposort()]


X = RNG.standard_normal((3, 4, 5))
V = np.array([3, 0, 3, -1])
M = np.array([[1, 2], [0, -1], [2, 2]])


@pytest.mark.parametrize("build, expected", [
    (lambda x, v, m: x[:, v], lambda: X[:, V]),
    (lambda x, v, m: x[:, :, v], lambda: X[:, :, V]),
    (lambda x, v, m: x[m], lambda: X[M]),
    (lambda x, v, m: x[:, m], lambda: X[:, M]),
    (lambda x, v, m: x[:, :, m], lambda: X[:, :, M]),
])
@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_gather_along_one_axis_uses_advanced_subtensor1(build, expected, mode):
    x, v, m = tt.dtensor3("x"), tt.lvector("v"), tt.lmatrix("m")
    f = tg.function([x, v, m], build(x, v, m), mode=get_mode(mode), on_unused_input="ignore")
    np.testing.assert_array_equal(f(X, V, M), expected())
    if mode == "FAST_RUN":
        assert AdvancedSubtensor1 in op_classes(f)
        assert AdvancedSubtensor not in op_classes(f)


def test_excluding_keeps_advanced_subtensor():
    x, v = tt.dmatrix("x"), tt.lvector("v")
    f = tg.function([x, v], x[:, v], mode=MODE.excluding("local_replace_AdvancedSubtensor"))
    assert op_classes(f) == [AdvancedSubtensor]
    np.testing.assert_array_equal(f(X[0], V), X[0][:, V])


@pytest.mark.parametrize("build", [
    lambda x, v, b: x[v, v],          # two index arrays
    lambda x, v, b: x[1:, v],         # a slice that is not full
    lambda x, v, b: x[b],             # a boolean mask
    lambda x, v, b: x[v, 2],          # an int next to the array
])
def test_other_advanced_indexing_is_left_alone(build):
    x, v, b = tt.dtensor3("x"), tt.lvector("v"), tt.bmatrix("b")
    out = build(x, v, b.astype("bool"))
    f = tg.function([x, v, b], out, mode=MODE, on_unused_input="ignore")
    assert AdvancedSubtensor in op_classes(f)
    assert AdvancedSubtensor1 not in op_classes(f)


@pytest.mark.parametrize("set_", [False, True])
@pytest.mark.parametrize("value_shape", [(3, 3, 5), (3, 5), (1,), ()])
def test_inc_along_one_axis_uses_advanced_inc_subtensor1(set_, value_shape):
    x, v = tt.dtensor3("x"), tt.lvector("v")
    y = tt.tensor("y", dtype="float64", shape=value_shape)
    index = (slice(None), v)
    out = (tt.set_subtensor if set_ else tt.inc_subtensor)(x[index], y)
    f = tg.function([x, v, y], out, mode=MODE)
    assert AdvancedIncSubtensor1 in op_classes(f)
    assert AdvancedIncSubtensor not in op_classes(f)
    y_val = RNG.standard_normal(value_shape)
    v_val = np.array([3, 1, 0]) if set_ else np.array([3, 1, 3])   # repeated: accumulate
    expected = X.copy()
    target = np.broadcast_to(y_val, (3, 3, 5))
    if set_:
        expected[:, v_val] = target
    else:
        np.add.at(expected, (slice(None), v_val), target)
    np.testing.assert_allclose(f(X, v_val, y_val), expected)


def test_gradient_of_column_gather():
    x, v = tt.dmatrix("x"), tt.lvector("v")
    g = tg.grad(tt.sum(x[:, v] ** 2), x)
    f = tg.function([x, v], g, mode=MODE)
    assert AdvancedIncSubtensor not in op_classes(f)
    expected = np.zeros_like(X[0])
    np.add.at(expected, (slice(None), V), 2 * X[0][:, V])
    np.testing.assert_allclose(f(X[0], V), expected)


@pytest.mark.parametrize("build, useless", [
    (lambda x: x[:], True),
    (lambda x: x[0:x.shape[0]], True),
    (lambda x: x[:, :x.shape[1]:1], True),
    (lambda x: x[1:], False),
    (lambda x: x[::-1], False),
    (lambda x: x[:2], False),
    (lambda x: x[0], False),
])
def test_local_useless_subtensor(build, useless):
    x = tt.dmatrix("x")
    f = tg.function([x], build(x), mode=MODE)
    assert (Subtensor not in op_classes(f)) == useless
    np.testing.assert_array_equal(f(X[0]), build(X[0]))


def test_useless_subtensor_with_static_size():
    x = tt.tensor("x", dtype="float64", shape=(4, None))
    f = tg.function([x], [x[:4], x[:9]], mode=MODE)
    assert Subtensor not in op_classes(f)
    a, b = f(X[0])
    np.testing.assert_array_equal(a, X[0])
    np.testing.assert_array_equal(b, X[0])


def test_pytensor_names_in_queries():
    # the queries ported PyTensor tests write (tests/tensor/test_subtensor.py's setup)
    mode = MODE.including("local_replace_AdvancedSubtensor",
                          "local_AdvancedIncSubtensor_to_AdvancedIncSubtensor1",
                          "local_useless_subtensor").excluding("bool_idx_to_nonzero",
                                                               "fuse_indexed_into_elemwise")
    x = tt.dvector("x")
    assert op_classes(tg.function([x], x[:], mode=mode)) == []
    with pytest.raises(ValueError, match="Numba"):
        MODE.including("fuse_indexed_into_elemwise")


def test_topo_constant_folding_is_constant_folding():
    x = tt.dvector("x")
    out = x + tt.exp(tt.constant(np.arange(3.0)))
    mode = get_mode("FAST_COMPILE")
    folded = tg.function([x], out, mode=mode.including("topo_constant_folding"))
    kept = tg.function([x], out, mode=mode.excluding("topo_constant_folding"))
    assert len(folded.maker.fgraph.toposort()) < len(kept.maker.fgraph.toposort())
    for f in (folded, kept):
        np.testing.assert_allclose(f(np.ones(3)), 1 + np.exp(np.arange(3.0)))
