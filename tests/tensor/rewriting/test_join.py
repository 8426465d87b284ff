"""Join/Split rewrites: a join of one tensor removed, an axis input that became a constant
fixed in the op (checked against numpy, in FAST_RUN's C and in Python)."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.tensor.join import Join, Split


def _ops(f):
    return [n.op for n in f.maker.fgraph.toposort()]


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_a_join_of_one_tensor_is_removed(mode):
    a = tt.tensor(dtype="float64", shape=(1, None, 1))
    ax = tt.lscalar("ax")
    for out, inputs in [(Join(0)(a), [a]), (Join()(ax, a), [ax, a])]:
        assert isinstance(out.owner.op, Join)
        f = tg.function(inputs, out * 2, mode=mode, on_unused_input="ignore")
        assert not any(isinstance(op, Join) for op in _ops(f))
        v = np.arange(3.0).reshape(1, 3, 1)
        np.testing.assert_array_equal(f(*([0] if len(inputs) == 2 else []), v), v * 2)


def test_a_join_of_one_tensor_is_kept_when_excluded():
    a = tt.dmatrix("a")
    mode = tg.compile.get_default_mode().excluding("local_join_1")
    f = tg.function([a], Join(1)(a) * 2, mode=mode)
    assert any(isinstance(op, Join) for op in _ops(f))


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_an_axis_input_given_a_constant_value_becomes_the_fixed_axis(mode):
    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    ax = tt.lscalar("ax")
    joined = tt.join(ax, a, b)
    first, second = Split(2)(joined, ax, tt.stack([a.shape[ax], b.shape[ax]]))
    f = tg.function([a, b], [joined, first, second], givens={ax: tt.constant(-1, dtype="int64")},
                    mode=mode)
    ops = _ops(f)
    assert Join(1) in ops and Split(2, 1) in ops and Join() not in ops and Split(2) not in ops
    va, vb = np.ones((2, 3)), np.arange(4.0).reshape(2, 2)
    out, p, q = f(va, vb)
    np.testing.assert_array_equal(out, np.concatenate([va, vb], axis=1))
    np.testing.assert_array_equal(p, va)
    np.testing.assert_array_equal(q, vb)


def test_an_out_of_range_constant_axis_still_fails_when_the_function_runs():
    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    ax = tt.lscalar("ax")
    f = tg.function([a, b], tt.join(ax, a, b), givens={ax: tt.constant(5, dtype="int64")})
    with pytest.raises(ValueError, match="join: axis 5 is out of range for 2-d inputs"):
        f(np.ones((2, 2)), np.ones((2, 2)))
