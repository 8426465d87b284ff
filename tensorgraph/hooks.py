"""What a lower layer borrows from a higher one: a table the higher one fills.

A module never imports a module of a higher layer (docs/architecture.md, "Layers"). Where a
lower layer needs a higher one's behaviour at run time, it calls an entry of this table; the
package (``tensorgraph/__init__.py``, the top layer) fills every entry when it is imported,
with a stand-in that imports the higher layer on first use. So ``x.eval()`` works in a
program that has imported only ``tensorgraph.tensor``, and the graph and scan layers load,
and are tested, without the compiler.

Entries (``None`` until the package fills them):

``compile_function(inputs, outputs, **kwargs)``
    ``tensorgraph.compile.function.function``: ``Variable.eval`` compiles with it.
``function_maker(inputs, outputs, **kwargs)``
    a ``tensorgraph.compile.maker.FunctionMaker``: an op with an inner graph (``Scan``)
    compiles it with the outer function's mode.
``perform_mode()``
    a mode that runs every node's ``perform``, without rewrites (``Mode("py", None)``): how an
    op with an inner graph runs it outside a compiled function (test values, ``perform``).
``as_variable(value)``
    ``tensorgraph.tensor.as_tensor_variable``: a graph-level op given a plain value
    (``printing.Print``) makes it a tensor constant.
``grad(cost, wrt, **kwargs)``, ``Rop(f, wrt, eval_points, **kwargs)``
    ``tensorgraph.gradient.grad`` and ``Rop``: ``OpFromGraph`` (graph layer) differentiates
    its inner graph with them.
``scan_c_loop(runner)``
    ``tensorgraph.link.c.scan_loop.CLoop(runner)``: what runs a scan's iterations in C with
    its compiled step (``runner``: a ``scan.loop.InnerRunner``), built once per runner; its
    ``entry(function)`` is None when the step does not run whole in C.
``load_rewrites()``
    imports the modules that register the tensor and scan rewrites into ``optdb``: the rewrite
    database calls it before each query (``rewriting/presets.py``), so ``function``,
    ``rewrite_graph`` and ``Mode.including`` all see every rewrite, while the rewriting layer
    names no module above it and ``import tensorgraph.tensor`` loads no rewrite.
``load_vectorize_rules()``
    imports the modules whose ``vectorize_graph`` rules give ops their own batched form
    (``tensorgraph.tensor.vectorize_rules``); ``vectorize_node`` calls it, so the rules are
    there whenever a graph is vectorized, and ``import tensorgraph.tensor`` does not load them.
"""

from __future__ import annotations

compile_function = None
function_maker = None
perform_mode = None
as_variable = None
grad = None
Rop = None
scan_c_loop = None
load_rewrites = None
load_vectorize_rules = None
