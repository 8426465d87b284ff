"""Generated C of the indexing ops against their numpy ``perform``: basic indexing (views, any
slice incl. negative steps, symbolic bounds), set/inc at basic indices, ``x[v]`` and
set/inc at ``x[v]`` (repeats accumulate), inplace forms, run-time index errors.

The index values are symbolic inputs, so one compiled module serves every case hypothesis
draws; the reference is the same graph under the Python linker.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.compile.io import Out
from tensorgraph.tensor.subtensor import AdvancedIncSubtensor1, IncSubtensor

from op_checks import C, both


def assert_same(got, expected):
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype and g.shape == e.shape, (k, g.shape, e.shape)
        np.testing.assert_array_equal(g, e, err_msg=f"output {k}")


def layout(a, kind):
    """``a``'s values in another memory layout."""
    if kind == "reversed":
        return np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1]
    if kind == "strided":
        wide = np.zeros((a.shape[0], a.shape[1] * 3), a.dtype)
        wide[:, ::3] = a
        return wide[:, ::3]
    if kind == "fortran":
        return np.asfortranarray(a)
    return a


LAYOUTS = ["c", "reversed", "strided", "fortran"]
bound = st.one_of(st.none(), st.integers(-7, 7))
step = st.one_of(st.none(), st.integers(-3, 3).filter(bool))


# ----------------------------------------------------------------------------------------------
# basic indexing


@pytest.fixture(scope="module")
def slicing():
    """x[a:b:c, d:e:f] for every pattern of given / omitted row parts, and int entries i, j."""
    x = tt.tensor("float32", shape=(None, None))
    sym = {n: tt.lscalar(n) for n in "abcdefij"}
    a, b, c, d, e, f, i, j = sym.values()
    outs = []
    for pattern in range(8):                       # which of start/stop/step are given
        parts = [p if pattern >> k & 1 else None for k, p in enumerate((a, b, c))]
        outs.append(x[slice(*parts), d:e:f])
    outs += [x[i], x[:, j], x[i, d:e:f], x[::-1, ::-2], x[a:, j], x[i, j]]
    return both([x] + list(sym.values()), outs)


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 6), a=bound, b=bound, c=step, d=bound,
       e=bound, f=step, kind=st.sampled_from(LAYOUTS), data=st.data())
def test_basic_slices_match_perform(slicing, rows, cols, a, b, c, d, e, f, kind, data):
    """Slices with bounds of every sign and overrun, negative steps, on contiguous and
    non-contiguous inputs; int entries drawn in range (out-of-range ints: the error test)."""
    f_c, f_py = slicing
    v = layout(np.arange(rows * cols, dtype="float32").reshape(rows, cols), kind)
    i = data.draw(st.integers(-rows, rows - 1))
    j = data.draw(st.integers(-cols, cols - 1))
    # omitted row parts are passed anyway (the outputs omitting them ignore them)
    args = (v, 0 if a is None else a, 0 if b is None else b, c or 1,
            0 if d is None else d, 5 if e is None else e, f or -1, i, j)
    assert_same(f_c(*args), f_py(*args))


def test_subtensor_output_is_a_view():
    x = tt.dmatrix("x")
    i = tt.lscalar("i")
    f = tensorgraph.function([x, i], Out(x[i, ::-2], borrow=True), mode=C)
    v = np.arange(12.0).reshape(3, 4)
    out = f(v, 1)
    assert np.shares_memory(out, v)
    np.testing.assert_array_equal(out, v[1, ::-2])


@pytest.mark.parametrize("args, message", [
    ((5, 0), "index 5 is out of bounds for axis 0 with size 3"),
    ((-4, 0), "index -4 is out of bounds for axis 0 with size 3"),
    ((0, 4), "index 4 is out of bounds for axis 1 with size 4"),
])
def test_out_of_range_int_index_names_axis_and_size(args, message):
    x = tt.dmatrix("x")
    i, j = tt.lscalar("i"), tt.lscalar("j")
    f = tensorgraph.function([x, i, j], x[i, j] * 2, mode=C)
    assert f(np.ones((3, 4)), -3, 3) == 2.0
    with pytest.raises(IndexError, match=message) as info:
        f(np.ones((3, 4)), *args)
    assert "Subtensor{i, i}" in str(info.value)


def test_zero_slice_step_is_an_error():
    x = tt.dvector("x")
    k = tt.lscalar("k")
    f = tensorgraph.function([x, k], x[::k], mode=C)
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        f(np.ones(3), 0)


# ----------------------------------------------------------------------------------------------
# set / inc at basic indices


@pytest.fixture(scope="module")
def updating():
    x = tt.tensor("float64", shape=(None, None))
    row = tt.tensor("float64", shape=(1, None))
    y = tt.tensor("float64", shape=(None, None))
    a, b, c, d = (tt.lscalar(n) for n in "abcd")
    outs = [tt.set_subtensor(x[a:b:c], row), tt.inc_subtensor(x[a:b:c], row),
            tt.set_subtensor(x[:, d], 1.5), tt.inc_subtensor(x[a:b:c, d], -2.0),
            tt.inc_subtensor(x[a:b:c], y), tt.set_subtensor(x[a:b:c], y)]
    return both([x, row, y, a, b, c, d], outs)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 5), cols=st.integers(1, 4), a=st.integers(-6, 6),
       b=st.integers(-6, 6), c=st.integers(-3, 3).filter(bool),
       kind=st.sampled_from(LAYOUTS), data=st.data())
def test_set_and_inc_at_slices_match_perform(updating, rows, cols, a, b, c, kind, data):
    f_c, f_py = updating
    x = layout(np.arange(rows * cols, dtype="float64").reshape(rows, cols), kind)
    d = data.draw(st.integers(-cols, cols - 1))
    picked = len(range(*slice(a, b, c).indices(rows)))
    row = np.linspace(1, 2, cols)[None]
    y = layout(np.arange(picked * cols, dtype="float64").reshape(picked, cols) * 10, kind) \
        if picked else np.zeros((0, cols))
    args = (x, row, y, a, b, c, d)
    before = x.copy()
    assert_same(f_c(*args), f_py(*args))
    np.testing.assert_array_equal(x, before)       # not inplace: the input is untouched


def test_inc_subtensor_shape_mismatch_names_sizes():
    x, y = tt.dmatrix("x"), tt.dmatrix("y")
    f = tensorgraph.function([x, y], tt.inc_subtensor(x[1:], y), mode=C)
    with pytest.raises(ValueError, match=r"cannot put a value of shape \(2, 4\) into the indexed "
                                         r"part of shape \(2, 3\): dimension 1 of the value "
                                         r"has size 4, the target 3"):
        f(np.zeros((3, 3)), np.zeros((2, 4)))


def test_inplace_inc_subtensor_reading_its_own_target():
    """An inplace update whose value is a view of the array it writes: numpy's result (the
    value is read before anything is written)."""
    x = tt.dvector("x")
    z = x * 1.0                                    # an intermediate the op may destroy
    out = IncSubtensor((("slice", "int", None, None),), inplace=True)(z, z[:-1], 1)
    f_c, f_py = both([x], [out], accept_inplace=True)
    v = np.arange(6.0)
    assert_same(f_c(v), f_py(v))
    np.testing.assert_array_equal(f_c(v)[0], [0, 1, 3, 5, 7, 9])


# ----------------------------------------------------------------------------------------------
# x[v] and set/inc at x[v]


@pytest.fixture(scope="module")
def advanced():
    x = tt.tensor("float32", shape=(None, None))
    idx = tt.ivector("idx")
    rows = tt.tensor("float32", shape=(None, None))
    one = tt.tensor("float32", shape=(1, None))
    vec = tt.tensor("float32", shape=(None,))
    outs = [x[idx], tt.inc_subtensor(x[idx], rows), tt.set_subtensor(x[idx], rows),
            tt.inc_subtensor(x[idx], one), tt.inc_subtensor(x[idx], vec),
            tt.set_subtensor(x[idx], 4.0), x[::-1, ::2][idx]]
    return both([x, idx, rows, one, vec], outs)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 5), cols=st.integers(0, 3), kind=st.sampled_from(LAYOUTS),
       data=st.data())
def test_take_and_inc_at_rows_match_perform(advanced, n, cols, kind, data):
    """Repeated and negative indices: repeats accumulate for inc, the last one wins for set."""
    f_c, f_py = advanced
    idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=6)), dtype="int32")
    x = layout(np.arange(n * cols, dtype="float32").reshape(n, cols), kind)
    rows = np.arange(len(idx) * x.shape[1], dtype="float32").reshape(len(idx), x.shape[1])
    args = (x, idx, rows, np.full((1, x.shape[1]), 0.5, "float32"),
            np.full(x.shape[1], 0.25, "float32"))
    assert_same(f_c(*args), f_py(*args))


def test_advanced_index_out_of_range_names_position_and_size():
    x = tt.dmatrix("x")
    idx = tt.lvector("idx")
    f = tensorgraph.function([x, idx], [x[idx], tt.inc_subtensor(x[idx], 1.0)], mode=C)
    with pytest.raises(IndexError, match=r"index 3 \(at position 2 of the index vector\) is out "
                                         r"of bounds for axis 0 with size 3"):
        f(np.zeros((3, 2)), np.array([0, -3, 3]))


def test_failing_update_leaves_shared_storage_unchanged():
    w = tensorgraph.shared(np.zeros((3, 2)), name="w")
    idx = tt.lvector("idx")
    f = tensorgraph.function([idx], [], updates={w: tt.inc_subtensor(w[idx], 1.0)}, mode=C)
    f(np.array([0, 0, 2]))
    np.testing.assert_array_equal(w.get_value(), [[2, 2], [0, 0], [1, 1]])
    with pytest.raises(IndexError, match="index 7"):
        f(np.array([1, 7]))
    np.testing.assert_array_equal(w.get_value(), [[2, 2], [0, 0], [1, 1]])


def test_inplace_advanced_inc_matches_perform():
    x = tt.dmatrix("x")
    idx = tt.lvector("idx")
    z = x + 0.0
    out = AdvancedIncSubtensor1(inplace=True)(z, z[1], idx)   # the value is a view of z
    f_c, f_py = both([x, idx], [out], accept_inplace=True)
    v, i = np.arange(6.0).reshape(3, 2), np.array([2, 2, 0])
    assert_same(f_c(v, i), f_py(v, i))


def test_the_c_comes_from_the_link_layer_table():
    """The indexing ops define no C; it is registered in link/c/ops/subtensor.py and
    advanced_index.py, and tensor/subtensor.py imports nothing of tensorgraph.link."""
    from tensorgraph.link.c.ops import advanced_index as c_adv
    from tensorgraph.link.c.ops import subtensor as c_sub
    from tensorgraph.tensor import subtensor

    from op_checks import assert_c_from_table

    x, i, n = tt.dmatrix(), tt.lvector(), tt.lscalar()
    cases = [(x[1:n].owner.op, c_sub.SubtensorC),
             (tt.set_subtensor(x[1:], 0.0).owner.op, c_sub.IncSubtensorC),
             (x[i].owner.op, c_sub.AdvancedSubtensor1C),
             (tt.inc_subtensor(x[i], 1.0).owner.op, c_sub.AdvancedIncSubtensor1C),
             (x[i, 1:].owner.op, c_adv.AdvancedSubtensorC),
             (tt.set_subtensor(x[x > 0], 0.0).owner.op, c_adv.AdvancedIncSubtensorC),
             (subtensor._SliceLength((True, False, False)), c_sub.SliceLengthC)]
    assert_c_from_table(cases, subtensor)
