"""What the two suite runners share (``tools/pytensor_suite``: PyTensor's tests against
tensorgraph; ``tools/pymc_suite``: PyMC's tests with mode TENSORGRAPH): a snapshot of
tensorgraph at a commit, and the event files their pytest plugins write (one JSON object a
line: ``start`` and ``result`` / ``crash`` of each test)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def snapshot_tensorgraph(ref: str, cache: Path) -> tuple[Path | None, str]:
    """tensorgraph's package at git ``ref`` exported into ``cache``, and its description.

    The checkout is shared with engineers editing it while a run lasts; a run of the working
    tree can measure half-made changes (a C kernel that does not compile for two minutes).
    A snapshot put first on ``PYTHONPATH`` wins over the venv's editable install (whose
    finder comes after ``sys.path``). ``ref`` "working-tree" uses the checkout as it is.
    """
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    if ref == "working-tree":
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "tensorgraph"],
                               capture_output=True, text=True).stdout.strip()
        return None, f"working tree at {head}" + (" with uncommitted changes" if dirty else "")
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", ref], check=True,
                         capture_output=True, text=True).stdout.strip()
    dest = cache / f"tensorgraph-{sha}"
    if not (dest / ".complete").exists():
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", sha, "tensorgraph"],
                                 check=True, capture_output=True).stdout
        with tempfile.NamedTemporaryFile(suffix=".tar") as tmp:
            tmp.write(archive)
            tmp.flush()
            with tarfile.open(tmp.name) as tar:
                tar.extractall(dest, filter="data")
        (dest / ".complete").write_text(sha + "\n")
    return dest, sha


def slug(label: str) -> str:
    """A module's label as a file name (``tensor/linalg`` -> ``tensor__linalg``)."""
    return label.replace("/", "__")


def read_jsonl(path: Path) -> list[dict]:
    """The events of a file, without a last line cut short by a killed process."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return out


def unfinished(events: list[dict]) -> list[str]:
    """The tests that started and never reported: the one a crash or a hang stopped."""
    started = [e["nodeid"] for e in events if e.get("event") == "start"]
    done = {e["nodeid"] for e in events if e.get("event") in ("result", "crash")}
    return [n for n in started if n not in done]
