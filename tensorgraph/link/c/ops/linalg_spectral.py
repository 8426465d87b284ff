"""C of ``tensorgraph.tensor.linalg``'s spectral ops through LAPACK: ``Eigh`` and ``Eigvalsh``
(``syevd``), ``GeneralizedEigh`` (``sygvd``), ``Eig`` (``geev``), ``SVD`` (``gesdd``), ``QR``
(``geqrf`` + ``orgqr``; ``geqp3`` with pivoting), ``Schur`` (``gees``, sorted by LAPACK's
select functions), ``QZ`` (``gges``; with ``return_eigenvalues``, its alpha and beta too),
``Expm`` (scaling and squaring with a Pade approximant: ``gemm``, ``getrf`` / ``getrs``)
and ``SolveDiscreteARE`` (scipy's algorithm: ``gebal``, ``geqrf`` / ``orgqr``, ``gges``,
``getrf`` / ``getrs``). One ``ItemC`` per core op (``batched.py``), so the op's own nodes
and its ``Blockwise`` nodes both compute in C, a batch split across the pool.

The kernels are ``spectral.h`` (a template pasted for float32 and float64, each with the
complex routines of its precision) and ``spectral_common.h`` (shape checks, ``expm``,
``solve_discrete_are``). They declare the LAPACK routines they call themselves (the same
prototypes as ``lapack.h``'s where both declare one). They compute in the real dtype of the
node's outputs; complex matrices go to LAPACK's complex routines (``heevd``, ``hegvd``,
``geev``, ``gesdd``, ``geqrf`` + ``ungqr``, ``gees``, ``gges``), but for ``expm`` and
``solve_discrete_are`` (``perform``). A problem a kernel reports comes out as the LinAlgError
of ``Blockwise.perform``, naming the op and the batch index: "eig: the matrix holds a nan or
an inf (at batch index 2)".
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link.c.ops import read_c
from tensorgraph.link.c.ops.batched import items_support, register_item
from tensorgraph.link.c.ops.lapack import TYPES, LapackItem, lapack_prefix, letter
from tensorgraph.tensor.linalg.decomposition.eigen import (
    Eig,
    Eigh,
    Eigvalsh,
    GeneralizedEigh,
)
from tensorgraph.tensor.linalg.decomposition.qr import QR
from tensorgraph.tensor.linalg.decomposition.schur import QZ, Schur
from tensorgraph.tensor.linalg.decomposition.svd import SVD
from tensorgraph.tensor.linalg.products import Expm
from tensorgraph.tensor.linalg.solvers import SolveDiscreteARE

#: LAPACK's letter for the complex type of each float type's precision
_COMPLEX = {"float32": "c", "float64": "z"}
#: schur's and qz's sort orders as the kernels' codes (spectral_common.h)
_SORTS = {None: 0, "lhp": 1, "rhp": 2, "iuc": 3, "ouc": 4}


def spectral_support() -> str:
    """``spectral_common.h`` and ``spectral.h`` for both float types (once per unit)."""
    prefix = lapack_prefix() or ""
    kernels = [read_c("spectral.h").replace("TGT", ctype).replace("TGS", s)
               .replace("TGZ", _COMPLEX[dtype]) for dtype, (ctype, s) in TYPES.items()]
    text = "\n".join([read_c("spectral_common.h"), *kernels]).replace("LAPACK_", prefix)
    return f"#ifndef TG_SPECTRAL_DEFINED\n#define TG_SPECTRAL_DEFINED\n{text}\n#endif\n"


def _real(dtype: str) -> str:
    """The float dtype a kernel computes in for outputs of ``dtype``."""
    return np.finfo(np.dtype(dtype)).dtype.name if np.dtype(dtype).kind == "c" else dtype


class _Spectral(LapackItem):
    """A kernel of ``spectral.h`` (``tg_<letter>_sp_<name>``) computing in the real dtype of
    output ``float_output``, shapes ``tg_sp_shapes_<name>``. ``complex_inputs`` says how
    complex matrices compute: ``"kernel"``, the ``tg_<c|z>_sp_<name>`` kernel (LAPACK's complex
    routines); ``"same"``, the one kernel reads them; None, the node runs ``perform``."""

    name = ""
    float_output = 0
    complex_inputs: str | None = None
    complex_operands = True

    def kernel(self, op, core_node):
        real = _real(core_node.outputs[self.float_output].type.dtype)
        s = letter(real)      # NotImplementedError for other dtypes, or without LAPACK
        if any(v.type.dtype.startswith("complex") for v in core_node.inputs):
            if self.complex_inputs is None:
                raise NotImplementedError(f"{self.what} of a complex matrix has no C")
            if self.complex_inputs == "kernel":
                s = _COMPLEX[real]
        return f"tg_{s}_sp_{self.name}"

    def shapes(self, op, core_node):
        return f"tg_sp_shapes_{self.name}"

    def support_code(self, op, core_node):
        return items_support() + spectral_support()   # its own declarations: not lapack.h


@register_item(Eigh)
class EighItem(_Spectral):
    what, name, float_output, complex_inputs = "eigh", "eigh", 1, "kernel"
    problems = ("has eigenvalues that did not converge",)

    def params(self, op, core_node):
        return [op.lower, 1]


@register_item(Eigvalsh)
class EigvalshItem(EighItem):
    what, float_output = "eigvalsh", 0

    def params(self, op, core_node):
        return [op.lower, 0]

    def shapes(self, op, core_node):
        return "tg_sp_shapes_eigvalsh"


@register_item(GeneralizedEigh)
class GeneralizedEighItem(_Spectral):
    what, name, float_output, complex_inputs = "eigh", "eigh_general", 1, "kernel"
    problems = ("has eigenvalues that did not converge", "b is not positive definite")

    def params(self, op, core_node):
        return [op.lower]


@register_item(Eig)
class EigItem(_Spectral):
    what, name, complex_inputs = "eig", "eig", "kernel"
    problems = ("holds a nan or an inf", "has eigenvalues that did not converge")


@register_item(SVD)
class SVDItem(_Spectral):
    what, name, float_output, complex_inputs = "svd", "svd", -1, "kernel"
    problems = ("holds a nan or an inf", "has an SVD that did not converge")

    def params(self, op, core_node):
        return [op.full_matrices, op.compute_uv]


@register_item(QR)
class QRItem(_Spectral):
    what, name, float_output, complex_inputs = "qr", "qr", 0, "kernel"
    problems = ("could not be factored",)

    def params(self, op, core_node):
        return [{"full": 0, "economic": 1, "r": 2, "raw": 3}[op.mode], op.pivoting]


@register_item(Schur)
class SchurItem(_Spectral):
    what, name, complex_inputs = "schur", "schur", "same"
    problems = ("has no Schur form (the QR algorithm did not converge)",
                "has eigenvalues too close to be separated for the sort",
                "has leading eigenvalues that no longer satisfy the sort after reordering")

    def params(self, op, core_node):
        return [_SORTS[op.sort], core_node.outputs[0].type.dtype.startswith("complex")]


@register_item(QZ)
class QZItem(_Spectral):
    what, name, complex_inputs = "qz", "qz", "same"
    problems = ("has no generalized Schur form (the QZ iteration did not converge)",
                "could not be reordered for the sort (too ill-conditioned)")

    def params(self, op, core_node):
        return [_SORTS[op.sort], core_node.outputs[0].type.dtype.startswith("complex"),
                op.return_eigenvalues]

    def shapes(self, op, core_node):
        return "tg_sp_shapes_qz_eigenvalues" if op.return_eigenvalues else "tg_sp_shapes_qz"


@register_item(Expm)
class ExpmItem(_Spectral):
    """Computed in double for both float types (``tg_sp_expm``, spectral_common.h)."""

    what, name, complex_operands = "expm", "expm", False
    problems = ("has a singular Pade denominator",)

    def kernel(self, op, core_node):
        super().kernel(op, core_node)     # declines complex matrices and other dtypes
        return "tg_sp_expm"


@register_item(SolveDiscreteARE)
class SolveDiscreteAREItem(_Spectral):
    """scipy's algorithm in double for both float types, as scipy computes (``tg_sp_dare``,
    spectral_common.h)."""

    what, name, complex_operands = "solve_discrete_are", "dare", False
    problems = ("holds a nan or an inf (a, b, q or r)", "q is not symmetric",
                "r is not symmetric",
                "pencil has no generalized Schur form (no stabilizing solution)",
                "pencil gives no finite solution (no stabilizing solution)",
                ("pencil has eigenvalues too close to the unit circle (no stabilizing "
                 "solution)"))

    def kernel(self, op, core_node):
        super().kernel(op, core_node)     # declines complex matrices and other dtypes
        return "tg_sp_dare"
