"""End to end: a temp copy of the demo edition declaring `repetitions: 3`, executed on the
reference models. Every figure respects the repetitions (items × repetitions, never n = 9 or
n = 45), pass^k, pass@k and consistency are in cells.csv, summary.json and the rate card, the
paired single-shot → agentic comparison is there, and `lrc report` rebuilds byte-identical
outputs from the journal. Two workloads at 3 items keep it to a few seconds."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from helpers.project import read_cells, run_lrc
from support import REPO

KEEP = ("triage.ap-inbox", "query.nl2sql")
# The refs the demo edition pins today (a re-lock moves them; the test reads them, never hard-codes a version).
PINNED = dict(line.strip()[2:].rsplit(".v", 1) for line in (REPO / "specs" / "editions" / "demo.yaml").read_text(encoding="utf-8").splitlines()
              if line.startswith("  - ") and line.strip()[2:].split(".v")[0] in KEEP)
REF = {w: f"{w}.v{v.split()[0]}" for w, v in PINNED.items()}
OUTPUTS = ("cells.csv", "cells.parquet", "rate-card.md", "summary.json")


def _project(root: Path) -> Path:
    from lrc.compiler.pipeline import compile_project

    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, root / name)
    for path in (root / "specs" / "editions").glob("*.yaml"):
        if path.name != "demo.yaml":
            path.unlink()
    std = root / "specs" / "standard" / "ledgerrate.yaml"
    text, count = re.subn(r"(?m)^(  n_per_cell: )15\b", r"\g<1>3", std.read_text(encoding="utf-8"))
    assert count == 1
    std.write_text(text, encoding="utf-8")
    edition = root / "specs" / "editions" / "demo.yaml"
    text = edition.read_text(encoding="utf-8")
    for pattern, new in ((r"(?m)^n_per_cell: 15\b", "n_per_cell: 3"), (r"(?m)^repetitions: 1\b", "repetitions: 3"),
                         (r"(?ms)^tasks:\n(?:[ #].*?\n|\n)*\Z", "")):
        text, count = re.subn(pattern, new, text)
        assert count == 1, pattern
    text = re.sub(r"(?m)^  - (?!" + "|".join(map(re.escape, KEEP)) + r")[a-z]+\.[a-z-]+\.v\d+\n", "", text)
    text = re.sub(r"(?m)^  - (?:direct|orchestrated)\.v\d+\b.*\n", "", text)  # they run tasks only (LRC6010), and the tasks are gone
    edition.write_text(text, encoding="utf-8")
    result = compile_project(root)
    assert not result.diagnostics.has_errors, "\n".join(str(d) for d in result.diagnostics.sorted())
    return root / "generated" / "demo" / "plan.lock"


def test_demo_with_three_repetitions(tmp_path):
    lock = _project(tmp_path / "project")
    out = tmp_path / "out"
    res = run_lrc("execute", lock, "--out", out)
    assert res.returncode == 0, res.stdout + res.stderr
    card = (out / "rate-card.md").read_text(encoding="utf-8")
    assert not re.search(r"n = (9|45)\b", card) and "/9" not in card
    assert "3 items × 3 repetitions" in card and "clustered by item" in card
    assert "## Reliability across repetitions — workloads (declared repetitions: 3)" in card
    assert "## Paired comparisons (same model, same items and repetitions)" in card
    assert f"| lrc/baseline | single-shot → agentic | {REF['query.nl2sql']} | 3 |" in card

    cells = read_cells(out)
    baseline = cells[("lrc/baseline", "single-shot")]
    assert baseline["n"] == "9" and baseline["items"] == "3" and baseline["repetitions"] == "3"
    assert baseline["pass_hat_3"] == baseline["pass_rate"]  # the reference models are deterministic
    assert baseline["consistency"] == "1.0000" and baseline["n_eff"] == "3.0000"

    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    rel = summary["reliability"]
    assert rel["repetitions"] == 3 and "Wilson" in rel["method"]
    row = next(c for c in rel["cells"] if (c["workload"], c["model"], c["system"]) ==
               (REF["triage.ap-inbox"], "lrc/oracle", "single-shot"))
    assert row["items"] == 3 and row["n_runs"] == 9 and row["pass_hat_k"] == {"1": 1.0, "2": 1.0, "3": 1.0}
    assert row["pass_rate_95"][0] < 1.0  # 3 items all passing: no made-up certainty
    pairs = summary["paired"]["pairs"]
    # every scored model: the baseline and the demo's two reference candidates
    assert [(p["model"], p["a"], p["b"]) for p in pairs] == [(m, "single-shot", "agentic")
                                                            for m in ("lrc/baseline", "lrc/careful", "lrc/cheap")]
    for pair in pairs:
        assert {r["workload"] for r in pair["by_workload"]} == {REF[w] for w in KEEP}
        assert pair["overall"]["items"] == 6

    before = {name: (out / name).read_bytes() for name in OUTPUTS}
    again = run_lrc("report", lock, "--out", out)
    assert again.returncode == 0, again.stdout + again.stderr
    assert {name: (out / name).read_bytes() for name in OUTPUTS} == before
