"""``MonitorMode``: call your own functions before and after every node of every call.

The per-node loop of every linker (the Python VM today, the C per-node thunks of ``c|py`` /
``cvm``) calls ``vm.pre_hook(i, node, thunk)`` and ``vm.post_hook(i, node, thunk)`` around node
``i`` of the toposort. ``MonitorMode`` installs your functions there, with the FunctionGraph
added in front, as in Theano::

    def inspect_outputs(fgraph, i, node, thunk):
        print(i, node, [cell[0] for cell in thunk.outputs])

    f = tensorgraph.function([x], y, mode=MonitorMode(post_func=inspect_outputs))

``thunk.inputs`` / ``thunk.outputs`` are the node's storage cells (one-element lists), so a
hook sees the very values the next node reads. ``detect_nan`` is a ready ``post_func``.

``add_hooks`` is how every wrapper (this mode, NanGuardMode, the profiler) installs its hooks
without displacing the others'.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.compile.mode import Mode


def add_hooks(vm, pre=None, post=None) -> None:
    """Install ``pre`` / ``post`` (``fn(i, node, thunk)``) on ``vm``, keeping hooks already there.

    Hooks added later run closer to the node: the new ``pre`` runs after the existing one, the
    new ``post`` before the existing one (so a timer added last measures only the node).
    """
    if pre is not None:
        vm.pre_hook = _then(vm.pre_hook, pre)
    if post is not None:
        vm.post_hook = _then(post, vm.post_hook)


def _then(first, second):
    """One hook running ``first`` then ``second`` (either may be ``None``)."""
    if first is None or second is None:
        return second if first is None else first

    def both(i, node, thunk):
        first(i, node, thunk)
        second(i, node, thunk)
    return both


class HookingLinker:
    """Wraps a linker: every VM it makes gets ``install(vm)`` called on it.

    The wrapped linker does the real work (Python or C thunks); this only adds hooks, so the
    same mode runs on whatever linker is configured.
    """

    def __init__(self, inner, install, name: str):
        self.inner = inner
        self.install = install
        self.name = name

    def make_vm(self, fgraph, input_storage=None, storage_map=None):
        vm = self.inner.make_vm(fgraph, input_storage, storage_map)
        self.install(vm)
        return vm

    def __repr__(self):
        return f"HookingLinker({self.name!r}, {self.inner!r})"


class HookMode(Mode):
    """A Mode whose VMs get ``self.install_hooks(vm)`` after linking (base of the wrapper
    modes). ``linker=None`` means ``config.linker``, falling back to the Python VM while the C
    linkers are not available."""

    def __init__(self, linker=None, optimizer="default"):
        super().__init__(linker, optimizer, fallback=linker is None)

    @property
    def linker(self):
        inner = super().linker
        return HookingLinker(inner, self.install_hooks, f"{type(self).__name__}/"
                                                        f"{self.linker_name}")

    def install_hooks(self, vm) -> None:
        raise NotImplementedError

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)


class MonitorMode(HookMode):
    """Run ``pre_func(fgraph, i, node, thunk)`` / ``post_func(fgraph, i, node, thunk)`` around
    every node of every call.

    Parameters
    ----------
    pre_func, post_func : callable or None
    optimizer : rewrite preset name ('default': ``config.optimizer``)
    linker : linker name (None: ``config.linker``, Python VM while no C linker exists)
    """

    def __init__(self, pre_func=None, post_func=None, optimizer="default", linker=None):
        for name, fn in (("pre_func", pre_func), ("post_func", post_func)):
            if fn is not None and not callable(fn):
                raise TypeError(f"MonitorMode({name}=...) must be callable, got "
                                f"{type(fn).__name__}")
        super().__init__(linker, optimizer)
        self.pre_func = pre_func
        self.post_func = post_func

    def install_hooks(self, vm) -> None:
        fgraph = vm.fgraph
        pre = post = None
        if self.pre_func is not None:
            pre_func = self.pre_func

            def pre(i, node, thunk):
                pre_func(fgraph, i, node, thunk)
        if self.post_func is not None:
            post_func = self.post_func

            def post(i, node, thunk):
                post_func(fgraph, i, node, thunk)
        add_hooks(vm, pre, post)

    def __repr__(self):
        return (f"MonitorMode(pre_func={self.pre_func!r}, post_func={self.post_func!r}, "
                f"linker={self.linker_name!r}, optimizer={self.optimizer!r})")


def _has_nan(value) -> bool:
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        return bool(np.isnan(value).any())
    if isinstance(value, (float, complex, np.floating, np.complexfloating)):
        return bool(np.isnan(value))
    return False


def detect_nan(fgraph, i, node, thunk) -> None:
    """A ``post_func`` printing the node, its inputs and outputs when an output contains nan."""
    outputs = [cell[0] for cell in thunk.outputs]
    if not any(_has_nan(v) for v in outputs):
        return
    from tensorgraph.graph.utils import format_user_line

    print(f"*** NaN detected in node {i}: {node}")
    where = format_user_line(node)
    if where:
        print(f"    created at {where}")
    for k, cell in enumerate(thunk.inputs):
        print(f"    input {k}: {node.inputs[k]} = {cell[0]!r}")
    for k, value in enumerate(outputs):
        print(f"    output {k}: {value!r}")
