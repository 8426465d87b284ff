"""TensorType's value comparisons (``tensorgraph/tensor/type.py``)."""

import numpy as np

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
