"""Step 2 of `lrc execute`: generate every workload's and task's items from the seed, byte for byte.

Items are written under OUT/items/<workload>/<item>/: `item.json` (what prompts may show)
and, beside it, `answer_key.json` (what grading uses; never rendered into a prompt); item
files (PDFs, databases, documents) are stored once by content and listed in `files.json`. Each
item is checked against the workload's locked item schema. An existing item file that
differs from what the generator produces now is refused, never overwritten. The item schema
comes from a spec, so it is evaluated by the linear-time engine (`lrc.runtime.lock.safe_regex`).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from pathlib import Path
from typing import Any

from lrc.runtime import filebytes
from lrc.runtime.lock import safe_regex
from lrc.runtime.workloads.base import Item


class ItemError(Exception):
    pass


def canonical_file(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def item_validator(ref: str, item_schema: Any) -> Any:
    """The linear-time engine's validator for a workload's locked item schema."""
    try:
        return safe_regex.validator(item_schema)
    except safe_regex.SchemaUnusable as exc:
        raise ItemError(f"{ref}: the locked item_schema cannot be used: {exc}") from exc


def check_item(ref: str, item_schema: Any, item: Item, built: Any = None) -> None:
    """ItemError unless `item.context` follows the locked item schema."""
    errors = safe_regex.violations(item_schema, item.context, built=built if built is not None else item_validator(ref, item_schema))
    if errors:
        raise ItemError(f"{ref}: generated item {item.item_id} does not match the locked item_schema: {errors[0].message} (at {errors[0].pointer})")


def generate(plan: dict[str, Any], seed: str, memo: bool = True) -> dict[str, list[Item]]:
    """Every workload's and task's items. `memo`: a workload item this user generated before with
    the same generator code, seed, index and parameters may come from the per-user memo
    (`lrc.runtime.item_memo`); `lrc verify` says False and regenerates every one. Each item is
    checked against the locked item schema either way."""
    from lrc.runtime.item_memo import ItemMemo

    n = plan["edition"]["spec"]["n_per_cell"]
    remembered = ItemMemo(plan, seed, enabled=memo)
    out: dict[str, list[Item]] = {}
    for ref, wl in plan["workloads"].items():
        dataset = wl["spec"]["dataset"]
        module = importlib.import_module(plan["code"][dataset["generator"]]["module"])
        schema = item_validator(ref, dataset["item_schema"])
        params = dataset.get("params", {})
        items = []
        for index in range(n):
            item = remembered.item(dataset["generator"], index, params,
                                   lambda index=index: module.generate(seed, index, params))
            check_item(ref, dataset["item_schema"], item, schema)
            items.append(item)
        ids = [i.item_id for i in items]
        if len(set(ids)) != len(ids):
            raise ItemError(f"{ref}: the generator produced duplicate item ids")
        out[ref] = items
    # The edition's tasks (seed 000): one item per task, its inputs from the locked generator or the lock itself.
    from lrc.runtime.tasks import items as task_items

    for ref, task in task_items.generate(plan, seed).items():
        out[ref] = [task]
    return out


def _put(path: Path, data: bytes) -> None:
    """Write once; an existing file must already hold exactly these bytes (read without waiting:
    a FIFO or a device in its place is refused like other bytes, `lrc.runtime.filebytes`)."""
    held = filebytes.holds(path, data)
    if held is not None:
        if not held:
            raise ItemError(f"{path} differs from what the locked generator produces; use a new --out folder")
        return
    # A temporary name of this process, created anew (never through a link or over a file left
    # there: a fixed `item.json.tmp` planted as a link wrote the item wherever it pointed).
    filebytes.write_replacing(path, data)


def write(items: dict[str, list[Item]], out: Path) -> None:
    """item.json and answer_key.json per item; binary files once each, by content.

    Items often share large files (the same database behind 15 questions), so each file's
    bytes are stored once under OUT/items/blobs/sha256/<hex> and the item lists them in
    files.json (name -> sha256, size).
    """
    for ref, batch in items.items():
        for item in batch:
            folder = out / "items" / ref / item.item_id
            _put(folder / "item.json", canonical_file({"item_id": item.item_id, "index": item.index, "context": item.context}))
            _put(folder / "answer_key.json", canonical_file(item.answer_key))
            if item.files:
                manifest = {}
                for name, data in sorted(item.files.items()):
                    hexdigest = hashlib.sha256(data).hexdigest()
                    _put(out / "items" / "blobs" / "sha256" / hexdigest, data)
                    manifest[name] = {"sha256": hexdigest, "size": len(data)}
                _put(folder / "files.json", canonical_file(manifest))
            expected = getattr(item, "oracle", None)  # a task's expected artifact: graded against, never shown
            if isinstance(expected, bytes):
                _put(out / "items" / "blobs" / "sha256" / hashlib.sha256(expected).hexdigest(), expected)
