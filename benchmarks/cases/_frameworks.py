"""Importing the optional frameworks the cases compare against, and their compiled modes."""

from cases import Unavailable


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
