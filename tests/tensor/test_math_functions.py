"""The elementwise functions PyTensor code calls beyond the core ones: special functions
(xlogy, xlog1py, erfcx, polygamma, logit, beta, betaln, poch, factorial), numpy's names
(power, deg2rad, isclose, nan_to_num, logaddexp, ...) and the parts of complex numbers, checked
against numpy and scipy."""

import numpy as np
import pytest
import scipy.special as sp

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad
from tensorgraph.tensor import special

from op_checks import both, fn

pytestmark = pytest.mark.usefixtures("reference_mode")


@pytest.mark.parametrize("name, y", [("xlogy", [0.0, 1.0, 0.0, 3.0, 2.0]),
                                     ("xlog1py", [-1.0, 0.0, -1.0, 3.0, 2.0])])
def test_xlogy_xlog1py_values_in_c_and_python(name, y):
    x, yv = tt.dvectors("x", "y")
    f_c, f_py = both([x, yv], getattr(tt, name)(x, yv))
    xs, ys = np.array([0.0, 0.0, 1.0, 2.0, 0.5]), np.array(y)
    expected = getattr(sp, name)(xs, ys)
    np.testing.assert_allclose(f_c(xs, ys), expected)
    np.testing.assert_allclose(f_py(xs, ys), expected)
    assert getattr(special, name) is getattr(tt, name)
    xf = tt.fvector("xf")
    assert getattr(tt, name)(xf, xf).dtype == "float32"


def test_xlogy_gradient_is_not_masked_where_x_is_zero():
    x, y = tt.dvectors("x", "y")
    gx, gy = tensorgraph.grad(tt.xlogy(x, y).sum(), [x, y])
    [gxv], [gyv] = fn([x, y], [gx, gy])(np.array([0.0]), np.array([0.0]))
    assert gxv == -np.inf and np.isnan(gyv)       # log(0) and 0 / 0
    gx, gy = tensorgraph.grad(tt.xlog1py(x, y).sum(), [x, y])
    [gxv], [gyv] = fn([x, y], [gx, gy])(np.array([0.0]), np.array([-1.0]))
    assert gxv == -np.inf and np.isnan(gyv)
    # xlogy(x, x) = x log x: d/dx = log(x) + 1, -inf at 0
    g = tensorgraph.grad(tt.xlogy(x, x).sum(), x)
    np.testing.assert_allclose(fn([x], g)(np.array([0.0, 1.0, np.e])), [-np.inf, 1.0, 2.0])
    rng = np.random.default_rng(1)
    verify_grad(tt.xlogy, [rng.random((3, 4)) + 0.1, rng.random((3, 4)) + 0.1])
    verify_grad(tt.xlog1py, [rng.random((3, 4)), rng.random((3, 4))])


def test_erfcx_and_polygamma():
    x = tt.dvector("x")
    values = np.array([-2.0, 0.0, 1.0, 30.0, 1e5])
    np.testing.assert_allclose(fn([x], tt.erfcx(x))(values), sp.erfcx(values))
    assert np.isfinite(fn([x], tt.erfcx(x))(np.array([1e5])))   # exp(x**2) * erfc(x) is nan
    verify_grad(tt.erfcx, [np.array([-1.0, 0.3, 2.0, 10.0])])
    n = tt.lscalar("n")
    points = np.array([0.5, 1.0, 2.5])
    f = fn([n, x], tt.polygamma(n, x))
    for order in (0, 1, 3):
        np.testing.assert_allclose(f(order, points), sp.polygamma(order, points))
    g = fn([n, x], tensorgraph.grad(tt.polygamma(n, x).sum(), x))
    np.testing.assert_allclose(g(2, points), sp.polygamma(3, points))
    assert tt.polygamma(1, tt.fvector()).dtype == "float32"
    assert tt.digamma is tt.psi
    with pytest.raises(TypeError, match="order n must be discrete"):
        tt.polygamma(tt.dscalar(), x)
    with pytest.raises(TypeError, match="complex argument not supported"):
        tt.polygamma(0, tt.zscalar())


def test_gamma_compositions_match_scipy():
    a, b = tt.dvectors("a", "b")
    av, bv = np.array([0.2, 0.5, 2.5]), np.array([1.5, 2.0, 3.0])
    cases = [(special.beta, sp.beta), (special.betaln, sp.betaln), (special.poch, sp.poch)]
    for ours, theirs in cases:
        np.testing.assert_allclose(fn([a, b], ours(a, b))(av, bv), theirs(av, bv))
    p = np.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(fn([a], special.logit(a))(p), sp.logit(p))
    n = tt.lvector("n")
    np.testing.assert_allclose(fn([n], special.factorial(n))(np.array([0, 3, 6])),
                               sp.factorial([0, 3, 6]))
    verify_grad(special.betaln, [av, bv])
    verify_grad(special.logit, [p])


def test_numpy_names():
    x, y = tt.dvectors("x", "y")
    assert tt.power is tt.pow and tt.true_divide is tt.true_div
    degrees = np.array([0.0, 90.0, 180.0])
    np.testing.assert_allclose(fn([x], tt.deg2rad(x))(degrees), np.deg2rad(degrees))
    np.testing.assert_allclose(fn([x], tt.rad2deg(x))(np.deg2rad(degrees)), degrees)
    assert tt.deg2rad(tt.fvector()).dtype == "float32"
    i, j = tt.lvectors("i", "j")
    a, b = np.array([7, -7, 6, 7, 0]), np.array([2, 2, 3, -2, 5])
    np.testing.assert_array_equal(fn([i, j], tt.ceil_intdiv(i, j))(a, b), -(-a // b))
    special_values = np.array([1.0, np.nan, np.inf, -np.inf])
    np.testing.assert_array_equal(fn([x], tt.isposinf(x))(special_values),
                                  np.isposinf(special_values))
    np.testing.assert_array_equal(fn([x], tt.isneginf(x))(special_values),
                                  np.isneginf(special_values))
    np.testing.assert_array_equal(fn([x], tt.nan_to_num(x))(special_values),
                                  np.nan_to_num(special_values))
    np.testing.assert_array_equal(
        fn([x], tt.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0))(special_values),
        np.nan_to_num(special_values, nan=-1.0, posinf=9.0, neginf=-9.0))
    assert tt.nan_to_num(i) is i
    big = np.array([1.0, 1000.0, -np.inf, np.inf, 5.0])
    other = np.array([2.0, 1000.0, -np.inf, np.inf, -np.inf])
    np.testing.assert_allclose(fn([x, y], tt.logaddexp(x, y))(big, other),
                               np.logaddexp(big, other))
    z = tt.dvector("z")
    np.testing.assert_allclose(fn([x, y, z], tt.logaddexp(x, y, z))(big, other, big),
                               np.logaddexp(np.logaddexp(big, other), big))
    np.testing.assert_array_equal(fn([x, y, z], tt.smallest(x, y, z))(big, other, -big),
                                  np.minimum(np.minimum(big, other), -big))
    np.testing.assert_array_equal(fn([x, y], tt.largest(x, y))(big, other),
                                  np.maximum(big, other))


@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose(equal_nan):
    x, y = tt.dvectors("x", "y")
    a = np.array([1.0, 1.0, np.nan, np.inf, np.inf, -np.inf, 1e-9, 1.0])
    b = np.array([1.0 + 1e-9, 1.1, np.nan, np.inf, -np.inf, 1.0, 0.0, np.inf])
    got = fn([x, y], tt.isclose(x, y, equal_nan=equal_nan))(a, b)
    np.testing.assert_array_equal(got, np.isclose(a, b, equal_nan=equal_nan))
    got = fn([x, y], tt.isclose(x, y, rtol=0.2, atol=0.0))(a, b)
    np.testing.assert_array_equal(got, np.isclose(a, b, rtol=0.2, atol=0.0))


def test_complex_parts():
    re, im = tt.dvectors("re", "im")
    rv, iv = np.array([1.0, -2.0, 0.0]), np.array([0.5, 0.0, -3.0])
    z = tt.complex(re, im)
    assert z.dtype == "complex128"
    assert tt.complex(tt.fvector(), tt.fvector()).dtype == "complex64"
    f = fn([re, im], [z, tt.real(z), tt.imag(z), tt.conj(z), tt.angle(z), tt.abs(z)])
    zv = rv + 1j * iv
    for got, want in zip(f(rv, iv), [zv, zv.real, zv.imag, zv.conj(), np.angle(zv), abs(zv)]):
        np.testing.assert_allclose(got, want)
    polar = fn([re, im], tt.complex_from_polar(re, im))(rv, iv)
    np.testing.assert_allclose(polar, rv * np.exp(1j * iv))
    # real input: real and conj are the input, imag its zeros, angle 0 or pi
    assert tt.real(re) is re and tt.conj(re) is re and tt.conjugate is tt.conj
    np.testing.assert_array_equal(fn([re], tt.imag(re))(rv), np.zeros(3))
    np.testing.assert_allclose(fn([re], tt.angle(re))(rv), np.angle(rv))
    # the gradient of |z|^2 through the parts: 2 re, 2 im
    r2 = tt.add(tt.sqr(tt.real(z)), tt.sqr(tt.imag(z))).sum()
    g_re, g_im = tensorgraph.grad(r2, [re, im])
    got_re, got_im = fn([re, im], [g_re, g_im])(rv, iv)
    np.testing.assert_allclose(got_re, 2 * rv)
    np.testing.assert_allclose(got_im, 2 * iv)


def test_softmax_axis_must_be_an_int():
    with pytest.raises(TypeError, match="axis must be an int or None"):
        special.Softmax(1.5)
    with pytest.raises(TypeError, match="axis must be an int or None"):
        special.LogSoftmax(True)


def test_scalar_special_ops_get_their_c_from_the_table():
    """xlogy, xlog1py and erfcx have C registered in tensorgraph.link.c.ops; the module
    defining the ops imports nothing of tensorgraph.link; polygamma runs scipy."""
    from tensorgraph.link.c.ops import implementation
    from tensorgraph.link.c.ops.scalar import scalar_expr
    from tensorgraph.tensor import scalar_special as ss

    from op_checks import assert_c_from_table
    from tensorgraph.link.c.ops.elemwise import ElemwiseC
    from tensorgraph.tensor.elemwise import Elemwise

    implementation(Elemwise(ss.xlogy))   # loads the table
    assert_c_from_table([(Elemwise(ss.xlogy), ElemwiseC)], ss)
    assert "tg_log(" in scalar_expr(ss.xlogy, ["x", "y"], ("float64",) * 2, "float64")
    assert "tg_log1pf(" in scalar_expr(ss.xlog1py, ["x", "y"], ("float32",) * 2, "float32")
    assert "tg_sf_erfcx_d" in scalar_expr(ss.erfcx, ["x"], ("float64",), "float64")
    with pytest.raises(NotImplementedError, match="no C"):
        scalar_expr(ss.polygamma, ["n", "x"], ("int64", "float64"), "float64")


def test_convert_to_dtype_ops():
    from tensorgraph.tensor import math as tm

    x = tt.dvector("x")
    assert tt.cast(x, "int8").owner.op == tm._convert_to_int8
    assert tm._convert_to_float32(x).dtype == "float32"
    np.testing.assert_array_equal(fn([x], tm._convert_to_int16(x))(np.array([1.7, -2.2])),
                                  [1, -2])
    assert tm._convert_to_complex128(x).dtype == "complex128"


def test_allclose_helper_uses_the_less_precise_dtype():
    from tensorgraph.tensor.math import _allclose

    a = np.array([1.0, 2.0], dtype="float64")
    # float64: numpy's default tolerances (rtol 1e-5, atol 1e-8), as PyTensor's _allclose
    assert _allclose(a, a + 1e-6) and not _allclose(a, a + 1e-4)
    assert _allclose(-0.311023883434, -0.311022856884)        # Python floats are float64
    assert not _allclose(a.astype("float32"), a + 1e-4)
    assert _allclose(a.astype("float32"), a + 1e-5)          # float32's tolerance
    assert _allclose(a.astype("float16"), a + 1e-3) and not _allclose(a.astype("float16"), a + 1e-2)
    assert not _allclose(a, a + 1e-3, rtol=0, atol=1e-4)
