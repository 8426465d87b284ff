"""The fresh process behind ``compare``'s cold and warm compile times.

    python .../tensorgraph/notebook/compare_worker.py JOB_PICKLE MODE

``compare`` starts it with the flags' environment variable (``configparser.ENV_FLAGS``)
pointing the compile directory at a directory of its own (empty for the cold compile, as the cold one left it for the warm one).
Run by its path, it imports what compiling needs and not the notebook layer. It loads the
job (the graph, the arguments, the notebook's changed flags), compiles a tiny unrelated graph in the mode (importing the back end and starting its compiler are costs of a
process, not of the graph), then times ``function()`` up to the first call's result, and
prints one line ``TG_COMPARE {json}``: ``seconds``, or ``error`` (the error's first line).
"""

from __future__ import annotations

import json
import pickle
import sys
import time


def main(argv: list[str]) -> int:
    job_path, mode = argv
    try:
        answer = _compile(job_path, mode)
    except Exception as exc:  # noqa: BLE001 - the answer says why, the parent goes on
        answer = {"error": first_line(exc)}
    print("TG_COMPARE " + json.dumps(answer), flush=True)
    return 0


def _compile(job_path: str, mode: str) -> dict:
    import numpy as np

    import tensorgraph.tensor as tt
    from tensorgraph.compile.function import function
    from tensorgraph.configdefaults import config

    with open(job_path, "rb") as f:
        job = pickle.load(f)  # noqa: S301 - written by the parent process a moment ago
    config.update(job["flags"])
    small = tt.vector("small", dtype="int8")
    function([small], small * 2 + 1, mode=mode)(np.ones(3, dtype="int8"))
    graph = job["graph"]
    started = time.perf_counter()
    fn = function(graph["inputs"], graph["outputs"], updates=graph["updates"],
                  givens=graph["givens"], mode=mode, on_unused_input="ignore")
    if getattr(fn, "wait_optimized", None) is not None:
        fn.wait_optimized()
    fn(*job["args"])
    return {"seconds": time.perf_counter() - started}


def first_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (a row of the comparison shows this much)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
