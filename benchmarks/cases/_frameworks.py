"""Importing the optional frameworks the cases compare against, and their compiled modes."""

from cases import Unavailable

#: tensorgraph's whole-graph back ends, each a column of the table (``tg:JAX`` ...): the case's
#: ``make_tensorgraph(size, mode=...)`` compiled in that mode instead of FAST_RUN
MODE_COLUMNS = {"tg:JAX": "JAX", "tg:NUMBA": "NUMBA", "tg:PYTORCH": "PYTORCH"}


def pytensor():
    """(pytensor, pytensor.tensor, the C-linker mode): PyTensor's C backend, 'cvm' linker."""
    try:
        import pytensor as pt
        import pytensor.tensor as ptt
        from pytensor.compile.mode import Mode
    except Exception as exc:  # not installed, or broken install
        raise Unavailable(f"pytensor: {exc}") from None
    if not pt.config.cxx:
        raise Unavailable("pytensor has no C compiler (config.cxx is empty)")
    return pt, ptt, Mode(linker="cvm", optimizer="fast_run")


def jax():
    """(jax, jax.numpy) for the cases written by hand in JAX (``make_jax``): ``jax.jit`` of
    the numpy-style step, gradients by ``jax.grad``, inputs as JAX arrays made once, and every
    call waits for its results (``block_until_ready``: JAX dispatches asynchronously, and a
    timing without the wait measures the dispatch alone)."""
    try:
        import jax as jax_
        import jax.numpy as jnp
    except Exception as exc:
        raise Unavailable(f"jax: {exc}") from None
    return jax_, jnp
