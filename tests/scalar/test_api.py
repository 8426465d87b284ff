"""``tensorgraph.scalar`` as PyTensor code uses it (issue 21, item 1): the scalar types named by
dtype, scalar constants and variables with Python operators, compiled scalar functions, and
the conversions between scalars and 0-d tensors."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.scalar as ps
import tensorgraph.tensor as tt
from tensorgraph.compile import get_mode
from tensorgraph.configdefaults import config
from tensorgraph.tensor.scalar_convert import ScalarFromTensor, TensorFromScalar

# -- types named by dtype ----------------------------------------------------------------------


def test_dtype_named_types_make_variables_and_equal_their_types():
    x = ps.int32("x")
    assert isinstance(ps.int32, ps.ScalarType)
    assert isinstance(x, ps.ScalarVariable) and x.name == "x"
    assert x.type == ps.int32 and x.type != ps.int64
    assert ps.ScalarType("float64")().type == ps.float64
    assert ps.get_scalar_type("float32") is ps.float32
    assert ps.ScalarType("floatX").dtype == config.floatX
    assert x.dtype == "int32" and x.ndim == 0 and ps.int32.ndim == 0 and ps.int32.shape == ()


def test_type_groups_list_every_dtype_once():
    assert [t.dtype for t in ps.all_types] == [
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128"]
    assert set(ps.discrete_types) | set(ps.continuous_types) == set(ps.all_types)
    assert ps.discrete_dtypes == tuple(t.dtype for t in ps.discrete_types)
    assert ps.float_types == (ps.float16, ps.float32, ps.float64)
    assert ps.integer_types == ps.int_types + ps.uint_types


# -- constants ---------------------------------------------------------------------------------


def test_constant_gives_python_numbers_the_tensor_dtype_rules():
    c = ps.constant(56, name="c")
    assert isinstance(c, ps.ScalarConstant) and c.name == "c"
    assert c.type == ps.int8 and c.data == 56          # a Python int: the narrowest int
    assert ps.constant(70000).type == ps.int32
    assert ps.constant(2.5).type.dtype == config.floatX
    assert ps.constant(True).type == ps.bool
    assert ps.constant(np.float32(1)).type == ps.float32   # numpy scalars keep their dtype
    assert ps.constant(3, dtype="float64").type == ps.float64
    with pytest.raises(TypeError, match="one number"):
        ps.constant([1, 2])


# -- arithmetic ----------------------------------------------------------------------------------


def test_operators_apply_scalar_ops_with_the_dtype_rules():
    xs, ys = ps.float64("xs"), ps.float64("ys")
    i8, i32 = ps.int8("i8"), ps.int32("i32")
    z = xs + ys
    assert isinstance(z, ps.ScalarVariable) and z.owner.op == ps.add
    assert (xs * ys).owner.op == ps.mul and (-xs).owner.op == ps.neg
    assert (xs - 2).type == ps.float64 and (2 - xs).owner.inputs[1] is xs
    assert (ps.float32() * 2).type == ps.float32          # Python ints are weak
    assert (i8 + i32).type == ps.int32 and (i8 + 1).type == ps.int8
    assert (xs / ys).type == ps.float64 and (i32 // i8).type == ps.int32
    assert (i32 % 3).type == ps.int32 and (xs ** 2).type == ps.float64
    assert (xs < ys).type == ps.bool and (xs >= 1).type == ps.bool
    assert (i8 & i32).type == ps.int32 and (~i8).type == ps.int8
    assert abs(ps.complex128()).type == ps.float64
    assert xs.astype("float32").type == ps.float32 and xs.astype("float64") is xs
    assert ps.convert_to_int32(xs).type == ps.int32


def test_integer_true_division_follows_int_division():
    a, b = ps.int32("a"), ps.int32("b")
    f_int = tg.function([a, b], a / b)
    assert f_int(7, 2) == 3 and f_int(-7, 2) == -4        # 'int' (default): floors, as //
    with config.change_flags(int_division="floatX"):
        q = a / b
        assert q.type.dtype == config.floatX
        assert tg.function([a, b], q)(7, 2) == 3.5
    with config.change_flags(int_division="raise"):
        with pytest.raises(ps.IntegerDivisionError, match="int_division"):
            a / b
        assert (a / ps.float64()).type == ps.float64      # a float operand: true division


def test_symbolic_scalars_have_no_python_value():
    xs = ps.float64("xs")
    for convert in (bool, int, float):
        with pytest.raises(TypeError, match="unknown until it is computed"):
            convert(xs)
    with pytest.raises(TypeError):
        [1, 2][ps.int64()]


# -- compiled scalar functions -----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_function_of_scalars_returns_numpy_scalars(mode):
    xs, ys = ps.float64("xs"), ps.int32("ys")
    f = tg.function([xs, ys], [xs + ys, xs * ys - 1, ps.exp(xs), xs > ys], mode=mode)
    total, prod, e, gt = f(1.5, 2)
    assert type(total) is np.float64 and total == 3.5
    assert prod == 2.0 and np.isclose(e, np.exp(1.5))
    assert type(gt) is np.bool_ and not gt


def test_scalar_function_inputs_take_values_that_fit():
    i = ps.int32("i")
    f = tg.function([i], i * 2)
    assert f(3) == 6 and type(f(3)) is np.int32          # a Python int that fits
    with pytest.raises(TypeError, match="lose precision"):
        f(2.5)
    with pytest.raises(TypeError, match="scalar"):
        f([1, 2])


# -- scalars and 0-d tensors ---------------------------------------------------------------------


def test_as_scalar_converts_numbers_and_0d_tensors():
    c = ps.as_scalar(3)
    assert isinstance(c, ps.ScalarConstant) and c.type == ps.int8
    xs = ps.float64()
    assert ps.as_scalar(xs) is xs and ps.as_scalar((xs + 1).owner).owner.op == ps.add
    t = tt.dscalar("t")
    s = ps.as_scalar(t)
    assert s.type == ps.float64 and isinstance(s.owner.op, ScalarFromTensor)
    assert tg.function([t], s * 2)(3.0) == 6.0
    with pytest.raises(TypeError, match="scalar"):
        ps.as_scalar(tt.dvector())


def test_tensor_from_scalar_and_back():
    s = ps.int16("s")
    t = tt.tensor_from_scalar(s)
    assert t.owner.op is tt.tensor_from_scalar and isinstance(t.owner.op, TensorFromScalar)
    assert t.type == tt.TensorType("int16", ())
    v = tt.dscalar("v")
    back = tt.scalar_from_tensor(v)
    assert back.type == ps.float64 and back.owner.op is tt.scalar_from_tensor
    f = tg.function([s, v], [t * 2, back])
    doubled, value = f(4, 1.5)
    assert isinstance(doubled, np.ndarray) and doubled.shape == () and doubled == 8
    assert type(value) is np.float64 and value == 1.5
    with pytest.raises(TypeError, match="0-d tensor"):
        tt.scalar_from_tensor(tt.dvector())
    with pytest.raises(TypeError, match="ScalarType"):
        tt.tensor_from_scalar(tt.dscalar())


def test_conversions_keep_constants_and_skip_round_trips():
    """as_tensor_variable / as_scalar convert without a node where none is needed; the ops
    themselves always make one, and rewriting removes the round trips they leave."""
    s, v = ps.int16("s"), tt.dscalar("v")
    assert tt.as_tensor_variable(ps.int8()).type == tt.TensorType("int8", ())
    assert ps.as_scalar(tt.tensor_from_scalar(s)) is s
    assert tt.as_tensor_variable(tt.scalar_from_tensor(v)) is v
    c = tt.as_tensor_variable(ps.constant(2))
    assert isinstance(c, tt.TensorConstant) and c.dtype == "int8" and c.data == 2
    assert isinstance(ps.as_scalar(tt.constant(2.0)), ps.ScalarConstant)
    trip = tt.tensor_from_scalar(tt.scalar_from_tensor(v)) * 2
    f = tg.function([v], trip)
    ops = [type(n.op) for n in f.maker.fgraph.toposort()]
    assert TensorFromScalar not in ops and ScalarFromTensor not in ops
    kept = tg.function([v], trip, mode=get_mode("FAST_RUN").excluding(
        "local_tensor_scalar_tensor"))
    assert TensorFromScalar in [type(n.op) for n in kept.maker.fgraph.toposort()]
    assert f(2.0) == kept(2.0) == 4.0


def test_scalar_graphs_of_constants_fold():
    xs = ps.float64("xs")
    f = tg.function([xs], xs + ps.constant(2.0) * 3)
    assert [n.op for n in f.maker.fgraph.toposort()] == [ps.add]
    assert f(1.0) == 7.0


def test_constant_values_read_through_scalars():
    c = ps.constant(3) * 2
    assert tt.get_underlying_scalar_constant_value(c) == 6
    assert tt.get_scalar_constant_value(tt.tensor_from_scalar(ps.constant(4))) == 4
    shared = tg.shared(np.ones((1, 1)), shape=(1, 1))
    assert tt.get_underlying_scalar_constant_value(tt.scalar_from_tensor(shared.shape[0])) == 1
    with pytest.raises(tt.NotScalarConstantError):
        tt.get_underlying_scalar_constant_value(ps.int64())
    # get_scalar_constant_value takes 0-d values only; the underlying one any equal entries
    assert tt.get_underlying_scalar_constant_value(np.full(3, 5)) == 5
    with pytest.raises(tt.NotScalarConstantError):
        tt.get_scalar_constant_value(np.full(3, 5))
    with pytest.raises(tt.NotScalarConstantError):
        tt.get_scalar_constant_value(tt.constant(3, ndim=1))


def test_scalars_mixed_with_tensors_give_tensors():
    xs, x = ps.float64("xs"), tt.dvector("x")
    for expr in (x * xs, xs * x, xs + x, x - xs):
        assert expr.type == tt.TensorType("float64", (None,))
    f = tg.function([x, xs], xs * x + 1)
    np.testing.assert_array_equal(f([1.0, 2.0], 3.0), [4.0, 7.0])


def test_scalar_index():
    x = tt.dvector("x")
    i = ps.int16("i")
    f = tg.function([x, i], [x[i], x[i:]])
    first, rest = f([1.0, 2.0, 3.0], 1)
    assert first == 2.0 and list(rest) == [2.0, 3.0]


def test_gradients_through_scalars():
    xs = ps.float64("xs")
    g = tg.grad(xs * xs + ps.sin(xs), xs)
    assert g.type == ps.float64                            # a scalar gets a scalar gradient
    assert np.isclose(tg.function([xs], g)(0.5), 1 + np.cos(0.5))
    x = tt.dvector("x")
    gx, gs = tg.grad((x * xs).sum(), [x, xs])
    vals = tg.function([x, xs], [gx, gs])([1.0, 2.0], 3.0)
    np.testing.assert_array_equal(vals[0], [3.0, 3.0])
    assert vals[1] == 3.0
    i = ps.int32("i")
    gi = tg.grad(tt.as_tensor_variable(i * 2).astype("float64") + xs, i)
    assert gi.type.dtype == config.floatX and tg.function([i, xs], gi)(2, 1.0) == 0


# -- Python numbers under cast_policy 'custom' ------------------------------------------------


def test_autocast_float_as_changes_python_float_dtypes_in_a_block():
    default = ps.autocast_float.dtypes
    with ps.autocast_float_as("float32"):
        assert ps.autocast_float.dtypes == ("float32",)
        assert (tt.fvector() + 1.1).dtype == "float32"
        assert ps.constant(1.1).type == ps.float32
        with ps.autocast_float_as("float64"):
            assert (tt.fvector() + 1.0).dtype == "float64"
        assert ps.autocast_float.dtypes == ("float32",)
    assert ps.autocast_float.dtypes == default
    with ps.autocast_float_as("float32", "float64"):
        # the first dtype holding the value exactly (floatX when it is float32)
        assert (tt.fvector() + 1.5).dtype == "float32"
        assert (tt.fvector() + 1.1).dtype == ("float32" if config.floatX == "float32"
                                              else "float64")
        assert (tt.fvector() + np.float64(1.5)).dtype == "float64"   # numpy keeps its dtype
    with config.change_flags(cast_policy="numpy+floatX"):
        with pytest.raises(ValueError, match="custom"):
            ps.autocast_float_as("float32")


def test_autocasters_give_the_dtype_of_python_numbers():
    assert ps.autocast_int(3).dtype == "int8" and ps.autocast_int(300).dtype == "int16"
    assert ps.autocast_float(0.5).dtype == config.floatX
    assert ps.convert(3).dtype == "int8" and ps.convert(3, dtype="floatX").dtype == config.floatX


# -- PyTensor's other names ----------------------------------------------------------------------


def test_pytensor_names_of_scalar_ops():
    assert ps.pow is ps.pow_ and ps.abs is ps.abs_ and ps.floor_div is ps.int_div
    assert ps.scalar_maximum is ps.maximum and ps.scalar_minimum is ps.minimum
    assert issubclass(ps.ComplexError, NotImplementedError)
    with pytest.raises(ps.ComplexError):
        ps.cast(ps.complex64(), "float32")
    with pytest.raises(ps.ComplexError):
        tt.vector(dtype="complex64") % 5            # no modulo of complex numbers
    with pytest.raises(ps.ComplexError):
        ps.complex128() // 2
    assert ps.float64.values_eq_approx(1.0, 1.0 + 1e-6) and not ps.float64.values_eq_approx(1, 2)
    assert ps.int8.upcast(ps.float32) == "float32" and ps.int8.clone("int16") == ps.int16
