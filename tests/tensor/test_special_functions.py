"""The special functions and bitwise names at PyTensor's paths (``tt.<name>``,
``tensorgraph.tensor.math.<name>``), with scipy's and numpy's values."""

import numpy as np
import pytest
import scipy.special as sp

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.tensor import math as tmath

NAMES = ["betainc", "betaincinv", "gammainc", "gammaincc", "gammaincinv", "gammainccinv",
         "i0", "i1", "i0e", "i1e", "ive", "kv", "kve", "log_ndtr", "ndtr", "owens_t", "hyp2f1",
         "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "iv", "kn", "gammau",
         "gammal", "chi2sf", "j0", "j1", "jv"]


@pytest.mark.parametrize("name", NAMES)
def test_every_name_is_at_pytensors_paths(name):
    assert getattr(tt, name) is getattr(tmath, name)
    assert name in tmath.__all__


def test_bitwise_names_compute_numpys_bitwise_operations():
    a, b = tt.ivector("a"), tt.ivector("b")
    f = tg.function([a, b], [tt.bitwise_and(a, b), tt.bitwise_or(a, b), tt.bitwise_xor(a, b),
                             tt.bitwise_not(a)])
    x, y = np.array([12, -7, 0], dtype="int32"), np.array([10, 3, -1], dtype="int32")
    for got, want in zip(f(x, y), [x & y, x | y, x ^ y, ~x]):
        np.testing.assert_array_equal(got, want)


def test_bitwise_not_of_bool_is_logical_not():
    m = tt.vector("m", dtype="bool")
    np.testing.assert_array_equal(tg.function([m], tt.bitwise_not(m))(np.array([True, False])),
                                  [False, True])


def test_functions_built_from_the_ops_give_scipys_values():
    v, x = tt.dvector("v"), tt.dvector("x")
    f = tg.function([v, x], [tt.kv(v, x), tt.iv(v, x), tt.gammau(v, x), tt.gammal(v, x),
                             tt.chi2sf(x, v)])
    order, arg = np.array([0.5, 2.0, 6.0]), np.array([0.2, 3.0, 25.0])
    want = [sp.kv(order, arg), sp.iv(order, arg), sp.gammaincc(order, arg) * sp.gamma(order),
            sp.gammainc(order, arg) * sp.gamma(order), sp.chdtrc(order, arg)]
    for got, expected in zip(f(order, arg), want):
        np.testing.assert_allclose(got, expected, rtol=1e-13)


def test_functions_broadcast_and_batch():
    a, b, x = tt.dmatrix("a"), tt.dvector("b"), tt.dscalar("x")
    out = tt.betainc(a, b, x)
    assert out.ndim == 2
    av, bv = np.array([[0.5, 2.0], [3.0, 4.0]]), np.array([1.5, 0.7])
    np.testing.assert_allclose(tg.function([a, b, x], out)(av, bv, 0.3), sp.betainc(av, bv, 0.3),
                               rtol=1e-13)


def test_wrong_number_of_arguments_says_what_the_function_takes():
    with pytest.raises(TypeError, match=r"hyp2f1\(a, b, c, z\) takes 4 arguments, got 2"):
        tt.hyp2f1(1.0, 2.0)
