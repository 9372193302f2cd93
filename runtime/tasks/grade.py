"""A task run's verdict: the eight validator families over the files it saved.

Why the order and the rules: a run that did not end normally (budget or step cap exceeded,
refusal, unreadable reply, no answer) is a fail with its reason, and no validator is run on a
job that was not handed in. Otherwise every declared check runs on the saved outputs beside
the inputs (`validators.run_all(checks, Submission(inputs, outputs))`); the agent's files are
hostile input, which the validators open through `safezip` and recalculate through
`recalc.recalculate`, its public function (its limits are its own). Each result is
`{id, version, status, severity, observed, expected, location, message}`.

- pass: every check passes. A check that could not be decided (`error`) is never a pass;
- partial: some checks pass, some do not (seed 000 records partial completion apart; it
  counts as not passed);
- fail: no check passes, or the run did not end normally.

Grading names no failure category: it records `failed_checks` (each check that did not pass,
an undecided one included, with the `failure_category` its spec declares and its validator's
id), and lrc.runtime.failures derives the primary and secondary categories from the rules of
the taxonomy frozen in the lock (a partial run gets `partial-completion`, a run over its
budget `budget-exceeded`, ...).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from lrc.runtime.artifacts.validators import run_all
from lrc.runtime.artifacts.views import Submission
from lrc.runtime.checks.results import result

def outputs_of(run: dict[str, Any]) -> dict[str, bytes]:
    """The files the run saved, decoded from its journal record. An entry that does not decode
    (a damaged record) is left out: the validators then find the file missing, a fail."""
    files: dict[str, bytes] = {}
    for name, data in sorted(((run.get("task") or {}).get("outputs") or {}).items()):
        try:
            files[name] = base64.b64decode(data, validate=True)
        except (binascii.Error, TypeError, ValueError):
            continue
    return files


def _outcome_result(run: dict[str, Any]) -> dict[str, Any]:
    outcome = run["outcome"]
    exceeded = (run.get("task") or {}).get("exceeded")
    if exceeded:
        return result("lrc.task-budget", 1, "fail", observed=f"{exceeded['limit']}: {exceeded['observed']}",
                      expected=f"{exceeded['limit']} within {exceeded['allowed']}", location=f"step {run['steps']}",
                      message=f"the run exceeded its task budget ({exceeded['limit']}); a budget fail is never retried")
    message = {"refusal": "the model refused", "no_answer": "the model stopped without submitting",
               "invalid_output": "a reply could not be read"}.get(outcome, outcome)
    return result("lrc.run-outcome", 1, "fail", observed=outcome, expected="a submitted artifact", location=f"step {run['steps']}",
                  message=message)


def grade(item: Any, run: dict[str, Any], outputs: dict[str, bytes] | None = None) -> dict[str, Any]:
    """The evaluation of one journaled task run of `item` (a `tasks.items.TaskItem`).
    `outputs`: the run's saved files when the caller has decoded them already (`outputs_of`)."""
    outcome = run["outcome"]
    if outcome != "answered":
        return {"results": [_outcome_result(run)], "verdict": "fail", "outcome": outcome, "failed_checks": []}
    results = run_all(item.checks, Submission(inputs=dict(item.files), outputs=outputs_of(run) if outputs is None else outputs))
    failed = [{"check": check["validator"], "category": check["failure_category"], "validators": [res["id"]]}
              for check, res in zip(item.checks, results) if res["status"] != "pass"]  # an undecided check (error) is not a pass
    passed = sum(1 for r in results if r["status"] == "pass")
    verdict = "pass" if passed == len(results) and results else ("partial" if passed else "fail")
    return {"results": results, "verdict": verdict, "outcome": "answered", "failed_checks": failed}
