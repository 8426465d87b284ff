"""The PyTensor bridge: PyTensor and PyMC graphs compiled and run by tensorgraph (docs/pymc.md).

* ``from_pytensor(outputs, inputs=None)``: a PyTensor graph as tensorgraph variables
  (``tensorgraph.pytensor.convert``; the op-by-op table is ``register``);
* the PyTensor mode ``TENSORGRAPH``, registered when this package is imported:
  ``pytensor.function(..., mode="TENSORGRAPH")``, ``model.compile_logp(mode="TENSORGRAPH")``,
  ``pm.sample(compile_kwargs={"mode": "TENSORGRAPH"})`` (``tensorgraph.pytensor.mode``);
* ``unwrap(fn)``: the tensorgraph ``Function`` behind such a function;
* ``unsupported(graph)``: the nodes that run a PyTensor op's ``perform``.

Needs the ``[pytensor]`` extra (PyTensor 2.38, the one PyMC pins, or 3.x).
"""

from tensorgraph.pytensor.convert import from_pytensor, register, unsupported
from tensorgraph.pytensor.mode import TENSORGRAPH, TensorgraphLinker
from tensorgraph.pytensor.unwrap import unwrap
from tensorgraph.pytensor.perform_node import PyTensorPerform

__all__ = ["from_pytensor", "register", "unsupported", "unwrap", "TENSORGRAPH",
           "TensorgraphLinker", "PyTensorPerform"]
