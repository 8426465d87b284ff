"""The special functions' scalar ops (tensorgraph.scalar.special_functions): PyTensor's
dtypes, scipy's values, and gradients (closed forms checked with verify_grad; the inputs
without one raise NullTypeGradError naming the op)."""

import numpy as np
import pytest
import scipy.special as sp

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.gradient import NullTypeGradError, verify_grad
from tensorgraph.scalar import special_functions as sf

PY = tg.Mode(linker="py", optimizer="fast_run")


@pytest.mark.parametrize("dtype, expected", [("float32", "float32"), ("float64", "float64"),
                                             ("int8", "float32"), ("int64", "float64"),
                                             ("float16", "float16")])
def test_output_dtypes_follow_pytensor(dtype, expected):
    assert sf.gammainc.output_dtypes(dtype, dtype) == (expected,)
    assert sf.betainc.output_dtypes(dtype, dtype, dtype) == (expected,)
    assert tt.i0e(tt.vector(dtype=dtype)).dtype == expected


def test_complex_input_is_refused_with_the_dtype():
    with pytest.raises(TypeError, match="complex128"):
        tt.ndtr(tt.zvector())


def test_mixed_dtypes_upcast_and_integers_compute_as_floats():
    k, x = tt.ivector("k"), tt.fvector("x")
    y = tt.gammaincc(k, x)
    assert y.dtype == "float64"
    f = tg.function([k, x], y, mode=PY)
    np.testing.assert_allclose(f([1, 3], np.float32([0.5, 2.0])), sp.gammaincc([1, 3], [0.5, 2.0]))


def test_float16_rounds_scipys_float32_values():
    x = np.array([0.1, 0.7, 3.0], dtype="float16")
    out = sf.ndtr.impl(x)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, sp.ndtr(x.astype("float32")).astype("float16"))


def _positive(*shape_lists):
    return [np.asarray(v, dtype="float64") for v in shape_lists]


# name: (function of the differentiated inputs, points); the non-differentiable arguments are
# constants inside the function
GRADIENTS = {
    "gammainc_x": (lambda x: tt.gammainc(np.array([0.7, 2.0, 9.0]), x), _positive([0.4, 1.5, 8.0])),
    "gammaincc_x": (lambda x: tt.gammaincc(np.array([0.7, 2.0, 9.0]), x),
                    _positive([0.4, 1.5, 8.0])),
    "gammaincinv_y": (lambda y: tt.gammaincinv(np.array([0.7, 2.0, 9.0]), y),
                      _positive([0.2, 0.5, 0.9])),
    "gammainccinv_y": (lambda y: tt.gammainccinv(np.array([0.7, 2.0, 9.0]), y),
                       _positive([0.2, 0.5, 0.9])),
    "betainc_x": (lambda x: tt.betainc(np.array([0.6, 2.0, 5.0]), np.array([3.0, 1.0, 0.8]), x),
                  _positive([0.2, 0.5, 0.7])),
    "betaincinv_y": (lambda y: tt.betaincinv(np.array([0.6, 2.0, 5.0]),
                                             np.array([3.0, 1.0, 0.8]), y),
                     _positive([0.2, 0.5, 0.7])),
    "i0": (tt.i0, _positive([-3.0, 0.2, 4.0])),
    "i1": (tt.i1, _positive([-3.0, 0.0, 4.0])),
    "i0e": (tt.i0e, _positive([-3.0, 0.2, 40.0])),
    "i1e": (tt.i1e, _positive([-3.0, 0.3, 40.0])),
    "ive_x": (lambda x: tt.ive(np.array([0.0, 1.5, 4.0]), x), _positive([-2.0, 0.5, 30.0])),
    "kve_x": (lambda x: tt.kve(np.array([0.0, 1.5, 4.0]), x), _positive([0.3, 2.0, 30.0])),
    "kv_x": (lambda x: tt.kv(np.array([0.0, 1.5, 4.0]), x), _positive([0.3, 2.0, 6.0])),
    "gammainc_k": (lambda k: tt.gammainc(k, np.array([0.4, 1.5, 3.0, 8.0, 40.0])),
                   _positive([0.7, 2.0, 1.0, 9.0, 12.0])),
    "gammaincc_k": (lambda k: tt.gammaincc(k, np.array([0.4, 1.5, 3.0, 8.0, 40.0])),
                    _positive([0.7, 2.0, 1.0, 9.0, 12.0])),
    "betainc_ab": (lambda a, b: tt.betainc(a, b, np.array([0.2, 0.5, 0.7, 0.95])),
                   _positive([0.6, 2.0, 1.0, 30.0], [3.0, 1.0, 0.8, 4.0])),
    "j0": (tt.j0, _positive([-3.0, 0.2, 4.0])),
    "j1": (tt.j1, _positive([-3.0, 0.0, 4.0])),
    "jv_x": (lambda x: tt.jv(np.array([0.0, 1.5, 4.0]), x), _positive([-2.0, 0.5, 9.0])),
    "gammau": (tt.gammau, _positive([0.7, 2.0, 5.0], [0.4, 1.5, 8.0])),
    "gammal": (tt.gammal, _positive([0.7, 2.0, 5.0], [0.4, 1.5, 8.0])),
    "ndtr": (tt.ndtr, _positive([-4.0, 0.0, 1.3])),
    "log_ndtr": (tt.log_ndtr, _positive([-40.0, -2.0, 0.5, 6.0])),
    "owens_t": (tt.owens_t, _positive([-1.0, 0.3, 2.0], [0.5, -2.0, 1.5])),
    "hyp2f1_z": (lambda z: tt.hyp2f1(np.array([0.5, 2.0]), np.array([1.5, -0.5]),
                                     np.array([3.0, 2.5]), z), _positive([-0.7, 0.6])),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_agree_with_finite_differences(name):
    fun, point = GRADIENTS[name]
    point = point if isinstance(point, list) else [point]
    verify_grad(fun, point, rng=np.random.default_rng(0), mode=PY)


def test_log_ndtr_gradient_stays_finite_far_in_the_lower_tail():
    x = tt.dvector("x")
    g = tg.function([x], tg.grad(tt.log_ndtr(x).sum(), x), mode=PY)
    far = np.array([-1e3, -40.0])
    log_density = -0.5 * far**2 - 0.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(g(far), np.exp(log_density - sp.log_ndtr(far)), rtol=1e-10)


@pytest.mark.parametrize("build, position", [
    (lambda v, x: tt.ive(v, x), 0), (lambda v, x: tt.kve(v, x), 0), (tt.jv, 0),
    (lambda k, y: tt.gammaincinv(k, y), 0),
    (lambda a, z: tt.math.hyp2f1_der(a, a, 3.0, z, wrt=0), 0),
    (lambda a, y: tt.betaincinv(a, 2.0, y), 0),
])
def test_an_input_without_a_gradient_raises_naming_the_op(build, position):
    a, b = tt.dscalar("a"), tt.dscalar("b")
    out = build(a, b)
    with pytest.raises(NullTypeGradError, match=out.owner.op.scalar_op.name):
        tg.grad(out, [a, b][position])
    tg.grad(out, b)  # the other input has one
