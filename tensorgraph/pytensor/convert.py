"""``from_pytensor``: a PyTensor graph turned into a tensorgraph graph, node by node.

Why a table: this is a back end in reverse. Each PyTensor op class has a conversion registered
in ``TABLE`` (a ``tensorgraph.graph.registry.Registry``, the one registration convention of
every back end): ``@register(PyTensorOpClass)`` over ``convert(op, node, *inputs)``, which gets
the PyTensor op and node and the node's inputs already converted and returns the tensorgraph
outputs (one variable or a list). A conversion raising ``NotImplementedError(reason)`` declines
the node. A node without a conversion, a declined one, or one whose conversion gives outputs
of another dtype or rank than PyTensor's, becomes a ``PyTensorPerform`` node calling the
PyTensor op's own ``perform``: every graph converts, and ``unsupported`` lists such nodes.

Names are kept (PyMC's value variables ``mu``, ``sigma_log__``, its log-probability terms), and
so are PyTensor's semantics where tensorgraph's defaults differ: a conversion builds the
tensorgraph op that computes what the PyTensor op computes (``TrueDiv`` between integers is a
true division whatever ``config.int_division`` says), never tensorgraph's operators on them.

Values that are not variables on the tensorgraph side (a ``slice`` made by ``MakeSlice``,
``None`` for ``np.newaxis``) are carried as Python objects, which the indexing conversions
read.
"""

from __future__ import annotations

import os
import sys
import sysconfig

import numpy as np

from tensorgraph.graph.basic import (
    Constant,
    Variable,
    apply_ancestors,
    graph_inputs,
    io_toposort,
)
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.graph.registry import Registry
from tensorgraph.graph.shared import Container, SharedVariable
from tensorgraph.graph.utils import SourceFrame
from tensorgraph.pytensor import compat
from tensorgraph.pytensor.perform_node import PyTensorPerform
from tensorgraph.pytensor.unwrap import unwrap
from tensorgraph.scalar.basic import ScalarType
from tensorgraph.scalar.basic import constant as scalar_constant
from tensorgraph.tensor.basic import constant as tensor_constant
from tensorgraph.tensor.random.type import (
    RandomGeneratorSharedVariable,
    RandomGeneratorType,
)
from tensorgraph.tensor.sharedvar import TensorSharedVariable
from tensorgraph.tensor.type import TensorType

__all__ = ["TABLE", "conversion", "convert_type", "from_pytensor", "register", "unsupported"]

#: PyTensor op class -> ``convert(op, node, *inputs)``
TABLE = Registry("PyTensor import", "tensorgraph.pytensor", ("ops",))
register, conversion = TABLE.register, TABLE.lookup


def convert_type(pt_type):
    """The tensorgraph type of a PyTensor type (tensor, scalar, random generator), or
    NotImplementedError naming it."""
    pt = compat.pytensor_modules()
    if isinstance(pt_type, pt.TensorType):
        return TensorType(pt_type.dtype, pt_type.shape)
    if isinstance(pt_type, pt.ScalarType):
        return ScalarType(pt_type.dtype)
    if isinstance(pt_type, pt.RandomGeneratorType):
        return RandomGeneratorType()
    raise NotImplementedError(f"no tensorgraph type for the PyTensor type {pt_type} "
                              f"({type(pt_type).__name__})")


def _convert_constant(var):
    pt = compat.pytensor_modules()
    if isinstance(var.type, pt.NoneTypeT):
        return None
    if isinstance(var.type, pt.SliceType):
        return var.data
    if isinstance(var.type, pt.ScalarType):
        return scalar_constant(var.data, name=var.name, dtype=var.type.dtype)
    if isinstance(var.type, pt.TensorType):
        out = tensor_constant(np.asarray(var.data, dtype=var.type.dtype), name=var.name)
        if out.type.shape != var.type.shape:  # a static shape PyTensor knows: keep it
            out = Constant(TensorType(var.type.dtype, var.type.shape), out.data, name=var.name)
        return out
    if isinstance(var.type, pt.RandomGeneratorType):
        return Constant(RandomGeneratorType(), var.data, name=var.name)
    raise NotImplementedError(f"no tensorgraph constant for {var} of type {var.type}")


def _input_variable(var):
    return convert_type(var.type)(name=var.name)


def _library_dirs() -> tuple:
    """Where the frames a user did not write live: PyTensor, PyMC (when loaded), tensorgraph
    and the standard library."""
    dirs = [sysconfig.get_paths()["stdlib"], os.path.dirname(os.path.dirname(__file__))]
    for name in ("pytensor", "pymc"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            dirs.append(os.path.dirname(module.__file__))
    return tuple(d + os.sep for d in dirs)


def user_trace(pt_var) -> tuple:
    """PyTensor's creation trace of ``pt_var`` (outermost frame first) as tensorgraph frames,
    innermost first, leaving out PyTensor's, PyMC's and tensorgraph's own frames: the line of a
    PyMC model that made it (``k = pm.Poisson("k", lam, observed=...)``). A variable a rewrite
    made holds several stacks (its own and those ``copy_stack_trace`` gave it): the last one
    with user frames."""
    traces = user_traces(pt_var)
    return traces[-1] if traces else ()


def user_traces(pt_var) -> list:
    """Each stack of PyTensor's trace of ``pt_var`` that has user frames, as ``user_trace``
    gives one."""
    trace = getattr(pt_var.tag, "trace", None)
    if not trace:
        return []
    stacks = trace if all(isinstance(t, list | tuple) and t and isinstance(t[0], tuple | list)
                          for t in trace) else [trace]
    skip = _library_dirs()
    found = []
    for frames in stacks:
        out = []
        for frame in reversed(list(frames)):
            try:
                filename, lineno, name = frame[0], frame[1], frame[2]
            except (TypeError, IndexError):
                continue
            if not str(filename).startswith(skip):
                out.append(SourceFrame(filename, lineno, name))
        if out:
            found.append(tuple(out))
    return found


def _same_kind(tg_var, pt_var) -> bool:
    tg_type, pt_type = tg_var.type, pt_var.type
    if getattr(pt_type, "dtype", None) != getattr(tg_type, "dtype", None):
        return False
    return getattr(pt_type, "ndim", None) == getattr(tg_type, "ndim", None)


def _perform_node(node, inputs, reason: str):
    """A ``PyTensorPerform`` node for ``node``. Inputs without a tensorgraph type are constants
    carried as Python values (``None`` for ``NoneConst``, a ``slice``): the node holds them
    (``fixed``) and hands them to PyTensor's ``perform`` in place."""
    pt = compat.pytensor_modules()
    fixed, args = {}, []
    for i, (pt_in, value) in enumerate(zip(node.inputs, inputs)):
        if isinstance(value, Variable):
            args.append(value)
        elif isinstance(pt_in, pt.Constant):
            fixed[i] = value
        else:
            raise NotImplementedError(
                f"the PyTensor op {node.op} has no conversion ({reason}) and its input "
                f"{pt_in} ({pt_in.type}) has no tensorgraph type, so it cannot run as a "
                "PyTensor perform node either")
    out_types = [convert_type(o.type) for o in node.outputs]
    return _as_list(PyTensorPerform(node, out_types, reason, fixed)(*args))


def _as_list(out):
    return list(out) if isinstance(out, list | tuple) else [out]


def convert_node(node, inputs) -> list:
    """The tensorgraph outputs computing what PyTensor's ``node`` computes, from the converted
    ``inputs`` (see the module docstring)."""
    impl = conversion(node.op)
    reason = f"no conversion is registered for {type(node.op).__name__}"
    if impl is not None:
        try:
            outs = _as_list(impl(node.op, node, *inputs))
        except NotImplementedError as exc:
            reason = str(exc) or reason
        else:
            if len(outs) != len(node.outputs):
                raise RuntimeError(f"the conversion of {node.op} gave {len(outs)} outputs, "
                                   f"PyTensor's node has {len(node.outputs)}")
            bad = [(t, p) for t, p in zip(outs, node.outputs)
                   if isinstance(t, Variable) and not _same_kind(t, p)]
            if not bad:
                return outs
            t, p = bad[0]
            reason = (f"the conversion gave {getattr(t, 'type', t)} where PyTensor computes "
                      f"{p.type}")
    return _perform_node(node, inputs, reason)


def from_pytensor(outputs, inputs=None, *, storage=None):
    """``(inputs, outputs)``: tensorgraph variables computing what PyTensor's ``outputs`` compute
    from ``inputs``.

    ``outputs``: a PyTensor variable, a list of them, or a PyTensor ``FunctionGraph`` (its
    inputs and outputs are then used). ``inputs``: the PyTensor variables that become the
    tensorgraph inputs, in order; by default every non-constant variable the outputs depend on
    (a FunctionGraph's inputs), less the shared variables: those become tensorgraph shared
    variables reading and writing the same storage cell as PyTensor's (``set_value``,
    ``pm.set_data`` and ``model.set_dim`` are seen by both). ``storage``: ``{PyTensor shared
    variable: one-element list}``, the cells to share instead of the variables' own
    containers' (a PyTensor function's input storage: a copied function has its own). Names
    are kept. A single output variable gives a single output back.
    """
    pt = compat.pytensor_modules()
    single = False
    explicit = inputs is not None
    if isinstance(outputs, pt.FunctionGraph):
        fgraph = outputs
        inputs = list(fgraph.inputs) if inputs is None else inputs
        outputs = list(fgraph.outputs)
    elif isinstance(outputs, pt.Variable):
        single, outputs = True, [outputs]
    else:
        outputs = list(outputs)
    for out in outputs:
        if not isinstance(out, pt.Variable):
            raise TypeError(f"from_pytensor expects PyTensor variables or a FunctionGraph, got "
                            f"{out!r} ({type(out).__name__})")
    if inputs is None:
        inputs = [v for v in pt.graph_inputs(outputs) if not isinstance(v, pt.Constant)]
    memo: dict = {}
    tg_inputs = []
    site = _call_site()  # the user's call converting the graph: PyMC's compile_logp...
    # PyTensor variable -> the user frames of the nearest place that has some (see _trace_of)
    found = {var: _own_trace(var, site)[0] for var in inputs if isinstance(var, pt.Variable)}
    for var in inputs:
        if not isinstance(var, pt.Variable):
            raise TypeError(f"from_pytensor: inputs must be PyTensor variables, got {var!r}")
        if isinstance(var, pt.SharedVariable) and not explicit:
            memo[var] = _shared(var, (storage or {}).get(var))
        else:
            memo[var] = _input_variable(var)
            tg_inputs.append(memo[var])
    for node in pt.io_toposort(inputs, outputs):
        args = []
        for var in node.inputs:
            if var not in memo:
                if not isinstance(var, pt.Constant):
                    raise ValueError(f"from_pytensor: {node.op} needs {var} "
                                     f"({var.type}), which is neither an input nor a constant")
                memo[var] = _convert_constant(var)
            args.append(memo[var])
        outs = convert_node(node, args)
        _give_trace([o for o in outs if isinstance(o, Variable)],
                    [a for a in args if isinstance(a, Variable)], _trace_of(node, found, site))
        for pt_out, tg_out in zip(node.outputs, outs):
            if pt_out.name and isinstance(tg_out, Variable):
                tg_out.name = pt_out.name
            memo[pt_out] = tg_out
    missing = [v for v in outputs if v not in memo]
    for var in missing:
        if isinstance(var, pt.Constant):
            memo[var] = _convert_constant(var)
        else:
            raise ValueError(f"from_pytensor: the output {var} is not computed from the inputs")  # noqa: TRY004
    tg_outputs = [memo[v] for v in outputs]
    return tg_inputs, (tg_outputs[0] if single else tg_outputs)


def _own_trace(pt_var, site: tuple) -> tuple:
    """``(frames, weak)``: the first stack of ``pt_var``'s PyTensor trace whose user frames do
    not start at ``site`` (the call converting the graph; weak False), else the first at it
    (weak True: the node was built by that call, as PyMC builds its log-density inside
    ``compile_logp``), else ``((), True)``."""
    traces = user_traces(pt_var)
    here = site[0] if site else None
    for trace in traces:
        if trace[0] != here:
            return trace, False
    return (traces[0], True) if traces else ((), True)


def _trace_of(node, found: dict, site: tuple) -> tuple:
    """The user frames a converted node gets: those of PyTensor's node (``user_traces``) unless
    they are only the call converting the graph (``site``) or there are none (PyTensor keeps 8
    frames, so a node PyMC builds deep inside ``compile_logp`` has only PyMC's or that call's,
    and a node a rewrite made may have none); then those its first input with some got (the
    nearest node it computes from, or a graph input: PyMC's value variables and ``pm.Data``
    carry the line of their model statement); failing that, the node's own frames or the
    converting call's. Never empty when there is a user frame on the stack."""
    own, weak = _own_trace(node.outputs[0], site)
    trace = own if not weak else next((found[v] for v in node.inputs if found.get(v)), ())
    for out in node.outputs:
        found[out] = trace
    return trace or own or site


def _call_site(limit: int = 8) -> tuple:
    """The innermost ``limit`` user frames of the current stack (PyTensor's, PyMC's,
    tensorgraph's and the standard library's left out), innermost first (frames alike
    ``user_trace``'s, so they compare equal)."""
    skip = _library_dirs()
    out, frame = [], sys._getframe(1)
    while frame is not None and len(out) < limit:
        code = frame.f_code
        if not code.co_filename.startswith(skip) and not code.co_filename.startswith("<frozen"):
            out.append(SourceFrame(code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    return tuple(out)


def _give_trace(outs, args, trace) -> None:
    """Every node a conversion made gets the user lines of the PyTensor node it converts (its
    own would be the linker's frames inside PyTensor), so errors, the stepper and the graph
    view name the model's line."""
    for node in apply_ancestors(outs, blockers=args):
        if not getattr(node.tag, "pytensor_trace", False):
            node.tag.trace = trace
            node.tag.pytensor_trace = True


def _shared(var, cell=None):
    """A tensorgraph shared variable of PyTensor's shared ``var`` holding its value in the same
    one-element list (``cell``, by default ``var``'s container's): a value PyTensor stores
    there (``set_value``, an update) is the one the tensorgraph functions read, and back."""
    tg_type = convert_type(var.type)
    cls = (TensorSharedVariable if isinstance(tg_type, TensorType) else
           RandomGeneratorSharedVariable if isinstance(tg_type, RandomGeneratorType) else
           SharedVariable)
    cell = var.container.storage if cell is None else cell
    return cls(tg_type, None, container=Container(tg_type, cell, var.name), name=var.name)


def unsupported(graph) -> list:
    """The nodes of ``graph`` that run a PyTensor op's ``perform`` (no conversion), each as
    ``(op name, reason)``, in the order they run. ``graph``: tensorgraph variables (one or a
    list), a tensorgraph FunctionGraph or Function, or a PyTensor function compiled in mode
    TENSORGRAPH (or a PyMC wrapper of one)."""
    fgraph = _fgraph_of(graph)
    if fgraph is not None:
        nodes = fgraph.toposort()
    else:
        outs = [graph] if isinstance(graph, Variable) else list(graph)
        nodes = io_toposort(graph_inputs(outs), outs)
    return [(str(n.op.pt_op), n.op.reason) for n in nodes if isinstance(n.op, PyTensorPerform)]


def _fgraph_of(graph):
    if isinstance(graph, FunctionGraph):
        return graph
    maker = getattr(graph, "maker", None)
    if maker is not None and isinstance(getattr(maker, "fgraph", None), FunctionGraph):
        return maker.fgraph
    if isinstance(graph, Variable | list | tuple):
        return None
    return unwrap(graph).maker.fgraph
