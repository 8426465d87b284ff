"""The notebook layer: widgets and views of what the core records, and IPython magics.

This is the only package that imports IPython or ipywidgets; it reads what the core
records and never patches it. The views are imported from here (``show``, ``report``,
``compare``...); ``%load_ext tensorgraph`` registers the magics, rich displays and error hook
through ``tensorgraph.load_ipython_extension``, which calls ``notebook/extension.py``.
"""

import importlib

from tensorgraph.notebook.compare import Comparison, compare
from tensorgraph.notebook.compile_report import CompileReport, last_report, report
from tensorgraph.notebook.graph_view import GraphView, show
from tensorgraph.notebook.plots import line_plot
from tensorgraph.notebook.profile_view import ProfileView
from tensorgraph.notebook.stepper_view import Stepper

__all__ = ["GraphView", "show", "CompileReport", "report", "last_report", "Stepper",
           "ProfileView", "line_plot", "compare", "Comparison"]


def __getattr__(name):
    # PyMC's log-density debugger (tensorgraph.pytensor.debug) imports PyTensor: loaded on
    # first use, so the notebook layer loads without PyTensor and as fast as before (and
    # outside __all__, so a star import does not need PyTensor)
    if name == "debug_logp":
        return importlib.import_module("tensorgraph.pytensor.debug").debug_logp
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
