"""Generated C of general advanced indexing (``AdvancedSubtensor``, ``AdvancedIncSubtensor``)
against their numpy ``perform``.

Each index pattern below is compiled once per dtype with symbolic index values, as a read, an
``inc`` and a ``set`` (with a value of the indexed part's shape, and a broadcast scalar), under
the C linker without rewrites and under the Python linker. Hypothesis then draws the sizes, the
index values (negative, repeated, empty, and runtime-length-1 arrays that broadcast), boolean
masks, slice bounds and the memory layouts of ``x``, of the values and of the index arrays
(non-contiguous, negative strides).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from tensorgraph.tensor.subtensor import AdvancedIncSubtensor, AdvancedSubtensor

C = Mode("cvm", None)   # C linker, no rewrites: every node as written
PY = Mode("py", None)

# Index patterns on a 3-d x. Entries: ("vec", axis, dtype) an integer vector of the drawn
# length (or 1: broadcast), ("mat", axis, dtype) an integer matrix (rows x that length),
# ("int", axis) an integer scalar, ("mask", axes) a boolean mask, ":" a full slice, "::-1" a
# reversed one, "a:b:c" a slice with symbolic bounds and step.
PATTERNS = [
    [("vec", 0, "int64"), ("vec", 1, "int32")],                 # adjacent, at the front
    [("vec", 0, "int64"), ":", ("vec", 2, "int8")],             # apart: broadcast axes first
    [":", ("vec", 1, "int64"), ("vec", 2, "int16")],            # adjacent, in the middle
    [("int", 0), ":", ("vec", 2, "int64")],                     # an int counts as advanced
    [":", ("int", 1), ("vec", 2, "uint8")],
    [("mat", 0, "int64"), "a:b:c"],                             # 2-d index, then a slice
    [("mat", 0, "int32"), ":", ("vec", 2, "int64")],            # 2-d with 1-d broadcast
    [("mask", (0, 1))],                                         # mask over two axes
    ["::-1", ("mask", (1, 2))],
    [("mask", (0,)), "a:b:c", ("int", 2)],
    ["::-1", ("vec", 1, "int64"), "a:b:c"],
    [("vec", 0, "int64"), ("vec", 1, "int64"), ("int", 2)],     # no subspace left
]


def build(pattern, x):
    """(x[index] expression, the index inputs in order, their descriptions)."""
    index, inputs, described = [], [], []
    for entry in pattern:
        if entry == ":":
            index.append(slice(None))
        elif entry == "::-1":
            index.append(slice(None, None, -1))
        elif entry == "a:b:c":
            a, b, c = tt.lscalar("a"), tt.lscalar("b"), tt.lscalar("c")
            index.append(slice(a, b, c))
            inputs += [a, b, c]
            described += [("start",), ("stop",), ("step",)]
        else:
            kind = entry[0]
            if kind == "vec":
                var = tt.tensor(entry[2], shape=(None,))
            elif kind == "mat":
                var = tt.tensor(entry[2], shape=(None, None))
            elif kind == "int":
                var = tt.lscalar()
            else:
                var = tt.tensor("bool", shape=(None,) * len(entry[1]))
            index.append(var)
            inputs.append(var)
            described.append(entry)
    return x[tuple(index)], inputs, described


_compiled = {}


def functions(dtype):
    """(C function, Python function, index descriptions per pattern) of every pattern, read,
    inc and set, in one graph (one C module per dtype)."""
    if dtype not in _compiled:
        x = tt.tensor(dtype, shape=(None, None, None), name="x")
        s = tt.tensor(dtype, shape=(), name="s")
        inputs, outs, described = [x, s], [], []
        for pattern in PATTERNS:
            part, index, desc = build(pattern, x)
            assert isinstance(part.owner.op, AdvancedSubtensor)
            y = tt.tensor(dtype, shape=(None,) * part.ndim, name="y")
            y_set = tt.tensor(dtype, shape=(None,) * part.ndim, name="y_set")
            outs += [part, tt.inc_subtensor(part, y), tt.set_subtensor(part, y_set),
                     tt.inc_subtensor(part, s)]
            inputs += [y, y_set] + index
            described.append(desc)
        f_c = tensorgraph.function(inputs, outs, mode=C)
        kinds = {t.kind for t in f_c.vm.thunks}
        assert kinds == {"c"}, [(str(n.op), t.kind) for n, t in zip(f_c.vm.nodes, f_c.vm.thunks)]
        _compiled[dtype] = (f_c, tensorgraph.function(inputs, outs, mode=PY), described)
    return _compiled[dtype]


def relayout(value, how):
    """``value`` with the same elements in another memory layout."""
    if value.ndim == 0:
        return value
    if how == "reversed":
        flipped = np.ascontiguousarray(value[(slice(None, None, -1),) * value.ndim])
        return flipped[(slice(None, None, -1),) * value.ndim]
    if how == "strided":
        wide = np.zeros(value.shape[:-1] + (2 * value.shape[-1],), value.dtype)
        wide[..., ::2] = value
        return wide[..., ::2]
    if how == "transposed":
        return np.ascontiguousarray(value.T).T
    return value


def draw_value(rng, dtype, shape):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("int"):
        return rng.integers(-50, 50, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def draw_index(data, rng, described, shape):
    """Values for the index inputs (in range for their axis, negative and repeated ones too),
    and the numpy index they make."""
    n = data.draw(st.integers(0, 4), label="length")
    rows = data.draw(st.integers(1, 3), label="rows")
    values, index, bounds = [], [], []
    for entry in described:
        kind = entry[0]
        if kind in ("start", "stop", "step"):
            value = (data.draw(st.sampled_from([1, 2, -1, -2])) if kind == "step"
                     else data.draw(st.integers(-5, 5)))
            values.append(value)
            bounds.append(value)
            if kind == "step":
                index.append(slice(*bounds))
                bounds = []
            continue
        if kind == "mask":
            value = rng.random(tuple(shape[a] for a in entry[1])) < 0.5
        elif kind == "int":
            value = int(rng.integers(-shape[entry[1]], shape[entry[1]]))
        else:
            size = shape[entry[1]]
            low = 0 if entry[2].startswith("uint") else -size
            length = data.draw(st.sampled_from([n, n, 1]), label="vector length")
            dims = (length,) if kind == "vec" else (rows, length)
            value = relayout(rng.integers(low, size, dims).astype(entry[2]),
                             data.draw(st.sampled_from(["c", "reversed", "strided"])))
        values.append(value)
        index.append(value)
    return values, index


def full_index(pattern, index):
    """The numpy index of ``pattern`` with the drawn array/int/slice values ``index``."""
    drawn = iter(index)
    out = []
    for entry in pattern:
        if entry == ":":
            out.append(slice(None))
        elif entry == "::-1":
            out.append(slice(None, None, -1))
        else:
            out.append(next(drawn))
    return tuple(out)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int8", "bool"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_advanced_indexing_matches_perform(dtype, data):
    """x[index], inc and set at it (value shaped like the part, and a broadcast scalar)."""
    f_c, f_py, described = functions(dtype)
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=3, max_size=3)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    x = relayout(draw_value(rng, dtype, shape),
                 data.draw(st.sampled_from(["c", "reversed", "strided", "transposed"])))
    args = [x, draw_value(rng, dtype, ())]
    for pattern, desc in zip(PATTERNS, described):
        values, index = draw_index(data, rng, desc, shape)
        part_shape = x[full_index(pattern, index)].shape
        y = draw_value(rng, dtype, part_shape)
        # set: C-contiguous values only, for which numpy's last repeated index wins (with
        # other layouts numpy walks the value in memory order, so another one may win)
        args += [relayout(y, data.draw(st.sampled_from(["c", "reversed", "strided"]))),
                 y.copy()] + values
    got, expected = f_c(*args), f_py(*args)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype and g.shape == e.shape, (k, g.shape, e.shape)
        np.testing.assert_array_equal(g, e, err_msg=f"output {k} (pattern {k // 4})")


# ----------------------------------------------------------------------------------------------
# errors, inplace updates, fallbacks


def _error_functions():
    x = tt.dtensor3("x")
    i, j = tt.lvector("i"), tt.lvector("j")
    k = tt.lscalar("k")
    mask = tt.tensor("bool", shape=(None, None), name="mask")
    outs = [x[i, :, j], x[k, i], x[mask], tt.inc_subtensor(x[i, :, j], 1.0),
            tt.set_subtensor(x[mask], 0.0)]
    inputs = [x, i, j, k, mask]
    return (tensorgraph.function(inputs, outs, mode=C),
            tensorgraph.function(inputs, outs, mode=PY))


GOOD = dict(i=np.array([0, -2]), j=np.array([3, -4]), k=1, mask=np.ones((2, 3), bool))


@pytest.mark.parametrize("bad, message", [
    (dict(i=np.array([0, 2])), "index 2 is out of bounds for axis 0 with size 2"),
    (dict(i=np.array([0, -3])), "index -3 is out of bounds for axis 0 with size 2"),
    (dict(j=np.array([4, 0])), "index 4 is out of bounds for axis 2 with size 4"),
    (dict(k=-3), "index -3 is out of bounds for axis 0 with size 2"),
    (dict(j=np.array([0, 1, 2])), "shape mismatch: indexing arrays could not be broadcast "
                                  r"together with shapes \(2,\) \(3,\)"),
    (dict(mask=np.ones((2, 2), bool)), "boolean index did not match indexed array along axis "
                                       "1; size of axis is 3 but size of corresponding boolean "
                                       "axis is 2"),
])
def test_bad_indices_raise_index_error_like_numpy(bad, message):
    """The C raises IndexError with numpy's message (after the op's name), as perform does;
    the inc/set nodes check every index before writing."""
    f_c, f_py = _error_functions()
    x = np.arange(24.0).reshape(2, 3, 4)
    args = dict(GOOD, **bad)
    for f in (f_c, f_py):
        with pytest.raises(IndexError, match=message):
            f(x, args["i"], args["j"], args["k"], args["mask"])
    good = [GOOD[n] for n in "ijk"] + [GOOD["mask"]]
    for got, expected in zip(f_c(x, *good), f_py(x, *good)):
        np.testing.assert_array_equal(got, expected)


def test_value_that_does_not_fit_is_refused():
    x, y = tt.dmatrix("x"), tt.dvector("y")
    i = tt.lvector("i")
    f = tensorgraph.function([x, y, i], tt.inc_subtensor(x[i, i], y), mode=C)
    with pytest.raises(ValueError, match=r"cannot put a value of shape \(3,\) into the indexed "
                                         r"part of shape \(2,\)"):
        f(np.zeros((3, 3)), np.ones(3), np.array([0, 1]))


def test_inplace_update_reading_the_array_it_writes():
    """An inplace inc whose value is a view of the target: the value is read before it is
    overwritten (copied), so repeated indices see the original values, as in numpy."""
    x = tt.dtensor3("x")
    i, j = tt.lvector("i"), tt.lvector("j")
    x2 = x * 2
    op = AdvancedIncSubtensor((("array", ("slice", None, None, None), "array")), inplace=True)
    out = op(x2, x2[0, :, 0], i, j)
    f = tensorgraph.function([x, i, j], out, mode=C, accept_inplace=True)
    assert {t.kind for t in f.vm.thunks} == {"c"}
    v = np.arange(24.0).reshape(2, 3, 4)
    rows, cols = np.array([0, 1, 0]), np.array([0, 2, 0])
    expected = v * 2
    np.add.at(expected, (rows, slice(None), cols), (v * 2)[0, :, 0])
    np.testing.assert_array_equal(f(v, rows, cols), expected)


def test_uint64_indices_run_perform():
    x = tt.dmatrix("x")
    i = tt.tensor("uint64", shape=(None,), name="i")
    f = tensorgraph.function([x, i], x[i, i], mode=C)
    assert [t.kind for t in f.vm.thunks] == ["py"]
    v = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(f(v, np.array([2, 0], "uint64")), v[[2, 0], [2, 0]])


def test_fast_run_gradient_of_advanced_indexing_runs_c():
    """The read and the gradient's AdvancedIncSubtensor both run as C in FAST_RUN."""
    x = tt.dmatrix("x")
    i, j = tt.lvector("i"), tt.lvector("j")
    cost = (x[i, j] ** 2).sum()
    f = tensorgraph.function([x, i, j], [cost, tensorgraph.grad(cost, x)], mode="FAST_RUN")
    ops = {type(n.op).__name__ for n in f.vm.nodes}
    assert {"AdvancedSubtensor", "AdvancedIncSubtensor"} <= ops
    assert {t.kind for t in f.vm.thunks} == {"c"}
    v = np.arange(12.0).reshape(3, 4)
    rows, cols = np.array([0, 2, 0]), np.array([1, 3, 1])
    expected = np.zeros_like(v)
    np.add.at(expected, (rows, cols), 2 * v[rows, cols])
    c, g = f(v, rows, cols)
    assert c == (v[rows, cols] ** 2).sum()
    np.testing.assert_array_equal(g, expected)


# ----------------------------------------------------------------------------------------------
# the length of a slice (the shape of an indexed part, asked for symbolically)


@pytest.fixture(scope="module")
def slice_lengths():
    x = tt.dvector("x")
    a, b, c = tt.lscalar("a"), tt.lscalar("b"), tt.lscalar("c")
    outs = [x[a:b:c].shape[0], x[a:].shape[0], x[:b].shape[0], x[a:b].shape[0],
            x[::c].shape[0], x[:b:c].shape[0]]
    f_c = tensorgraph.function([x, a, b, c], outs, mode="FAST_RUN", on_unused_input="ignore")
    assert "_SliceLength" in {type(n.op).__name__ for n in f_c.vm.nodes}
    assert {t.kind for t in f_c.vm.thunks} == {"c"}
    return f_c


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 6), a=st.integers(-9, 9), b=st.integers(-9, 9),
       c=st.integers(-3, 3).filter(bool))
def test_slice_length_in_c_is_pythons(slice_lengths, n, a, b, c):
    got = slice_lengths(np.zeros(n), a, b, c)
    r = range(n)
    assert [int(g) for g in got] == [len(r[a:b:c]), len(r[a:]), len(r[:b]), len(r[a:b]),
                                     len(r[::c]), len(r[:b:c])]
