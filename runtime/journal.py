"""The append-only run journal: what makes a killed run resumable without repaying a call.

One JSON line per event, flushed and fsync'd before the run moves on. The first line names
the plan digest: a journal belongs to exactly one plan, so a folder of another plan's
results is refused instead of mixed in. Every model call is recorded under (run, step)
with a digest of the exact request; on resume the same request is answered from the
journal, so a finished call is never paid twice, and a different request at the same
place (non-determinism leaking in) is an error, never silently reused. A torn last line
(the process died mid-write) is cut off; damage anywhere else is refused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

JOURNAL_FORMAT = 1


class JournalError(Exception):
    pass


def run_key(workload: str, model: str, system: str, item_id: str, repetition: int) -> str:
    return f"{workload}|{model}|{system}|{item_id}|r{repetition}"


class Journal:
    def __init__(self, path: Path, plan_digest: str, edition: str, redact: Callable[[str], str] = lambda s: s):
        self.path = path
        self.plan_digest = plan_digest
        self.redact = redact
        self.calls: dict[tuple[str, int], dict[str, Any]] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.exhausted: dict[str, dict[str, Any]] = {}  # runs whose latest state is "infra retries exhausted"
        self.exhaustions: dict[str, list[dict[str, Any]]] = {}  # every exhaustion ever journaled, per run
        self.truncated_tail = False
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            self._load()
        else:
            self._fh = open(path, "ab")
            self.append({"type": "header", "journal_format": JOURNAL_FORMAT, "plan": plan_digest, "edition": edition})
            return
        self._fh = open(path, "ab")

    def _load(self) -> None:
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            with open(self.path, "r+b") as fh:
                fh.truncate(cut)
                fh.flush()
                os.fsync(fh.fileno())
            data = data[:cut]
            self.truncated_tail = True
        lines = data.decode("utf-8").splitlines()
        if not lines:
            raise JournalError(f"{self.path} is empty; remove it to start over")
        for n, line in enumerate(lines, start=1):
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise JournalError(f"{self.path}:{n}: damaged journal line ({exc.msg}); it was not written by lrc") from exc
            if n == 1:
                if rec.get("type") != "header" or rec.get("journal_format") != JOURNAL_FORMAT:
                    raise JournalError(f"{self.path} is not an lrc journal of format {JOURNAL_FORMAT}")
                if rec.get("plan") != self.plan_digest:
                    raise JournalError(
                        f"{self.path.parent} holds results of another plan ({rec.get('plan')}), not {self.plan_digest}; "
                        f"use a new --out folder")
                continue
            self._index(rec)

    def _index(self, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        if kind == "call":
            self.calls[(rec["run"], rec["step"])] = rec
        elif kind == "run":
            self.runs[rec["run"]] = rec
            self.exhausted.pop(rec["run"], None)
        elif kind == "infra_exhausted":
            self.exhaustions.setdefault(rec["run"], []).append(rec)
            if rec["run"] not in self.runs:
                self.exhausted[rec["run"]] = rec

    def append(self, rec: dict[str, Any]) -> None:
        line = self.redact(json.dumps(rec, sort_keys=True, ensure_ascii=False, separators=(",", ":")))
        self._fh.write(line.encode("utf-8") + b"\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        if rec.get("type") != "header":
            self._index(json.loads(line))

    def close(self) -> None:
        self._fh.close()
