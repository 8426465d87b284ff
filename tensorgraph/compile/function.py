"""``function``: compile symbolic inputs and outputs into a Python callable."""

from __future__ import annotations

import time

from tensorgraph.compile.maker import FunctionMaker
from tensorgraph.configdefaults import config
from tensorgraph.link.compile_events import CompileRecord, emit


def function(inputs, outputs=None, mode=None, updates=None, givens=None,
             no_default_updates=False, accept_inplace=False, name=None, rebuild_strict=True,
             allow_input_downcast=None, profile=None, on_unused_input=None, trust_input=False):
    """Compile a function computing ``outputs`` from ``inputs``.

    The arguments come in the order of Theano's and PyTensor's ``function``, so
    ``function([x], y, "FAST_COMPILE")`` passes the mode; the others are best given by name.

    Parameters
    ----------
    inputs : list of Variable or In
        The arguments of the function, in order (``In`` adds a default value, a keyword name,
        mutability). Shared variables are never listed: the function reads them implicitly.
    outputs : Variable, Out, or a list of them, or None
        A single output makes the function return one value; a list makes it return a list.
    mode : str or Mode or None
        'FAST_COMPILE', 'FAST_RUN', 'Mode', a Mode instance, or None for ``config.mode``.
    updates : list of (SharedVariable, expression) pairs, or a dict
        New values for shared variables, stored after the outputs are computed (an
        accumulator's output is its value before the call). Each expression must have the
        variable's type.
    givens : list of (Variable, Variable) pairs, or a dict
        Variables replaced in the graph before compiling (e.g. an input replaced by a slice of
        a shared dataset).
    name : str
        Shown in errors, printing and profiles.
    profile : None, bool or ProfileStats
        True records time (and, with ``config.profile_memory``, memory) per node in a new
        ``ProfileStats``, ``f.profile``; pass a ProfileStats to add several functions into one.
        None: ``config.profile`` (profiles then print at exit).
    on_unused_input : 'raise', 'warn', 'ignore' or None (``config.on_unused_input``)
        What to do with an input not used by the outputs or updates.
    allow_input_downcast : bool or None
        True accepts lossy conversions of call values (float64 data for a float32 input);
        None accepts only Python floats for ``config.floatX`` inputs; False none.
    no_default_updates : bool or list of SharedVariable
        Ignore the shared variables' ``default_update`` (all, or those listed).
    accept_inplace : bool
        Allow nodes that overwrite their inputs in the given graph.
    rebuild_strict : bool
        True: a ``givens`` replacement must have the type of the variable it replaces.
        False: it may have another (dtype, static shape); the graph above it is rebuilt for it.
    trust_input : bool
        Skip the checks and conversions of call values (``f.trust_input``): faster calls,
        for values already of the right type.

    Returns
    -------
    Function
        ``f(*values, **named_values)``; ``f.maker.fgraph`` is the compiled graph.
    """
    if isinstance(mode, (list, tuple, dict)):
        raise TypeError("function()'s third argument is the mode, as in Theano and PyTensor; "
                        f"got a {type(mode).__name__}: pass updates=... by name")
    if profile is None:
        profile = config.profile
    if profile is True:
        from tensorgraph.compile.profiling import ProfileStats

        profile = ProfileStats(name or "")
    elif not profile:
        profile = None
    elif not hasattr(profile, "attach"):
        raise TypeError(f"function(profile=...) takes True, False/None or a ProfileStats, got "
                        f"{type(profile).__name__}")
    emit("start", name=name)
    started = time.perf_counter()
    emit("phase", phase="rewriting", name=name)
    maker = FunctionMaker(inputs, outputs, updates=updates, givens=givens, mode=mode,
                          name=name, profile=profile, on_unused_input=on_unused_input,
                          allow_input_downcast=allow_input_downcast,
                          no_default_updates=no_default_updates,
                          accept_inplace=accept_inplace, rebuild_strict=rebuild_strict)
    rewritten = time.perf_counter()
    fn = maker.create()
    if trust_input:
        fn.trust_input = True
    mode_name = mode if isinstance(mode, str) else (
        config.mode if mode is None else type(mode).__name__)
    maker.compile_record = CompileRecord(maker, fn.vm, mode_name, rewritten - started,
                                         time.perf_counter() - rewritten)
    fn._record = maker.compile_record  # kept up to date when the function changes tier
    if fn._pending is not None:
        maker.compile_record.tier_estimate = fn._pending.estimate_seconds
    emit("done", name=name, record=maker.compile_record, function=fn)
    return fn


def function_dump(filename, inputs, outputs=None, **kwargs):
    """Write the arguments of a ``function()`` call to ``filename`` (a pickle) instead of
    compiling, to reproduce a compilation problem elsewhere (a bug report, another
    machine)::

        tensorgraph.compile.function_dump("case.pkl", [x], y, mode="FAST_RUN")
        # later, anywhere:
        with open("case.pkl", "rb") as f:
            f = tensorgraph.function(**pickle.load(f))

    ``kwargs`` are ``function()``'s; the graph travels with its shared variables' values.
    """
    import pickle

    import inspect

    known = set(inspect.signature(function).parameters)
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise TypeError(f"function_dump: {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'}"
                        " not arguments of function()")
    arguments = dict(kwargs, inputs=inputs, outputs=outputs)
    with open(filename, "wb") as f:
        pickle.dump(arguments, f, protocol=pickle.HIGHEST_PROTOCOL)
