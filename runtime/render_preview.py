"""What `lrc render` shows: the messages `lrc execute` sends, read from a verified lock.

Two sources, both the runtime's own:
- the locked sample renders (the compiler rendered them from the workload's `sample_item`
  with the same templating settings the runtime uses);
- one generated item: the locked generator is run for item N from the edition's seed and
  the messages are built by `execute.render_messages` itself, so they are byte-identical to
  what a run of that item sends.

The runtime never imports the compiler; the compiler's `lrc render` command imports this
module lazily, like `execute`, and reaches the runtime only through it (the names it needs
from `execute` are re-exported here).
"""

from __future__ import annotations

import hashlib
import importlib
from typing import Any

from lrc.runtime.execute import Aborted, Refused, attaches_files, load_verified, render_messages, resolve_seed
from lrc.runtime.items import ItemError, check_item

__all__ = ["PreviewError", "Refused", "attaches_files", "load_verified", "resolve_seed", "edition_systems",
           "runnable_systems", "sample_messages", "generate_item", "item_messages", "file_facts"]


class PreviewError(Exception):
    """The item cannot be generated or rendered (out of range, schema mismatch, missing file)."""


def edition_systems(plan: dict[str, Any]) -> set[str]:
    return {plan["systems"][ref]["spec"]["id"] for ref in plan["edition"]["spec"]["systems"]}


def runnable_systems(plan: dict[str, Any], workload: dict[str, Any]) -> list[str]:
    """The systems a run of this workload uses in this edition (as `execute` plans them)."""
    return sorted(set(workload["spec"]["systems"]) & edition_systems(plan))


def sample_messages(workload: dict[str, Any], system: str, model: dict[str, Any]) -> list[dict[str, Any]]:
    """The locked sample renders, in the shape `render_messages` gives them.

    A file-capable model gets the `user_file` prompt plus the item's attachments; the sample
    item has no files, so each attachment is a placeholder naming the file (`file_data` null).
    """
    prompts = workload["prompts"][system]
    messages: list[dict[str, Any]] = [{"role": "system", "content": prompts["system"]["sample"]}]
    if not attaches_files(workload, model):
        return messages + [{"role": "user", "content": prompts["user"]["sample"]}]
    parts: list[dict[str, Any]] = [{"type": "text", "text": prompts["user_file"]["sample"]}]
    for attachment in workload["spec"]["input"]["attachments"]:
        parts.append({"type": "file", "file": {"filename": attachment["file"], "file_data": None,
                                               "media_type": attachment["media_type"]}})
    return messages + [{"role": "user", "content": parts}]


def generate_item(plan: dict[str, Any], workload_ref: str, seed: str, index: int):
    """Item `index` (0-based, as in OUT/items/.../item.json) of one workload, checked like `execute` checks it."""
    n = plan["edition"]["spec"]["n_per_cell"]
    if not 0 <= index < n:
        raise PreviewError(f"item {index} is outside this edition's items: 0..{n - 1} (n_per_cell = {n})")
    dataset = plan["workloads"][workload_ref]["spec"]["dataset"]
    module = importlib.import_module(plan["code"][dataset["generator"]]["module"])
    item = module.generate(seed, index, dataset.get("params", {}))
    try:
        check_item(workload_ref, dataset["item_schema"], item)
    except ItemError as exc:
        raise PreviewError(str(exc)) from exc
    return item


def item_messages(workload: dict[str, Any], system: str, item, model: dict[str, Any]) -> list[dict[str, Any]]:
    """Exactly what `execute` sends for this item: `render_messages` itself."""
    try:
        return render_messages(workload, system, item, model)
    except Aborted as exc:
        raise PreviewError(str(exc)) from exc


def file_facts(data: bytes) -> dict[str, Any]:
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
