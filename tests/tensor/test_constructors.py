"""The constructors as Theano and PyTensor code types them: typed constructors that are types,
plural constructors taking one name per character, ``tensor(name, dtype=, shape=)``, shapes
unpacked into scalars, and the dtype groups."""

import warnings

import numpy as np
import pytest

import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.tensor import type as ttype

from op_checks import fn


def test_typed_constructors_are_types_and_callable():
    x = tt.lscalar("x")
    assert x.type == tt.lscalar and x.name == "x"
    assert tt.dmatrix().type == tt.dmatrix == tt.TensorType("float64", (None, None))
    assert tt.frow("r").type == tt.TensorType("float32", (1, None))
    assert tt.ivector().type != tt.lvector
    # the keywords of the generic constructors are taken too
    m = tt.dmatrix("m", shape=(2, None))
    assert m.type == tt.TensorType("float64", (2, None))
    assert tt.dmatrix("m", dtype="float64").type == tt.dmatrix
    with pytest.raises(TypeError, match="makes float64 tensors; got dtype=int32"):
        tt.dmatrix("m", dtype="int32")
    with pytest.raises(TypeError, match="has 2 dimensions"):
        tt.dmatrix("m", shape=(2,))
    with pytest.raises(TypeError, match="dimension 0 has size 1"):
        tt.drow("r", shape=(3, None))


def test_plural_constructors_split_a_string_into_one_name_per_character():
    x, y = tt.dscalars("xy")
    assert (x.name, y.name) == ("x", "y") and x.type == tt.dscalar
    single = tt.dscalars("x")          # one character: the variable itself, as in PyTensor
    assert single.name == "x" and single.type == tt.dscalar
    a, b = tt.dmatrices("a", "b")
    assert (a.name, b.name) == ("a", "b")
    first, second = tt.dvectors("first, second")
    assert (first.name, second.name) == ("first", "second")
    p, q = tt.ivectors(["p", "q"])
    assert (p.name, q.name) == ("p", "q") and p.type == tt.ivector
    assert len(tt.matrices(3)) == 3
    u, v = tt.vectors("uv", dtype="int16")
    assert u.dtype == v.dtype == "int16"


def test_tensor_takes_pytensors_signature():
    a = tt.tensor("a", shape=(), dtype="int64")
    assert a.name == "a" and a.type == tt.lscalar
    b = tt.tensor("b", dtype="float32", shape=(None, 3))
    assert b.type == tt.TensorType("float32", (None, 3))
    with pytest.raises(TypeError, match="got a dtype twice"):
        tt.tensor("float32", shape=(None,), dtype="float64")


def test_float64_warning_points_at_the_users_line():
    with config.change_flags(warn_float64="warn"), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        tt.dmatrix("q")
        tt.matrix("z", dtype="float64")
        tt.dscalars("ab")
    assert len(w) == 4
    assert {rec.filename for rec in w} == {__file__}


def test_shape_of_known_length_unpacks():
    x = tt.matrix("x", dtype="float64")
    rows, cols = x.shape
    f = fn([x], [rows, cols])
    assert [int(v) for v in f(np.zeros((2, 5)))] == [2, 5]
    first, second, third = tt.as_tensor_variable(np.arange(3))
    assert int(third.eval()) == 2
    with pytest.raises(TypeError, match="not known before it is computed"):
        iter(tt.vector("v"))
    with pytest.raises(TypeError, match="not known before it is computed"):
        iter(tt.matrix("m"))


def test_get_vector_length_shape_tuple_specify_broadcastable():
    x = tt.tensor3("x", dtype="float64")
    assert tt.get_vector_length(x.shape) == 3
    assert tt.get_vector_length(tt.as_tensor_variable([x.shape[0], 2])) == 2
    with pytest.raises(ValueError, match="not known"):
        tt.get_vector_length(tt.lvector("v"))
    with pytest.raises(TypeError, match="not a vector"):
        tt.get_vector_length(x)
    sizes = tt.shape_tuple(x)
    assert len(sizes) == 3
    assert [int(v) for v in fn([x], list(sizes))(np.zeros((2, 3, 4)))] == [2, 3, 4]
    b = tt.specify_broadcastable(x, 0, -1)
    assert b.type.shape == (1, None, 1)
    assert fn([x], b)(np.zeros((1, 3, 1))).shape == (1, 3, 1)
    with pytest.raises(AssertionError):
        fn([x], b)(np.zeros((2, 3, 1)))


def test_dtype_groups():
    assert ttype.int_dtypes == ["int8", "int16", "int32", "int64"]
    assert ttype.uint_dtypes == ["uint8", "uint16", "uint32", "uint64"]
    assert ttype.integer_dtypes == ttype.int_dtypes + ttype.uint_dtypes
    assert ttype.discrete_dtypes == ["bool"] + ttype.integer_dtypes
    assert ttype.float_dtypes == ["float16", "float32", "float64"]
    assert ttype.complex_dtypes == ["complex64", "complex128"]
    assert ttype.continuous_dtypes == ttype.float_dtypes + ttype.complex_dtypes
    assert sorted(ttype.all_dtypes) == sorted(ttype.ALL_DTYPES)


def test_as_tensor_variable_as_pytensor_code_uses_it():
    # an empty list has no dtype of its own: floatX
    with config.change_flags(floatX="float32"):
        assert tt.as_tensor_variable([]).dtype == "float32"
        assert tt.as_tensor_variable(()).dtype == "float32"
    assert tt.as_tensor_variable([], dtype="int64").dtype == "int64"
    # a list of constants is one constant
    folded = tt.as_tensor_variable([tt.constant(1), tt.constant(2), 3])
    assert isinstance(folded, tt.TensorConstant)
    np.testing.assert_array_equal(folded.data, [1, 2, 3])
    # ndim drops leading size-1 dimensions, and nothing else
    x = tt.TensorType("float64", (1, None))("x")
    assert tt.as_tensor_variable(x, ndim=1).type.shape == (None,)
    assert tt.as_tensor_variable(tt.TensorType("float64", (1, 1))(), ndim=0).ndim == 0
    with pytest.raises(ValueError, match="only leading dimensions of size 1"):
        tt.as_tensor_variable(x, ndim=0)
    # ... or adds leading size-1 dimensions (PyTensor's shape_padleft)
    s = tt.lscalar("s")
    padded = tt.as_tensor_variable(s, ndim=2)
    assert padded.type.shape == (1, 1)
    assert padded.eval({s: 7}).tolist() == [[7]]
    assert tt.as_tensor_variable(x, ndim=3).type.shape == (1, 1, None)
    # an Apply node stands for its default output
    v = tt.dvector("v")
    node = (v * 2).owner
    assert tt.as_tensor_variable(node) is node.outputs[0]
    draw = tt.random.normal(size=(2,))
    assert tt.as_tensor_variable(draw.owner) is draw.owner.outputs[1]   # default_output
    # Python bools stay bool constants (docs/dtypes.md), unlike PyTensor
    assert tt.as_tensor_variable(True).dtype == "bool"


def test_cast_from_complex_to_real_is_refused():
    z = tt.zvector("z")
    with pytest.raises(TypeError, match="drop the imaginary part"):
        tt.cast(z, "float64")
    assert tt.cast(z, "complex64").dtype == "complex64"
    assert tt.cast(tt.dvector(), "complex128").dtype == "complex128"


def test_masked_arrays_are_refused_not_unmasked():
    masked = np.ma.masked_greater(np.array([1.0, 2.0, 3.0, 4.0]), 3)
    with pytest.raises(NotImplementedError, match="MaskedArrays are not supported"):
        tt.constant(masked)
    with pytest.raises(NotImplementedError, match="MaskedArrays are not supported"):
        tt.as_tensor_variable(masked)
    x = tt.dvector("x")
    f = fn([x], x * 2)
    with pytest.raises(TypeError, match="masked array"):
        f(masked)
    np.testing.assert_allclose(f(masked.filled(0.0)), [2.0, 4.0, 6.0, 0.0])


def test_more_dimensions_than_numpy_allows_are_refused():
    from tensorgraph.tensor.type import MAX_NDIM

    with pytest.raises(ValueError, match=f"currently {MAX_NDIM}, found {MAX_NDIM + 1}"):
        tt.dscalar().dimshuffle(("x",) * (MAX_NDIM + 1))
    assert tt.dscalar().dimshuffle(("x",) * MAX_NDIM).ndim == MAX_NDIM


def test_as_tensor_variable_checks_an_apply_nodes_default_output():
    from tensorgraph.graph import Apply, Op

    class Outs(Op):
        def __init__(self, default_output, n):
            self.default_output, self.n = default_output, n

        def make_node(self, x):
            return Apply(self, [x], [x.type() for _ in range(self.n)])

    x = tt.dvector("x")
    node = Outs(-1, 2).make_node(x)
    assert tt.as_tensor_variable(node) is node.outputs[1]
    assert tt.as_tensor_variable(Outs(None, 1).make_node(x)).owner.op.n == 1
    with pytest.raises(IndexError, match="default_output 1 .* not one of its 1 outputs"):
        tt.as_tensor_variable(Outs(1, 1).make_node(x))
    for bad in (2.0, [0, 1]):
        with pytest.raises(TypeError, match="default_output .* must be an int"):
            tt.as_tensor_variable(Outs(bad, 1).make_node(x))


def test_constants_and_shared_variables_are_tensor_variables():
    # PyTensor code asks isinstance(v, TensorVariable) of any symbolic tensor
    import tensorgraph

    c = tt.constant(5)
    s = tensorgraph.shared(np.ones(3))
    for v in (c, s, tt.dvector()):
        assert isinstance(v, tt.TensorVariable)
    assert isinstance(c, tt.TensorConstant) and not isinstance(s, tt.TensorConstant)
    assert (c + s).eval().tolist() == [6.0, 6.0, 6.0]
    assert tt.full(c, 3, dtype="int64").eval().tolist() == [3] * 5


def test_as_tensor_variable_dtype_applies_to_values_only():
    assert tt.as_tensor_variable(np.array([1], dtype="int32"), dtype="int64").dtype == "int64"
    assert tt.as_tensor_variable(np.array([1.5]), dtype="int64").dtype == "int64"
    x = tt.as_tensor_variable(np.array([1.0, 2.0]))
    assert tt.as_tensor_variable(x, dtype="int64") is x           # a variable keeps its dtype
    v = tt.dvector("v")
    assert tt.as_tensor_variable(v, dtype="int32") is v


def test_a_range_is_the_arange_computing_it():
    from tensorgraph.tensor.creation import ARange

    r = tt.as_tensor_variable(range(2, 11, 3))
    assert isinstance(r.owner.op, ARange) and r.dtype == "int64" and r.type.shape == (3,)
    assert r.owner.inputs[-1].value == 3
    np.testing.assert_array_equal(fn([], r)(), np.arange(2, 11, 3))
    assert tt.as_tensor_variable(range(4), dtype="float32").dtype == "float32"
    assert tt.as_tensor_variable(range(4), name="r").name == "r"
    assert tt.as_tensor_variable(range(4), ndim=1).ndim == 1
    with pytest.raises(ValueError, match="ndim for range must be 1"):
        tt.as_tensor_variable(range(4), ndim=2)


def test_constant_of_a_constant_and_of_scalar_constants():
    import tensorgraph.scalar as ps

    c = tt.constant(np.array([1, 2], dtype="int8"))
    assert tt.constant(c) is c and tt.constant(c, dtype="int8") is c
    assert tt.constant(c, dtype="int16").dtype == "int16"
    s = tt.constant(np.array(2, dtype="int8"))
    m = tt.constant(s, ndim=2)
    assert m.type.shape == (1, 1) and m.data.tolist() == [[2]]
    assert tt.constant(m, ndim=0).data.tolist() == 2
    with pytest.raises(ValueError, match="only leading dimensions of size 1"):
        tt.constant(np.ones((2, 1)), ndim=1)
    folded = tt.as_tensor_variable([ps.constant(1), ps.constant(2)])
    assert isinstance(folded, tt.TensorConstant) and folded.data.tolist() == [1, 2]


def test_constant_keeps_the_callers_array(tmp_path):
    data = np.arange(6.0).reshape(2, 3)
    mapped = np.memmap(tmp_path / "m.dat", dtype="float64", mode="w+", shape=(2, 3))
    mapped[...] = data
    for value in (data, mapped):
        c = tt.as_tensor_variable(value)
        assert isinstance(c, tt.TensorConstant) and c.data is value
        np.testing.assert_array_equal(fn([], c * 2)(), data * 2)


def test_multi_output_node_without_default_output_is_named():
    from tensorgraph.graph import Apply, Op

    class TwoOuts(Op):
        def make_node(self, x):
            return Apply(self, [x], [x.type(), x.type()])

    with pytest.raises(TypeError, match="Multi-output Op without default_output"):
        tt.as_tensor_variable(TwoOuts().make_node(tt.dvector()))
