"""PyTensor's small Variable / SharedVariable API that ported code calls: ``eval(mode=)``,
``dprint``, ``get_value(return_internal_type=)``, ``clone_replace(rebuild_strict=)``."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import get_mode
from tensorgraph.graph.basic import clone_replace


def test_eval_with_a_mode():
    x = tt.dvector("x")
    y = tt.exp(x).sum()
    for mode in ("FAST_COMPILE", get_mode("FAST_RUN")):
        assert np.isclose(y.eval({x: np.zeros(3)}, mode=mode), 3.0)
    # the same options reuse the compiled function
    y.eval({x: np.zeros(2)}, mode="FAST_COMPILE")
    cached = [k for k in y._eval_cache if dict(k[1]).get("mode") == "FAST_COMPILE"]
    assert len(cached) == 1


def test_dprint():
    x = tt.dvector("x")
    text = (tt.exp(x) + 1).dprint(file="str")
    assert "exp" in text and "x" in text
    from tensorgraph.printing import debugprint
    assert text == debugprint(tt.exp(x) + 1, file="str")


def test_get_value_return_internal_type():
    s = tg.shared(np.arange(3.0))
    v = s.get_value(borrow=True, return_internal_type=True)
    assert isinstance(v, np.ndarray) and v is s.get_value(borrow=True)
    assert s.get_value(return_internal_type=True) is not v


def test_clone_replace_rebuild_strict():
    x = tt.dvector("x")
    y = tt.exp(x)
    wide = tt.tensor("w", dtype="float64", shape=(3,))
    # default: the graph above is rebuilt and takes the replacement's static shape
    assert clone_replace(y, {x: wide}).type.shape == (3,)
    # rebuild_strict: the replacement is converted, the output type is kept
    kept = clone_replace(y, {x: wide}, rebuild_strict=True)
    assert kept.type == y.type
    np.testing.assert_allclose(tg.function([wide], kept)(np.zeros(3)), np.ones(3))
    with pytest.raises(TypeError, match="must have type"):
        clone_replace(y, {x: tt.dmatrix("m")}, rebuild_strict=True)
