"""An element's value does not depend on where it sits: equal inputs give bitwise equal
outputs whether an element falls in a loop's vectorized body, its tail, a strided or a
row-by-row loop, or a longer or shorter array.

The C loops vectorize math functions through glibc's libmvec and used to compute the tail of
each loop with libm's scalar functions, another implementation: in 20 equal float32 inputs,
exp and sigmoid gave elements 16-19 a value one ulp away from elements 0-15, and
``argmax(sigmoid(b), axis=0)`` picked a tail row where numpy picks the first of equal rows.
"""

import numpy as np
import pytest

import tensorgraph
import tensorgraph.scalar.basic as sb
import tensorgraph.scalar.math as sm
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from tensorgraph.link.c.codegen import c_implementation
from tensorgraph.tensor import special
from tensorgraph.tensor.elemwise import Elemwise

C = Mode("cvm", None)  # the C linker, no rewrites: one loop per op
LENGTHS = range(1, 41)

#: every scalar op with a C expression that calls a math function, with inputs in its domain
UNARY = {
    sm.exp: (-3, 3), sm.exp2: (-3, 3), sm.expm1: (-3, 3), sm.log: (0.1, 5),
    sm.log2: (0.1, 5), sm.log10: (0.1, 5), sm.log1p: (-0.5, 4), sm.sqrt: (0.1, 5),
    sm.sin: (-3, 3), sm.cos: (-3, 3), sm.tan: (-1.2, 1.2), sm.arcsin: (-0.9, 0.9),
    sm.arccos: (-0.9, 0.9), sm.arctan: (-3, 3), sm.sinh: (-3, 3), sm.cosh: (-3, 3),
    sm.tanh: (-3, 3), sm.arcsinh: (-3, 3), sm.arccosh: (1.1, 4), sm.arctanh: (-0.9, 0.9),
    sm.sigmoid: (-6, 6), sm.softplus: (-6, 6), sm.log1mexp: (-5, -0.05), sm.erf: (-2, 2),
    sm.erfc: (-2, 2), sm.gamma: (0.5, 4), sm.gammaln: (0.5, 4), sm.reciprocal: (0.5, 3),
}
BINARY = {sm.pow_: ((0.1, 3), (-2, 2)), sm.arctan2: ((-3, 3), (-3, 3))}


def _points(domain, count, dtype, seed):
    low, high = domain
    return np.random.default_rng(seed).uniform(low, high, count).astype(dtype)


def _fused(x):
    """A fused loop calling several math functions (what FAST_RUN makes of a model)."""
    return tt.tanh(x) * tt.exp(-x * x) + tt.sigmoid(2 * x) - tt.log1p(x * x)


def _bits(a):
    return a.view(f"u{a.itemsize}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_equal_inputs_give_equal_outputs_at_every_position_and_length(dtype):
    """For every math op: n equal inputs (n = 1..40) give n bitwise equal outputs, the same
    as one input gives. Each op has its own input vector, so each loop ends with its tail."""
    names = [op.name for op in UNARY] + [op.name for op in BINARY] + ["fused chain"]
    xs = [tt.vector(f"x_{name}", dtype=dtype) for name in names]
    ys = [tt.vector(f"y_{op.name}", dtype=dtype) for op in BINARY]
    outputs = ([Elemwise(op)(x) for op, x in zip(UNARY, xs)] +
               [Elemwise(op)(x, y) for op, x, y in zip(BINARY, xs[len(UNARY):], ys)] +
               [_fused(xs[-1])])
    f = tensorgraph.function(xs + ys, outputs, mode=C)
    count = 12
    domains = [*UNARY.values(), *(d[0] for d in BINARY.values()), (-2, 2)]
    values = [_points(d, count, dtype, k) for k, d in enumerate(domains)]
    values += [_points(d[1], count, dtype, 100 + k) for k, d in enumerate(BINARY.values())]
    with np.errstate(all="ignore"):
        for v in range(count):
            single = f(*[np.full(1, column[v]) for column in values])
            for n in LENGTHS[1:]:
                for name, one, out in zip(names, single,
                                          f(*[np.full(n, column[v]) for column in values])):
                    same = _bits(out) == _bits(one)
                    assert same.all(), (
                        f"{name} ({dtype}) of {n} equal inputs {values[names.index(name)][v]!r}: "
                        f"positions {np.flatnonzero(~same).tolist()} give {out[~same][:3]!r}, "
                        f"the others and a single input {one[0]!r}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layouts_give_the_values_of_the_flat_loop(dtype):
    """Contiguous, strided, transposed and row-by-row loops compute the same function."""
    v = _points((-3, 3), 37, dtype, 7)
    x = tt.vector("x", dtype=dtype)
    m = tt.matrix("m", dtype=dtype)
    exprs = {"exp": tt.exp, "sigmoid": tt.sigmoid, "tanh": tt.tanh, "fused": _fused}
    for name, fn in exprs.items():
        flat = tensorgraph.function([x], fn(x), mode=C)(v)
        g = tensorgraph.function([m], [fn(m), fn(m.T)], mode=C)
        wide = np.stack([v, v[::-1], v])  # 3 x 37, rows contiguous
        strided = np.repeat(v, 2)[::2]  # a non-contiguous vector
        got_rows, got_t = g(np.ascontiguousarray(wide.T).T)  # F-ordered: the strided path
        np.testing.assert_array_equal(got_rows[0], flat, err_msg=f"{name}: strided 2-d")
        np.testing.assert_array_equal(got_t[:, 0], flat, err_msg=f"{name}: transposed")
        cut = np.concatenate([wide, wide[:, :1]], axis=1)[:, :37]  # rows contiguous, not flat
        got_rows, _ = g(cut)
        np.testing.assert_array_equal(got_rows[1][::-1], flat, err_msg=f"{name}: rows")
        np.testing.assert_array_equal(
            tensorgraph.function([x], fn(x), mode=C)(strided), flat,
            err_msg=f"{name}: strided 1-d")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_of_equal_logits_is_equal_at_every_position(dtype):
    """The softmax kernels call exp in vectorized loops with tails too."""
    x = tt.matrix("x", dtype=dtype)
    f = tensorgraph.function([x], [special.softmax(x, axis=-1), special.log_softmax(x, axis=-1),
                                   special.softmax(x, axis=0)], mode="FAST_RUN")
    for a, b in _points((-3, 3), 16, dtype, 3).reshape(8, 2):
        for n in LENGTHS:
            row = np.resize(np.array([a, b], dtype=dtype), n)
            sm_rows, lsm_rows, sm_cols = f(np.stack([row, row[::-1]]))
            for out in (sm_rows[0], lsm_rows[0], sm_cols[0]):
                assert np.unique(out[0::2]).size == 1 and np.unique(out[1::2]).size <= 1, (
                    f"{n} logits alternating {a!r}, {b!r} give {out!r}")


def test_argmax_of_sigmoid_picks_the_first_of_equal_rows_like_numpy():
    """Issue 19's case: b (4, 5) whose rows 1 and 3 are equal and the largest; the flat loop's
    vector body holds row 1 (elements 5-9 of 20) and its tail most of row 3 (elements 16-19:
    the values of columns 1-4 are ones whose sigmoid and exp came out one ulp larger in the
    scalar tail than in the vector body)."""
    b = tt.fmatrix("b")
    top = np.array([0.3012, -2.9402726, -0.16619799, -1.8165903, -0.06692378], dtype="float32")
    value = np.stack([top - 1, top, top - 2, top]).astype("float32")
    expected = tensorgraph.function([b], tt.argmax(tt.sigmoid(b), axis=0),
                                    mode="FAST_COMPILE")(value)
    np.testing.assert_array_equal(expected, [1] * 5)
    for expr in (tt.sigmoid(b), tt.exp(b), tt.sigmoid(b) * 2 + 1):
        got = tensorgraph.function([b], tt.argmax(expr, axis=0), mode="FAST_RUN")(value)
        np.testing.assert_array_equal(got, expected, err_msg=str(expr))


def test_scalar_ops_without_math_calls_need_no_definitions():
    """Only the math functions a module calls are defined in it (each costs compile time)."""
    from tensorgraph.link.c.dtypes import tg_vector_math

    assert tg_vector_math("t0 = a + b;") == ""
    text = tg_vector_math("t0 = tg_sigmoid_f(a); t1 = tg_pow(b, c);")
    assert "TG_MV_FLOAT1(exp)" in text and "TG_MV_DOUBLE2(pow)" in text
    assert "log" not in text
    x = tt.fvector("x")
    node = tt.exp(x).owner
    assert "TG_MV_FLOAT1(exp)" in c_implementation(node.op).support_code(node.op, node)
    node = Elemwise(sb.add)(x, x).owner
    assert "TG_MV_" not in c_implementation(node.op).support_code(node.op, node)
