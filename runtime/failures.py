"""Failure categories of a graded run, derived by the declared rules its lock freezes.

Seed 000 ("Failure taxonomy", "Run procedure" step 8): every failed or partial run gets one
primary category and any applicable secondary ones, assigned without changing the original
run record. lrc derives them, each time a run is graded, from the failure taxonomy's `rules`
(specs/taxonomies/failure-taxonomy.yaml, frozen in the lock's `taxonomy`; the compiler has
checked every id and its tier, LRC6108/LRC6116), so re-grading gives the same categories and
the journal is never written. A reviewer's own assignment is a separate, appended record
(lrc.runtime.review.categorize); the report shows both.

The facts a rule can match, gathered from the evaluation and the journaled run:

    outcome    the run did not end normally: step_cap, budget_exceeded, refusal, no_answer, invalid_output
    category   the failure_category a failing blocking check declares in its spec
    validator  the result id of a failing blocking validator (a task's validator family)
    trace      tool-error (a tool call came back as an error), unpermitted-tool (a call of a
               tool outside the task's permitted tools)
    judge      invalid (an invalid judgment), below-threshold (judged below the rubric)
    verdict    fail or partial (the catch-all: a wrong answer no other rule names)

Rules are read in order: the first matching rule with a `primary` gives the primary category
and is recorded as `rule`; every matching rule adds its `secondary` categories. A system
spec's `failure_categories` (outcome -> primary category) overrides the primary of a run of
that system that did not end normally. A pass has no category (`failure: null`). Review
burden counts the material issues a reviewer would face: the validator results that did not
pass, by severity (info results are notes, not issues).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

SYSTEM_OUTCOME_KEYS = {"step_cap": "step_cap", "budget_exceeded": "budget", "refusal": "refusal", "no_answer": "no_answer",
                       "invalid_output": "invalid_output"}
"""Run outcome -> the key a system spec's `failure_categories` names it by."""

MATERIAL_SEVERITIES = ("error", "warning")


class NoRules(LookupError):
    """The lock carries no failure taxonomy rules (a lock this code cannot categorize)."""


def rules_of(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    rules = ((plan.get("taxonomy") or {}).get("spec") or {}).get("rules")
    if not rules:
        raise NoRules("the lock carries no failure taxonomy rules: recompile it with this lrc")
    return rules


def taxonomy_ids(plan: Mapping[str, Any]) -> dict[str, str]:
    """Category id -> "primary" or "secondary", from the taxonomy locked in `plan`."""
    spec = (plan.get("taxonomy") or {}).get("spec") or {}
    return {c["id"]: part for part in ("primary", "secondary") for c in spec.get(part, [])}


def review_burden(results: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Material issues by severity: results that failed or could not be decided."""
    counts = {s: 0 for s in MATERIAL_SEVERITIES}
    for r in results:
        if r.get("status") in ("fail", "error") and r.get("severity") in counts:
            counts[r["severity"]] += 1
    return counts


def facts(evaluation: Mapping[str, Any], run: Mapping[str, Any] | None, permitted_tools: Iterable[str] | None = None) -> dict[str, list[str]]:
    """The facts of one graded run, each kind a list in the order found."""
    found: dict[str, list[str]] = {"outcome": [], "category": [], "validator": [], "trace": [], "judge": [], "verdict": []}

    def add(kind: str, value: Any) -> None:
        if isinstance(value, str) and value not in found[kind]:
            found[kind].append(value)

    if evaluation.get("outcome") not in (None, "answered"):
        add("outcome", evaluation["outcome"])
    for check in evaluation.get("failed_checks") or []:
        add("category", check.get("category"))
        for v in check.get("validators") or []:
            add("validator", v)
    allowed = set(permitted_tools) | {"submit"} if permitted_tools is not None else None
    for event in (run or {}).get("events") or []:
        if not isinstance(event, dict) or event.get("event") != "tool_call":
            continue
        if event.get("error"):
            add("trace", "tool-error")
        if allowed is not None and event.get("tool") not in allowed:
            add("trace", "unpermitted-tool")
    judge = evaluation.get("judge")
    if judge == "invalid":
        add("judge", "invalid")
    elif judge in ("judged", "human") and evaluation.get("verdict") == "fail":
        add("judge", "below-threshold")
    add("verdict", evaluation.get("verdict"))
    return found


def _matches(rule: Mapping[str, Any], found: Mapping[str, list[str]]) -> bool:
    (kind, value), = rule["when"].items()
    wanted = value if isinstance(value, list) else [value]
    return any(v in found.get(kind, []) for v in wanted)


def derive(rules: list[Mapping[str, Any]], found: Mapping[str, list[str]], verdict: str,
           system: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """{"primary", "secondary", "rule"} of a failed or partial run; None for a pass."""
    if verdict == "pass":
        return None
    primary: str | None = None
    fired: str | None = None
    secondary: list[str] = []
    for rule in rules:
        if not _matches(rule, found):
            continue
        if primary is None and rule.get("primary"):
            primary, fired = rule["primary"], rule["id"]
        for s in rule.get("secondary", []):
            if s not in secondary:
                secondary.append(s)
    overrides = (system or {}).get("spec", {}).get("failure_categories") or {}
    for outcome in found.get("outcome", []):
        key = SYSTEM_OUTCOME_KEYS.get(outcome)
        if key in overrides:
            primary, fired = overrides[key], f"{system['ref']}/failure_categories/{key}"
            break
    if primary is None:  # the compiler refuses rules that leave a verdict uncovered (LRC6116)
        raise NoRules(f"no failure rule categorizes a run with facts {dict(found)}")
    return {"primary": primary, "secondary": [s for s in secondary if s != primary], "rule": fired}


def categorize(evaluation: dict[str, Any], run: Mapping[str, Any] | None, plan: Mapping[str, Any], *,
               system: Mapping[str, Any] | None = None, permitted_tools: Iterable[str] | None = None) -> dict[str, Any]:
    """`evaluation` with `failure`, `failure_categories` ([primary, *secondary]) and `review_burden`."""
    failure = derive(rules_of(plan), facts(evaluation, run, permitted_tools), evaluation["verdict"], system)
    return {**evaluation, "failure": failure,
            "failure_categories": [failure["primary"], *failure["secondary"]] if failure else [],
            "review_burden": review_burden(evaluation.get("results") or [])}
