"""Rewrites keep the dtype rules: on bool, signed and unsigned integer inputs (and mixes of them
with floats) every preset computes what no rewriting computes, with the same output dtype.

A rewrite that moves a negation, a subtraction or a constant out of a float op (``log(sigmoid(x))``
-> ``-softplus(-x)``) must not compute it in the integer dtype of ``x``, where ``-x`` wraps around
(uint8 ``-200`` is ``56``). The hypothesis graphs below draw every elementwise op and the patterns
the rewrites look for, over inputs of every dtype holding the extreme values of their range.

Values are compared where the unrewritten graph is finite (every float intermediate, too: a
comparison of a NaN that a stabilized graph does not make is not a wrong result), with a tolerance loose enough for
the cancellation the unrewritten float graph itself suffers (``log(1 - sigmoid(16))`` in float32)
and tight enough for any wrap-around (an error of at least 1); integer and bool outputs must be
equal exactly.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from tensorgraph.rewriting import PRESETS

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]
#: every preset but 'unsafe', whose cancellations (x + b - b -> x) may change float results by
#: design (at 1e19, x + b - b is not x)
PRESET_NAMES = sorted(p for p in PRESETS if p not in ("None", "unsafe"))

UNARY = {
    "neg": tt.neg, "abs": tt.abs, "sign": tt.sign, "sqr": tt.sqr, "reciprocal": tt.reciprocal,
    "isnan": tt.isnan, "isinf": tt.isinf, "isfinite": tt.isfinite, "invert": tt.invert,
    "floor": tt.floor, "ceil": tt.ceil, "trunc": tt.trunc, "round": tt.round,
    "exp": tt.exp, "exp2": tt.exp2, "expm1": tt.expm1, "log": tt.log, "log2": tt.log2,
    "log10": tt.log10, "log1p": tt.log1p, "sqrt": tt.sqrt, "sin": tt.sin, "cos": tt.cos,
    "tan": tt.tan, "arcsin": tt.arcsin, "arccos": tt.arccos, "arctan": tt.arctan,
    "sinh": tt.sinh, "cosh": tt.cosh, "tanh": tt.tanh, "arcsinh": tt.arcsinh,
    "arccosh": tt.arccosh, "arctanh": tt.arctanh, "sigmoid": tt.sigmoid, "softplus": tt.softplus,
    "log1mexp": tt.log1mexp, "erf": tt.erf, "erfc": tt.erfc, "gammaln": tt.gammaln,
    "gamma": tt.gamma, "psi": tt.psi, "erfinv": tt.erfinv, "erfcinv": tt.erfcinv,
    "round_away": tt.round_half_away_from_zero, "clip(a,0,3)": lambda a: tt.clip(a, 0, 3),
    "switch(a,a,1)": lambda a: tt.switch(a, a, 1), "second": lambda a: tt.second(a, 2),
    # the patterns the canonicalize / stabilize / specialize rewrites look for
    "log(sigmoid)": lambda a: tt.log(tt.sigmoid(a)),
    "log(1-sigmoid)": lambda a: tt.log(1 - tt.sigmoid(a)),
    "1-sigmoid": lambda a: 1 - tt.sigmoid(a),
    "log(1+a)": lambda a: tt.log(1 + a), "log(1-a)": lambda a: tt.log(1 - a),
    "exp-1": lambda a: tt.exp(a) - 1, "1/(1+exp(-a))": lambda a: 1 / (1 + tt.exp(-a)),
    "1/(1+exp(a))": lambda a: 1 / (1 + tt.exp(a)),
    "exp/(1+exp)": lambda a: tt.exp(a) / (1 + tt.exp(a)),
    "log(1+exp)": lambda a: tt.log(1 + tt.exp(a)), "log1p(exp)": lambda a: tt.log1p(tt.exp(a)),
    "log(1-exp)": lambda a: tt.log(1 - tt.exp(a)), "log1p(-exp)": lambda a: tt.log1p(-tt.exp(a)),
    "log1p(-sigmoid)": lambda a: tt.log1p(-tt.sigmoid(a)),
    "exp*sigmoid(-a)": lambda a: tt.exp(a) * tt.sigmoid(-a),
    "a*1+0-0": lambda a: a * 1 + 0 - 0, "a/1": lambda a: a / 1, "--a": lambda a: -(-a),
    "a*-1": lambda a: a * -1, "2*(3*a)": lambda a: 2 * (3 * a), "(a+2)-3": lambda a: (a + 2) - 3,
    "a-a": lambda a: a - a, "a/a": lambda a: a / a, "a**2": lambda a: a ** 2,
    "a**3": lambda a: a ** 3, "a**0.5": lambda a: a ** 0.5, "a**-1": lambda a: a ** -1,
    "a**-2": lambda a: a ** -2, "a/4": lambda a: a / 4, "a//3": lambda a: a // 3,
    "a%3": lambda a: a % 3, "a*a": lambda a: a * a, "sqr(a)/a": lambda a: tt.sqr(a) / a,
    "exp(a)*exp(a)": lambda a: tt.exp(a) * tt.exp(a), "0-a": lambda a: 0 - a,
    "1-a": lambda a: 1 - a, "a*0.5*2": lambda a: a * 0.5 * 2, "-a/2": lambda a: -a / 2,
}
BINARY = {
    "add": tt.add, "sub": tt.sub, "mul": tt.mul, "true_div": tt.true_div,
    "int_div": tt.int_div, "mod": tt.mod, "pow": tt.pow, "maximum": tt.maximum,
    "minimum": tt.minimum, "lt": tt.lt, "ge": tt.ge, "eq": tt.eq, "neq": tt.neq,
    "and": tt.and_, "or": tt.or_, "xor": tt.xor, "arctan2": tt.arctan2,
    "a-(b-a)": lambda a, b: a - (b - a), "(a+b)-b": lambda a, b: (a + b) - b,
    "a*b/b": lambda a, b: a * b / b, "a/(1+b*b)": lambda a, b: a / (1 + b * b),
    "-a-b": lambda a, b: -a - b, "a-(-b)": lambda a, b: a - (-b), "a+(-b)": lambda a, b: a + (-b),
    "(-a)*(-b)": lambda a, b: (-a) * (-b), "a*(-b)": lambda a, b: a * (-b),
    "a/(-b)": lambda a, b: a / (-b), "switch(a>b,a,b)": lambda a, b: tt.switch(tt.gt(a, b), a, b),
    "a*sigmoid(b)": lambda a, b: a * tt.sigmoid(b), "a-b+b": lambda a, b: a - b + b,
}


def special_values(dtype: str) -> list:
    """Values a rewrite may mishandle in ``dtype``: the ends of its range, 0, +-1, small ints."""
    if dtype == "bool":
        return [False, True]
    if dtype.startswith("float"):
        return [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 11.0, 30.0, -30.0, 200.0, 1e-3]
    info = np.iinfo(dtype)
    small = [0, 1, 2, 3, 7, 11, 100, 200, -1, -2, -3, -7, -11, -100, -200]
    return [v for v in small if info.min <= v <= info.max] + [info.min, info.max, info.min + 1,
                                                               info.max - 1]


@st.composite
def values_of(draw, dtype: str, n: int = 6):
    picked = draw(st.lists(st.sampled_from(special_values(dtype)), min_size=n, max_size=n))
    return np.array(picked, dtype=dtype)


@st.composite
def int_graphs(draw):
    """Two vector inputs of drawn dtypes, 1-3 ops drawn from UNARY and BINARY."""
    dtypes = [draw(st.sampled_from(DTYPES)) for _ in range(2)]
    inputs = [tt.vector(name, dtype=d) for name, d in zip("ab", dtypes)]
    pool, names = list(inputs), []
    for _ in range(draw(st.integers(1, 3))):
        unary = draw(st.booleans())
        name = draw(st.sampled_from(sorted(UNARY if unary else BINARY)))
        args = [draw(st.sampled_from(pool)) for _ in range(1 if unary else 2)]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = (UNARY if unary else BINARY)[name](*args)
        except (TypeError, ValueError):
            continue  # not defined for these dtypes (e.g. -bool, invert of a float)
        pool.append(out)
        names.append(name)
    values = [draw(values_of(d)) for d in dtypes]
    return inputs, pool[len(inputs):] or pool[-1:], values, names


def compile_run(inputs, out, values, mode):
    f = tg.function(inputs, out, mode=mode, on_unused_input="ignore")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*[v.copy() for v in values]), f


def assert_same_where_finite(got, ref, label, where=None):
    """``got`` equals ``ref`` wherever ``ref`` is finite (and ``where``, when given, holds)."""
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.dtype == ref.dtype, f"{label}: dtype {got.dtype} != {ref.dtype}"
    assert got.shape == ref.shape, label
    keep = np.ones(ref.shape, bool) if where is None else np.broadcast_to(where, ref.shape)
    if ref.dtype.kind in "biu":
        np.testing.assert_array_equal(got[keep], ref[keep], err_msg=label)
        return
    finite = np.isfinite(ref) & keep
    g, r = got[finite].astype("float64"), ref[finite].astype("float64")
    bad = np.abs(g - r) > 5e-2 + 1e-2 * np.abs(r)
    assert not bad.any(), f"{label}: got {g[bad]} where no rewriting gives {r[bad]}"


def finite_everywhere(inputs, steps, values):
    """Where every float value the unrewritten graph computes on the way is finite."""
    ref, _ = compile_run(inputs, steps, values, Mode("py", None))
    mask = np.ones(np.broadcast_shapes(*(np.shape(r) for r in ref)), bool)
    for r in ref:
        if np.asarray(r).dtype.kind in "fc":
            mask &= np.isfinite(r)
    return mask


def check_graph(inputs, steps, values, names, modes):
    out = steps[-1]
    try:
        ref, _ = compile_run(inputs, out, values, Mode("py", None))
        where = finite_everywhere(inputs, steps, values)
    except (TypeError, ValueError, ArithmeticError):
        return  # numpy refuses these values (integers to negative powers, int64 | uint64)
    for mode in modes:
        got, f = compile_run(inputs, out, values, mode)
        assert f.maker.fgraph.outputs[0].dtype == out.dtype
        dtypes = [str(i.dtype) for i in inputs]
        assert_same_where_finite(got, ref, f"{mode.provided_linker}/{mode.optimizer}: "
                                           f"{' -> '.join(names)} on {dtypes} {values}", where)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(int_graphs())
def test_every_preset_keeps_the_dtype_rules_on_random_graphs(graph):
    inputs, steps, values, names = graph
    check_graph(inputs, steps, values, names, [Mode("py", p) for p in PRESET_NAMES])


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "int8", "int16", "bool"])
@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_log_sigmoid_of_integers_under_every_preset(dtype, linker):
    """The issue's case: log(sigmoid(x)) of uint8 [0, 1, 11, 200] is [-0.693, -0.313,
    -1.67e-05, 0] (it was [-0.693, -255, -245, -56]: -x wrapped around in uint8)."""
    x = tt.vector("x", dtype=dtype)
    values = [np.array(special_values(dtype), dtype=dtype)]
    exact = -np.logaddexp(0.0, -values[0].astype("float64"))
    for preset in ["fast_compile", "stabilize", "fast_run"]:
        for build in (lambda v: tt.log(tt.sigmoid(v)), lambda v: tt.log(1 - tt.sigmoid(v))):
            got, f = compile_run([x], build(x), values, Mode(linker, preset))
            ref, _ = compile_run([x], build(x), values, Mode("py", None))
            assert got.dtype == ref.dtype
            assert_same_where_finite(got, ref, f"{preset} {dtype}")
        got, _ = compile_run([x], tt.log(tt.sigmoid(x)), values, Mode(linker, preset))
        np.testing.assert_allclose(got, exact, rtol=1e-3, atol=1e-6)  # stable: exact everywhere
