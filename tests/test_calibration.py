"""Calibration is checked, not only shown (issue 9 §5).

In every cell the infrastructure-check model (`lrc/oracle`) must pass n/n and the floor-check
model (`lrc/null`) 0/n; otherwise the workload or the harness is broken. `lrc execute` and
`lrc report` print the failing cells, mark them in summary.json (`calibration`) and exit 5.

The end-to-end tests compile a small test edition (the triage workload, single-shot, the
oracle and the null model) in a project copy and run the real `lrc execute` in a subprocess
whose reference behaviour is broken by a monkeypatch applied before the CLI starts. The lock
fingerprints source files, not live objects, so the lock verifies and the run is the real
execute path with a broken oracle (or null model)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from lrc.runtime.report.aggregate import aggregate, calibration
from test_aggregate import ED, WL as UNIT_WL, cell_runs, run

from support import REPO, pinned, run_lrc

N = 15
WL = pinned("triage.ap-inbox")  # the end-to-end edition runs the workload the demo pins


# -- the check itself, on cells -----------------------------------------------------------

def _calib(records: list[dict]) -> dict:
    return calibration(aggregate(records, ED))


def test_reference_models_at_n_of_n_and_zero_pass():
    got = _calib(cell_runs("lrc/oracle", N, "0") + cell_runs("lrc/null", 0, "0") + cell_runs("m/cand", 3, "0.01"))
    assert got == {"ok": True, "cells_checked": 2, "failures": [], "unjudged": []}


@pytest.mark.parametrize("model,passes,expected", [
    ("lrc/oracle", N - 1, N), ("lrc/oracle", 0, N), ("lrc/oracle", 7, N),
    ("lrc/null", 1, 0), ("lrc/null", N, 0),
])
def test_one_reference_cell_off_fails_calibration(model: str, passes: int, expected: int):
    other = "lrc/null" if model == "lrc/oracle" else "lrc/oracle"
    records = cell_runs(model, passes, "0") + cell_runs(other, N if other == "lrc/oracle" else 0, "0")
    got = _calib(records)
    assert got["ok"] is False and got["cells_checked"] == 2
    [failure] = got["failures"]
    assert (failure["model"], failure["passes"], failure["n"], failure["expected_passes"]) == (model, passes, N, expected)
    assert failure["workload"] == UNIT_WL and failure["system"] == "single-shot"


def test_scored_models_never_take_part():
    got = _calib(cell_runs("lrc/oracle", N, "0") + cell_runs("m/cand", 0, "0.01") + cell_runs("lrc/baseline", N, "0"))
    assert got["ok"] is True and got["cells_checked"] == 1


def test_partials_are_not_passes_for_the_oracle():
    records = [run("lrc/oracle", i, "partial" if i == 3 else "pass", "0") for i in range(N)]
    [failure] = _calib(records)["failures"]
    assert failure["passes"] == N - 1


def test_calibration_judges_graded_runs_only():
    """Infra-excluded runs have no verdict: an oracle passing every graded run holds; one that
    failed a graded run fails whatever the missing runs would do; no graded run: unjudged."""
    excluded = [run("lrc/oracle", i, None, "0", status="infra_excluded") for i in range(10, N)]
    holds = [run("lrc/oracle", i, "pass", "0") for i in range(10)] + excluded
    assert _calib(holds)["ok"] is True
    fails = [run("lrc/oracle", i, "pass" if i else "fail", "0") for i in range(10)] + excluded
    [failure] = _calib(fails)["failures"]
    assert (failure["passes"], failure["n"], failure["infra_excluded"]) == (9, 10, 5)
    none = [run("lrc/null", i, None, "0", status="infra_excluded") for i in range(N)]
    got = _calib(none)
    assert got["ok"] is True and got["cells_checked"] == 0 and got["unjudged"][0]["model"] == "lrc/null"


def test_every_system_cell_is_checked_apart():
    records = cell_runs("lrc/oracle", N, "0") + cell_runs("lrc/oracle", N - 2, "0", system="agentic")
    [failure] = _calib(records)["failures"]
    assert failure["system"] == "agentic"


# -- through the real execute path --------------------------------------------------------

EDITION = """\
# yaml-language-server: $schema=../../schemas/edition.schema.json
kind: edition
id: calib
version: 1
title: Calibration test edition
date: "2026-12-01"
standard: {standard}
analysis: {analysis}
workloads:
  - {workload}
systems:
  - {system}
models:
  - id: lrc/oracle
    role: infrastructure-check
    sampling: {{temperature: 0}}
  - id: lrc/null
    role: floor-check
    sampling: {{temperature: 0}}
pricing:
{pricing}
n_per_cell: 15
repetitions: 1
window_hours: 72
seed:
  policy: public
  value: lrc-calibration-test
qualifying:
  min_pass_rate: "0.80"
brand: LedgerRate
footer: LedgerRate · calibration test
disclaimer: Test edition.
errata: []
"""

PRICE = """\
  {model}:
    currency: USD
    per_tokens: 1000000
    input: "0"
    cached_input: "0"
    output: "0"
    as_of: "2026-11-29"
    source: embedded reference model"""

# Broken reference behaviour, applied in the subprocess before the CLI runs.
BREAKS = {
    # The labels the oracle writes no longer match the generator's for every third item:
    # the bug of the issue (a workload whose labels did not match its generator).
    "oracle": """
import dataclasses
from lrc.runtime.workloads.triage_ap_inbox import reference as ref
real = ref.oracle
def oracle(messages, tools, item):
    reply = real(messages, tools, item)
    if item.index % 3 == 0:
        key = {i: "other" if label != "other" else "invoice" for i, label in item.answer_key["labels"].items()}
        item = dataclasses.replace(item, answer_key={**item.answer_key, "labels": key})
        reply = real(messages, tools, item)
    return reply
ref.oracle = oracle
""",
    # The null model answers like the oracle: the floor check passes, so the grader is blind.
    "null": """
from lrc.runtime.models import reference as models
real = models.respond
def respond(model, messages, tools):
    if model.split("/", 1)[-1] == "null":
        model = "lrc/oracle"
    return real(model, messages, tools)
models.respond = respond
""",
    "none": "",
}


def _run(break_name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`lrc ARGS` in its own process with the broken reference behaviour patched in first."""
    from helpers import zygote

    return zygote.run(list(args), dict(os.environ), cwd, 600, preamble=BREAKS[break_name])


@pytest.fixture(scope="module")
def calib_project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("calib")
    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, root / name)
    demo = (root / "specs/editions/demo.yaml").read_text(encoding="utf-8")
    for path in (root / "specs/editions").glob("*.yaml"):
        path.unlink()
    standard = re.search(r"(?m)^standard: (\S+)", demo).group(1)
    analysis = re.search(r"(?m)^analysis: (\S+)", demo).group(1)
    pricing = "\n".join(PRICE.format(model=m) for m in ("lrc/oracle", "lrc/null"))
    (root / "specs/editions/calib.yaml").write_text(EDITION.format(standard=standard, analysis=analysis, pricing=pricing, workload=WL, system=pinned("single-shot")), encoding="utf-8")
    res = run_lrc("compile", cwd=root)
    assert res.returncode == 0, res.stdout + res.stderr
    return root


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_a_healthy_edition_exits_0_with_calibration_ok(calib_project: Path, tmp_path: Path):
    out = tmp_path / "out"
    res = _run("none", "execute", "generated/calib/plan.lock", "--out", str(out), "--no-progress", cwd=calib_project)
    assert res.returncode == 0, res.stderr
    calib = _summary(out)["calibration"]
    assert calib == {"ok": True, "cells_checked": 2, "failures": [], "unjudged": []}
    assert "calibration failed" not in res.stderr


@pytest.mark.parametrize("broken,model,expected", [("oracle", "lrc/oracle", N), ("null", "lrc/null", 0)])
def test_a_broken_reference_fails_execute_and_report_with_exit_5(calib_project: Path, tmp_path: Path, broken: str, model: str, expected: int):
    out = tmp_path / "out"
    res = _run(broken, "execute", "generated/calib/plan.lock", "--out", str(out), "--no-progress", cwd=calib_project)
    assert res.returncode == 5, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    calib = _summary(out)["calibration"]
    assert calib["ok"] is False and calib["cells_checked"] == 2
    failing = {(f["model"], f["system"]) for f in calib["failures"]}
    assert failing == {(model, "single-shot")}
    for f in calib["failures"]:
        assert f["workload"] == WL and f["n"] == N and f["expected_passes"] == expected and f["passes"] != expected
        assert f"{WL} / {model} / {f['system']}: {f['message']}" in res.stderr
    assert "calibration failed in 1 cell(s)" in res.stderr
    # The rate card and the outputs are still written: the failure is reported, not hidden.
    assert (out / "rate-card.md").is_file() and (out / "cells.csv").is_file()

    # `lrc report` rebuilds from the journal (no model call, no patch) and says the same.
    (out / "summary.json").unlink()
    rep = run_lrc("report", "generated/calib/plan.lock", "--out", str(out), cwd=calib_project)
    assert rep.returncode == 5, rep.stdout + rep.stderr
    assert _summary(out)["calibration"] == calib
    assert "lrc report: calibration failed in 1 cell(s)" in rep.stderr


# -- tasks (seed 000): the same check over the task cells -----------------------------------------

TASK_ORACLE_BROKEN = """
from lrc.runtime.tasks import reference as ref
def oracle(self, messages, tools, item=None):
    return self._reply("null", messages)  # hands the input back: the task cannot pass
ref.TaskPolicies.oracle = oracle
"""


def test_a_broken_task_oracle_fails_calibration_with_exit_5(tmp_path: Path):
    from helpers import zygote

    out = tmp_path / "out"
    res = zygote.run(["execute", str(REPO / "generated" / "demo" / "plan.lock"), "--out", str(out), "--no-progress",
                      "--workloads", "fa.fix-sign", "--models", "lrc/oracle,lrc/null"], dict(os.environ), REPO, 600,
                     preamble=TASK_ORACLE_BROKEN)
    assert res.returncode == 5, res.stdout + res.stderr
    calib = _summary(out)["calibration"]
    assert calib["ok"] is False
    assert [(f["workload"], f["model"], f["system"], f["passes"], f["n"]) for f in calib["failures"]] == [
        ("fa.fix-sign.v5", "lrc/oracle", s, 0, 1) for s in ("direct", "orchestrated")]
    assert "fa.fix-sign.v5 / lrc/oracle / direct" in res.stderr
