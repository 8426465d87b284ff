"""Parallel loops in a node's C: the loop's body as a function of its block index, run by
``tg_run`` (runtime.h) on the glue's thread pool (pool.h).

A kernel whose loop runs on several threads writes the body as a plain C function
``void body(void *args, int k, int n)`` computing block ``k`` of ``n``, and calls
``tg_run(ctx, body, &args, nblocks)`` where the loop was: nothing but the C compiler's own
language is involved (no OpenMP runtime, no outlining by the compiler), so gcc and clang build
the same thing. Static C (support code, ``.h`` files) writes such functions by hand; for a
loop generated per node, :func:`parallel_run` writes the function, the struct of what it
reads, and the call.
"""

from __future__ import annotations

__all__ = ["parallel_run"]


def parallel_run(sub: dict, name: str, captures, body: str, nblocks: str) -> str:
    """C statements running ``body`` as the blocks of a parallel loop.

    ``captures``: ``(C type, name, value)`` of every value the body reads from the node's
    function, ``value`` a C expression there (a local variable, ``tg_io[0]->data`` ...); the
    body sees each as a constant of that name (arrays go as pointers to their first element:
    they outlive the run). ``body``: C statements doing block ``tg_k`` of ``tg_nb``
    (``tg_split_block`` gives a block its share of the items). ``nblocks``: a C expression,
    usually ``tg_threads(ctx)`` or 1 below some size: one block is a plain call on this thread.

    The function and its struct are placed before the node's function through
    ``sub["define"]``, named ``TG_LOCAL(name)``: unique to the node's function (codegen), so
    nodes of one unit never collide. The function is never inlined, so the loop is compiled
    once whatever the block count."""
    fields = "".join(f"    {ctype} {cname};\n" for ctype, cname, _ in captures)
    reads = "".join(f"    {ctype} const {cname} = tg_a->{cname};\n" for ctype, cname, _ in captures)
    struct = f"struct TG_LOCAL({name})"
    sub["define"](
        f"{struct} {{\n{fields}}};\n"
        f"static TG_NOINLINE void TG_LOCAL({name}_block)(void *tg_arg, int tg_k, int tg_nb)\n"
        f"{{\n    const {struct} *const tg_a = (const {struct} *)tg_arg;\n{reads}"
        f"{body}\n}}\n")
    values = ", ".join(f".{cname} = {value}" for _, cname, value in captures)
    return (f"{{\n{struct} tg_args = {{{values}}};\n"
            f"tg_run({sub['ctx']}, TG_LOCAL({name}_block), &tg_args, {nblocks});\n}}")
