"""Failure categories at compile time (seed 000, "Failure taxonomy", "Run procedure" step 8).

Why here: the runtime labels every failed or partial run with taxonomy ids derived by the
taxonomy's declared `rules` (lrc.runtime.failures), so a label that is not an id, or an id in
the wrong tier, must be refused before anything runs, never discovered in a report. Checked:

- every category a workload check, system or task names is an id of the taxonomy (LRC6108);
- a system's `failure_categories` (outcome -> category) and a rule's `primary` are primary
  ids, a rule's `secondary` entries secondary ids (LRC6116);
- the rules cover every run outcome and the verdicts fail and partial with a primary
  category, rule ids are unique, and every category a check of the edition declares is
  matched by a rule that gives a primary category (LRC6116): nothing falls through unlabelled.

`taxonomy_for` names the taxonomy an edition's lock carries: the one it pins, else the
project's only taxonomy (an edition that pins none still has its runs categorized, by rules
frozen in its lock).
"""

from __future__ import annotations

from typing import Any, Iterable

from lrc.compiler.diagnostics import Diagnostics

OUTCOMES = ("step_cap", "budget_exceeded", "refusal", "no_answer", "invalid_output")
"""The run outcomes of a run that did not end normally (schemas/taxonomy.schema.json)."""


def tiers(taxonomy) -> dict[str, str]:
    """Category id -> "primary" or "secondary"."""
    return {c["id"]: part for part in ("primary", "secondary") for c in taxonomy.data[part]}


def taxonomy_for(graph, edition):
    """The taxonomy an edition's runs are categorized by: the pinned one, else the only one."""
    ref = edition.data.get("taxonomy")
    if ref:
        return graph.by_ref("taxonomy", ref)
    found = list(graph.specs.get("taxonomy", {}).values())
    return found[0] if len(found) == 1 else None


def _values(value: Any) -> list:
    return list(value) if isinstance(value, list) else [value]


def category_uses(graph) -> Iterable[tuple[Any, tuple, str, str]]:
    """(spec, where, category, tier it must have: "any" or "primary")."""
    for workload in graph.specs["workload"].values():
        for i, c in enumerate(workload.data["grading"]["checks"]):
            if "failure_category" in c:
                yield workload, ("grading", "checks", i, "failure_category"), c["failure_category"], "any"
    for system in graph.specs["system"].values():
        for key, value in system.data.get("failure_categories", {}).items():
            yield system, ("failure_categories", key), value, "primary"
    for task in graph.specs["task"].values():
        for i, c in enumerate(task.data["checks"]):
            yield task, ("checks", i, "failure_category"), c["failure_category"], "any"


def _unknown(diags: Diagnostics, spec, where: tuple, value: str, known: set[str], suffix: str = "") -> None:
    from lrc.compiler.refs import did_you_mean

    guess = did_you_mean(value, known)
    diags.error("LRC6108", f"unknown failure category '{value}'{suffix}", **spec.at(*where),
                hint=f"did you mean '{guess}'?" if guess else f"categories: {', '.join(sorted(known))}")


def _tier(diags: Diagnostics, spec, where: tuple, value: str, want: str, place: str, ids: dict[str, str]) -> None:
    choices = sorted(i for i, t in ids.items() if t == want)
    diags.error("LRC6116", f"'{value}' is a {ids[value]} failure category; {place} takes a {want} one", **spec.at(*where),
                hint=f"{want} categories: {', '.join(choices)}")


def _rules(taxonomy, diags: Diagnostics) -> None:
    ids = tiers(taxonomy)
    rules = taxonomy.data.get("rules")
    if rules is None:
        diags.error("LRC6116", f"{taxonomy.ref} declares no rules: the runtime could not categorize a failed run",
                    **taxonomy.at(), hint="add `rules:` mapping each run outcome, check category and verdict to a category")
        return
    seen: set[str] = set()
    covered: dict[str, set] = {}
    for i, rule in enumerate(rules):
        if rule["id"] in seen:
            diags.error("LRC6116", f"rule id '{rule['id']}' is used twice", **taxonomy.at("rules", i, "id"))
        seen.add(rule["id"])
        if "primary" in rule:
            if rule["primary"] not in ids:
                _unknown(diags, taxonomy, ("rules", i, "primary"), rule["primary"], set(ids))
            elif ids[rule["primary"]] != "primary":
                _tier(diags, taxonomy, ("rules", i, "primary"), rule["primary"], "primary", "a rule's primary", ids)
        for j, value in enumerate(rule.get("secondary", [])):
            if value not in ids:
                _unknown(diags, taxonomy, ("rules", i, "secondary", j), value, set(ids))
            elif ids[value] != "secondary":
                _tier(diags, taxonomy, ("rules", i, "secondary", j), value, "secondary", "a rule's secondary list", ids)
        (fact, value), = rule["when"].items()
        if fact == "category":
            for j, v in enumerate(_values(value)):
                if v not in ids:
                    where = ("rules", i, "when", "category") + ((j,) if isinstance(value, list) else ())
                    _unknown(diags, taxonomy, where, v, set(ids))
        if "primary" in rule:
            covered.setdefault(fact, set()).update(_values(value))
    for fact, needed in (("outcome", OUTCOMES), ("verdict", ("fail", "partial"))):
        missing = [v for v in needed if v not in covered.get(fact, set())]
        if missing:
            diags.error("LRC6116", f"no rule of {taxonomy.ref} gives a primary category to {fact} {', '.join(missing)}",
                        **taxonomy.at("rules"), hint=f"add a rule `when: {{{fact}: {missing[0]}}}` with a primary category")


def check(graph, diags: Diagnostics) -> None:
    taxonomies = list(graph.specs["taxonomy"].values())
    if not taxonomies:
        return
    ids: dict[str, str] = {}
    for t in taxonomies:
        ids.update(tiers(t))
        _rules(t, diags)
    for spec, where, value, want in category_uses(graph):
        if value not in ids:
            _unknown(diags, spec, where, value, set(ids))
        elif want == "primary" and ids[value] != "primary":
            _tier(diags, spec, where, value, "primary", "a system's outcome category", ids)
    for edition in graph.specs["edition"].values():
        taxonomy = taxonomy_for(graph, edition)
        if taxonomy is None:
            continue
        own = tiers(taxonomy)
        ruled = {v for r in taxonomy.data.get("rules", []) if "primary" in r
                 for fact, value in r["when"].items() if fact == "category" for v in _values(value)}
        tasks = edition.data.get("tasks", {})
        task_refs = set(tasks.get("test", [])) | set(tasks.get("dev", []))
        for spec, where, value, _want in category_uses(graph):
            if not ((spec.kind == "workload" and spec.ref in edition.data["workloads"])
                    or (spec.kind == "system" and spec.ref in edition.data["systems"])
                    or (spec.kind == "task" and spec.ref in task_refs)):
                continue
            if value in ids and value not in own:
                diags.error("LRC6108", f"failure category '{value}' is not in {taxonomy.ref}, the taxonomy this edition uses",
                            **spec.at(*where))
            elif value in own and spec.kind != "system" and "rules" in taxonomy.data and value not in ruled:
                diags.error("LRC6116", f"no rule of {taxonomy.ref} categorizes a failing check declared '{value}'",
                            **spec.at(*where), hint=f"add a rule `when: {{category: {value}}}` with a primary category to {taxonomy.ref}")
