"""Running one piece of work in many threads at once, the interpreter switching between them
as often as it can (shared by the thread tests of several folders)."""

import sys
import threading


def run_in_threads(work, count: int) -> None:
    """``work(k)`` for k in range(count), each in a thread of its own, all at once; returns
    when all are done. ``work`` collects its own findings (an exception in a thread is lost)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
