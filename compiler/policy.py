"""Methodology policies that span several specs, each with its own diagnostic code.

From the seeds: at most two primitives judged (>= 5 of 7 deterministic, seed 001 §1.3);
judged workloads run deterministic sub-checks first and name their rubric (§5.2); an edition
that runs one fixes a priced judge (§5.1) and spot-checks >= 20% of judged runs (§5.3); every
model is priced for every token class its provider bills; a development task never counts
as a test task (seed 000); failure categories exist in the taxonomy, in the right tier, and its rules cover every outcome (failure_rules); an edition runs at least
the standard's n per cell (seed 001 §3); no tool loop exceeds the standard's step cap (§3); a
held-out seed is fresh for every edition (§7).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Iterable

from lrc.compiler import failure_rules
from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.refs import parse_ref
from lrc.runtime.lock.judges import same_family

JUDGED = ("hybrid", "judged")

BILLED_CLASSES: dict[str, tuple[str, ...]] = {
    "openai": ("input", "cached_input", "output"),
    "azure": ("input", "cached_input", "output"),
    "anthropic": ("input", "cached_input", "cache_write", "output"),
    "bedrock": ("input", "cached_input", "cache_write", "output"),
    "gemini": ("input", "cached_input", "output"),
    "vertex_ai": ("input", "cached_input", "output"),
    "lrc": ("input", "output"),
}
"""Token classes each provider can bill. Reasoning tokens are billed as output unless a
`reasoning` price is given; an unknown provider must price at least input and output."""


def check(graph, diags: Diagnostics) -> None:
    standards = list(graph.specs["standard"].values())
    standard = standards[0] if len(standards) == 1 else None
    if standard is not None:
        _deterministic_primitives(graph, standard, diags)
        _step_cap(graph, standard, diags)
    for workload in graph.specs["workload"].values():
        _judged_workload(workload, diags)
    for edition in graph.specs["edition"].values():
        _edition(graph, edition, standard, diags)
    failure_rules.check(graph, diags)  # LRC6108, LRC6116
    _splits(graph, diags)


def _deterministic_primitives(graph, standard, diags: Diagnostics) -> None:
    primitives = [p["id"] for p in standard.data["primitives"]]
    allowed_judged = len(primitives) - standard.data["policy"]["min_deterministic_primitives"]
    judged: dict[str, Any] = {}
    for workload in graph.specs["workload"].values():
        if workload.data["grading"]["kind"] in JUDGED and workload.data["primitive"] in primitives:
            judged.setdefault(workload.data["primitive"], workload)
    if len(judged) > allowed_judged:
        names = sorted(judged)
        last = judged[names[-1]]
        diags.error("LRC6101", f"{len(judged)} primitives are graded by a judge ({', '.join(names)}); at most {allowed_judged} may be",
                    **last.at("grading", "kind"),
                    hint=f"at least {standard.data['policy']['min_deterministic_primitives']} of {len(primitives)} primitives are graded deterministically (seed §1.3)")


def _judged_workload(workload, diags: Diagnostics) -> None:
    grading = workload.data["grading"]
    if grading["kind"] not in JUDGED:
        if "judge" in grading:
            diags.error("LRC6102", "a deterministic workload has no judge", **workload.at("grading", "judge"),
                        hint="set grading.kind to hybrid, or remove the judge block")
        return
    if "judge" not in grading:
        diags.error("LRC6102", f"a {grading['kind']} workload names no judge rubric", **workload.at("grading"),
                    hint="add grading.judge.rubric: <rubric>.v<N>")
    blocking = [c for c in grading["checks"] if c.get("severity", "error") == "error"]
    if not blocking:
        diags.error("LRC6102", f"a {grading['kind']} workload needs at least one blocking deterministic sub-check", **workload.at("grading", "checks"),
                    hint="a deterministic fail is a fail regardless of the judge score (seed §5.2)")


def _step_cap(graph, standard, diags: Diagnostics) -> None:
    """Seed 001 §3: a tool loop runs at most the standard's max_agentic_steps requests.

    Every system that loops over tools (agentic, and the reliability protocol's direct and
    orchestrated systems) is bound by it; single-shot makes one request. A task's own
    execution budget cannot exceed it either."""
    cap = standard.data["policy"]["max_agentic_steps"]
    for system in graph.specs["system"].values():
        steps = system.data.get("max_steps")
        if system.data.get("tools") and isinstance(steps, int) and steps > cap:
            diags.error("LRC6111", f"max_steps {steps} exceeds the standard's step cap of {cap} ({standard.ref})",
                        **system.at("max_steps"), hint=f"set max_steps to at most {cap}: exceeding the cap is a fail, not a longer run")
    for task in graph.specs["task"].values():
        steps = task.data.get("budget", {}).get("max_steps")
        if isinstance(steps, int) and steps > cap:
            diags.error("LRC6111", f"budget max_steps {steps} exceeds the standard's step cap of {cap} ({standard.ref})",
                        **task.at("budget", "max_steps"), hint=f"set budget.max_steps to at most {cap}")


def _edition(graph, edition, standard, diags: Diagnostics) -> None:
    data = edition.data
    pinned = graph.by_ref("standard", data["standard"])
    if pinned is not None and data["n_per_cell"] < pinned.data["policy"]["n_per_cell"]:
        n = pinned.data["policy"]["n_per_cell"]
        diags.error("LRC6110", f"n_per_cell {data['n_per_cell']} is below the standard's n of {n} ({pinned.ref})",
                    **edition.at("n_per_cell"), hint=f"run at least n_per_cell: {n} (one attempt per distinct item, seed §3)")
    judged = []
    for i, ref in enumerate(data["workloads"]):
        workload = graph.by_ref("workload", ref)
        if workload is not None and workload.data["grading"]["kind"] in JUDGED:
            judged.append((i, workload))
    if judged:
        i, workload = judged[0]
        if "judge" not in data:
            diags.error("LRC6103", f"{workload.ref} is judged but the edition fixes no judge", **edition.at("workloads", i),
                        hint="add judge: {model: <provider/model>, sampling: {temperature: 0}} and price it")
        review = data.get("human_review")
        floor = Decimal(standard.data["policy"]["min_human_spot_check_rate"]) if standard else Decimal("0.20")
        if review is None:
            diags.error("LRC6104", f"{workload.ref} is judged but the edition sets no human spot-check rate", **edition.at("workloads", i),
                        hint=f'add human_review: {{spot_check_rate: "{floor}", disagreement_threshold: "0.10"}}')
        elif Decimal(review["spot_check_rate"]) < floor:
            diags.error("LRC6104", f"spot-check rate {review['spot_check_rate']} is below the standard's {floor}",
                        **edition.at("human_review", "spot_check_rate"))
    for model in data["models"]:
        _priced_classes(edition, model["id"], ("models", data["models"].index(model), "id"), diags)
    for role in ("model", "second_model"):
        judge = data.get("judge", {}).get(role)
        if judge is not None:
            _priced_classes(edition, judge, ("judge", role), diags)
    _judge_family(edition, data, diags)


def _priced_classes(edition, model_id: str, where: tuple, diags: Diagnostics) -> None:
    price = edition.data["pricing"].get(model_id)
    if price is None:
        return  # reported as LRC6001 by resolve
    provider = model_id.split("/", 1)[0]
    needed = BILLED_CLASSES.get(provider, ("input", "output"))
    missing = [c for c in needed if c not in price]
    if missing:
        diags.error("LRC6001", f"'{model_id}' has no price for token class(es) {provider} bills: {', '.join(missing)}",
                    **edition.at("pricing", model_id), hint='give every class an explicit price (an explicit "0" if it is free); never a silent $0')


def _splits(graph, diags: Diagnostics) -> None:
    """A dev task is never a test task: not by its own split, nor by another edition's use."""
    dev_anywhere: dict[str, str] = {}
    for edition in graph.specs["edition"].values():
        for ref in edition.data.get("tasks", {}).get("dev", []):
            dev_anywhere.setdefault(ref, edition.ref)
    for edition in graph.specs["edition"].values():
        tasks = edition.data.get("tasks", {})
        for split in ("test", "dev"):
            for i, ref in enumerate(tasks.get(split, [])):
                task = graph.by_ref("task", ref)
                if task is None:
                    continue
                if split == "test" and task.data["split"] == "dev":
                    diags.error("LRC6107", f"{ref} is a development task; it cannot be in a test split", **edition.at("tasks", "test", i),
                                hint="move it to tasks.dev, or use a task that was never used for development")
                elif split == "test" and parse_ref(ref) and ref in dev_anywhere:
                    diags.error("LRC6107", f"{ref} is in the development split of {dev_anywhere[ref]}", **edition.at("tasks", "test", i))
                elif split == "dev" and task.data["split"] == "test":
                    diags.error("LRC6107", f"{ref} is declared a test task but listed for development; once used for development it is a dev task",
                                **edition.at("tasks", "dev", i), hint="set its split to dev (a new version of the task)")


def check_split_history(graph, ledger, diags: Diagnostics) -> None:
    """A task that was ever recorded with split dev stays out of every test split."""
    for edition in graph.specs["edition"].values():
        for i, ref in enumerate(edition.data.get("tasks", {}).get("test", [])):
            parsed = parse_ref(ref)
            if parsed is None:
                continue
            for version in sorted(ledger.history.get(f"task:{parsed[0]}", {})):
                old = ledger.snapshot("task", parsed[0], version)
                if old and old.get("split") == "dev":
                    diags.error("LRC6107", f"{parsed[0]} was a development task at version {version}; no later version can be a test task",
                                **edition.at("tasks", "test", i), hint="use a new task (a new id) for the test split")
                    break


def check_seed_freshness(graph, ledger, diags: Diagnostics) -> None:
    """Seed 001 §7: datasets regenerate each edition from fresh seeds.

    A held-out commitment may not be one another edition (now, or any recorded version of it
    in the ledger) committed to, nor the commitment of a seed another edition publishes: that
    edition's items, and after it closes its seed, are public. An edition's own later versions
    keep their commitment. A public seed reused by another edition is a warning: nothing is
    leaked (its items are public either way), but the two editions measure the same items."""
    from lrc.compiler.seeds import commitment

    def commitments(ident: str, seed: Any) -> Iterable[tuple[str, str, str]]:
        if not isinstance(seed, dict):
            return
        if seed.get("policy") == "held-out" and isinstance(seed.get("commitment"), str):
            yield seed["commitment"], "held-out", ident
        elif seed.get("policy") == "public" and isinstance(seed.get("value"), str):
            yield commitment(seed["value"]), "public", ident

    seen: dict[str, list[tuple[str, str]]] = {}  # commitment -> [(policy, edition ref)]
    for edition in graph.specs["edition"].values():
        for c, pol, _ in commitments(edition.id, edition.data.get("seed")):
            seen.setdefault(c, []).append((pol, edition.ref))
    for key in sorted(ledger.history):
        kind, _, ident = key.partition(":")
        if kind != "edition":
            continue
        for version in sorted(ledger.history[key]):
            old = ledger.snapshot("edition", ident, version)
            for c, pol, _ in commitments(ident, (old or {}).get("seed")):
                ref = f"{ident}.v{version}"
                if (pol, ref) not in seen.setdefault(c, []):
                    seen[c].append((pol, ref))
    for edition in graph.specs["edition"].values():
        for c, pol, _ in commitments(edition.id, edition.data.get("seed")):
            others = [(p, ref) for p, ref in seen.get(c, []) if ref.rsplit(".v", 1)[0] != edition.id
                      and (pol == "held-out" or p == "public")]  # a held-out reuse is reported at the held-out edition
            if not others:
                continue
            where = ", ".join(sorted({ref for _, ref in others}))
            if pol == "held-out":
                public = any(p == "public" for p, _ in others)
                what = "is the commitment of a seed published by" if public else "was already committed to by"
                diags.error("LRC6112", f"the held-out seed commitment {what} {where}", **edition.at("seed", "commitment"),
                            hint="make a fresh seed with `lrc seed new` (seed §7: datasets regenerate each edition from fresh seeds)")
            else:
                diags.warning("LRC6112", f"the public seed '{edition.data['seed']['value']}' is also used by {where}: both editions run the same items",
                              **edition.at("seed", "value"), hint="choose a seed value of this edition's own")


def _judge_family(edition, data: dict[str, Any], diags: Diagnostics) -> None:
    """Seed 001 §5.4: a judge of an evaluated model's family needs a second judge for the
    sensitivity check (the rule of `lrc.runtime.lock.judges.same_family`)."""
    judge = data.get("judge")
    if not judge or judge.get("second_model"):
        return
    kin = same_family({"edition": {"spec": data}})
    if kin:
        diags.error("LRC6113", f"the judge {judge['model']} is of the family of {', '.join(kin)} (under evaluation) and the edition "
                    f"fixes no second judge", **edition.at("judge", "model"),
                    hint="add judge.second_model: <a model of another family>, priced like every model (seed §5.4)")
