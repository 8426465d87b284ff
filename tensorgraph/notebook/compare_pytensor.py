"""``tgn.compare`` of a PyTensor function: rows for PyTensor's own modes beside tensorgraph's.

Given a PyTensor function (or a PyMC compiled function wrapping one: ``compile_logp``'s
``PointFunc``, a ``ValueGradFunction``), ``compare`` measures

* ``TENSORGRAPH``: the PyTensor function in PyTensor mode TENSORGRAPH (the given one when it
  was compiled in that mode, else the same graph compiled in it), called through PyTensor's
  ``Function.__call__``: what a PyMC user runs;
* the tensorgraph modes asked (``modes``: FAST_RUN, JAX, NUMBA, PYTORCH...), each compiling the
  graph that function's linker converted (``tensorgraph.pytensor.unwrap``), called directly;
* ``PyTensor C``, ``PyTensor NUMBA`` (``pytensor_modes``): the same PyTensor graph (its inputs,
  outputs and updates as the function was given them) compiled with ``pytensor.function`` in
  PyTensor's FAST_RUN (its C) and NUMBA modes, with the rewrites the given function's mode
  added to its preset (PyMC adds ``local_check_parameter_to_ninf_switch`` and
  ``random_make_inplace``).

Every row is called with the same arguments and compared with the first row that ran. A mode
PyTensor cannot compile here (Numba not installed...) is a row with the error's first line.
Compile times in fresh processes are measured for the tensorgraph modes only (a cold PyTensor C
compile of a PyMC model takes tens of seconds): the PyTensor rows have ``compile_here``, the
seconds this process took, with whatever PyTensor's caches held.

PyTensor is imported here, and this module only when ``compare`` is given a PyTensor function:
the notebook layer never imports PyTensor otherwise.
"""

from __future__ import annotations

import time

from tensorgraph.notebook.compare_worker import first_line

__all__ = ["PyTensorRows", "pytensor_function_of", "PYTENSOR_MODES"]

#: row name -> PyTensor mode name, for ``pytensor_modes=["C", "NUMBA"]``
PYTENSOR_MODES = {"C": "FAST_RUN", "NUMBA": "NUMBA"}
TENSORGRAPH_ROW = "TENSORGRAPH"
NOT_MEASURED = ("not measured in new processes for PyTensor's modes (compile_here: this "
                "process, PyTensor's caches as they were)")


def pytensor_function_of(obj):
    """The PyTensor ``Function`` that ``obj`` is or wraps (PyMC's ``PointFunc.f``,
    ``ValueGradFunction._pytensor_function``), or None: read by attributes, so that nothing of
    PyTensor is imported for a tensorgraph function."""
    from tensorgraph.notebook.unwrapping import is_pytensor_object

    if not is_pytensor_object(obj):
        return None
    for _ in range(4):
        if obj is None:
            return None
        module = type(obj).__module__ or ""
        if module.split(".")[0] == "pytensor" and hasattr(obj, "maker") and hasattr(obj, "vm"):
            return obj
        if module.split(".")[0] == "tensorgraph":
            return None
        obj = getattr(obj, "f", None) or getattr(obj, "_pytensor_function", None)
    return None


def _explicit(fn) -> list:
    return [i for i in fn.maker.inputs if not i.implicit]


class PyTensorRows:
    """The PyTensor side of a comparison of ``fn`` (a PyTensor Function): the TENSORGRAPH
    function, the tensorgraph Function behind it (whose graph the tensorgraph modes compile),
    the PyTensor rows' functions or errors, and the arguments each kind of row takes."""

    def __init__(self, fn, pytensor_modes):
        import tensorgraph.pytensor as tgp  # registers the mode

        self.given = fn
        self.rows: dict = {}       # row name -> (function or None, error or None, seconds)
        self.names = [TENSORGRAPH_ROW]
        try:
            tg_fn = tgp.unwrap(fn)
            self.rows[TENSORGRAPH_ROW] = (fn, None, None)
        except TypeError:  # compiled in another PyTensor mode: compile it in TENSORGRAPH
            self.rows[TENSORGRAPH_ROW] = self._compile("TENSORGRAPH")
            tg_fn = (tgp.unwrap(self.rows[TENSORGRAPH_ROW][0])
                     if self.rows[TENSORGRAPH_ROW][0] is not None else None)
        self.tg_function = tg_fn
        for mode in pytensor_modes:
            name = f"PyTensor {mode}"
            self.names.append(name)
            self.rows[name] = self._compile(PYTENSOR_MODES.get(mode, mode))

    def _compile(self, pt_mode: str):
        """(function, error, seconds) of the given function's graph compiled in PyTensor's
        ``pt_mode`` with the given function's added rewrites."""
        import pytensor
        from pytensor.compile.mode import get_mode

        maker = self.given.maker
        started = time.perf_counter()
        try:
            mode = get_mode(pt_mode)
            query = getattr(maker.mode, "provided_optimizer", None)
            extra = [t for t in getattr(query, "include", ()) if t not in ("fast_run",
                                                                            "fast_compile")]
            if extra:
                mode = mode.including(*extra)
            outputs = [o.variable for o in maker.outputs]
            fn = pytensor.function(
                _explicit(self.given), outputs[0] if self.given.unpack_single else outputs,
                updates=[(i.variable, i.update) for i in maker.inputs if i.update is not None],
                mode=mode, on_unused_input="ignore", name=self.given.name)
        except Exception as exc:  # noqa: BLE001 - a mode that cannot compile is a row
            return None, exc, None
        return fn, None, time.perf_counter() - started

    def arguments(self, args):
        """``args`` as positional arguments of the PyTensor functions: a dict (a PyMC point)
        is read by the inputs' names (also given alone in a tuple: ``%tg_compare logp(point)``)."""
        if isinstance(args, list | tuple) and len(args) == 1 and isinstance(args[0], dict):
            args = args[0]
        if isinstance(args, dict):
            names = [i.variable.name for i in _explicit(self.given)]
            missing = [n for n in names if n not in args]
            if missing:
                raise KeyError(f"compare: the point has no value for {missing} (the function "
                               f"takes {names})")
            return tuple(args[n] for n in names)
        return tuple(args) if isinstance(args, list | tuple) else (args,)

    def tg_arguments(self, args: tuple) -> tuple:
        """The tensorgraph Function's arguments: the PyTensor function's (its shared variables
        are the converted graph's, holding their values in PyTensor's own cells)."""
        return args

    def shared(self) -> list:
        """The PyTensor shared variables every row may update (to put back after each)."""
        seen, out = set(), []
        for fn, _, _ in self.rows.values():
            for i in (fn.maker.inputs if fn is not None else ()):
                if i.implicit and id(i.variable) not in seen:
                    seen.add(id(i.variable))
                    out.append(i.variable)
        return out

    def row(self, name: str, blank: dict) -> tuple[dict, object, BaseException | None]:
        """(the row of ``name``, its function, its error)."""
        fn, error, seconds = self.rows[name]
        row = dict(blank, mode=name, compile_here=seconds, compile_note=NOT_MEASURED)
        if error is not None:
            row["error"] = first_line(error)
            return row, None, error
        # TENSORGRAPH: the nodes of the graph tensorgraph runs (the graph view's), not PyTensor's
        graph = self.tg_function if name == TENSORGRAPH_ROW else fn
        row["nodes"] = len(graph.maker.fgraph.apply_nodes)
        return row, fn, None


def results(fn, args) -> list[tuple[str, object]]:
    """(name, value) of every output of one call of PyTensor function ``fn``, then of every
    shared variable it updates (``compare._results`` for tensorgraph Functions)."""
    import numpy as np

    out = fn(*args)
    values = [out] if fn.unpack_single else list(out)
    named = []
    for k, (o, v) in enumerate(zip(fn.maker.outputs, values)):
        label = getattr(o.variable, "name", None) or f"output {k}"
        named.append((label, np.array(v, copy=True)))
    targets = [i.variable for i in fn.maker.inputs if i.update is not None]
    for k, s in enumerate(targets):
        value = s.get_value(borrow=False)
        if isinstance(value, np.ndarray) or np.isscalar(value):
            named.append((f"{s.name or f'shared {k}'} (updated)", np.array(value, copy=True)))
    return named


def graph_text(fn) -> str:
    """PyTensor's ``debugprint`` of ``fn``'s rewritten graph."""
    from pytensor.printing import debugprint

    return debugprint(fn, file="str")
