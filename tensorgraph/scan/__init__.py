"""Loops in the graph: ``scan`` and its views ``map``, ``reduce``, ``foldl``, ``foldr``,
``filter``.

``tensorgraph.scan`` is this module and is callable: ``tensorgraph.scan(fn, sequences=...)``
is ``tensorgraph.scan.scan(...)``, as ``pytensor.scan`` is a function while
``pytensor.scan.basic``, ``pytensor.scan.utils.until`` and ``pytensor.scan.views.map`` are
modules. Modules: ``basic`` (the ``scan`` function), ``op`` (the ``Scan`` op and its
layout), ``loop`` (running it), ``grad`` (back-propagation through time and forward mode),
``shapes``, ``rewriting`` (the loop rewrites), ``views``, ``utils`` (``until``).
"""

import sys
import types

from tensorgraph.scan.basic import scan
from tensorgraph.scan.op import Scan, ScanInfo
from tensorgraph.scan.utils import until
from tensorgraph.scan.views import filter, foldl, foldr, map, reduce

__all__ = ["scan", "map", "reduce", "foldl", "foldr", "filter", "until", "Scan", "ScanInfo"]


class _CallableModule(types.ModuleType):
    """This package, callable as ``scan``."""

    def __call__(self, *args, **kwargs):
        return scan(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
