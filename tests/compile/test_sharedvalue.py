"""Shared variables: dtypes chosen by shared(), value copies, conversions, the registry."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.sharedvalue import SharedVariable, shared_constructor
from tensorgraph.configdefaults import config
from tensorgraph.tensor.sharedvar import TensorSharedVariable


@pytest.mark.parametrize("floatX", ["float32", "float64"])
def test_python_float_becomes_floatX_scalar(floatX):
    with config.change_flags(floatX=floatX):
        s = tg.shared(0.5, name="s")
    assert s.type == tt.TensorType(floatX, ())
    assert s.get_value().dtype == floatX and s.get_value() == 0.5


@pytest.mark.parametrize("value,dtype", [(3, "int64"), (True, "bool"), (1 + 2j, "complex128"),
                                         (np.float32(2), "float32"), (np.int8(2), "int8")])
def test_scalars_dtypes(value, dtype):
    s = tg.shared(value)
    assert s.type.dtype == dtype and s.type.ndim == 0
    assert s.get_value() == value


def test_huge_python_int_is_refused():
    with pytest.raises(TypeError, match="does not fit in int64"):
        tg.shared(2 ** 70)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.bool_]),
                  shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))
def test_arrays_keep_dtype_and_value(value):
    s = tg.shared(value)
    assert isinstance(s, TensorSharedVariable)
    assert s.type.dtype == value.dtype.name
    assert s.type.shape == (None,) * value.ndim
    out = s.get_value()
    np.testing.assert_array_equal(out, value)
    assert out.dtype == value.dtype and not np.shares_memory(out, value)


def test_value_is_copied_unless_borrowed():
    a = np.zeros(3)
    s = tg.shared(a)
    a[0] = 1
    assert s.get_value()[0] == 0
    b = np.zeros(3)
    t = tg.shared(b, borrow=True)
    b[0] = 1
    assert t.get_value(borrow=True)[0] == 1
    t.get_value()[1] = 5  # a copy
    assert t.get_value()[1] == 0
    t.get_value(borrow=True)[1] = 5  # the stored array itself
    assert t.get_value()[1] == 5


def test_set_value_copies_unless_borrowed_and_functions_see_it():
    s = tg.shared(np.zeros(2), name="s")
    f = tg.function([], s * 1)
    new = np.array([1.0, 2.0])
    s.set_value(new)
    new[0] = 100
    assert f().tolist() == [1.0, 2.0]
    s.set_value(new, borrow=True)
    new[1] = 7
    assert f().tolist() == [100.0, 7.0]


def test_set_value_converts_losslessly_and_refuses_bad_values():
    s = tg.shared(np.zeros(2, dtype="float64"), name="s")
    s.set_value(np.array([1, 2], dtype="int32"))
    assert s.get_value().dtype == "float64"
    s.set_value(np.zeros(5))  # the size may change: no static shape
    with pytest.raises(TypeError, match="expected 1 dimension"):
        s.set_value(np.zeros((2, 2)))
    i = tg.shared(np.zeros(2, dtype="int32"))
    with pytest.raises(TypeError, match="lose precision"):
        i.set_value(np.array([1.5, 2.5]))
    assert i.get_value().tolist() == [0, 0]


def test_strict_and_allow_downcast():
    s = tg.shared(np.zeros(2, dtype="float32"), strict=True)
    with pytest.raises(TypeError, match="strict"):
        s.set_value(np.zeros(2, dtype="float64"))
    d = tg.shared(np.zeros(2, dtype="float32"), allow_downcast=True)
    d.set_value(np.array([0.1, 0.2]))
    assert d.get_value().dtype == "float32"


def test_static_shape_can_be_given():
    s = tg.shared(np.zeros((2, 3)), shape=(2, 3))
    assert s.type.shape == (2, 3)
    with pytest.raises(TypeError, match="static shape"):
        s.set_value(np.zeros((3, 3)))


def test_shared_works_in_expressions_and_as_test_value():
    s = tg.shared(np.array([1.0, 2.0]), name="s")
    assert (s + 1).owner is not None
    np.testing.assert_array_equal(s.get_test_value(), [1.0, 2.0])
    with config.change_flags(compute_test_value="raise"):
        y = s * 2
    np.testing.assert_array_equal(y.tag.test_value, [2.0, 4.0])


def test_clone_shares_the_container():
    s = tg.shared(np.zeros(2), name="s")
    c = s.clone()
    assert c is not s and c.container is s.container and c.name == "s"
    s.set_value(np.ones(2))
    assert c.get_value().tolist() == [1.0, 1.0]
    assert s.clone(name="t").name == "t"


def test_bad_values_for_shared():
    with pytest.raises(TypeError, match="cannot hold a value of type list"):
        tg.shared([1, 2, 3])
    with pytest.raises(TypeError, match="symbolic variable"):
        tg.shared(tt.dvector("x"))
    with pytest.raises(TypeError, match="cannot hold"):
        tg.shared(np.array([object()]))


def test_registered_constructor_takes_precedence():
    class Box:
        pass

    @shared_constructor
    def box_constructor(value, name=None, strict=False, allow_downcast=None, borrow=False):
        if not isinstance(value, Box):
            return NotImplemented
        return SharedVariable(tt.TensorType("int64", ()), 7, name=name)

    try:
        s = tg.shared(Box(), name="box")
        assert type(s) is SharedVariable and s.get_value() == 7
        assert isinstance(tg.shared(1.0), TensorSharedVariable)
    finally:
        from tensorgraph.graph import shared

        shared._constructors.remove(box_constructor)


def test_update_types_are_checked():
    s = tg.shared(np.zeros(2), name="s")
    with pytest.raises(TypeError, match="update of shared variable s has type .*int"):
        tg.function([], [], updates=[(s, tt.lvector("v"))], on_unused_input="ignore")
    f = tg.function([], [], updates=[(s, np.array([1, 2], dtype="int32"))])
    f()
    assert s.get_value().tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="cannot hold"):
        tg.function([], [], updates=[(s, np.zeros((2, 2)))])


def test_update_broadcastable_where_the_variable_is_not_is_refused():
    w = tg.shared(np.ones((3, 4)), name="w")
    with pytest.raises(TypeError, match=r"broadcastable \(size 1\) in dimension\(s\) \[0, 1\]"):
        tg.function([], [], updates={w: w.sum().dimshuffle("x", "x")})
    assert w.get_value().shape == (3, 4)
    # declared size 1: a keepdims accumulator is fine
    acc = tg.shared(np.zeros((1, 4)), name="acc", shape=(1, None))
    x = tt.dmatrix("x")
    f = tg.function([x], [], updates={acc: acc + x.sum(0, keepdims=True)})
    f(np.ones((2, 4)))
    np.testing.assert_array_equal(acc.get_value(), np.full((1, 4), 2.0))
    # a more precise static shape that is not a broadcast stays accepted
    g = tg.function([], [], updates={w: tt.ones((3, 4)) * 2})
    g()
    np.testing.assert_array_equal(w.get_value(), np.full((3, 4), 2.0))


def test_text_for_a_numeric_variable_is_refused_as_type_and_value_error():
    u = tg.shared(np.array([1.0, 2.0]), name="u")
    for exc in (TypeError, ValueError):
        with pytest.raises(exc, match=r"expected float64 numbers .* got str 'adsf'"):
            u.set_value("adsf")
    np.testing.assert_array_equal(u.get_value(), [1.0, 2.0])   # unchanged
    u.set_value([3, 4])                                          # Python ints that fit
    assert u.get_value().dtype == np.float64
    x = tt.dvector("x")
    f = tg.function([x], x * 2)
    with pytest.raises(TypeError, match="bad value for input 0"):
        f(b"ab")
