"""Rewriting a graph outside ``function()``: ``rewrite_graph`` and ``is_same_graph``.

``rewrite_graph(y)`` runs the rewrites a query selects from ``optdb`` on the graph of ``y``
(by default the canonicalize phase) and returns the rewritten variable: the way to look at
what rewriting makes of an expression, or to simplify a graph before building on it, without
compiling. As in PyTensor, ``clone=False`` (the default) rewrites the given graph in place:
its nodes read the rewritten variables afterwards.
"""

from __future__ import annotations

from tensorgraph import graph as _graph
from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Variable, clone_replace, equal_computations
from tensorgraph.graph.fg import FunctionGraph

__all__ = ["rewrite_graph", "is_same_graph"]


def rewrite_graph(graph, include=("canonicalize",), custom_rewrite=None, clone=False,
                  **kwargs):
    """Rewrite ``graph`` (a variable, a list of them or a ``FunctionGraph``) with the rewrites
    of ``optdb`` having one of the tags in ``include``, then with ``custom_rewrite`` (a graph
    rewriter) if given.

    ``kwargs`` are those of ``RewriteDatabaseQuery`` (``exclude=``, ``require=``,
    ``position_cutoff=``). Returns what was given, rewritten: a variable, a list or the
    FunctionGraph.
    """
    from tensorgraph.rewriting.db import RewriteDatabaseQuery
    from tensorgraph.rewriting.presets import rewriter_for_query

    if isinstance(include, str):
        include = (include,)
    if isinstance(graph, FunctionGraph):
        fgraph = graph
    else:
        outputs = [graph] if isinstance(graph, Variable) else list(graph)
        for k, out in enumerate(outputs):
            if not isinstance(out, Variable):
                raise TypeError(f"rewrite_graph: expected variables or a FunctionGraph, got "
                                f"{type(out).__name__} at position {k}")
        fgraph = FunctionGraph(outputs=outputs, clone=clone, copy_inputs=False)
    rewriter = rewriter_for_query(RewriteDatabaseQuery(include, **kwargs))
    with config.change_flags(compute_test_value=config.compute_test_value_opt):
        if rewriter is not None:
            rewriter.rewrite(fgraph)
        if custom_rewrite is not None:
            custom_rewrite.rewrite(fgraph)
    if isinstance(graph, FunctionGraph):
        return fgraph
    if isinstance(graph, Variable):
        return fgraph.outputs[0]
    return list(fgraph.outputs)


def is_same_graph(var1, var2, givens=None) -> bool:
    """Whether ``var1`` and ``var2`` compute the same thing in the same way (``x + 1`` and
    ``1 + x`` differ), after the substitutions ``givens`` ({old: new} or pairs), applied to
    both graphs: ``is_same_graph(x + 1, y + 1, givens={x: y})`` is True."""
    pairs = list(givens.items()) if isinstance(givens, dict) else list(givens or ())
    if pairs:
        var1, var2 = clone_replace([var1, var2], pairs)
    return equal_computations([var1], [var2])


_graph.provide("rewrite_graph", rewrite_graph)  # PyTensor's tensorgraph.graph.rewrite_graph
