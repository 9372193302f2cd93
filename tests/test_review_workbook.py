"""Human review in a workbook (issue 12, seed §5.3): sample, export, fill with openpyxl, import.

The run folders are built from the real demo lock with the hybrid workloads added to its plan
(tests/review_fixtures.py) and journals of synthetic run + judge records in the format of
tools/JUDGE-INTERFACE.md. The commands run in-process through `lrc.compiler.cli.main`, with
the lock verification answered by that plan (the verifier itself is tested elsewhere).
"""

from __future__ import annotations

import fcntl
import io
import math
import zipfile
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl import load_workbook

import review_fixtures as fx
from lrc.compiler.cli import main
from lrc.runtime.journal import Journal
from lrc.runtime.review import sample as sampling
from lrc.runtime.review import workbook as wbk
from lrc.runtime.review.status import review_status
from support import outputs_across_environments

SEED = "ledgerrate-demo-2026-11"
NULL_CELL = (fx.VARIANCE, "lrc/null", fx.SYSTEM)


@pytest.fixture
def lock() -> dict[str, Any]:
    return fx.hybrid_lock()


@pytest.fixture
def folder(tmp_path: Path, lock, monkeypatch) -> Path:
    out = tmp_path / "run"
    out.mkdir()
    fx.build_folder(out, lock)
    monkeypatch.setattr("lrc.runtime.execute.load_verified", lambda path: lock)
    return out


def journal_of(folder: Path, lock) -> Journal:
    return Journal(folder / "journal.jsonl", lock["root_digest"], lock["plan"]["edition"]["ref"], readonly=True)


def lrc(*args: str | Path) -> int:
    return main([str(a) for a in args])


def export(folder: Path, out: Path, *extra: str) -> None:
    assert lrc("review", "export", folder, "--out", out, "--plan", folder / "plan.lock", *extra) == 0
    assert out.is_file()


def do_import(folder: Path, book: Path) -> int:
    return lrc("review", "import", folder, book, "--plan", folder / "plan.lock")


Grader = Callable[[sampling.Row, dict[str, Any]], dict[str, Any]]


def agree(row: sampling.Row, judge: dict[str, Any]) -> dict[str, Any]:
    """The inputs a reviewer who agrees with the judge types (the judge's own judgment)."""
    if row.fact_id is not None:
        present = {f["id"]: f["present"] for f in judge["facts"]}[row.fact_id]
        return {"present": "yes" if present else "no", "evidence": "seen"}
    return {"clarity": judge["clarity"], "cause_attribution": judge["cause_attribution"], "justification": "fine"}


def flip(row: sampling.Row, judge: dict[str, Any]) -> dict[str, Any]:
    """A reviewer who reaches the opposite verdict on this row."""
    values = agree(row, judge)
    if row.fact_id is not None:
        return {**values, "present": "no" if values["present"] == "yes" else "yes"}
    passed = judge["clarity"] >= 4 and judge["cause_attribution"] >= 4
    score = 2 if passed else 5
    return {**values, "clarity": score, "cause_attribution": score}


def fill(book: Path, lock, folder: Path, grade: Grader, target: Path | None = None) -> Path:
    """Open the exported workbook with openpyxl, type a grade in every input cell, save it."""
    journal = journal_of(folder, lock)
    wb = load_workbook(book)
    digest = {wb[wbk.META_SHEET].cell(row=r, column=1).value: wb[wbk.META_SHEET].cell(row=r, column=2).value
              for r in range(1, 7)}["sample"]
    rows = {r.row_id: r for r in next(s for s in _samples(lock, journal) if s.digest == digest).rows}
    wb[wbk.INFO_SHEET]["B2"] = "A. Reviewer"
    for ws in wb.worksheets:
        if ws.title in (wbk.META_SHEET, wbk.INFO_SHEET):
            continue
        headers = [c.value for c in ws[wbk.HEADER_ROW]]
        for r in range(wbk.FIRST_ROW, ws.max_row + 1):
            row = rows[ws.cell(row=r, column=1).value]
            values = grade(row, journal.judges[(row.run, "primary")]["judgment"])
            for col, header in enumerate(headers, start=1):
                name = (header or "").split(" (")[0]
                if col > len(wbk._BASE_COLUMNS) and name in values:
                    ws.cell(row=r, column=col, value=values[name])
    target = target or book.with_name("filled-" + book.name)
    wb.save(target)
    return target


def _samples(lock, journal) -> list[sampling.Sample]:
    plan = lock["plan"]
    return [sampling.spot_check(plan, journal, SEED)] + [sampling.regrade(plan, journal, SEED, c) for c in sampling.judged_runs(plan, journal)]


def adjudications(folder: Path, lock) -> dict[str, list[dict[str, Any]]]:
    return journal_of(folder, lock).adjudications


# -- sampling ----------------------------------------------------------------------------------

@pytest.mark.parametrize("rate, items", [("0.20", 15), ("0.20", 7), ("0.25", 13), ("0.5", 1), ("1", 4)])
def test_every_cell_gets_at_least_the_rate_of_its_judged_runs(tmp_path: Path, rate: str, items: int):
    lock = fx.hybrid_lock(rate=rate)
    fx.build_folder(tmp_path, lock, items=items, brief_items=items)
    journal = journal_of(tmp_path, lock)
    judged = sampling.judged_runs(lock["plan"], journal)
    spot = sampling.spot_check(lock["plan"], journal, SEED)
    assert set(spot.cells) == set(judged) and len(judged) == 6
    for cell, runs in judged.items():
        chosen = spot.cells[cell]
        assert len(chosen) == math.ceil(Decimal(rate) * len(runs)) and len(chosen) >= Decimal(rate) * len(runs)
        assert set(chosen) <= set(runs)


def test_the_sample_depends_on_the_seed_and_the_judged_runs_never_on_journal_order(tmp_path: Path, lock):
    digests, samples = set(), []
    for n, order in enumerate((None, "a", "b")):
        folder = tmp_path / f"f{n}"
        folder.mkdir()
        fx.build_folder(folder, lock, shuffle=order)
        spot = sampling.spot_check(lock["plan"], journal_of(folder, lock), SEED)
        digests.add(spot.digest)
        samples.append(spot.cells)
    assert len(digests) == 1 and samples[0] == samples[1] == samples[2]
    other = sampling.spot_check(lock["plan"], journal_of(tmp_path / "f0", lock), "another-seed")
    assert other.cells != samples[0]  # the seed decides (3 of 15 from each of 6 cells: a collision is negligible)


def test_runs_without_a_primary_judge_record_are_not_judged_runs(tmp_path: Path, lock):
    fx.build_folder(tmp_path, lock)
    journal = Journal(tmp_path / "journal.jsonl", lock["root_digest"], lock["plan"]["edition"]["ref"])
    journal.append({"type": "run", "run": "generate.variance-commentary.v1|lrc/null|single-shot|extra|r1", "workload": fx.VARIANCE,
                    "model": "lrc/null", "system": fx.SYSTEM, "item": "extra", "item_index": 99, "repetition": 1,
                    "outcome": "answered", "steps": 1})
    journal.close()
    judged = sampling.judged_runs(lock["plan"], journal_of(tmp_path, lock))
    assert all("extra" not in k for keys in judged.values() for k in keys) and len(judged[NULL_CELL]) == 15


# -- the workbook ------------------------------------------------------------------------------

def _xml_text(data: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return "\n".join(z.read(n).decode("utf-8") for n in sorted(z.namelist()))


def test_the_workbook_names_no_run_key_no_model_and_no_judge_verdict(folder: Path, lock, tmp_path: Path):
    book = tmp_path / "review.xlsx"
    export(folder, book)
    text = _xml_text(book.read_bytes())
    keys = journal_of(folder, lock).runs
    assert not [k for k in keys if k in text]
    assert not [m for m in lock["plan"]["models"] if m in text] and "lrc/judge" not in text
    assert "JUDGE-VERDICT-TEXT" not in text and "JUDGE-EVIDENCE-TEXT" not in text
    # what it does carry: the plan and sample digests, the anonymized output, the rubric text
    spot = sampling.spot_check(lock["plan"], journal_of(folder, lock), SEED)
    assert lock["root_digest"] in text and spot.digest in text
    assert "The figures and the choice of the top three drivers" in text and "The brief states fact F07 of the pack" in text


def test_rows_inputs_validation_and_protection(folder: Path, lock, tmp_path: Path):
    book = tmp_path / "review.xlsx"
    export(folder, book)
    wb = load_workbook(book)
    assert wb[wbk.META_SHEET].sheet_state == "veryHidden" and wb[wbk.META_SHEET].protection.sheet
    variance, brief = wb["variance-commentary.v1"], wb["board-brief.v1"]
    assert [c.value for c in variance[wbk.HEADER_ROW]] == [*wbk._BASE_COLUMNS, "clarity (1-5)", "cause_attribution (1-5)", "justification (optional)"]
    assert [c.value for c in brief[wbk.HEADER_ROW]] == [*wbk._BASE_COLUMNS, "present (yes/no)", "evidence (optional)"]
    assert variance.max_row - wbk.FIRST_ROW + 1 == 9  # 3 of 15 runs in each of the 3 variance cells: one row per run
    assert brief.max_row - wbk.FIRST_ROW + 1 == 3 * 20  # 1 of 5 runs in each brief cell: one row per fact
    for ws in (variance, brief):
        assert ws.protection.sheet
        for row in ws.iter_rows(min_row=wbk.FIRST_ROW):
            assert [c.protection.locked for c in row] == [True] * 6 + [False] * (len(row) - 6)
    ranges = {dv.type: (dv.formula1, dv.formula2, str(dv.sqref)) for dv in variance.data_validations.dataValidation}
    assert ranges["whole"][:2] == ("1", "5") and "G4" in ranges["whole"][2] and "H12" in ranges["whole"][2]
    assert [dv.formula1 for dv in brief.data_validations.dataValidation] == ['"yes,no"']
    output = variance.cell(row=wbk.FIRST_ROW, column=4)
    assert output.data_type == "s" and "=HYPERLINK" in output.value and "\r" not in output.value and "\x07" not in output.value


def test_the_same_folder_exports_the_same_bytes(folder: Path, lock, tmp_path: Path, monkeypatch):
    import time

    first, second = tmp_path / "a.xlsx", tmp_path / "b.xlsx"
    export(folder, first)
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 86_400 * 400)  # a later clock: zip dates, properties
    export(folder, second)
    assert first.read_bytes() == second.read_bytes()


def test_the_export_bytes_do_not_depend_on_hash_seed_or_time_zone(tmp_path: Path):
    script = (
        "import hashlib, sys, tempfile\nfrom pathlib import Path\nsys.path.insert(0, 'tests')\n"
        "import review_fixtures as fx\nfrom lrc.runtime.journal import Journal\n"
        "from lrc.runtime.review import sample, workbook\n"
        "lock = fx.hybrid_lock(); d = Path(tempfile.mkdtemp(dir=sys.argv[1])); fx.build_folder(d, lock)\n"
        "j = Journal(d / 'journal.jsonl', lock['root_digest'], lock['plan']['edition']['ref'], readonly=True)\n"
        "s = sample.spot_check(lock['plan'], j, 'ledgerrate-demo-2026-11')\n"
        "print(hashlib.sha256(workbook.write(workbook.build(lock['plan'], j, s))).hexdigest())\n")
    from support import REPO

    assert len(outputs_across_environments(script, [str(tmp_path)], REPO)) == 1


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x20)) ,
                 st.integers(), st.none(), st.lists(st.text(), max_size=3), st.dictionaries(st.text(), st.integers(), max_size=3)))
def test_any_value_is_written_as_text_that_reads_back_unchanged(value: Any):
    """Model output is hostile: whatever its shape, the cell holds text (never a formula) that
    reads back equal to what the import expects, so a hostile output is never 'tampered'."""
    from openpyxl import Workbook

    text = wbk.cell_text(value)
    wb = Workbook()
    cell = wb.active.cell(row=1, column=1, value=text or None)
    cell.data_type = "s"
    buf = io.BytesIO()
    wb.save(buf)
    back = load_workbook(io.BytesIO(buf.getvalue())).active.cell(row=1, column=1).value
    assert (back or "") == text


def test_a_huge_output_is_cut_with_a_note(tmp_path: Path, lock, monkeypatch):
    fx.build_folder(tmp_path, lock, long_output=100_000)
    journal = journal_of(tmp_path, lock)
    spot = sampling.spot_check(lock["plan"], journal, SEED)
    back = wbk.read(wbk.write(wbk.build(lock["plan"], journal, spot)))
    outputs = [v for (r, c), v in back.cells["variance-commentary.v1"].items() if c == 4 and r >= wbk.FIRST_ROW]
    assert outputs and all(len(v) < 32_767 and "more characters; the full text is in the run's trace" in v for v in outputs)


# -- import ------------------------------------------------------------------------------------

def test_agreeing_grades_import_as_adjudications_and_leave_the_judge_records_alone(folder: Path, lock, tmp_path: Path, capsys):
    book = tmp_path / "review.xlsx"
    export(folder, book)
    before = (folder / "journal.jsonl").read_bytes()
    judges_before = dict(journal_of(folder, lock).judges)
    assert review_status(lock["plan"], journal_of(folder, lock), SEED)[NULL_CELL].provisional
    filled = fill(book, lock, folder, agree)
    assert do_import(folder, filled) == 0
    after = (folder / "journal.jsonl").read_bytes()
    assert after.startswith(before)  # appended, nothing rewritten
    journal = journal_of(folder, lock)
    assert journal.judges == judges_before
    spot = sampling.spot_check(lock["plan"], journal, SEED)
    assert sorted(journal.adjudications) == spot.runs
    rec = journal.adjudications[spot.cells[NULL_CELL][0]][0]
    assert rec["scope"] == "spot-check" and rec["sample_digest"] == spot.digest and rec["reviewer"] == "A. Reviewer"
    assert rec["rubric"] == "variance-commentary.v1" and set(rec["judgment"]) == {"clarity", "cause_attribution", "justification"}
    brief_run = spot.cells[(fx.BRIEF, "lrc/null", fx.SYSTEM)][0]
    facts = journal.adjudications[brief_run][0]["judgment"]["facts"]
    assert [f["id"] for f in facts] == fx.FACT_IDS and all(isinstance(f["present"], bool) for f in facts)
    status = review_status(lock["plan"], journal, SEED)
    assert len(status) == 6
    for review in status.values():
        assert not review.provisional and review.disagreements == 0 and review.disagreement_rate == 0
        assert not review.regrade_required and not review.regraded and review.note() is None
    assert status[(fx.BRIEF, "lrc/null", fx.SYSTEM)].sampled_judgments == 20
    assert "0/3 disagree" in capsys.readouterr().out


def test_a_disagreeing_spot_check_flags_the_cell_and_a_full_regrade_replaces_the_judge(folder: Path, lock, tmp_path: Path, capsys):
    book = tmp_path / "review.xlsx"
    export(folder, book)
    spot = sampling.spot_check(lock["plan"], journal_of(folder, lock), SEED)
    target = spot.cells[NULL_CELL][0]  # one of the 3 sampled runs of the cell: 33% > 10%
    brief_run = spot.cells[(fx.BRIEF, "lrc/oracle", fx.SYSTEM)][0]
    flipped_facts = {"F01"}  # 1 of 20 facts: 5%, within the threshold

    def grade(row, judge):
        if row.run == target or (row.run == brief_run and row.fact_id in flipped_facts):
            return flip(row, judge)
        return agree(row, judge)

    assert do_import(folder, fill(book, lock, folder, grade)) == 0
    status = review_status(lock["plan"], journal_of(folder, lock), SEED)
    flagged = status[NULL_CELL]
    assert (flagged.disagreements, flagged.imported, flagged.disagreement_rate) == (1, 3, Decimal(1) / Decimal(3))
    assert flagged.regrade_required and not flagged.regraded and not flagged.provisional and flagged.human_judgments == {}
    assert "Manual regrade required" in flagged.note() and "33.3%" in flagged.note() and "10.0%" in flagged.note()
    brief = status[(fx.BRIEF, "lrc/oracle", fx.SYSTEM)]
    assert (brief.disagreements, brief.imported, brief.regrade_required) == (1, 20, False)
    assert [c for c, r in status.items() if r.regrade_required] == [NULL_CELL]
    assert "manual regrade required" in capsys.readouterr().out
    assert status[NULL_CELL].as_json()["regrade_required"] is True

    # the regrade: every judged run of the flagged cell
    whole = tmp_path / "regrade.xlsx"
    export(folder, whole, "--all", "|".join(NULL_CELL))
    full = sampling.regrade(lock["plan"], journal_of(folder, lock), SEED, NULL_CELL)
    assert len(full.rows) == 15 and len(load_workbook(whole)["variance-commentary.v1"]["A"]) - wbk.HEADER_ROW == 15
    assert do_import(folder, fill(whole, lock, folder, lambda row, judge: {"clarity": 2, "cause_attribution": 3, "justification": "weak"})) == 0
    status = review_status(lock["plan"], journal_of(folder, lock), SEED)
    done = status[NULL_CELL]
    assert done.regraded and done.regrade_required and "Regraded by humans" in done.note()
    assert sorted(done.human_judgments) == full.runs
    assert all(j == {"clarity": 2, "cause_attribution": 3, "justification": "weak"} for j in done.human_judgments.values())
    assert not status[(fx.VARIANCE, "lrc/oracle", fx.SYSTEM)].regraded
    # the spot-check figure still comes from the spot-check grades
    assert (done.disagreements, done.imported) == (1, 3)


def test_importing_the_same_workbook_twice_appends_nothing_the_second_time(folder: Path, lock, tmp_path: Path, capsys):
    book = fill(_exported(folder, tmp_path), lock, folder, agree)
    assert do_import(folder, book) == 0
    before = (folder / "journal.jsonl").read_bytes()
    capsys.readouterr()
    assert do_import(folder, book) == 0
    assert (folder / "journal.jsonl").read_bytes() == before
    assert "nothing appended" in capsys.readouterr().out


def _exported(folder: Path, tmp_path: Path, *extra: str) -> Path:
    book = tmp_path / "review.xlsx"
    export(folder, book, *extra)
    return book


def _refused(folder: Path, book: Path, capsys, *needles: str) -> str:
    before = (folder / "journal.jsonl").read_bytes()
    capsys.readouterr()
    assert do_import(folder, book) == 1
    err = capsys.readouterr().err
    assert (folder / "journal.jsonl").read_bytes() == before, "a refused import appended something"
    for needle in needles:
        assert needle in err, err
    return err


def _edit(book: Path, sheet: str, coordinate: str, value: Any) -> Path:
    wb = load_workbook(book)
    wb[sheet][coordinate] = value
    target = book.with_name("edited-" + book.name)
    wb.save(target)
    return target


def test_an_edited_protected_cell_is_refused_and_named(folder: Path, lock, tmp_path: Path, capsys):
    book = fill(_exported(folder, tmp_path), lock, folder, agree)
    row_id = load_workbook(book)["variance-commentary.v1"]["A5"].value
    err = _refused(folder, _edit(book, "variance-commentary.v1", "D5", "a kinder output"), capsys,
                   "protected cells of the workbook were edited", f"variance-commentary.v1!D5 (row {row_id})")
    assert "nothing was imported" in err
    _refused(folder, _edit(book, wbk.INFO_SHEET, "B4", "sha256:" + "0" * 64), capsys, "Instructions!B4")
    _refused(folder, _edit(book, "board-brief.v1", "E10", "F99: something else"), capsys, "board-brief.v1!E10")
    # the stored content digest alone changed
    _refused(folder, _edit(book, wbk.META_SHEET, "B1", "sha256:" + "1" * 64), capsys, "content digest")


def test_a_workbook_of_another_plan_is_refused(folder: Path, lock, tmp_path: Path, capsys, monkeypatch):
    book = fill(_exported(folder, tmp_path), lock, folder, agree)
    _refused(folder, _edit(book, wbk.META_SHEET, "B4", "sha256:" + "9" * 64), capsys, "belongs to another run")
    # a folder of another plan: its journal names another digest
    other_lock = fx.hybrid_lock()
    other_lock["root_digest"] = "sha256:" + "7" * 64
    other = tmp_path / "other"
    other.mkdir()
    fx.build_folder(other, other_lock)
    monkeypatch.setattr("lrc.runtime.execute.load_verified", lambda path: other_lock)
    _refused(other, book, capsys, "belongs to another run", lock["root_digest"])


def test_a_workbook_whose_sample_is_no_longer_the_folders_is_refused(folder: Path, lock, tmp_path: Path, capsys):
    book = fill(_exported(folder, tmp_path), lock, folder, agree)
    journal = Journal(folder / "journal.jsonl", lock["root_digest"], lock["plan"]["edition"]["ref"])
    key = "generate.variance-commentary.v1|lrc/null|single-shot|late|r1"
    judge = dict(next(iter(journal.judges.values())), run=key)
    journal.append({"type": "run", "run": key, "workload": fx.VARIANCE, "model": "lrc/null", "system": fx.SYSTEM, "item": "late",
                    "item_index": 20, "repetition": 1, "outcome": "answered", "steps": 1})
    journal.append(judge)
    journal.close()
    _refused(folder, book, capsys, "is not this folder's current sample", "Export a new workbook")


def _first_clarity(value: Any) -> tuple[Grader, dict[str, str]]:
    """A grader agreeing with the judge everywhere but the first scored row's clarity, set to
    `value`; and where that row's id is put once the workbook is filled (`first["row"]`)."""
    first: dict[str, str] = {}

    def grade(row, judge):
        values = agree(row, judge)
        if row.fact_id is None and not first:
            first["row"] = row.row_id
            values["clarity"] = value
        return values
    return grade, first


@pytest.mark.parametrize("bad, why", [(None, "clarity is missing"), (7, "whole number from 1 to 5, not '7'"),
                                      ("four", "not 'four'"), (4.5, "not '4.5'"), ("1e999999", "not '1e999999'"),
                                      (True, "not 'true'"), ("NaN", "not 'NaN'"),
                                      # cut to 40 characters before parsing, these were read as 4
                                      ("4" + " " * 40 + "not sure, maybe 2", "whole number from 1 to 5"),
                                      ("4.0000000000000000000000000000000000000001", "whole number from 1 to 5")])
def test_missing_or_invalid_grades_are_refused_naming_the_rows(folder: Path, lock, tmp_path: Path, capsys, bad, why):
    grade, first = _first_clarity(bad)
    filled = fill(_exported(folder, tmp_path), lock, folder, grade)  # None leaves the cell empty
    _refused(folder, filled, capsys, f"row {first['row']}", why, "nothing was imported")


def test_a_bad_yes_no_and_an_overlong_text_are_refused(folder: Path, lock, tmp_path: Path, capsys):
    book = _exported(folder, tmp_path)
    marks = {}

    def grade(row, judge):
        values = agree(row, judge)
        if row.fact_id == "F03" and "fact" not in marks:
            marks["fact"] = row.row_id
            values["present"] = "maybe"
        if row.fact_id is None and "text" not in marks:
            marks["text"] = row.row_id
            values["justification"] = "y" * 700  # the rubric's maxLength is 600
        return values

    filled = fill(book, lock, folder, grade)
    _refused(folder, filled, capsys, f"row {marks['fact']}", "must be yes or no")
    wb = load_workbook(filled)
    for ws in wb.worksheets:
        for row in ws.iter_rows(min_row=wbk.FIRST_ROW):
            if ws.title == "board-brief.v1" and row[6].value == "maybe":
                row[6].value = "yes"
    wb.save(filled)
    _refused(folder, filled, capsys, f"row(s) {marks['text']}", "not a valid variance-commentary.v1 judgment at justification")


def test_not_a_workbook_and_a_foreign_workbook_are_refused(folder: Path, tmp_path: Path, capsys):
    junk = tmp_path / "junk.xlsx"
    junk.write_bytes(b"PK\x03\x04 not really")
    _refused(folder, junk, capsys, "not a readable .xlsx workbook")
    from openpyxl import Workbook

    plain = tmp_path / "plain.xlsx"
    Workbook().save(plain)
    _refused(folder, plain, capsys, "not an lrc review workbook")


# -- the command line --------------------------------------------------------------------------

def test_cell_syntax_and_unknown_cells(folder: Path, tmp_path: Path, capsys):
    assert lrc("review", "export", folder, "--out", tmp_path / "x.xlsx", "--plan", folder / "plan.lock", "--all", "just-a-workload") == 1
    assert "WORKLOAD|MODEL|SYSTEM" in capsys.readouterr().err
    assert lrc("review", "export", folder, "--out", tmp_path / "x.xlsx", "--plan", folder / "plan.lock", "--all", "a|b|c") == 1
    err = capsys.readouterr().err
    assert "no judged runs in cell a|b|c" in err and "|".join(NULL_CELL) in err
    assert not (tmp_path / "x.xlsx").exists()


def test_the_plan_lock_defaults_to_the_editions_generated_lock_and_must_be_the_folders(tmp_path: Path, lock, capsys, monkeypatch):
    from lrc.runtime.review.cli import locate_plan
    from support import REPO

    folder = tmp_path / "run"
    folder.mkdir()
    fx.build_folder(folder, lock)
    assert locate_plan(folder, None, cwd=REPO / "runtime") == REPO / "generated" / "demo" / "plan.lock"
    monkeypatch.chdir(REPO)
    # the default lock is the real demo lock: not the plan this synthetic folder names
    assert lrc("review", "export", folder, "--out", tmp_path / "x.xlsx") == 4
    assert "pass --plan with the lock the folder was run with" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)
    assert lrc("review", "export", folder, "--out", tmp_path / "x.xlsx") == 4
    assert "no generated/demo/plan.lock found" in capsys.readouterr().err
    assert lrc("review", "import", tmp_path, tmp_path / "x.xlsx", "--plan", tmp_path / "p.lock") == 1  # no workbook
    assert lrc("review", "export", tmp_path, "--out", tmp_path / "x.xlsx") == 4
    assert "has no journal.jsonl" in capsys.readouterr().err


def test_review_waits_for_no_one_a_busy_folder_is_refused(folder: Path, lock, tmp_path: Path, capsys):
    book = fill(_exported(folder, tmp_path), lock, folder, agree)
    with open(folder / ".lrc-execute.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        before = (folder / "journal.jsonl").read_bytes()
        assert do_import(folder, book) == 4
        assert "another lrc command (execute or review import) is using" in capsys.readouterr().err
        assert (folder / "journal.jsonl").read_bytes() == before


# -- status ------------------------------------------------------------------------------------

def test_an_invalid_judge_judgment_is_never_a_pass_so_a_passing_human_disagrees(tmp_path: Path, lock):
    """The judge replied with no valid judgment (`judgment: null`): the human's pass is a
    disagreement, the human's fail is not; a facts judgment found no fact."""
    fx.build_folder(tmp_path, lock)
    journal = Journal(tmp_path / "journal.jsonl", lock["root_digest"], lock["plan"]["edition"]["ref"])
    spot = sampling.spot_check(lock["plan"], journal, SEED)
    first, second, third = spot.cells[NULL_CELL]
    for run in (first, second):
        journal.append({**journal.judges[(run, "primary")], "judgment": None, "invalid_judgment": "not JSON"})
    brief_run = spot.cells[(fx.BRIEF, "lrc/null", fx.SYSTEM)][0]
    journal.append({**journal.judges[(brief_run, "primary")], "judgment": {"facts": "garbage"}})
    spot = sampling.spot_check(lock["plan"], journal, SEED)  # the sample does not depend on the verdicts
    assert spot.cells[NULL_CELL] == [first, second, third]

    def adjudicate(run: str, judgment: dict[str, Any]) -> None:
        journal.append({"type": "adjudication", "run": run, "rubric": "variance-commentary.v1", "scope": "spot-check",
                        "sample_digest": spot.digest, "workbook_sha256": "0" * 64, "judgment": judgment, "reviewer": None})

    adjudicate(first, {"clarity": 5, "cause_attribution": 4, "justification": ""})  # pass vs invalid: disagree
    adjudicate(second, {"clarity": 2, "cause_attribution": 4, "justification": ""})  # fail vs invalid: agree
    third_judge = journal.judges[(third, "primary")]["judgment"]
    adjudicate(third, {**third_judge, "justification": "same"})
    adjudicate(brief_run, {"facts": [{"id": f, "present": n < 2, "evidence": ""} for n, f in enumerate(fx.FACT_IDS)]})
    journal.close()
    status = review_status(lock["plan"], journal_of(tmp_path, lock), SEED)
    assert (status[NULL_CELL].disagreements, status[NULL_CELL].imported, status[NULL_CELL].provisional) == (1, 3, False)
    brief = status[(fx.BRIEF, "lrc/null", fx.SYSTEM)]
    assert (brief.disagreements, brief.imported, brief.regrade_required) == (2, 20, False)  # 10% is not above 10%
    oracle = status[(fx.VARIANCE, "lrc/oracle", fx.SYSTEM)]
    assert oracle.provisional and oracle.imported == 0 and oracle.disagreement_rate is None and "Provisional" in oracle.note()


def test_an_edition_without_a_judged_workload_has_no_review(tmp_path: Path):
    lock = fx.demo_lock()
    journal = Journal(tmp_path / "journal.jsonl", lock["root_digest"], lock["plan"]["edition"]["ref"])
    journal.close()
    assert review_status(lock["plan"], journal_of(tmp_path, lock), SEED) == {}
    assert sampling.spot_check(lock["plan"], journal_of(tmp_path, lock), SEED).rows == []


def test_a_facts_run_shown_no_checklist_has_no_row_and_does_not_keep_its_cell_provisional(tmp_path: Path, lock):
    fx.build_folder(tmp_path, lock)
    journal = Journal(tmp_path / "journal.jsonl", lock["root_digest"], lock["plan"]["edition"]["ref"])
    cell = (fx.BRIEF, "lrc/baseline", fx.SYSTEM)
    run = sampling.spot_check(lock["plan"], journal, SEED).cells[cell][0]
    judge = journal.judges[(run, "primary")]
    journal.append({**judge, "material": {"output": "brief", "source": "", "checks": "not a list"}})
    journal.close()
    journal = journal_of(tmp_path, lock)
    spot = sampling.spot_check(lock["plan"], journal, SEED)
    assert spot.cells[cell] == [run] and not [r for r in spot.rows if r.run == run]
    assert not review_status(lock["plan"], journal, SEED)[cell].provisional
    assert wbk.read(wbk.write(wbk.build(lock["plan"], journal, spot))).meta["sample"] == spot.digest


# -- hostile workbooks (a probe, 2026-12-07): refused at once, never read whole -------------------

def _rezip(book: Path, change: Callable[[str, bytes], bytes], extra: dict[str, bytes] | None = None) -> Path:
    import zipfile

    target = book.with_name("hostile-" + book.name)
    with zipfile.ZipFile(book) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, change(info.filename, src.read(info.filename)))
        for name, data in (extra or {}).items():
            dst.writestr(name, data)
    return target


def _in_review_sheets(insert: bytes, before: bytes) -> Callable[[str, bytes], bytes]:
    def change(name: str, data: bytes) -> bytes:
        if name.startswith("xl/worksheets/sheet") and before in data and b"<sheetData" in data:
            return data.replace(before, insert + before, 1)
        return data
    return change


@pytest.mark.parametrize("case, needle", [
    ("far-cell", "reaches row 1,048,576"),  # one empty cell: 17 billion cells built, exit 70 after a minute
    ("past-the-last-row", "reaches row 2,000,000"),  # exit 70: ValueError from openpyxl
    ("merged-sheet", "merges more than"),  # MemoryError at load
    ("bomb", "inflates to"),  # 1.5 GB read whole, exit 0
])
def test_a_hostile_workbook_is_refused_at_once(folder: Path, lock, tmp_path: Path, capsys, case, needle):
    import time

    book = fill(_exported(folder, tmp_path), lock, folder, agree)
    if case == "far-cell":
        hostile = _rezip(book, _in_review_sheets(b'<row r="1048576"><c r="XFD1048576"/></row>', b"</sheetData>"))
    elif case == "past-the-last-row":
        hostile = _rezip(book, _in_review_sheets(b'<row r="2000000"><c r="A2000000" t="inlineStr"><is><t>x</t></is></c></row>',
                                                 b"</sheetData>"))
    elif case == "merged-sheet":
        hostile = _rezip(book, lambda name, data: data.replace(b"</sheetData>", b'</sheetData><mergeCells count="1">'
                                                               b'<mergeCell ref="A1:XFD1048576"/></mergeCells>', 1)
                         if name.startswith("xl/worksheets/sheet") else data)
    else:
        hostile = _rezip(book, lambda name, data: data, {"xl/media/padding.bin": b"\0" * (wbk.MAX_INFLATED_BYTES + 1)})
    started = time.monotonic()
    _refused(folder, hostile, capsys, needle)
    assert time.monotonic() - started < 20, "the refusal read the workbook whole first"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_workbook_path_that_is_no_regular_file_or_too_large_is_refused(folder: Path, tmp_path: Path, capsys):
    import os

    _refused(folder, Path("/dev/zero"), capsys, "not a regular file")  # MemoryError, exit 70
    fifo = tmp_path / "fifo.xlsx"
    os.mkfifo(fifo)
    _refused(folder, fifo, capsys, "not a regular file")
    big = tmp_path / "big.xlsx"
    with open(big, "wb") as fh:
        fh.truncate(wbk.MAX_WORKBOOK_BYTES + 1)
    _refused(folder, big, capsys, "more than a review workbook can")


def test_a_refused_cell_is_quoted_back_redacted(folder: Path, lock, tmp_path: Path, capsys, monkeypatch):
    secret = "sk-review-0123456789abcdefSECRET"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    grade, first = _first_clarity(secret)
    err = _refused(folder, fill(_exported(folder, tmp_path), lock, folder, grade), capsys, f"row {first['row']}",
                   "[REDACTED:OPENAI_API_KEY]")
    assert secret not in err
