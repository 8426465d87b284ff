"""Error messages that ported code matches with ``pytest.raises(match=...)``: each carries
PyTensor's phrase (so such checks keep passing after changing the imports) and still names
what was expected and what came."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import get_mode
from tensorgraph.tensor.elemwise import DimShuffle


def test_as_tensor_variable_ndim():
    x = tt.tensor("x", dtype="float64", shape=(1, None))
    with pytest.raises(ValueError, match=r"^Tensor of type .* could not be cast to have 0 "
                                         r"dimensions.*got x \(2-d\)"):
        tt.as_tensor_variable(x, ndim=0)


def test_alloc_static_and_runtime_broadcast():
    v = tt.tensor("v", dtype="float64", shape=(None, 1, 5))
    with pytest.raises(ValueError, match="Alloc static input type and target shape are "
                                         "incompatible.*size 1 in dimension 2"):
        tt.alloc(v, 3, 1, 1)
    x = tt.dvector("x")
    f = tg.function([x], tt.alloc(x, 5, 3), mode=get_mode("FAST_COMPILE"))
    with pytest.raises(ValueError, match="Runtime broadcasting not allowed"):
        f(np.ones(1))


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_specify_shape_at_run_time(mode):
    x = tt.dvector("x")
    f = tg.function([x], tt.specify_shape(x, (2,)), mode=get_mode(mode))
    with pytest.raises(AssertionError, match=r"SpecifyShape: dimension 0 has size 3, "
                                             r"expected 2"):
        f(np.ones(3))


def test_specify_shape_build_errors():
    x = tt.dvector("x")
    with pytest.raises(ValueError, match="Multiple Ellipsis in specify_shape"):
        tt.specify_shape(x, (..., ...))
    with pytest.raises(ValueError, match=r"has 1 dimensions but the shape \(\) has 0 entries; "
                                         "it will never match"):
        tt.specify_shape(x, ())


def test_elemwise_static_and_runtime_broadcast():
    a = tt.tensor("a", dtype="float64", shape=(2,))
    b = tt.tensor("b", dtype="float64", shape=(3,))
    with pytest.raises(ValueError, match=r"Incompatible Elemwise input shapes \[\(2,\), "
                                         r"\(3,\)\].*dimension 0 has sizes \[2, 3\]"):
        a + b
    x, y = tt.dmatrix("x"), tt.drow("y")
    f = tg.function([x, y], x - y, mode=get_mode("FAST_COMPILE"))
    with pytest.raises(ValueError, match="Runtime broadcasting not allowed: input x has size 1 "
                                         "in dimension 1"):
        f(np.ones((2, 1)), np.ones((1, 3)))


def test_shape_functions():
    with pytest.raises(ValueError, match="may not appear twice"):
        DimShuffle(2, (0, 0))
    with pytest.raises(ValueError, match=r"repeated axis 0 in axis=\(0, 0\)"):
        tt.sum(tt.dmatrix(), axis=(0, 0))
    with pytest.raises(ValueError, match=r"Input must be 1- or 2-d\..*got <Tensor3"):
        tt.diag(tt.dtensor3())
    with pytest.raises(ValueError, match="Input array must be at least 2-dimensional"):
        tt.matrix_transpose(tt.dvector("x1"))
    with pytest.raises(ValueError, match="`source` and `destination` arguments must have the "
                                         "same number of elements, got 2 source axes and 1"):
        tt.moveaxis(tt.dtensor3(), (0, 1), (0,))
    with pytest.raises(ValueError, match="No tensor arguments provided"):
        tt.stack([])
    with pytest.raises(ValueError, match=r"Reshape: Input shape \(2, 2, 6\) is incompatible "
                                         r"with new shape \(6, 3, 99\)"):
        tt.reshape(tt.tensor(dtype="float64", shape=(2, 2, 6)), (6, 3, 99))


def test_join_and_indexing():
    a = tt.tensor(dtype="float64", shape=(2, 3))
    b = tt.tensor(dtype="float64", shape=(2, 5))
    with pytest.raises(ValueError, match="dimension 1 has sizes \\[3, 5\\].*must match exactly"):
        tt.concatenate([a, b], axis=0)
    x = tt.dtensor3("y")
    with pytest.raises(IndexError, match="too many indices for tensor: tensor is 3-dimensional, "
                                         "but 4 were indexed"):
        x[0, 0, 0, 0]
    i, j = tt.tensor(dtype="int64", shape=(10,)), tt.tensor(dtype="int64", shape=(9,))
    with pytest.raises(IndexError, match=r"indexing tensors could not be broadcast together "
                                         r"with shapes \[\(10,\), \(9,\)\]"):
        x[i, j]


def test_axis_sizes_and_arguments():
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2 "
                                         r"\(out of range; valid: -2..1\)"):
        tt.specify_broadcastable(tt.dmatrix(), 2)
    with pytest.raises(TypeError, match="must be integer types.*got float: 2.2"):
        tt.specify_shape(tt.dvector(), (2.2,))
    with pytest.raises(TypeError, match="First argument should be a Sequence.*got TensorVariable"):
        tt.stack(tt.dvector())
    with pytest.raises(TypeError, match="input_ndim must be an integer, got tuple"):
        DimShuffle((1,), (0,))


def test_dot_family_wording():
    a = tt.tensor(dtype="float64", shape=(7, 4))
    b = tt.tensor(dtype="float64", shape=(5, 3))
    with pytest.raises(ValueError, match=r"Input arrays have inconsistent type shape: axis 1 .* "
                                         r"\(4 != 5\)"):
        tt.tensordot(a, b, axes=[[1], [0]])
    with pytest.raises(ValueError, match="operands cannot be scalar.*got 4"):
        tt.matmul(tt.constant(4, dtype="int8"), tt.dvector())
