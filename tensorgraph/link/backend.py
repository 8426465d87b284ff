"""What the whole-graph back ends share (JAX in ``link/jax``, Numba in ``link/numba``, PyTorch
in ``link/pytorch``), by the names docs/extending.md, the tests and back ends of one's own
import; what the two that trace the graph, JAX and PyTorch, share besides is in
``link/traced.py`` and the ``link/traced_*.py`` modules.

Such a back end turns the whole rewritten FunctionGraph into *one* function of its own (one
``jax.jit``, one ``numba.njit`` over generated source) instead of one thunk per node. The parts
that do not depend on the back end live in one module per job (each back end's op tables are
``tensorgraph.graph.registry.Registry`` instances in its own package):

* ``unsupported``: ``UnsupportedOpsError``, the one compile-time error listing every op of a
  graph the back end cannot run (never a silent fallback to Python, never a wrong answer);
* ``optional``: ``require``, the back end's library or an ImportError naming the extra to
  install, and ``available``;
* ``ifelse_branches``: ``branch_owners``, the nodes only one side of an ``ifelse`` needs, which
  the back ends compute inside that side (so the branch not taken does not run);
* ``random_plan``: ``RandomPlan``, how ``numpy.random.Generator`` states enter and leave the
  compiled function, and the draws the traced back ends map to their own;
* ``output_plan``: ``OutputPlan``, where each output of a call comes from (the compiled
  function, an input, a constant, an advanced generator);
* ``whole_graph``: ``Program``, ``WholeGraphVM`` and ``WholeGraphLinker``, what ``Function``
  calls.

A back end subclasses ``WholeGraphLinker`` naming its ``Program`` class (``program``); a
``Program`` computes the fgraph's outputs from its inputs (``run``).
"""

from tensorgraph.link.ifelse_branches import branch_owners
from tensorgraph.link.optional import available, require
from tensorgraph.link.output_plan import OutputPlan
from tensorgraph.link.random_plan import (
    TRACED_DRAWS,
    RandomPlan,
    copy_generator,
    draw_of,
    draws_named,
    draws_with_the_generator_method,
    generator_state_after,
)
from tensorgraph.link.unsupported import UnsupportedOpsError, refuse_gemv_pair, unsupported_reason
from tensorgraph.link.whole_graph import Program, WholeGraphLinker, WholeGraphVM, registered_linker

__all__ = ["UnsupportedOpsError", "unsupported_reason", "require", "available", "branch_owners",
           "RandomPlan", "generator_state_after", "OutputPlan", "copy_generator",
           "draws_with_the_generator_method", "draw_of", "TRACED_DRAWS", "draws_named",
           "Program", "WholeGraphVM", "WholeGraphLinker", "registered_linker",
           "refuse_gemv_pair"]
