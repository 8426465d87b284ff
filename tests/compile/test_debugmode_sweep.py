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
``SWEEP_SIZE`` counts the checks. The static-shape part (a function per shape), a float32
pass and the dynamic 2-d and 3-d cases (the 1-d ones take every expression through DebugMode's
checks; the others add the multi-axis forms: 60 s cold) are marked ``slow`` and run with
``-m slow``.
"""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.debugmode import DebugMode
from sweep_cases import SHAPES, _expressions

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
            marks = [pytest.mark.slow] if ndim > 1 and not static else []
            cases.append(pytest.param(name, type_shape, run_on, fn, id=f"{name}-{label}",
                                      marks=marks))
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
