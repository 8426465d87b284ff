"""PyTorch for ``Blockwise`` (``torch.vmap`` over the batch, ``tensorgraph.link.
array_blockwise``) and the linear algebra core ops (``tensorgraph.link.array_linalg``, shared
with JAX): the primitives below are ``torch.linalg``'s, whose ``_ex`` forms report a matrix
LAPACK refused as a value (the call then fails with ``perform``'s error) instead of raising
inside the compiled program. ``eig`` (complex outputs, which Inductor does not compile),
``schur``, QZ, ``solve_discrete_are`` and ``qr``'s ``pivoting=True`` (no ``geqp3``) and
``mode='raw'`` (``torch.geqrf`` does not trace) are refused."""

from __future__ import annotations

from tensorgraph.link import array_blockwise, array_linalg
from tensorgraph.link.pytorch import implementation, register
from tensorgraph.link.pytorch.elemwise import LIBRARY
from tensorgraph.link.pytorch.linker import TRACE
from tensorgraph.tensor.blockwise import Blockwise


class TorchLinalg(array_linalg.Linalg):
    missing = ("eig", "schur", "geqp3")    # geqp3: qr(pivoting=True)

    def cholesky(self, a):
        factor, info = self.xp.linalg.cholesky_ex(a)
        return factor, info == 0

    def lu_factor(self, a):
        lu, pivots, _ = self.xp.linalg.lu_factor_ex(a)
        return lu, pivots - 1

    def lu_solve(self, lu, pivots, b, trans):
        return self.xp.linalg.lu_solve(lu, (pivots + 1).to(self.xp.int32), b, adjoint=trans)

    def lu(self, a):
        return self.xp.linalg.lu(a)

    def solve_triangular(self, a, b, lower, trans, unit_diagonal):
        if trans:
            a, lower = a.mT.conj() if trans == 2 else a.mT, not lower
        return self.xp.linalg.solve_triangular(a, b, upper=not lower,
                                               unitriangular=unit_diagonal)

    def eigh(self, a, lower):
        return self.xp.linalg.eigh(a, UPLO="L" if lower else "U")

    def svd(self, a, full_matrices, compute_uv):
        if not compute_uv:
            return self.xp.linalg.svdvals(a)
        return self.xp.linalg.svd(a, full_matrices=full_matrices)

    def expm(self, a):
        return self.xp.linalg.matrix_exp(a)

    def pinv(self, a, hermitian):
        return self.xp.linalg.pinv(a, rtol=1e-15, hermitian=hermitian)

    def block_diag(self, *matrices):
        return self.xp.block_diag(*matrices)


def _vmap(fn, axes):
    import torch

    return torch.vmap(fn, in_dims=axes)


array_linalg.register_all(register, TorchLinalg(LIBRARY))
register(Blockwise)(array_blockwise.implementation(LIBRARY, implementation, TRACE, _vmap))
