"""raise_op (Assert, CheckAndRaise) in the graph layer: plain values still become tensors (through
tensorgraph.hooks.as_variable) and gradients still pass through to the value only."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph.gradient_types import DisconnectedType
from tensorgraph.raise_op import Assert, CheckAndRaise


def test_plain_values_become_tensors():
    y = Assert("no")(2.5, True)
    assert isinstance(y, tt.TensorVariable) and y.type.dtype == "float64" and y.ndim == 0
    assert float(y.eval()) == 2.5
    ok = tt.scalar("ok", dtype="bool")
    with pytest.raises(ValueError, match="nope"):
        CheckAndRaise(ValueError, "nope")(1, ok).eval({ok: False})


def test_the_gradient_reaches_the_value_and_not_the_conditions():
    x = tt.dvector("x")
    y = Assert("x positive")(x, tt.all(x > 0))
    g = tg.grad((y ** 2).sum(), x)
    np.testing.assert_allclose(g.eval({x: np.array([1.0, 2.0])}), [2.0, 4.0])
    grads = y.owner.op.L_op(y.owner.inputs, [y], [tt.ones_like(y)])
    assert isinstance(grads[1].type, DisconnectedType)
