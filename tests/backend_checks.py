"""What the tests of the whole-graph back ends (tests/link/jax, numba, pytorch) share: the
broad expression sets, run in the back end's mode and in FAST_RUN, compared within the
dtype's tolerance (same dtype, same shape, nan and inf in the same places).

Many expressions go into one function with many outputs: a back end compiles the whole graph
at once (Numba takes seconds per function), so a test compiles a few functions, not one per
expression.
"""

from __future__ import annotations

import numpy as np

import tensorgraph as tg
import tensorgraph.tensor as tt

#: the tolerance of each float dtype: different libm / XLA implementations of the
#: transcendental functions differ by a few ulps, and sums are reassociated
TOL = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-9}


def assert_same(got, expected, label="", tol_dtypes=()):
    """Equal dtype and shape, values within the tolerance of the least precise float dtype
    involved (a float64 result computed from float32 inputs is only float32-accurate)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"{label}: dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"{label}: shape {got.shape} != {expected.shape}"
    if got.dtype.kind in "fc":
        tol = max(TOL.get(d, 0) for d in (got.dtype.name, *tol_dtypes)) or 1e-9
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, equal_nan=True,
                                   err_msg=label)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=label)


def compare(mode, inputs, outputs: dict, values, reference="FAST_RUN", **kwargs):
    """Compile ``outputs`` ({label: variable}) in ``mode`` and in ``reference``, call both on
    ``values``, compare every output; returns the function compiled in ``mode``."""
    labels = list(outputs)
    f = tg.function(inputs, list(outputs.values()), mode=mode, **kwargs)
    ref = tg.function(inputs, list(outputs.values()), mode=reference, **kwargs)
    with np.errstate(all="ignore"):
        expected = ref(*values)
        got = f(*values)
    in_dtypes = [np.asarray(v).dtype.name for v in values]
    for label, g, e in zip(labels, got, expected):
        assert_same(g, e, label, in_dtypes)
    return f


# ----------------------------------------------------------------------------------------------
# Expression sets

UNARY_FLOAT = {
    "exp": tt.exp, "exp2": tt.exp2, "expm1": tt.expm1, "log": tt.log, "log2": tt.log2,
    "log10": tt.log10, "log1p": tt.log1p, "sqrt": tt.sqrt, "sin": tt.sin, "cos": tt.cos,
    "tan": tt.tan, "arcsin": tt.arcsin, "arccos": tt.arccos, "arctan": tt.arctan,
    "sinh": tt.sinh, "cosh": tt.cosh, "tanh": tt.tanh, "arcsinh": tt.arcsinh,
    "arccosh": tt.arccosh, "arctanh": tt.arctanh, "sigmoid": tt.sigmoid,
    "softplus": tt.softplus, "log1mexp": tt.log1mexp, "erf": tt.erf, "erfc": tt.erfc,
    "gamma": tt.gamma, "gammaln": tt.gammaln, "reciprocal": tt.reciprocal, "neg": tt.neg,
    "abs": tt.abs, "sign": tt.sign, "sqr": tt.sqr, "floor": tt.floor, "ceil": tt.ceil,
    "trunc": tt.trunc, "round": tt.round, "round_away": tt.round_half_away_from_zero,
    "isnan": tt.isnan, "isinf": tt.isinf, "isfinite": tt.isfinite,
    "relu": tt.special.relu if hasattr(tt, "special") else None,
    "clip": lambda a: tt.clip(a, -0.5, 2.0), "switch": lambda a: tt.switch(a > 0, a, -a * 2),
    "pow2.5": lambda a: abs(a) ** 2.5, "a**3": lambda a: a ** 3, "1/(1+exp(-a))":
        lambda a: 1 / (1 + tt.exp(-a)), "log(1-sigmoid)": lambda a: tt.log(1 - tt.sigmoid(a)),
}
UNARY_FLOAT = {k: v for k, v in UNARY_FLOAT.items() if v is not None}

BINARY = {
    "add": tt.add, "sub": tt.sub, "mul": tt.mul, "true_div": tt.true_div,
    "maximum": tt.maximum, "minimum": tt.minimum, "lt": tt.lt, "le": tt.le, "gt": tt.gt,
    "ge": tt.ge, "eq": tt.eq, "neq": tt.neq, "arctan2": tt.arctan2, "pow": tt.pow,
    "int_div": tt.int_div, "mod": tt.mod, "a*b+a/2": lambda a, b: a * b + a / 2,
    "switch(a>b,a,b)": lambda a, b: tt.switch(a > b, a, b),
}

BINARY_INT = {
    "add": tt.add, "sub": tt.sub, "mul": tt.mul, "int_div": tt.int_div, "mod": tt.mod,
    "maximum": tt.maximum, "minimum": tt.minimum, "lt": tt.lt, "eq": tt.eq, "and": tt.and_,
    "or": tt.or_, "xor": tt.xor, "true_div": tt.true_div,
}

SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 3.7, -7.25, 1e-7, 40.0, -40.0, 100.0,
           np.inf, -np.inf, np.nan]


def special_values(dtype, n):
    values = np.array((SPECIAL * (n // len(SPECIAL) + 1))[:n])
    with np.errstate(all="ignore"):
        return values.astype(dtype)


def random_shape(rng, ndim, low=1, high=5):
    return tuple(int(s) for s in rng.integers(low, high + 1, size=ndim))


def check_unary_float(mode, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = tt.vector("a", dtype=dtype)
    values = np.concatenate([special_values(dtype, 17),
                             rng.normal(size=23).astype(dtype) * 3]).astype(dtype)
    return compare(mode, [a], {name: fn(a) for name, fn in UNARY_FLOAT.items()}, [values])


def check_binary_float(mode, dtype, seed=0):
    """Every binary op over broadcast operands (a column against a row, a matrix against a
    row) of random shapes."""
    rng = np.random.default_rng(seed)
    m, n = random_shape(rng, 2, 2, 6)
    a, b = tt.matrix("a", dtype=dtype), tt.row("b", dtype=dtype)
    c = tt.col("c", dtype=dtype)
    outputs = {}
    for name, fn in BINARY.items():
        outputs[name] = fn(a, b)
        outputs[name + " col.row"] = fn(c, b)
    values = [(rng.normal(size=(m, n)) * 3).astype(dtype),
              (rng.normal(size=(1, n)) * 3).astype(dtype),
              (rng.normal(size=(m, 1)) * 3).astype(dtype)]
    values[0][0, :] = special_values(dtype, n)
    return compare(mode, [a, b, c], outputs, values)


INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


#: the integer ops whose uint64 result needs more than int64's low 64 bits ('/' of integers
#: is '//')
UINT64_ORDERED = ("int_div", "true_div", "mod", "maximum", "minimum", "lt", "eq")


def check_integer_ops(mode, seed=0, uint64_ordered=True):
    """Integer and bool arithmetic in every dtype pair (wrap-around, floor division and modulo
    by zero as numpy), comparisons, bitwise logic, casts. ``uint64_ordered=False`` leaves out
    the ``UINT64_ORDERED`` ops computing in uint64 (PyTorch refuses them)."""
    rng = np.random.default_rng(seed)
    inputs, values, outputs = [], [], {}
    for k, dtype in enumerate(INT_DTYPES + ["bool"]):
        v = tt.vector(f"v{k}", dtype=dtype)
        inputs.append(v)
        if dtype == "bool":
            values.append(rng.integers(0, 2, size=12).astype(bool))
        else:
            info = np.iinfo(dtype)
            pool = [0, 1, 2, 3, 7, 100, info.max, info.min, info.max - 1]
            pool += [-1, -2, -7, -100] if info.min < 0 else []
            values.append(np.asarray(rng.choice(pool, size=12)).astype(dtype))
    names = sorted(BINARY_INT)
    for i, a in enumerate(inputs):
        for j in (i, (i + 1) % len(inputs), (i + 3) % len(inputs)):
            b = inputs[j]
            for k in range(5):  # five of the ops per pair, a different five for each pair
                name = names[(3 * i + 5 * j + k) % len(names)]
                try:
                    out = BINARY_INT[name](a, b)
                except TypeError:
                    continue
                if name in ("and", "or", "xor") and out.dtype.startswith("float"):
                    continue  # uint64 with a signed int: numpy's bitwise ops refuse it
                if not uint64_ordered and name in UINT64_ORDERED and \
                        "uint64" in (a.dtype, b.dtype) and \
                        np.result_type(a.dtype, b.dtype) == np.uint64:
                    continue
                outputs[f"{name}({a.dtype},{b.dtype})"] = out
        outputs[f"neg({a.dtype})"] = -a if a.dtype != "bool" else tt.invert(a)
        outputs[f"abs({a.dtype})"] = abs(a)
        outputs[f"cast float32({a.dtype})"] = tt.cast(a, "float32")
        outputs[f"exp({a.dtype})"] = tt.exp(a)
        outputs[f"sum({a.dtype})"] = a.sum()
    return compare(mode, inputs, outputs, values)


#: integer op name -> (the expression of a and b, numpy's function of the two arrays)
INT_EDGE_BINARY = {
    "add": (tt.add, np.add), "sub": (tt.sub, np.subtract), "mul": (tt.mul, np.multiply),
    "a // b": (lambda a, b: a // b, np.floor_divide), "a % b": (lambda a, b: a % b, np.mod),
    "int_div": (tt.int_div, np.floor_divide), "mod": (tt.mod, np.mod),
    "maximum": (tt.maximum, np.maximum), "minimum": (tt.minimum, np.minimum),
    "and": (tt.and_, np.bitwise_and), "or": (tt.or_, np.bitwise_or),
    "xor": (tt.xor, np.bitwise_xor), "lt": (tt.lt, np.less), "le": (tt.le, np.less_equal),
    "gt": (tt.gt, np.greater), "ge": (tt.ge, np.greater_equal), "eq": (tt.eq, np.equal),
    "neq": (tt.neq, np.not_equal),
    "clip(a, min(a,b), b)": (lambda a, b: tt.clip(a, tt.minimum(a, b), b),
                             lambda a, b: np.clip(a, np.minimum(a, b), b)),
    "switch(a<b,a,b)": (lambda a, b: tt.switch(a < b, a, b), lambda a, b: np.where(a < b, a, b)),
}
INT_EDGE_UNARY = {
    "neg": (tt.neg, np.negative), "abs": (abs, np.abs), "sign": (tt.sign, np.sign),
    "sqr": (tt.sqr, np.square), "invert": (tt.invert, np.invert),
    "a * a - a": (lambda a: a * a - a, lambda a: a * a - a),
}


def integer_edges(dtype) -> list:
    """INT_MIN, INT_MAX, -1, 0, 1 (and 2, -2) of an integer dtype, as far as it has them."""
    info = np.iinfo(dtype)
    return sorted({int(info.min), int(info.max), 0, 1, 2} | ({-1, -2} if info.min < 0 else set()))


def check_integer_edges(mode, dtype, refused=()):
    """Every integer op on every pair of edge values of ``dtype`` gives numpy's answer
    (wrap-around, ``INT_MIN // -1 == INT_MIN``, ``INT_MIN % -1 == 0``, ``x // 0 == x % 0 ==
    0``), integer powers included (every non-negative exponent up to INT_MAX), and
    ``true_div`` under ``int_division='floatX'``; one function for all of them. ``refused``:
    op names the mode refuses for this dtype (PyTorch has no uint64 ordering)."""
    edges = integer_edges(dtype)
    a, b = tt.vector("a", dtype=dtype), tt.vector("b", dtype=dtype)
    base, exponent = tt.vector("base", dtype=dtype), tt.vector("exponent", dtype=dtype)
    A = np.array([x for x in edges for _ in edges], dtype=dtype)
    B = np.array([y for _ in edges for y in edges], dtype=dtype)
    powers = [y for y in edges if y >= 0] + [3, 7, int(np.iinfo(dtype).max) // 2]
    P = np.array([x for x in edges for _ in powers], dtype=dtype)
    Q = np.array([y for _ in edges for y in powers], dtype=dtype)
    outputs, expected = {}, {}
    with np.errstate(all="ignore"):
        for name, (fn, ref) in INT_EDGE_BINARY.items():
            outputs[name], expected[name] = fn(a, b), ref(A, B)
        for name, (fn, ref) in INT_EDGE_UNARY.items():
            outputs[name], expected[name] = fn(a), ref(A)
        outputs["base ** exponent"], expected["base ** exponent"] = base ** exponent, P ** Q
        with tg.config.change_flags(int_division="floatX"):
            outputs["a / b floatX"] = a / b
        expected["a / b floatX"] = np.true_divide(A, B).astype(outputs["a / b floatX"].dtype)
    for name in refused:
        del outputs[name], expected[name]
    f = tg.function([a, b, base, exponent], list(outputs.values()), mode=mode)
    got = f.wait_optimized()(A, B, P, Q)  # FAST_RUN's C, not its first calls' quick tier
    for (name, e), g in zip(expected.items(), got):
        assert_same(g, np.asarray(e), f"{name} ({dtype}, {mode})")


def check_negative_integer_powers(mode):
    """An integer to a negative integer power is numpy's ValueError in every signed dtype,
    whatever the base (0 and -1 included); non-negative powers of the same function work."""
    import pytest

    dtypes = [d for d in INT_DTYPES if np.iinfo(d).min < 0]
    pairs = [(tt.vector(f"x_{d}", dtype=d), tt.vector(f"y_{d}", dtype=d)) for d in dtypes]
    f = tg.function([v for pair in pairs for v in pair], [x ** y for x, y in pairs],
                    mode=mode).wait_optimized()
    good = [np.array(v, dtype=d) for d in dtypes for v in ([0, -1, 3], [2, 3, 3])]
    for got, d in zip(f(*good), dtypes):
        assert_same(got, np.array([0, -1, 27], dtype=d), f"powers ({d}, {mode})")
    for k, d in enumerate(dtypes):
        values = list(good)
        values[2 * k + 1] = np.array([0, 1, -1], dtype=d)
        with pytest.raises(ValueError, match="Integers to negative integer powers are not "
                                             "allowed"):
            f(*values)


def check_casts(mode, float16=True):
    x = tt.vector("x", dtype="float64")
    values = [np.array([0.0, 1.5, -2.5, 100.7, -100.2, 3.0])]
    outputs = {d: tt.cast(x, d) for d in ["float32", "int64", "int32", "int8", "uint8",
                                          "bool"] + (["float16"] if float16 else [])}
    outputs["cast back"] = tt.cast(tt.cast(x, "float32"), "float64")
    return compare(mode, [x], outputs, values)


def check_reductions(mode, dtype, seed=0):
    """Every reduction along every axis (and all of them), with and without keepdims, on a
    random 3-d shape; arg extrema, mean/var/std, logsumexp, the softmax family."""
    from tensorgraph.tensor.special import log_softmax, logsumexp, softmax

    rng = np.random.default_rng(seed)
    shape = random_shape(rng, 3, 1, 4)
    x = tt.tensor(dtype, shape=(None, None, None), name="x")
    outputs = {}
    axes = [None, 0, 1, 2, (0, 2), (1, 2), (0, 1)]
    for k, axis in enumerate(axes):
        keep = bool(k % 2)
        tag = f"axis={axis} keepdims={keep}"
        for name in ("sum", "prod", "max", "min", "mean", "var", "std", "all", "any"):
            kwargs = {"keepdims": keep}
            outputs[f"{name} {tag}"] = getattr(tt, name)(x, axis=axis, **kwargs)
        outputs[f"argmax {tag}"] = tt.argmax(x, axis=axis, keepdims=keep)
        outputs[f"argmin {tag}"] = tt.argmin(x, axis=axis, keepdims=keep)
        outputs[f"logsumexp {tag}"] = logsumexp(x, axis=axis, keepdims=keep)
    for axis in (None, 0, 1, 2, -1, (0, 1), (1, 2), (0, 2)):
        outputs[f"softmax {axis}"] = softmax(x, axis=axis)
        outputs[f"log_softmax {axis}"] = log_softmax(x, axis=axis)
    value = rng.normal(size=shape).astype(dtype)
    return compare(mode, [x], outputs, [value])


def check_products(mode, dtype, seed=0):
    rng = np.random.default_rng(seed)
    m, k, n, b = (int(v) for v in rng.integers(1, 6, size=4))
    A, B = tt.matrix("A", dtype=dtype), tt.matrix("B", dtype=dtype)
    v, w = tt.vector("v", dtype=dtype), tt.vector("w", dtype=dtype)
    S, T = tt.tensor3("S", dtype=dtype), tt.tensor3("T", dtype=dtype)
    outputs = {"A.B": tt.dot(A, B), "A.w": tt.dot(A, w), "v.A": tt.dot(v, A),
               "w.w": tt.dot(w, w), "2*A.B+A.B": 2 * tt.dot(A, B) + tt.dot(A, B),
               "y+A.w": v[0] + tt.dot(A, w), "A.T.v": tt.dot(A.T, v),
               "matmul": tt.matmul(S, T), "tensordot": tt.tensordot(S, T, axes=[[2], [1]]),
               "outer": tt.outer(v, w), "A@B": A @ B}
    values = [rng.normal(size=(m, k)).astype(dtype), rng.normal(size=(k, n)).astype(dtype),
              rng.normal(size=m).astype(dtype), rng.normal(size=k).astype(dtype),
              rng.normal(size=(b, m, k)).astype(dtype), rng.normal(size=(b, k, n)).astype(dtype)]
    return compare(mode, [A, B, v, w, S, T], outputs, values)


def check_shape_ops(mode, seed=0):
    rng = np.random.default_rng(seed)
    m, n = random_shape(rng, 2, 2, 5)
    x = tt.matrix("x")
    v = tt.vector("v")
    outputs = {
        "reshape": x.reshape((n, m)), "reshape -1": x.reshape((-1,)),
        "flatten": x.flatten(), "T": x.T, "dimshuffle": x.dimshuffle(1, "x", 0),
        "shape": x.shape, "shape[0]": x.shape[0], "join0": tt.concatenate([x, x * 2], axis=0),
        "join1": tt.concatenate([x, x[:, :1]], axis=1), "stack": tt.stack([v, v * 3]),
        "stack scalars": tt.stack([x.sum(), v.sum()]), "split0": tt.split(v, [1, n - 1])[1],
        "zeros": tt.zeros((x.shape[0], 3)), "ones_like": tt.ones_like(x), "full": tt.full(
            (2, x.shape[1]), 3.5), "alloc": tt.alloc(v, 3, v.shape[0]),
        "arange": tt.arange(x.shape[1] * 2), "arange float": tt.arange(0.5, 3.2, 0.7),
        "eye": tt.eye(x.shape[0], x.shape[1], 1), "specify": tt.specify_shape(x, (m, n)) * 2,
        "second": tt.second(x, 3.0), "vstack": tt.vstack([v, v]), "hstack": tt.hstack([v, v]),
        "zeros_like int": tt.zeros_like(x, dtype="int32"), "tri": tt.tri(3, 4, 0),
    }
    values = [rng.normal(size=(m, n)), rng.normal(size=n)]
    return compare(mode, [x, v], outputs, values)


def check_symbolic_join_axis(mode):
    """A join and a split along an axis given as an integer input (traced back ends make that
    input static): every axis, negative ones too, and an out-of-range axis a ValueError."""
    import pytest

    from tensorgraph.tensor.join import Split

    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    ax = tt.lscalar("ax")
    joined = tt.join(ax, a, b)
    first, second = Split(2)(joined, ax, tt.stack([a.shape[ax], b.shape[ax]]))
    f = tg.function([ax, a, b], [joined, first * 2, second], mode=mode)
    va, vb = np.ones((2, 3)), np.arange(6.0).reshape(2, 3)
    for axis in (0, 1, -1, -2):
        out, p, q = f(axis, va, vb)
        np.testing.assert_array_equal(out, np.concatenate([va, vb], axis=axis))
        np.testing.assert_array_equal(p, 2 * va)
        np.testing.assert_array_equal(q, vb)
    with pytest.raises(ValueError, match="out of range for 2-d inputs"):
        f(2, va, vb)


def check_indexing(mode, seed=0):
    """Basic and advanced indexing, read and set/increment (repeated indices accumulate),
    negative indices and steps, index arrays of several dimensions, a constant mask."""
    rng = np.random.default_rng(seed)
    m, n = random_shape(rng, 2, 3, 6)
    x = tt.matrix("x")
    t3 = tt.tensor3("t3")
    i, j = tt.lvector("i"), tt.lvector("j")
    k = tt.lscalar("k")
    I2 = tt.lmatrix("I2")
    mask = np.arange(m * n).reshape(m, n) % 3 == 0
    outputs = {
        "x[1:]": x[1:], "x[::-1]": x[::-1], "x[:, ::2]": x[:, ::2], "x[-1]": x[-1],
        "x[k]": x[k], "x[1, -2]": x[1, -2], "x[k, 1:]": x[k, 1:], "x[None, :, None]": x[None, :, None],
        "x[i]": x[i], "x[i, j]": x[i, j], "x[:, j]": x[:, j], "x[i, 1:]": x[i, 1:],
        "x[I2]": x[I2], "x[mask]": x[mask], "x[i, None]": x[i, None],
        "t3[i, :, j]": t3[i, :, j], "t3[:, i, j]": t3[:, i, j], "t3[1, i]": t3[1, i],
        "set x[1:3]": tt.set_subtensor(x[1:3], 5.0), "inc x[::2, 1]": tt.inc_subtensor(
            x[::2, 1], 2.0), "set x[k]": tt.set_subtensor(x[k], x[0]),
        "inc x[i]": tt.inc_subtensor(x[i], 1.0), "set x[i]": tt.set_subtensor(x[i], -x[0]),
        "inc x[i, j]": tt.inc_subtensor(x[i, j], 10.0), "inc x[:, j]": tt.inc_subtensor(
            x[:, j], 1.0), "set x[mask]": tt.set_subtensor(x[mask], 0.0),
        "inc t3[i, :, j]": tt.inc_subtensor(t3[i, :, j], 1.0),
        "grad of take": tg.grad((x[i] ** 2).sum(), x),
    }
    values = [rng.normal(size=(m, n)), rng.normal(size=(4, m, n)),
              np.array([0, 2, -1, 2]), np.array([1, 1, 0, n - 1]), np.asarray(1),
              np.array([[0, 1], [2, 0]])]
    return compare(mode, [x, t3, i, j, k, I2], outputs, values)


def check_ifelse(mode):
    """Only the side taken runs: the other side would raise (an index out of range)."""
    from tensorgraph.ifelse import ifelse

    x, c = tt.vector("x"), tt.scalar("c")
    i = tt.lscalar("i")
    taken = ifelse(c > 0, x[i] * 2, x.sum())
    nested = ifelse(c > 0, ifelse(c > 5, x.max(), x.min()), tt.cast(x.shape[0], "float64"))
    pair = ifelse(c < 0, [x * 2, x.sum()], [x - 1, x.max()])
    f = tg.function([x, c, i], [taken, nested] + pair, mode=mode)
    ref = tg.function([x, c, i], [taken, nested] + pair, mode="FAST_RUN")
    data = np.arange(4.0)
    for cv, iv in ((1.0, 2), (-1.0, 99), (7.0, 0)):
        for g, e in zip(f(data, cv, iv), ref(data, cv, iv)):
            assert_same(g, e, f"c={cv}")
    return f


def check_random_streams(mode):
    """Draws of every distribution: shapes, dtypes, ranges and rough moments; the state
    advances on every call (new numbers), a reseeded stream repeats itself, no_default_updates
    keeps the numbers, and float32 draws stay float32."""
    from tensorgraph.configdefaults import config
    from tensorgraph.tensor.random.utils import RandomStream

    n = tt.lscalar("n")
    with config.change_flags(floatX="float32"):
        srng = RandomStream(seed=11)
        draws = {
            "uniform": srng.uniform(-1, 3, size=(2000,)),
            "normal": srng.normal(2.0, 0.5, size=(n, 500)),
            "standard_normal": srng.standard_normal(size=(1000,)),
            "integers": srng.integers(3, 9, size=(1000,)),
            "binomial": srng.binomial(10, 0.3, size=(1000,)),
            "bernoulli": srng.bernoulli(0.25, size=(1000,)),
            "poisson": srng.poisson(4.0, size=(1000,)),
            "exponential": srng.exponential(2.0, size=(1000,)),
            "gamma": srng.gamma(3.0, scale=2.0, size=(1000,)),
            "beta": srng.beta(2.0, 5.0, size=(1000,)),
            "choice": srng.choice(5, size=(1000,)),
            "permutation": srng.permutation(10),
            "normal(vector loc)": srng.normal(tt.arange(3.0).astype("float32"), 0.1),
        }
    f = tg.function([n], list(draws.values()), mode=mode)
    first, second = f(2), f(2)
    got = dict(zip(draws, first))
    expected_dtype = {"integers": "int64", "binomial": "int64", "bernoulli": "int64",
                      "poisson": "int64", "choice": "int64", "permutation": "int64"}
    for name, value in got.items():
        assert value.dtype == expected_dtype.get(name, "float32"), (name, value.dtype)
    assert got["normal"].shape == (2, 500) and got["normal(vector loc)"].shape == (3,)
    assert -1 <= got["uniform"].min() and got["uniform"].max() < 3
    assert abs(got["uniform"].mean() - 1) < 0.15
    assert abs(got["normal"].mean() - 2) < 0.1 and abs(got["normal"].std() - 0.5) < 0.1
    assert set(np.unique(got["integers"])) <= set(range(3, 9))
    assert abs(got["binomial"].mean() - 3) < 0.3 and abs(got["bernoulli"].mean() - 0.25) < 0.06
    assert abs(got["poisson"].mean() - 4) < 0.4 and abs(got["exponential"].mean() - 2) < 0.3
    assert abs(got["gamma"].mean() - 6) < 0.6 and abs(got["beta"].mean() - 2 / 7) < 0.05
    assert sorted(got["permutation"]) == list(range(10))
    assert set(np.unique(got["choice"])) <= set(range(5))
    assert np.abs(got["normal(vector loc)"] - [0, 1, 2]).max() < 0.6
    for name, a, b in zip(draws, first, second):
        assert not np.array_equal(a, b), f"{name}: the state did not advance"
    srng.seed(11)
    again = f(2)
    for name, a, b in zip(draws, first, again):
        np.testing.assert_array_equal(a, b, err_msg=f"{name}: reseeding does not repeat")
    frozen = tg.function([n], list(draws.values())[:2], mode=mode, no_default_updates=True)
    a, b = frozen(3), frozen(3)
    np.testing.assert_array_equal(a[1], b[1])
    return f


def check_shared_updates_givens_borrow(mode):
    """Updates as in FAST_RUN (read at the start, written at the end), givens, borrowed and
    non-borrowed outputs (writable arrays the function never touches again), defaults."""
    from tensorgraph.compile.io import In, Out

    w = tg.shared(np.arange(6.0).reshape(2, 3), name="w")
    count = tg.shared(np.asarray(0, dtype="int64"), name="count")
    x = tt.vector("x")
    data = tg.shared(np.linspace(0, 1, 12).reshape(4, 3), name="data")
    k = tt.lscalar("k")
    y = tt.dot(w, x)
    f = tg.function([x, In(k, value=1)], [Out(y, borrow=True), w * 1.0, count],
                    updates=[(w, w + 1), (count, count + k)], mode=mode)
    ref_w = np.arange(6.0).reshape(2, 3)
    for call in range(3):
        got_y, got_w, got_count = f(np.ones(3), k=2 if call == 2 else 1)
        np.testing.assert_allclose(got_y, ref_w @ np.ones(3))
        np.testing.assert_allclose(got_w, ref_w)
        got_w[0, 0] = -100  # a returned array belongs to the caller
        ref_w = ref_w + 1
    np.testing.assert_allclose(w.get_value(), ref_w)
    assert count.get_value() == 4
    g = tg.function([k], x.sum(), givens={x: data[k]}, mode=mode)
    np.testing.assert_allclose(g(2), np.linspace(0, 1, 12).reshape(4, 3)[2].sum())
    same = tg.function([x], x, mode=mode)
    value = np.ones(3)
    out = same(value)
    out[0] = 5.0
    assert value[0] == 1.0  # an output that is an input is a copy
    return f


def check_profile(mode):
    x = tt.vector("x")
    f = tg.function([x], tt.exp(x).sum(), mode=mode, profile=True)
    for _ in range(3):
        f(np.ones(5))
    stats = f.profile
    assert stats.call_count == 3 and stats.call_time > 0 and stats.vm_call_time > 0
    text = stats.summary_text()
    assert "per-node times do not exist" in text.lower(), text
    assert stats.as_records() == []
    return text


def check_logistic_regression(mode, steps=30):
    """The seed exercise (Theano's logistic regression, 400 x 784, float32, test values on)
    trains to the accuracy FAST_RUN reaches, with float32 everywhere."""
    from tensorgraph.configdefaults import config

    results = {}
    for run_mode in ("FAST_RUN", mode):
        with config.change_flags(floatX="float32", compute_test_value="raise"):
            rng = np.random.RandomState(42)
            N, feats = 400, 784
            D = (rng.randn(N, feats).astype("float32"),
                 rng.randint(size=N, low=0, high=2).astype("float32"))
            x, y = tt.matrix("x"), tt.vector("y")
            w = tg.shared(rng.randn(feats).astype("float32"), name="w")
            b = tg.shared(np.asarray(0., dtype="float32"), name="b")
            x.tag.test_value, y.tag.test_value = D
            p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
            prediction = p_1 > 0.5
            xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
            cost = xent.mean() + 0.01 * (w ** 2).sum()
            gw, gb = tg.grad(cost, [w, b])
            train = tg.function([x, y], [prediction, xent], name="train", mode=run_mode,
                                updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)])
            predict = tg.function([x], prediction, name="predict", mode=run_mode)
        for _ in range(steps):
            _, err = train(*D)
        assert err.dtype == "float32" and w.get_value().dtype == "float32"
        assert all(o.type.dtype != "float64" for n in train.maker.fgraph.apply_nodes
                   for o in n.outputs if hasattr(o.type, "dtype"))
        results[run_mode] = (float((predict(D[0]) == D[1]).mean()), w.get_value())
    accuracy, weights = results[mode]
    assert accuracy == results["FAST_RUN"][0], results
    np.testing.assert_allclose(weights, results["FAST_RUN"][1], rtol=1e-3, atol=1e-3)
    return accuracy


def check_unsupported_ops_listed(mode, backend):
    """Every op without an implementation, in one error, at compile time, with the back end's
    name; nothing runs."""
    import pytest

    from tensorgraph.graph import Apply, Op
    from tensorgraph.link.backend import UnsupportedOpsError

    class NoBackend(Op):
        __props__ = ()

        def make_node(self, x):
            x = tt.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] * 2

    class Other(NoBackend):
        __props__ = ("k",)

        def __init__(self, k=1):
            self.k = k

    x = tt.vector("x")
    out = NoBackend()(x) + Other()(tt.exp(x)) + NoBackend()(x * 3)
    with pytest.raises(UnsupportedOpsError) as info:
        tg.function([x], out, mode=mode)
    message = str(info.value)
    assert backend in message and "NoBackend" in message and "Other" in message
    assert "2 ops have no" in message and "FAST_RUN" in message
    assert len(info.value.problems) == 3
    return message


def check_tutorial_programs(mode, module, skip=()):
    """Every program of tests/test_tutorial_programs.py (the classic tutorial, what the
    notebooks teach) with ``mode`` as the default mode (``skip``: tests that assert something
    of FAST_COMPILE's graph itself, not of the results)."""
    import inspect

    from tensorgraph.configdefaults import config

    ran = []
    for name, test in inspect.getmembers(module, inspect.isfunction):
        if not name.startswith("test_") or inspect.signature(test).parameters or name in skip:
            continue
        with config.change_flags(mode=mode):
            test()
        ran.append(name)
    return ran


# ----------------------------------------------------------------------------------------------
# Random graphs (hypothesis), the style of tests/test_c_elemwise.py

RANDOM_UNARY = [tt.exp, tt.tanh, tt.sigmoid, tt.log1p, lambda v: -v, abs, tt.sqr, tt.sin,
                lambda v: tt.maximum(v, 0.5), lambda v: v * 2 - 1]
RANDOM_BINARY = [tt.add, tt.mul, tt.sub, tt.maximum, lambda a, b: tt.switch(a > b, a, b * 0.5)]


def random_graph_strategy():
    from hypothesis import strategies as st

    @st.composite
    def graphs(draw):
        dtype = draw(st.sampled_from(["float32", "float64"]))
        ndim = draw(st.integers(0, 3))
        full = draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim))
        specs = []
        for _ in range(draw(st.integers(1, 3))):
            static = tuple(1 if draw(st.booleans()) and draw(st.booleans()) else None
                           for _ in full)
            specs.append((static, draw(st.sampled_from(["c", "reversed", "strided",
                                                         "fortran"]))))
        ops = draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 99),
                                      st.integers(0, 99), st.integers(0, 99)),
                            min_size=1, max_size=6))
        return dtype, full, specs, ops

    return graphs()


def _layout(value, layout):
    if layout == "reversed" and value.ndim:
        flipped = (slice(None, None, -1),) * value.ndim
        return np.ascontiguousarray(value[flipped])[flipped]
    if layout == "strided" and value.ndim:
        return np.repeat(value, 2, axis=-1)[..., ::2]
    if layout == "fortran" and value.ndim:
        return np.asfortranarray(value)
    return value


def check_random_graph(mode, graph, seed):
    """A random graph of elementwise ops, reductions and slices over inputs of random shapes,
    broadcast patterns and memory layouts, against the same rewritten graph run by numpy
    ``perform`` (FAST_RUN's reassociated float sums can flip a comparison in a switch)."""
    from tensorgraph.compile.mode import get_mode

    dtype, full, specs, ops = graph
    rng = np.random.default_rng(seed)
    inputs = [tt.tensor(dtype, shape=static) for static, _ in specs]
    values = [_layout(rng.normal(size=tuple(1 if s == 1 else n for s, n in zip(static, full)))
                      .astype(dtype), layout) for (static, layout), _ in zip(specs, inputs)]
    pool = list(inputs)
    for kind, i, j, k in ops:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        if kind == 0:
            pool.append(RANDOM_UNARY[k % len(RANDOM_UNARY)](a))
        elif kind == 1 and a.ndim == b.ndim:
            pool.append(RANDOM_BINARY[k % len(RANDOM_BINARY)](a, b))
        elif kind == 2 and a.ndim:
            reduce = (tt.sum, tt.max, tt.mean)[k % 3]
            pool.append(reduce(a, axis=k % a.ndim, keepdims=True))
        elif kind == 3 and a.ndim and (a.type.shape[0] != 1):
            pool.append(tt.concatenate([a[1:], a[:1]], axis=0) * 1.5)
    out = pool[-1] + sum(tt.sum(v) for v in pool[:len(inputs)]) * 0
    reference = get_mode(mode).clone(linker="py")
    return compare(mode, inputs, {"random graph": out}, values, reference=reference)


def check_ops_the_rewrites_remove(linker):
    """The ops as the user wrote them (no rewrites, so TensorDot, explicit BLAS ops, second,
    identity stay), against FAST_COMPILE's numpy: the back end must run them too."""
    from tensorgraph.compile.mode import Mode
    from tensorgraph.tensor.blas import dot22, gemm, gemv

    rng = np.random.default_rng(4)
    A, B = tt.matrix("A"), tt.matrix("B")
    v, y = tt.vector("v"), tt.vector("y")
    S = tt.tensor3("S")
    a, b = tt.scalar("a"), tt.scalar("b")
    outputs = {"tensordot": tt.tensordot(S, A, axes=[[2], [0]]),
               "tensordot 2 axes": tt.tensordot(S, S, axes=[[1, 2], [1, 2]]),
               "gemv": gemv(y, a, A, v, b), "gemv beta 0": gemv(y, a, A, v, 0.0),
               "gemm": gemm(B, a, A, A.T, b), "dot22": dot22(A, A.T),
               "second": tt.second(A, v[0]), "exp(log(A))": tt.exp(tt.log(abs(A) + 1)),
               "x - x": A - A, "sum(x*0)": (A * 0).sum()}
    values = [rng.normal(size=(3, 3)), rng.normal(size=(3, 3)), rng.normal(size=3),
              rng.normal(size=3), rng.normal(size=(2, 3, 3)), np.asarray(0.5),
              np.asarray(2.0)]
    return compare(Mode(linker, None), [A, B, v, y, S, a, b], outputs, values,
                   reference="FAST_COMPILE")


def check_more_distributions(mode):
    """The other numpy Generator distributions the back ends draw, against FAST_RUN's sample
    moments (2000 draws: means within a few standard errors)."""
    from tensorgraph.tensor.random import basic

    means = {}
    for run_mode in (mode, "FAST_RUN"):
        rng = tg.shared(np.random.default_rng(3))
        draws = [basic.lognormal(0.1, 0.5, size=(4000,), rng=rng),
                 basic.laplace(1.0, 2.0, size=(4000,), rng=rng),
                 basic.logistic(-1.0, 0.5, size=(4000,), rng=rng),
                 basic.weibull(1.5, size=(4000,), rng=rng),
                 basic.geometric(0.25, size=(4000,), rng=rng)]
        values = tg.function([], draws, mode=run_mode)()
        means[run_mode] = [(float(v.mean()), float(v.std()), v.dtype) for v in values]
    for (m, s, d), (fm, fs, fd) in zip(means[mode], means["FAST_RUN"]):
        assert d == fd and abs(m - fm) < 5 * fs / np.sqrt(4000) * 1.5 and abs(s - fs) < 0.2 * fs


# ----------------------------------------------------------------------------------------------
# What every whole-graph mode does besides computing (the same test in each back end's file)


def check_integer_products(mode):
    """Integer dot products: matrix by matrix, matrix by vector, vector by vector."""
    A, v = tt.lmatrix("A"), tt.lvector("v")
    compare(mode, [A, v], {"A.A": tt.dot(A, A), "A.v": tt.dot(A, v), "v.v": tt.dot(v, v)},
            [np.arange(9).reshape(3, 3), np.array([1, -2, 3])])


def check_index_out_of_range(mode) -> str:
    """Negative indices read from the end; one out of range is an IndexError naming the user's
    line. Returns the message."""
    import pytest

    x, i = tt.vector("x"), tt.lvector("i")
    f = tg.function([x, i], x[i] * 2, mode=mode)
    np.testing.assert_allclose(f(np.arange(3.0), np.array([2, -3])), [4.0, 0.0])
    with pytest.raises(IndexError, match="out of bounds") as info:
        f(np.arange(3.0), np.array([0, 3]))
    assert "x[i] * 2" in str(info.value)  # the user's line
    return str(info.value)


def check_sizes_from_input_values(mode):
    """A traced back end: a size computed from an integer input's value makes that input
    static (a new value traces and compiles again)."""
    n = tt.lscalar("n")
    x = tt.vector("x")
    f = tg.function([n, x], [tt.zeros((n, 2)), x * 2], mode=mode)
    assert f(3, np.ones(2))[0].shape == (3, 2)
    assert f(5, np.ones(2))[0].shape == (5, 2)
    assert f.vm.program.static == (0,)


def check_size_from_a_float_value(mode, backend):
    """A traced back end: a size computed from a float input's value is a StaticShapeError
    naming the back end and the size."""
    import pytest

    from tensorgraph.link.traced_shape import StaticShapeError

    x = tt.vector("x")
    f = tg.function([x], tt.zeros((tt.cast(x.sum(), "int64"),)), mode=mode)
    with pytest.raises(StaticShapeError, match=f"{backend} needs the size of an alloc"):
        f(np.ones(3))


def check_rewrites_left_out(mode, left_out):
    """No rewrite tagged with one of ``left_out`` ran, and the mode excludes exactly those
    tags. Returns the function of ``exp(dot(x, w)) * 2 + 1`` compiled in ``mode``."""
    from tensorgraph.compile.mode import get_mode
    from tensorgraph.rewriting.optdb import optdb

    x, w = tt.matrix("x"), tt.vector("w")
    y = tt.exp(tt.dot(x, w)) * 2 + 1
    f = tg.function([x, w], y, mode=mode)
    for step in f.maker.fgraph.rewrite_history:
        if step.name in optdb:
            assert not (optdb.tags_of(step.name) & set(left_out)), step.name
    assert set(get_mode(mode).rewrite_excluding) == set(left_out)
    np.testing.assert_allclose(f(np.ones((2, 3)), np.ones(3)), np.exp(3.0) * 2 + 1)
    return f


def check_float32_stays_float32(mode):
    """A float32 graph computes and returns float32 (no node makes float64). Returns the
    function."""
    from tensorgraph.configdefaults import config

    with config.change_flags(floatX="float32"):
        x = tt.matrix("x", dtype="float32")
        y = tt.special.softmax(tt.dot(x, x.T) * 0.5, axis=1).sum(axis=0)
        f = tg.function([x], y, mode=mode)
    assert f(np.ones((3, 2), "float32")).dtype == "float32"
    assert all(o.type.dtype == "float32" for n in f.maker.fgraph.apply_nodes
               for o in n.outputs if o.type.dtype.startswith("float"))
    return f


def check_missing_library_names_the_extra(run_python, module, mode, extra):
    """Without ``module`` installed, compiling in ``mode`` is an ImportError naming the
    extra to install."""
    code = (f"import sys; sys.modules[{module!r}] = None\n"
            "import tensorgraph as tg, tensorgraph.tensor as tt\n"
            "x = tt.vector('x')\n"
            "try:\n"
            f"    tg.function([x], x * 2, mode={mode!r})\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    proc = run_python("-c", code)
    assert f"pip install tensorgraph[{extra}]" in proc.stdout, proc.stdout + proc.stderr
