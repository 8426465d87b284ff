"""Stable products of sigmoids and exponentials (stabilize phase).

Gradients of a logistic model are products such as ``g / sigmoid(z) * exp(-z) / (1 + exp(-z))**2``
whose factors overflow or underflow at large ``|z|`` (``inf * 0`` is nan) although the product
is tame. Every such factor is a power of ``sigmoid(u)`` and ``sigmoid(-u)`` for one ``u``:

* ``exp(u) = sigmoid(u) / sigmoid(-u)``,
* ``1 + exp(u) = 1 / sigmoid(-u)``, ``1 - sigmoid(u) = sigmoid(-u)``,

so ``local_sigmoid_products`` counts, per ``u``, the powers of ``sigmoid(u)`` and
``sigmoid(-u)`` in a product, cancels what cancels, and rebuilds the product from sigmoids
(plus ``exp(k*u)`` for what remains of an exponential). It rewrites a product when that makes
it shorter (``exp(t) * sigmoid(-t)`` -> ``sigmoid(t)``, ``sigmoid(z) / sigmoid(z)``) or when it
holds a ``1 + exp`` (``x / (1 + exp(-z))`` -> ``x * sigmoid(z)``). When a product multiplies a
sum each of whose terms cancels against the other factors (the chain rule's
``(a/sigmoid(-z) + b/sigmoid(z)) * sigmoid(z) * sigmoid(-z)``), the product is distributed over
the sum: ``a*sigmoid(z) + b*sigmoid(-z)``, finite for every ``z``.
"""

from __future__ import annotations

from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_stabilize
from tensorgraph.scalar import basic as ps
from tensorgraph.scalar import math as psm
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.tensor.rewriting.math import (
    _MULTIPLICATIVE,
    add_terms,
    build_product,
    finish,
    mul_factors,
)
from tensorgraph.tensor.rewriting.utils import (
    as_dtype,
    constant_value,
    is_constant,
    is_elemwise,
    negate,
    same_structure,
)


def _oriented(t):
    """``(u, +1)`` for ``t = u``, ``(u, -1)`` for ``t = -u`` (a float negation only: an integer
    ``-u`` wraps around at the ends of its range, so it is a ``u`` of its own)."""
    if is_elemwise(t, ps.Neg) and t.dtype.startswith("float"):
        return t.owner.inputs[0], -1
    return t, 1


def _float(u) -> str:
    """The float dtype sigmoid and exp compute ``u`` in."""
    return u.dtype if u.dtype.startswith("float") else ps.upgrade_to_float(u.dtype)[0]


def _family(var):
    """``(u, a, b, c, one_plus_exp)`` when ``var = exp(u)**a * sigmoid(u)**b *
    sigmoid(-u)**c`` is one of the factors above, else ``None``."""
    if is_elemwise(var, psm.Sigmoid):
        u, o = _oriented(var.owner.inputs[0])
        return (u, 0, 1, 0, False) if o > 0 else (u, 0, 0, 1, False)
    if is_elemwise(var, psm.Exp):
        u, o = _oriented(var.owner.inputs[0])
        return u, o, 0, 0, False
    if is_elemwise(var, ps.Add) and len(var.owner.inputs) == 2:
        a, b = var.owner.inputs
        e = b if is_constant(a, 1) else a if is_constant(b, 1) else None
        if e is not None and is_elemwise(e, psm.Exp):
            u, o = _oriented(e.owner.inputs[0])  # 1 + exp(o*u) = 1 / sigmoid(-o*u)
            return (u, 0, 0, -1, True) if o > 0 else (u, 0, -1, 0, True)
    if is_elemwise(var, ps.Sub) and is_constant(var.owner.inputs[0], 1):
        s = var.owner.inputs[1]
        if is_elemwise(s, psm.Sigmoid):
            u, o = _oriented(s.owner.inputs[0])  # 1 - sigmoid(o*u) = sigmoid(-o*u)
            return (u, 0, 0, 1, False) if o > 0 else (u, 0, 1, 0, False)
    return None


def _powered(var):
    """``(f, k)`` for ``var = f ** k`` with a small integer constant ``k`` (or ``sqr(f)``),
    else ``(var, 1)``."""
    if is_elemwise(var, psm.Sqr):
        return var.owner.inputs[0], 2
    if is_elemwise(var, psm.Pow):
        k = constant_value(var.owner.inputs[1])
        if k is not None and float(k).is_integer() and 1 <= abs(k) <= 8:
            return var.owner.inputs[0], int(k)
    return var, 1


class _Group:
    """The factors of one ``u``: exponent of ``exp(u)``, ``sigmoid(u)``, ``sigmoid(-u)``."""

    def __init__(self, u):
        self.u = u
        self.a = self.b = self.c = 0
        self.count = 0
        self.one_plus_exp = False
        self.factors = []  # (variable, +1 | -1): the factors as they are, reused if rebuilt

    def add(self, var, power, k, a, b, c, one_plus_exp):
        self.a += power * k * a
        self.b += power * k * b
        self.c += power * k * c
        self.count += 1
        self.one_plus_exp |= one_plus_exp
        self.factors.append((var, power))

    def simplest(self):
        """``(e, b, c)``: the product as ``exp(e*u) * sigmoid(u)**b * sigmoid(-u)**c`` with
        ``b`` and ``c`` of one sign, and its number of factors."""
        b, c = self.b + self.a, self.c - self.a
        e = 0
        if b > 0 > c:
            e = min(b, -c)
        elif c > 0 > b:
            e = -min(-b, c)
        b, c = b - e, c + e
        return (e, b, c), (e != 0) + abs(b) + abs(c)


def _groups(num, den):
    """Split factors into sigmoid-family groups (by ``u``) and the other factors."""
    groups: list[_Group] = []
    others_num, others_den = [], []
    for variables, power, others in ((num, 1, others_num), (den, -1, others_den)):
        for var in variables:
            base, k = _powered(var)
            family = _family(base)
            if family is None:
                others.append(var)
                continue
            u, *contribution = family
            group = next((g for g in groups if same_structure(g.u, u)), None)
            if group is None:
                group = _Group(u)
                groups.append(group)
            group.add(var, power, k, *contribution)
    return groups, others_num, others_den


def _existing(group, u, o, scalar_class):
    """A factor of ``group`` that is ``scalar_class(o*u)`` already, to reuse."""
    for var, _ in group.factors:
        if _powered(var)[1] == 1 and is_elemwise(var, scalar_class):
            w, p = _oriented(var.owner.inputs[0])
            if p == o and same_structure(w, u):
                return var
    return None


def _build_group(group, e, b, c, num, den):
    u = group.u
    sig_u = _existing(group, u, 1, psm.Sigmoid)
    sig_neg_u = _existing(group, u, -1, psm.Sigmoid)
    if b:
        sig_u = sig_u if sig_u is not None else tm.sigmoid(u)
        (num if b > 0 else den).extend([sig_u] * abs(b))
    if c:
        sig_neg_u = sig_neg_u if sig_neg_u is not None else tm.sigmoid(negate(u, _float(u)))
        (num if c > 0 else den).extend([sig_neg_u] * abs(c))
    if e:
        existing = _existing(group, u, 1 if e > 0 else -1, psm.Exp)
        if existing is not None and abs(e) == 1:
            num.append(existing)
        else:
            f = _float(u)
            arg = u if e == 1 else negate(u, f) if e == -1 else tm.mul(as_dtype(u, f), float(e))
            num.append(tm.exp(arg))


def _simplified(num, den):
    """``(num, den, cost)`` with every sigmoid group in its simplest form, and whether that
    changed anything (see the module docstring)."""
    groups, new_num, new_den = _groups(num, den)
    changed, cost = False, 0
    for group in groups:
        (e, b, c), group_cost = group.simplest()
        cost += group_cost
        if group_cost < group.count or group.one_plus_exp:
            changed = True
            _build_group(group, e, b, c, new_num, new_den)
        else:
            new_num.extend(v for v, power in group.factors if power > 0)
            new_den.extend(v for v, power in group.factors if power < 0)
    return new_num, new_den, cost, changed


def _cost(num, den) -> int:
    return _simplified(num, den)[2]


def _inside_product(fgraph, var) -> bool:
    """Whether every reader of ``var`` is a product that will rewrite ``var`` with itself."""
    clients = fgraph.clients.get(var, ())
    return bool(clients) and all(
        c != "output" and is_elemwise(c, *_MULTIPLICATIVE) and c.outputs[0].dtype == var.dtype
        for c, _ in clients)


def _distributed(fgraph, out, sign, num, den):
    """The product distributed over a sum factor whose every term cancels against the other
    factors, or ``None``."""
    for k, factor in enumerate(num):
        if not is_elemwise(factor, ps.Add, ps.Sub) or factor.dtype != out.dtype:
            continue
        rest = num[:k] + num[k + 1:]
        rest_cost = _cost(rest, den)
        if not rest_cost:
            return None
        terms = []
        for term_sign, term in add_terms(fgraph, factor, out.dtype):
            t_sign, t_num, t_den = mul_factors(fgraph, term, out.dtype, through_shared=True)
            new_num, new_den, cost, changed = _simplified(t_num + rest, t_den + den)
            if not changed or cost >= rest_cost + _cost(t_num, t_den):
                break
            terms.append((term_sign * t_sign, build_product(out, 1, new_num, new_den)))
        else:
            pos = [t for s, t in terms if s > 0]
            neg = [t for s, t in terms if s < 0]
            total = _sum(pos) if pos else None
            if neg:
                total = tm.sub(total, _sum(neg)) if total is not None else tm.neg(_sum(neg))
            return tm.neg(total) if sign < 0 else total
    return None


def _sum(variables):
    return variables[0] if len(variables) == 1 else tm.add(*variables)


@register_stabilize("fast_compile")
@node_rewriter([Elemwise])
def local_sigmoid_products(fgraph, node):
    """Products of exp, sigmoid, 1+exp and 1-sigmoid factors in their stable, shortest form;
    distributed over a sum whose terms cancel with them (see the module docstring)."""
    out = node.outputs[0]
    if (not is_elemwise(node, *_MULTIPLICATIVE) or not out.dtype.startswith("float")
            or _inside_product(fgraph, out)):
        return None
    sign, num, den = mul_factors(fgraph, out, out.dtype, through_shared=True)
    new_num, new_den, _, changed = _simplified(num, den)
    if changed:
        new = build_product(out, sign, new_num, new_den)
    else:
        new = _distributed(fgraph, out, sign, num, den)
        if new is None:
            return None
    return finish(fgraph, node, new, num + den, "local_sigmoid_products")
