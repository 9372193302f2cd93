"""Assemble one edition's plan: everything the runtime needs, self-contained.

The plan holds resolved specs with their digests, prompt templates with digests and sample
renders, tool definitions in the OpenAI function format litellm speaks, the code
fingerprints the runtime must match, models with sampling parameters and frozen prices,
the seed commitment (never a held-out seed), the templating settings, and the edition's
reliability tasks with their inputs, task hashes and split manifest (lrc.runtime.lock.tasks).
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from lrc.compiler import failure_rules
from lrc.compiler.refs import make_ref
from lrc.compiler.resolve import (
    OUTPUT_CONTRACT_COMPONENT,
    JUDGE_COMPONENT,
    REFERENCE_JUDGE,
    REFERENCE_MODELS,
    REFERENCE_MODELS_COMPONENT,
    Graph,
    Spec,
)
from lrc.compiler.tasks import input_name, read_checked_in
from lrc.runtime.lock import tasks as lock_tasks
from lrc.runtime.lock.canonical import digest, digest_bytes, digest_text
from lrc.runtime.lock.codeprint import CodePrint, Component
from lrc.runtime.lock.templating import SETTINGS


def spec_digest(spec: Spec) -> str:
    return spec.digest  # the digest of spec.normalized, computed once (or kept by the compile cache)


def _tool_defs(workload: Spec, system_key: str) -> list[dict[str, Any]]:
    use = workload.normalized["systems"][system_key]
    tools = use.get("tools")
    if not tools:
        return []
    out = []
    for tool in tools["definitions"]:
        if tool.get("parameters_from") == "output":
            params = copy.deepcopy(workload.normalized["output"]["schema"])
            for key in ("$schema", "$id", "title"):
                params.pop(key, None)
        else:
            params = tool["parameters"]
        out.append({"type": "function", "function": {"name": tool["name"], "description": tool["description"], "parameters": params}})
    return out


def _component_entry(comp: Component, printed: CodePrint) -> dict[str, Any]:
    return {"id": comp.id, "version": comp.version, "module": comp.module, "fingerprint": printed.fingerprint, "files": printed.files}


def _resolved(spec: Spec) -> dict[str, Any]:
    return {"ref": spec.ref, "digest": spec_digest(spec), "source": spec.doc.path, "spec": spec.normalized}


def _task(task: Spec, prints: dict[str, CodePrint]) -> dict[str, Any]:
    """A task's lock entry (lrc.runtime.lock.tasks): inputs with their origin, the validators'
    fingerprint, and the task hash the edition publishes (seed 000, run procedure step 1)."""
    spec = task.normalized
    inputs = []
    for i, artifact in enumerate(spec["input_artifacts"]):
        entry = {"name": input_name(artifact), "media_type": artifact["media_type"], "sanitization": artifact["sanitization"]}
        if "generator" in artifact:
            entry.update(origin="generated", generator=artifact["generator"], fingerprint=prints[artifact["generator"]].fingerprint)
        else:
            raw = read_checked_in(task, i)
            entry.update(origin="checked-in", source=task.doc.path.rsplit("/", 1)[0] + "/" + artifact["file"],
                         sha256=artifact["sha256"], size=artifact["size"], content_base64=base64.b64encode(raw).decode("ascii"))
        inputs.append(entry)
    validators = {"ref": spec["validators"], "fingerprint": prints[spec["validators"]].fingerprint}
    return lock_tasks.task_entry(task.ref, spec_digest(task), task.doc.path, spec, inputs, validators)


TASK_SYSTEM_MODES = ("direct", "orchestrated")


def release_manifest(plan: dict[str, Any]) -> dict[str, Any]:
    """Seed 000's release manifest, per system that runs the edition's tasks: the models (id,
    API version, sampling), the prompts and tool schemas by digest, the retry policy, and the
    validators' fingerprints (the seed's "validator commit"). Everything in it is also in the
    plan; the manifest is the one place a reader checks that the direct and orchestrated runs
    were frozen alike (same models, same sampling, same validators) and how they differ.

    The task prompt and the artifact toolbox's tool schemas are code (runtime/tasks/prompt.py,
    runtime/artifacts/toolschemas.py), frozen by the fingerprint of the component that runs
    them; each run's manifest.json records the digest of the exact messages and schemas it was
    sent. The orchestrated stages' templates and the harness's own tools are spec data, by digest here."""
    edition = plan["edition"]["spec"]
    tasks = plan.get("tasks") or {}
    modes = {ref: plan["systems"][ref]["spec"]["mode"] for ref in edition["systems"]}
    task_modes = TASK_SYSTEM_MODES if any(m in TASK_SYSTEM_MODES for m in modes.values()) else ("agentic",)
    analysis = edition["analysis"]
    validators = {ref: {"validators": e["validators"]["ref"], "fingerprint": e["validators"]["fingerprint"]} for ref, e in sorted(tasks.items())}
    models = {mid: {"id": mid, "api_version": m.get("api_version", "not declared: each run records the model the provider answered as"),
                    "provider": m["provider"], "sampling": m.get("sampling", {}), "role": m["role"]}
              for mid, m in sorted(plan["models"].items())}
    out = {}
    for ref, mode in sorted(modes.items()):
        if not tasks or mode not in task_modes:
            continue
        spec = plan["systems"][ref]["spec"]
        impl = spec["implementation"]
        entry = {
            "system": {"ref": ref, "digest": plan["systems"][ref]["digest"], "mode": mode},
            "implementation": {"ref": impl, "fingerprint": plan["code"][impl]["fingerprint"]},
            "models": models,
            "prompts": {"task": {"code": analysis, "fingerprint": plan["code"][analysis]["fingerprint"],
                                 "source": "runtime/tasks/prompt.py"},
                        **{f"stage:{stage}": digest_text("prompt-template", e["prompt"])
                           for stage, e in sorted((spec.get("workflow") or {}).items())}},
            "tool_schemas": {"toolbox": {"code": analysis, "fingerprint": plan["code"][analysis]["fingerprint"],
                                         "source": "runtime/artifacts/toolschemas.py",
                                         "offered": "each task's permitted_tools and submit"},
                             **{name: digest("tool-schema", {"name": name, **t})
                                for name, t in sorted((spec.get("stage_tools") or {}).items())}},
            "retry_policy": {"retry_model_failures": spec.get("retry_model_failures", False),
                             **({"repairs_max": spec["retries"]["max"], "on": spec["retries"]["on"]} if "retries" in spec
                                else {"repairs_max": 0, "on": []})},
            "step_cap": spec.get("max_steps", 1),
            "request_timeout_seconds": spec.get("request_timeout_seconds", 300),
            "validators": validators,
        }
        out[ref] = entry
    return {"systems": out, "tasks": sorted(tasks)} if out else {}


def seed_section(edition: Spec) -> dict[str, Any]:
    seed = edition.normalized["seed"]
    if seed["policy"] == "public":
        return {"policy": "public", "value": seed["value"], "commitment": digest_bytes("seed", seed["value"].encode("utf-8"))}
    return {"policy": "held-out", "commitment": seed["commitment"]}


def build_plan(edition: Spec, graph: Graph, prompts: dict[str, dict], prints: dict[str, CodePrint]) -> dict[str, Any]:
    data = edition.normalized
    standard = graph.by_ref("standard", data["standard"])
    systems = {ref: graph.by_ref("system", ref) for ref in data["systems"]}
    workloads = {ref: graph.by_ref("workload", ref) for ref in data["workloads"]}
    code_refs: set[str] = {make_ref(OUTPUT_CONTRACT_COMPONENT, graph.components_latest(OUTPUT_CONTRACT_COMPONENT))}
    code_refs.add(data["analysis"])  # the code behind the published figures (resolve.ANALYSIS_COMPONENT)
    for system in systems.values():
        code_refs.add(system.data["implementation"])
    judge = data.get("judge") or {}
    uses_reference_models = any(m["id"] in REFERENCE_MODELS for m in data["models"]) or \
        REFERENCE_JUDGE in (judge.get("model"), judge.get("second_model"))
    if any(wl.data["grading"]["kind"] in ("hybrid", "judged") for wl in workloads.values()):
        # The judge's framing and the reading of its replies decide judged pass rates: pinned like a validator.
        code_refs.add(make_ref(JUDGE_COMPONENT, graph.components_latest(JUDGE_COMPONENT)))
    if uses_reference_models:
        code_refs.add(make_ref(REFERENCE_MODELS_COMPONENT, graph.components_latest(REFERENCE_MODELS_COMPONENT)))
    plan_workloads: dict[str, Any] = {}
    for ref, wl in workloads.items():
        code_refs.add(wl.data["dataset"]["generator"])
        code_refs.update(c["check"] for c in wl.data["grading"]["checks"])
        if uses_reference_models:
            code_refs.add(wl.data["reference"]["implementation"])
        tools: dict[str, list] = {}
        terminal: dict[str, list[str]] = {}
        for key, use in sorted(wl.data["systems"].items()):
            if use.get("tools"):
                code_refs.add(use["tools"]["implementation"])
                tools[key] = _tool_defs(wl, key)
                terminal[key] = sorted(t["name"] for t in use["tools"]["definitions"] if t.get("terminal"))
        plan_workloads[ref] = {
            "ref": ref,
            "digest": spec_digest(wl),
            "source": wl.doc.path,
            "spec": wl.normalized,
            "prompts": prompts[ref],
            "tools": tools,
            "terminal_tools": terminal,
        }
    models = {}
    for model in data["models"]:
        provider = model["id"].split("/", 1)[0]
        entry = {k: v for k, v in model.items()}
        entry["provider"] = provider
        entry["reference"] = model["id"] in REFERENCE_MODELS
        entry["price"] = data["pricing"][model["id"]]
        models[model["id"]] = entry
    extra: dict[str, Any] = {}
    rubric_refs = {wl.data["grading"]["judge"]["rubric"] for wl in workloads.values() if "judge" in wl.data["grading"]}
    task_refs = sorted(set(data.get("tasks", {}).get("test", [])) | set(data.get("tasks", {}).get("dev", [])))
    tasks = {ref: graph.by_ref("task", ref) for ref in task_refs}
    rubric_refs |= {t.data["review_rubric"] for t in tasks.values()}
    for task in tasks.values():
        code_refs.add(task.data["validators"])
        code_refs.update(a["generator"] for a in task.data["input_artifacts"] if "generator" in a)
    if rubric_refs:
        extra["rubrics"] = {ref: _resolved(graph.by_ref("rubric", ref)) for ref in sorted(rubric_refs)}
    if tasks:
        extra["tasks"] = {ref: _task(t, prints) for ref, t in sorted(tasks.items())}
        extra["splits"] = lock_tasks.split_section(extra["tasks"])
    taxonomy = failure_rules.taxonomy_for(graph, edition)
    if taxonomy is not None:  # its rules categorize every failed run (lrc.runtime.failures)
        extra["taxonomy"] = _resolved(taxonomy)
    plan = {
        **extra,
        "edition": {"ref": edition.ref, "digest": spec_digest(edition), "source": edition.doc.path, "spec": data},
        "standard": {"ref": standard.ref, "digest": spec_digest(standard), "source": standard.doc.path, "spec": standard.normalized},
        "systems": {ref: {"ref": ref, "digest": spec_digest(s), "source": s.doc.path, "spec": s.normalized} for ref, s in sorted(systems.items())},
        "workloads": dict(sorted(plan_workloads.items())),
        "code": {ref: _component_entry(graph.components[ref], prints[ref]) for ref in sorted(code_refs)},
        "models": dict(sorted(models.items())),
        "seed": seed_section(edition),
        "templating": SETTINGS,
    }
    manifest = release_manifest(plan)
    if manifest:
        plan["release_manifest"] = manifest
    return plan
