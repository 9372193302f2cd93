"""The words of a failed calibration check, apart from the report code that imports polars.

Why a module of its own: a resume with nothing to do prints them from the run folder's stamp,
and must not pay ~0.7 s importing polars (through `report.outputs`) to do so (issue 11 §4)."""

from __future__ import annotations

from typing import Any


def failed(calibration: dict[str, Any] | None) -> bool:
    return bool(calibration and not calibration["ok"])


def report(calibration: dict[str, Any] | None) -> str:
    """The failing reference-check cells, one per line (empty when calibration holds)."""
    if not failed(calibration):
        return ""
    lines = [f"calibration failed in {len(calibration['failures'])} cell(s): the workload or the harness is broken"]
    for f in calibration["failures"]:
        lines.append(f"  {f['workload']} / {f['model']} / {f['system']}: {f['message']}")
    return "\n".join(lines)
