#!/usr/bin/env python3
"""Fuzzes lrc with hostile model replies and tool arguments: no exit 70, ever.

    .venv/bin/python benchmarks/fuzz_replies.py [--rounds 3] [--items 30] [--parser-examples 20000] [--seed N]

Two layers:

1. In-process, the parsers every model output goes through (`boundedjson.loads`, the output
   contract's `extract_json`, the agentic system's tool-argument parser, the workloads' kit),
   fed `--parser-examples` random mutations of hostile JSON (huge and tiny numbers, deep and
   unbalanced nesting, truncation, invalid escapes, NaN, huge strings, random bytes). Each
   must return a value within the limits or raise the documented error — anything else is a
   crash.
2. Through the real execute path: a throw-away project whose candidate model is served by the
   local stub server (tests/helpers/stub_server.py); every request is answered by a hostile
   case (tests/helpers/hostile.py: replies, tool arguments and malformed responses), chosen
   from the request and the round's seed, at every step of single-shot and agentic runs.
   Each round runs `lrc execute`, then a resume and `lrc report` (subprocesses); every exit
   code must be 0 and the resume must make no request.

Prints the fuzz run's size (examples, executes, requests, cases seen, outcomes) and exits 1
on any crash.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers import hostile  # noqa: E402
from helpers.project import STUB_MODEL, build_project, journal_records, lrc_env, run_lrc  # noqa: E402
from helpers.stub_server import StubServer  # noqa: E402

KEY = "sk-lrc-fuzz-0c8e6d1a94f2b7e5"


# -- layer 1: the parsers ------------------------------------------------------------------------

_ATOMS = ['"x"', "0", "-1", "1.5e3", "true", "null", "NaN", "Infinity", '"\\ud800"', '"\\u0000"', '"\\x"', "1e999"]


def _mutant(rng: random.Random) -> str:
    kind = rng.randrange(9)
    if kind == 0:
        return "[" + ("-" if rng.random() < 0.5 else "") + "9" * rng.choice([50, 100, 101, 4300, 4301, 5000, 20000]) + "]"
    if kind == 1:
        d = rng.choice([1, 63, 64, 65, 200, 999, 1000, 5000, 50000])
        return "[" * d + rng.choice(_ATOMS) + "]" * rng.choice([d, d - 1, 0, d + 3])
    if kind == 2:
        d = rng.randrange(1, 3000)
        return '{"a":' * d + rng.choice(_ATOMS) + "}" * rng.randrange(0, d + 2)
    if kind == 3:
        return json.dumps({"labels": ["x" * rng.choice([10, 10_000, 1_000_001])]})
    if kind == 4:
        base = json.dumps({"labels": [rng.choice(["invoice", "other"]) for _ in range(rng.randrange(1, 50))], "n": 1.25})
        cut = rng.randrange(len(base) + 1)
        return base[:cut] + rng.choice(["", "]", "}", ",", "\\", '"', "{" * 100])
    if kind == 5:
        return "".join(rng.choice("[]{}\",:0123456789ae-+. \\nulltrue") for _ in range(rng.randrange(1, 5000)))
    if kind == 6:
        return "Sure! " + rng.choice(["```json\n", ""]) + _mutant(rng) + rng.choice(["\n```", " hope that helps", ""])
    if kind == 7:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).decode("latin-1")
    return ",".join(rng.choice(_ATOMS) for _ in range(rng.randrange(1, 100)))


def fuzz_parsers(examples: int, seed: int) -> dict:
    from lrc.runtime import boundedjson
    from lrc.runtime.checks import contract
    from lrc.runtime.systems import agentic
    from lrc.runtime.workloads import kit

    rng = random.Random(seed)
    crashes: list[str] = []
    outcomes: Counter = Counter()
    for n in range(examples):
        text = _mutant(rng)
        for name, fn, allowed in (
            ("loads", boundedjson.loads, boundedjson.Unparseable),
            ("extract_json", contract.extract_json, contract.NoJSON),
            ("arguments", lambda t: agentic._arguments(t), ()),
            ("kit", lambda t: kit.tool_calls_by_id([{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": t}}]}]), ()),
        ):
            try:
                value = fn(text)
                if name in ("loads", "extract_json"):
                    boundedjson.bounded(value)
                    json.dumps(value)  # what was accepted can be journaled
                outcomes[f"{name}:ok"] += 1
            except allowed:  # type: ignore[misc]
                outcomes[f"{name}:refused"] += 1
            except BaseException as exc:  # noqa: BLE001 - a crash is what we are looking for
                crashes.append(f"example {n} {name}: {type(exc).__name__}: {str(exc)[:200]} (input {text[:80]!r}, {len(text)} chars)")
    return {"examples": examples, "outcomes": dict(outcomes), "crashes": crashes}


# -- layer 2: the execute path -------------------------------------------------------------------

def _hook(seed: int, calm: float = 0.25):
    """Every request gets a hostile case chosen from the request and the seed; with
    probability `calm` (also decided by the request) a later agentic step is answered normally."""
    def hook(body):
        case, raw = hostile.pick(body, seed)
        step = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant") + 1
        coin = hashlib.sha256(f"calm|{seed}|{json.dumps(body.get('messages'), sort_keys=True)}".encode("utf-8")).digest()[0]
        if step > 1 and body.get("tools") and coin < calm * 256:
            return None
        return raw
    return hook


def run(stub: StubServer, workdir: Path, rounds: int = 3, items: int = 30, seed: int = 0) -> dict:
    lock = build_project(workdir / "project", stub.api_base, n_per_cell=items)
    exit_codes: Counter = Counter()
    requests = 0
    cases: Counter = Counter()
    outcomes: Counter = Counter()
    failures: list[str] = []
    for r in range(rounds):
        out = workdir / f"round-{r}"
        round_seed = seed * 1000 + r
        stub.reset(reply_hook=_hook(round_seed))
        res = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY), timeout=1800)
        exit_codes[res.returncode] += 1
        if res.returncode != 0:
            failures.append(f"round {r} execute exit {res.returncode}: {res.stderr[-1500:]}")
        for rec in stub.snapshot():
            requests += 1
            cases[hostile.pick(rec.body, round_seed)[0]] += 1
        stub.reset(reply_hook=_hook(round_seed))
        again = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY), timeout=1800)
        exit_codes[again.returncode] += 1
        if again.returncode != 0 or stub.count:
            failures.append(f"round {r} resume exit {again.returncode}, {stub.count} requests: {again.stderr[-1500:]}")
        report = run_lrc("report", lock, "--out", out, env=lrc_env(KEY), timeout=1800)
        exit_codes[report.returncode] += 1
        if report.returncode != 0:
            failures.append(f"round {r} report exit {report.returncode}: {report.stderr[-1500:]}")
        if (out / "journal.jsonl").exists():
            for rec in journal_records(out):
                if rec.get("type") == "run" and f"|{STUB_MODEL}|" in rec["run"]:
                    outcomes[f"{rec['system']}:{rec['outcome']}"] += 1
    return {"executes": sum(exit_codes.values()), "exit_codes": dict(exit_codes), "requests": requests,
            "cases_seen": len(cases), "cases_total": len(hostile.cases()), "outcomes": dict(outcomes), "failures": failures}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--items", type=int, default=30)
    ap.add_argument("--parser-examples", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    started = time.monotonic()
    parsers = fuzz_parsers(args.parser_examples, args.seed)
    print(f"parsers: {parsers['examples']} examples × 4 parsers; outcomes {parsers['outcomes']}; crashes {len(parsers['crashes'])}")
    for line in parsers["crashes"][:20]:
        print("  CRASH", line)
    with StubServer() as stub, tempfile.TemporaryDirectory(prefix="lrc-fuzz-replies-") as tmp:
        summary = run(stub, Path(tmp), args.rounds, args.items, args.seed)
    print(f"execute path: {summary['executes']} lrc processes (execute, resume, report × {args.rounds} rounds), "
          f"{summary['requests']} hostile responses, {summary['cases_seen']}/{summary['cases_total']} cases seen; "
          f"exit codes {summary['exit_codes']}")
    print(f"  stub-model run outcomes: {summary['outcomes']}")
    for line in summary["failures"]:
        print("  FAILURE", line)
    print(f"wall: {time.monotonic() - started:.1f} s")
    return 1 if parsers["crashes"] or summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
