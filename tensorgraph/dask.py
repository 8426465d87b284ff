"""Running compiled functions on Dask: blocked arrays, clusters, data-parallel training.

Install with ``pip install tensorgraph[dask]``. Two things users should not write themselves:

* ``map_blocks(f, *arrays)``: a compiled function applied to every block of Dask arrays, with
  the output blocks' shapes and dtypes taken from the function's graph (no ``meta=`` or
  ``chunks=`` to guess). It runs on whatever scheduler is active: Dask's threads (a
  ``Function`` is safe to call from many threads, and whole-graph C runs release the GIL), or
  a ``distributed`` cluster, to which the function is shipped pickled: each worker process
  links it once, its C coming from that worker's module cache (docs/scaling.md).
* ``DataParallel``: one training step over data split in blocks: every block's gradient is
  computed where the block lives, the gradients are averaged (weighted by block length) on the
  client, and the user's update rule is applied there, to the shared variables the client
  holds. N steps give what N steps of the same rule on the whole data give, within float
  tolerance, for a cost that is a mean over rows (plus terms of the parameters alone).

Progress: pass ``progress=True`` to see Dask's own progress bar (``distributed.progress`` on
a cluster, ``dask.diagnostics.ProgressBar`` otherwise); a ``Client`` shown in Jupyter links its
dashboard.
"""

from __future__ import annotations

import numpy as np

try:
    import dask
    import dask.array as da
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError("tensorgraph.dask needs Dask: pip install 'tensorgraph[dask]' (or "
                      "dask[array] and distributed)") from exc

from tensorgraph.compile.compiled import Function
from tensorgraph.compile.function import function
from tensorgraph.compile.mode import Mode
from tensorgraph.gradient import grad

__all__ = ["map_blocks", "DataParallel", "output_shapes"]


# -- map_blocks ------------------------------------------------------------------------------

def map_blocks(f: Function, *arrays, progress: bool = False, name: str | None = None):
    """``f`` applied to the matching blocks of ``arrays`` (Dask arrays, or numpy arrays,
    which become one-block Dask arrays): a Dask array per output of ``f`` (one, or a list as
    ``f`` returns them). Blocks line up as in ``dask.array.map_blocks``: the arrays must be
    chunked alike along the dimensions they share. The output blocks' shapes come from ``f``'s
    graph (``output_shapes``); an output whose shape depends on the input *values* cannot be
    planned ahead and is refused with a ValueError saying so.

    Nothing runs until you call ``.compute()`` (or ``dask.compute``). ``progress`` computes at
    once with Dask's progress bar and returns numpy arrays instead.
    """
    if not isinstance(f, Function):
        raise TypeError(f"map_blocks takes a compiled tensorgraph function first, got "
                        f"{type(f).__name__}")
    n_inputs = len(f.maker.inputs)
    if len(arrays) != n_inputs:
        raise TypeError(f"map_blocks: {f._label()} takes {n_inputs} inputs "
                        f"({f._signature()}), got {len(arrays)} arrays")
    arrays = [a if isinstance(a, da.Array) else da.from_array(np.asarray(a), chunks=-1)
              for a in arrays]
    for pos, (arr, inp) in enumerate(zip(arrays, f.maker.inputs)):
        if arr.ndim != inp.variable.type.ndim:
            raise ValueError(f"map_blocks: input {pos} ({inp.name or inp.variable}) of "
                             f"{f._label()} is {inp.variable.type.ndim}-d, but array {pos} is "
                             f"{arr.ndim}-d")
    shapes_of = output_shapes(f)
    outs = f.maker.outputs
    width = max(a.ndim for a in arrays)
    kept = min(out.variable.type.ndim for out in outs)
    # axes an output drops (trailing ones) must be whole in every block
    arrays = [a.rechunk({d: -1 for d in range(kept, a.ndim) if a.numblocks[d] > 1})
              for a in arrays]
    _, arrays = da.core.unify_chunks(*[x for a in arrays for x in (a, _index(a.ndim))])
    grid = tuple(max(a.numblocks[d] for a in arrays if a.ndim > d) for d in range(width))
    # the shape of every output block, planned from the input blocks' shapes
    out_chunks = [[{} for _ in range(out.variable.type.ndim)] for out in outs]
    for index in np.ndindex(*grid):
        shapes = shapes_of(*[_block_shape(a, index) for a in arrays])
        for k, shape in enumerate(shapes):
            for d, size in enumerate(shape):
                key = index[d] if d < width else 0
                seen = out_chunks[k][d].setdefault(key, size)
                if seen != size:
                    raise ValueError(
                        f"map_blocks: output {k} of {f._label()} has {seen} elements along "
                        f"axis {d} in one block and {size} in another of the same row of "
                        "blocks; Dask needs blocks that line up (rechunk the inputs alike)")
    token = dask.base.tokenize(id(f), *arrays)
    label = name or f"tensorgraph-{f.name or 'function'}"
    results = []
    for k, out in enumerate(outs):
        dtype = np.dtype(out.variable.type.dtype)
        ndim = out.variable.type.ndim
        chunks = tuple(tuple(sizes[i] for i in sorted(sizes)) for sizes in out_chunks[k])
        results.append(da.map_blocks(
            _run_block, *arrays, dtype=dtype, chunks=chunks,
            meta=np.empty((0,) * ndim, dtype=dtype), name=f"{label}-{k}-{token}",
            drop_axis=list(range(ndim, width)), new_axis=list(range(width, ndim)) or None,
            tg_function=f, tg_output=k, tg_single=f.maker.unpack_single))
    single = f.maker.unpack_single
    if progress:
        computed = _compute_with_progress(results)
        return computed[0] if single else computed
    return results[0] if single else results


def _index(ndim: int) -> str:
    return "ijklmnopqrstuvwxyz"[:ndim]


def _block_shape(arr, index) -> tuple:
    return tuple(arr.chunks[d][index[d] if arr.numblocks[d] > 1 else 0] for d in range(arr.ndim))


def _run_block(*blocks, tg_function, tg_output, tg_single):
    """One block's output ``tg_output`` (Dask calls this in a thread or on a worker)."""
    result = tg_function(*blocks)
    return result if tg_single else result[tg_output]


def output_shapes(f: Function):
    """``shapes(*input_shapes) -> [output shape, ...]``: the shapes ``f``'s outputs have for
    inputs of these shapes, computed from the graph's shape inference without computing the
    outputs. A ValueError when a shape depends on the inputs' values."""
    import tensorgraph.tensor as tt

    maker = f.maker
    n_inputs = len(maker.inputs)
    inputs, outputs = maker.original_graph  # as given: the rewritten graph may work inplace
    explicit = inputs[:n_inputs]
    sizes = [tt.shape(out) for out in outputs[:len(maker.outputs)]]
    shape_fn = function(explicit, sizes, mode=Mode(linker="py", optimizer="fast_run"),
                        on_unused_input="ignore", name=f"shapes of {f.name or 'function'}")
    graph = shape_fn.maker.fgraph
    for pos, var in enumerate(graph.inputs[:n_inputs]):
        readers = [client for client, _ in graph.clients.get(var, []) if client != "output"]
        if any(type(node.op).__name__ not in ("Shape", "Shape_i") for node in readers):
            raise ValueError(
                f"the shape of an output of {f._label()} depends on the values of input {pos}"
                f" ({maker.inputs[pos].name or maker.inputs[pos].variable}), not only on its "
                "shape, so its blocks cannot be planned ahead; use dask.array.map_blocks with "
                "chunks= yourself")
    dtypes = [i.variable.type.dtype for i in maker.inputs]

    def shapes(*input_shapes):
        dummies = [np.broadcast_to(np.zeros((), dtype=dtype), shape)
                   for dtype, shape in zip(dtypes, input_shapes)]
        return [tuple(int(s) for s in shape) for shape in shape_fn(*dummies)]

    return shapes


def _compute_with_progress(collections):
    try:
        from distributed import default_client, progress
    except ImportError:  # pragma: no cover - distributed is part of the extra
        default_client = None
    client = None
    if default_client is not None:
        try:
            client = default_client()
        except ValueError:
            client = None
    if client is not None:
        futures = client.compute(collections)
        progress(futures)
        return client.gather(futures)
    from dask.diagnostics import ProgressBar

    with ProgressBar():
        return list(dask.compute(*collections))


# -- data-parallel training --------------------------------------------------------------------

class DataParallel:
    """A training step computed on blocks of data where they live (see the module docstring).

    Parameters
    ----------
    inputs : list of symbolic variables the cost reads per example (their first axis is the
        examples: rows of X, labels y, ...)
    cost : scalar symbolic cost, a mean over the examples (plus terms of the parameters alone,
        such as a weight decay)
    params : the shared variables to train
    updates : ``updates(params, grads) -> [(shared, new expression), ...]``: the update rule,
        applied on the client to the averaged gradients (``grads`` are symbolic variables of
        the params' types). It may update other shared variables too (momentum, a step count).
    mode : the mode of the gradient function (the workers') and the update (the client's)

    ``step(*arrays)`` runs one step on Dask arrays split along their first axis alike, and
    returns the cost over all the data (before the update).
    """

    def __init__(self, inputs, cost, params, updates, mode=None, name: str = "step"):
        params = list(params)
        if not params:
            raise ValueError("DataParallel needs at least one parameter to train")
        for p in params:
            if not hasattr(p, "get_value"):
                raise TypeError(f"DataParallel: {p} is not a shared variable; params must be "
                                "the shared variables to train")
        self.params = params
        self.inputs = list(inputs)
        # on the workers: values of the params come with each task, so a worker computes
        # the gradient at the client's current point whatever it computed before
        at = [p.type(name=f"{p.name or 'param'}_value") for p in params]
        grads = grad(cost, params)
        self.gradient = function(self.inputs + at, [cost] + list(grads),
                                 givens=list(zip(params, at)), mode=mode,
                                 name=f"{name} gradient", on_unused_input="ignore")
        grad_vars = [p.type(name=f"grad_{p.name or i}") for i, p in enumerate(params)]
        self.apply = function(grad_vars, [], updates=updates(params, grad_vars), mode=mode,
                              name=f"{name} update")
        self.name = name
        self._shipped = {}  # client -> Future of the gradient function, sent once

    def step(self, *arrays, progress: bool = False) -> float:
        if len(arrays) != len(self.inputs):
            raise TypeError(f"{self.name}: expected {len(self.inputs)} arrays (one per input: "
                            f"{', '.join(str(v) for v in self.inputs)}), got {len(arrays)}")
        arrays = [a if isinstance(a, da.Array) else da.from_array(np.asarray(a), chunks=-1)
                  for a in arrays]
        rows = {a.chunks[0] for a in arrays}
        if len(rows) != 1:
            raise ValueError(f"{self.name}: the arrays must be split alike along their first "
                             f"axis; got blocks of {sorted(rows)}")
        values = [p.get_value(borrow=True) for p in self.params]
        gradient = self._function_for_scheduler()
        parts = []
        blocks = [a.to_delayed().reshape(a.numblocks[0], -1)[:, 0] for a in arrays]
        for row in zip(*blocks):
            parts.append(dask.delayed(_block_gradient, pure=True)(gradient, values, *row))
        total = dask.delayed(_weighted_mean, pure=True)(parts)
        if progress:
            (cost, grads), = _compute_with_progress([total])
        else:
            cost, grads = total.compute()
        self.apply(*grads)
        return float(cost)

    def _function_for_scheduler(self):
        """The gradient function, or on a distributed cluster the Future of it scattered to
        every worker once (each worker unpickles, and so links, it once)."""
        try:
            from distributed import default_client
            client = default_client()
        except (ImportError, ValueError):
            return self.gradient
        future = self._shipped.get(id(client))
        if future is None or future.status != "finished":
            future = self._shipped[id(client)] = client.scatter(self.gradient, broadcast=True,
                                                                hash=False)
        return future


def _block_gradient(gradient, values, *block):
    """(examples in the block, cost, gradients) of one block, on a worker."""
    outs = gradient(*block, *values)
    return len(block[0]), outs[0], outs[1:]


def _weighted_mean(parts):
    """The cost and gradients over all blocks: block means weighted by block length."""
    total = sum(n for n, _, _ in parts)
    if total == 0:
        raise ValueError("DataParallel.step: the arrays hold no examples")
    cost = sum(n * np.asarray(c, dtype=np.float64) for n, c, _ in parts) / total
    grads = [sum(n * np.asarray(g[k], dtype=np.float64) for n, _, g in parts) / total
             for k in range(len(parts[0][2]))]
    dtypes = [np.asarray(g).dtype for g in parts[0][2]]
    return cost, [g.astype(dtype) for g, dtype in zip(grads, dtypes)]
