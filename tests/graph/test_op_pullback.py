"""``pullback`` is PyTensor 3's name of ``L_op``: every op answers to both, whichever it
defines, and gradients use the one an op defines."""

import numpy as np

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op, defines_pullback
from tensorgraph.tensor.type import TensorType


class _Triple(Op):
    """3 * x, its gradient written as PyTensor 3's ``pullback``."""

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [TensorType(x.dtype, x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 3

    def pullback(self, inputs, outputs, output_grads):
        return [output_grads[0] * 3]


def test_a_builtin_op_answers_to_pullback_as_to_l_op():
    x = tt.dscalar("x")
    y = tt.exp(x)
    g = tt.dscalar("g")
    (by_pullback,) = y.owner.op.pullback([x], [y], [g])
    (by_l_op,) = y.owner.op.L_op([x], [y], [g])
    f = tg.function([x, g], [by_pullback, by_l_op], mode="FAST_COMPILE")
    a, b = f(0.5, 2.0)
    np.testing.assert_allclose(a, 2 * np.exp(0.5))
    np.testing.assert_allclose(b, a)
    assert not defines_pullback(y.owner.op)


def test_an_op_defining_pullback_gets_its_gradient_from_it():
    x = tt.dvector("x")
    y = _Triple()(x)
    assert defines_pullback(y.owner.op)
    g = tg.grad((y ** 2).sum(), x)
    xv = np.array([1.0, -2.0])
    np.testing.assert_allclose(tg.function([x], g, mode="FAST_COMPILE")(xv), 18 * xv)
    # L_op forwards to it, and calling pullback directly does not loop
    (via_l_op,) = y.owner.op.L_op([x], [y], [tt.ones_like(y)])
    np.testing.assert_allclose(via_l_op.eval({x: xv}), [3.0, 3.0])
