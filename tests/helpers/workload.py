"""Helpers the workload test modules share: canary serialization and the import check.

- `canonical` / `item_json`: the canonical JSON the canary digests are computed over.
- `assert_imports_confined`: every workload test module asserts that its components import
  only the standard library, the shared runtime plumbing and their own package, and that
  the reference models never see the generator. The AST walk lives here once; the
  allow-lists stay in each test module, because they are what that test asserts.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any, Iterable, Iterator

from lrc.runtime.workloads.base import Item


def canonical(obj: Any) -> str:
    """Canonical JSON (sorted keys, no spaces), as the canary digests hash it."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def item_json(item: Item) -> dict[str, Any]:
    """An item without its files, as the canary digests of the file-less workloads hash it."""
    return {"index": item.index, "item_id": item.item_id, "context": item.context, "answer_key": item.answer_key}


def imported_modules(path: Path) -> Iterator[str]:
    """Every module named by an import statement of the file at `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module or ""


def assert_imports_confined(package_dir: Path, names: Iterable[str], allowed: tuple[str, ...], stdlib: set[str],
                            hidden_from_reference: tuple[str, ...] = ("generator",)) -> None:
    """Each module `names` of `package_dir` imports only `stdlib` top-level modules or modules
    under an `allowed` prefix; `reference` imports nothing whose name contains one of
    `hidden_from_reference`."""
    for name in names:
        for mod in imported_modules(package_dir / f"{name}.py"):
            assert mod.split(".")[0] in stdlib or mod.startswith(allowed), f"{name}.py imports {mod}"
            if name == "reference":
                assert not any(h in mod for h in hidden_from_reference), "the baseline must not see the generator"
