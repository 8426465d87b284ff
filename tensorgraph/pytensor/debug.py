"""``debug_logp(model, point=None)``: which term of a PyMC model's log-density is not finite at a
point, and which node made it so.

Why: PyMC's most common wall is "SamplingError: Initial evaluation of model at starting point
failed! ... {'sigma': -inf}", which names the random variable but not what inside its
log-density went wrong. This compiles the model's log-density terms as PyMC does (its
rewrites turn failed parameter checks into -inf) in mode TENSORGRAPH, evaluates them at the
point, and steps that call (``tensorgraph.compile.stepper``) to the first node whose output
is nan or inf while its inputs were finite; the answer names the term, the node and the line
of the model that made the random variable:
``k_logprob: -inf, node ... [id C], from `k = pm.Poisson("k", lam, observed=y)` (model.py:12)``.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.compile.stepper import NonFinite
from tensorgraph.graph.basic import apply_ancestors
from tensorgraph.pytensor.convert import user_trace
from tensorgraph.pytensor.unwrap import unwrap

__all__ = ["debug_logp", "LogpDebug"]

_SUFFIX = "_logprob"


class LogpDebug:
    """What ``debug_logp`` found.

    Attributes: ``terms`` ({term name: its sum at the point}, PyMC's names, ``mu_logprob``...),
    ``term`` (the first non-finite term, or None when all are finite), ``value`` (its value),
    ``culprit`` (the stepper's ``NonFinite``: node, id, output, counts, or None), ``rv`` (the
    PyMC random variable of the term), ``line`` and ``location`` (the model's line that made
    it and its ``file:line``, or ''),
    ``stepper`` (the call, stopped at the culprit: ``stepper.values`` holds what each node
    computed so far), ``function`` (the tensorgraph Function of the terms)."""

    def __init__(self, terms, term, culprit, rv, source, stepper, function):
        self.terms, self.term, self.culprit = terms, term, culprit
        self.value = terms.get(term)
        self.rv, (self.line, self.location) = rv, source
        self.stepper, self.function = stepper, function

    def __str__(self) -> str:
        if self.term is None:
            return ("every log-density term is finite at this point: "
                    + ", ".join(f"{k}={v:.6g}" for k, v in self.terms.items()))
        parts = [f"{self.term}: {self.value}"]
        if isinstance(self.culprit, NonFinite):
            node = self.culprit.node
            parts.append(f"node {node.op} [id {self.culprit.node_id}]")
        elif self.culprit is not None:
            parts.append(str(self.culprit))
        if self.line:
            parts.append(f"from `{self.line}` ({self.location})")
        return ", ".join(parts)

    __repr__ = __str__


def _rv_of(model, term: str):
    stem = term.removesuffix(_SUFFIX)
    var = model.named_vars.get(stem)
    if var is None:
        return None
    return model.values_to_rvs.get(var, var)


def _source(rv) -> tuple[str, str]:
    """The model's line that made ``rv`` and where it is (``file:line``), or ('', '')."""
    frames = user_trace(rv) if rv is not None else ()
    return (frames[0].line, frames[0].location) if frames else ("", "")


def debug_logp(model, point=None) -> LogpDebug:
    """Evaluate the log-density terms of PyMC ``model`` at ``point`` (default: the model's
    initial point, as ``pm.sample`` starts) and find the first non-finite one and the node
    that made it (see the module docstring).

    >>> with pm.Model() as model:
    ...     lam = pm.Gamma("lam", 2, 1)
    ...     pm.Poisson("k", lam, observed=[1, -2, 3])
    >>> found = tgn.debug_logp(model)
    >>> found.term, found.line
    ('k_logprob', 'pm.Poisson("k", lam, observed=[1, -2, 3])')
    >>> found.stepper.values  # what each node computed up to the culprit
    """
    point = model.initial_point() if point is None else dict(point)
    names = [t.name for t in model.logp(sum=False)]
    fn = unwrap(model.compile_logp(sum=False, mode="TENSORGRAPH"))
    inputs = fn.maker.fgraph.inputs[:len(fn.maker.fgraph.inputs) - len(fn.maker.shared_inputs)]
    missing = [v.name for v in inputs if v.name not in point]
    if missing:
        raise KeyError(f"debug_logp: the point has no value for {missing} (it needs "
                       f"{[v.name for v in inputs]})")
    kwargs = {v.name: np.asarray(point[v.name], dtype=v.type.dtype) for v in inputs}
    values = fn(**kwargs)
    terms = {name: float(np.sum(v)) for name, v in zip(names, values, strict=True)}
    bad = [name for name, v in terms.items() if not np.isfinite(v)]
    if not bad:
        return LogpDebug(terms, None, None, None, ("", ""), None, fn)
    stepper = fn.stepper(**kwargs)
    culprit = stepper.run_until_nonfinite()
    term = bad[0]
    if isinstance(culprit, NonFinite):
        outputs = fn.maker.fgraph.outputs
        for name, out in zip(names, outputs):
            if name in bad and culprit.node in apply_ancestors([out]):
                term = name
                break
    rv = _rv_of(model, term)
    return LogpDebug(terms, term, culprit, rv, _source(rv), stepper, fn)
