"""Random draws: RandomVariable ops, the generator type and RandomStream's default updates."""

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.gradient import NullTypeGradError, grad
from tensorgraph.tensor.random import basic
from tensorgraph.tensor.random.op import RandomVariable
from tensorgraph.tensor.random.type import (
    RandomGeneratorSharedVariable,
    RandomGeneratorType,
)
from tensorgraph.tensor.random.utils import RandomStream

pytestmark = pytest.mark.usefixtures("reference_mode")

MODE = "FAST_COMPILE"


def fn(inputs, outputs, **kwargs):
    return tensorgraph.function(inputs, outputs, mode=MODE, on_unused_input="ignore", **kwargs)


def test_each_call_draws_new_values():
    srng = RandomStream(seed=234)
    u = srng.uniform(0.0, 1.0, size=(2, 3))
    f = fn([], u)
    a, b = f(), f()
    assert a.shape == (2, 3) and a.dtype == config.floatX
    assert not np.array_equal(a, b)
    assert ((a >= 0) & (a < 1)).all()


def test_no_default_updates_keeps_the_values():
    srng = RandomStream(seed=1)
    n = srng.normal(size=(3,))
    f = fn([], n, no_default_updates=True)
    np.testing.assert_array_equal(f(), f())


def test_same_seed_same_stream_and_reseeding():
    def draws(srng):
        f = fn([], [srng.normal(size=(2,)), srng.integers(0, 100, size=(3,))])
        return [f(), f()]

    first = draws(RandomStream(seed=7))
    again = draws(RandomStream(seed=7))
    other = draws(RandomStream(seed=8))
    for x, y in zip(np.concatenate([np.concatenate(c) for c in first]),
                    np.concatenate([np.concatenate(c) for c in again])):
        assert x == y
    assert not np.array_equal(first[0][0], other[0][0])

    srng = RandomStream(seed=3)
    u = srng.uniform(size=(4,))
    f = fn([], u)
    start = f()
    f()
    srng.seed(3)
    np.testing.assert_array_equal(f(), start)


def test_the_stream_exposes_its_updates():
    srng = RandomStream(seed=0)
    x = srng.normal(size=(2,))
    ((rng, nxt),) = srng.updates()
    assert isinstance(rng, RandomGeneratorSharedVariable)
    assert rng.default_update is nxt and x.rng is rng and x.update == (rng, nxt)
    assert nxt is x.owner.outputs[0]


def test_symbolic_size():
    srng = RandomStream(seed=2)
    n = tt.lscalar("n")
    draw = srng.normal(size=(n, 2))
    assert draw.type.shape == (None, 2)
    f = fn([n], draw)
    assert f(3).shape == (3, 2)
    assert f(0).shape == (0, 2)
    with pytest.raises(TypeError, match="integer scalar"):
        srng.normal(size=(tt.dscalar("bad"), 2))
    with pytest.raises(TypeError, match="unknown length"):
        srng.normal(size=tt.lvector("s"))


def test_size_none_broadcasts_the_parameters():
    srng = RandomStream(seed=5)
    loc = tt.dmatrix("loc")
    scale = tt.tensor("float64", shape=(1, 3), name="scale")
    draw = srng.normal(loc, scale)
    assert draw.type.shape == (None, 3)
    out = fn([loc, scale], draw)(np.zeros((4, 3)), np.ones((1, 3)))
    assert out.shape == (4, 3)


def test_integer_draws():
    srng = RandomStream(seed=9)
    i = srng.integers(5, size=(200,))
    j = srng.integers(10, 12, size=(50,))
    vi, vj = fn([], [i, j])()
    assert vi.dtype == np.int64 and set(np.unique(vi)) <= set(range(5))
    assert set(np.unique(vj)) <= {10, 11}
    b = srng.binomial(10, 0.5, size=(20,))
    p = srng.poisson(3.0, size=(20,))
    bern = srng.bernoulli(0.3, size=(500,))
    vb, vp, vbern = fn([], [b, p, bern])()
    assert vb.dtype == vp.dtype == vbern.dtype == np.int64
    assert vb.min() >= 0 and vb.max() <= 10 and vp.min() >= 0
    assert set(np.unique(vbern)) <= {0, 1} and 0.2 < vbern.mean() < 0.4


def test_continuous_draws_and_dtypes():
    srng = RandomStream(seed=11)
    draws = [srng.normal(3.0, 0.1, size=(2000,)), srng.standard_normal(size=(2000,)),
             srng.exponential(2.0, size=(2000,)), srng.gamma(2.0, 1.0, size=(2000,)),
             srng.beta(2.0, 2.0, size=(2000,)), srng.uniform(-1.0, 1.0, size=(5,), dtype="float32")]
    vn, vs, ve, vg, vb, vf = fn([], draws)()
    assert abs(vn.mean() - 3.0) < 0.02 and abs(vs.mean()) < 0.1
    assert abs(ve.mean() - 2.0) < 0.2 and abs(vg.mean() - 2.0) < 0.2
    assert 0 < vb.min() and vb.max() < 1
    assert vf.dtype == np.float32 and draws[-1].type.dtype == "float32"
    assert draws[0].type.dtype == config.floatX


def test_float32_floatx():
    with config.change_flags(floatX="float32"):
        srng = RandomStream(seed=0)
        u = srng.uniform(size=(2,))
        assert u.type.dtype == "float32"
        assert fn([], u)().dtype == np.float32


def test_choice_and_permutation():
    srng = RandomStream(seed=4)
    c = srng.choice(5, size=(3,), replace=False)
    a = tt.dvector("a")
    w = srng.choice(a, size=(10,), p=[0.0, 1.0, 0.0])
    perm = srng.permutation(6)
    mat = tt.dmatrix("m")
    shuffled = srng.permutation(mat)
    assert c.type.dtype == "int64" and w.type.dtype == "float64"
    assert perm.type.shape == (6,) and shuffled.type.ndim == 2
    m = np.arange(8.0).reshape(4, 2)
    vc, vw, vp, vs = fn([a, mat], [c, w, perm, shuffled])(np.array([1.0, 2.0, 3.0]), m)
    assert len(set(vc)) == 3 and set(vc) <= set(range(5))
    np.testing.assert_array_equal(vw, np.full(10, 2.0))
    assert sorted(vp) == list(range(6))
    assert sorted(map(tuple, vs)) == sorted(map(tuple, m))
    with pytest.raises(TypeError, match="integer or a vector"):
        srng.choice(tt.dmatrix("bad"))
    with pytest.raises(TypeError, match="takes no size"):
        basic.PermutationRV(0)(3, size=(2,))


def test_perform_does_not_touch_the_input_generator():
    rng = np.random.default_rng(123)
    before = copy.deepcopy(rng.bit_generator.state)
    node = basic.normal_rv.make_node(tensorgraph.shared(rng, borrow=True), None,
                                     tt.constant(0.0), tt.constant(1.0))
    storage = [[None], [None]]
    node.op.perform(node, [rng, np.zeros(0, dtype="int64"), 0.0, 1.0], storage)
    assert rng.bit_generator.state == before
    assert storage[0][0] is not rng and storage[0][0].bit_generator.state != before
    inplace = RandomVariable("normal", (0, 0), inplace=True)
    assert inplace.destroy_map == {0: [0]}
    inplace.perform(node, [rng, np.zeros(0, dtype="int64"), 0.0, 1.0], storage)
    assert storage[0][0] is rng and rng.bit_generator.state != before


def test_generator_type_and_shared_generators():
    gtype = RandomGeneratorType()
    rng = np.random.default_rng(0)
    assert gtype.filter(rng) is rng
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        gtype.filter(np.random.RandomState(0))
    assert gtype.values_eq(np.random.default_rng(1), np.random.default_rng(1))
    assert not gtype.values_eq(np.random.default_rng(1), np.random.default_rng(2))
    shared_rng = tensorgraph.shared(rng)
    assert isinstance(shared_rng, RandomGeneratorSharedVariable)
    value = shared_rng.get_value()
    assert value is not rng and gtype.values_eq(value, rng)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        basic.normal_rv.make_node(tt.dscalar("x"), None, 0.0, 1.0)


def test_rng_none_makes_a_fixed_private_generator():
    draw = basic.normal(size=(3,))
    f = fn([], draw)
    np.testing.assert_array_equal(f(), f())


def test_infer_shape():
    n = tt.lscalar("n")
    node = basic.uniform(size=(n, 3)).owner
    _, (d0, d1) = node.op.infer_shape(None, node, [None, (2,), (), ()])
    assert int(fn([n], d0)(5)) == 5 and int(fn([n], d1)(5)) == 3
    loc = tt.dvector("loc")
    node = basic.normal(loc, tt.dmatrix("scale")).owner
    k, r, c = tt.lscalars("k", "r", "c")
    _, (s0, s1) = node.op.infer_shape(None, node, [None, (0,), (k,), (r, c)])
    assert s0 is r
    assert int(fn([k, c], s1)(1, 4)) == 4


def test_draws_have_no_gradient():
    srng = RandomStream(seed=0)
    loc = tt.dscalar("loc")
    x = tt.dvector("x")
    draw = srng.normal(loc, 1.0, size=(3,))
    with pytest.raises(NullTypeGradError, match="normal"):
        grad(tt.sum(draw), loc)
    # a draw that does not depend on the variable is just a constant for the gradient
    g = grad(tt.sum(x * srng.normal(size=(2,))), x)
    assert fn([x], g)(np.ones(2)).shape == (2,)


def test_test_values_draw_without_advancing_the_shared_generator():
    with config.change_flags(compute_test_value="raise"):
        srng = RandomStream(seed=0)
        draw = srng.uniform(size=(2,))
    assert draw.tag.test_value.shape == (2,)
    rng = srng.state_updates[0][0]
    fresh = RandomStream(seed=0)
    fresh.uniform(size=(2,))
    assert RandomGeneratorType().values_eq(rng.get_value(), fresh.state_updates[0][0].get_value())


@settings(max_examples=10, deadline=None)
@given(size=st.lists(st.integers(0, 3), min_size=0, max_size=3),
       loc_shape=st.sampled_from([(), (1,), (3,)]))
def test_draw_shapes_follow_size_and_broadcasting(size, loc_shape):
    srng = RandomStream(seed=0)
    loc = tt.tensor("float64", shape=(None,) * len(loc_shape), name="loc")
    if not size:
        draw = srng.normal(loc, 1.0)
        expected = loc_shape
    else:
        draw = srng.normal(loc, 1.0, size=tuple(size))
        assert draw.type.shape == tuple(size)
        expected = tuple(size)
    try:
        np.broadcast_shapes(expected, loc_shape)
        fits = np.broadcast_shapes(expected, loc_shape) == expected
    except ValueError:
        fits = False
    f = fn([loc], draw)
    if fits:
        assert f(np.zeros(loc_shape)).shape == expected
    else:
        with pytest.raises(ValueError, match="normal_rv"):
            f(np.zeros(loc_shape))
