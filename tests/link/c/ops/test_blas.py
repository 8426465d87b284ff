"""Generated C of Dot, Gemv, Gemm and Dot22 against their numpy ``perform``.

One function per dtype holds every op, so a test compiles one module; hypothesis then varies
sizes (empty ones included) and memory layouts: C and Fortran order, steps, negative steps,
broadcast (stride 0) operands. The same runs with OpenBLAS (the default) and with
tensorgraph's own kernels (``blas__ldflags='none'``).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.link.c.ops import blas as c_blas
from tensorgraph.tensor.blas import dot22, gemm, gemv
from tensorgraph.tensor.dot import Dot

from op_checks import C, LAYOUTS, PY, layout

TOL = {"float16": 2e-2, "float32": 1e-4, "float64": 1e-10}

def assert_close(got, expected, dtype):
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype.kind == "f":
        tol = TOL[dtype] * max(1.0, float(np.max(np.abs(expected), initial=0)))
        np.testing.assert_allclose(got, expected, rtol=TOL[dtype], atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


_functions = {}


def blas_functions(dtype, ldflags):
    """(C function, Python function) computing every op on the same inputs."""
    key = (dtype, ldflags, config.openmp)
    if key not in _functions:
        y, x, v = (tt.tensor(dtype, shape=(None,), name=n) for n in "yxv")
        A, B, z = (tt.tensor(dtype, shape=(None, None), name=n) for n in "ABz")
        alpha, beta = tt.tensor(dtype, shape=(), name="alpha"), tt.tensor(dtype, shape=(),
                                                                        name="beta")
        dot = Dot()
        outputs = [gemv(y, alpha, A, x, beta), gemm(z, alpha, A, B, beta), dot22(A, B),
                   dot(A, x), dot(v, B), dot(x, x), dot(A, B)]
        inputs = [y, alpha, A, x, beta, z, B, v]
        with config.change_flags(blas__ldflags=ldflags):
            f_c = tensorgraph.function(inputs, outputs, mode=C)
        assert {t.kind for t in f_c.vm.thunks} == {"c"}
        _functions[key] = (f_c, tensorgraph.function(inputs, outputs, mode=PY))
    return _functions[key]


@st.composite
def blas_case(draw):
    m, n, k = (draw(st.integers(0, 9)) for _ in range(3))
    seed = draw(st.integers(0, 2**31))
    how = [draw(st.sampled_from(LAYOUTS)) for _ in range(6)]
    alpha = draw(st.sampled_from([1.0, -0.5, 2.0, 0.0]))
    beta = draw(st.sampled_from([0.0, 1.0, 0.25]))
    return m, n, k, seed, how, alpha, beta


def run_case(dtype, ldflags, case):
    m, n, k, seed, how, alpha, beta = case
    rng = np.random.default_rng(seed)

    def arr(*shape):
        return rng.normal(size=shape).astype(dtype)

    values = [layout(arr(m), how[0]), np.asarray(alpha, dtype), layout(arr(m, n), how[1]),
              layout(arr(n), how[2]), np.asarray(beta, dtype), layout(arr(m, k), how[3]),
              layout(arr(n, k), how[4]), layout(arr(n), how[5])]
    f_c, f_py = blas_functions(dtype, ldflags)
    for got, expected in zip(f_c(*values), f_py(*values)):
        assert_close(got, expected, dtype)


@pytest.mark.parametrize("ldflags", ["", "none"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@settings(max_examples=40, deadline=None)
@given(case=blas_case())
def test_blas_ops_match_perform(dtype, ldflags, case):
    run_case(dtype, ldflags, case)


@pytest.mark.parametrize("ldflags", ["", "none"])
def test_large_products_match_perform(ldflags):
    # sizes past the own kernels' blocks and BLAS's small-size paths
    run_case("float32", ldflags, (67, 300, 530, 1, ["c", "f", "step", "c", "f", "c"], 1.0, 1.0))
    run_case("float64", ldflags, (131, 257, 600, 2, ["step", "c", "c", "reversed", "c", "c"],
                                  0.5, 0.25))


@pytest.mark.parametrize("ldflags", ["", "none"])
def test_products_split_across_threads_match_perform(ldflags):
    """Past the size where ``config.openmp`` splits a product across threads: Gemv by rows of a
    row-major A and by columns (partial sums added) of a transposed one, Gemm by rows and by
    columns, with strided and reversed operands."""
    with config.change_flags(openmp=True):
        run_case("float32", ldflags, (700, 600, 300, 3, ["c", "c", "c", "c", "c", "c"], 1.0, 0.0))
        run_case("float32", ldflags, (700, 600, 300, 4, ["c", "f", "step", "c", "f", "c"],
                                      -0.5, 1.0))
        run_case("float64", ldflags, (40, 700, 900, 5, ["step", "reversed", "reversed", "c",
                                                         "step", "c"], 2.0, 0.25))
        run_case("float64", ldflags, (901, 513, 7, 6, ["c", "step", "c", "f", "c", "c"],
                                      1.0, 1.0))


def test_uneven_thread_blocks_match_numpy(run_python):
    """Three threads on sizes that do not divide by three (blocks of unequal length)."""
    code = """if True:
        import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt
        tg.config.openmp = True
        A, B = tt.matrix("A", dtype="float64"), tt.matrix("B", dtype="float64")
        x, y = tt.vector("x", dtype="float64"), tt.vector("y", dtype="float64")
        f = tg.function([A, B, x, y], [tt.dot(A, x), tt.dot(A.T, y), tt.dot(A, B)])
        rng = np.random.default_rng(0)
        a, b = rng.normal(size=(1001, 997)), rng.normal(size=(997, 301))
        u, v = rng.normal(size=997), rng.normal(size=1001)
        for g, e in zip(f(a, b, u, v), [a @ u, a.T @ v, a @ b]):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-9)
        print("ok")
    """
    done = run_python("-c", code, env={"OMP_NUM_THREADS": "3"})
    assert done.stdout.strip() == "ok", done.stderr


@pytest.mark.parametrize("ldflags", ["", "none"])
def test_nan_in_product_shows_with_alpha_zero_and_beta_zero_hides_y(ldflags):
    f_c, f_py = blas_functions("float64", ldflags)
    A = np.ones((3, 4))
    A[1, 2] = np.nan
    y = np.full(3, np.nan)   # beta == 0: y is not read
    values = [y, np.asarray(0.0), A, np.ones(4), np.asarray(0.0), np.full((3, 2), np.nan),
              np.ones((4, 2)), np.ones(4)]
    got, expected = f_c(*values), f_py(*values)
    for g, e in zip(got, expected):
        assert_close(g, e, "float64")
    assert np.isnan(got[0][1]) and not np.isnan(got[0][0])   # 0 * nan = nan, as numpy


def test_shape_errors_name_the_shapes():
    f_c, _ = blas_functions("float64", "")
    good = [np.ones(3), np.asarray(1.0), np.ones((3, 4)), np.ones(4), np.asarray(1.0),
            np.ones((3, 2)), np.ones((4, 2)), np.ones(4)]
    bad = list(good)
    bad[3] = np.ones(5)
    # named as in the graph (the names of the variables, not of the ops' parameters)
    with pytest.raises(ValueError, match=r"^dot: inner dimensions differ: A has shape \(3, 4\) "
                                         r"and x has shape \(5,\) \(4 != 5\)"):
        f_c(*bad)
    bad = list(good)
    bad[5] = np.ones((2, 2))
    with pytest.raises(ValueError, match=r"^dot\(A, B\) has shape \(3, 2\) and cannot be added "
                                         r"to z of shape \(2, 2\)"):
        f_c(*bad)
    bad = list(good)
    bad[7] = np.ones(5)
    with pytest.raises(ValueError, match=r"^dot: inner dimensions differ: v has shape \(5,\) and "
                                         r"B has shape \(4, 2\) \(5 != 4\)"):
        f_c(*bad)


@pytest.mark.parametrize("dtypes", [("int32", "int32"), ("int8", "uint8"), ("bool", "bool"),
                                    ("float16", "float16"), ("float32", "float64"),
                                    ("int64", "float32"), ("uint16", "uint16")])
def test_dot_of_other_dtypes_runs_a_plain_loop(dtypes):
    a1, b1 = (tt.tensor(d, shape=(None,)) for d in dtypes)
    a2, b2 = (tt.tensor(d, shape=(None, None)) for d in dtypes)
    dot = Dot()
    inputs = [a1, b1, a2, b2]
    outputs = [dot(a1, b1), dot(a2, b1), dot(a1, b2), dot(a2, b2)]
    f_c = tensorgraph.function(inputs, outputs, mode=C)
    f_py = tensorgraph.function(inputs, outputs, mode=PY)
    assert {t.kind for t in f_c.vm.thunks} == {"c"}
    rng = np.random.default_rng(3)

    def arr(dtype, *shape):
        if dtype == "bool":
            return rng.integers(0, 2, shape).astype(bool)
        if dtype.startswith(("int", "uint")):
            info = np.iinfo(dtype)
            return rng.integers(max(info.min, -100), min(info.max, 100), shape).astype(dtype)
        return rng.normal(size=shape).astype(dtype)

    values = [arr(dtypes[0], 5), layout(arr(dtypes[1], 5), "reversed"),
              layout(arr(dtypes[0], 3, 5), "f"), layout(arr(dtypes[1], 5, 2), "step")]
    for got, expected in zip(f_c(*values), f_py(*values)):
        assert_close(got, expected, str(got.dtype))


def test_fast_run_logistic_regression_step_uses_gemv_in_c():
    X, w = tt.fmatrix("X"), tt.fvector("w")
    p = tt.sigmoid(tt.dot(X, w))
    f = tensorgraph.function([X, w], p, mode="FAST_RUN")
    kinds = {type(t.node.op).__name__: t.kind for t in f.vm.thunks}
    assert kinds.get("Gemv") == "c"
    rng = np.random.default_rng(0)
    Xv, wv = rng.normal(size=(40, 78)).astype("float32"), rng.normal(size=78).astype("float32")
    np.testing.assert_allclose(f(Xv, wv), 1 / (1 + np.exp(-(Xv @ wv))), rtol=1e-5)


def test_blas_choice_follows_ldflags():
    with config.change_flags(blas__ldflags="none"):
        assert c_blas.blas_setup()["prefix"] is None
    with config.change_flags(blas__ldflags="-L/opt/blas/lib -lopenblas -Wl,-O1"):
        setup = c_blas.blas_setup()
        assert setup == {"prefix": "cblas_", "libraries": ["openblas"],
                         "library_dirs": ["/opt/blas/lib"], "extra_compile_args": ["-Wl,-O1"]}
    with config.change_flags(blas__ldflags=""):
        setup = c_blas.blas_setup()
        assert setup["prefix"] == "scipy_cblas_" and setup["libraries"] == ["scipy_openblas"]


def test_the_c_comes_from_the_link_layer_table():
    """Dot, MatMul, Gemv (and its pair), Gemm and Dot22 say what they compute; their C is
    registered in tensorgraph.link.c.ops.blas and .dot, and the tensor modules import nothing
    of link."""
    import ast
    import inspect

    from tensorgraph.graph.op import Op
    from tensorgraph.link.c.ops import dot as c_dot
    from tensorgraph.link.c.ops import implementation
    from tensorgraph.scalar import basic as ps
    from tensorgraph.scalar.composite import Composite
    from tensorgraph.tensor import blas, dot, gemv_pair
    from tensorgraph.tensor.blas import Gemv
    from tensorgraph.tensor.dot import MatMul

    z = ps.ScalarType("float64")()
    cases = [(Dot(), c_dot.DotC), (MatMul(), c_dot.MatMulC), (gemv, c_blas.GemvC),
             (Gemv(pair=Composite([z], [ps.neg(z)])), c_blas.GemvC), (gemm, c_blas.GemmC),
             (dot22, c_blas.Dot22C)]
    for op, impl in cases:
        assert isinstance(implementation(op), impl), op
        for klass in type(op).__mro__[:type(op).__mro__.index(Op)]:
            assert not [n for n in vars(klass) if n.startswith("c_")], klass
    for module in (blas, dot, gemv_pair):
        tree = ast.parse(inspect.getsource(module))
        imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import)
                     for a in n.names]
        assert not [m for m in imported if m and m.startswith("tensorgraph.link")], module
