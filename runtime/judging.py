"""The judge step of `lrc execute` and the judged verdict of `lrc report` (seed 001 §5).

Order (§5.2): the run's deterministic grading first (`runtime/grading.py`); only a run whose
every blocking deterministic check passed is shown to the judge, and a deterministic fail is
a fail whatever a judge would say — the judge is not called for it, and that saving is
counted. The judge sees the workload's material (`judge_material` of its grading component)
with the output anonymized (`judge.anonymize`), under the rubric's text verbatim
(`judge.protocol`); its call is journaled like any call (`{"type": "judge"}`), so a killed
execute resumes without paying a judge call twice.

The verdict of a judged run (`judged`) is the deterministic verdict when that is not a pass;
otherwise the workload's `judge_results` on the judgment — a human's judgment from a
regraded cell (`lrc review`) in place of the judge's when there is one. A run whose judge
step has not run can never be a pass: it is held out as incomplete (exit 3) until a resume
judges it. An unparseable or out-of-range reply is an *invalid judgment*: a fail, counted.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from decimal import Decimal
from types import ModuleType
from typing import Any, Mapping

from lrc.runtime.grading import grade
from lrc.runtime.lock import judges as judge_models
from lrc.runtime.judge import protocol
from lrc.runtime.judge.anonymize import Anonymizer, anonymizer
from lrc.runtime.lock.canonical import digest

#: The least share of a workload's judged runs the second judge grades (seed §5.4: "a sample";
#: the issue fixes at least 20%). The edition's human spot-check rate applies when higher.
MIN_SECOND_SHARE = Decimal("0.20")


def judge_module(workload: Mapping[str, Any], modules: Mapping[str, ModuleType]) -> ModuleType:
    """The grading component that speaks for the judge step (`judge_material`, `judge_results`)."""
    for check in workload["spec"]["grading"]["checks"]:
        module = modules[check["check"]]
        if hasattr(module, "judge_material") and hasattr(module, "judge_results"):
            return module
    raise LookupError(f"{workload['ref']}: no grading component of this {workload['spec']['grading']['kind']} workload "
                      f"provides judge_material and judge_results")


def rubric_of(plan: Mapping[str, Any], workload: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    ref = workload["spec"]["grading"]["judge"]["rubric"]
    return ref, plan["rubrics"][ref]["spec"]


@dataclass(frozen=True)
class Request:
    """One judge call, as it is sent and journaled."""

    role: str
    model: dict[str, Any]
    rubric: str
    answer_format: dict[str, Any]
    material: dict[str, Any]
    messages: list[dict[str, Any]]
    digest: str


class Judging:
    """The judge step for one plan: which runs it applies to, what the judge is shown."""

    def __init__(self, plan: Mapping[str, Any], modules: Mapping[str, ModuleType], items: Mapping[str, list], seed: str):
        self.plan = plan
        self.modules = modules
        self.items = items
        self.seed = seed
        self.workloads = set(judge_models.judged_workloads(plan))
        self.judges = judge_models.judges(plan)
        self.anonymize: Anonymizer = anonymizer(sorted(judge_models.callable_models(plan)))

    def applies(self, workload_ref: str) -> bool:
        return workload_ref in self.workloads

    def material(self, spec: Any, run: Mapping[str, Any]) -> dict[str, Any] | None:
        """What the judge is shown for this run, or None when the deterministic checks did not
        all pass (the judge is then not called: a deterministic fail is a fail)."""
        workload = self.plan["workloads"][spec.workload]
        item = self.items[spec.workload][spec.item_index]
        evaluation = grade(workload, dict(run), item.answer_key, self.modules, item)
        if evaluation["verdict"] != "pass":
            return None
        raw = judge_module(workload, self.modules).judge_material(evaluation["answer"], item.answer_key, item)
        return {"output": self.anonymize(str(raw.get("output", ""))), "source": str(raw.get("source", "")),
                "checks": [{"id": str(c["id"]), "text": str(c["text"])} for c in raw.get("checks") or []]}

    def request(self, role: str, spec: Any, material: dict[str, Any]) -> Request:
        workload = self.plan["workloads"][spec.workload]
        ref, rubric = rubric_of(self.plan, workload)
        model = self.judges[role]
        messages = protocol.messages(rubric, material)
        request = digest("judge-request", {"model": model["id"], "sampling": model.get("sampling", {}), "messages": messages,
                                           "run": spec.key, "role": role})
        return Request(role, model, ref, rubric["answer_format"], material, messages, request)

    def second_sample(self, journal: Any, runs: list) -> list:
        """The runs the second judge grades (§5.4): when a scored model is of the judge's
        family, per judged workload, the first ceil(share x judged runs) of its judged runs in
        an order drawn from the edition's seed (a digest per run key: independent of the
        journal's order and of which runs were made first)."""
        if "second" not in self.judges or not judge_models.same_family(self.plan):
            return []
        review = self.plan["edition"]["spec"].get("human_review") or {}
        share = max(MIN_SECOND_SHARE, Decimal(review.get("spot_check_rate", "0")))
        chosen = []
        for workload in sorted(self.workloads):
            judged = [r for r in runs if r.workload == workload and (r.key, "primary") in journal.judges]
            judged.sort(key=lambda r: hashlib.sha256(f"{self.seed}\0second-judge\0{r.key}".encode()).hexdigest())
            chosen.extend(judged[:math.ceil(share * len(judged))])
        return chosen


def judge_record(request: Request, run_key: str, res: Any, call_record: Mapping[str, Any]) -> dict[str, Any]:
    """The journal record of a judge call (`call_record` holds the fields every call records)."""
    if res.invalid:
        judgment, invalid = None, f"the judge's reply could not be read: {res.invalid}"
    elif res.refusal:
        judgment, invalid = None, "the judge refused"
    else:
        judgment, invalid = protocol.read_reply(res.message, {"answer_format": request.answer_format}, request.material["checks"])
    return {"type": "judge", "run": run_key, "role": request.role, "model": request.model["id"], "rubric": request.rubric,
            "request": request.digest, "material": request.material, "judgment": judgment, "invalid_judgment": invalid,
            **{k: v for k, v in call_record.items() if k not in ("type", "run", "step", "request")}}


# -- the verdict of a judged run (lrc report) ------------------------------------------------

def recorded_judge_problem(plan: Mapping[str, Any], journal) -> str | None:
    """Why a `judge` record (or a judge's exclusion) in the journal could not have been written by
    this plan's judge step (None: every one could): a role the plan gives no judge, or another
    model than the plan's judge of that role. Such a record was priced at a price the plan does not freeze (an
    internal error) or would have stood for the plan's judgment."""
    locked = judge_models.judges(plan)
    for (run, role), rec in sorted(journal.judges.items()):
        if role not in locked:
            return f"the judge record of run {run!r} has role {role[:40]!r}; the plan's judges are {', '.join(sorted(locked)) or 'none'}"
        if rec.get("model") != locked[role]["id"]:
            return (f"the {role} judge record of run {run!r} is of model {str(rec.get('model'))[:80]!r}, the plan's {role} "
                    f"judge is {locked[role]['id']!r}")
    # A judge call that ran out of retries is journaled as an exclusion naming its role; what its
    # failed attempts were billed is priced at that judge's frozen price -- a role the plan has no
    # judge for would be spend with no price (it was left out of every cost).
    for run, made in sorted(getattr(journal, "exhaustions", {}).items()):
        for rec in made:
            role = rec.get("judge")
            if role and role not in locked:
                return (f"the judge exclusion of run {run!r} names role {str(role)[:40]!r}; the plan's judges are "
                        f"{', '.join(sorted(locked)) or 'none'}")
    return None


def judged(evaluation: dict[str, Any], workload: Mapping[str, Any], plan: Mapping[str, Any], modules: Mapping[str, ModuleType],
           item: Any, record: Mapping[str, Any] | None, human: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The evaluation of a run of a judged workload: `evaluation` (deterministic, from `grade`)
    completed by the judge's `record` (or a regrade's `human` judgment, which replaces it).

    Adds `judge`: "skipped" (a deterministic fail: not called), "missing" (not judged yet:
    never a pass, the run is held out), "invalid" (an invalid judgment: a fail), "judged" or
    "human"."""
    if evaluation["verdict"] != "pass":
        return {**evaluation, "judge": "skipped"}
    results = list(evaluation["results"])
    if human is None and record is None:
        results.append(protocol.missing_result())
        return {**evaluation, "results": results, "verdict": "fail", "judge": "missing"}
    ref, rubric = rubric_of(plan, workload)
    params = dict(workload["spec"]["grading"]["judge"].get("params") or {})
    module = judge_module(workload, modules)
    if human is not None:
        produced = module.judge_results(dict(human), item.answer_key, rubric, params)
        source = "human"
    else:
        checks = (record.get("material") or {}).get("checks") or []
        judgment, invalid = protocol.check_judgment(record.get("judgment"), rubric, checks) if record.get("judgment") is not None \
            else (None, record.get("invalid_judgment") or "no judgment")
        if judgment is None:
            results.append(protocol.invalid_result(str(invalid)))
            return {**evaluation, "results": results, "verdict": "fail", "judge": "invalid"}
        produced = module.judge_results(judgment, item.answer_key, rubric, params)
        source = "judged"
    results.extend(produced)
    verdict = protocol.verdict(results)
    # Its failure categories (judge invalid / below threshold) are derived by lrc.runtime.failures.
    return {**evaluation, "results": results, "verdict": verdict, "judge": source}


def judge_verdict(record: Mapping[str, Any] | None, workload: Mapping[str, Any], plan: Mapping[str, Any],
                  modules: Mapping[str, ModuleType], item: Any) -> str | None:
    """pass / fail of one judge record alone (None when it holds no valid judgment): the
    agreement of two judges and of judge and human is measured on this."""
    if record is None or record.get("judgment") is None:
        return None
    ref, rubric = rubric_of(plan, workload)
    checks = (record.get("material") or {}).get("checks") or []
    judgment, _ = protocol.check_judgment(record["judgment"], rubric, checks)
    if judgment is None:
        return None
    params = dict(workload["spec"]["grading"]["judge"].get("params") or {})
    return protocol.verdict(judge_module(workload, modules).judge_results(judgment, item.answer_key, rubric, params))
