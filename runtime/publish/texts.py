"""The two human-readable members of a reproducibility package: README.md (how to verify it)
and MODEL_CARD.md (its limitations), generated from the lock and the published summary alone,
so the same run folder always gives the same text."""

from __future__ import annotations

from typing import Any

from lrc.runtime.report.labels import model_label

KNOWN_LIMITATIONS = (
    "Thirty tasks cannot establish universal finance capability. Spreadsheet and presentation quality also "
    "contain legitimate judgment calls. API behavior, tool implementations, and pricing change over time. "
    "Results from one model version or one harness should not be generalized to another."
)
"""Seed 000, "Known limitations", verbatim."""


def readme(lock: dict[str, Any], prefix: str) -> str:
    plan = lock["plan"]
    spec = plan["edition"]["spec"]
    return f"""# Reproducibility package: {spec['title']}

Edition `{plan['edition']['ref']}` ({spec['date']}), plan `{lock['root_digest']}`, compiled by lrc {lock['lrc_version']}.

## Verify it

With the lrc release named above installed (`pip install -r requirements.lock --no-deps`, then lrc
itself at that release), run, offline:

    lrc verify PACKAGE.tar.gz

`lrc verify` checks every member against MANIFEST.json (sha256 and size), the lock's own digests,
the packaged source files against the lock's code fingerprints (and the installed lrc's code
against them too: the numbers are recomputed by the installed code, so it must be the locked
code), regenerates the items from the locked generators and seed and compares them with
`run/items/`, then rebuilds every published output from `run/journal.jsonl` with the code path
of `lrc report` -- re-pricing each call's token counts with the lock's frozen prices (Decimal),
re-grading, re-aggregating per cell (passes, n, pass rate, Wilson interval, cost, CPO) -- and
compares the result with the published files field by field, to the cent. It prints every
difference (file, field, published, recomputed) and exits 0 only when nothing differs.

## What is here

| path | what |
|---|---|
| `plan.lock` | the pre-registration: prompts, tool schemas, task definitions, split manifest, frozen prices, system configuration, code fingerprints |
| `requirements.lock` | every dependency with its version and hashes |
| `rubrics/` | the judge and review rubrics, verbatim from the lock |
| `adjudications.json` | the human grades and failure categories appended to the journal (`lrc review import`, `lrc categorize`), in journal order; `lrc verify` derives it again from the journal |
| `source/runtime/` | the fingerprinted source of every locked code component: generators, validators, tools, systems, the analysis code |
| `run/journal.jsonl` | every model call (token counts per class) and run, judge calls and human adjudications: the source of every number |
| `run/items/` | the task inputs and items (`answer_key.json` beside each) |
| `run/runs/` | run-level traces: manifest, execution trace, evaluation record, saved task outputs |
| `run/summary.json`, `run/cells.csv`, `run/cells.parquet`, `run/rate-card.md`, ... | the published outputs |
| `MODEL_CARD.md` | limitations of these results |
| `MANIFEST.json` | every other member with its sha256, size, role, and where redaction applied |

The analysis entry point is `lrc verify` (runtime/publish/verify_package.py in lrc); the analysis
code it runs is the `lrc.analysis` component, whose fingerprinted files are under `source/`.
"""


def model_card(lock: dict[str, Any], summary: dict[str, Any], members: dict[str, bytes], hashed_requirements: bool) -> str:
    plan = lock["plan"]
    spec = plan["edition"]["spec"]
    seed = plan["seed"]
    lines = [f"# Model card: {spec['title']}", "",
             f"Edition `{plan['edition']['ref']}` ({spec['date']}) · plan `{lock['root_digest']}`", "",
             f"> {spec['disclaimer']}", "", "## What was measured", ""]
    reps = spec.get("repetitions", 1)
    lines.append(f"- {len(plan['workloads'])} workload(s) and {len(plan.get('tasks', {}))} task(s), "
                 f"{spec['n_per_cell']} item(s) per cell, {reps} repetition(s) per item; "
                 f"{summary.get('runs_planned', 0)} runs planned; {summary.get('runs_graded', 0)} workload runs graded"
                 + (" (task runs are counted in reliability-report.md)" if plan.get("tasks") else "")
                 + f"; {summary.get('runs_incomplete', 0)} excluded after infrastructure failures.")
    if summary.get("partial"):
        lines.append(f"- **This run folder is partial**: {summary.get('runs_not_run', 0)} planned runs were never made. "
                     "It is not a full measurement; no rates or qualifying verdicts are derived from it.")
    lines += ["", "## Models", "", "| model | role | reference model | price source (as of) |", "|---|---|---|---|"]
    for model_id, entry in sorted(plan["models"].items()):
        price = entry.get("price", {})
        lines.append(f"| {model_label(model_id)} | {entry['role']} | {'yes: embedded, deterministic, not a commercial model' if entry.get('reference') else 'no'} "
                     f"| {price.get('source', '?')} ({price.get('as_of', '?')}) |")
    if any(e.get("reference") for e in plan["models"].values()):
        lines += ["", "Reference models are code inside lrc (oracle: writes the answer key, an infrastructure check; "
                      "null: does nothing, a floor check; baseline: a deterministic heuristic; careful and cheap: the demo's "
                      "reference candidates, answering a fixed share of each workload's items like the oracle and the rest "
                      "like the baseline, at declared demo prices). Their results say what the "
                      "harness and validators do, not what any language model can do; their prices are declared, not billed."]
    lines += ["", "## Data", ""]
    lines.append("- Every item is synthetic: generated by the locked, seeded generators under `source/` "
                 "(the fingerprints are in `plan.lock`); no real company's records are included.")
    for ref, task in sorted(plan.get("tasks", {}).items()):
        disclosure = task["spec"].get("synthetic_disclosure")
        if disclosure:
            lines.append(f"- `{ref}` ({task.get('split', task['spec'].get('split', '?'))} split): {disclosure}")
    if any(t.get("split") == "dev" for t in plan.get("tasks", {}).values()):
        lines.append("- Tasks of the dev split were used to build prompts and validators: their results are development "
                     "measurements, never held-out test results (seed 000).")
    if seed["policy"] == "public":
        lines.append(f"- Seed policy: public. The seed is in `plan.lock` (commitment `{seed['commitment']}`), so anyone can "
                     "regenerate every item.")
    elif "seed/held-out.seed" in members:
        lines.append(f"- Seed policy: held-out, **released**: `seed/held-out.seed` matches the locked commitment "
                     f"`{seed['commitment']}` (checked when packaged and again by `lrc verify`).")
    else:
        lines.append(f"- Seed policy: held-out, **not released**: this package does not contain the seed (commitment "
                     f"`{seed['commitment']}`). The items it was drawn from are in `run/items/`, but they cannot be "
                     "regenerated from the generators until the seed is released after the edition closes; `lrc verify` "
                     "then needs `--seed-file`. Until then the recomputation is incomplete and says so.")
    lines += ["", "## Traces and redaction", ""]
    marked = {name: data.count(b"[REDACTED:") for name, data in members.items()
              if name.startswith("run/") and b"[REDACTED:" in data}
    if marked:
        lines.append(f"- Secrets were redacted at write time (`[REDACTED:<NAME>]`): {sum(marked.values())} marker(s) in "
                     f"{len(marked)} file(s), listed in MANIFEST.json with `\"complete\": false`. Those traces are "
                     "incomplete where marked.")
    else:
        lines.append("- Traces pass through lrc's redactor at write time (`[REDACTED:<NAME>]` marks a removed secret); "
                     "no marker occurs in this package, so no trace here was cut by redaction.")
    if not hashed_requirements:
        lines.append("- `requirements.lock` was not available where this package was built: the dependency list has "
                     "versions but no hashes.")
    lines += ["", "## Known limitations", "", KNOWN_LIMITATIONS, "",
              "- The model providers' systems are outside this package: a recomputation re-prices and re-grades the "
              "recorded calls, it does not repeat them.",
              "- Prices are frozen in the lock as of the dates above; provider prices change.",
              "- Pass rates come with Wilson 95% intervals and their denominators; at small n an interval is wide "
              "(15/15 has a lower bound of 0.796, under the 0.80 bar).", "",
              "The benchmark is a transparent engineering case study: a way to expose failure modes, improve "
              "reliability, and make future claims inspectable.", "",
              "---", spec["footer"], ""]
    return "\n".join(lines)
