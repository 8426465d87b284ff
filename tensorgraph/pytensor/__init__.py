"""The PyTensor bridge: PyTensor and PyMC graphs compiled and run by tensorgraph (docs/pymc.md).

* ``from_pytensor(outputs, inputs=None)``: a PyTensor graph as tensorgraph variables
  (``tensorgraph.pytensor.convert``; the op-by-op table is ``register``);
* the PyTensor mode ``TENSORGRAPH``, registered when this package is imported:
  ``pytensor.function(..., mode="TENSORGRAPH")``, ``model.compile_logp(mode="TENSORGRAPH")``,
  ``pm.sample(compile_kwargs={"mode": "TENSORGRAPH"})`` (``tensorgraph.pytensor.mode``);
* ``unwrap(fn)``: the tensorgraph ``Function`` behind such a function;
* ``unsupported(graph)``: the nodes that run a PyTensor op's ``perform``;
* ``tensorgraph.pytensor.debug.debug_logp`` (``tgn.debug_logp``): the first non-finite term of
  a PyMC model's log-density and the node that made it.

Needs the ``[pytensor]`` extra (PyTensor 2.38, the one PyMC pins, or 3.x).
"""

from tensorgraph.pytensor.compat import pytensor_modules

pytensor_modules()  # without PyTensor: the ImportError naming the extra, before anything else

from tensorgraph.pytensor.convert import from_pytensor, register, unsupported  # noqa: E402
from tensorgraph.pytensor.mode import TENSORGRAPH, TensorgraphLinker  # noqa: E402
from tensorgraph.pytensor.perform_node import PyTensorPerform  # noqa: E402
from tensorgraph.pytensor.unwrap import unwrap  # noqa: E402

__all__ = ["TENSORGRAPH", "PyTensorPerform", "TensorgraphLinker", "from_pytensor", "register",
           "unsupported", "unwrap"]
