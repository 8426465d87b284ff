"""Generated C for Elemwise, Composite, every scalar op, DimShuffle and casts, against perform.

Each test compiles few modules: many ops go into one function with many outputs. The
reference is the same graph under the Python linker (numpy ``perform``), compared with the
dtype's tolerance, nan and inf included.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.scalar.basic as sb
import tensorgraph.scalar.math as sm
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.compile.mode import Mode
from tensorgraph.tensor.elemwise import Elemwise

C = Mode("cvm", None)          # the C linker, no rewrites: each node as written
C_FUSED = Mode("cvm", "fast_run")
PY = Mode("py", None)
PY_FUSED = Mode("py", "fast_run")  # the same rewritten (fused) graph, run by numpy perform

TOL = {"float16": 2e-3, "float32": 2e-5, "float64": 1e-10}


def assert_same(got, expected, label="", tol_dtypes=()):
    """Equal dtype and shape, values within the tolerance of the least precise float dtype
    involved (a float64 result computed from float32 inputs is only float32-accurate)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"{label}: dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"{label}: shape {got.shape} != {expected.shape}"
    if got.dtype.kind == "f":
        tol = max(TOL.get(d, 0) for d in (got.dtype.name, *tol_dtypes))
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, equal_nan=True,
                                   err_msg=label)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=label)


def compare(inputs, outputs, values, mode=C, labels=None, reference=PY):
    f_c = tensorgraph.function(inputs, outputs, mode=mode)
    f_py = tensorgraph.function(inputs, outputs, mode=reference)
    with np.errstate(all="ignore"):
        expected = f_py(*values)
        got = f_c(*values)
    if not isinstance(outputs, (list, tuple)):
        got, expected = [got], [expected]
    in_dtypes = [np.asarray(v).dtype.name for v in values]
    for k, (g, e) in enumerate(zip(got, expected)):
        assert_same(g, e, labels[k] if labels else f"output {k}", in_dtypes)
    return f_c


def kinds(f):
    return [t.kind for t in f.vm.thunks]


SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 3.7, -7.25, 1e-7, 40.0, -40.0, 100.0,
           np.inf, -np.inf, np.nan]

UNARY_FLOAT = [sm.exp, sm.exp2, sm.expm1, sm.log, sm.log2, sm.log10, sm.log1p, sm.sqrt,
               sm.sin, sm.cos, sm.tan, sm.arcsin, sm.arccos, sm.arctan, sm.sinh, sm.cosh,
               sm.tanh, sm.arcsinh, sm.arccosh, sm.arctanh, sm.sigmoid, sm.softplus,
               sm.log1mexp, sm.erf, sm.erfc, sm.gamma, sm.gammaln, sm.reciprocal]
UNARY_ANY = [sb.neg, sb.identity, sm.abs_, sm.sign, sm.sqr, sm.isnan, sm.isinf, sm.isfinite,
             sm.floor, sm.ceil, sm.trunc, sm.round_half_to_even,
             sm.round_half_away_from_zero]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_every_unary_float_op_matches_perform(dtype):
    x = tt.tensor(dtype, shape=(None,))
    ops = UNARY_FLOAT + UNARY_ANY
    outputs = [Elemwise(op)(x) for op in ops]
    values = np.array(SPECIAL + list(np.linspace(-3, 3, 13)), dtype=dtype)
    f = compare([x], outputs, [values], labels=[op.name for op in ops])
    assert set(kinds(f)) == {"c"}


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint16", "bool"])
def test_unary_ops_on_discrete_inputs(dtype):
    x = tt.tensor(dtype, shape=(None,))
    ops = [sm.exp, sm.log1p, sm.sqrt, sm.sigmoid, sm.tanh, sm.invert] + [
        op for op in UNARY_ANY if not (dtype == "bool" and op is sb.neg)]  # numpy refuses -bool
    outputs = [Elemwise(op)(x) for op in ops]
    if dtype == "bool":
        values = np.array([True, False, True])
    else:
        info = np.iinfo(dtype)
        values = np.array([0, 1, 2, 5, 17, info.max, info.min + 1, info.max // 3], dtype=dtype)
    f = compare([x], outputs, [values], labels=[op.name for op in ops])
    assert set(kinds(f)) == {"c"}


BINARY_ARITH = [sb.add, sb.sub, sb.mul, sb.true_div, sm.int_div, sm.mod, sm.maximum,
                sm.minimum, sm.lt, sm.le, sm.gt, sm.ge, sm.eq, sm.neq, sm.second]


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float64", "float32"),
                                    ("float16", "float16"), ("int32", "int32"),
                                    ("int8", "uint8"), ("int64", "uint64"), ("int16", "float32"),
                                    ("uint32", "uint32")])
def test_binary_ops_match_perform(dtypes):
    a, b = (tt.tensor(d, shape=(None,)) for d in dtypes)
    ops = list(BINARY_ARITH)
    floats = any(d.startswith("float") for d in dtypes)
    if floats:
        ops += [sm.pow_, sm.arctan2]
    elif dtypes != ("int64", "uint64"):  # numpy has no bitwise op between these two
        ops += [sm.and_, sm.or_, sm.xor]
    outputs = [Elemwise(op)(a, b) for op in ops]
    rng = np.random.default_rng(0)
    if floats:
        va = np.array(SPECIAL * 3)
        vb = np.array((SPECIAL[3:] + SPECIAL[:3]) * 3)
        va[:5] = rng.normal(size=5) * 10
        va, vb = (v if d.startswith("float") else rng.integers(-50, 50, v.size)
                  for v, d in zip((va, vb), dtypes))
        va, vb = va.astype(dtypes[0]), vb.astype(dtypes[1])
    else:
        lo = max(np.iinfo(dtypes[0]).min, np.iinfo(dtypes[1]).min, -100)
        hi = min(np.iinfo(dtypes[0]).max, np.iinfo(dtypes[1]).max, 100)
        va = rng.integers(lo, hi, 40).astype(dtypes[0])
        vb = rng.integers(lo, hi, 40).astype(dtypes[1])
        vb[:3] = 0  # division and modulo by zero give 0, as numpy
        if np.iinfo(dtypes[1]).min < 0:
            vb[3:6] = -1
    f = compare([a, b], outputs, [va, vb], labels=[op.name for op in ops])
    assert set(kinds(f)) == {"c"}


def test_integer_floor_division_and_modulo_at_the_limits():
    a, b = tt.lvector("a"), tt.lvector("b")
    info = np.iinfo("int64")
    va = np.array([info.min, info.min, info.max, -7, 7, -7, 0], dtype="int64")
    vb = np.array([-1, 1, -1, 2, -2, -2, -3], dtype="int64")
    compare([a, b], [a // b, a % b], [va, vb])


def test_ternary_ops_and_bool_logic():
    c, x, y = tt.bvector("c"), tt.fvector("x"), tt.dvector("y")
    p, q = tt.tensor("bool", shape=(None,)), tt.tensor("bool", shape=(None,))
    outputs = [tt.switch(c, x, y), tt.clip(x, -1.0, y), Elemwise(sm.clip)(x, y, x + 1),
               p & q, p | q, p ^ q, ~p, tt.switch(p, x, 2)]
    rng = np.random.default_rng(1)
    values = [np.array([0, 1, -3, 0, 2], "int8"),
              np.array([np.nan, -3, 0.5, 7, -0.0], "float32"),
              rng.normal(size=5), np.array([True, False, True, False, True]),
              np.array([True, True, False, False, True])]
    compare([c, x, y, p, q], outputs, values)


@pytest.mark.parametrize("dst", ["bool", "int8", "uint8", "int16", "int32", "int64", "uint32",
                                 "float16", "float32", "float64"])
def test_casts(dst):
    x, i, b = tt.dvector("x"), tt.ivector("i"), tt.tensor("bool", shape=(None,))
    outputs = [tt.cast(x, dst), tt.cast(i, dst), tt.cast(b, dst)]
    values = [np.array([0.0, -0.0, 1.5, -2.7, 3.2, 100.0, -100.0, 0.49]),
              np.array([0, 1, -1, 100, -100, 7, 8, 127], "int32"),
              np.array([True, False] * 4)]
    f = compare([x, i, b], outputs, values)
    assert set(kinds(f)) == {"c"}


def test_nan_and_inf_survive_the_vectorized_loops():
    x = tt.fvector("x")
    f = tensorgraph.function([x], [tt.exp(x), tt.log(x), tt.tanh(x), tt.log1p(x)], mode=C)
    values = np.array([np.nan, np.inf, -np.inf, 0.0, -1.0, 89.0] * 11, dtype="float32")
    with np.errstate(all="ignore"):
        expected = [np.exp(values), np.log(values), np.tanh(values), np.log1p(values)]
    for got, exp in zip(f(values), expected):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(exp))
        np.testing.assert_allclose(got, exp, rtol=1e-6, equal_nan=True)


def test_ops_without_c_run_perform_inside_c_linkers():
    x = tt.dvector("x")
    i = tt.ivector("i")
    f = tensorgraph.function([x, i], [tt.tri_gamma(x), i ** i, tt.exp(x)], mode=C)
    assert kinds(f).count("py") == 2 and "c" in kinds(f)
    vx = np.array([0.1, -0.5, 0.9])
    vi = np.array([1, 2, 3], "int32")
    res = f(vx, vi)
    np.testing.assert_allclose(res[0], tt.tri_gamma(x).eval({x: vx}))
    np.testing.assert_array_equal(res[1], vi ** vi)


# -- layouts ---------------------------------------------------------------------------------


def test_strided_negative_and_broadcast_layouts():
    x = tt.matrix("x", dtype="float64")
    r = tt.row("r", dtype="float64")
    c = tt.col("c", dtype="float64")
    s = tt.scalar("s", dtype="float64")
    out = [tt.exp(x) * r + c - s, x * x, tt.sin(x.T) + r.T]
    rng = np.random.default_rng(2)
    big = rng.normal(size=(9, 14))
    for xv in [big[:6, :7], big[::-1, ::2][:6, :7], big[1::2, ::-3][:, :4][:4].T[:, :4][:4]]:
        xv = np.ascontiguousarray(xv)[:, :] if xv.shape[0] != xv.shape[1] else xv
        n, m = xv.shape
        rv = rng.normal(size=(1, m))
        cv = rng.normal(size=(n, 1))
        outs = out if n == m else out[:2]
        compare([x, r, c, s], outs, [xv, rv, cv, np.float64(0.25)])
    # non-contiguous views straight from numpy, including negative strides
    compare([x, r, c, s], out[:2],
            [big[::-2, 1::3], big[0:1, :5][:, ::-1], big[::-2, 2:3], np.float64(1.5)])


def test_zero_size_and_zero_dim_inputs():
    x, y = tt.tensor("float32", shape=(None, None, None)), tt.tensor("float32", shape=())
    compare([x, y], [x * y + 1, tt.exp(y)],
            [np.zeros((2, 0, 3), "float32"), np.float32(2.0)])
    compare([x, y], [x * y + 1, tt.exp(y)],
            [np.ones((0, 0, 0), "float32"), np.float32(-1.0)])


def test_broadcast_mismatch_is_a_clear_node_error():
    x, y = tt.fvector("x"), tt.fvector("y")
    f = tensorgraph.function([x, y], x + y, mode=C)
    with pytest.raises(ValueError) as info:
        f(np.ones(3, "float32"), np.ones(4, "float32"))
    message = str(info.value)
    assert "cannot be broadcast" in message and "(3,)" in message and "(4,)" in message
    assert "in node Elemwise{add}" in message


def test_inplace_elemwise_and_multi_output_composite():
    from tensorgraph.graph.basic import Apply  # noqa: F401 - graph built by hand below
    from tensorgraph.scalar.basic import ScalarType
    from tensorgraph.scalar.composite import Composite

    a, b = ScalarType("float32")(), ScalarType("float32")()
    comp = Composite([a, b], [sm.tanh(sb.mul(a, b)), sm.exp(a), a])
    x, y = tt.fvector("x"), tt.fvector("y")
    t = tt.exp(x)
    outs = Elemwise(comp)(t, y)
    inplace = Elemwise(sb.add, {0: 0})(tt.sin(x), y)
    values = [np.linspace(-1, 1, 7, dtype="float32"), np.linspace(0, 2, 7, dtype="float32")]
    f_c = tensorgraph.function([x, y], list(outs) + [inplace], mode=C, accept_inplace=True)
    got = f_c(*values)
    xv, yv = values
    e = np.exp(xv)
    for g, exp in zip(got, [np.tanh(e * yv), np.exp(e), e, np.sin(xv) + yv]):
        np.testing.assert_allclose(g, exp, rtol=2e-6)


def test_fused_chain_is_one_c_loop():
    x, y = tt.fvector("x"), tt.fvector("y")
    out = tt.tanh(x * y + tt.exp(-x)) * 0.5 + tt.log1p(y * y)
    rng = np.random.default_rng(3)
    values = [rng.normal(size=1000).astype("float32"), rng.normal(size=1000).astype("float32")]
    f = compare([x, y], out, values, mode=C_FUSED)
    assert len(f.vm.nodes) == 1 and kinds(f) == ["c"]


def test_openmp_split_gives_the_same_results():
    config.openmp = True
    config.openmp_elemwise_minsize = 10
    x, y = tt.matrix("x", dtype="float32"), tt.row("y", dtype="float32")
    rng = np.random.default_rng(4)
    values = [rng.normal(size=(64, 33)).astype("float32"),
              rng.normal(size=(1, 33)).astype("float32")]
    compare([x, y], [tt.tanh(x * y) + tt.exp(-x), (x.T * 2).T - y], values, mode=C_FUSED)
    compare([x, y], [tt.sqrt(abs(x[::2].T)).T * y], [values[0], values[1]], mode=C_FUSED)


def test_loops_calling_math_functions_split_sooner():
    """A loop's split threshold is openmp_elemwise_minsize over its weight (8 per math call)."""
    from tensorgraph.link.c.ops.elemwise import MATH_FUNCTION_WEIGHT, loop_weight

    x, b = tt.matrix("x", dtype="float32"), tt.row("b", dtype="float32")
    fused = tensorgraph.function([x, b], tt.tanh(x + b), mode=C_FUSED)
    (node,) = fused.vm.nodes
    assert loop_weight(node.op.scalar_op) == MATH_FUNCTION_WEIGHT + 1
    plain = tensorgraph.function([x, b], x * b - x, mode=C_FUSED)
    assert loop_weight(plain.vm.nodes[0].op.scalar_op) == 2
    config.openmp = True
    config.openmp_elemwise_minsize = 9 * 50
    rng = np.random.default_rng(5)
    # 49 and 51 rows of one element each side of the threshold (50 elements)
    for rows in (49, 51):
        values = [rng.normal(size=(rows, 1)).astype("float32"),
                  rng.normal(size=(1, 1)).astype("float32")]
        compare([x, b], tt.tanh(x + b), values, mode=C_FUSED)


def test_dimshuffle_view_output_is_copied_not_aliased():
    x = tt.matrix("x", dtype="float64")
    f = tensorgraph.function([x], [x.T, x.dimshuffle(0, "x", 1)], mode=C)
    value = np.arange(6.0).reshape(2, 3)
    t, e = f(value)
    np.testing.assert_array_equal(t, value.T)
    assert e.shape == (2, 1, 3)
    t[0, 0] = 99.0
    assert value[0, 0] == 0.0


# -- random fused graphs -----------------------------------------------------------------------

UNARY = [tt.exp, tt.tanh, tt.sigmoid, tt.log1p, lambda v: -v, abs, tt.sqr, tt.sin,
         lambda v: tt.maximum(v, 0.5), lambda v: v * 2 - 1]
BINARY = [tt.add, tt.mul, tt.sub, tt.maximum, lambda a, b: tt.switch(a > b, a, b * 0.5)]


@st.composite
def fused_graphs(draw):
    dtype = draw(st.sampled_from(["float32", "float64"]))
    ndim = draw(st.integers(0, 3))
    full = draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim))
    n_in = draw(st.integers(1, 3))
    specs = []
    for _ in range(n_in):
        static = tuple(1 if draw(st.booleans()) and draw(st.booleans()) else None
                       for _ in full)
        layout = draw(st.sampled_from(["c", "reversed", "strided", "fortran"]))
        specs.append((static, layout))
    ops = draw(st.lists(st.tuples(st.booleans(), st.integers(0, 99), st.integers(0, 99),
                                  st.integers(0, 99)), min_size=1, max_size=6))
    return dtype, full, specs, ops


def _layout(value, layout):
    if layout == "reversed" and value.ndim:
        return np.ascontiguousarray(value[(slice(None, None, -1),) * value.ndim])[
            (slice(None, None, -1),) * value.ndim]
    if layout == "strided" and value.ndim:
        big = np.repeat(value, 2, axis=-1)
        return big[..., ::2]
    if layout == "fortran" and value.ndim:
        return np.asfortranarray(value)
    return value


@settings(max_examples=15, deadline=None)
@given(graph=fused_graphs(), seed=st.integers(0, 2 ** 16))
@example(graph=("float32", [1, 1, 2], [((None, None, None), "c")] * 3,
                [(False, 0, 0, 0), (False, 0, 0, 0), (False, 0, 63, 57), (False, 5, 39, 0),
                 (False, 20, 0, 44)]), seed=0)  # a reassociated sum flips a switch
def test_random_fused_graphs_match_perform(graph, seed):
    dtype, full, specs, ops = graph
    rng = np.random.default_rng(seed)
    inputs = [tt.tensor(dtype, shape=static) for static, _ in specs]
    values = []
    for (static, layout), _ in zip(specs, inputs):
        shape = tuple(1 if s == 1 else n for s, n in zip(static, full))
        values.append(_layout(rng.normal(size=shape).astype(dtype), layout))
    pool = list(inputs)
    for unary, i, j, k in ops:
        if unary:
            pool.append(UNARY[k % len(UNARY)](pool[i % len(pool)]))
        else:
            pool.append(BINARY[k % len(BINARY)](pool[i % len(pool)], pool[j % len(pool)]))
    out = pool[-1] + sum(pool[:len(inputs)]) * 0  # every input used
    # The reference runs the same rewritten graph: rewrites may reassociate float sums (a
    # one-ulp change that a comparison inside a switch can turn into a different branch);
    # what this test checks is that each fused C loop computes what its perform computes.
    compare(inputs, out, values, mode=C_FUSED, reference=PY_FUSED)


def test_elemwise_dimshuffle_and_scalar_ops_get_their_c_from_the_table():
    """The ops say what they compute; their C (the loops, each scalar op's expression) is
    registered in tensorgraph.link.c.ops, and the tensor and scalar modules import nothing of
    tensorgraph.link."""
    import inspect

    import tensorgraph.scalar.composite as sc
    import tensorgraph.tensor.elemwise as te
    from op_checks import assert_c_from_table
    from tensorgraph.link.c.ops.elemwise import DimShuffleC, ElemwiseC
    from tensorgraph.link.c.ops.scalar import scalar_expr
    from tensorgraph.tensor.elemwise import DimShuffle

    assert_c_from_table([(Elemwise(sb.add), ElemwiseC), (DimShuffle(1, (0, "x")), DimShuffleC)],
                        te, sb, sm, sc)
    scalar_classes = [k for m in (sb, sm, sc) for k in vars(m).values()
                      if inspect.isclass(k) and issubclass(k, sb.ScalarOp)]
    assert len(scalar_classes) > 60
    for klass in scalar_classes:
        assert not [n for n in vars(klass) if n.startswith("c_")], klass
    assert scalar_expr(sm.exp, ["x"], ("float32",), "float32") == "tg_expf(x)"
    assert scalar_expr(sb.add, ["a", "b"], ("int8", "int8"), "int8") == "((int8_t)((a) + (b)))"
    with pytest.raises(NotImplementedError, match="tri_gamma has no C"):
        scalar_expr(sm.tri_gamma, ["x"], ("float64",), "float64")
