"""Step 5 of `lrc execute`: turn a finished run into a verdict with every result behind it.

Order matters and is fixed: the run's outcome (step cap, refusal, no answer) first; then
the answer is parsed and normalized by the workload; then the output contract; then the
workload's validators. A deterministic failure is a failure whatever else says. Grading
reads only the journal's record of the run and the item's answer key, so it can be
re-run at any time (`lrc report`) with identical results.

Grading names no failure category: it records the facts (the outcome, and `failed_checks`,
each failing blocking check with the `failure_category` its spec declares and the ids of its
failing results), and lrc.runtime.failures derives the categories from the taxonomy's rules
frozen in the lock.
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any

from lrc.runtime.checks import contract
from lrc.runtime.checks.results import ValidatorResult, blocking_failures, result

def _validator_fn(module: ModuleType, name: str):
    table = getattr(module, "VALIDATORS", None)
    if isinstance(table, dict):
        if name not in table:
            raise LookupError(f"{module.__name__} has no validator '{name}' (has: {', '.join(sorted(table))})")
        return table[name]
    return module.validate


_ARITY: dict[Any, int] = {}
"""Parameters of each validator, read once: `inspect.signature` on every graded run was ~10%
of a report's grading time (issue 11: 12,000 calls in a 10,000-run report)."""


def _arity(fn) -> int:
    try:
        return _ARITY[fn]
    except KeyError:
        _ARITY[fn] = n = len(inspect.signature(fn).parameters)
        return n
    except TypeError:  # an unhashable callable: read it each time
        return len(inspect.signature(fn).parameters)


def _call_validator(fn, answer: Any, key: dict[str, Any], params: dict[str, Any], item: Any) -> list:
    """Validators take (answer, key, params), or (answer, key, params, item) when they need the item's files."""
    if item is not None and _arity(fn) >= 4:
        return fn(answer, key, params, item)
    return fn(answer, key, params)


def grade(workload: dict[str, Any], run: dict[str, Any], answer_key: dict[str, Any], modules: dict[str, ModuleType],
          item: Any = None) -> dict[str, Any]:
    """Evaluation record: validator results, verdict, outcome and the failing checks (`failed_checks`)."""
    spec = workload["spec"]
    results: list[ValidatorResult] = []
    outcome = run["outcome"]
    if outcome == "invalid_output":
        reasons = [e.get("detail") for e in run.get("events") or [] if isinstance(e, dict) and e.get("event") == "invalid_response"]
        results.append(contract.unparseable(str(reasons[-1]) if reasons else "the response could not be read"))
        return {"results": results, "verdict": "fail", "outcome": "invalid_output", "failed_checks": []}
    if outcome != "answered":
        results.append(result("lrc.run-outcome", 1, "fail", observed=outcome, expected="an answer", location=f"step {run['steps']}",
                              message={"step_cap": f"the model was still acting after the {run['steps']}-step cap",
                                       "refusal": "the model refused",
                                       "no_answer": "the model gave no answer"}.get(outcome, outcome)))
        return {"results": results, "verdict": "fail", "outcome": outcome, "failed_checks": []}

    checks = spec["grading"]["checks"]
    first_module = modules[checks[0]["check"]]
    if run.get("submitted"):
        answer: Any = run.get("answer")
    else:
        try:
            answer = contract.extract_json(run.get("answer_text"))
        except contract.NoJSON as exc:
            results.append(contract.unparseable(str(exc)))
            return {"results": results, "verdict": "fail", "outcome": "invalid_output", "failed_checks": []}
    normalize = getattr(first_module, "normalize", None)
    if normalize is not None:
        answer = normalize(answer)
    shape = contract.check(answer, spec["output"]["schema"])
    results.append(shape)
    if shape["status"] != "pass":
        return {"results": results, "verdict": "fail", "outcome": "invalid_output", "failed_checks": [],
                "answer": answer}
    workload_results: list[ValidatorResult] = []
    failed_checks: list[dict[str, Any]] = []
    for check in checks:
        fn = _validator_fn(modules[check["check"]], check["validator"])
        produced = _call_validator(fn, answer, answer_key, check.get("params", {}), item)
        if check.get("severity", "error") != "error":
            for r in produced:
                r["severity"] = check["severity"] if r["severity"] == "error" else r["severity"]
        workload_results.extend(produced)
        failing = blocking_failures(produced)
        if failing:
            failed_checks.append({"check": check["validator"], "category": check.get("failure_category"),
                                  "validators": [r["id"] for r in failing]})
    results.extend(workload_results)
    failed = blocking_failures(results)
    if not failed:
        verdict = "pass"
    else:
        passed_blocking = [r for r in workload_results if r["severity"] == "error" and r["status"] == "pass"]
        verdict = "partial" if passed_blocking else "fail"
    return {"results": results, "verdict": verdict, "outcome": "answered", "failed_checks": failed_checks, "answer": answer}
