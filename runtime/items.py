"""Step 2 of `lrc execute`: generate every workload's items from the seed, byte for byte.

Items are written under OUT/items/<workload>/<item>/: `item.json` (what prompts may show)
and, beside it, `answer_key.json` (what grading uses; never rendered into a prompt). Each
item is checked against the workload's locked item schema. An existing item file that
differs from what the generator produces now is refused, never overwritten.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from lrc.runtime.workloads.base import Item


class ItemError(Exception):
    pass


def canonical_file(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def generate(plan: dict[str, Any], seed: str) -> dict[str, list[Item]]:
    n = plan["edition"]["spec"]["n_per_cell"]
    out: dict[str, list[Item]] = {}
    for ref, wl in plan["workloads"].items():
        dataset = wl["spec"]["dataset"]
        module = importlib.import_module(plan["code"][dataset["generator"]]["module"])
        schema = Draft202012Validator(dataset["item_schema"])
        items = []
        for index in range(n):
            item = module.generate(seed, index, dataset.get("params", {}))
            errors = list(schema.iter_errors(item.context))
            if errors:
                raise ItemError(f"{ref}: generated item {item.item_id} does not match the locked item_schema: {errors[0].message}")
            items.append(item)
        ids = [i.item_id for i in items]
        if len(set(ids)) != len(ids):
            raise ItemError(f"{ref}: the generator produced duplicate item ids")
        out[ref] = items
    return out


def write(items: dict[str, list[Item]], out: Path) -> None:
    for ref, batch in items.items():
        for item in batch:
            folder = out / "items" / ref / item.item_id
            files = {"item.json": canonical_file({"item_id": item.item_id, "index": item.index, "context": item.context}),
                     "answer_key.json": canonical_file(item.answer_key)}
            files.update({f"files/{name}": data for name, data in sorted(item.files.items())})
            for name, data in files.items():
                path = folder / name
                if path.exists():
                    if path.read_bytes() != data:
                        raise ItemError(f"{path} differs from what the locked generator produces; use a new --out folder")
                    continue
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
