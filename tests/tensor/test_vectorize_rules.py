"""vectorize_graph's rules for the shape, creation, join, diagonal and indexing ops
(tensorgraph.tensor.vectorize_rules) and the softmax / dot rules of tensor.blockwise: each batched
graph computes what numpy computes item by item, and uses the op's own batched form (no
Blockwise loop) unless a size, shape or index is itself batched."""

import pickle
import warnings

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph.basic import io_toposort
from tensorgraph.graph.replace import vectorize_graph
from tensorgraph.link.c.codegen import node_c_code
from tensorgraph.tensor.blockwise import Blockwise
from tensorgraph.tensor.diagonal import ExtractDiag
from tensorgraph.tensor.join import Join
from tensorgraph.tensor.shape import Reshape, SpecifyShape
from tensorgraph.tensor.special import LogSoftmax, Softmax
from tensorgraph.tensor.subtensor import AdvancedSubtensor, Subtensor

RNG = np.random.default_rng(7)


def _ops(outputs, inputs):
    outputs = outputs if isinstance(outputs, list) else [outputs]
    return [n.op for n in io_toposort(inputs, outputs)]


def _has_blockwise(outputs, inputs):
    return any(isinstance(op, Blockwise) for op in _ops(outputs, inputs))


def _compiled_has_blockwise(f):
    return any(isinstance(n.op, Blockwise) for n in f.maker.fgraph.apply_nodes)


def _check(core_fn, signature, inputs, values, blockwise=False):
    """``tt.vectorize(core_fn, signature)`` on ``inputs`` against np.vectorize of the same
    function on numpy arrays; whether a Blockwise is left after compiling."""
    out = tt.vectorize(core_fn, signature=signature)(*inputs)
    f = tg.function(inputs, out)
    expected = np.vectorize(core_fn, signature=signature)(*values)
    np.testing.assert_allclose(f(*values), expected)
    assert _compiled_has_blockwise(f) == blockwise
    return f


def test_shape_of_a_batch_repeats_the_core_shape():
    x = tt.dmatrix("x")
    xs = tt.tensor(dtype="float64", shape=(None, None, None, None))
    out = vectorize_graph(tt.shape(x), {x: xs})
    assert not _has_blockwise(out, [xs])
    value = np.zeros((4, 6, 5, 3))
    got = out.eval({xs: value})
    np.testing.assert_array_equal(got, np.broadcast_to([5, 3], (4, 6, 2)))
    assert got.dtype == np.int64


def test_reshape_keeps_the_batch_dimensions_in_front():
    n = tt.lscalar("n")
    v = tt.dvector("v")
    m = tt.dmatrix("m")
    out = tt.reshape(v, (-1, n))
    batched = vectorize_graph(out, {v: m})
    assert isinstance(batched.owner.op, Reshape) and batched.owner.op.ndim == 3
    mv = RNG.standard_normal((5, 6))
    np.testing.assert_array_equal(batched.eval({m: mv, n: 3}), mv.reshape(5, 2, 3))
    # a shape vector longer by the batch dimensions is the whole new shape
    full = tt.as_tensor_variable([5, -1, n])
    shp = out.owner.inputs[1]
    np.testing.assert_array_equal(vectorize_graph(out, {v: m, shp: full}).eval({m: mv, n: 2}),
                                  mv.reshape(5, 3, 2))
    # one shape per batch item: a Blockwise, each item reshaped its own way
    shapes = tt.lmatrix("shapes")
    per_item = vectorize_graph(out, {shp: shapes})
    assert _has_blockwise(per_item, [shapes, v])
    np.testing.assert_array_equal(
        per_item.eval({shapes: np.array([[2, 3], [2, -1]]), v: np.arange(6.0)}),
        [np.arange(6.0).reshape(2, 3)] * 2)
    with pytest.raises(ValueError, match="Invalid shape length"):
        vectorize_graph(out, {shp: tt.as_tensor_variable([5, 2, n])})
    with pytest.raises(ValueError, match="expected 2 or 3"):
        vectorize_graph(out, {v: m, shp: tt.as_tensor_variable([5, 3, 2, n])})


def test_specify_shape_asserts_the_core_sizes_only():
    n = tt.lscalar("n")
    m = tt.dmatrix("m")
    t = tt.dtensor3("t")
    out = tt.specify_shape(m, (n, None))
    batched = vectorize_graph(out, {m: t})
    assert isinstance(batched.owner.op, SpecifyShape) and batched.owner.op.checked == (1,)
    tv = RNG.standard_normal((2, 4, 3))
    np.testing.assert_array_equal(batched.eval({t: tv, n: 4}), tv)
    with pytest.raises(AssertionError, match="dimension 1 has size 4"):
        batched.eval({t: tv, n: 3})
    with pytest.raises(NotImplementedError, match="cannot be batched"):
        vectorize_graph(out, {n: tt.lvector("ns")})


@pytest.mark.parametrize("expand_first", [False, True])
def test_alloc_puts_the_value_batch_in_front(expand_first):
    x = tt.dscalar("x")
    out = tt.alloc(x[None, None] if expand_first else x, 3, 5)
    xs = tt.tensor(dtype="float64", shape=(7,))
    batched = vectorize_graph(out, {x: xs})
    assert not _has_blockwise(batched, [xs])
    assert batched.type.shape == (7, 3, 5)
    xv = RNG.standard_normal(7)
    np.testing.assert_array_equal(tg.function([xs], batched)(xv),
                                  np.broadcast_to(xv[:, None, None], (7, 3, 5)))


def test_alloc_of_a_vector_keeps_it_on_the_last_axis():
    v = tt.dvector("v")
    n = tt.lscalar("n")
    out = tt.alloc(v, n, 4)
    vs = tt.dmatrix("vs")
    batched = vectorize_graph(out, {v: vs})
    assert not _has_blockwise(batched, [vs, n])
    vv = RNG.standard_normal((2, 4))
    np.testing.assert_array_equal(batched.eval({vs: vv, n: 3}),
                                  np.broadcast_to(vv[:, None, :], (2, 3, 4)))
    # a batched size gives each item its own shape: a Blockwise
    ns = tt.lvector("ns")
    per_item = vectorize_graph(out, {n: ns})
    assert _has_blockwise(per_item, [v, ns])


@pytest.mark.parametrize("shapes", [[(3,)], [(3,), (3,), (3,)], [(3,), (5, 3), ()],
                                    [(2, 1), (2, 4)]])
def test_make_vector_stacks_the_batched_scalars_last(shapes):
    inputs = [tt.tensor(dtype="float64", shape=s) for s in shapes]
    values = [RNG.standard_normal(s) for s in shapes]
    sig = ",".join(["()"] * len(shapes)) + f"->({len(shapes)})"
    _check(lambda *s: tt.stack(s) if isinstance(s[0], tt.TensorVariable) else np.stack(s),
           sig, inputs, values)


def test_make_vector_casts_to_its_dtype():
    i = tt.iscalar("i")
    d = tt.dscalar("d")
    out = tt.make_vector(i, d)
    iv = tt.ivector("iv")
    batched = vectorize_graph(out, {i: iv})
    assert batched.dtype == "float64" and batched.type.shape == (None, 2)
    np.testing.assert_array_equal(
        batched.eval({iv: np.array([1, 2], dtype="int32"), d: 0.5}), [[1, 0.5], [2, 0.5]])


@pytest.mark.parametrize("axis", [1, -2])
def test_join_shifts_its_axis_when_batches_match(axis):
    def core(a, b):
        if isinstance(a, np.ndarray):
            return np.concatenate([a, b], axis=axis)
        return tt.join(axis, a, b)

    x = tt.tensor(dtype="float64", shape=(4, 2, 3, 5))
    y = tt.tensor(dtype="float64", shape=(4, 2, 3, 5))
    values = [RNG.standard_normal((4, 2, 3, 5)) for _ in range(2)]
    f = _check(core, "(a,b1,c),(a,b2,c)->(a,b,c)", [x, y], values)
    assert any(isinstance(n.op, Join) and n.op.axis == 2 for n in f.maker.fgraph.apply_nodes)
    # one input unbatched (or batched with size 1): the Blockwise broadcasts the batch
    for y_shape in [(2, 3, 5), (1, 2, 3, 5)]:
        y = tt.tensor(dtype="float64", shape=y_shape)
        _check(core, "(a,b1,c),(a,b2,c)->(a,b,c)", [x, y],
               [values[0], RNG.standard_normal(y_shape)], blockwise=True)


def test_extract_diag_shifts_its_axes():
    def core(a):
        if isinstance(a, np.ndarray):
            return np.diagonal(a, offset=1, axis1=0, axis2=2)
        return tt.diagonal(a, offset=1, axis1=0, axis2=2)

    x = tt.tensor(dtype="float64", shape=(5, 5, 5, 5))
    f = _check(core, "(a1,b,a2)->(b,a)", [x], [RNG.standard_normal((5, 5, 5, 5))])
    (diag,) = [n.op for n in f.maker.fgraph.apply_nodes if isinstance(n.op, ExtractDiag)]
    assert (diag.axis1, diag.axis2) == (1, 3)


def test_basic_index_of_a_batched_x_gets_leading_slices():
    x = tt.dtensor3("x")
    k = tt.lscalar("k")
    out = x[:, k, 1:]
    xs = tt.tensor(dtype="float64", shape=(None, None, None, None))
    batched = vectorize_graph(out, {x: xs})
    assert isinstance(batched.owner.op, Subtensor) and not _has_blockwise(batched, [xs, k])
    xv = RNG.standard_normal((2, 3, 4, 5))
    np.testing.assert_array_equal(tg.function([xs, k], batched)(xv, 2), xv[:, :, 2, 1:])
    # a batched index: one index per item, through the Blockwise
    ks = tt.lvector("ks")
    per_item = vectorize_graph(out, {x: xs, k: ks})
    assert _has_blockwise(per_item, [xs, ks])
    np.testing.assert_array_equal(tg.function([xs, ks], per_item)(xv, np.array([0, 3])),
                                  np.stack([xv[0][:, 0, 1:], xv[1][:, 3, 1:]]))


@pytest.mark.parametrize("core, blockwise", [
    (lambda x, i: x[:, i, :], False),
    (lambda x, i: x[:, i, i], False),
    (lambda x, i: x[i], False),
    (lambda x, i: x[i, None], False),
    (lambda x, i: x[:, 1, i], False),
    (lambda x, i: x[i, :, i], True),      # numpy puts separated index dimensions first
    (lambda x, i: x[1, :, i], True),
])
def test_advanced_index_of_a_batched_x(core, blockwise):
    x = tt.tensor(dtype="float64", shape=(3, 5, 5, 5))
    i = tt.tensor(dtype="int64", shape=(2,))
    xv, iv = RNG.standard_normal((3, 5, 5, 5)), np.array([4, 1])
    core_x = tt.tensor(dtype="float64", shape=(5, 5, 5))
    out = vectorize_graph(core(core_x, i), {core_x: x})
    f = tg.function([x, i], out)
    np.testing.assert_array_equal(f(xv, iv), np.stack([core(item, iv) for item in xv]))
    assert _compiled_has_blockwise(f) == blockwise
    if not blockwise:
        assert isinstance(out.owner.op, AdvancedSubtensor)


@pytest.mark.parametrize("op_class, fn, np_fn", [
    (Softmax, tt.special.softmax,
     lambda a, axis: np.exp(a) / np.exp(a).sum(axis=axis, keepdims=True)),
    (LogSoftmax, tt.special.log_softmax,
     lambda a, axis: a - np.log(np.exp(a).sum(axis=axis, keepdims=True))),
])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_softmax_batches_over_its_axis(op_class, fn, np_fn, axis):
    x = tt.dtensor3("x")
    xs = tt.tensor(dtype="float64", shape=(None, None, None, None, None))
    batched = vectorize_graph(fn(x, axis=axis), {x: xs})
    assert not _has_blockwise(batched, [xs])
    assert isinstance(batched.owner.op, op_class)
    if axis is None:
        assert batched.owner.op.axis == (2, 3, 4)
    else:
        assert batched.owner.op.axis == (axis % 3 + 2,)
    xv = RNG.standard_normal((2, 3, 4, 2, 3))
    expected = np.stack([np.stack([np_fn(item, axis) for item in row]) for row in xv])
    f = tg.function([xs], batched)
    np.testing.assert_allclose(f(xv), expected, rtol=1e-12)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(f))(xv), expected, rtol=1e-12)
    empty = np.zeros((0, 3, 4, 2, 3))
    assert f(empty).shape == empty.shape


@pytest.mark.parametrize("axis", [(1, 2), (0, 1, 2), (0, 2), ()])
@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_softmax_over_a_tuple_of_axes(axis, mode):
    """Neighbouring axes run in C (as one axis of their sizes' product); others in perform."""
    x = tt.dtensor3("x")
    xv = RNG.standard_normal((2, 3, 4)) * 30
    if axis:
        xv[0, 0, 0] = -np.inf
    shifted = xv - xv.max(axis=axis, keepdims=True)
    expected_log = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    expected = np.exp(shifted) / np.exp(shifted).sum(axis=axis, keepdims=True)
    f = tg.function([x], [tt.special.softmax(x, axis=axis), tt.special.log_softmax(x, axis=axis)],
                    mode=mode)
    got, got_log = f(xv)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    # log_softmax is x - max - log(sum): a value near 0 is the difference of two terms near 1,
    # so its error is an ulp of 1, not of itself (the C's log and exp are not numpy's)
    np.testing.assert_allclose(got_log, expected_log, rtol=1e-12, atol=1e-14)
    has_c = [node_c_code(n, "n", ["x"], ["z"], {"ctx": "ctx", "fail": "goto fail;"})
             is not None for n in f.maker.fgraph.toposort()
             if isinstance(n.op, (Softmax, LogSoftmax))]
    assert has_c == [axis in ((1, 2), (0, 1, 2))] * 2
    if axis:
        from tensorgraph.gradient import verify_grad

        verify_grad(lambda a: tt.special.softmax(a, axis=axis), [RNG.standard_normal((2, 3, 4))],
                    rng=np.random.default_rng(1))


def test_replacing_with_same_ndim_rebuilds_the_same_ops():
    a, b = tt.dmatrix("a"), tt.dvector("b")
    out = tt.dot(a, b)
    c = tt.dmatrix("c")
    new = vectorize_graph(out, {a: c})
    assert new.owner.op == out.owner.op and new.owner.inputs[0] is c
    sm = tt.special.softmax(b, axis=None)
    b2 = tt.dvector("b2")
    assert vectorize_graph(sm, {b: b2}).owner.op == sm.owner.op


def test_batched_function_is_thread_safe_and_pickles():
    from concurrent.futures import ThreadPoolExecutor

    x = tt.dmatrix("x")
    xs = tt.dtensor3("xs")
    out = vectorize_graph(tt.reshape(x[:, 1:], (-1,)).sum() + tt.shape(x)[0], {x: xs})
    f = tg.function([xs], out)
    values = [RNG.standard_normal((3, 4, 5)) for _ in range(8)]
    expected = [v[:, :, 1:].reshape(3, -1).sum(axis=1) + 4 for v in values]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(f, values))
    for got, want in zip(results, expected):
        np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(f))(values[0]), expected[0])


def test_blockwise_shapes_come_from_the_core_op_without_running_it():
    from tensorgraph.tensor.creation import Eye
    from tensorgraph.tensor.linalg.inverse import MatrixInverse

    x = tt.dtensor3("x")
    inv = Blockwise(MatrixInverse(), signature="(m,m)->(m,m)")(x)
    f = tg.function([x], inv.shape)
    assert not any(isinstance(n.op, Blockwise) for n in f.maker.fgraph.toposort())
    assert list(f(np.zeros((5, 2, 2)))) == [5, 2, 2]
    # sizes that are values of a batched input: read from the computed output instead
    n = tt.lvector("n")
    eyes = Blockwise(Eye("float64"), core_ndims=(0, 0, 0))(n, n, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # no rewrite fails on a dangling size
        g = tg.function([n], eyes.shape)
    assert list(g(np.array([3, 3]))) == [2, 3, 3]


def test_blockwise_names_the_batch_index_of_the_item_that_fails():
    from tensorgraph.tensor.linalg.inverse import MatrixInverse

    x = tt.dtensor4("x")
    f = tg.function([x], Blockwise(MatrixInverse(), signature="(m,m)->(m,m)")(x),
                    mode="FAST_COMPILE")
    bad = np.stack([np.eye(2)] * 6).reshape(2, 3, 2, 2)
    bad[1, 2] = 0
    with pytest.raises(np.linalg.LinAlgError, match=r"singular \(at batch index \(1, 2\)\)"):
        f(bad)


def test_the_rules_load_with_the_first_vectorized_node_not_with_tensors():
    """``import tensorgraph.tensor`` leaves this module out (it is not part of the tensor
    namespace); ``vectorize_node`` loads it (hooks.load_vectorize_rules), so a Reshape still
    batches as a Reshape in a process that never imported it."""
    import subprocess
    import sys

    code = ("import sys\nimport tensorgraph.tensor as tt\n"
            "from tensorgraph.graph.replace import vectorize_graph\n"
            "assert 'tensorgraph.tensor.vectorize_rules' not in sys.modules\n"
            "v, m = tt.dvector('v'), tt.dmatrix('m')\n"
            "out = vectorize_graph(tt.reshape(v, (2, 3)), {v: m})\n"
            "assert type(out.owner.op).__name__ == 'Reshape', out.owner.op\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
