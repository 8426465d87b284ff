"""PyTensor names ported code types that tensorgraph gives (issue 21): NoneConst, empty,
isnan_, values_eq_approx_remove_nan, NominalVariable."""

import pickle

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph.basic import NominalVariable
from tensorgraph.tensor.basic import NotScalarConstantError, get_underlying_scalar_constant_value
from tensorgraph.tensor.math import isnan, isnan_
from tensorgraph.tensor.type import values_eq_approx_remove_nan
from tensorgraph.tensor.type_other import NoneConst, NoneTypeT


@pytest.mark.parametrize("only_process_constants", [True, False])
def test_noneconst_value_is_none_and_plain_none_is_not_a_constant(only_process_constants):
    assert get_underlying_scalar_constant_value(
        NoneConst, only_process_constants=only_process_constants) is None
    with pytest.raises(NotScalarConstantError):
        get_underlying_scalar_constant_value(None, only_process_constants=only_process_constants)


def test_noneconst_type_holds_only_none_and_is_no_tensor():
    assert tt.NoneConst is NoneConst and NoneConst.data is None
    assert NoneConst.type == NoneTypeT()
    with pytest.raises(TypeError, match="only None"):
        NoneTypeT().filter(0)
    with pytest.raises(TypeError, match="TensorType"):
        tt.shape(NoneConst)
    assert pickle.loads(pickle.dumps(NoneConst)).data is None


@pytest.mark.parametrize("dtype", [None, "int32"])
def test_empty_has_the_shape_and_dtype_asked(dtype):
    n = tt.iscalar("n")
    out = tt.empty((n, 3), dtype=dtype)
    f = tg.function([n], out)
    value = f(4)
    assert value.shape == (4, 3)
    assert value.dtype == (dtype or tg.config.floatX)
    assert out.type.shape == (None, 3)


def test_isnan_underscore_is_isnan():
    assert isnan_ is isnan
    x = tt.dvector("x")
    f = tg.function([x], isnan_(x))
    np.testing.assert_array_equal(f(np.array([1.0, np.nan])), [False, True])


def test_values_eq_approx_remove_nan_ignores_nan_positions_of_the_first():
    assert values_eq_approx_remove_nan(np.array([1.0, np.nan]), np.array([1.0, 7.0]))
    assert not values_eq_approx_remove_nan(np.array([1.0, 2.0]), np.array([1.0, np.nan]))
    assert not values_eq_approx_remove_nan(np.array([1.0, np.nan]), np.array([1.5, 7.0]))
    assert not values_eq_approx_remove_nan(np.zeros(2), np.zeros(3))
    assert values_eq_approx_remove_nan(np.array([1, 2]), np.array([1, 2]))
    assert values_eq_approx_remove_nan(np.float32([1.0]), np.float32([1.0 + 1e-7]))


def test_nominal_variable_is_one_object_per_id_and_type():
    t = tt.dmatrix().type
    a, b, c = NominalVariable(0, t), NominalVariable(0, t), NominalVariable(1, t)
    d = NominalVariable(0, tt.fmatrix().type)
    assert a is b and a is not c and a is not d
    assert a.owner is None and a.id == 0 and a.type == t
    assert a.clone() is a
    assert pickle.loads(pickle.dumps(a)) is a
    assert isinstance(a, NominalVariable) and a.dtype == "float64"
    f = tg.function([a], a * 2)
    np.testing.assert_allclose(f(np.ones((2, 2))), 2 * np.ones((2, 2)))


@pytest.mark.parametrize("xshape, yshape, axes", [
    ((2, 3, 4), (2, 4, 3, 5), [[2], [1]]),
    ((2, 3, 4), (2, 3, 6, 4), [[1, 2], [1, 3]]),
    ((2, 3, 4), (2, 4, 5), 1),
    ((3, 4), (3, 4), 1),
    ((2, 3), (2, 5), 0),
])
def test_batched_tensordot_is_tensordot_per_batch_entry(xshape, yshape, axes):
    rng = np.random.default_rng(0)
    a, b = rng.random(xshape), rng.random(yshape)
    x = tt.tensor(dtype="float64", shape=(None,) * len(xshape))
    y = tt.tensor(dtype="float64", shape=(None,) * len(yshape))
    f = tg.function([x, y], tt.batched_tensordot(x, y, axes))
    np_axes = axes if isinstance(axes, int) else ([d - 1 for d in axes[0]],
                                                  [d - 1 for d in axes[1]])
    expected = np.stack([np.tensordot(a[i], b[i], axes=np_axes) for i in range(xshape[0])])
    np.testing.assert_allclose(f(a, b), expected)


def test_batched_tensordot_refuses_summing_the_batch_axis():
    x, y = tt.tensor3("x"), tt.tensor3("y")
    with pytest.raises(ValueError, match="batch axis 0 cannot be summed"):
        tt.batched_tensordot(x, y, [[0], [0]])
    with pytest.raises(ValueError, match="2 axes of x against 1"):
        tt.batched_tensordot(x, y, [[1, 2], [1]])


def test_scalar_constant_value_through_indexing_asserts_and_fill():
    from tensorgraph.raise_op import Assert

    data = np.arange(12.0).reshape(3, 4)
    c = tt.constant(data)
    assert get_underlying_scalar_constant_value(c[2, 1]) == 9.0
    assert get_underlying_scalar_constant_value(c[-1, -1]) == 11.0
    with pytest.raises(NotScalarConstantError):
        get_underlying_scalar_constant_value(c[tt.lscalar(), 0])   # index not known
    two, x = tt.constant(2), tt.dscalar("x")
    assert get_underlying_scalar_constant_value(Assert()(two, two > 1)) == 2
    for cond in (two > 2, two > x):                   # false, or not known
        with pytest.raises(NotScalarConstantError):
            get_underlying_scalar_constant_value(Assert()(two, cond))
    # fill(shape source, value): the value, whatever the shape source
    filled = tt.second(tt.dvector("v"), tt.constant(0.25))
    assert get_underlying_scalar_constant_value(filled) == 0.25
    assert get_underlying_scalar_constant_value(filled, elemwise=False) == 0.25
