"""``tt.einsum``: numpy's values (ellipsis, repeated indices, implicit output, broadcasting),
dtypes, gradients through the graph it builds, and clear errors."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad

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
])
def test_bad_subscripts_say_what_is_wrong(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call(tt.dmatrix("a"))
