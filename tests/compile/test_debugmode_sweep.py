"""DebugMode over many ordinary graphs: every check (perform against C, each rewrite step,
destroy and view maps, preallocated outputs, rewriting twice) must pass on correct graphs, and
the results must equal FAST_COMPILE's.

The expressions are the ones users write every day (elementwise functions, every reduction
along every axis with and without keepdims, the softmax family, logsumexp, var/std, dot,
indexing, joins) and their gradients, on shapes with length-1 and non-square axes, with dynamic
and static input shapes. A case is one expression on one input type: one function computing
its value and, for float outputs, the gradient of a sum of squares of it.

A test compiles one expression for one input type (dynamic shapes: every shape of its
ndim goes through the same function) and names the expression and shape that failed.
``SWEEP_SIZE`` counts the checks. The static-shape part (a function per shape) and a float32
pass are marked ``slow`` and run with ``-m slow``.
"""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.debugmode import DebugMode
from tensorgraph.tensor import special

#: the shapes of the input x: every ndim with a length-1 axis, square and non-square
SHAPES = [(6,), (1,), (7, 5), (1, 5), (7, 1), (1, 1), (3, 4, 2), (2, 1, 3)]


def _pos(x):
    return abs(x) + 0.5


#: name -> x -> expression, for any ndim (elementwise: the gradient is checked as well)
ELEMENTWISE = {
    "exp": tt.exp,
    "log": lambda x: tt.log(_pos(x)),
    "log1p": lambda x: tt.log1p(abs(x)),
    "expm1": tt.expm1,
    "tanh": tt.tanh,
    "sigmoid": tt.sigmoid,
    "softplus": tt.softplus,
    "sqrt": lambda x: tt.sqrt(_pos(x)),
    "pow": lambda x: _pos(x) ** 1.5,
    "square": lambda x: x ** 2,
    "neg_abs": lambda x: -abs(x),
    "sin_cos": lambda x: tt.sin(x) * tt.cos(x),
    "erf": tt.erf,
    "clip": lambda x: tt.clip(x, -0.5, 0.5),
    "leaky_relu": lambda x: tt.switch(x > 0, x, 0.1 * x),
    "maximum": lambda x: tt.maximum(x, 0.2),
    "ratio": lambda x: x / (1 + x * x),
    "one_minus_sigmoid": lambda x: 1 - tt.sigmoid(x),
    "log_sigmoid": lambda x: tt.log(tt.sigmoid(x)),
    "log_one_minus_exp": lambda x: tt.log(1 - tt.exp(-_pos(x))),
    "log1mexp": lambda x: tt.log1mexp(-_pos(x)),
    "fused_chain": lambda x: tt.exp(-x * x) * tt.tanh(x) + tt.sigmoid(2 * x) - 1,
}

REDUCTIONS = {
    "sum": tt.sum, "prod": tt.prod, "max": tt.max, "min": tt.min, "mean": tt.mean,
    "var": tt.var, "std": tt.std,
}

#: name -> (x, axis) -> expression; axis is never None here
ALONG_AXIS = {
    "softmax": lambda x, a: special.softmax(x, axis=a),
    "log_softmax": lambda x, a: special.log_softmax(x, axis=a),
    "logsumexp": lambda x, a: tt.logsumexp(x, axis=a),
    "logsumexp_keepdims": lambda x, a: tt.logsumexp(x, axis=a, keepdims=True),
    "centered": lambda x, a: x - x.mean(axis=a, keepdims=True),
    "max_shifted": lambda x, a: x - x.max(axis=a, keepdims=True),
    "normalized": lambda x, a: (x - x.mean(axis=a, keepdims=True))
    / tt.sqrt(x.var(axis=a, keepdims=True) + 1e-3),
    "concatenate": lambda x, a: tt.concatenate([x, 2 * x], axis=a),
    "stack": lambda x, a: tt.stack([x, x + 1], axis=a),
    "cumulative_share": lambda x, a: tt.exp(x) / tt.exp(x).sum(axis=a, keepdims=True),
}


def _axes(ndim):
    """Every reduction axis: None, each axis, -1, and for 3-d the pairs."""
    axes = [None, *range(ndim), -1] if ndim > 1 else [None, 0]
    if ndim == 3:
        axes += [(0, 2), (1, 2)]
    return axes


#: name -> x -> expression, by the ndims it applies to
def _indexing(ndim):
    cases = {
        "first_rows": lambda x: x[1:],
        "reversed": lambda x: x[::-1],
        "first": lambda x: x[0] * 2,
        "last_slice": lambda x: x[-1:],
        "advanced": lambda x: x[[0, -1, 0]],
        "set_first": lambda x: tt.set_subtensor(x[0], 0.5) * x,
        "inc_tail": lambda x: tt.inc_subtensor(x[1:], 1.0) * x,
        "flatten_exp": lambda x: tt.exp(x.flatten()),
    }
    if ndim >= 2:
        cases.update({
            "column": lambda x: x[:, 0],
            "strided_columns": lambda x: x[:, ::2],
            "transpose_exp": lambda x: tt.exp(x.T),
            "reversed_columns_tanh": lambda x: tt.tanh(x[:, ::-1]),
        })
    return cases


def _products(ndim):
    if ndim == 1:
        return {"dot_self": lambda x: tt.dot(x, x), "outer": lambda x: tt.outer(x, x)}
    if ndim == 2:
        return {
            "gram": lambda x: tt.dot(x, x.T),
            "gram_t": lambda x: tt.dot(x.T, x),
            "matvec": lambda x: tt.dot(x, tt.ones_like(x[0]) * 0.5),
            "affine_tanh": lambda x: tt.tanh(tt.dot(x, x.T) + x.sum(axis=1)),
            "crossentropy_onehot": lambda x: special.categorical_crossentropy(
                special.softmax(x, axis=-1), tt.eq(x, x.max(axis=-1, keepdims=True))),
            "crossentropy_labels": lambda x: special.categorical_crossentropy(
                special.softmax(x, axis=-1), tt.argmax(x, axis=-1)),
            "binary_crossentropy": lambda x: special.binary_crossentropy(
                tt.sigmoid(x), tt.cast(x > 0, "float64")),
        }
    return {"matmul_batch": lambda x: tt.matmul(x, x.dimshuffle(0, 2, 1))}


def _discrete(ndim):
    """Integer and bool results (no gradient)."""
    cases = {}
    for axis in _axes(ndim):
        if isinstance(axis, tuple):
            continue
        cases[f"argmax[{axis}]"] = lambda x, a=axis: tt.argmax(x, axis=a)
        cases[f"argmin[{axis}]"] = lambda x, a=axis: tt.argmin(x, axis=a)
        cases[f"any[{axis}]"] = lambda x, a=axis: tt.any(x > 0.5, axis=a)
        cases[f"all[{axis}]"] = lambda x, a=axis: tt.all(x > -1.0, axis=a, keepdims=True)
    return cases


def _expressions(ndim):
    """name -> x -> expression for inputs of ``ndim`` dimensions."""
    cases = dict(ELEMENTWISE)
    for (name, fn), axis, keepdims in itertools.product(REDUCTIONS.items(), _axes(ndim),
                                                        (False, True)):
        cases[f"{name}[{axis}{', keepdims' if keepdims else ''}]"] = (
            lambda x, fn=fn, a=axis, k=keepdims: fn(x, axis=a, keepdims=k))
    for (name, fn), axis in itertools.product(ALONG_AXIS.items(), range(ndim)):
        cases[f"{name}[{axis}]"] = lambda x, fn=fn, a=axis: fn(x, a)
    cases.update(_indexing(ndim))
    cases.update(_products(ndim))
    cases.update(_discrete(ndim))
    return cases


def _cases(static: bool):
    """pytest params of (id, static shape of x, the shapes x takes, expression builder).

    Dynamic types (``static=False``): one function per expression and ndim, called on every
    shape of that ndim. Static types: the exact type of each shape with a length-1 axis
    (those dimensions broadcast, and rewrites treat them differently), one function each.
    """
    cases = []
    for ndim in sorted({len(s) for s in SHAPES}):
        shapes = [s for s in SHAPES if len(s) == ndim]
        types = ([(s, [s], "x".join(map(str, s))) for s in shapes if 1 in s] if static
                 else [((None,) * ndim, shapes, f"{ndim}d")])
        for (type_shape, run_on, label), (name, fn) in itertools.product(
                types, _expressions(ndim).items()):
            cases.append(pytest.param(name, type_shape, run_on, fn, id=f"{name}-{label}"))
    return cases


DYNAMIC, STATIC = _cases(static=False), _cases(static=True)
#: checks made (an expression on an input shape: its value and, for floats, its gradient)
SWEEP_SIZE = {"dynamic float64": sum(len(c.values[2]) for c in DYNAMIC),
              "static float64 (slow)": sum(len(c.values[2]) for c in STATIC),
              "dynamic float32 (slow)": sum(len(c.values[2]) for c in DYNAMIC)}
#: how close DebugMode's results must be to FAST_COMPILE's (other rewrites, fused C loops)
AGREEMENT = {"float64": dict(rtol=1e-9, atol=1e-12), "float32": dict(rtol=2e-4, atol=1e-5)}


def _mode():
    # patience 2: rewriting twice checks determinism; nan/inf are compared with
    # FAST_COMPILE instead of refused (std's gradient over a length-1 axis is nan)
    return DebugMode(patience=2, check_isfinite=False,
                     check_preallocated_output="c_contiguous:f_contiguous:strided")


def _check(name, type_shape, shapes, fn, dtype="float64"):
    x = tt.tensor(dtype, shape=type_shape, name="x")
    out = fn(x)
    outputs = [out]
    if out.dtype.startswith("float"):
        outputs.append(tg.grad((out ** 2).sum(), x))
    checked = tg.function([x], outputs, mode=_mode())
    reference = tg.function([x], outputs, mode="FAST_COMPILE")
    for shape in shapes:
        rng = np.random.default_rng(zlib.crc32(f"{name}{shape}".encode()))
        value = rng.standard_normal(shape).astype(dtype)
        with np.errstate(all="ignore"):
            try:
                got = checked(value)
            except Exception as exc:
                raise AssertionError(f"DebugMode on {name} of an input of shape {shape}: "
                                     f"{type(exc).__name__}: {exc}") from exc
            expected = reference(value)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, **AGREEMENT[dtype],
                                       err_msg=f"{name} on an input of shape {shape}")


@pytest.mark.parametrize("name, type_shape, shapes, fn", DYNAMIC)
def test_debugmode_sweep(name, type_shape, shapes, fn):
    _check(name, type_shape, shapes, fn)


@pytest.mark.slow
@pytest.mark.parametrize("name, type_shape, shapes, fn", STATIC)
def test_debugmode_sweep_static_shapes(name, type_shape, shapes, fn):
    """The same expressions on inputs whose length-1 axes are static (a function per shape:
    three times the compiling). Marked slow (``--all`` or ``-m slow`` runs it)."""
    _check(name, type_shape, shapes, fn)


@pytest.mark.slow
@pytest.mark.parametrize("name, type_shape, shapes, fn", DYNAMIC)
def test_debugmode_sweep_float32(name, type_shape, shapes, fn):
    """The dynamic-shape sweep in float32 (DebugMode's float32 tolerances, other C)."""
    _check(name, type_shape, shapes, fn, "float32")
