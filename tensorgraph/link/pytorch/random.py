"""PyTorch for the random draws (``RandomVariable`` and its subclasses).

The compiled graph draws from PyTorch's default generator, seeded at each call from the
input numpy generators (``tensorgraph.link.pytorch.linker`` says why and how): a generator
input is a marker while tracing, and a draw passes it on as its advanced state. Uniform and
normal numbers are ``torch.rand`` / ``torch.randn`` (Inductor's random kernels); the other
distributions are made from them by inverting their distribution functions, except gamma,
beta, binomial and Poisson, which are PyTorch's own samplers (``_standard_gamma``,
``binomial``, ``poisson``). The numbers are PyTorch's, not numpy's.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link.random_plan import draw_of, draws_named
from tensorgraph.link.pytorch import as_tensor, register, torch_dtype
from tensorgraph.link.pytorch.linker import static_ints
from tensorgraph.link.traced_random import choice_sizes, draw_shape
from tensorgraph.tensor.random.basic import ChoiceRV, PermutationRV
from tensorgraph.tensor.random.op import RandomVariable


def _torch():
    import torch

    return torch


def _rand(shape, dtype):
    return _torch().rand(shape, dtype=torch_dtype(dtype))


def _uniform(shape, dtype, low, high):
    return low + (high - low) * _rand(shape, dtype)


def _normal(shape, dtype, loc, scale):
    return loc + scale * _torch().randn(shape, dtype=torch_dtype(dtype))


def _standard_normal(shape, dtype):
    return _torch().randn(shape, dtype=torch_dtype(dtype))


def _standard_exponential(shape, dtype):
    return -_torch().log1p(-_rand(shape, dtype))


def _exponential(shape, dtype, scale):
    return scale * _standard_exponential(shape, dtype)


def _standard_gamma(shape, a):
    return _torch()._standard_gamma(a.expand(shape).contiguous())


def _gamma(shape, dtype, a, scale):
    return _standard_gamma(shape, a) * scale


def _beta(shape, dtype, a, b):
    x, y = _standard_gamma(shape, a), _standard_gamma(shape, b)
    return x / (x + y)


def _integers(shape, dtype, low, high):
    return low + _torch().floor(_rand(shape, "float64") * (high - low))


def _binomial(shape, dtype, n, p):
    return _torch().binomial(n.expand(shape).contiguous(), p.expand(shape).contiguous())


def _poisson(shape, dtype, lam):
    return _torch().poisson(lam.expand(shape).contiguous())


def _bernoulli(shape, dtype, p):
    return _rand(shape, "float64") < p


def _lognormal(shape, dtype, mean, sigma):
    return _torch().exp(_normal(shape, dtype, mean, sigma))


def _laplace(shape, dtype, loc, scale):
    torch = _torch()
    u = _rand(shape, dtype) - 0.5
    return loc - scale * torch.sign(u) * torch.log1p(-2 * torch.abs(u))


def _logistic(shape, dtype, loc, scale):
    torch = _torch()
    u = _rand(shape, dtype)
    return loc + scale * (torch.log(u) - torch.log1p(-u))


def _weibull(shape, dtype, a):
    return _torch().pow(_standard_exponential(shape, dtype), 1 / a)


def _geometric(shape, dtype, p):
    torch = _torch()
    trials = torch.ceil(torch.log1p(-_rand(shape, "float64")) / torch.log1p(-p))
    return torch.clamp(trials, min=1)


_DRAWS = draws_named(globals())


@register(RandomVariable)
def torch_random_variable(op, node):
    draw = draw_of(op, _DRAWS, "PyTorch")
    dtype = node.outputs[1].dtype
    compute = dtype if np.dtype(dtype).kind == "f" else "float64"

    def random_variable(generator, size, *params):
        shape = draw_shape(op, node.inputs[1].type.shape[0], size, params,
                           static_ints)
        params = [as_tensor(p, compute) for p in params]
        return generator, as_tensor(draw(shape, compute, *params), dtype)

    return random_variable


def _indices(n: int, shape, replace: bool, p):
    """Positions in ``range(n)``: ``prod(shape)`` of them, drawn with or without replacement,
    weighted by ``p`` (a tensor) or not."""
    torch = _torch()
    count = int(np.prod(shape, dtype=np.int64))
    if p is not None:
        flat = torch.multinomial(as_tensor(p, "float64"), count, replacement=replace)
    elif replace:
        flat = torch.floor(_rand((count,), "float64") * n).to(torch.int64)
    else:
        if count > n:
            raise ValueError(f"choice: cannot take {count} samples from {n} without replacement")
        flat = torch.argsort(_rand((n,), "float64"))[:count]
    return flat.reshape(shape)


@register(ChoiceRV)
def torch_choice(op, node):
    dtype = node.outputs[1].dtype

    def choice(generator, size, a, *p):
        shape, n = choice_sizes(node, size, a, static_ints)
        if n is not None:
            return generator, as_tensor(_indices(n, shape, op.replace, p[0] if p else None),
                                        dtype)
        a = as_tensor(a)
        picked = a[_indices(int(a.shape[0]), shape, op.replace, p[0] if p else None)]
        return generator, as_tensor(picked, dtype)

    return choice


@register(PermutationRV)
def torch_permutation(op, node):
    dtype = node.outputs[1].dtype

    def permutation(generator, size, x):
        torch = _torch()
        if op.x_ndim == 0:
            n = static_ints(x, "the length of a permutation")[0]
            return generator, as_tensor(torch.argsort(_rand((n,), "float64")), dtype)
        x = as_tensor(x)
        return generator, as_tensor(x[torch.argsort(_rand((int(x.shape[0]),), "float64"))],
                                    dtype)

    return permutation
