"""TensorType's value comparisons and value conversions (``tensorgraph/tensor/type.py``)."""

import numpy as np
import pytest

import tensorgraph.tensor as tt
from tensorgraph.tensor.type import TensorType


def test_values_eq_is_static_and_compares_shape_dtype_and_entries():
    # PyTensor's tests and helpers call it on the class: TensorType.values_eq(a, b)
    a = np.array([1.0, np.nan, 3.0])
    assert TensorType.values_eq(a, a.copy())                       # NaN equals NaN
    assert TensorType("float64", (None,)).values_eq(a, a.copy())   # and on an instance
    assert not TensorType.values_eq(a, a[:2])
    assert not TensorType.values_eq(a, a.astype("float32"))
    assert TensorType.values_eq(a, a.astype("float32"), force_same_dtype=False)
    assert not TensorType.values_eq(np.array([1, 2]), np.array([1, 3]))
    assert TensorType.values_eq(np.array([1 + 1j, np.nan]), np.array([1 + 1j, np.nan]))


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_numpy_scalars_are_taken_when_their_value_fits(mode):
    """A numpy scalar is judged by its value, as a Python number (PyTensor does so):
    rng.integers(10) (an int64) for an int32 input; arrays keep the dtype rule."""
    import tensorgraph

    i = tt.iscalar("i")
    f = tensorgraph.function([i], i * 2, mode=mode)
    assert f(np.int64(5)) == 10 and f(np.float64(3.0)) == 6
    with pytest.raises(TypeError, match="lose precision"):
        f(np.int64(2**40))                 # does not fit: a type error, not an overflow
    with pytest.raises(TypeError, match="lose precision"):
        f(np.float64(2.5))
    with pytest.raises(TypeError, match="lose precision"):
        f(np.array(5, dtype="int64"))      # a 0-d array is an array
    s = tt.fscalar("s")
    with tensorgraph.config.change_flags(floatX="float32"):
        g = tensorgraph.function([s], s, mode=mode)
        assert g(np.float64(0.1)) == np.float32(0.1)   # a float scalar may become floatX
    h = tensorgraph.function([s], s, mode=mode)
    with pytest.raises(TypeError, match="lose precision"):
        h(np.float64(0.1))                 # floatX float64: 0.1 does not fit float32
    assert h(np.float64(0.5)) == 0.5


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_unaligned_arrays_are_taken(mode):
    """A field of a record array is unaligned; the C glue copies it aligned, so it is taken
    (PyTensor refuses it with a TypeError: its C code cannot read it)."""
    import tensorgraph

    records = np.zeros(7, dtype="b1,f8")
    a = records["f1"]
    a[:] = np.arange(7.0)
    assert not a.flags.aligned
    x, y = tt.dvectors("xy")
    f = tensorgraph.function([x, y], 2 * x + 3 * y, mode=mode)
    np.testing.assert_array_equal(f(a, a), 5 * np.arange(7.0))
    s = np.zeros((), dtype="b1,f8")["f1"]
    s[...] = 1.5
    xs = tt.dscalar("xs")
    assert tensorgraph.function([xs], xs * 2, mode=mode)(s) == 3.0
