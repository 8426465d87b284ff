"""Compiling graphs into callables: ``function``, shared variables, ``In``/``Out`` and modes."""

from tensorgraph.compile.compiled import Function
from tensorgraph.compile.debugmode import DebugMode, DebugModeError
from tensorgraph.compile.builders import OpFromGraph
from tensorgraph.compile.function import function, function_dump
from tensorgraph.compile.io import In, Out
from tensorgraph.compile.maker import FunctionMaker, UnusedInputError
from tensorgraph.compile.mode import (
    FAST_COMPILE,
    FAST_RUN,
    Mode,
    get_default_mode,
    get_mode,
    register_mode,
    set_rewriter,
)
from tensorgraph.compile.monitormode import MonitorMode
from tensorgraph.compile.ops import DeepCopyOp, as_op, deep_copy_op, wrap_py
from tensorgraph.compile.nanguardmode import NanGuardMode
from tensorgraph.compile.profiling import ProfileStats
from tensorgraph.compile.sharedvalue import SharedVariable, shared, shared_constructor

__all__ = [
    "Function", "function", "function_dump", "OpFromGraph", "In", "Out", "FunctionMaker", "UnusedInputError", "FAST_COMPILE",
    "FAST_RUN", "Mode", "get_mode", "get_default_mode", "register_mode", "set_rewriter", "SharedVariable", "shared",
    "shared_constructor", "MonitorMode", "NanGuardMode", "ProfileStats",
    "DebugMode", "DebugModeError", "as_op", "wrap_py", "DeepCopyOp", "deep_copy_op",
]
