"""Reliability-protocol tasks (seed 000) in `lrc execute`: plan, run, grade, report.

Why a package of its own: a task is not a workload. Its item is a set of office files made
from the seed by the task's pinned generator (or checked in and inlined in the lock), its
model works on a private copy of them through the artifact toolbox, and what is graded is the
file it saved, by the eight validator families of `lrc.runtime.artifacts.validators`. The
steps are one module each, called from `lrc.runtime.execute` and `lrc.runtime.report.outputs`:

- `items`    — generate (or decode) each task's inputs and expected artifact, write them once
               under OUT/items/<task ref>/<task id>/;
- `planning` — the runs: task × model × the edition's tool-using systems × repetition;
- `prompt`   — the messages a run starts from (objective and file list, never the expected file);
- `runner`   — one run: the toolbox restricted to the permitted tools, the agentic loop under
               the task's budget, every file mutation kept for the trace;
- `reference`— what `lrc/oracle`, `lrc/null` and `lrc/baseline` answer on a task
               (the tool calls of `lrc.runtime.artifacts.policies`);
- `grade`    — the validators over the saved files, the verdict and the failing checks (lrc.runtime.failures derives the categories);
- `report`   — the run's manifest, trace and evaluation files and its record for the cells.

This is the only part of the runtime that imports `lrc.runtime.artifacts`
(tests/test_artifacts_boundary.py holds it to that).
"""
