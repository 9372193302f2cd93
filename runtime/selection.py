"""Which of a plan's runs one `lrc execute` makes: `--models`, `--workloads`, `--limit`, `--shard`.

A selection only chooses *which* runs are made; it never changes what a run is or how it is
graded. The folder it fills is partial until every run of the plan is journaled or excluded
(see `lrc.runtime.report.outputs`: partial-ness is read from the journal's coverage, never from
these flags), so a later execute without a selection completes it.

- `--models M1,M2`: only those models' runs (exact model ids of the plan).
- `--workloads W1,W2`: only those workloads' runs; a workload is named by its ref
  (`triage.ap-inbox.v2`) or by its id (`triage.ap-inbox`); a task (seed 000) likewise
  (`fa.fix-sign.v1`, `fa.fix-sign`).
- `--limit N`: only the first N items of each cell, by item index (deterministic); a limit at
  or above n selects every item.
- `--shard i/N`: the runs whose run key's stable digest falls in part i of N (sha256 of the
  key, never Python's `hash()`, so every machine and process agrees). The N shards partition
  the runs: each run is in exactly one shard.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Sequence

from lrc.runtime.operate import OptionsError

if TYPE_CHECKING:
    from lrc.runtime.execute import RunSpec
    from lrc.runtime.operate import RunOptions


def shard_of(run_key: str, count: int) -> int:
    """The 0-based shard of `run_key` among `count` shards: the first 8 bytes of the key's
    sha256, big-endian, modulo `count`."""
    if count < 1:
        raise ValueError(f"a shard count is at least 1, got {count}")
    return int.from_bytes(hashlib.sha256(run_key.encode("utf-8")).digest()[:8], "big") % count


def _resolve(kind: str, wanted: Sequence[str], known: Sequence[str], aliases: dict[str, list[str]]) -> set[str]:
    """The plan's names for `wanted`, or OptionsError naming every unknown one and what exists."""
    chosen: set[str] = set()
    unknown: list[str] = []
    for name in wanted:
        if name in known:
            chosen.add(name)
        elif len(aliases.get(name, [])) == 1:
            chosen.add(aliases[name][0])
        else:
            unknown.append(name)
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        raise OptionsError(f"unknown {kind}{plural} {', '.join(repr(u) for u in unknown)}: this plan has "
                           f"{', '.join(sorted(known))}; nothing was run")
    return chosen


def check(plan: dict[str, Any], options: "RunOptions") -> tuple[set[str] | None, set[str] | None]:
    """The plan's model ids and workload refs the options select (None: all), before anything
    runs; OptionsError for an id the plan does not have."""
    models = workloads = None
    if options.models is not None:
        models = _resolve("model", options.models, list(plan["models"]), {})
    if options.workloads is not None:
        named = {**plan["workloads"], **(plan.get("tasks") or {})}  # a task is selected like a workload
        refs = list(named)
        aliases: dict[str, list[str]] = {}
        for ref in refs:
            aliases.setdefault(named[ref]["spec"]["id"], []).append(ref)
        workloads = _resolve("workload", options.workloads, refs, aliases)
    return models, workloads


def select(plan: dict[str, Any], runs: "list[RunSpec]", options: "RunOptions") -> "list[RunSpec]":
    """The runs this execute makes, in plan order (all of them without a selection)."""
    models, workloads = check(plan, options)
    chosen = []
    for spec in runs:
        if models is not None and spec.model not in models:
            continue
        if workloads is not None and spec.workload not in workloads:
            continue
        if options.limit is not None and spec.item_index >= options.limit:
            continue
        if options.shard is not None and shard_of(spec.key, options.shard[1]) != options.shard[0] - 1:
            continue
        chosen.append(spec)
    return chosen


def describe(options: "RunOptions") -> str:
    """The selection as the flags that made it (`--workloads triage.ap-inbox --limit 2`)."""
    parts = []
    if options.models is not None:
        parts.append("--models " + ",".join(options.models))
    if options.workloads is not None:
        parts.append("--workloads " + ",".join(options.workloads))
    if options.limit is not None:
        parts.append(f"--limit {options.limit}")
    if options.shard is not None:
        parts.append(f"--shard {options.shard[0]}/{options.shard[1]}")
    return " ".join(parts)
