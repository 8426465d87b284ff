"""The BLAS rewrites fold scalings and additions into Gemv / Gemm only where the BLAS op can
compute them: one dtype throughout. An operand of a wider dtype (float64 scale on a float32
product) leaves the product alone, without a failed-rewrite warning."""

import warnings

import numpy as np

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.tensor.blas import Gemm, Gemv


def _ops(f):
    return [type(node.op) for node in f.maker.fgraph.toposort()]


def test_upcast_operands_are_not_folded_into_blas_ops():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 4)).astype("float32")
    x = rng.standard_normal(4).astype("float32")
    y = rng.standard_normal(3).astype("float32")
    a, xv, yv = tt.fmatrix("a"), tt.fvector("x"), tt.fvector("y")
    alpha, y64, z64 = tt.dscalar("alpha"), tt.dvector("y64"), tt.dmatrix("z64")
    B = rng.standard_normal((4, 2)).astype("float32")
    Z = rng.standard_normal((3, 2))
    b = tt.fmatrix("b")
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a rewrite that fails warns: none may
        f = tg.function([a, xv, yv, alpha], tt.dot(a, xv) * alpha + yv)
        g = tg.function([a, xv, y64], tt.dot(a, xv) + y64)
        h = tg.function([a, b, z64], tt.dot(a, b) + z64)
    np.testing.assert_allclose(f(A, x, y, 0.5), (A @ x) * 0.5 + y, rtol=1e-5)
    assert f(A, x, y, 0.5).dtype == "float64"
    np.testing.assert_allclose(g(A, x, y.astype("float64")), A @ x + y, rtol=1e-5)
    np.testing.assert_allclose(h(A, B, Z), A @ B + Z, rtol=1e-5)
    assert Gemv in _ops(f) and Gemm not in _ops(h)
    # the same dtype throughout still folds
    f32 = tg.function([a, xv, yv], tt.dot(a, xv) * np.float32(0.5) + yv)
    assert _ops(f32) == [Gemv]
    np.testing.assert_allclose(f32(A, x, y), (A @ x) * 0.5 + y, rtol=1e-5)


def test_gemv_refuses_pytensors_inplace_flag():
    import pytest

    with pytest.raises(TypeError, match="no inplace flag"):
        Gemv(True)
    assert Gemv() == Gemv(None)
