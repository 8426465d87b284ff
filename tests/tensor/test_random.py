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
             srng.exponential(2.0, size=(2000,)), srng.gamma(2.0, scale=1.0, size=(2000,)),
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
    # an array is sampled along its first axis; a size draws several permutations (numpy's
    # Generator.choice, PyTensor's permutation)
    rows = srng.choice(tt.dmatrix("rows"), size=(5,))
    assert rows.type.ndim == 2
    picked = fn([rows.owner.inputs[2]], rows)(m)
    assert all(tuple(r) in set(map(tuple, m)) for r in picked)
    several = basic.PermutationRV(0)(3, size=(2,))
    assert several.type.shape == (2, 3)
    assert [sorted(p) for p in fn([], several)()] == [[0, 1, 2]] * 2
    with pytest.raises(TypeError, match="a scalar a must be an integer"):
        srng.choice(tt.dscalar("bad"))


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


# -- PyTensor's distributions and helpers (issue 21, item 10) ----------------------------------

SCALAR_DRAWS = [  # (name, params, numpy or scipy reference, its arguments)
    ("lognormal", (0.5, 0.3), "lognormal", (0.5, 0.3)),
    ("laplace", (1.0, 2.0), "laplace", (1.0, 2.0)),
    ("logistic", (1.0, 2.0), "logistic", (1.0, 2.0)),
    ("vonmises", (0.5, 2.0), "vonmises", (0.5, 2.0)),
    ("wald", (1.0, 3.0), "wald", (1.0, 3.0)),
    ("weibull", (1.5,), "weibull", (1.5,)),
    ("triangular", (0.0, 1.0, 3.0), "triangular", (0.0, 1.0, 3.0)),
    ("geometric", (0.3,), "geometric", (0.3,)),
    ("hypergeometric", (5, 7, 4), "hypergeometric", (5, 7, 4)),
]
SCIPY_DRAWS = [  # (name, params, scipy.stats distribution, its args, its kwargs)
    ("halfnormal", (1.0, 2.0), "halfnorm", (), {"loc": 1.0, "scale": 2.0}),
    ("pareto", (3.0, 2.0), "pareto", (3.0,), {"scale": 2.0}),
    ("gumbel", (1.0, 2.0), "gumbel_r", (), {"loc": 1.0, "scale": 2.0}),
    ("cauchy", (1.0, 2.0), "cauchy", (), {"loc": 1.0, "scale": 2.0}),
    ("halfcauchy", (1.0, 2.0), "halfcauchy", (), {"loc": 1.0, "scale": 2.0}),
    ("truncexpon", (2.0, 1.0, 3.0), "truncexpon", (2.0,), {"loc": 1.0, "scale": 3.0}),
    ("t", (4.0, 1.0, 2.0), "t", (4.0,), {"loc": 1.0, "scale": 2.0}),
    ("nbinom", (5, 0.4), "nbinom", (5, 0.4), {}),
    ("betabinom", (10, 2.0, 3.0), "betabinom", (10, 2.0, 3.0), {}),
    ("gengamma", (2.0, 3.0, 1.5), "gengamma", (2.0 / 3.0, 3.0), {"scale": 1.5}),
]


def _same_seed_draw(op, params, size=(7,)):
    rng = tensorgraph.shared(np.random.default_rng(5), borrow=True)
    return fn([], op(*params, size=size, rng=rng))()


@pytest.mark.parametrize("name, params, method, args", SCALAR_DRAWS)
def test_numpy_distributions_draw_what_numpy_draws(name, params, method, args):
    got = _same_seed_draw(getattr(basic, name), params)
    np.testing.assert_allclose(got, getattr(np.random.default_rng(5), method)(*args, size=(7,)))


@pytest.mark.parametrize("name, params, dist, args, kwargs", SCIPY_DRAWS)
def test_scipy_distributions_draw_what_scipy_draws(name, params, dist, args, kwargs):
    import scipy.stats

    got = _same_seed_draw(getattr(basic, name), params)
    want = getattr(scipy.stats, dist).rvs(*args, size=(7,), random_state=np.random.default_rng(5),
                                          **kwargs)
    np.testing.assert_allclose(got, want)


def test_distributions_are_ops_called_like_functions():
    draw = basic.normal(loc=2.0, scale=0.5, size=(3,))
    assert draw.type.shape == (3,) and isinstance(draw.owner.op, basic.RandomVariable)
    assert basic.normal.size_param(draw.owner).type.shape == (1,)
    assert list(basic.normal.dist_params(draw.owner))[0].data == 2.0
    # rng_fn takes the size last, by position or name (PyTensor calls it both ways)
    a = basic.normal.rng_fn(np.random.default_rng(1), 0.0, 1.0, (2,))
    b = basic.normal.rng_fn(np.random.default_rng(1), 0.0, 1.0, size=(2,))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="missing 2 required positional arguments: 'mean' and "
                                        "'cov'"):
        basic.multivariate_normal()
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'cov'$"):
        basic.multivariate_normal(np.zeros(2))
    with pytest.raises(TypeError, match="unexpected keyword argument 'sd'"):
        basic.normal(sd=1.0)
    assert basic.integers(4, size=(50,)).eval().max() < 4


def test_gamma_takes_scale_or_rate_and_chisquare():
    rng = tensorgraph.shared(np.random.default_rng(0))
    by_scale = basic.gamma(2.0, scale=4.0, size=(4000,), rng=rng)
    assert abs(by_scale.eval().mean() - 8.0) < 0.6
    with pytest.warns(FutureWarning, match="rate argument is deprecated"):
        by_rate = basic.gamma(2.0, rate=4.0, size=(4000,), rng=rng)
    assert abs(by_rate.eval().mean() - 0.5) < 0.05
    with pytest.warns(FutureWarning, match="rate argument is deprecated"):
        positional = basic.gamma(2.0, 4.0, size=(4000,), rng=rng)   # PyTensor: the rate
    assert abs(positional.eval().mean() - 0.5) < 0.05
    with pytest.raises(ValueError, match="not both|both rate and scale"):
        basic.gamma(2.0, scale=1.0, rate=1.0)
    with pytest.raises(ValueError, match="Must specify scale"):
        basic.gamma(2.0)
    assert abs(basic.chisquare(3.0, size=(4000,)).eval().mean() - 3.0) < 0.25
    assert basic.invgamma(3.0, 2.0, size=(5,)).eval().min() > 0
    assert basic.rayleigh(1.0, 2.0, size=(5,)).eval().min() >= 1.0


def test_vector_distributions_with_batches():
    mean, cov = np.array([1.0, -1.0]), np.array([[2.0, 0.3], [0.3, 1.0]])
    draws = basic.multivariate_normal(mean, cov, size=(5000,))
    assert draws.type.shape == (5000, 2)
    values = draws.eval()
    np.testing.assert_allclose(values.mean(0), mean, atol=0.1)
    np.testing.assert_allclose(np.cov(values.T), cov, atol=0.15)
    batched = basic.multivariate_normal(np.zeros((3, 2)), cov, method="eigh")
    assert batched.type.shape == (3, 2) and batched.owner.op.method == "eigh"
    d = basic.dirichlet(np.ones((4, 3)))
    assert d.type.shape == (4, 3)
    np.testing.assert_allclose(d.eval().sum(-1), 1.0)
    m = basic.multinomial(np.array([10, 20]), np.full((2, 3), 1 / 3))
    assert m.type.shape == (2, 3)
    np.testing.assert_array_equal(m.eval().sum(-1), [10, 20])
    c = basic.categorical(np.array([[0.0, 1.0], [1.0, 0.0]]), size=(6, 2))
    assert c.type.shape == (6, 2)
    np.testing.assert_array_equal(c.eval(), np.tile([1, 0], (6, 1)))
    assert basic.permutation(5, size=(2, 3)).type.shape == (2, 3, 5)


def test_random_stream_draws_every_distribution_and_helpers():
    srng = RandomStream(seed=3)
    x = srng.laplace(0.0, 1.0, size=(3,))
    f = fn([], x)
    assert not np.array_equal(f(), f())
    assert srng.dirichlet(np.ones(3)).type.shape == (3,)
    with pytest.raises(AttributeError, match="no distribution 'nothing'"):
        srng.nothing
    from tensorgraph.tensor.random import broadcast_params, rng, shared_rng

    m, c = broadcast_params([tt.dvector("m"), tt.dmatrix("c")], [0, 1])
    got_m, got_c = fn(list(graph_inputs_of(m, c)), [m, c])(np.zeros(3), np.zeros((3, 2)))
    assert got_m.shape == (3,) and got_c.shape == (3, 2)
    generator = shared_rng(seed=3)
    np.testing.assert_array_equal(generator.get_value().random(2),
                                  np.random.default_rng(3).random(2))
    assert rng("r").type == basic.normal(rng=generator).owner.inputs[0].type
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        shared_rng(3)
    assert basic.broadcast_shapes((3, 1), (1, 4)) == (3, 4)


def graph_inputs_of(*outputs):
    from tensorgraph.graph.basic import Constant, graph_inputs

    return [v for v in graph_inputs(outputs) if not isinstance(v, Constant)]


def test_size_from_a_static_shape():
    x = tt.TensorType("float64", (50,))("x")
    assert basic.normal(size=x.shape).type.shape == (50,)


def test_draw_dtype_lives_on_the_op_and_survives_rebuilds():
    from tensorgraph.graph.basic import clone_replace

    x = tt.vector("x", shape=(5,))
    y = basic.normal(0.0, 1.0, size=x.shape, dtype="float32")
    assert y.dtype == "float32" and y.owner.op.dtype == "float32"
    assert basic.normal.dtype == "floatX"                  # the shared op is unchanged
    x_new = tt.vector("x_new", shape=(7,))
    y_new = clone_replace(y, {x: x_new}, rebuild_strict=False)
    assert y_new.type.shape == (7,) and y_new.dtype == "float32"
    out = y_new.eval({x_new: np.zeros(7)})
    assert out.shape == (7,) and out.dtype == np.float32
    rebuilt = y.owner.op.make_node(*y.owner.inputs)       # no dtype argument to forget
    assert rebuilt.outputs[1].dtype == "float32"
    picked = basic.choice(np.array([1.5, 2.5]), size=(3,))
    assert picked.dtype == "float64"                       # choice follows a's dtype
    assert basic.choice(4, size=(3,), dtype="int32").dtype == "int32"


def test_mvnormal_cholesky_refuses_a_singular_cov_and_eigh_takes_it():
    cov = np.array([[1.0, 0.0], [0.0, 0.0]])
    rng = tensorgraph.shared(np.random.default_rng(1))
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        basic.multivariate_normal([0.0, 0.0], cov, size=(3,), rng=rng).eval()
    draws = basic.multivariate_normal([0.0, 0.0], cov, method="eigh", size=(500,),
                                      rng=rng).eval()
    assert np.all(draws[:, 1] == 0) and abs(draws[:, 0].std() - 1) < 0.15


def test_categorical_size_must_hold_the_batch_of_p():
    p = np.full((3, 2), 0.5)
    rng = np.random.default_rng(0)
    assert basic.categorical.rng_fn(rng, p, size=(4, 3)).shape == (4, 3)
    for size in [(1,), (10,), (3, 1)]:
        with pytest.raises(ValueError, match="`size` is incompatible with the shape of `p`"):
            basic.categorical.rng_fn(rng, p, size=size)


def test_choice_p_must_be_a_vector():
    with pytest.raises(ValueError, match="p must be 1-dimensional"):
        basic.choice([1, 2], p=np.full((2, 2), 0.5))


def test_permutation_op_with_batch_dimensions():
    rng = tensorgraph.shared(np.random.default_rng(3))
    op = basic.PermutationRV(ndim_supp=2, ndims_params=[2], dtype="int64")
    assert op.x_ndim == 2 and op == basic.PermutationRV(2, dtype="int64")
    x = np.arange(4 * 3 * 2).reshape((4, 3, 2))
    draw = op(x, rng=rng)
    assert draw.type.shape == (4, 3, 2)
    got = draw.eval()
    for i in range(4):   # each batch entry: its own rows, shuffled as wholes
        assert sorted(map(tuple, got[i])) == sorted(map(tuple, x[i]))
    sized = op(x, size=(2, 4), rng=rng)
    assert sized.type.shape == (2, 4, 3, 2)
    values = sized.eval()
    for j in range(2):
        for i in range(4):
            assert sorted(map(tuple, values[j, i])) == sorted(map(tuple, x[i]))
    with pytest.raises(ValueError, match="ndim_supp must be"):
        basic.PermutationRV(ndim_supp=1, ndims_params=[2])
    # the plain permutation is unchanged: numpy's draw for one x
    plain = basic.permutation(5, rng=tensorgraph.shared(np.random.default_rng(9))).eval()
    np.testing.assert_array_equal(plain, np.random.default_rng(9).permutation(5))


def test_choice_without_replacement_with_a_signature_batches_a_and_p():
    rng = tensorgraph.shared(np.random.default_rng(5))
    op = basic.ChoiceWithoutReplacement(signature="(a0,a1),(a0),(1)->(s0,a1)", dtype="int64")
    assert (op.a_ndim, op.has_p, op.core_shape_len, op.ndim_supp) == (2, True, 1, 2)
    a = np.arange(3 * 5 * 2).reshape((3, 5, 2))
    p = np.array([0.0, 0.25, 0.25, 0.25, 0.25])
    draw = op(a, p, (3,), rng=rng)
    assert draw.type.shape == (3, 3, 2)
    got = draw.eval()
    for i in range(3):   # 3 distinct rows of a[i], never its first (p = 0)
        rows = {tuple(r) for r in got[i]}
        assert len(rows) == 3 and rows <= {tuple(r) for r in a[i][1:]}
    sized = op(a, p, (2,), size=(4, 3), rng=rng)
    assert sized.type.shape == (4, 3, 2, 2) and sized.eval().shape == (4, 3, 2, 2)
    ints = basic.ChoiceWithoutReplacement(signature="(),(a),(2)->(s0,s1)", dtype="int64")
    evens_odds = np.array([[0.5, 0, 0.5, 0], [0, 0.5, 0, 0.5]])
    values = ints(4, evens_odds, (2, 1), rng=rng).eval()
    assert values.shape == (2, 2, 1)
    assert set(values[0].ravel()) == {0, 2} and set(values[1].ravel()) == {1, 3}
    with pytest.raises(ValueError, match="one literal length"):
        basic.ChoiceWithoutReplacement(signature="(a),(n)->(s0)")
    with pytest.raises(ValueError, match="output dimensions"):
        basic.ChoiceWithoutReplacement(signature="(a0,a1),(1)->(s0)")
