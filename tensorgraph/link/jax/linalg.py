"""JAX for ``Blockwise`` (``jax.vmap`` over the batch, ``tensorgraph.link.array_blockwise``)
and the linear algebra core ops (``tensorgraph.link.array_linalg``, shared with PyTorch):
the primitives below are ``jax.lax.linalg``, ``jnp.linalg`` and ``jax.scipy.linalg`` on the
CPU's LAPACK. The Cholesky and symmetric eigen routines are called with
``symmetrize_input=False``: they read one triangle, as ``perform`` (LAPACK) does, where
``jnp.linalg``'s defaults would average the two. QZ, ``solve_discrete_are`` and
``qr(mode='raw')`` are refused (JAX has no QZ, no such solver, no ``geqrf`` in its API)."""

from __future__ import annotations

import numpy as np

from tensorgraph.link import array_blockwise, array_linalg
from tensorgraph.link.jax import implementation, register
from tensorgraph.link.jax.elemwise import LIBRARY
from tensorgraph.link.jax.linker import TRACE
from tensorgraph.tensor.blockwise import Blockwise


class JaxLinalg(array_linalg.Linalg):
    def qr_pivoting(self, a, mode):
        from jax.scipy import linalg

        return linalg.qr(a, mode=mode, pivoting=True)

    def cholesky(self, a):
        from jax import lax

        factor = lax.linalg.cholesky(a, symmetrize_input=False)
        return factor, ~self.xp.any(self.xp.isnan(factor))

    def lu_factor(self, a):
        from jax import lax

        lu, pivots, _ = lax.linalg.lu(a)
        return lu, pivots

    def lu_solve(self, lu, pivots, b, trans):
        from jax.scipy import linalg

        return linalg.lu_solve((lu, pivots), b, trans=int(trans))

    def lu(self, a):
        from jax.scipy import linalg

        return linalg.lu(a)

    def solve_triangular(self, a, b, lower, trans, unit_diagonal):
        from jax.scipy import linalg

        return linalg.solve_triangular(a, b, trans=trans, lower=lower,
                                       unit_diagonal=unit_diagonal)

    def eigh(self, a, lower):
        return self.xp.linalg.eigh(a, UPLO="L" if lower else "U", symmetrize_input=False)

    def svd(self, a, full_matrices, compute_uv):
        return self.xp.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)

    def eig(self, a):
        return self.xp.linalg.eig(a)

    def schur(self, a, output):
        from jax.scipy import linalg

        return linalg.schur(a, output=output)

    def expm(self, a):
        from jax.scipy import linalg

        return linalg.expm(a)

    def pinv(self, a, hermitian):
        return self.xp.linalg.pinv(a, rtol=np.asarray(1e-15, a.dtype), hermitian=hermitian)

    def block_diag(self, *matrices):
        from jax.scipy import linalg

        return linalg.block_diag(*matrices)


def _vmap(fn, axes):
    import jax

    return jax.vmap(fn, in_axes=axes)


array_linalg.register_all(register, JaxLinalg(LIBRARY))
register(Blockwise)(array_blockwise.implementation(LIBRARY, implementation, TRACE, _vmap))
