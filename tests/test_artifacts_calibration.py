"""Calibration of every task kind (seed 000): the oracle passes every check, the null output
(the input handed back) fails, the baseline's partial job fails some checks and passes
others, and generation is byte-identical for a seed and different across seeds.
The planted mutants are in test_artifacts_mutants.py."""

from __future__ import annotations

import pytest

from helpers.artifacts import kinds, task as make_task
from lrc.runtime.artifacts import tasks, validators
from lrc.runtime.artifacts.views import Submission

SEED = "calibration"


class _Made(dict):
    """kind -> the task of SEED, made on first use (a test of one kind makes only that kind)."""

    def __missing__(self, kind: str) -> tasks.Task:
        return make_task(kind, SEED)


@pytest.fixture(scope="module")
def made() -> dict[str, tasks.Task]:
    return _Made()


def grade(task: tasks.Task, output: bytes) -> list[dict]:
    return validators.run_all(task.checks, Submission(task.inputs, {task.output: output}))


def failing(results) -> set[str]:
    return {r["id"] for r in results if r["status"] != "pass"}


def test_there_are_at_least_fifteen_kinds():
    assert len(tasks.KINDS) >= 15 and len(set(tasks.KINDS)) == len(tasks.KINDS)


@pytest.mark.parametrize("kind", kinds())
def test_the_oracle_passes_every_check(made, kind):
    results = grade(made[kind], made[kind].oracle)
    assert failing(results) == set(), [r["message"] for r in results if r["status"] != "pass"]
    assert {r["id"] for r in results} <= set(validators.FAMILIES)


# What the null output fails, per kind: the families that see "nothing was done".
NULL_FAILS = {
    "extend-quarter": {"fa.formula-presence", "fa.conventions"},
    "fix-cash-flow": {"fa.identities", "fa.formula-presence"},
    "fix-sign": {"fa.formula-presence", "fa.conventions"},
    "refresh-deck-table": {"fa.summary-ties"},
    "roll-debt-forward": {"fa.identities", "fa.rollforward", "fa.formula-presence"},
    "roll-fixed-assets-forward": {"fa.identities", "fa.rollforward", "fa.formula-presence"},
    "roll-deferred-revenue-forward": {"fa.rollforward", "fa.formula-presence"},
    "build-dcf": {"fa.identities", "fa.formula-presence", "fa.required-parts"},
    "fix-dcf": {"fa.formula-presence"},
    "add-sensitivity-table": {"fa.identities", "fa.formula-presence"},
    "budget-vs-actual": {"fa.identities", "fa.formula-presence"},
    "fix-broken-reference": {"fa.identities", "fa.rollforward", "fa.formula-presence", "fa.reference-integrity"},
    "restore-defined-name": {"fa.identities", "fa.reference-integrity"},
    "fix-period-header-order": {"fa.conventions"},
    "fix-units": {"fa.identities", "fa.conventions"},
    "refresh-deck-chart": {"fa.summary-ties"},
    "refresh-deck-text": {"fa.summary-ties"},
    "add-required-slide": {"fa.required-parts", "fa.summary-ties"},
}
# What the baseline's partial job still fails: what it left undone, or did the shortcut way.
BASELINE_FAILS = {
    "extend-quarter": {"fa.reference-integrity"},  # names not extended
    "fix-cash-flow": {"fa.formula-presence"},  # the total typed in
    "fix-sign": {"fa.formula-presence"},  # the value typed in
    "refresh-deck-table": {"fa.summary-ties"},  # one row refreshed
    "roll-debt-forward": {"fa.formula-presence"},  # values, not formulas
    "roll-fixed-assets-forward": {"fa.identities", "fa.rollforward", "fa.formula-presence"},  # depreciation left out
    "roll-deferred-revenue-forward": {"fa.rollforward", "fa.formula-presence"},  # opening not linked to the closing
    "build-dcf": {"fa.identities", "fa.formula-presence", "fa.required-parts"},  # no terminal value
    "fix-dcf": {"fa.formula-presence"},  # the terminal value still wrong
    "add-sensitivity-table": {"fa.formula-presence"},  # the growth axis ignored
    "budget-vs-actual": {"fa.formula-presence"},  # no variance %
    "fix-broken-reference": {"fa.formula-presence"},  # the value typed in
    "restore-defined-name": {"fa.reference-integrity"},  # the name one row off
    "fix-period-header-order": {"fa.conventions"},  # one sheet of two
    "fix-units": {"fa.identities", "fa.conventions"},  # the label only
    "refresh-deck-chart": {"fa.summary-ties"},  # one series of two
    "refresh-deck-text": {"fa.summary-ties"},  # one figure of two
    "add-required-slide": {"fa.summary-ties"},  # a picture of a chart
}


def test_every_kind_is_calibrated():
    assert set(NULL_FAILS) == set(BASELINE_FAILS) == set(tasks.KINDS)


@pytest.mark.parametrize("kind", kinds())
def test_the_null_output_fails(made, kind):
    task = made[kind]
    results = grade(task, task.inputs[task.output])
    assert failing(results) == NULL_FAILS[kind]
    assert all(r["status"] == "fail" for r in results if r["status"] != "pass")


@pytest.mark.parametrize("kind", kinds())
def test_the_baseline_fails_some_checks_and_passes_others(made, kind):
    task = made[kind]
    results = grade(task, task.baseline)
    assert failing(results) == BASELINE_FAILS[kind], [r["message"] for r in results if r["status"] != "pass"]
    assert 0 < len(BASELINE_FAILS[kind]) < len(results)
    assert all(r["status"] == "fail" for r in results if r["status"] != "pass")
    assert task.baseline not in (task.oracle, task.inputs[task.output])


def _files(task: tasks.Task) -> dict[str, bytes]:
    return {**{f"input:{k}": v for k, v in task.inputs.items()}, "oracle": task.oracle, "baseline": task.baseline}


@pytest.mark.parametrize("kind", kinds())
def test_generation_is_byte_identical_for_a_seed_and_differs_across_seeds(made, kind):
    again = tasks.make(kind, SEED)
    assert _files(again) == _files(made[kind])
    assert (again.objective, again.checks, again.output) == (made[kind].objective, made[kind].checks, made[kind].output)
    other = tasks.make(kind, "calibration-2")
    assert all(other.inputs[name] != data for name, data in made[kind].inputs.items() if name == made[kind].output)
    assert other.oracle != made[kind].oracle


def test_an_unknown_kind_is_refused_with_the_known_ones():
    with pytest.raises(KeyError, match="extend-quarter"):
        tasks.make("no-such-kind", SEED)


@pytest.mark.slow  # opens every file of all 18 kinds
def test_every_function_the_tasks_use_is_one_the_engine_evaluates(made):
    from lrc.runtime.artifacts import recalc, safezip

    used: set[str] = set()
    for task in (made[kind] for kind in tasks.KINDS):
        for data in (*task.inputs.values(), task.oracle, task.baseline):
            wb = safezip.open_workbook(data)[0] if b"xl/workbook.xml" in data else None
            for ws in (wb.worksheets if wb is not None else []):
                used |= {fn for row in ws.iter_rows() for c in row if c.data_type == "f" for fn in recalc.functions_used(c.value)}
    assert used == {"ABS", "IF", "ROUND", "SUM"}
    assert used <= recalc.supported_functions()


SUMMARY_SEEDS = ["c", "policies", *(f"ties-{n}" for n in range(38))]  # 40: the two reported, 38 more (slow)


@pytest.mark.parametrize("seed", [s if s == "c" else pytest.param(s, marks=pytest.mark.slow)
                                  for s in SUMMARY_SEEDS])
def test_the_deck_oracle_ties_to_the_recalculated_model_on_every_seed(seed):
    """The deck's figures come from `model.reference_values` (exact Decimal, ROUND half away
    from zero) and fa.summary-ties compares them with the recalculated model: both must round
    a half-cent the same way (seeds "c" and "policies" once missed by a cent), for every seed."""
    task = make_task("refresh-deck-table", seed)
    (tie,) = [c for c in task.checks if c["validator"] == "fa.summary-ties"]
    result = validators.run(tie, Submission(task.inputs, {task.output: task.oracle}))
    assert result["status"] == "pass", result["message"]
