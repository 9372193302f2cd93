"""`lrc pricing snapshot MODEL…`: a pricing block prefilled from litellm's bundled cost map.

Authors freeze prices at window open from official price pages (seed §3). This command
gives them a starting point offline: it reads the cost map that ships inside the installed
litellm package as plain JSON (litellm itself is never imported, so nothing reaches the
network and the compile path stays light), converts per-token floats to decimal strings per
million tokens, and says where every number came from. The author reviews it against the
provider's price page and pastes it into the edition.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib.util
import json
from decimal import Decimal
from importlib import metadata
from pathlib import Path
from typing import Any

MAP_FILE = "model_prices_and_context_window_backup.json"
FIELDS = (
    ("input", "input_cost_per_token"),
    ("cached_input", "cache_read_input_token_cost"),
    ("cache_write", "cache_creation_input_token_cost"),
    ("output", "output_cost_per_token"),
    ("reasoning", "output_cost_per_reasoning_token"),
)


class SnapshotError(Exception):
    pass


def _map_path() -> Path:
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        raise SnapshotError("litellm is not installed; run `python3 dev.py setup`")
    path = Path(spec.origin).parent / MAP_FILE
    if not path.is_file():
        raise SnapshotError(f"the installed litellm has no bundled cost map ({MAP_FILE})")
    return path


def _per_million(value: Any) -> str:
    # repr() of the float is its shortest round-trip decimal; scale it exactly.
    amount = Decimal(repr(float(value))) * Decimal(1_000_000)
    text = format(amount.normalize(), "f")
    return text if "." not in text else text.rstrip("0").rstrip(".")


def lookup(model: str, table: dict[str, Any]) -> dict[str, Any] | None:
    candidates = [model]
    if "/" in model:
        candidates.append(model.split("/", 1)[1])
    for name in candidates:
        entry = table.get(name)
        if isinstance(entry, dict) and "input_cost_per_token" in entry:
            return entry
    return None


def snapshot(models: list[str], as_of: str | None = None) -> tuple[str, list[str]]:
    """(YAML text of a `pricing:` block, problems)."""
    path = _map_path()
    raw = path.read_bytes()
    table = json.loads(raw)
    blob = hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()  # git blob id, as litellm reports it
    version = metadata.version("litellm")
    as_of = as_of or _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    lines = ["pricing:"]
    problems: list[str] = []
    for model in models:
        entry = lookup(model, table)
        if entry is None:
            problems.append(f"{model}: not in litellm {version}'s bundled cost map; price it by hand from the provider's page")
            continue
        lines.append(f"  {model}:")
        lines.append("    currency: USD")
        lines.append("    per_tokens: 1000000")
        for ours, theirs in FIELDS:
            if entry.get(theirs) is not None:
                lines.append(f'    {ours}: "{_per_million(entry[theirs])}"')
        lines.append(f'    as_of: "{as_of}"')
        lines.append(f"    source: litellm {version} bundled cost map (blob {blob[:12]}); CHECK against the provider's official price page before publishing")
        if entry.get("cache_read_input_token_cost") is None:
            problems.append(f"{model}: the map has no cached-input price; if the provider bills cached tokens, add it by hand")
    return "\n".join(lines) + "\n", problems
