"""``tt.einsum``: numpy's values (ellipsis, repeated indices, implicit output, broadcasting),
dtypes, gradients through the graph it builds, and clear errors; the ``Einsum`` node
(PyTensor's): the contraction path searched with static shapes, ``optimized``, inlined when
compiled, shown by debugprint."""

import warnings

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad
from tensorgraph.graph.replace import vectorize_graph
from tensorgraph.graph.op_from_graph import OpFromGraph
from tensorgraph.printing import debugprint
from tensorgraph.tensor.einsum import Einsum

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]), ("ij->ji", [(2, 3)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 6)]), ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]), ("ijk,jil->kl", [(3, 4, 5), (4, 3, 2)]),
    ("i,i,i->i", [(4,), (4,), (4,)]), ("ij,j->i", [(3, 1), (4,)]), ("iij->j", [(3, 3, 2)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]), ("...i->...", [(2, 3, 4)]),
    ("i...->...", [(3, 4)]), ("ijj->", [(2, 3, 3)]), ("bi,bi->b", [(4, 3), (4, 3)]),
    ("i,ij,jk->", [(2,), (2, 3), (3, 4)]), ("Ab,bA->A", [(3, 2), (2, 3)]), ("i->", [(0,)]),
    (" i j , j k -> i k ", [(2, 3), (3, 2)]),
]


def _inputs(shapes, dtype="float64"):
    # a length-1 dimension is declared broadcastable, as numpy treats it
    return [tt.tensor(dtype=dtype, shape=tuple(1 if n == 1 else None for n in shape))
            for shape in shapes]


@pytest.mark.parametrize("subscripts, shapes", CASES, ids=[c[0] for c in CASES])
def test_values_are_numpys(subscripts, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=shape) for shape in shapes]
    xs = _inputs(shapes)
    got = tg.function(xs, tt.einsum(subscripts, *xs))(*arrays)
    want = np.einsum(subscripts, *arrays)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_an_output_without_the_ellipsis_sums_its_dimensions_as_pytensor():
    x, y = tt.dtensor3("x"), tt.dtensor3("y")
    out = tt.einsum("m...p,p...n->mn", x, y)
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(3, 2, 4)), rng.normal(size=(4, 2, 5))
    want = np.einsum("mkp,pkn->mn", a, b)
    np.testing.assert_allclose(tg.function([x, y], out)(a, b), want, rtol=1e-12)


def test_dtypes_are_the_operands_common_dtype():
    a, b = tt.fmatrix("a"), tt.fmatrix("b")
    assert tt.einsum("ij,jk->ik", a, b).dtype == "float32"
    assert tt.einsum("ij,jk->ik", a, tt.dmatrix()).dtype == "float64"
    i = tt.imatrix("i")
    out = tt.einsum("ij->i", i)
    assert out.dtype == "int32"
    values = np.arange(6, dtype="int32").reshape(2, 3)
    np.testing.assert_array_equal(tg.function([i], out)(values), np.einsum("ij->i", values))


@pytest.mark.parametrize("subscripts, shapes", [
    ("ij,jk->ik", [(3, 4), (4, 2)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("ii->i", [(3, 3)]), ("i,i,i->", [(4,), (4,), (4,)]), ("...ij,jk->...k", [(2, 2, 3), (3, 2)]),
])
def test_gradients_follow_from_the_graph(subscripts, shapes):
    rng = np.random.default_rng(1)
    verify_grad(lambda *xs: tt.einsum(subscripts, *xs), [rng.normal(size=s) for s in shapes],
                rng=rng)


def test_contractions_become_products_not_broadcast_temporaries():
    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    f = tg.function([a, b], tt.einsum("ij,jk->ik", a, b))
    names = [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    assert any(n in ("Dot22", "Gemm", "Dot", "Gemv", "MatMul") for n in names), names


@pytest.mark.parametrize("call, message", [
    (lambda a: tt.einsum("ij,jk->ik", a), "name 2 operands, got 1"),
    (lambda a: tt.einsum("ijk->i", a), "2-d but its subscripts 'ijk'"),
    (lambda a: tt.einsum("i1->i", a), "'1' in 'i1->i' is not a subscript"),
    (lambda a: tt.einsum("ij->z", a), "output subscript 'z' is in no operand"),
    (lambda a: tt.einsum("ij->ii", a), "repeats a subscript"),
    (lambda a: tt.einsum(3, a), "subscripts must be a str"),
    (lambda a: tt.einsum("ij,jk", tt.tensor(shape=(2, 3)), tt.tensor(shape=(4, 5))),
     "'j' of 'ij,jk' has size 3 in operand 0 and 4 in operand 1"),
])
def test_bad_subscripts_say_what_is_wrong(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call(tt.dmatrix("a"))


# -- the Einsum node (PyTensor's) ---------------------------------------------------------------

CHAIN = "ij,jk,kl,lm->im"
CHAIN_SHAPES = [(30, 30), (30, 30), (30, 30), (30, 2)]


def test_one_einsum_node_with_the_path_numpy_finds_for_static_shapes():
    xs = [tt.tensor(shape=s) for s in CHAIN_SHAPES]
    out = tt.einsum(CHAIN, *xs)
    op = out.owner.op
    assert isinstance(op, Einsum) and isinstance(op, OpFromGraph) and op.inline
    assert op.subscripts == CHAIN and op.optimized is True
    numpys = np.einsum_path(CHAIN, *[np.empty(s) for s in CHAIN_SHAPES], optimize="optimal")[0]
    assert op.path == tuple(tuple(step) for step in numpys[1:])
    assert op.path[0] in ((2, 3), (3, 2))          # the matrix-vector end first
    assert out.owner.inputs == xs and out.type.shape == (30, 2)


def test_without_static_shapes_the_path_is_left_to_right_and_not_optimized():
    xs = [tt.dmatrix() for _ in CHAIN_SHAPES]
    op = tt.einsum(CHAIN, *xs).owner.op
    # the result so far (last in the list) with the next operand (first), as written
    assert op.optimized is False and op.path == ((0, 1), (2, 0), (1, 0))
    # one or two operands: nothing to order
    assert tt.einsum("ij,jk", xs[0], xs[1]).owner.op.optimized is True
    assert tt.einsum("ii", xs[0]).owner.op.path == ((0,),)


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
@pytest.mark.parametrize("static", [True, False])
def test_the_node_is_inlined_and_gives_numpys_values(mode, static):
    rng = np.random.default_rng(3)
    cases = [(CHAIN, CHAIN_SHAPES), ("ijk,bj,ck->i", [(4, 5, 6), (7, 5), (1, 6)]),
             ("oij,imj,mjkn,lnk,plk->op", [(2, 3, 5), (3, 11, 5), (11, 5, 7, 13), (4, 13, 7),
                                          (6, 4, 7)]),
             ("...ij,...jk,kl->...il", [(2, 1, 3, 4), (5, 4, 6), (6, 2)])]
    for subscripts, shapes in cases:
        xs = [tt.tensor(shape=s if static else tuple(1 if n == 1 else None for n in s))
              for s in shapes]
        f = tg.function(xs, tt.einsum(subscripts, *xs), mode=mode)
        assert not any(isinstance(n.op, OpFromGraph) for n in f.maker.fgraph.toposort())
        arrays = [rng.normal(size=s) for s in shapes]
        np.testing.assert_allclose(f(*arrays), np.einsum(subscripts, *arrays), rtol=1e-10,
                                   err_msg=subscripts)


def test_gradient_through_the_node_in_the_path_order():
    rng = np.random.default_rng(4)
    shapes = [(3, 4), (4, 5), (5, 2)]

    def fn(*xs):
        xs = [tt.specify_shape(x, s) for x, s in zip(xs, shapes)]
        out = tt.einsum("ij,jk,kl->il", *xs)
        assert out.owner.op.optimized and out.owner.op.path == ((1, 2), (0, 1))
        return out

    verify_grad(fn, [rng.normal(size=s) for s in shapes], rng=rng)


def test_debugprint_shows_the_node_and_its_inner_graph():
    xs = [tt.tensor(name, shape=s) for name, s in zip("abcd", CHAIN_SHAPES)]
    text = debugprint(tt.einsum(CHAIN, *xs), file="str")
    first = text.splitlines()[0]
    assert first.startswith("Einsum{subscripts='ij,jk,kl,lm->im', path=((2, 3), (1, 2), "
                            "(0, 1)), optimized=True}"), first
    assert "Inner graphs:" in text and "Dot" in text


def test_a_letter_both_broadcast_and_not_warns_of_a_suboptimal_path():
    a, b, c = tt.tensor(shape=(8, 8, 8)), tt.tensor(shape=(100, 8)), tt.tensor(shape=(1, 8))
    with pytest.warns(UserWarning, match="suboptimal contraction path"):
        tt.einsum("ijk,bj,bk->i", a, b, c)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tt.einsum("ijk,bj,ck->i", a, b, c).owner.op.path == ((0, 2), (0, 1))
        # ellipsis dimensions broadcast by design: no warning
        out = tt.einsum("...ij,...jk,kl->...il", tt.tensor(shape=(2, 1, 3, 4)),
                        tt.tensor(shape=(5, 4, 6)), tt.tensor(shape=(6, 2)))
        assert out.owner.op.optimized and out.type.shape == (2, 5, 3, 2)


def test_constant_and_repeated_operands_and_test_values():
    x = tt.dmatrix("x")
    values = np.arange(6.0).reshape(2, 3)
    out = tt.einsum("ij,ij->i", x, x)
    assert out.owner.inputs == [x, x]
    np.testing.assert_allclose(out.eval({x: values}), (values ** 2).sum(1))
    out = tt.einsum("ij,jk->ik", x, np.ones((3, 2)))
    np.testing.assert_allclose(out.eval({x: values}), values @ np.ones((3, 2)))
    with tg.config.change_flags(compute_test_value="raise"):
        x.tag.test_value = values
        assert tt.einsum("ij,kj->ik", x, x).tag.test_value.shape == (2, 2)


def test_optimize_is_refused_as_in_pytensor():
    with pytest.raises(NotImplementedError, match="optimize"):
        tt.einsum("ij,jk", tt.dmatrix(), tt.dmatrix(), optimize="greedy")


def test_vectorize_graph_batches_the_einsum_with_an_ellipsis():
    x, y, z = tt.dmatrix("x"), tt.dmatrix("y"), tt.dmatrix("z")
    xs = tt.tensor("xs", shape=(7, 2, 3))
    out = vectorize_graph(tt.einsum("ij,jk,kl", x, y, z), {x: xs})
    assert str(out.owner.op).startswith("Einsum{subscripts='...ij,...jk,...kl->...il'")
    f = tg.function([xs, y, z], out)
    assert not any(type(n.op).__name__ == "Blockwise" for n in f.maker.fgraph.toposort())
    rng = np.random.default_rng(5)
    a, b, c = rng.normal(size=(7, 2, 3)), rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    np.testing.assert_allclose(f(a, b, c), a @ b @ c, rtol=1e-12)
    # subscripts with an ellipsis of their own: the inner graph, vectorized op by op
    out = vectorize_graph(tt.einsum("...ij,jk->...ik", x, y), {x: xs})
    np.testing.assert_allclose(tg.function([xs, y], out)(a, b), a @ b, rtol=1e-12)
