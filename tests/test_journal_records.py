"""A journal record lrc could not have written is refused at the load, named by its line.

Found by a probe of damaged journals: a line of valid JSON with the wrong shape -- a call whose
`step` is text, whose `usage` is not counts -- passed the load and ended every `lrc execute` and
`lrc report` of the folder in an internal error (exit 70), and a call with negative usage was
priced as a negative cost without a word. Such a record is now refused like a line that is not
JSON: exit 4, naming the file and line, nothing written or re-sent.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from helpers.project import build_project, lrc_env, run_lrc
from helpers.stub_server import StubServer
from lrc.runtime import journal as journal_module
from lrc.runtime.journal import Journal, JournalError
from lrc.runtime.models import adapter

KEY = "sk-lrc-test-journal-records-7f3a9c2e51"
USAGE = {"input": 100, "cached_input": 0, "cache_write": 0, "output": 20, "reasoning": 0}
CALL = {"type": "call", "run": "w|m|s|i|1", "step": 1, "request": "sha256:ab",
        "response": {"message": {}, "finish_reason": "stop", "refusal": False},
        "usage": USAGE, "attempts": 1, "infra_failures": []}

FAILURE = {"kind": "GenerationError", "status": 502, "message": "the provider reported that the generation failed"}

DAMAGED = {
    "step-text": {**CALL, "step": "x"},
    "step-zero": {**CALL, "step": 0},
    "step-bool": {**CALL, "step": True},
    "run-number": {**CALL, "run": 5},
    "usage-text": {**CALL, "usage": "lots"},
    "usage-negative": {**CALL, "usage": {**USAGE, "output": -5}},
    "usage-fraction": {**CALL, "usage": {**USAGE, "input": 1.5}},
    "usage-bool": {**CALL, "usage": {**USAGE, "input": True}},
    "usage-huge": {**CALL, "usage": {**USAGE, "input": 10 ** 400}},
    "usage-unknown-class": {**CALL, "usage": {**USAGE, "audio": 3}},
    "usage-missing": {k: v for k, v in CALL.items() if k != "usage"},
    "response-text": {**CALL, "response": "hello"},
    "attempts-negative": {**CALL, "attempts": -1},
    "failures-not-a-list": {**CALL, "infra_failures": {"kind": "x"}},
    "run-record-run-missing": {"type": "run", "outcome": "answered"},
    "run-events-number": {"type": "run", "run": "r", "outcome": "answered", "events": 5},  # exit 70 in failures.py
    "run-outcome-list": {"type": "run", "run": "r", "outcome": ["x"]},  # exit 70 in grading.py
    "run-steps-text": {"type": "run", "run": "r", "outcome": "answered", "steps": "many"},  # exit 70 in aggregate.py
    "run-transcript-text": {"type": "run", "run": "r", "outcome": "answered", "transcript": "hello"},
    "run-submitted-text": {"type": "run", "run": "r", "outcome": "answered", "submitted": "yes"},
    "run-repetition-negative": {"type": "run", "run": "r", "outcome": "answered", "repetition": -1},
    "run-outside-window-text": {"type": "run", "run": "r", "outcome": "answered", "outside_window": "no"},
    "second-header": {"type": "header", "journal_format": 1, "plan": "sha256:another", "edition": "e"},
    "judge-role-missing": {"type": "judge", "run": "r", "usage": USAGE, "response": {}},
    "exhausted-failures-text": {"type": "infra_exhausted", "run": "r", "failures": "many"},
    # found by a mutation sweep of a demo journal (2026-12-07): each ended `lrc report` in exit 70
    "run-outcome-unknown": {"type": "run", "run": "r", "outcome": "weird"},
    "judge-model-number": {"type": "judge", "run": "r", "role": "primary", "model": 5, "usage": USAGE, "response": {}},
    "judge-material-text": {"type": "judge", "run": "r", "role": "primary", "model": "m", "usage": USAGE, "response": {},
                            "material": "x"},
    "judge-judgment-list": {"type": "judge", "run": "r", "role": "primary", "model": "m", "usage": USAGE, "response": {},
                            "judgment": [1]},
    "response-without-finish-reason": {**CALL, "response": {"message": {}, "refusal": False}},
    "response-refusal-text": {**CALL, "response": {"message": {}, "finish_reason": "stop", "refusal": "no"}},
    "response-message-number": {**CALL, "response": {"message": 5, "finish_reason": "stop", "refusal": False}},
    "reused-text": {**CALL, "attempts": 0, "reused": "yes"},
    "reused-without-edition": {**CALL, "attempts": 0, "reused": {"plan": "sha256:p", "run": "r", "step": 1, "usage": USAGE,
                                                                 "cost_usd": "0.1"}},
    "reused-cost-float": {**CALL, "attempts": 0, "reused": {"plan": "sha256:p", "edition": "e", "run": "r", "step": 1,
                                                            "usage": USAGE, "cost_usd": 0.1}},
    "reused-cost-negative": {**CALL, "attempts": 0, "reused": {"plan": "sha256:p", "edition": "e", "run": "r", "step": 1,
                                                               "usage": USAGE, "cost_usd": "-3"}},
    # a probe (2026-12-07): read and ignored before -- lrc writes neither
    "type-unknown": {"type": "note", "x": 1},
    "type-missing": {"run": "r", "outcome": "answered"},
    "type-number": {"type": 3},
    "nan": {**CALL, "latency_ms": float("nan")},
    # a probe of exclusion records (2026-12-07): a failure that is not an object ended `lrc report`
    # of a task edition in exit 70 (its last failure's message is read); `billed` is priced
    "exhausted-failure-number": {"type": "infra_exhausted", "run": "r", "failures": [5]},
    "exhausted-failure-text": {"type": "infra_exhausted", "run": "r", "failures": ["x"]},
    "exhausted-failure-empty": {"type": "infra_exhausted", "run": "r", "failures": [{}]},
    "exhausted-failure-kind-number": {"type": "infra_exhausted", "run": "r", "failures": [{**FAILURE, "kind": 5}]},
    "exhausted-failure-message-object": {"type": "infra_exhausted", "run": "r", "failures": [{**FAILURE, "message": {"a": 1}}]},
    "exhausted-failure-status-text": {"type": "infra_exhausted", "run": "r", "failures": [{**FAILURE, "status": "502"}]},
    "exhausted-failure-status-bool": {"type": "infra_exhausted", "run": "r", "failures": [{**FAILURE, "status": True}]},
    "exhausted-billed-negative": {"type": "infra_exhausted", "run": "r", "failures": [{**FAILURE, "billed": {"input": -1}}]},
    "exhausted-billed-unknown-class": {"type": "infra_exhausted", "run": "r", "failures": [{**FAILURE, "billed": {"audio": 1}}]},
    "exhausted-billed-text": {"type": "infra_exhausted", "run": "r", "failures": [{**FAILURE, "billed": "12 input"}]},
    "exhausted-reason-number": {"type": "infra_exhausted", "run": "r", "failures": [], "reason": 5},
    "exhausted-judge-list": {"type": "infra_exhausted", "run": "r", "failures": [], "judge": ["primary"]},
    "call-failure-text": {**CALL, "infra_failures": ["x"]},
    "call-failure-billed-fraction": {**CALL, "infra_failures": [{**FAILURE, "billed": {"input": 1.5}}]},
    "infinity": {"type": "session", "operation": {}, "concurrency": float("inf")},
    # a sweep of session records (2026-12-07): a session without `operation` ended `lrc report` in exit 70
    "session-operation-missing": {"type": "session", "opened": "2026-12-07T17:38:03Z"},
    "session-operation-text": {"type": "session", "operation": "fast"},
    "session-operation-list": {"type": "session", "operation": [1]},
    # adjudications (`lrc review import`): a regraded cell's verdicts are read from them
    "adjudication-judgment-missing": {"type": "adjudication", "run": "r", "scope": "regrade", "reviewer": None},
    "adjudication-judgment-text": {"type": "adjudication", "run": "r", "scope": "regrade", "judgment": "pass", "reviewer": None},
    "adjudication-scope-unknown": {"type": "adjudication", "run": "r", "scope": "audit", "judgment": {}, "reviewer": None},
    "adjudication-reviewer-number": {"type": "adjudication", "run": "r", "scope": "spot-check", "judgment": {}, "reviewer": 7},
    # a scope that cannot be looked up in a set (a list, an object) ended every command in exit 70
    "adjudication-scope-list": {"type": "adjudication", "run": "r", "scope": [], "judgment": {}, "reviewer": None},
    "adjudication-scope-object": {"type": "adjudication", "run": "r", "scope": {"a": 1}, "judgment": {}, "reviewer": None},
    # categorizations (`lrc categorize`): the next assignment's number was computed from `seq` (exit 70 on "x", 1e400)
    **{f"categorization-{name}": {"type": "categorization", "run": "r", "seq": 1, "taxonomy": "t.v1", "primary": "refusal",
                                  "secondary": [], "note": "n", **damage}
       for name, damage in {"seq-text": {"seq": "x"}, "seq-huge-float": {"seq": 1e300}, "seq-zero": {"seq": 0},
                            "seq-true": {"seq": True}, "seq-missing": {"seq": None}, "seq-list": {"seq": [[1]]},
                            "primary-number": {"primary": 5}, "taxonomy-missing": {"taxonomy": None},
                            "secondary-text": {"secondary": "a"}, "secondary-numbers": {"secondary": [1]},
                            "note-object": {"note": {}}, "reviewer-list": {"reviewer": []}}.items()},
    "session-opened-number": {"type": "session", "operation": {}, "opened": 1765000000},
}


@pytest.mark.parametrize("record", DAMAGED.values(), ids=DAMAGED.keys())
def test_a_record_lrc_could_not_have_written_is_refused_at_the_load_naming_its_line(tmp_path, record: dict[str, Any]):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path, "sha256:plan", "e")
    journal.append(CALL)
    journal.close()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    before = path.read_bytes()
    for readonly in (True, False):
        with pytest.raises(JournalError, match=r"journal\.jsonl:3: damaged journal line \(.+\); it was not written by lrc"):
            Journal(path, "sha256:plan", "e", readonly=readonly)
    assert path.read_bytes() == before, "a refused journal is left as it was"


WRITTEN = [CALL, {**CALL, "attempts": 0, "reused": {}}, {**CALL, "step": 25},
                                    {**CALL, "attempts": 0, "reused": {"plan": "sha256:p", "edition": "e", "run": "r", "step": 2,
                                                                       "usage": USAGE, "cost_usd": "0.00012", "stored_at": "x"}},
                                    *({"type": "run", "run": "r", "outcome": o} for o in sorted(journal_module.RUN_OUTCOMES)),
                                    {"type": "run", "run": "r", "outcome": "answered"}, {"type": "session", "operation": {}},
                                    {"type": "session", "opened": "2026-12-07T17:38:03Z", "operation": {"models": {}}},
                                    {"type": "adjudication", "run": "r", "rubric": "x.v1", "scope": "spot-check", "sample_digest": "d",
                                     "workbook_sha256": "0" * 64, "judgment": {"clarity": 5}, "reviewer": None},
                                    {"type": "adjudication", "run": "r", "scope": "regrade", "judgment": {}, "reviewer": "Ann"},
                                    {"type": "categorization", "run": "r", "seq": 2, "taxonomy": "t.v1", "primary": "refusal",
                                     "secondary": ["s"], "note": "n", "reviewer": "Ann"},
                                    {"type": "categorization", "run": "r", "seq": 1, "taxonomy": "t.v1", "primary": "refusal",
                                     "secondary": [], "note": "n"},
                                    {"type": "judge", "run": "r", "role": "primary", "model": "lrc/judge", "usage": USAGE, "response": {},
                                     "material": {}, "judgment": {"clarity": 3}, "invalid_judgment": None},
                                    {"type": "infra_exhausted", "run": "r", "failures": []},
                                    {"type": "infra_exhausted", "run": "r", "reason": "judge-retries-exhausted", "judge": "primary",
                                     "failures": [adapter.InfraFailure("Timeout", None, "no response").record(),
                                                  adapter.InfraFailure("GenerationError", 502, "cut", {"input": 4, "output": 1}).record()]},
                                    {**CALL, "infra_failures": [adapter.InfraFailure("RateLimitError", 429, "slow down").record()]}]
"""Records of every kind as lrc writes them."""


@pytest.mark.parametrize("record", WRITTEN)
def test_what_lrc_writes_passes(record):
    assert journal_module.record_problem(record) is None


def test_a_value_json_cannot_hold_is_written_as_a_marker_and_the_journal_reads_back(tmp_path):
    """The reader refuses NaN and Infinity, so the writer must never write them: a float lrc was
    handed that JSON cannot hold is journaled as a marker string, and the journal still loads."""
    path = tmp_path / "journal.jsonl"
    journal = Journal(path, "sha256:plan", "e")
    journal.append({**CALL, "latency_ms": float("nan"), "queue_ms": float("-inf")})
    journal.close()
    assert b"NaN" not in path.read_bytes() and b"Infinity" not in path.read_bytes()
    again = Journal(path, "sha256:plan", "e", readonly=True)
    call = again.calls[(CALL["run"], 1)]
    assert call["latency_ms"] == "<nan is not a JSON number>" and call["queue_ms"] == "<-inf is not a JSON number>"


def test_the_journals_adjudication_scopes_are_the_reviews():
    from lrc.runtime.review.sample import REGRADE, SPOT_CHECK

    assert journal_module.ADJUDICATION_SCOPES == {SPOT_CHECK, REGRADE}


def test_the_journals_token_bound_is_the_adapters():
    assert journal_module.MAX_TOKENS == adapter.MAX_TOKENS_PER_CALL


@pytest.fixture(scope="module")
def finished(stub: StubServer, tmp_path_factory) -> tuple[Path, Path]:
    lock = build_project(tmp_path_factory.mktemp("journal-project"), stub.api_base, n_per_cell=2, reference_models=(),
                         systems=("single-shot",))
    out = tmp_path_factory.mktemp("journal-run") / "out"
    stub.reset()
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY))
    assert res.returncode == 0, res.stdout + res.stderr
    return lock, out


@pytest.mark.parametrize("damage", ["step-text", "usage-negative", "usage-text"])
def test_execute_and_report_refuse_a_folder_whose_journal_holds_such_a_record(stub, finished, tmp_path, damage):
    lock, base = finished
    out = tmp_path / "out"
    shutil.copytree(base, out)
    lines = (out / "journal.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines) if json.loads(line).get("type") == "call")
    rec = json.loads(lines[n])
    rec.update({k: v for k, v in DAMAGED[damage].items() if k in ("step", "usage")})
    lines[n] = json.dumps(rec) + "\n"
    (out / "journal.jsonl").write_text("".join(lines), encoding="utf-8")
    before = (out / "journal.jsonl").read_bytes()
    stub.reset()
    for command in ("execute", "report"):
        res = run_lrc(command, lock, "--out", out, *(["--no-progress"] if command == "execute" else []), env=lrc_env(KEY))
        message = res.stdout + res.stderr
        assert res.returncode == 4, message
        assert f"journal.jsonl:{n + 1}: damaged journal line" in message
        assert "Traceback" not in message and "internal error" not in message
    assert stub.count == 0, "nothing is sent for a refused folder"
    assert (out / "journal.jsonl").read_bytes() == before, "nothing is written to a refused journal"


def test_every_run_outcome_the_journal_accepts_is_one_the_report_counts():
    from lrc.runtime.report.aggregate import _OUTCOMES

    assert journal_module.RUN_OUTCOMES <= set(_OUTCOMES)


# -- one reader: `lrc merge` refuses exactly what the journal refuses, in the journal's words ----

_FILE_DAMAGE = {
    "not-utf8": b"\xff\xfe not json\n",
    "empty": b"",
    "header-only-torn": b'{"type": "header"',
    "not-a-header": b'{"type": "run", "run": "r", "outcome": "answered"}\n',
    "format-2": b'{"type": "header", "journal_format": 2, "plan": "sha256:plan", "edition": "e"}\n',
    "list-line": b'{"type": "header", "journal_format": 1, "plan": "sha256:plan", "edition": "e"}\n[1, 2]\n',
    "deep-line": b'{"type": "header", "journal_format": 1, "plan": "sha256:plan", "edition": "e"}\n'
                 + b"[" * 100_000 + b"]" * 100_000 + b"\n",
}


def _damaged_journal(folder: Path, case: str) -> Path:
    folder.mkdir()
    path = folder / "journal.jsonl"
    if case in _FILE_DAMAGE:
        path.write_bytes(_FILE_DAMAGE[case])
        return path
    journal = Journal(path, "sha256:plan", "e")
    journal.append(CALL)
    journal.close()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(DAMAGED[case]) + "\n")
    return path


@pytest.mark.parametrize("case", [*DAMAGED, *_FILE_DAMAGE])
def test_merge_reads_a_shards_journal_with_the_journals_own_reader(tmp_path, case):
    from lrc.runtime.execute import Refused
    from lrc.runtime.merge import read_journal

    path = _damaged_journal(tmp_path / "shard", case)
    before = path.read_bytes()
    with pytest.raises(JournalError) as by_journal:
        Journal(path, "sha256:plan", "e", readonly=True)
    with pytest.raises(Refused) as by_merge:
        read_journal(tmp_path / "shard", "sha256:plan")
    assert str(by_journal.value) in str(by_merge.value), (str(by_journal.value), str(by_merge.value))
    assert path.read_bytes() == before, "merge never cuts or rewrites a shard's journal"


def test_merge_names_another_plans_journal_and_leaves_a_torn_tail_in_place(tmp_path):
    from lrc.runtime.execute import Refused
    from lrc.runtime.merge import read_journal

    path = tmp_path / "shard" / "journal.jsonl"
    journal = Journal(path, "sha256:other", "e")
    journal.append(CALL)
    journal.close()
    with pytest.raises(Refused, match=r"holds results of another plan \(sha256:other\), not this lock's sha256:plan"):
        read_journal(tmp_path / "shard", "sha256:plan")
    with open(path, "ab") as fh:
        fh.write(b'{"type": "call", "run"')  # a killed execute's torn last line
    before = path.read_bytes()
    assert read_journal(tmp_path / "shard", "sha256:other") == [CALL]
    assert path.read_bytes() == before


def test_a_fifo_in_a_shards_journal_place_is_refused_never_waited_on(tmp_path):
    import os

    from lrc.runtime.execute import Refused
    from lrc.runtime.merge import read_journal

    (tmp_path / "shard").mkdir()
    os.mkfifo(tmp_path / "shard" / "journal.jsonl")
    with pytest.raises(Refused, match="not a regular file"):
        read_journal(tmp_path / "shard", "sha256:plan")


#: Values of every JSON type and shape a hand edit can put in a field.
_HOSTILE = [5, -1, 0, 1.5, 10 ** 30, True, False, None, "", "x", [], [1], [[[]]], {}, {"a": {"b": []}}]


def _mutations(record: dict[str, Any]):
    """The record with each field (and each field of each object field) set to each hostile
    value or left out."""
    for key in sorted(record):
        for value in [*_HOSTILE, "<left out>"]:
            changed = {k: v for k, v in record.items() if k != key}
            if value != "<left out>":
                changed[key] = value
            yield changed
        if isinstance(record[key], dict):
            for inner in _mutations(record[key]):
                yield {**record, key: inner}


def test_every_mutation_of_a_written_record_is_judged_never_raises(tmp_path):
    """`record_problem` is the journal's one judge of a line's shape: for any field of any record
    kind set to any JSON value, it answers (a reason, or None) and never raises -- an adjudication
    whose scope was a list raised TypeError in its set lookup, and every command that read the
    journal ended in exit 70. A journal holding the record loads or is refused (JournalError)."""
    path = tmp_path / "journal.jsonl"
    Journal(path, "sha256:plan", "e").close()
    header = path.read_bytes()
    seen = refused = 0
    for record in WRITTEN:
        for changed in _mutations(record):
            seen += 1
            problem = journal_module.record_problem(changed)
            assert problem is None or isinstance(problem, str), (changed, problem)
            path.write_bytes(header + (json.dumps(changed) + "\n").encode("utf-8"))
            try:
                Journal(path, "sha256:plan", "e", readonly=True)
            except JournalError:
                refused += 1
    assert seen > 2000 and 0 < refused < seen
