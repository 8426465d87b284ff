"""Numba for the random draws: the ``numpy.random.Generator`` methods Numba compiles, called on
the generator of the draw's chain (``tensorgraph.link.numba.linker`` passes a copy of the
input generator), which they advance in place. Parameters given as arrays are broadcast and
drawn one element after the other in C order, which is what numpy does: the numbers are
numpy's.
"""

from __future__ import annotations

from tensorgraph.link.random_plan import draw_of
from tensorgraph.link.numba import register
from tensorgraph.link.numba.elemwise import check_dtypes
from tensorgraph.link.numba.shape import scalar, tuple_of
from tensorgraph.tensor.random.basic import ChoiceRV, PermutationRV
from tensorgraph.tensor.random.op import RandomVariable

#: distribution -> (Generator method, arguments before the parameters)
_METHODS = {"uniform": ("uniform", ""), "normal": ("normal", ""),
            "standard_normal": ("standard_normal", ""), "exponential": ("exponential", ""),
            "gamma": ("gamma", ""), "beta": ("beta", ""), "integers": ("integers", ""),
            "binomial": ("binomial", ""), "poisson": ("poisson", ""),
            "bernoulli": ("binomial", "1, "), "lognormal": ("lognormal", ""),
            "laplace": ("laplace", ""), "logistic": ("logistic", ""), "wald": ("wald", ""),
            "weibull": ("weibull", ""), "triangular": ("triangular", ""),
            "geometric": ("geometric", "")}



def _shape(code, size, sized: int, params, variables) -> list[str]:
    """The draw's shape: the ``size`` entries, or the broadcast shape of the parameters (at
    run time, numpy's rule)."""
    if sized:
        return [f"{size}[{k}]" for k in range(sized)]
    nb = max((v.ndim for v in variables), default=0)
    sizes = []
    for j in range(nb):
        name = code.name("b")
        code.line(f"{name} = 1")
        for p, var in zip(params, variables):
            jj = j - (nb - var.ndim)
            if jj < 0:
                continue
            with code.block(f"if {p}.shape[{jj}] != 1:"):
                with code.block(f"if {name} != 1 and {name} != {p}.shape[{jj}]:"):
                    code.line(code.fail("ValueError", "the parameters of a random draw do not "
                                                      "broadcast together"))
                code.line(f"{name} = {p}.shape[{jj}]")
        sizes.append(name)
    return sizes


@register(RandomVariable)
def numba_random_variable(op, node, code):
    method, prefix = draw_of(op, _METHODS, "Numba")
    g, size, *params = code.inputs
    out = code.outputs[1]
    dtype = node.outputs[1].dtype
    check_dtypes([dtype])
    variables = node.inputs[2:]
    sized = node.inputs[1].type.shape[0]
    shape = _shape(code, size, sized, params, variables)
    if all(v.ndim == 0 for v in variables):
        args = prefix + "".join(f"{p}[()], " for p in params)
        if not shape:
            scalar(code, out, dtype, f"{g}.{method}({args.rstrip(', ')})")
        else:
            code.line(f"{out} = np.asarray({g}.{method}({args}{tuple_of(shape)})).astype("
                      f"np.{dtype})")
        return
    flat = []
    for p, var in zip(params, variables):
        if var.ndim == 0:
            flat.append(f"{p}[()]")
            continue
        name = code.name("p")
        code.line(f"{name} = np.ascontiguousarray(np.broadcast_to({p}, {tuple_of(shape)}))"
                  ".ravel()")
        flat.append(name)
    total, drawn = code.name("n"), code.name("d")
    code.line(f"{total} = {' * '.join(shape) or '1'}")
    code.line(f"{drawn} = np.empty({total}, np.{dtype})")
    k = code.name("k")
    with code.block(f"for {k} in range({total}):"):
        args = prefix + ", ".join(f if f.endswith("[()]") else f"{f}[{k}]" for f in flat)
        code.line(f"{drawn}[{k}] = {g}.{method}({args})")
    code.line(f"{out} = {drawn}.reshape({tuple_of(shape)})")


@register(ChoiceRV)
def numba_choice(op, node, code):
    g, size, a, *p = code.inputs
    out = code.outputs[1]
    dtype = node.outputs[1].dtype
    sized = node.inputs[1].type.shape[0]
    shape = tuple_of(f"{size}[{k}]" for k in range(sized))
    population = f"{a}[()]" if op.a_ndim == 0 else f"{a}.shape[0]"
    picked = code.name("idx")
    if op.has_p:
        if not op.replace:
            raise NotImplementedError("choice without replacement with probabilities has no "
                                      "Numba implementation")
        cdf = code.name("cdf")
        code.line(f"{cdf} = np.cumsum({p[0]})")
        code.line(f"{cdf} = {cdf} / {cdf}[-1]")
        code.line(f"{picked} = np.searchsorted({cdf}, np.asarray({g}.random({shape})), "
                  "side='right')")
    elif op.replace:
        code.line(f"{picked} = np.asarray({g}.integers(0, {population}, {shape}))")
    else:
        count = " * ".join(f"{size}[{k}]" for k in range(sized)) or "1"
        code.line(f"{picked} = {g}.permutation({population})[:{count}].reshape({shape})")
    taken = picked if op.a_ndim == 0 else f"{a}.ravel()[{picked}.ravel()].reshape({shape})"
    code.line(f"{out} = np.asarray({taken}).astype(np.{dtype})")


@register(PermutationRV)
def numba_permutation(op, node, code):
    g, size, x = code.inputs
    out = code.outputs[1]
    dtype = node.outputs[1].dtype
    if op.x_ndim == 0:
        code.line(f"{out} = {g}.permutation({x}[()]).astype(np.{dtype})")
    else:
        order = code.name("order")
        code.line(f"{order} = {g}.permutation({x}.shape[0])")
        code.line(f"{out} = {x}[{order}].astype(np.{dtype})")
