"""Errata: check each specs/errata/<id>.yaml against the plan it corrects, and compile it.

An erratum names a published plan by its root digest and its edition ref (`demo.v19`). Errata
are compiled after the editions' locks, apart from them: a new erratum changes no plan digest.
What is checked, each at the value's line and column:

- the edition ref is an edition of the project, at its current version or at one recorded in the
  ledger (LRC3001); at the current version, `plan_digest` must be the root digest of the lock
  compiled now (LRC3022). An older version's plan is no longer compiled: its digest is checked by
  `lrc regrade` against the run folder's lock, its contents here against the ledger's snapshots;
- `regrade_with: <component>.vN`: the component exists in the running code at that version
  (LRC3001), corrects a grader, validator, the output contract or the analysis code the plan
  locked (LRC3023: regrading calls no model, so generators, tools, systems and reference models
  cannot be corrected this way) and is newer than the locked version (LRC3023);
- `exclude`: the workload is one the edition runs (LRC3024); an item is excluded once. Item ids
  come from the seeded generators, which the compiler never runs: `lrc regrade` refuses an item
  the run folder does not hold;
- `price`: the model is one the edition prices (LRC3025), the corrected block differs from the
  locked one (LRC3025), and is a price like any edition's (schema: decimal strings).

The compiled erratum is generated/errata/<id>.json (lrc.runtime.lock.erratum owns the format).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.refs import did_you_mean, parse_ref
from lrc.compiler.resolve import ANALYSIS_COMPONENT, OUTPUT_CONTRACT_COMPONENT, Graph, Spec
from lrc.compiler.versioning import snapshot_path
from lrc.runtime.lock import erratum as erratum_format
from lrc.runtime.lock.codeprint import CodePrint, Component

OUT_DIR = "generated/errata"


def _snapshot(root: Path, kind: str, ident: str, version: int) -> dict[str, Any] | None:
    try:
        return json.loads((root / snapshot_path(kind, ident, version)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _facts(root: Path, graph: Graph, locks: dict[str, dict], ident: str, version: int) -> dict[str, Any] | None:
    """What the plan of edition ident@version locked: its root digest (None: not compiled now),
    workload refs, priced models (id -> price) and the grading code refs (ref -> component id)."""
    current = graph.specs["edition"].get(ident)
    if current is not None and current.version == version and ident in locks:
        lock = locks[ident]
        plan = lock["plan"]
        grading = {ref: e["id"] for ref, e in plan["code"].items() if _is_grading(ref, e["id"], plan)}
        return {"digest": lock["root_digest"], "workloads": sorted(plan["workloads"]),
                "prices": dict(plan["edition"]["spec"]["pricing"]), "grading": grading}
    spec = _snapshot(root, "edition", ident, version)
    if spec is None:
        return None
    grading: dict[str, str] = {}
    analysis = spec.get("analysis")
    if isinstance(analysis, str) and parse_ref(analysis):
        grading[analysis] = parse_ref(analysis)[0]
    for wref in spec.get("workloads", []):
        parsed = parse_ref(wref)
        wl = _snapshot(root, "workload", parsed[0], parsed[1]) if parsed else None
        for check in (wl or {}).get("grading", {}).get("checks", []):
            if parse_ref(check.get("check", "")):
                grading[check["check"]] = parse_ref(check["check"])[0]
    return {"digest": None, "workloads": sorted(spec.get("workloads", [])), "prices": dict(spec.get("pricing", {})),
            "grading": grading}


def _is_grading(ref: str, ident: str, plan: dict[str, Any]) -> bool:
    """Code whose change alters grades but calls no model: the workloads' checks, the output
    contract and the analysis code."""
    if ident in (ANALYSIS_COMPONENT, OUTPUT_CONTRACT_COMPONENT):
        return True
    return any(c["check"] == ref for wl in plan["workloads"].values() for c in wl["spec"]["grading"]["checks"])


def compile_errata(root: Path, graph: Graph, locks: dict[str, dict], components: dict[str, Component],
                   prints: dict[str, CodePrint], diags: Diagnostics) -> dict[str, bytes]:
    """{generated/errata/<id>.json: bytes} for every erratum; diagnostics for each problem."""
    outputs: dict[str, bytes] = {}
    for spec in graph.specs.get("erratum", {}).values():
        art = _one(root, graph, locks, components, prints, spec, diags)
        if art is not None:
            outputs[f"{OUT_DIR}/{spec.id}.json"] = erratum_format.dumps(art)
    return outputs


def _one(root: Path, graph: Graph, locks: dict[str, dict], components: dict[str, Component],
         prints: dict[str, CodePrint], spec: Spec, diags: Diagnostics) -> dict[str, Any] | None:
    data = spec.data
    before = len([d for d in diags.items if d.severity == "error"])
    ident, version = parse_ref(data["edition"])
    edition = graph.specs["edition"].get(ident)
    facts = _facts(root, graph, locks, ident, version) if edition is not None else None
    if facts is None:
        refs = graph.refs("edition")
        guess = did_you_mean(data["edition"], refs)
        known = f"current: {', '.join(refs)}" if refs else "no editions are defined"
        diags.error("LRC3001", f"unknown edition '{data['edition']}' (neither compiled now nor recorded in the ledger)", **spec.at("edition"),
                    hint=f"did you mean {guess}?" if guess else known)
        return None
    if facts["digest"] is not None and facts["digest"] != data["plan_digest"]:
        diags.error("LRC3022", f"plan_digest is not the plan {data['edition']} compiles to",
                    **spec.at("plan_digest"),
                    hint=f"an erratum corrects one published plan: copy the `root_digest` of generated/{ident}/plan.lock, the lock its "
                         "runs were made with (the run folder's summary.json `plan_digest`)")
    code: dict[str, Any] = {}
    excluded: set[tuple[str, str]] = set()
    priced: set[str] = set()
    for i, corr in enumerate(data["corrections"]):
        if "regrade_with" in corr:
            entry = _regrade_with(corr["regrade_with"], facts, components, prints, spec, i, diags)
            if entry is not None:
                code[corr["regrade_with"]] = entry
        elif "exclude" in corr:
            ex = corr["exclude"]
            if ex["workload"] not in facts["workloads"]:
                guess = did_you_mean(ex["workload"], facts["workloads"])
                diags.error("LRC3024", f"{data['edition']} runs no workload '{ex['workload']}'", **spec.at("corrections", i, "exclude", "workload"),
                            hint=f"did you mean {guess}?" if guess else f"its workloads: {', '.join(facts['workloads'])}")
            elif (ex["workload"], ex["item"]) in excluded:
                diags.error("LRC3024", f"item {ex['item']} of {ex['workload']} is excluded twice", **spec.at("corrections", i, "exclude", "item"))
            excluded.add((ex["workload"], ex["item"]))
        else:
            model, block = corr["price"]["model"], corr["price"]["pricing"]
            if model not in facts["prices"]:
                guess = did_you_mean(model, sorted(facts["prices"]))
                diags.error("LRC3025", f"{data['edition']} has no frozen price for '{model}'", **spec.at("corrections", i, "price", "model"),
                            hint=f"did you mean {guess}?" if guess else f"priced: {', '.join(sorted(facts['prices']))}")
            elif model in priced:
                diags.error("LRC3025", f"the price of '{model}' is corrected twice", **spec.at("corrections", i, "price", "model"))
            elif facts["prices"][model] == block:
                diags.error("LRC3025", f"the corrected price of '{model}' equals the locked one: nothing is corrected",
                            **spec.at("corrections", i, "price", "pricing"))
            priced.add(model)
    if len([d for d in diags.items if d.severity == "error"]) > before:
        return None
    body = {"id": spec.id, "version": spec.version, "ref": spec.ref, "spec_digest": spec.digest, "edition": data["edition"],
            "plan_digest": data["plan_digest"], "date": data["date"], "note": data["note"],
            "corrections": json.loads(json.dumps(data["corrections"]))}
    return erratum_format.build(body, code)


def _regrade_with(ref: str, facts: dict[str, Any], components: dict[str, Component], prints: dict[str, CodePrint],
                  spec: Spec, i: int, diags: Diagnostics) -> dict[str, Any] | None:
    where = spec.at("corrections", i, "regrade_with")
    comp = components.get(ref)
    if comp is None:
        guess = did_you_mean(ref, components)
        diags.error("LRC3001", f"unknown code component '{ref}' (the corrected code must be the running code)", **where,
                    hint=f"did you mean {guess}?" if guess else "components declare COMPONENT_ID and COMPONENT_VERSION in runtime/")
        return None
    locked = {r: ident for r, ident in facts["grading"].items() if ident == comp.id}
    if not locked:
        diags.error("LRC3023", f"the plan locks no grading component {comp.id}: only a grader, validator, the output contract "
                               f"or the analysis code the plan locked can be corrected by regrading", **where,
                    hint=f"grading components of the plan: {', '.join(sorted(facts['grading']))}")
        return None
    old = next(iter(locked))
    old_version = parse_ref(old)[1]
    if comp.version <= old_version:
        diags.error("LRC3023", f"{ref} is not newer than the locked {old}", **where,
                    hint=f"fix the code, bump it (`lrc bump {comp.id}`: v{old_version + 1} or later) and regrade with that version")
        return None
    printed = prints[ref]
    return {"id": comp.id, "version": comp.version, "module": comp.module, "fingerprint": printed.fingerprint,
            "files": dict(printed.files), "replaces": old}
