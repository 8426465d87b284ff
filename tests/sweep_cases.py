"""The expressions of the DebugMode sweep (tests/compile/test_debugmode_sweep.py), shared with
the tiers test (tests/link/test_tiers.py): elementwise functions, every reduction along every
axis, the softmax family, indexing, products and discrete ops, as builders of one input."""

from __future__ import annotations

import itertools

import tensorgraph.tensor as tt
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
