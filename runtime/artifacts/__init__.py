"""Office artifacts of the Finance Agent Reliability protocol (seed 000): the library layer.

Seed 000's agents hand back a working spreadsheet or presentation, not text. Grading one
needs five things no other part of lrc has, each a module here:

- `safezip`: an agent's file is untrusted: it is checked as a zip package (bombs, traversal,
  macros, hostile XML, external links) before openpyxl or python-pptx reads a byte of it;
- `deterministic`: the generated inputs and oracle artifacts are byte-identical for a seed;
- `model` and `deck`: the seeded input artifacts (a three-statement model with roll-forward
  schedules, a board deck); `tasks` (with `kinds_*`) the task kinds with their oracle and
  baseline artifacts, `tasks.make(kind, seed)` the one entry point;
- `recalc`: openpyxl never computes a formula, so a workbook is recalculated before its
  numbers are judged, within the limits of `recalc_worker` (an agent's workbook is hostile);
- `validators`: the eight deterministic validator families, returning the project's
  validator result shape (`lrc.runtime.checks.results`);
- `toolbox` (with `runfolder`, `toolargs`, `formulatext`, `booktools`, `decktools`,
  `toolschemas`): the agent's sandboxed tools over a private copy of a task's files, every
  change recorded for the trace;
- `differ` and `policies`: the tool calls of the reference models (`lrc/oracle`, `lrc/null`,
  `lrc/baseline`) on a task, derived from its input and oracle artifact.

Nothing in the runtime imports this package yet: wiring it into task specs, the lock and
`lrc execute` is the next step of issue 13.
"""
