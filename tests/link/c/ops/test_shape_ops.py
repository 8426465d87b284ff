"""Generated C of the shape, creation and join ops against their numpy ``perform``.

Each compiled function holds many ops (few modules to compile) and takes its sizes as symbolic
inputs, so one module serves every case hypothesis draws. The reference is the same graph
under the Python linker.
"""

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.compile.io import Out
from tensorgraph.tensor.creation import ARange

from op_checks import C, both


def assert_same(got, expected):
    if not isinstance(got, (list, tuple)):
        got, expected = [got], [expected]
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype, f"output {k}: {g.dtype} != {e.dtype}"
        assert g.shape == e.shape, f"output {k}: {g.shape} != {e.shape}"
        np.testing.assert_array_equal(g, e, err_msg=f"output {k}")


def layouts(a):
    """``a`` as C-contiguous, reversed, strided and transposed-back arrays (same values)."""
    rev = np.ascontiguousarray(a[::-1])[::-1]
    wide = np.zeros((a.shape[0] * 2,) + a.shape[1:], a.dtype)
    wide[::2] = a
    fortran = np.asfortranarray(a)
    return [a, rev, wide[::2], fortran]


# ----------------------------------------------------------------------------------------------
# Shape, Shape_i, SpecifyShape, Reshape


@pytest.fixture(scope="module")
def shape_fns():
    x = tt.tensor("float32", shape=(None, None, None))
    r0, r1, d1 = tt.lscalar("r0"), tt.lscalar("r1"), tt.lscalar("d1")
    outs = [tt.shape(x), tt.shape_i(x, 2), tt.reshape(x, (r0, r1)), tt.reshape(x, (-1,)),
            tt.reshape(x, (r0, r1, 1)), tt.reshape(x, (1, -1)), tt.flatten(x, 2),
            tt.specify_shape(x, (None, d1, None))]
    return both([x, r0, r1, d1], outs)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=3, max_size=3), data=st.data())
def test_shape_reshape_specify_match_perform(shape_fns, shape, data):
    f_c, f_py = shape_fns
    a = np.arange(np.prod(shape), dtype="float32").reshape(shape)
    size = a.size
    # a valid two-entry shape for the reshapes: (r0, size // r0)
    divisors = [d for d in range(1, size + 1) if size % d == 0] or [1]
    r0 = data.draw(st.sampled_from(divisors)) if size else 0
    r1 = size // r0 if r0 else data.draw(st.integers(0, 3))
    for v in layouts(a):
        assert_same(f_c(v, r0, r1, v.shape[1]), f_py(v, r0, r1, v.shape[1]))


def test_reshape_is_a_view_when_numpy_makes_one_and_a_copy_otherwise():
    x = tt.matrix("x", dtype="float64")
    out = tt.reshape(x, (3, 2, -1))
    f = tensorgraph.function([x], Out(out, borrow=True), mode=C)
    base = np.arange(24.0).reshape(4, 6)
    contiguous = f(base[:3])                      # rows of a C array: a view
    assert np.shares_memory(contiguous, base)
    np.testing.assert_array_equal(contiguous, base[:3].reshape(3, 2, -1))
    split_rows = f(base[:, :6:2].T.copy().T)      # Fortran order: numpy must copy
    assert not np.shares_memory(split_rows, base)
    np.testing.assert_array_equal(split_rows, np.reshape(base[:, :6:2], (3, 2, -1)))
    strided = base[::2, ::2]                      # (2, 3) strided: merging rows needs a copy
    np.testing.assert_array_equal(f(strided), np.reshape(strided, (3, 2, -1)))


@pytest.mark.parametrize("shape, message", [
    ((4, -1), "cannot reshape an array of shape (2, 3) (size 6) into shape (4, -1)"),
    ((-1, -1), "invalid shape (-1, -1)"),
    ((7, 1), "cannot reshape an array of shape (2, 3) (size 6) into shape (7, 1)"),
    ((-3, 2), "invalid shape (-3, 2)"),
])
def test_reshape_errors_name_the_shapes(shape, message):
    x = tt.matrix("x", dtype="float64")
    s = tt.lvector("s")
    f = tensorgraph.function([x, s], tt.reshape(x, s, ndim=2), mode=C)
    with pytest.raises(ValueError) as info:
        f(np.zeros((2, 3)), np.array(shape))
    assert message in str(info.value)
    assert "Reshape{2}" in str(info.value)          # the usual node report follows


def test_specify_shape_error_names_dimension_and_sizes():
    x = tt.matrix("x", dtype="float64")
    n = tt.lscalar("n")
    f = tensorgraph.function([x, n], tt.specify_shape(x, (n, 3)) * 2, mode=C)
    np.testing.assert_array_equal(f(np.ones((2, 3)), 2), np.full((2, 3), 2.0))
    # AssertionError in C as in perform (and PyTensor)
    with pytest.raises(AssertionError, match=r"dimension 0 has size 2, expected 5 \(expected shape "
                                         r"\(5, 3\), got \(2, 3\)\)"):
        f(np.ones((2, 3)), 5)
    py = tensorgraph.function([x, n], tt.specify_shape(x, (n, 3)) * 2,
                              mode=tensorgraph.Mode("py", None))
    with pytest.raises(AssertionError, match="dimension 0 has size 2, expected 5"):
        py(np.ones((2, 3)), 5)


# ----------------------------------------------------------------------------------------------
# Alloc, ARange, Eye, Tri


@pytest.fixture(scope="module")
def creation_fns():
    v = tt.tensor("float64", shape=(1, None))
    s = tt.dscalar("s")
    n, m, k = tt.lscalar("n"), tt.lscalar("m"), tt.lscalar("k")
    outs = [tt.alloc(v, n, 2, v.shape[1]), tt.alloc(s, n, m), tt.zeros((n, m), dtype="int32"),
            tt.ones((m,), dtype="float16"), tt.full((n,), True, dtype="bool"),
            tt.eye(n, m, k), tt.eye(n, m, k, dtype="int8"), tt.tri(n, m, k, dtype="bool")]
    return both([v, s, n, m, k], outs)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 5), m=st.integers(0, 5), k=st.integers(-6, 6),
       width=st.integers(0, 3), s=st.floats(-5, 5))
def test_alloc_eye_tri_match_perform(creation_fns, n, m, k, width, s):
    f_c, f_py = creation_fns
    v = np.arange(width, dtype="float64")[None] + 0.5
    for value in (v, np.asfortranarray(np.repeat(v, 2, axis=0))[:1]):
        assert_same(f_c(value, s, n, m, k), f_py(value, s, n, m, k))


def test_alloc_errors_name_sizes():
    v = tt.dvector("v")
    n, m = tt.lscalar("n"), tt.lscalar("m")
    f = tensorgraph.function([v, n, m], tt.alloc(v, n, m), mode=C)
    with pytest.raises(ValueError, match="dimension 0 of the value has size 3, the target 4"):
        f(np.ones(3), 2, 4)
    with pytest.raises(ValueError, match="alloc: size -2 of dimension 0 is negative"):
        f(np.ones(3), -2, 3)
    with pytest.raises(ValueError, match="does not declare the dimension broadcastable"):
        f(np.ones(1), 2, 3)
    # a size-1 value stretched at run time is named as PyTensor names it, in C and in Python
    f_py = tensorgraph.function([v, n, m], tt.alloc(v, n, m), mode=tensorgraph.Mode("py", None))
    for g in (f, f_py):
        with pytest.raises(ValueError, match="alloc: Runtime broadcasting not allowed: "):
            g(np.ones(1), 2, 3)
        with pytest.raises(ValueError, match=r"alloc: cannot .*the sizes differ"):
            g(np.ones(2), 2, 3)


@pytest.fixture(scope="module")
def arange_fns():
    a, b, c = tt.lscalar("a"), tt.lscalar("b"), tt.lscalar("c")
    fa, fb, fc = tt.dscalar("fa"), tt.dscalar("fb"), tt.dscalar("fc")
    outs = [tt.arange(a, b, c), ARange("int32")(a, b, c), ARange("int16")(a, b, c),
            tt.arange(fa, fb, fc), ARange("float32")(fa, fb, fc), ARange("int64")(fa, fb, fc),
            ARange("float16")(a, b, c)]
    return both([a, b, c, fa, fb, fc], outs)


@settings(max_examples=40, deadline=None)
@given(a=st.integers(-20, 20), b=st.integers(-20, 20),
       c=st.integers(-7, 7).filter(bool),
       fa=st.floats(-10, 10), fb=st.floats(-10, 10),
       fc=st.floats(-3, 3).filter(lambda v: abs(v) > 0.05))
def test_arange_matches_perform(arange_fns, a, b, c, fa, fb, fc):
    f_c, f_py = arange_fns
    got, expected = f_c(a, b, c, fa, fb, fc), f_py(a, b, c, fa, fb, fc)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        # the C may fuse a0 + i * delta into one multiply-add: an ulp from numpy at most
        rtol = {"float16": 1e-3, "float32": 1e-6 * 8, "float64": 1e-14}.get(g.dtype.name, 0)
        np.testing.assert_allclose(g.astype("float64"), e.astype("float64"), rtol=rtol,
                                   atol=rtol)


def test_arange_zero_step_and_eye_negative_size_errors():
    a, b, c = tt.lscalar("a"), tt.lscalar("b"), tt.lscalar("c")
    f = tensorgraph.function([a, b, c], [tt.arange(a, b, c), tt.eye(a, b)], mode=C)
    with pytest.raises(ValueError, match=r"arange: step must not be zero \(start=1, stop=5\)"):
        f(1, 5, 0)
    with pytest.raises(ValueError, match=r"eye: negative size \(-1, 5\)"):
        f(-1, 5, 1)
    g = tensorgraph.function([a, b, c], ARange("uint8")(a, b, c), mode=C)
    np.testing.assert_array_equal(g(250, 256, 2), [250, 252, 254])
    with pytest.raises(ValueError, match="arange: value -1 is out of bounds for uint8"):
        g(-1, 3, 1)


# ----------------------------------------------------------------------------------------------
# MakeVector, Join, Split


@pytest.fixture(scope="module")
def join_fns():
    x = tt.tensor("int16", shape=(None, None))
    y = tt.tensor("int16", shape=(None, None))
    i, j = tt.lscalar("i"), tt.lscalar("j")
    outs = [tt.concatenate([x, y], axis=0), tt.concatenate([x, y, x], axis=1),
            tt.stack([i, j, i + j]), tt.make_vector(i, 2.5, j, dtype="float32"),
            *tt.split(x, [i, j], 2, axis=1)]
    return both([x, y, i, j], outs, on_unused_input="ignore")


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(0, 4), cols=st.integers(0, 4), data=st.data())
def test_join_make_vector_split_match_perform(join_fns, rows, cols, data):
    f_c, f_py = join_fns
    a = np.arange(rows * cols, dtype="int16").reshape(rows, cols)
    i = data.draw(st.integers(0, cols))
    for va, vb in zip(layouts(a), reversed(layouts(a + 100))):
        assert_same(f_c(va, vb, i, cols - i), f_py(va, vb, i, cols - i))


def test_split_pieces_are_views_and_join_errors_name_the_dimension():
    x = tt.dmatrix("x")
    pieces = tt.split(x, [1, 2], 2, axis=0)
    f = tensorgraph.function([x], Out(pieces[1], borrow=True), mode=C)
    v = np.arange(12.0).reshape(3, 4)
    rest = f(v)
    assert np.shares_memory(rest, v)
    np.testing.assert_array_equal(rest, v[1:])
    with pytest.raises(ValueError, match=r"split: sizes \[1, 2\] \(sum 3\) do not divide "
                                         r"dimension 0 of size 4"):
        f(np.zeros((4, 2)))

    y = tt.dmatrix("y")
    g = tensorgraph.function([x, y], tt.concatenate([x, y], axis=1), mode=C)
    with pytest.raises(ValueError, match=r"join along axis 1: inputs of shapes \(2, 3\), "
                                         r"\(4, 1\) do not fit \(dimension 0: input 1 has size 4"):
        g(np.zeros((2, 3)), np.zeros((4, 1)))


@pytest.fixture(scope="module")
def symbolic_axis_fns():
    x = tt.tensor("float32", shape=(None, None, None))
    y = tt.tensor("float32", shape=(None, None, None))
    ax = tt.iscalar("ax")
    sizes = tt.lvector("sizes")
    outs = [tt.join(ax, x, y), *tt.split(x, sizes, 2, axis=ax)]
    return both([x, y, ax, sizes], outs)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=3, max_size=3), data=st.data())
def test_join_and_split_along_a_symbolic_axis_match_perform(symbolic_axis_fns, shape, data):
    f_c, f_py = symbolic_axis_fns
    axis = data.draw(st.integers(-3, 2))
    a = np.arange(np.prod(shape), dtype="float32").reshape(shape)
    first = data.draw(st.integers(0, shape[axis]))
    sizes = np.array([first, shape[axis] - first])
    for va, vb in zip(layouts(a), reversed(layouts(a + 100))):
        assert_same(f_c(va, vb, axis, sizes), f_py(va, vb, axis, sizes))


def test_symbolic_axis_errors_in_c_name_the_axis_and_the_range(symbolic_axis_fns):
    f_c, _ = symbolic_axis_fns
    a = np.zeros((2, 3, 4), "float32")
    with pytest.raises(ValueError, match=r"join: axis 3 is out of range for 3-d inputs "
                                         r"\(it must be in \[-3, 2\]\)"):
        f_c(a, a, 3, np.array([1, 1]))
    with pytest.raises(ValueError, match=r"join: axis -4 is out of range"):
        f_c(a, a, -4, np.array([1, 1]))
    with pytest.raises(ValueError, match=r"split: sizes \[1, 1\] \(sum 2\) do not divide "
                                         r"dimension 2 of size 4"):
        f_c(a, a, -1, np.array([1, 1]))
    x = tt.dmatrix("x")
    ax = tt.lscalar("ax")
    g = tensorgraph.function([x, ax], tt.split(x, [1, 2], 2, axis=ax)[1], mode=C)
    with pytest.raises(ValueError, match=r"split: axis 2 is out of range for 2-d inputs"):
        g(np.zeros((3, 3)), 2)
    f = tensorgraph.function([x, ax], Out(tt.split(x, [1, 2], 2, axis=ax)[1], borrow=True),
                             mode=C)
    v = np.arange(9.0).reshape(3, 3)
    assert np.shares_memory(f(v, 1), v)      # the pieces are views, as for a fixed axis
    np.testing.assert_array_equal(f(v, -1), v[:, 1:])


def test_the_c_comes_from_the_link_layer_table():
    """The shape, join, creation ops and Assert define no C; it is registered in
    link/c/ops/shape.py, join.py, creation.py and raise_op.py, and their tensor modules import
    nothing of tensorgraph.link."""
    from tensorgraph import raise_op
    from tensorgraph.link.c.ops import creation as c_creation
    from tensorgraph.link.c.ops import join as c_join
    from tensorgraph.link.c.ops import raise_op as c_raise
    from tensorgraph.link.c.ops import shape as c_shape

    from op_checks import assert_c_from_table

    # the package's names shape and join are functions: the modules by their full names
    creation, join, shape = (importlib.import_module(f"tensorgraph.tensor.{name}")
                             for name in ("creation", "join", "shape"))

    x, n = tt.dmatrix(), tt.lscalar()
    cases = [(tt.shape(x).owner.op, c_shape.ShapeC),
             (shape.Shape_i(0), c_shape.Shape_iC),
             (tt.specify_shape(x, (n, None)).owner.op, c_shape.SpecifyShapeC),
             (tt.reshape(x, (n, -1)).owner.op, c_shape.ReshapeC),
             (join.MakeVector("int64"), c_join.MakeVectorC),
             (tt.concatenate([x, x]).owner.op, c_join.JoinC),
             (join.Split(2, 0), c_join.SplitC),
             (tt.alloc(0.0, n, n).owner.op, c_creation.AllocC),
             (tt.arange(n).owner.op, c_creation.ARangeC),
             (tt.eye(n).owner.op, c_creation.EyeC),
             (tt.tri(n).owner.op, c_creation.TriC),
             (raise_op.Assert("m"), c_raise.AssertC)]
    assert_c_from_table(cases, shape, join, creation, raise_op)
