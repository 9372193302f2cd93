"""A sealed, per-user memo of task grades: the same files under the same code grade once.

Why: grading a task run recalculates its workbooks in the limited engine
(`lrc.runtime.artifacts.recalc`), ~0.9 s of CPU a book; the demo's 40 task runs were 31 of
the 42 s of a cold `lrc report` of the demo, and every report, merge or regrade of a folder
graded them all again (issue 11 §4, issue 9's suite time). A task grade is a pure function of
the task's checks, its input files, the files the run saved and the code that grades them, so
it can be remembered under the digest of exactly those.

What keeps it honest:
- *Keyed by what decides the grade*: the checks, the sha256 of every input and output file,
  the fingerprint of every code component of the lock (`lrc execute`/`lrc report` refuse a
  lock whose code differs from the code that runs, so the same fingerprints mean the same
  grader), the lrc release, the Python version and the versions of the libraries the
  validators open files and recalculate with. Change any byte of any of them and it is a miss.
- *Only what reproduces*: a grade is remembered only when it holds plain JSON values (it
  reads back exactly as it was computed) and no result is `error` (an undecided check may
  come from the machine -- a deadline, a memory limit -- not from the files).
- *Sealed* (`lrc.runtime.lock.sealing`): each entry carries an HMAC-SHA256 under the per-user
  key; a planted, copied or damaged entry is a miss, never trusted.
- *Disposable*: it lives in the user's cache folder (~/.cache/lrc/task-grades/), never in a
  project or run folder; any problem reading or writing it only costs time.
  `LRC_NO_CACHE=1` turns it off, and `lrc verify` never uses it: a package is verified by
  recomputing every grade.
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any, Callable

from lrc.runtime.lock.canonical import digest
from lrc.runtime.lock.format import LRC_VERSION
from lrc.runtime.lock.sealed_entries import SealedEntries, library_versions, plain

__all__ = ["GradeMemo", "plain"]  # `plain` (what reads back exactly) lives with the memos' storage

FORMAT = 1
#: the libraries the artifact validators read workbooks and decks with and recalculate in
LIBRARIES = ("formulas", "schedula", "numpy", "scipy", "openpyxl", "python-pptx", "lxml")
MAX_ENTRY_BYTES = 8 * 1024 * 1024


class GradeMemo:
    """`grade(item, run, outputs)` through the memo (`outputs`: the run's saved files, decoded
    once by the caller); `hits` and `misses` count what it did."""

    def __init__(self, plan: dict[str, Any], compute: Callable[[Any, dict[str, Any], dict[str, bytes]], dict[str, Any]],
                 enabled: bool = True):
        self._compute = compute
        self.hits = 0
        self.misses = 0
        self._entries = SealedEntries("task-grades", MAX_ENTRY_BYTES, enabled)
        self._namespace = {"format": FORMAT, "lrc": LRC_VERSION, "python": sys.version, "libraries": library_versions(LIBRARIES),
                           "code": {ref: entry.get("fingerprint") for ref, entry in sorted((plan.get("code") or {}).items())}}

    def key(self, item: Any, outputs: dict[str, bytes]) -> str:
        files = {name: hashlib.sha256(data).hexdigest() for name, data in sorted(dict(item.files).items())}
        saved = {name: hashlib.sha256(data).hexdigest() for name, data in sorted(outputs.items())}
        return digest("task-grade", {**self._namespace, "checks": item.checks, "inputs": files, "outputs": saved}).split(":", 1)[1]

    def grade(self, item: Any, run: dict[str, Any], outputs: dict[str, bytes]) -> dict[str, Any]:
        if not self._entries.enabled or run.get("outcome") != "answered":
            return self._compute(item, run, outputs)
        name = self.key(item, outputs)
        entry = self._entries.read(name)
        if entry is not None and isinstance(entry.get("grade"), dict):
            self.hits += 1
            return entry["grade"]
        self.misses += 1
        graded = self._compute(item, run, outputs)
        if plain(graded) and not any(isinstance(r, dict) and r.get("status") == "error" for r in graded.get("results") or []):
            self._entries.write(name, {"grade": graded})
        return graded
