"""The PDF-attached input mode (seed §4.1: "the PDF itself for models that accept files").

A model with `accepts_files: true` receives invoice.pdf attached to the user message (an
OpenAI-style file part, through litellm), rendered with the locked `user_file` prompt; a
text-only model receives the extracted text. The compiler refuses inconsistent modes.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from lrc.compiler.pipeline import compile_project
from helpers.project import run_lrc
from support import REPO, pinned

EXTRACT = pinned("extract.invoice")

EDITION = """\
# yaml-language-server: $schema=../../schemas/edition.schema.json
kind: edition
id: files
version: 1
title: File-input check
date: "2026-11-29"
standard: STANDARD
analysis: ANALYSIS
workloads: [EXTRACT]
systems: [SINGLE_SHOT, AGENTIC]
models:
  - {id: lrc/oracle, role: infrastructure-check, accepts_files: true}
  - {id: lrc/baseline, role: baseline, accepts_files: ACCEPTS}
  - {id: lrc/null, role: floor-check}
pricing:
PRICES
n_per_cell: 15
seed: {policy: public, value: file-input-check-seed}
qualifying: {min_pass_rate: "0.80"}
brand: LedgerRate
footer: LedgerRate · methodology v1.0 · file-input check
disclaimer: Test edition.
"""
PRICE = """  {m}: {{currency: USD, per_tokens: 1000000, input: "0", cached_input: "0", output: "0", as_of: "2026-11-29", source: embedded reference model}}\n"""


def _project(tmp: Path, baseline_accepts: bool) -> Path:
    shutil.copytree(REPO / "specs", tmp / "specs", ignore=shutil.ignore_patterns("editions"))
    shutil.copytree(REPO / "schemas", tmp / "schemas")
    (tmp / "specs/editions").mkdir()
    prices = "".join(PRICE.format(m=m) for m in ("lrc/oracle", "lrc/baseline", "lrc/null"))
    text = EDITION.replace("ACCEPTS", "true" if baseline_accepts else "false").replace("PRICES\n", prices)
    text = text.replace("[EXTRACT]", f"[{EXTRACT}]").replace("AGENTIC]", f"{pinned('agentic')}]")
    text = text.replace("STANDARD", pinned("ledgerrate")).replace("ANALYSIS", pinned("lrc.analysis")).replace("[SINGLE_SHOT", f"[{pinned('single-shot')}")
    (tmp / "specs/editions/files.yaml").write_text(text)
    return tmp


@pytest.fixture(scope="module")
def file_run(tmp_path_factory):
    tmp = _project(tmp_path_factory.mktemp("files"), baseline_accepts=False)
    result = compile_project(tmp)
    assert not result.diagnostics.has_errors, [d.summary for d in result.diagnostics.items]
    out = tmp / "out"
    res = run_lrc("execute", tmp / "generated/files/plan.lock", "--out", out, "--no-progress", timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return tmp, out


def _cells(out: Path) -> dict:
    with open(out / "cells.csv", newline="") as fh:
        return {(r["model"], r["system"]): r for r in csv.DictReader(fh)}


def test_the_file_prompt_is_locked_with_a_sample(file_run):
    tmp, _ = file_run
    lock = json.loads((tmp / "generated/files/plan.lock").read_text())
    prompts = lock["plan"]["workloads"][EXTRACT]["prompts"]
    for system in ("single-shot", "agentic"):
        assert set(prompts[system]) == {"system", "user", "user_file"}
        assert "attached to this message as a PDF" in prompts[system]["user_file"]["sample"]


def test_file_capable_oracle_reads_the_attached_pdf_and_passes(file_run):
    _, out = file_run
    cells = _cells(out)
    for system in ("single-shot", "agentic"):
        assert cells[("lrc/oracle", system)]["passes"] == "15"
        assert cells[("lrc/null", system)]["passes"] == "0"
        assert 0 < int(cells[("lrc/baseline", system)]["passes"]) < 15


def test_the_attachment_is_the_items_pdf_and_text_models_get_text(file_run):
    _, out = file_run
    trace = json.loads((out / f"runs/{EXTRACT}/lrc__oracle/single-shot/invoice-01.r1/trace.json").read_text())
    user = trace["messages"][1]["content"]
    assert isinstance(user, list) and user[0]["type"] == "text" and user[1]["type"] == "file"
    data = user[1]["file"]["file_data"]
    assert data.startswith("data:application/pdf;base64,")
    listed = json.loads((out / f"items/{EXTRACT}/invoice-01/files.json").read_text())
    assert hashlib.sha256(base64.b64decode(data.split(",", 1)[1])).hexdigest() == listed["invoice.pdf"]["sha256"]
    assert "=== PAGE" not in user[0]["text"]  # the file prompt carries no extracted text
    text_trace = json.loads((out / f"runs/{EXTRACT}/lrc__baseline/single-shot/invoice-01.r1/trace.json").read_text())
    assert isinstance(text_trace["messages"][1]["content"], str) and "=== PAGE 1" in text_trace["messages"][1]["content"]


def test_file_mode_needs_models_that_accept_files(tmp_path: Path):
    tmp = _project(tmp_path, baseline_accepts=False)
    wl = tmp / "specs/workloads/extract.invoice/workload.yaml"
    wl.write_text(wl.read_text().replace("mode: text-or-file", "mode: file"))
    result = compile_project(tmp)
    errors = [d for d in result.diagnostics.items if d.code == "LRC6008"]
    assert [d.summary for d in errors] == [
        f"{EXTRACT} attaches its document (input mode file) but 'lrc/baseline' does not accept files",
        f"{EXTRACT} attaches its document (input mode file) but 'lrc/null' does not accept files"]
    assert errors[0].path == "specs/editions/files.yaml" and errors[0].pointer == "/models/1/id"


def test_file_modes_need_a_file_prompt_and_attachments(tmp_path: Path):
    tmp = _project(tmp_path, baseline_accepts=True)
    wl = tmp / "specs/workloads/extract.invoice/workload.yaml"
    text = wl.read_text().replace("      user_file: prompts/single-shot.user-file.j2\n", "")
    text = text.replace("  attachments:\n    - file: invoice.pdf\n      media_type: application/pdf\n", "")
    wl.write_text(text)
    result = compile_project(tmp)
    summaries = sorted(d.summary for d in result.diagnostics.items if d.code == "LRC6008")
    assert summaries == ["input mode text-or-file needs a user_file prompt for the attached document",
                         "input mode text-or-file needs input.attachments (which item file, which media type)"]
