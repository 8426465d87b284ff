"""Which allocs constant folding turns into constants: small allocs of static shape, except a
graph output (a constant output is copied on every call) and the array an inc/set-subtensor
writes into (a fresh alloc is filled in place, a constant must be copied first). Folding runs
in specialize too, for the constant allocs that phase builds (a gradient's fill)."""

import numpy as np

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.tensor.creation import Alloc

FAST_RUN = tensorgraph.get_mode("FAST_RUN")


def allocs(f):
    return [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Alloc)]


def test_an_alloc_that_is_an_output_is_not_folded():
    value = tt.constant(np.full((1, 1), 2.5))
    f = tensorgraph.function([], tt.alloc(value, 5, 6), mode=FAST_RUN)
    assert len(allocs(f)) == 1
    first, second = f(), f()
    np.testing.assert_array_equal(first, np.full((5, 6), 2.5))
    first[0, 0] = -1.0                        # the caller owns it: the next call is unchanged
    np.testing.assert_array_equal(second, np.full((5, 6), 2.5))
    np.testing.assert_array_equal(f(), np.full((5, 6), 2.5))


def test_an_alloc_used_elsewhere_is_folded():
    x = tt.dmatrix("x")
    f = tensorgraph.function([x], x * tt.alloc(tt.constant(3.0), 2, 3)[0, 1], mode=FAST_RUN)
    assert not allocs(f)
    np.testing.assert_array_equal(f(np.ones((2, 2))), np.full((2, 2), 3.0))


def _gradient_of_indexing(index, mode=FAST_RUN):
    v = tt.dvector("v")
    m = v.reshape((6, 5))
    w = tt.dvector("w")
    g = tensorgraph.grad(tt.sum(tt.dot(index(m), w)), v)
    return tensorgraph.function([v, w], g, mode=mode)


def _numpy_gradient(index, w):
    """d/dv sum(index(v.reshape(6, 5)) @ w), by the chain rule on a 0/1 selection."""
    grad = np.zeros((6, 5))
    rows = index(np.arange(30).reshape(6, 5))
    flat = grad.reshape(-1)
    np.add.at(flat, rows, np.broadcast_to(w, rows.shape))
    return flat


def test_gradient_of_indexing_fills_a_fresh_zeros_in_place():
    w = np.arange(5.0) + 1
    v = np.linspace(-1, 1, 30)
    for index in (lambda m: m[:4], lambda m: m[np.array([0, 2, 2, 5])],
                  lambda m: m[np.arange(5), np.arange(5)]):
        f = _gradient_of_indexing(index)
        # the zeros the gradient writes into stays an alloc; the ones of sum's gradient
        # (built in specialize) is folded
        (zeros,) = allocs(f)
        (writer,) = [c for c, i in f.maker.fgraph.clients[zeros.outputs[0]]]
        assert writer != "output"
        if index(np.arange(30).reshape(6, 5)).ndim == 2:
            expected = _numpy_gradient(index, w)
        else:                                  # m[i, i] is a vector: dot is with w itself
            expected = np.zeros(30)
            expected[np.arange(5) * 5 + np.arange(5)] = w
        np.testing.assert_allclose(f(v, w), expected)


def test_excluding_constant_folding_leaves_out_both_phases():
    x = tt.dvector("x")
    out = x + tt.exp(tt.constant(2.0))
    folded = tensorgraph.function([x], out, mode=FAST_RUN)
    kept = tensorgraph.function([x], out, mode=FAST_RUN.excluding("constant_folding"))
    assert len(folded.maker.fgraph.apply_nodes) == 1
    assert any(n.op == tt.exp for n in kept.maker.fgraph.apply_nodes)
    np.testing.assert_allclose(folded([1.0]), kept([1.0]))
