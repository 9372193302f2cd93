"""Reliability-protocol tasks in plan.lock: the entries, the split manifest, the task hashes.

Why this module: run procedure step 1 of seed 000 is "freeze the task set and publish its
hashes", and the lock is that publication. The compiler writes each task through
`task_entry` and `split_section`, and the runtime reads them back with `tasks`,
`split_manifest` and `verify`, so both halves compute a task's hash the same way and an
auditor can recompute it from the lock alone.

A task's hash covers what defines it: its spec digest (which covers the normalized spec,
checked-in artifacts by their sha256), every input artifact's origin (a checked-in file's
sha256 and size; a generated one's generator and that code's fingerprint) and the
fingerprint of the validators that grade it. It leaves out where the spec lives and the
inlined bytes (covered by their sha256), so moving a task's folder does not change it.

Lock layout (plan keys):

    tasks/<ref>: {ref, digest, source, spec, split, inputs: [...], validators: {ref, fingerprint}, task_hash}
      inputs[i], generated:  {name, media_type, sanitization, origin: "generated", generator, fingerprint}
      inputs[i], checked-in: {name, media_type, sanitization, origin: "checked-in", source, sha256, size, content_base64}
    splits: {tasks: {<ref>: "dev" | "test"}, test_hashes: {<ref>: task_hash}}
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from lrc.runtime.lock.canonical import digest

ORIGINS = ("generated", "checked-in")
HASHED_INPUT_KEYS = ("name", "media_type", "origin", "generator", "fingerprint", "sha256", "size")


def file_sha256(data: bytes) -> str:
    """The plain sha256 of a file's bytes, as `sha256sum` prints it (prefixed): anyone can check it."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def task_hash(entry: dict[str, Any]) -> str:
    """The published hash of one task entry (see the module docstring for what it covers)."""
    body = {
        "ref": entry["ref"],
        "digest": entry["digest"],
        "split": entry["split"],
        "inputs": [{k: i[k] for k in HASHED_INPUT_KEYS if k in i} for i in entry["inputs"]],
        "validators": entry["validators"],
    }
    return digest("task", body)


def task_entry(ref: str, spec_digest: str, source: str, spec: dict[str, Any], inputs: list[dict[str, Any]],
               validators: dict[str, str]) -> dict[str, Any]:
    """A task's lock entry, with its hash."""
    entry = {"ref": ref, "digest": spec_digest, "source": source, "spec": spec, "split": spec["split"],
             "inputs": inputs, "validators": validators}
    entry["task_hash"] = task_hash(entry)
    return entry


def split_section(entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The edition's split manifest: every task's split, and the hash of each test task."""
    return {
        "tasks": {ref: e["split"] for ref, e in sorted(entries.items())},
        "test_hashes": {ref: e["task_hash"] for ref, e in sorted(entries.items()) if e["split"] == "test"},
    }


def tasks(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The task entries of a plan (empty when the edition has none)."""
    return plan.get("tasks", {})


def split_manifest(plan: dict[str, Any]) -> dict[str, Any]:
    return plan.get("splits", {"tasks": {}, "test_hashes": {}})


def input_bytes(item: dict[str, Any]) -> bytes:
    """The bytes of a checked-in input artifact, checked against its sha256 and size."""
    if item.get("origin") != "checked-in":
        raise ValueError(f"{item.get('name')} is generated from the seed, not inlined in the lock")
    data = base64.b64decode(item["content_base64"], validate=True)
    if len(data) != item["size"] or file_sha256(data) != item["sha256"]:
        raise ValueError(f"{item['name']}: the inlined bytes do not match their sha256")
    return data


def verify(plan: dict[str, Any]) -> list[str]:
    """Problems with the plan's tasks: a hash that does not recompute, inlined bytes that do not
    match, a split manifest that disagrees with the entries. Empty when all is well."""
    problems: list[str] = []
    entries = tasks(plan)
    for ref, entry in sorted(entries.items()):
        if task_hash(entry) != entry.get("task_hash"):
            problems.append(f"task {ref}: its hash does not recompute")
        for item in entry["inputs"]:
            if item.get("origin") == "checked-in":
                try:
                    input_bytes(item)
                except (ValueError, KeyError) as exc:
                    problems.append(f"task {ref}: {exc}")
    if entries and split_manifest(plan) != split_section(entries):
        problems.append("the split manifest disagrees with the task entries")
    return problems
