"""Automatic differentiation: ``grad`` (reverse mode), ``Lop``/``Rop`` (PyTensor 3:
``pullback``/``pushforward``), ``jacobian``, ``hessian``, ``hessian_vector_product``,
``subgraph_grad`` and ``verify_grad`` (finite differences), with Theano / PyTensor names and
semantics; ``zero_grad``, ``disconnected_grad``, ``undefined_grad``, ``grad_clip`` and
``grad_scale`` wrap a value to change only its gradient (rewriting removes them).

Reverse mode walks the graph from the cost down to the variables asked for, calling each node's
``op.L_op(inputs, outputs, output_grads)`` (which defaults to ``op.grad``) and summing the
contributions of every client of a variable. ``op.connection_pattern(node)`` tells which outputs
an input influences at all.

Two special types mark gradients that are not ordinary tensors:

- ``DisconnectedType``: the input does not influence the outputs (an index, a shape, a path
  stopped by ``consider_constant``). ``grad`` turns it into zeros, ``None`` or raises, as asked.
- ``NullType``: the gradient exists in principle but is undefined (``grad_undefined``, e.g. the
  derivative of ``argmax``) or not written yet (``grad_not_implemented``). It propagates: a
  gradient with an undefined part is undefined, and ``grad`` raises by default.

Gradients w.r.t. integer or boolean variables are zero (integers cannot move infinitesimally).
A gradient has the dtype of its variable, so float32 graphs stay float32.

``jacobian`` loops over the elements of the (flattened) expression with ``IndexLoop``, an Op
that evaluates an inner graph (the gradient of row ``i``) for every ``i`` in ``range(n)``, ``n``
symbolic, and stacks the results; the row-independent part of that graph is computed once,
outside the loop. ``jacobian(..., vectorize=True)`` instead vectorizes one vector-Jacobian
product over the rows of the identity (``vectorize_graph``).

``grad`` starts from a constant one tagged ``seed_of`` the cost: ``function()`` counts the
inputs of the cost as used by a function computing its gradient, as PyTensor does (its seed
is computed from the cost), and a disconnected ``wrt`` gets ``fill(wrt, 0)``.
"""

from __future__ import annotations

import functools
import sys
import warnings

import numpy as np

from tensorgraph import hooks
from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import (
    Apply,
    Constant,
    Variable,
    ancestors,
    clone_replace,
    graph_inputs,
    io_toposort,
)
from tensorgraph.graph.errors import reraise_with_node
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.graph.gradient_types import DisconnectedType, NullType, disconnected_type
from tensorgraph.graph.op import HasInnerGraph, Op, compute_test_values
from tensorgraph.graph.replace import vectorize_graph
from tensorgraph.graph.utils import building_gradient
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_canonicalize
from tensorgraph.scalar.basic import ScalarType, as_scalar, register_tensor_ops

__all__ = [
    "DisconnectedType", "disconnected_type", "NullType", "grad_undefined", "grad_not_implemented",
    "DisconnectedInputError", "NullTypeGradError", "GradientError", "grad", "Lop", "Rop",
    "pullback", "pushforward", "jacobian", "hessian", "hessian_vector_product",
    "subgraph_grad", "verify_grad", "numeric_grad", "IndexLoop", "ZeroGrad", "DisconnectedGrad",
    "UndefinedGrad", "GradClip", "GradScale", "zero_grad", "disconnected_grad",
    "undefined_grad", "grad_clip", "grad_scale", "zero_grad_", "disconnected_grad_",
    "undefined_grad_",
]


# ----------------------------------------------------------------------------------------------
# Undefined gradients (DisconnectedType and NullType live in graph/gradient_types.py)


def grad_undefined(op, x_pos: int, x, comment: str = "") -> Variable:
    """The gradient of ``op``'s input ``x_pos`` is mathematically undefined (return from L_op)."""
    why = (f"the gradient of {op} with respect to its input {x_pos} ({x}) is mathematically "
           f"undefined. {comment}").strip()
    return NullType(why)()


def grad_not_implemented(op, x_pos: int, x, comment: str = "") -> Variable:
    """The gradient of ``op``'s input ``x_pos`` exists but is not implemented (return from L_op)."""
    why = (f"the gradient of {op} with respect to its input {x_pos} ({x}) is not implemented. "
           f"{comment}").strip()
    return NullType(why)()


class DisconnectedInputError(ValueError):
    """``grad`` was asked for a variable that the cost does not depend on (differentiably)."""


class NullTypeGradError(TypeError):
    """A requested gradient is undefined or not implemented (see the message for which op)."""


class GradientError(Exception):
    """``verify_grad`` found a symbolic gradient that disagrees with finite differences.

    Attributes: ``arg`` (input index), ``err_pos`` (index into that input), ``shape``,
    ``num_grad`` and ``analytic_grad`` (the two values there), ``abs_err``, ``rel_err``,
    ``abs_tol``, ``rel_tol``.
    """

    def __init__(self, arg, err_pos, shape, num_grad, analytic_grad, abs_err, rel_err,
                 abs_tol, rel_tol):
        self.arg, self.err_pos, self.shape = arg, err_pos, shape
        self.num_grad, self.analytic_grad = num_grad, analytic_grad
        self.abs_err, self.rel_err = abs_err, rel_err
        self.abs_tol, self.rel_tol = abs_tol, rel_tol
        super().__init__(
            f"gradient check failed for input {arg} of shape {shape} at index {err_pos}: "
            f"finite differences give {num_grad!r}, the symbolic gradient gives "
            f"{analytic_grad!r} (abs error {abs_err:.3g} > abs_tol {abs_tol:.3g} and rel error "
            f"{rel_err:.3g} > rel_tol {rel_tol:.3g})")


# ----------------------------------------------------------------------------------------------
# Helpers


def _is_special(var) -> bool:
    return isinstance(var.type, (DisconnectedType, NullType))


def _dtype(var):
    return getattr(var.type, "dtype", None)


def _is_float(var) -> bool:
    dtype = _dtype(var)
    return dtype is not None and dtype.startswith(("float", "complex"))


def _is_discrete(var) -> bool:
    dtype = _dtype(var)
    return dtype is not None and not dtype.startswith(("float", "complex"))


def _float_dtype(var) -> str:
    """The dtype gradients w.r.t. ``var`` get: its own if float, else ``config.floatX``."""
    return _dtype(var) if _is_float(var) else config.floatX


def _float_zeros_like(var):
    return _creation.zeros_like(var, dtype=_float_dtype(var))


def _seed(cost):
    """The gradient of the cost w.r.t. itself: a fresh constant one, tagged ``seed_of`` the
    cost. PyTensor's seed is ``fill(cost, 1)``, so a gradient's graph reads every input of
    the cost; ``function()`` honours the tag the same way (an input the cost reads is used)
    without computing the cost or differentiating the fill."""

    one = _type.TensorType(_float_dtype(cost), ())().type.make_constant(
        np.ones((), dtype=_float_dtype(cost)))
    one.tag.seed_of = cost
    return one


def _filled_zeros(var):
    """Zeros shaped like ``var`` that read ``var`` (``fill(var, 0)``, PyTensor's form): the
    gradient returned for a disconnected ``var``, so that a function computing it still
    counts ``var`` as used."""
    if _dtype(var) is None:
        return _float_zeros_like(var)
    return _math.second(var, np.zeros((), dtype=_float_dtype(var)))


def _as_list(x, what: str) -> tuple[list, bool]:
    """(list of items, whether ``x`` was a single item)."""
    if isinstance(x, (list, tuple)):
        return list(x), False
    if x is None:
        raise TypeError(f"{what} is None")
    return [x], True


def _format_as(items, like):
    """Return ``items`` in the container ``like`` came in (single item, list or tuple)."""
    if isinstance(like, tuple):
        return tuple(items)
    if isinstance(like, list):
        return list(items)
    return items[0]


def _no_test_values():
    """Building inner graphs (loop bodies, dummy cotangents) computes no test values: their
    placeholders have none, and the outer node computes its own."""
    return config.change_flags(compute_test_value="off")


def _fill_test_values(variables) -> None:
    """Compute the missing test values of ``variables`` (and of what they need), when test
    values are on: for graphs built with them off, or copied by ``clone_replace``."""

    mode = config.compute_test_value
    if mode == "off":
        return
    for node in io_toposort(graph_inputs(variables), variables):
        if not all(hasattr(out.tag, "test_value") for out in node.outputs):
            compute_test_values(node, mode)


def _check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")


# ----------------------------------------------------------------------------------------------
# Reverse mode


def _backprop(seeds: dict, wrt: list, consider_constant, cost_name):
    """Propagate the ``seeds`` {variable: gradient} down to ``wrt``.

    Returns {wrt variable: total gradient, or None when no path reaches it}.
    """
    blockers = set(consider_constant)
    outputs = list(seeds)
    origins = outputs
    nodes = io_toposort(blockers, outputs)

    # Which variables depend (through connected op inputs) on some wrt variable.
    depends = set(wrt)
    patterns = {}
    for node in nodes:
        pattern = node.op.connection_pattern(node)
        patterns[node] = pattern
        for j, out in enumerate(node.outputs):
            if out in blockers and out not in depends:
                continue
            if any(pattern[i][j] for i, inp in enumerate(node.inputs) if inp in depends):
                depends.add(out)

    terms: dict[Variable, list] = {var: [g] for var, g in seeds.items()}
    totals: dict[Variable, Variable | None] = {}
    # variables the user already has (never renamed, even when a gradient is one of them)
    existing = set(ancestors(outputs)) | set(ancestors(seeds.values()))

    def total(var):
        if var in totals:
            return totals[var]
        parts = terms.get(var)
        if not parts:
            result = None
        else:
            nulls = [p for p in parts if isinstance(p.type, NullType)]
            if nulls:
                result = nulls[0]
            else:
                result = parts[0] if len(parts) == 1 else _math.add(*parts)
                if _is_float(var) and _dtype(result) != _dtype(var):
                    result = _math.cast(result, _dtype(var))
                if isinstance(var.type, ScalarType) and not isinstance(result.type, ScalarType):
                    # scalar ops' gradients are 0-d tensor graphs; a scalar gets a scalar
                    result = as_scalar(result)
                if (cost_name is not None and var.name is not None and result.name is None
                        and result not in existing):
                    result.name = f"(d{cost_name}/d{var.name})"
        totals[var] = result
        return result

    for node in reversed(nodes):
        needed = [i for i, inp in enumerate(node.inputs) if inp in depends]
        if not needed:
            continue
        out_grads = [None if (out in blockers or out not in depends) else total(out)
                     for out in node.outputs]
        if all(g is None for g in out_grads):
            continue
        pattern = patterns[node]
        to_compute = []
        for i in needed:
            linked = [out_grads[j] for j in range(len(node.outputs))
                      if pattern[i][j] and out_grads[j] is not None]
            if not linked:
                continue
            nulls = [g for g in linked if isinstance(g.type, NullType)]
            if nulls:
                terms.setdefault(node.inputs[i], []).append(nulls[0])
            else:
                to_compute.append(i)
        if not to_compute:
            continue
        input_grads = _call_l_op(node, out_grads)
        for i in to_compute:
            inp, term = node.inputs[i], input_grads[i]
            if isinstance(term.type, DisconnectedType):
                continue
            if not isinstance(term.type, NullType):
                term = _check_term(node, i, inp, term, origins)
            terms.setdefault(inp, []).append(term)

    return {var: total(var) for var in wrt}


def _call_l_op(node, out_grads):
    """Call ``node.op.L_op`` with a usable gradient for every output, and check what comes back."""
    ograds = []
    for out, g in zip(node.outputs, out_grads):
        if g is None or isinstance(g.type, NullType):
            g = _float_zeros_like(out) if _dtype(out) is not None else disconnected_type()
        elif _is_float(out) and _dtype(g) != _dtype(out):
            g = _math.cast(g, _dtype(out))
        ograds.append(g)
    input_grads = node.op.L_op(list(node.inputs), list(node.outputs), ograds)
    if not isinstance(input_grads, (list, tuple)):
        raise TypeError(f"{node.op}.L_op/grad must return a list with one gradient per input "
                        f"({len(node.inputs)}), got {input_grads!r}")
    if len(input_grads) != len(node.inputs):   # a list of the wrong length: a bad value
        raise ValueError(f"{node.op}.L_op/grad must return a list with one gradient per input "
                         f"({len(node.inputs)}), got {len(input_grads)}: {input_grads!r}")
    checked = []
    for i, g in enumerate(input_grads):
        if g is None:
            raise TypeError(f"{node.op}.L_op/grad returned None for input {i}; return "
                            "disconnected_type() for an input that does not influence the "
                            "outputs, or grad_undefined(...) / grad_not_implemented(...)")
        if not isinstance(g, Variable):
            g = _basic.as_tensor_variable(g)
        checked.append(g)
    return checked


def _check_term(node, i, inp, term, origins=()):
    """A gradient term for ``node.inputs[i]`` with the right ndim and dtype."""
    ndim, term_ndim = getattr(inp.type, "ndim", None), getattr(term.type, "ndim", None)
    if ndim is not None and term_ndim is not None and ndim != term_ndim:
        raise ValueError(f"{node.op}.L_op/grad returned a {term_ndim}-d gradient for input {i} "
                         f"({inp}), which is {ndim}-d")
    if _is_discrete(inp):
        zeros = _float_zeros_like(inp)
        # what the zeros stand for was computed from the seeds: a function computing them
        # counts the inputs of the costs as used (see _seed)
        zeros.tag.seed_of = list(origins)
        return zeros
    if _is_float(inp) and _dtype(term) != _dtype(inp):
        return _math.cast(term, _dtype(inp))
    return term


def _handle_disconnected(var, disconnected_inputs):
    message = (f"grad was asked for the gradient with respect to {var}, but the cost does not "
               "depend on it (it is not part of the cost's graph, or only through "
               "non-differentiable operations or consider_constant). Pass "
               "disconnected_inputs='ignore' or 'warn' to get zeros instead.")
    if disconnected_inputs == "raise":
        raise DisconnectedInputError(message)
    if disconnected_inputs == "warn":
        warnings.warn(message, stacklevel=4)


def grad(cost, wrt, consider_constant=None, disconnected_inputs="raise", add_names=True,
         known_grads=None, return_disconnected="zero", null_gradients="raise"):
    """Symbolic gradient of the scalar ``cost`` w.r.t. ``wrt`` (a variable or a list of them).

    Parameters
    ----------
    cost : scalar Variable or None
        ``None`` only with ``known_grads``, which then seeds the backward pass.
    wrt : Variable or list/tuple of Variables
        The result has the same structure. Shared variables are allowed.
    consider_constant : list of Variables
        Gradients do not flow through these (treated as constants).
    disconnected_inputs : 'raise', 'warn' or 'ignore'
        What to do when ``cost`` does not depend on a ``wrt`` variable.
    add_names : bool
        Name gradients ``(dcost/dx)`` when the cost and the variable have names.
    known_grads : dict {Variable: gradient}
        Gradients already known for some variables (e.g. from another framework).
    return_disconnected : 'zero', 'None' or 'disconnected'
        What to return for disconnected ``wrt`` variables.
    null_gradients : 'raise' or 'return'
        Raise ``NullTypeGradError`` for undefined gradients, or return the NullType variables.
    """
    _check_choice("disconnected_inputs", disconnected_inputs, ("raise", "warn", "ignore"))
    _check_choice("return_disconnected", return_disconnected, ("zero", "None", None, "disconnected"))
    _check_choice("null_gradients", null_gradients, ("raise", "return"))
    wrt_list, _ = _as_list(wrt, "grad: wrt")
    for k, w in enumerate(wrt_list):
        if not isinstance(w, Variable):
            raise TypeError(f"grad: wrt[{k}] must be a symbolic Variable, got "
                            f"{type(w).__name__}: {w!r}")
    seeds = {}
    if cost is not None:
        if not isinstance(cost, Variable):
            raise TypeError(f"grad: cost must be a symbolic Variable, got {type(cost).__name__}")
        if getattr(cost.type, "ndim", None) != 0:
            ndim = getattr(cost.type, "ndim", "?")
            raise TypeError(f"grad: cost must be a scalar (0-d), got {cost} of type {cost.type} "
                            f"(ndim {ndim}); reduce it first (cost.sum(), cost.mean()) or use "
                            "jacobian / known_grads")
        seeds[cost] = _seed(cost)
    for var, g in (known_grads or {}).items():
        if not isinstance(var, Variable):
            raise TypeError(f"grad: known_grads keys must be Variables, got {var!r}")
        if not isinstance(g, Variable):
            g = _basic.as_tensor_variable(g)
        g_ndim, var_ndim = getattr(g.type, "ndim", None), getattr(var.type, "ndim", None)
        if not _is_special(g) and g_ndim is not None and var_ndim is not None \
                and g_ndim < var_ndim:
            # a lower-dimensional gradient is broadcast (a scalar for every element), as
            # PyTensor lets ops broadcast it
            g = _extra_ops.broadcast_to(g, [var.shape[d] for d in range(var_ndim)])
        elif not _is_special(g) and g_ndim != var_ndim:
            raise ValueError(f"grad: known_grads[{var}] is {g.type.ndim}-d but {var} is "
                             f"{var.type.ndim}-d")
        if var in seeds and not _is_special(g):
            g = seeds[var] + g
        seeds[var] = g
    if not seeds:
        raise TypeError("grad: give a cost, or known_grads to seed the backward pass")
    seeds = {v: g for v, g in seeds.items() if not isinstance(g.type, DisconnectedType)}
    cost_name = cost.name if (add_names and cost is not None) else None

    with building_gradient():
        totals = _backprop(seeds, wrt_list, consider_constant or (), cost_name) if seeds else {}
    results = []
    for w in wrt_list:
        g = totals.get(w)
        if g is None or isinstance(g.type, DisconnectedType):
            _handle_disconnected(w, disconnected_inputs)
            if return_disconnected == "zero":
                g = _filled_zeros(w)
            elif return_disconnected == "disconnected":
                g = disconnected_type()
            else:
                g = None
        elif isinstance(g.type, NullType) and null_gradients == "raise":
            raise NullTypeGradError(f"grad: the gradient with respect to {w} is undefined: "
                                    f"{g.type.why_null}")
        results.append(g)
    return _format_as(results, wrt)


def Lop(f, wrt, eval_points, consider_constant=None, disconnected_inputs="raise"):
    """Vector-Jacobian product: ``eval_points`` (shaped like ``f``) times the Jacobian of ``f``.

    ``f`` and ``eval_points`` are a variable each or matching lists; the result follows ``wrt``.
    """
    f_list, _ = _as_list(f, "Lop: f")
    points, _ = _as_list(eval_points, "Lop: eval_points")
    if len(points) != len(f_list):
        raise ValueError(f"Lop: {len(f_list)} expressions but {len(points)} eval_points")
    known = {}
    for fi, ev in zip(f_list, points):
        ev = ev if isinstance(ev, Variable) else _basic.as_tensor_variable(ev)
        known[fi] = ev
    return grad(None, wrt, consider_constant=consider_constant,
                disconnected_inputs=disconnected_inputs, known_grads=known)


def Rop(f, wrt, eval_points, disconnected_outputs="raise", return_disconnected="zero"):
    """Jacobian-vector product: the directional derivative of ``f`` along ``eval_points``.

    Forward mode through each node's ``op.R_op``; a node whose op has none is differentiated
    with the double-L_op trick (the R_op is the gradient, w.r.t. a dummy cotangent ``u``, of
    ``<L_op(u), v>``). ``eval_points`` matches ``wrt``; the result follows ``f``.
    """
    _check_choice("disconnected_outputs", disconnected_outputs, ("raise", "warn", "ignore"))
    _check_choice("return_disconnected", return_disconnected, ("zero", "None", None))
    f_list, _ = _as_list(f, "Rop: f")
    wrt_list, _ = _as_list(wrt, "Rop: wrt")
    points, _ = _as_list(eval_points, "Rop: eval_points")
    if len(points) != len(wrt_list):
        raise ValueError(f"Rop: {len(wrt_list)} wrt variables but {len(points)} eval_points")
    tangents = {}
    for w, ev in zip(wrt_list, points):
        ev = ev if isinstance(ev, Variable) else _basic.as_tensor_variable(ev)
        if getattr(ev.type, "ndim", None) != getattr(w.type, "ndim", None):
            raise ValueError(f"Rop: the eval point for {w} must be {w.type.ndim}-d like it, got "
                             f"{ev.type}")
        tangents[w] = ev

    for node in io_toposort(wrt_list, f_list):
        points_in = [tangents.get(inp) for inp in node.inputs]
        if all(p is None for p in points_in):
            continue
        try:
            pushforward = getattr(node.op, "pushforward", None)
            if pushforward is not None:      # an op written for PyTensor 3
                outs = pushforward(list(node.inputs), list(node.outputs),
                                   [disconnected_type() if p is None else p for p in points_in])
            else:
                outs = node.op.R_op(list(node.inputs), points_in)
        except NotImplementedError:
            outs = _rop_via_lop(node, points_in)
        for out, t in zip(node.outputs, outs):
            if t is None or _is_special(t) or not _is_float(out):
                continue
            if _dtype(t) != _dtype(out):
                t = _math.cast(t, _dtype(out))
            tangents[out] = t

    results = []
    for fi in f_list:
        t = tangents.get(fi)
        if t is None:
            message = (f"Rop: {fi} does not depend on the wrt variables "
                       f"({', '.join(map(str, wrt_list))})")
            if disconnected_outputs == "raise":
                raise DisconnectedInputError(message)
            if disconnected_outputs == "warn":
                warnings.warn(message, stacklevel=2)
            t = _float_zeros_like(fi) if return_disconnected == "zero" else None
        results.append(t)
    return _format_as(results, f)


def _rop_via_lop(node, points_in):
    """R_op of ``node`` from its L_op: J v = d/du <J^T u, v>, then ``u`` replaced by zeros."""
    dummies = [out.type() if _is_float(out) else None for out in node.outputs]
    ograds = [u if u is not None else disconnected_type() for u in dummies]
    used = [u for u in dummies if u is not None]
    with _no_test_values():  # the dummies have no values
        lops = node.op.L_op(list(node.inputs), list(node.outputs), ograds)
        products = []
        for inp, lop, v in zip(node.inputs, lops, points_in):
            if v is None or lop is None or isinstance(lop.type, DisconnectedType):
                continue
            if isinstance(lop.type, NullType):
                raise NullTypeGradError(f"Rop: the derivative of {node.op} w.r.t. {inp} is "
                                        f"undefined: {lop.type.why_null}")
            products.append(_reduction.sum(lop * v))
        if not products or not used:
            return [None] * len(node.outputs)
        inner = products[0] if len(products) == 1 else _math.add(*products)
        jvps = grad(inner, used, disconnected_inputs="ignore", return_disconnected="None")
    pairs = {u: _creation.zeros_like(out) for u, out in zip(dummies, node.outputs) if u is not None}
    present = [j for j in jvps if j is not None]
    present = clone_replace(present, pairs) if present else []
    _fill_test_values(present)
    replaced = iter(present)
    by_dummy = {u: (next(replaced) if j is not None else None) for u, j in zip(used, jvps)}
    return [by_dummy[u] if u is not None else None for u in dummies]


def pullback(f, wrt, cotangents, consider_constant=None, disconnected_inputs="raise",
             return_disconnected="zero"):
    """The vector-Jacobian product (PyTensor 3's name of ``Lop``): ``cotangents`` (shaped
    like ``f``) times the Jacobian of ``f`` w.r.t. ``wrt``; the result follows ``wrt``."""
    f_list, _ = _as_list(f, "pullback: f")
    points, _ = _as_list(cotangents, "pullback: cotangents")
    if len(points) != len(f_list):
        raise ValueError(f"pullback: {len(f_list)} expressions but {len(points)} cotangents")
    known = {fi: (c if isinstance(c, Variable) else _basic.as_tensor_variable(c))
             for fi, c in zip(f_list, points)}
    return grad(None, wrt, consider_constant=consider_constant,
                disconnected_inputs=disconnected_inputs, known_grads=known,
                return_disconnected=_disconnected_choice(return_disconnected))


def pushforward(f, wrt, tangents, disconnected_outputs="raise", return_disconnected="zero",
                use_op_pushforward=False):
    """The Jacobian-vector product (PyTensor 3's name of ``Rop``): the derivative of ``f``
    along ``tangents`` (shaped like ``wrt``); the result follows ``f``. Each op's forward
    rule is used where it has one, the double pull-back elsewhere (``use_op_pushforward``
    is accepted for PyTensor's signature; the choice is made per op here)."""
    return Rop(f, wrt, tangents, disconnected_outputs=disconnected_outputs,
               return_disconnected=_disconnected_choice(return_disconnected))


def _disconnected_choice(value):
    """PyTensor 3 spells "None" in lower case."""
    return "None" if value in ("none", None) else value


def hessian_vector_product(cost, wrt, p, **grad_kwargs):
    """The Hessian of the scalar ``cost`` w.r.t. ``wrt`` times ``p`` (``wrt`` and ``p`` a
    variable each or matching lists), without forming the Hessian: the gradient of
    ``sum(grad(cost, wrt) * p)``. ``grad_kwargs`` go to both ``grad`` calls."""
    wrt_list, _ = _as_list(wrt, "hessian_vector_product: wrt")
    p_list, _ = _as_list(p, "hessian_vector_product: p")
    if len(p_list) != len(wrt_list):
        raise ValueError(f"hessian_vector_product: {len(wrt_list)} wrt variables but "
                         f"{len(p_list)} vectors p")
    grads = grad(cost, wrt_list, **grad_kwargs)
    products = [_reduction.sum(g * _basic.as_tensor_variable(v)) for g, v in zip(grads, p_list)]
    total = products[0] if len(products) == 1 else _math.add(*products)
    return _format_as(grad(total, wrt_list, **grad_kwargs), wrt)


def subgraph_grad(wrt, end, start=None, cost=None, details=False):
    """Gradients of one piece of a graph, to chain pieces by hand (Theano's idiom for
    truncated or piecewise backpropagation).

    The piece is what lies between the variables ``end`` (treated as inputs: gradients stop
    there) and the cost. Its gradient comes from ``cost`` (a scalar), from ``start`` ({variable:
    known gradient}, typically the ``end`` gradients of the piece above), or the sum of both.
    Returns ``(wrt_grads, end_grads)``: the gradients w.r.t. ``wrt`` and w.r.t. ``end``, the
    latter to pass on as ``start`` (zipped with ``end``) to the piece below. With ``details``,
    also the two parts ``(start_grads, cost_grads)`` of each (``None`` where absent).
    """
    wrt, end = list(wrt), list(end)
    if cost is None and not start:
        raise TypeError("subgraph_grad: give a cost, start gradients, or both")
    params = list(dict.fromkeys(wrt + end))
    start_grads = cost_grads = None
    if start:
        start_grads = grad(None, params, consider_constant=end, known_grads=dict(start),
                           disconnected_inputs="ignore")
    if cost is not None:
        cost_grads = grad(cost, params, consider_constant=end, disconnected_inputs="ignore")
    if start_grads is None:
        totals = cost_grads
    elif cost_grads is None:
        totals = start_grads
    else:
        totals = [a + b for a, b in zip(start_grads, cost_grads)]
    by_var = dict(zip(params, totals))
    wrt_grads, end_grads = [by_var[v] for v in wrt], [by_var[v] for v in end]
    if details:
        return wrt_grads, end_grads, start_grads, cost_grads
    return wrt_grads, end_grads


# ----------------------------------------------------------------------------------------------
# Ops that change only the gradient: the value passes through, rewriting removes them


class GradientOnlyOp(Op):
    """Returns its input unchanged (a view); its subclasses say what happens to the gradient
    on the way back. Rewriting (canonicalize, so every preset but None) removes these nodes,
    so they cost nothing at run time."""

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x):
        x = x if isinstance(x, Variable) else _basic.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph, node, input_shapes):
        return list(input_shapes)

    def R_op(self, inputs, eval_points):
        return list(eval_points)

    def __str__(self):
        return type(self).__name__


class ZeroGrad(GradientOnlyOp):
    """The gradient through it is zeros (of the input's shape)."""

    def L_op(self, inputs, outputs, output_grads):
        return [_float_zeros_like(inputs[0])]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else _creation.zeros_like(eval_points[0])]


class DisconnectedGrad(GradientOnlyOp):
    """No gradient flows through it: the input counts as disconnected (``grad`` raises
    ``DisconnectedInputError`` for a variable reached only through it)."""

    def L_op(self, inputs, outputs, output_grads):
        return [disconnected_type()]

    def R_op(self, inputs, eval_points):
        return [None]

    def connection_pattern(self, node):
        return [[False]]


class UndefinedGrad(GradientOnlyOp):
    """The gradient through it is undefined: ``grad`` raises ``NullTypeGradError``."""

    def L_op(self, inputs, outputs, output_grads):
        return [grad_undefined(self, 0, inputs[0], "(undefined_grad was applied to it)")]

    def R_op(self, inputs, eval_points):
        return [None]


class GradClip(GradientOnlyOp):
    """The gradient through it is clipped to ``[clip_lower_bound, clip_upper_bound]``."""

    __props__ = ("clip_lower_bound", "clip_upper_bound")

    def __init__(self, clip_lower_bound, clip_upper_bound):
        if not clip_upper_bound >= clip_lower_bound:
            raise ValueError(f"grad_clip: the upper bound ({clip_upper_bound}) must be at least "
                             f"the lower bound ({clip_lower_bound})")
        self.clip_lower_bound = clip_lower_bound
        self.clip_upper_bound = clip_upper_bound

    def L_op(self, inputs, outputs, output_grads):
        return [_math.clip(output_grads[0], self.clip_lower_bound, self.clip_upper_bound)]

    def __str__(self):
        return f"GradClip{{{self.clip_lower_bound}, {self.clip_upper_bound}}}"


class GradScale(GradientOnlyOp):
    """The gradient through it is multiplied by ``multiplier`` (a number; -1 reverses it)."""

    __props__ = ("multiplier",)

    def __init__(self, multiplier):
        self.multiplier = multiplier

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0] * self.multiplier]

    def __str__(self):
        return f"GradScale{{{self.multiplier}}}"


zero_grad_ = ZeroGrad()
disconnected_grad_ = DisconnectedGrad()
undefined_grad_ = UndefinedGrad()


def zero_grad(x):
    """``x``, whose gradient is taken to be zero (gradients flow back as zeros)."""
    return zero_grad_(x)


def disconnected_grad(x):
    """``x``, through which no gradient flows (cheaper than ``zero_grad``: the part of the
    graph below is not differentiated at all; ``stop_gradient`` elsewhere)."""
    return disconnected_grad_(x)


def undefined_grad(x):
    """``x``, whose gradient is undefined: differentiating through it raises."""
    return undefined_grad_(x)


def grad_clip(x, lower_bound, upper_bound):
    """``x``, whose gradient is clipped elementwise to ``[lower_bound, upper_bound]`` on the
    way back."""
    return GradClip(lower_bound, upper_bound)(x)


def grad_scale(x, multiplier):
    """``x``, whose gradient is multiplied by ``multiplier`` on the way back."""
    return GradScale(multiplier)(x)


def _register_removal():
    @node_rewriter([GradientOnlyOp])
    def local_remove_gradient_only_ops(fgraph, node):
        """zero_grad, disconnected_grad, grad_clip... compute nothing: read their input."""
        return [node.inputs[0]]

    register_canonicalize(local_remove_gradient_only_ops)


_register_removal()


# ----------------------------------------------------------------------------------------------
# Looping over rows: jacobian and hessian


def _run_graph(fgraph: FunctionGraph, order, values: list) -> list:
    """Evaluate ``fgraph`` on ``values`` (one per input) with each node's numpy ``perform``."""
    env = dict(zip(fgraph.inputs, values))
    for node in order:
        args = [inp.data if isinstance(inp, Constant) else env[inp] for inp in node.inputs]
        cells = [[None] for _ in node.outputs]
        try:
            node.op.perform(node, args, cells)
        except Exception as exc:
            reraise_with_node(exc, node, args)
        for out, cell in zip(node.outputs, cells):
            env[out] = cell[0]
    return [out.data if isinstance(out, Constant) else env[out] for out in fgraph.outputs]


class IndexLoop(HasInnerGraph, Op):
    """Evaluate an inner graph for every ``i`` in ``range(n)`` and stack its outputs.

    Node inputs are ``(n, *outer)``; the inner graph's inputs are ``(i, *placeholders)`` with
    one placeholder per outer input. Output ``k`` is ``stack([inner_k(i, *outer) for i in
    range(n)])``, and each ``inner_k`` has the shape of the outer input ``shape_of[k]`` (index
    into ``outer``), which gives ``infer_shape`` and the result of an empty loop.

    This is what Theano's ``scan`` did for ``jacobian``, without the generality of ``scan``.
    The Op is differentiable (its gradient is another ``IndexLoop``, summed over ``i``).
    """

    def __init__(self, index, placeholders, inner_outputs, shape_of):
        self.fgraph = FunctionGraph([index, *placeholders], list(inner_outputs))
        self.shape_of = tuple(shape_of)
        self._order = self.fgraph.toposort()

    def __str__(self):
        return f"IndexLoop{{{len(self.fgraph.outputs)} outputs, {len(self._order)} inner nodes}}"

    def make_node(self, n, *outer):
        n = _basic.as_tensor_variable(n)
        if n.type.ndim != 0 or not n.type.dtype.startswith(("int", "uint")):
            raise TypeError(f"IndexLoop: the loop length must be an integer scalar, got {n.type}")
        n = _math.cast(n, "int64") if n.type.dtype != "int64" else n
        placeholders = self.fgraph.inputs[1:]
        if len(outer) != len(placeholders):
            raise TypeError(f"IndexLoop: expected {len(placeholders)} outer inputs, got "
                            f"{len(outer)}")
        converted = []
        for k, (ph, var) in enumerate(zip(placeholders, outer)):
            var = var if isinstance(var, Variable) else _basic.as_tensor_variable(var)
            fit = ph.type.convert_variable(var)
            if fit is None:
                raise TypeError(f"IndexLoop: outer input {k} must have type {ph.type}, got "
                                f"{var.type} ({var})")
            converted.append(fit)
        length = int(n.data) if isinstance(n, Constant) else None
        outputs = [_type.TensorType(o.type.dtype, (length,) + tuple(o.type.shape))()
                   for o in self.fgraph.outputs]
        return Apply(self, [n, *converted], outputs)

    def perform(self, node, inputs, output_storage):
        n, outer = int(inputs[0]), list(inputs[1:])
        rows = [[] for _ in self.fgraph.outputs]
        for i in range(n):
            values = _run_graph(self.fgraph, self._order, [np.int64(i), *outer])
            for acc, v in zip(rows, values):
                acc.append(v)
        for k, (cell, out) in enumerate(zip(output_storage, node.outputs)):
            if n == 0:
                shape = (0,) + np.shape(outer[self.shape_of[k]])
                cell[0] = np.zeros(shape, dtype=out.type.dtype)
            else:
                cell[0] = np.asarray(np.stack(rows[k]), dtype=out.type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(node.inputs[0],) + tuple(input_shapes[1 + k]) for k in self.shape_of]

    def connection_pattern(self, node):
        return [[False] * len(node.outputs)] + [[True] * len(node.outputs)
                                                  for _ in node.inputs[1:]]

    def L_op(self, inputs, outputs, output_grads):
        """sum over i of the vector-Jacobian product of row i: another IndexLoop, summed."""
        n, outer = inputs[0], list(inputs[1:])
        index, placeholders = self.fgraph.inputs[0], self.fgraph.inputs[1:]
        used = [(k, g) for k, g in enumerate(output_grads) if not _is_special(g)]
        wanted = [j for j, ph in enumerate(placeholders) if _is_float(ph)]
        grads = [disconnected_type()] + [disconnected_type() for _ in outer]
        if not used or not wanted:
            return grads
        g_placeholders = [g.type() for _, g in used]
        with _no_test_values():
            terms = [_reduction.sum(self.fgraph.outputs[k] * gp[index])
                     for (k, _), gp in zip(used, g_placeholders)]
            inner_cost = terms[0] if len(terms) == 1 else _math.add(*terms)
            inner_grads = grad(inner_cost, [placeholders[j] for j in wanted],
                               disconnected_inputs="ignore")
        loop = IndexLoop(index, [*placeholders, *g_placeholders], inner_grads, wanted)
        stacked = loop(n, *outer, *[g for _, g in used])
        stacked = stacked if isinstance(stacked, (list, tuple)) else [stacked]
        for j, s in zip(wanted, stacked):
            grads[1 + j] = _reduction.sum(s, axis=0)
        return grads


def _loop_invariants(index, outputs):
    """Variables the ``outputs`` need that do not depend on ``index`` (computed once, outside)."""
    nodes = io_toposort(graph_inputs(outputs), outputs)
    varying = {index}
    for node in nodes:
        if any(inp in varying for inp in node.inputs):
            varying.update(node.outputs)
    invariant, seen = [], set()

    def keep(var):
        if var not in varying and not isinstance(var, Constant) and var not in seen:
            seen.add(var)
            invariant.append(var)

    for node in nodes:
        if any(out in varying for out in node.outputs):
            for inp in node.inputs:
                keep(inp)
    for out in outputs:
        keep(out)
    return invariant


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs="raise",
             vectorize=False):
    """The Jacobian of ``expression`` w.r.t. ``wrt`` (a variable or a list/tuple).

    For each ``w`` the result has shape ``expression.shape + w.shape``; a scalar
    ``expression`` gives its gradient. Sizes may be symbolic. The rows (one per element of
    ``expression``) are computed by an ``IndexLoop`` at run time, or, with ``vectorize=True``,
    by one vectorized vector-Jacobian product of the identity (``vectorize_graph``): faster
    for small expressions, more memory for large ones.
    """
    expression = expression if isinstance(expression, Variable) else _basic.as_tensor_variable(expression)
    ndim = getattr(expression.type, "ndim", None)
    if ndim is None:
        raise TypeError(f"jacobian: expression must be a tensor, got {expression} of type "
                        f"{expression.type}")
    wrt_list, _ = _as_list(wrt, "jacobian: wrt")
    if ndim == 0 or all(d == 1 for d in expression.type.shape):
        rows = grad(expression.sum() if ndim else expression, wrt_list,
                    consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
        if ndim:
            rows = [r.reshape((*[1] * ndim, *[w.shape[i] for i in range(w.ndim)]))
                    for r, w in zip(rows, wrt_list)]
        return _format_as(rows, wrt)
    flat = expression if ndim == 1 else expression.flatten()
    if vectorize:
        matrices = _jacobian_vectorized(flat, wrt_list, consider_constant, disconnected_inputs)
    else:
        matrices = _jacobian_loop(flat, wrt_list, consider_constant, disconnected_inputs)
    if ndim != 1:
        matrices = [m.reshape((*[expression.shape[i] for i in range(ndim)],
                               *[w.shape[i] for i in range(w.ndim)]))
                    for m, w in zip(matrices, wrt_list)]
    return _format_as(matrices, wrt)


def _jacobian_loop(flat, wrt_list, consider_constant, disconnected_inputs):
    index = _type.scalar("i", dtype="int64")
    with _no_test_values():
        rows = grad(flat[index], wrt_list, consider_constant=consider_constant,
                    disconnected_inputs=disconnected_inputs)
        outer = []
        for var in list(wrt_list) + _loop_invariants(index, rows):
            if var not in outer:
                outer.append(var)
        placeholders = [v.type() for v in outer]
        inner_rows = clone_replace(rows, dict(zip(outer, placeholders)))
    _fill_test_values(outer)
    loop = IndexLoop(index, placeholders, inner_rows, [outer.index(w) for w in wrt_list])
    result = loop(flat.shape[0], *outer)
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _jacobian_vectorized(flat, wrt_list, consider_constant, disconnected_inputs):
    """Every row at once: the pull-back of one cotangent row, vectorized over the rows of
    the identity."""

    row = flat.type("cotangent row")
    with _no_test_values():
        rows = grad(None, wrt_list, consider_constant=consider_constant,
                    disconnected_inputs=disconnected_inputs, known_grads={flat: row})
    n = flat.shape[0]
    matrices = vectorize_graph(rows, {row: _creation.eye(n, dtype=flat.type.dtype)})
    # a gradient that does not read the cotangent (zeros of a disconnected input) has no row
    # dimension to vectorize: give it one
    return [m if m.ndim == w.ndim + 1 else
            _extra_ops.broadcast_to(m, (n, *[w.shape[i] for i in range(w.ndim)]))
            for m, w in zip(matrices, wrt_list)]


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """The Hessian of the scalar ``cost`` w.r.t. each vector in ``wrt`` (the jacobian of its
    gradient), as one matrix per ``wrt`` variable."""
    wrt_list, _ = _as_list(wrt, "hessian: wrt")
    results = []
    for w in wrt_list:
        if getattr(w.type, "ndim", None) != 1:
            raise TypeError(f"hessian: wrt must be vectors (1-d); {w} has type {w.type}")
        g = grad(cost, w, consider_constant=consider_constant,
                 disconnected_inputs=disconnected_inputs)
        # the gradient may no longer depend on w although the cost does (a linear cost):
        # that is a zero Hessian, not an error
        results.append(jacobian(g, w, consider_constant=consider_constant,
                                disconnected_inputs="ignore"))
    return _format_as(results, wrt)


# ----------------------------------------------------------------------------------------------
# Finite differences

#: Default step and tolerances of ``verify_grad`` by dtype. Central differences have error
#: ~eps**2 * f''' (truncation) + macheps * |f| / eps (rounding): 1e-7 keeps float64 far below
#: 1e-4; for float32 (macheps 1.2e-7) 1e-3 balances the two near 1e-5, well under 1e-2.
DEFAULT_EPS = {"float64": 1e-7, "float32": 1e-3, "float16": 1e-1}
DEFAULT_TOL = {"float64": 1e-4, "float32": 1e-2, "float16": 5e-2}


def _least_precise(dtypes) -> str:
    order = ["float16", "float32", "float64"]
    known = [d for d in dtypes if d in order]
    return min(known, key=order.index) if known else "float64"


class numeric_grad:
    """Gradient of ``f`` (returning a scalar) at ``pt`` (list of arrays) by central differences.

    ``gf`` holds one array per point, shaped like it.
    """

    def __init__(self, f, pt, eps=None, out_type=None):
        pt = [np.array(p) for p in pt]
        dtype = _least_precise([p.dtype.name for p in pt] + ([out_type] if out_type else []))
        self.eps = DEFAULT_EPS[dtype] if eps is None else eps
        self.gf = []
        for k, p in enumerate(pt):
            g = np.zeros(p.shape, dtype="float64")
            flat = p.reshape(-1)
            for pos in range(flat.size):
                orig = flat[pos]
                flat[pos] = orig + self.eps
                f_plus = float(f(*pt))
                flat[pos] = orig - self.eps
                f_minus = float(f(*pt))
                flat[pos] = orig
                g.reshape(-1)[pos] = (f_plus - f_minus) / (2 * self.eps)
            self.gf.append(g)

    def max_err(self, analytic, abs_tol, rel_tol):
        """(input index, flat position, abs error, rel error) of the worst element, where worst
        means the largest ``min(abs_err / abs_tol, rel_err / rel_tol)``."""
        best = (-1.0, 0, 0, 0.0, 0.0)
        for k, (num, ana) in enumerate(zip(self.gf, analytic)):
            ana = np.asarray(ana, dtype="float64")
            if ana.shape != num.shape:
                raise ValueError(f"verify_grad: the symbolic gradient of input {k} has shape "
                                 f"{ana.shape}, the input has shape {num.shape}")
            if num.size == 0:
                continue
            abs_err = np.abs(num - ana)
            denom = np.abs(num) + np.abs(ana)
            rel_err = np.where(denom > 0, abs_err / np.where(denom > 0, denom, 1), 0.0)
            score = np.minimum(abs_err / abs_tol, rel_err / rel_tol)
            score = np.where(np.isnan(score), np.inf, score)
            pos = int(np.argmax(score))
            if score.reshape(-1)[pos] > best[0]:
                best = (score.reshape(-1)[pos], k, pos, abs_err.reshape(-1)[pos],
                        rel_err.reshape(-1)[pos])
        return best[1:]


def _reference_mode(mode, no_debug_ref):
    """The mode computing the finite differences: DebugMode's checks add nothing there."""
    if not no_debug_ref or mode is None:
        return mode
    name = mode if isinstance(mode, str) else type(mode).__name__
    return "FAST_RUN" if name == "DebugMode" else mode


def verify_grad(fun, pt, n_tests=2, rng=None, eps=None, out_type=None, abs_tol=None,
                rel_tol=None, mode=None, cast_to_output_type=False, no_debug_ref=True):
    """Check ``grad`` of ``fun`` at the point ``pt`` against central finite differences.

    ``fun`` takes one symbolic tensor per array in ``pt`` and returns one tensor; the check
    differentiates ``sum(r * fun(*inputs))`` for ``n_tests`` random projections ``r`` (drawn
    from ``rng``, a ``numpy.random.Generator``; a fixed seed when ``None``). An element fails
    when both its absolute and its relative error exceed the tolerances; the worst failure is
    raised as ``GradientError``.

    A size-1 dimension of a point makes the input broadcastable along it (a (1, 5) point
    broadcasts against a (3, 5) one).

    Defaults depend on the least precise dtype among the inputs and the output (``out_type``
    overrides the output's): eps 1e-7 / tol 1e-4 for float64, eps 1e-3 / tol 1e-2 for float32,
    eps 1e-1 / tol 5e-2 for float16 (see ``DEFAULT_EPS`` and ``DEFAULT_TOL``).
    """

    if not isinstance(pt, (list, tuple)):
        raise TypeError("verify_grad: pt must be a list of arrays, one per input of fun")
    pt = [np.array(p) for p in pt]
    for k, p in enumerate(pt):
        if p.dtype.kind != "f":
            raise TypeError(f"verify_grad works with floating-point inputs only; input {k} has "
                            f"dtype {p.dtype}")
    rng = np.random.default_rng(42) if rng is None else rng
    # a size-1 dimension of a point is a broadcastable dimension of its input (as PyTensor
    # does): verify_grad(f, [a (3, 5), b (1, 5)]) broadcasts b
    inputs = [_type.TensorType(p.dtype.name, tuple(1 if n == 1 else None for n in p.shape))(
        f"input {k}") for k, p in enumerate(pt)]
    output = fun(*inputs)
    if isinstance(output, (list, tuple)):
        raise TypeError("verify_grad: fun must return a single tensor; check each output "
                        "separately (e.g. fun=lambda *x: f(*x)[k])")
    output = output if isinstance(output, Variable) else _basic.as_tensor_variable(output)
    out_dtype = out_type or output.type.dtype
    dtype = _least_precise([p.dtype.name for p in pt] + [out_dtype])
    abs_tol = DEFAULT_TOL[dtype] if abs_tol is None else abs_tol
    rel_tol = DEFAULT_TOL[dtype] if rel_tol is None else rel_tol

    proj_dtype = out_dtype if cast_to_output_type else "float64"
    projection = _type.TensorType(proj_dtype, (None,) * output.type.ndim)("random projection")
    cost = _reduction.sum(projection * output)
    # the compiler is a higher layer; every call gets copies of the points, so an op that
    # overwrites its input (an inplace op given as fun) is checked too, as in PyTensor
    # fun may ignore an input (its gradient is then zero), as PyTensor's verify_grad allows
    compile_function = functools.partial(hooks.compile_function, accept_inplace=True,
                                         on_unused_input="ignore")
    cost_fn = compile_function(inputs + [projection], cost,
                               mode=_reference_mode(mode, no_debug_ref))
    grads = grad(cost, inputs, disconnected_inputs="ignore")
    grad_fn = compile_function(inputs + [projection], grads, mode=mode)
    out_shape = np.shape(compile_function(inputs, output, mode=mode)(*[p.copy() for p in pt]))

    for _ in range(n_tests):
        r = np.asarray(rng.random(out_shape) + 0.5, dtype=proj_dtype)
        num = numeric_grad(lambda *x: cost_fn(*x, r), [p.copy() for p in pt], eps, out_dtype)
        analytic = grad_fn(*[p.copy() for p in pt], r)
        k, pos, abs_err, rel_err = num.max_err(analytic, abs_tol, rel_tol)
        if abs_err > abs_tol and rel_err > rel_tol:
            shape = pt[k].shape
            index = tuple(int(i) for i in np.unravel_index(pos, shape)) if shape else ()
            raise GradientError(k, index, shape, float(num.gf[k].reshape(-1)[pos]),
                                float(np.asarray(analytic[k]).reshape(-1)[pos]), float(abs_err),
                                float(rel_err), abs_tol, rel_tol)


# The tensor modules gradients are built from, imported last, not at the top: the tensor
# package's __init__ imports this module's names, so they must exist before the tensor modules
# load (when this module is imported first). Bound as modules: their names resolve on use.
import tensorgraph.tensor.blockwise  # noqa: E402,F401  (the tensor ops' batching rules)
from tensorgraph.tensor import basic as _basic  # noqa: E402
from tensorgraph.tensor import creation as _creation  # noqa: E402
from tensorgraph.tensor import extra_ops as _extra_ops  # noqa: E402
from tensorgraph.tensor import math as _math  # noqa: E402
from tensorgraph.tensor import reduction as _reduction  # noqa: E402
from tensorgraph.tensor import type as _type  # noqa: E402

# scalar ops mark their inputs without a gradient with grad_not_implemented (the scalar layer
# cannot import this module)
register_tensor_ops(gradient=sys.modules[__name__])
