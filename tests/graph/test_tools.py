"""Graph tools PyTensor code uses (issue 21, item 5): the ops that change only a gradient,
pushforward/pullback, hessian_vector_product, subgraph_grad, jacobian of any expression (by
loop or vectorized), vectorize_graph / tt.vectorize and the Blockwise op behind them."""

import re
import subprocess
import sys

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.gradient import (
    DisconnectedInputError,
    GradClip,
    GradScale,
    NullTypeGradError,
    ZeroGrad,
    disconnected_grad,
    grad_clip,
    grad_scale,
    hessian_vector_product,
    jacobian,
    pullback,
    pushforward,
    subgraph_grad,
    undefined_grad,
    verify_grad,
    zero_grad,
)
from tensorgraph.graph.replace import vectorize_graph
from tensorgraph.tensor.blockwise import Blockwise

rng = np.random.default_rng(21)


def _ops(f):
    return [n.op for n in f.maker.fgraph.toposort()]


# -- ops that change only the gradient ------------------------------------------------------


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_gradient_only_ops_pass_the_value_and_are_removed(mode):
    x = tt.dmatrix("x")
    y = x * zero_grad(x) + disconnected_grad(x) + grad_clip(x, -1, 1) + grad_scale(x, 3)
    f = tg.function([x], y, mode=mode)
    a = rng.standard_normal((2, 3))
    np.testing.assert_allclose(f(a), a * a + 3 * a)
    assert not [op for op in _ops(f) if isinstance(op, (ZeroGrad, GradClip, GradScale))]
    raw = tg.function([x], zero_grad(x), mode=tg.Mode("py", None))   # no rewrites: perform
    np.testing.assert_array_equal(raw(a), a)


def test_zero_and_disconnected_grad_stop_the_gradient():
    x = tt.dmatrix("x")
    a = rng.standard_normal((3, 3))
    for expr, expected in [(x * zero_grad(x), a), (x * zero_grad(tt.exp(x)), np.exp(a)),
                           (x ** 2 * disconnected_grad(x), 2 * a ** 2)]:
        g = tg.function([x], tg.grad(expr.sum(), x))
        np.testing.assert_allclose(g(a), expected)
    zeros = tg.function([x], tg.grad(zero_grad(x).sum(), x))
    np.testing.assert_array_equal(zeros(a), np.zeros((3, 3)))
    with pytest.raises(DisconnectedInputError):
        tg.grad(disconnected_grad(x).sum(), x)
    tg.grad((x + disconnected_grad(x)).sum(), x)     # connected through the other term
    y = disconnected_grad(x)
    assert y.owner.op.connection_pattern(y.owner) == [[False]]


def test_grad_clip_and_grad_scale_change_the_gradient_on_the_way_back():
    x = tt.dscalar("x")
    f = tg.function([x], [tg.grad(grad_clip(x, -1, 1) ** 2, x), tg.grad(x ** 2, x),
                          tg.grad(grad_scale(x, 2) ** 2, x), tg.grad(grad_scale(x, -1) ** 2, x)])
    np.testing.assert_allclose(f(2.0), [1.0, 4.0, 8.0, -4.0])
    with pytest.raises(ValueError, match="upper bound"):
        grad_clip(x, 1, -1)
    assert GradClip(-1, 1) != GradClip(-2, 2)   # different bounds never merge


def test_undefined_grad_raises_when_differentiated():
    x = tt.dvector("x")
    y = undefined_grad(x) * 2
    np.testing.assert_array_equal(tg.function([x], y)([1.0, 2.0]), [2.0, 4.0])
    with pytest.raises(NullTypeGradError, match="undefined"):
        tg.grad(y.sum(), x)


def test_zero_grad_pushforward_is_zero():
    x, v = tt.dvector("x"), tt.dvector("v")
    rop = pushforward(zero_grad(x), x, v)
    f = tg.function([x, v], rop, on_unused_input="ignore")
    assert np.count_nonzero(f(rng.standard_normal(5), rng.standard_normal(5))) == 0


# -- pushforward, pullback, Hessian-vector products, subgraph_grad ----------------------------


def test_pullback_and_pushforward_are_lop_and_rop():
    x, u, v = tt.dvector("x"), tt.dvector("u"), tt.dvector("v")
    W = tt.dmatrix("W")
    y = tt.tanh(tt.dot(W, x))
    f = tg.function([W, x, u, v], [pullback(y, x, u), pushforward(y, x, v)])
    Wv, xv, uv, vv = (rng.standard_normal((3, 4)), rng.standard_normal(4),
                      rng.standard_normal(3), rng.standard_normal(4))
    J = (1 - np.tanh(Wv @ xv) ** 2)[:, None] * Wv
    vjp, jvp = f(Wv, xv, uv, vv)
    np.testing.assert_allclose(vjp, uv @ J)
    np.testing.assert_allclose(jvp, J @ vv)
    s = tt.dscalar("s")
    g = pullback(s ** 2, wrt=s, cotangents=tt.dscalar("c"))
    assert g.type == s.type
    assert pullback([s ** 2], [s], [1.0], return_disconnected="none")[0] is not None


def test_hessian_vector_product_of_rosenbrock():
    x, p = tt.dvector("x"), tt.dvector("p")
    rosen = (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
    hvp = tg.function([x, p], hessian_vector_product(rosen, wrt=x, p=p))
    full = tg.function([x], tt.hessian(rosen, x))
    xv, pv = 0.1 * np.arange(9.0), 0.5 * np.arange(9.0)
    np.testing.assert_allclose(hvp(xv, pv), full(xv) @ pv)
    y, q = tt.dvector("y"), tt.dvector("q")
    hx, hy = hessian_vector_product((x ** 2 - y ** 2).sum(), wrt=[x, y], p=[p, q])
    fx = tg.function([x, y, p, q], [hx, hy], on_unused_input="ignore")
    out = fx(rng.standard_normal(3), rng.standard_normal(3), [1.0, 2, 3], [3.0, 2, 1])
    np.testing.assert_allclose(out, [[2, 4, 6], [-6, -4, -2]])


def test_subgraph_grad_chains_to_the_full_gradient():
    x, t = tt.dvector("x"), tt.dvector("t")
    w1 = tg.shared(rng.standard_normal((3, 4)))
    w2 = tg.shared(rng.standard_normal((4, 2)))
    a1 = tt.tanh(tt.dot(x, w1))
    a2 = tt.tanh(tt.dot(a1, w2))
    cost2 = ((a2 - t) ** 2).sum() + w2.sum() ** 2
    cost1 = w1.sum() ** 2
    true = tg.function([t, x], tg.grad(cost1 + cost2, [w2, w1]))
    g2, end2 = subgraph_grad(wrt=[w2], end=[a1], cost=cost2)
    g1, _ = subgraph_grad(wrt=[w1], end=[x], start=dict(zip([a1], end2)), cost=cost1)
    piecewise = tg.function([t, x], g2 + g1)
    values = [rng.standard_normal(2), rng.standard_normal(3)]
    for a, b in zip(true(*values), piecewise(*values)):
        np.testing.assert_allclose(a, b)
    with pytest.raises(TypeError, match="cost"):
        subgraph_grad([w1], [x])


# -- jacobian ------------------------------------------------------------------------------


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_of_a_matrix_expression(vectorize):
    x = tt.dvector("x")
    y = tt.outer(x, x)[:, 1:]
    f = tg.function([x], jacobian(y, x, vectorize=vectorize))
    xv = rng.standard_normal(3)
    expected = np.zeros((3, 2, 3))
    for i in range(3):
        for j in range(2):
            expected[i, j, i] += xv[j + 1]
            expected[i, j, j + 1] += xv[i]
    np.testing.assert_allclose(f(xv), expected)


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_of_vectors_and_lists(vectorize):
    x, z = tt.dvector("x"), tt.dvector("z")
    js = jacobian(x * z, [x, z], vectorize=vectorize)
    assert isinstance(js, list)
    xv, zv = rng.standard_normal(4), rng.standard_normal(4)
    jx, jz = tg.function([x, z], js)(xv, zv)
    np.testing.assert_allclose(jx, np.diag(zv))
    np.testing.assert_allclose(jz, np.diag(xv))
    assert isinstance(jacobian(2 * x, (x,), vectorize=vectorize), tuple)
    m = tt.dmatrix("m")
    jm = tg.function([m], jacobian(2 * m.sum(axis=0), m, vectorize=vectorize))(np.ones((3, 3)))
    expected = np.zeros((3, 3, 3))
    for d in range(3):
        expected[d, :, d] = 2.0
    np.testing.assert_allclose(jm, expected)


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_of_a_disconnected_input_is_zeros_of_the_full_shape(vectorize):
    m1, m2 = tt.dmatrix("m1"), tt.dmatrix("m2")
    j = jacobian(1 + m1[1:, 2:], m2, disconnected_inputs="ignore", vectorize=vectorize)
    f = tg.function([m1, m2], j, on_unused_input="ignore")
    np.testing.assert_array_equal(f(np.ones((4, 4)), np.ones((4, 4))), np.zeros((3, 2, 4, 4)))
    s1, s2 = tt.dscalar("s1"), tt.dscalar("s2")
    # the zeros read s2, so a function of s2 alone is fine (as in PyTensor)
    assert tg.function([s2], jacobian(1 + s1, s2, disconnected_inputs="ignore"))(1.0) == 0


def test_gradients_read_the_cost_so_inputs_stay_used():
    x, y = tt.dscalar("x"), tt.dscalar("y")
    one = tt.constant(1.0)
    g_x = tg.grad(x + y, x, consider_constant=[x])
    g_one = tg.grad(one + y, one)
    f = tg.function([x, y], [g_x, g_one])       # no UnusedInputError for x
    np.testing.assert_allclose(f(1.0, 0.5), [1.0, 1.0])
    w = tt.dmatrix("w")
    zeros = tg.grad(x, w, disconnected_inputs="ignore")
    assert tg.function([w], zeros, on_unused_input="ignore")(np.ones((3, 7))).shape == (3, 7)


# -- vectorize_graph, tt.vectorize, Blockwise -------------------------------------------------


def test_vectorize_graph_batches_with_rules_and_no_loop():
    x, W = tt.dvector("x"), tt.dmatrix("W")
    y = tt.tanh(tt.dot(W, x)).sum() + tt.max(x) + tt.special.softmax(x, axis=-1).sum()
    xs = tt.dmatrix("xs")
    f = tg.function([W, xs], vectorize_graph(y, {x: xs}))
    Wv, xv = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))

    def one(r):
        e = np.exp(r - r.max())
        return np.tanh(Wv @ r).sum() + r.max() + (e / e.sum()).sum()

    np.testing.assert_allclose(f(Wv, xv), [one(r) for r in xv])
    assert not [op for op in _ops(f) if isinstance(op, Blockwise)]
    untouched = tt.exp(W)
    assert vectorize_graph([untouched], {x: xs})[0] is untouched
    with pytest.raises(TypeError, match="same dtype"):
        vectorize_graph(y, {x: tt.fmatrix("xs32")})


def test_ops_without_a_rule_run_as_blockwise_with_a_gradient():
    x, xs = tt.dvector("x"), tt.dmatrix("xs")
    z = (tt.sort(x)[::-1] * tt.arange(4)).sum()
    zs = vectorize_graph(z, {x: xs})
    f = tg.function([xs], zs)
    xv = rng.standard_normal((3, 4))
    np.testing.assert_allclose(f(xv), (-np.sort(-xv, axis=1) * np.arange(4)).sum(axis=1))
    assert [op for op in _ops(f) if isinstance(op, Blockwise)]
    verify_grad(lambda a: vectorize_graph(z, {x: a}).sum(), [xv], rng=rng)


def test_blockwise_broadcasts_batch_dimensions_and_sums_their_gradient():
    from tensorgraph.tensor.sort import SortOp

    block = Blockwise(SortOp(axis=0), signature="(n)->(n)")
    assert block.core_ndims == (1,)
    x = tt.tensor(dtype="float64", shape=(None, 1, None))
    y = block(x)
    assert y.type.shape == (None, 1, None)
    f = tg.function([x], y)
    xv = rng.standard_normal((2, 1, 5))
    np.testing.assert_array_equal(f(xv), np.sort(xv, axis=-1))
    mat, vec = tt.dmatrix("m"), tt.dvector("v")
    dot_rows = Blockwise(tt.dot(tt.dmatrix(), tt.dvector()).owner.op, (2, 1))
    out = dot_rows(tt.tensor(dtype="float64", shape=(None, None, None)), vec)
    assert out.type.ndim == 2
    with pytest.raises(TypeError, match="at least 2 dimensions"):
        dot_rows(vec, vec)
    with pytest.raises(ValueError, match="overwrites"):
        Blockwise(tt.elemwise.Elemwise(tt.exp(mat).owner.op.scalar_op, {0: 0}), (0,))


def test_tensor_vectorize_with_a_signature():
    A, B = tt.dmatrix("A"), tt.dmatrix("B")
    inner = tt.vectorize(lambda a, b: tt.dot(a, b), signature="(n),(n)->()")
    f = tg.function([A, B], inner(A, B))
    av, bv = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    np.testing.assert_allclose(f(av, bv), (av * bv).sum(axis=1))
    square = tt.vectorize(lambda a: a ** 2)
    np.testing.assert_allclose(tg.function([A], square(A))(av), av ** 2)
    with pytest.raises(TypeError, match="2 inputs"):
        inner(A)


# -- OpFromGraph ---------------------------------------------------------------------------


def _ofg_inputs():
    return tt.dmatrix("x"), tt.dmatrix("y"), tt.dmatrix("z")


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE", "DebugMode"])
def test_op_from_graph_computes_its_graph_in_every_mode(mode):
    from tensorgraph.compile.builders import OpFromGraph

    x, y, z = _ofg_inputs()
    op = OpFromGraph([x, y, z], [x + y * z])
    f = tg.function([x, y, z], op(x, y, z) - op(y, z, x), mode=mode)
    xv, yv, zv = (np.full((2, 2), v) for v in (2.0, 3.0, 4.0))
    np.testing.assert_allclose(f(xv, yv, zv), np.full((2, 2), 3.0))
    assert sum(isinstance(n, OpFromGraph) for n in _ops(f)) == 2


def test_op_from_graph_gradient_is_its_inner_graphs():
    from tensorgraph.compile.builders import OpFromGraph

    x, y, z = _ofg_inputs()
    op = OpFromGraph([x, y, z], [tt.exp(x) * y + z])
    a, b, c = _ofg_inputs()
    grads = tg.function([a, b, c], tg.grad(op(a, b, c).sum(), [a, b, c]))
    av, bv, cv = (rng.standard_normal((2, 3)) for _ in range(3))
    ga, gb, gc = grads(av, bv, cv)
    np.testing.assert_allclose(ga, np.exp(av) * bv)
    np.testing.assert_allclose(gb, np.exp(av))
    np.testing.assert_allclose(gc, np.ones((2, 3)))
    verify_grad(lambda p, q: op(p, q, q), [av, bv], rng=rng)
    v = tt.dmatrix("v")
    jvp = tg.function([a, b, c, v], tg.gradient.Rop(op(a, b, c), a, v))
    np.testing.assert_allclose(jvp(av, bv, cv, cv), np.exp(av) * bv * cv)


def test_op_from_graph_overrides_shared_variables_and_inlining():
    from tensorgraph.compile.builders import OpFromGraph

    x, y, _ = _ofg_inputs()
    xv = np.ones((2, 2))
    doubled_grad = OpFromGraph([x], [tt.exp(x)], lop_overrides=lambda i, o, g: [g[0] * 2])
    np.testing.assert_allclose(tg.function([x], tg.grad(doubled_grad(x).sum(), x))(xv), 2 * xv)
    per_input = OpFromGraph([x, y], [x * y], lop_overrides=[None, lambda i, o, g: i[0]])
    gx, gy = tg.function([x, y], tg.grad(per_input(x, y).sum(), [x, y]))(xv, 3 * xv)
    np.testing.assert_allclose(gx, 3 * xv)
    np.testing.assert_allclose(gy, xv)
    s = tg.shared(np.array(2.0))
    scaled = OpFromGraph([x], [x * s])
    assert scaled(x).owner.inputs[-1] is s
    np.testing.assert_allclose(tg.function([x], scaled(x))(xv), 2 * xv)
    assert tg.function([x], tg.grad(scaled(x).sum(), s))(xv) == 4.0
    with pytest.raises(ValueError, match="strict"):
        OpFromGraph([x], [x * s], strict=True)
    with pytest.raises(tg.graph.MissingInputError, match="not among the inputs"):
        OpFromGraph([x], [x * y])
    inline = OpFromGraph([x, y], [x + y], inline=True)
    f = tg.function([x, y], inline(x, y))
    assert not [op for op in _ops(f) if isinstance(op, OpFromGraph)]
    with pytest.raises(TypeError, match="input 0 must have type"):
        inline(tt.dvector("v"), y)


def test_op_from_graph_inner_graph_is_printed_and_shown():
    from tensorgraph.compile.builders import OpFromGraph
    from tensorgraph.graph.op import HasInnerGraph
    from tensorgraph.notebook.graph_model import graph_model

    x, y, _ = _ofg_inputs()
    op = OpFromGraph([x, y], [tt.exp(x) + y], name="Block")
    assert isinstance(op, HasInnerGraph) and op.inner_inputs == op.fgraph.inputs
    a = tt.dmatrix("a")
    out = op(a, op(a, a))
    text = tg.printing.debugprint(out, file="str")
    assert "Inner graphs:" in text and " ← Elemwise{add}" in text
    # the inner graph is printed once, headed by its node's id
    assert len(re.findall(r"\nBlock\{inline=False\} \[id [A-Z]+\]\n", text)) == 1
    assert "Inner graphs" not in tg.printing.debugprint(out, file="str",
                                                        print_inner_graphs=False)
    model = graph_model(out)
    node = next(n for n in model.nodes if "Block" in n.get("op", ""))
    assert model.detail(node["id"])["inner"][0].startswith("Elemwise{add}")


def test_debugprint_id_type_and_stop_on_name():
    x = tt.dvector("x")
    y = tt.exp(x)
    y.name = "ex"
    z = (y * 2).sum()
    assert tg.printing.debugprint(z, file="str", id_type="int").splitlines()[0].endswith("[id 0]")
    text = tg.printing.debugprint(z, file="str", stop_on_name=True)
    assert "'ex'" in text and "Elemwise{exp}" in text and "x [id" not in text


def test_a_lower_dimensional_known_gradient_is_broadcast():
    x = tt.dvector("x")
    y = tt.exp(x)
    g = tg.grad(None, x, known_grads={y: tt.constant(2.0)})
    np.testing.assert_allclose(tg.function([x], g)([0.0, 1.0]), 2 * np.exp([0.0, 1.0]))
    with pytest.raises(ValueError, match="2-d"):
        tg.grad(None, x, known_grads={y: tt.dmatrix("m")})


def test_the_zero_gradient_of_an_integer_input_keeps_the_cost_inputs_used():
    X, W = tt.imatrix("X"), tt.dmatrix("W")
    g = tg.grad(tt.sigmoid(tt.dot(X, W)).sum(), X)
    f = tg.function([X, W], g)           # W is read by the cost: no UnusedInputError
    np.testing.assert_array_equal(f(np.ones((2, 3), dtype="int32"), np.ones((3, 2))),
                                  np.zeros((2, 3)))


REWRITE_GRAPH_PROBE = """
import sys
import tensorgraph.graph as g
try:
    g.rewrite_graph
except AttributeError as exc:
    print("error:", exc)
print("rewriting loaded:", "tensorgraph.rewriting" in sys.modules)
import tensorgraph.rewriting.utils
print("same:", g.rewrite_graph is tensorgraph.rewriting.utils.rewrite_graph)
"""


def test_graph_rewrite_graph_is_registered_by_rewriting_not_imported_upward():
    """``tensorgraph.graph.rewrite_graph`` (PyTensor's name) is rewriting's function once the
    rewriting layer is loaded; before, the graph package names where it lives instead of
    importing a higher layer."""
    out = subprocess.run([sys.executable, "-c", REWRITE_GRAPH_PROBE], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert "rewriting loaded: False" in out
    assert "error:" in out and "tensorgraph.rewriting" in out
    assert "same: True" in out
