"""A sealed, per-user memo of the page's charts: the same chart under the same code draws once.

Why: matplotlib draws one workload's Pareto chart in ~50 ms of CPU, and every `lrc execute`,
`lrc report`, `lrc merge` and `lrc regrade` that rebuilds a folder's page draws every chart
again, although most are unchanged: a resume that adds one workload's runs, a report rebuilt
after a journal line was appended, a regrade that corrects one price. In the test suite, 394
charts drawn by one run held 67 distinct ones (~23 s of CPU drawn again). A chart is a pure
function of its inputs (key, title, points, footer, quality bar), of the code that draws it
(`charts.py`, `labels.py`) and of the drawing library, so it can be remembered under the
digest of exactly those.

What keeps it honest (as `lrc.runtime.tasks.grade_memo`, whose storage it shares,
`lrc.runtime.lock.sealed_entries`):
- *Keyed by what decides the bytes*: the inputs as canonical JSON (floats by their exact
  repr), the sha256 of the drawing modules' source, the lrc release, the Python version and
  the versions of matplotlib and numpy. Change any and it is a miss.
- *Sealed*: an entry not sealed by this user's key (planted, copied, damaged) is a miss.
- *Disposable*: ~/.cache/lrc/charts/, never in a project or run folder; `LRC_NO_CACHE=1` turns
  it off, and `lrc verify` never uses it: a package is verified by drawing every chart.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Callable

from lrc.runtime.lock.format import LRC_VERSION
from lrc.runtime.lock.sealed_entries import SealedEntries, library_versions

FORMAT = 1
#: the libraries whose versions decide a chart's bytes
LIBRARIES = ("matplotlib", "numpy")
#: the modules whose source decides a chart's bytes (beside this one's callers' inputs)
DRAWING_MODULES = ("charts.py", "labels.py")
MAX_ENTRY_BYTES = 4 * 1024 * 1024



def _sources() -> dict[str, str]:
    here = Path(__file__).resolve().parent
    return {name: hashlib.sha256((here / name).read_bytes()).hexdigest() for name in DRAWING_MODULES}


class ChartMemo:
    """`svg(draw, key, title, panels, footer, threshold)`: `draw(...)`'s SVG, from the memo when
    this user drew the same chart under the same code before; `hits` and `misses` count it."""

    def __init__(self, enabled: bool = True):
        self.hits = 0
        self.misses = 0
        self._entries = SealedEntries("charts", MAX_ENTRY_BYTES, enabled)
        self._namespace: dict[str, Any] | None = None

    def _name(self, inputs: list[Any]) -> str | None:
        if self._namespace is None:
            self._namespace = {"format": FORMAT, "lrc": LRC_VERSION, "python": sys.version, "libraries": library_versions(LIBRARIES),
                               "code": _sources()}
        try:
            text = json.dumps({"namespace": self._namespace, "inputs": inputs}, sort_keys=True, ensure_ascii=False,
                              allow_nan=False)
        except (TypeError, ValueError):  # not plain JSON (a NaN, an odd type): drawn, never remembered
            return None
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def svg(self, draw: Callable[..., str], key: str, title: str, panels: list[dict[str, Any]], footer: str,
            threshold: float) -> str:
        name = self._name([key, title, panels, footer, threshold]) if self._entries.enabled else None
        if name is not None:
            entry = self._entries.read(name)
            if entry is not None and isinstance(entry.get("svg"), str):
                self.hits += 1
                return entry["svg"]
        self.misses += 1
        drawn = draw(key, title, panels, footer, threshold)
        if name is not None:
            self._entries.write(name, {"svg": drawn})
        return drawn
