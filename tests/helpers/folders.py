"""Comparing run folders: every output `lrc execute`/`lrc report`/`lrc merge` writes.

The one permitted difference between two folders that hold the same runs is the record of how
they were *operated* (the effective operating settings: `"operation"` in summary.json and in the
run manifests). It is set aside only when present; every other file, and those files apart
from that key, must be byte-identical. The journal is history (order of completion, latencies),
not an output, and is never compared.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.project import tree

OUTPUTS = ("cells.csv", "cells.parquet", "rate-card.md", "summary.json", "forecast-vs-actual.md")
OPERATING_KEY = "operation"


def outputs(out: Path) -> dict[str, bytes]:
    """Every output file of a run folder: relative path -> bytes (journal and lock files aside)."""
    files = {name: (out / name).read_bytes() for name in OUTPUTS}
    files.update({f"runs/{k}": v for k, v in tree(out / "runs").items()})
    files.update({f"items/{k}": v for k, v in tree(out / "items").items()})
    return files


def _without_operation(data: bytes) -> bytes:
    doc = json.loads(data)
    doc.pop(OPERATING_KEY, None)
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False).encode("utf-8")


def differences(a: Path, b: Path) -> list[str]:
    """The output files that differ between two folders (missing on one side included)."""
    left, right = outputs(a), outputs(b)
    diff = sorted(set(left) ^ set(right))
    for name in sorted(set(left) & set(right)):
        x, y = left[name], right[name]
        if x == y:
            continue
        operated = name == "summary.json" or name.endswith("/manifest.json")
        if operated and (OPERATING_KEY.encode() in x or OPERATING_KEY.encode() in y):
            try:
                if _without_operation(x) == _without_operation(y):
                    continue
            except ValueError:
                pass
        diff.append(name)
    return diff


def assert_same_outputs(a: Path, b: Path) -> None:
    diff = differences(a, b)
    assert not diff, f"{len(diff)} output file(s) differ between {a} and {b}: {diff[:10]}"
