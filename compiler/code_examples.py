"""One example per diagnostic code, appended to `lrc explain CODE`.

Each example is a minimal bad snippet (the file it lives in named in a comment) followed by
what lrc reports for it, in the text format of `lrc compile`. The messages follow the ones in
the bad-spec corpus (tests/compiler/bad_specs/); a test checks that every code of codes.py
has an example here and that the example names its own code.
"""

from __future__ import annotations

EXAMPLES: dict[str, str] = {
    # -- 1xxx: loading YAML -------------------------------------------------------------------
    "LRC1001": """\
# specs/systems/single-shot.yaml
kind: system
id: single-shot
title: Single shot: one request

lrc reports:
  specs/systems/single-shot.yaml:4:19: error[LRC1001]: YAML syntax error: mapping values are not allowed here

Quote a value that contains ": " (title: "Single shot: one request").""",
    "LRC1002": """\
# specs/systems/single-shot.yaml
max_steps: 1
request_timeout_seconds: 120
max_steps: 1

lrc reports:
  specs/systems/single-shot.yaml:4:1: error[LRC1002]: duplicate key: found duplicate key "max_steps" with value "1" (original value: "1")
    hint: keep one occurrence of the key""",
    "LRC1003": """\
# specs/systems/single-shot.yaml
mode: !shell single-shot

lrc reports:
  specs/systems/single-shot.yaml:10:7: error[LRC1003]: explicit tag !shell is not allowed in specs
    hint: specs are plain data: remove the tag""",
    "LRC1004": """\
# specs/editions/demo.yaml
pricing:
  lrc/oracle: &zero {currency: USD, per_tokens: 1000000, input: "0", output: "0"}
  lrc/null: *zero

lrc reports:
  specs/editions/demo.yaml:24:15: error[LRC1004]: anchor &zero is not allowed in specs
    hint: anchors and aliases hide repetition and enable alias bombs; write the value out
  specs/editions/demo.yaml:25:13: error[LRC1004]: alias *zero is not allowed in specs
    hint: write the value out, or reference another spec by its pinned id""",
    "LRC1005": """\
# specs/systems/single-shot.yaml
# yaml-language-server: $schema=../../schemas/system.schema.json
%YAML 1.1
---
kind: system

lrc reports:
  specs/systems/single-shot.yaml:3:1: error[LRC1005]: YAML directives (%YAML, %TAG) are not allowed in specs""",
    "LRC1006": """\
# specs/systems/single-shot.yaml: a 1 MB file, or 41 levels of nested lists
tools: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]

lrc reports:
  specs/systems/single-shot.yaml:16:46: error[LRC1006]: nesting deeper than 40 levels
  specs/systems/single-shot.yaml: error[LRC1006]: file is 1048576 bytes; the cap is 524288""",
    "LRC1007": """\
# specs/systems/single-shot.yaml saved as Latin-1: title: Caf\\xe9 single shot

lrc reports:
  specs/systems/single-shot.yaml: error[LRC1007]: not UTF-8 (byte 233)

Re-save the file as UTF-8 (a lone surrogate escape such as "\\ud800" is refused the same way).""",
    "LRC1008": """\
# specs/notes.yaml (directly under specs/, not in a kind folder)
kind: system
id: notes

lrc reports:
  specs/notes.yaml: error[LRC1008]: spec files live in a kind folder (standard/, systems/, workloads/, editions/)

The same code reports a top level that is a list, and a second document after `---`.""",
    "LRC1009": """\
# specs/systems/single-shot.yaml, whose first line is not the modeline
kind: system
id: single-shot

lrc reports:
  specs/systems/single-shot.yaml:1:1: warning[LRC1009]: spec file does not start with the yaml-language-server schema modeline
    hint: add `# yaml-language-server: $schema=<relative path to its schema>` as the first line""",
    # -- 2xxx: schema -------------------------------------------------------------------------
    "LRC2001": """\
# specs/editions/demo.yaml
pricing:
  lrc/oracle:
    input: 0.15

lrc reports:
  specs/editions/demo.yaml:38:12: error[LRC2001]: expected string, found number 0.15
    at /pricing/lrc~1oracle/input
    hint: quote the value: "0.15" (decimals are strings so they are never rounded through binary floats)""",
    "LRC2002": """\
# specs/systems/single-shot.yaml (no `mode:`)
kind: system
id: single-shot
version: 1
title: Single shot

lrc reports:
  specs/systems/single-shot.yaml:2:1: error[LRC2002]: missing required field 'mode'
    at /
    hint: add `mode:` here""",
    "LRC2003": """\
# specs/workloads/triage.ap-inbox/workload.yaml
titel: AP inbox triage

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:6:1: error[LRC2003]: unknown field 'titel'
    at /titel
    hint: did you mean 'title'?""",
    "LRC2004": """\
# specs/systems/single-shot.yaml
mode: singleshot

lrc reports:
  specs/systems/single-shot.yaml:10:7: error[LRC2004]: "singleshot" is not allowed here (allowed: "single-shot", "agentic")
    at /mode
    hint: did you mean "single-shot"?""",
    "LRC2005": """\
# specs/editions/demo.yaml
date: "2026-02-30"

lrc reports:
  specs/editions/demo.yaml:7:7: error[LRC2005]: "2026-02-30" does not match format 'date'
    at /date""",
    "LRC2009": """\
# specs/editions/demo.yaml
n_per_cell: 0

lrc reports:
  specs/editions/demo.yaml:60:13: error[LRC2009]: 0 is less than the minimum of 1
    at /n_per_cell""",
    "LRC2010": """\
# specs/editions/2026-12.yaml
models:
  - id: openai/gpt-4.1-mini
    role: candidate
    sampling: {temperature: 0}
    max_concurrency: 8

lrc reports:
  specs/editions/2026-12.yaml:35:5: error[LRC2010]: 'max_concurrency' is an operating setting, not part of an edition: it moves to a run profile
    at /models/1/max_concurrency
    hint: remove it from the edition (once recorded, that is a content change: `lrc bump 2026-12`) and set it per execute in a run profile, `models: {"openai/gpt-4.1-mini": {max_concurrency: 8}}` (`lrc execute PLAN --profile run.yaml`), or with `--max-concurrency openai/gpt-4.1-mini=8`""",
    # -- 3xxx: references and files -----------------------------------------------------------
    "LRC3001": """\
# specs/editions/demo.yaml
workloads:
  - triage.ap-inbox.v2    # only v1 exists

lrc reports:
  specs/editions/demo.yaml:12:5: error[LRC3001]: unknown workload 'triage.ap-inbox.v2'
    at /workloads/1
    hint: did you mean triage.ap-inbox.v1?""",
    "LRC3002": """\
# specs/editions/demo.yaml
workloads:
  - triage.ap-inbox

lrc reports:
  specs/editions/demo.yaml:12:5: error[LRC3002]: reference 'triage.ap-inbox' does not pin a version
    at /workloads/1
    hint: write triage.ap-inbox.v1""",
    "LRC3003": """\
# specs/workloads/z-duplicate/workload.yaml (a copy of another workload)
kind: workload
id: triage.ap-inbox

lrc reports:
  specs/workloads/z-duplicate/workload.yaml:4:5: error[LRC3003]: workload 'triage.ap-inbox' is also defined in specs/workloads/triage.ap-inbox/workload.yaml
    at /id
    hint: one file per spec; its version changes in place""",
    "LRC3004": """\
# specs/workloads/triage.ap-inbox/workload.yaml
systems:
  single-shot:
    prompts:
      user: prompts/singleshot.user.j2    # the file is single-shot.user.j2

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:86:13: error[LRC3004]: referenced file 'prompts/singleshot.user.j2' does not exist
    at /systems/single-shot/prompts/user
    hint: expected at specs/workloads/triage.ap-inbox/prompts/singleshot.user.j2""",
    "LRC3005": """\
// specs/workloads/triage.ap-inbox/output.schema.json
{"type": "object", "properties": {labels: {"type": "array"}}}

lrc reports:
  specs/workloads/triage.ap-inbox/output.schema.json:1:35: error[LRC3005]: specs/workloads/triage.ap-inbox/output.schema.json is not valid JSON: Expecting property name enclosed in double quotes""",
    "LRC3006": """\
// specs/workloads/triage.ap-inbox/output.schema.json
{"type": "object", "properties": {"labels": {"type": "arrray"}}}

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:68:11: error[LRC3006]: not a valid JSON Schema: 'arrray' is not valid under any of the given schemas
    at /output/schema
    note: in specs/workloads/triage.ap-inbox/output.schema.json""",
    "LRC3007": """\
# specs/workloads/triage.ap-inbox/workload.yaml (item_schema requires batch_id, mailbox, emails)
sample_item:
  batch_id: AP-SAMPLE
  emails: []

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:126:3: error[LRC3007]: sample_item does not match item_schema: "mailbox" is a required property
    at /sample_item""",
    "LRC3008": """\
# specs/workloads/triage.ap-inbox/workload.yaml
systems:
  agentic:
    system: single-shot.v1

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:88:13: error[LRC3008]: the 'agentic' entry pins system 'single-shot.v1'
    at /systems/agentic/system
    hint: pin a version of 'agentic', e.g. agentic.v1""",
    "LRC3009": """\
# runtime/workloads/example/generator.py
COMPONENT_ID = "example.generator"
COMPONENT_VERSION = "1"     # must be an integer literal

lrc reports:
  runtime/workloads/example/generator.py:2:1: error[LRC3009]: COMPONENT_VERSION must be a positive integer literal""",
    "LRC3010": """\
# specs/tasks/fa.fix-sign/task.yaml
checks:
  - validator: fa.unchanged-outsde
    failure_category: unexpected-change

lrc reports:
  specs/tasks/fa.fix-sign/task.yaml:24:16: error[LRC3010]: unknown validator 'fa.unchanged-outsde'
    at /checks/1/validator
    hint: did you mean 'fa.unchanged-outside'?""",
    "LRC3011": """\
# specs/tasks/fa.fix-sign/task.yaml
checks:
  - validator: fa.unchanged-outside
    params: {file: modle.xlsx, regions: ["IS!C7:F7"]}

lrc reports:
  specs/tasks/fa.fix-sign/task.yaml:25:13: error[LRC3011]: fa.unchanged-outside params: Additional properties are not allowed ('regions' was unexpected)
    at /checks/1/params
    hint: see the parameters of fa.unchanged-outside in lrc.runtime.lock.artifact_validators
  specs/tasks/fa.fix-sign/task.yaml:25:20: error[LRC3011]: fa.unchanged-outside param file names 'modle.xlsx', which is not a file of this task
    at /checks/1/params/file
    hint: did you mean 'model.xlsx'?""",
    "LRC3020": r"""\
# specs/workloads/triage.ap-inbox/workload.yaml
  item_schema:
    properties:
      batch_id: {type: string, pattern: "^(\\w+)-\\1$"}   # \1: a backreference

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:27:41: error[LRC3020]: pattern "^(\\w+)-\\1$" cannot be used: it uses a backreference, which a linear-time regex engine cannot evaluate
    at /dataset/item_schema/properties/batch_id/pattern
    hint: lrc evaluates every spec regex in linear time; rewrite it without backreferences or look-around (e.g. match both alternatives, or check the relation in a validator)

Look-around (`(?=`, `(?!`, `(?<=`, `(?<!`) is refused the same way, in an output schema file
too (the note names the file and the pointer inside it).""",
    "LRC3021": r"""\
# specs/workloads/triage.ap-inbox/workload.yaml
  item_schema:
    properties:
      batch_id: {type: string, pattern: "^[A-Z]{2}-\\w+$", maxLength: 10000}

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:27:71: error[LRC3021]: maxLength 10000 is above the 4,096-character limit for pattern checks
    at /dataset/item_schema/properties/batch_id/maxLength
    hint: lrc never matches a string longer than 4,096 characters against a spec's regex (such a value fails); lower maxLength to 4,096 or less, or drop the pattern""",
    "LRC3022": """\
# specs/errata/E-demo-001.yaml
edition: demo.v20
plan_digest: sha256:0000000000000000000000000000000000000000000000000000000000000000

lrc reports:
  specs/errata/E-demo-001.yaml:6:14: error[LRC3022]: plan_digest is not the plan demo.v20 compiles to
    at /plan_digest
    hint: an erratum corrects one published plan: copy the `root_digest` of generated/demo/plan.lock, the lock its runs were made with (the run folder's summary.json `plan_digest`)""",
    "LRC3023": """\
# specs/errata/E-demo-001.yaml
corrections:
  - regrade_with: triage.ap-inbox.grading.v2

lrc reports:
  specs/errata/E-demo-001.yaml:11:19: error[LRC3023]: triage.ap-inbox.grading.v2 is not newer than the locked triage.ap-inbox.grading.v2
    at /corrections/1/regrade_with
    hint: fix the code, bump it (`lrc bump triage.ap-inbox.grading`: v3 or later) and regrade with that version""",
    "LRC3024": """\
# specs/errata/E-demo-001.yaml
corrections:
  - exclude:
      workload: triage.ap-inbox.v1
      item: ap-batch-01
      reason: its answer key labels a dunning notice as a statement

lrc reports:
  specs/errata/E-demo-001.yaml:14:17: error[LRC3024]: demo.v20 runs no workload 'triage.ap-inbox.v1'
    at /corrections/3/exclude/workload
    hint: did you mean triage.ap-inbox.v4?""",
    "LRC3025": """\
# specs/errata/E-demo-001.yaml
corrections:
  - price:
      model: openai/gpt-unknown
      pricing: {currency: USD, per_tokens: 1000000, input: "0.10", output: "0.40", as_of: "2026-11-29", source: corrected price}

lrc reports:
  specs/errata/E-demo-001.yaml:18:14: error[LRC3025]: demo.v20 has no frozen price for 'openai/gpt-unknown'
    at /corrections/4/price/model
    hint: priced: lrc/baseline, lrc/judge, lrc/null, lrc/oracle""",
    # -- 4xxx: prompt templates ----------------------------------------------------------------
    "LRC4001": """\
{# specs/workloads/triage.ap-inbox/prompts/system.j2 #}
{% for label in task.labels %}
- {{ label.id }}: {{ label.definition }}

lrc reports:
  specs/workloads/triage.ap-inbox/prompts/system.j2:3:1: error[LRC4001]: template syntax error: Unexpected end of template. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.
    note: used by triage.ap-inbox.v1 at /systems/single-shot/prompts/system""",
    "LRC4002": """\
{# specs/workloads/triage.ap-inbox/prompts/single-shot.user.j2 #}
Inbox {{ mailbox }}: {{ item.emails | length }} emails.

lrc reports:
  specs/workloads/triage.ap-inbox/prompts/single-shot.user.j2:2:1: error[LRC4002]: template uses undefined variable(s): mailbox
    note: used by triage.ap-inbox.v1 at /systems/single-shot/prompts/user
    hint: templates see only `task` (the workload's task block) and `item` (one dataset item)

Write {{ item.mailbox }}.""",
    "LRC4003": """\
{# specs/workloads/triage.ap-inbox/prompts/single-shot.user.j2 #}
{{ item.mailbox.__class__ }}

lrc reports:
  specs/workloads/triage.ap-inbox/prompts/single-shot.user.j2:2:1: error[LRC4003]: template not allowed: access to attribute '__class__' of 'str' object is unsafe.
    note: used by triage.ap-inbox.v1 at /systems/single-shot/prompts/user""",
    "LRC4004": """\
{# specs/workloads/triage.ap-inbox/prompts/single-shot.user.j2 #}
{{ "padding " * 1000000 }}

lrc reports:
  specs/workloads/triage.ap-inbox/prompts/single-shot.user.j2:2:1: error[LRC4004]: template multiplication exceeds 400000 items
    note: used by triage.ap-inbox.v1 at /systems/single-shot/prompts/user""",
    # -- 5xxx: the version gate ----------------------------------------------------------------
    "LRC5001": """\
# specs/workloads/triage.ap-inbox/workload.yaml: the title changed, the version did not
version: 1
title: AP inbox triage (revised)

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:5:10: error[LRC5001]: workload triage.ap-inbox changed but its version is still 1
    at /version
    note: changed: /title
    hint: run `lrc bump triage.ap-inbox` (then update the references that pin triage.ap-inbox.v1)

A change inside a prompt template or output schema also names that file and line, e.g.
`note: changed: /systems/single-shot/prompts/system (specs/workloads/triage.ap-inbox/prompts/system.j2:7)`,
and `--format github` puts a second annotation on that line. `lrc diff` shows the change with
old -> new values; `lrc bump --all-required --update-pins` bumps every spec in this state, rewrites
the pins of what it bumped and bumps what pins them.""",
    "LRC5002": """\
# specs/workloads/triage.ap-inbox/workload.yaml (the ledger records versions 1 and 2)
version: 1

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:5:10: error[LRC5002]: workload triage.ap-inbox declares version 1, lower than the recorded 2
    at /version
    hint: versions only move forward: use 3 (`lrc bump triage.ap-inbox`)""",
    "LRC5003": """\
# specs/workloads/triage.ap-inbox/workload.yaml (v1 and v2 recorded; v1 reused with a new title)
version: 1
title: AP inbox triage, again

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:5:10: error[LRC5003]: workload triage.ap-inbox reuses version 1, recorded with other content (latest recorded: 2)
    at /version
    note: changed: /title
    hint: set the version to 3 with `lrc bump triage.ap-inbox`""",
    "LRC5004": """\
# specs/workloads/triage.ap-inbox/workload.yaml: bumped, nothing else changed
version: 2

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:5:10: warning[LRC5004]: workload triage.ap-inbox was bumped to 2 but nothing changed since 1
    at /version""",
    "LRC5005": """\
# specs/standard/ledgerrate.yaml (methodology 1.0): `synthesize` removed from primitives
primitives:
  - {id: extract}
  - {id: classify}

lrc reports:
  specs/standard/ledgerrate.yaml:5:10: error[LRC5005]: the primitive taxonomy differs from ledgerrate.v2 within methodology 1.x
    at /primitives
    note: removed: synthesize
    hint: keep the primitives of methodology 1.x, or move to methodology 2.0""",
    "LRC5006": """\
# generated/ledger.jsonl, edited by hand
{"kind": "workload", "id": "triage.ap-inbox", "version": 1

lrc reports:
  generated/ledger.jsonl:1:1: error[LRC5006]: malformed ledger line
    hint: the ledger is machine-written and append-only; restore it from version control""",
    "LRC5101": """\
# runtime/workloads/triage_ap_inbox/grading.py: the validator's logic changed
COMPONENT_ID = "triage.ap-inbox.grading"
COMPONENT_VERSION = 1
MIN_CORRECT = 18    # was 19

lrc reports:
  runtime/workloads/triage_ap_inbox/grading.py:26:21: error[LRC5101]: code component triage.ap-inbox.grading changed but its version is still 1
    note: changed: runtime/workloads/triage_ap_inbox/grading.py
    hint: run `lrc bump triage.ap-inbox.grading` (then update the references that pin triage.ap-inbox.grading.v1)

Comments, formatting and docstrings do not count; a change in a module it imports does.""",
    "LRC5102": """\
# runtime/workloads/triage_ap_inbox/grading.py (the ledger records versions 1 and 2)
COMPONENT_VERSION = 1

lrc reports:
  runtime/workloads/triage_ap_inbox/grading.py:26:21: error[LRC5102]: code component triage.ap-inbox.grading declares version 1, lower than the recorded 2
    hint: versions only move forward: use 3 (`lrc bump triage.ap-inbox.grading`)""",
    "LRC5103": """\
# runtime/workloads/triage_ap_inbox/grading.py (v1 and v2 recorded; v1 declared again, other code)
COMPONENT_VERSION = 1

lrc reports:
  runtime/workloads/triage_ap_inbox/grading.py:26:21: error[LRC5103]: code component triage.ap-inbox.grading reuses version 1, recorded with other content (latest recorded: 2)
    note: changed: runtime/workloads/triage_ap_inbox/grading.py
    hint: set the version to 3 with `lrc bump triage.ap-inbox.grading`""",
    "LRC5104": """\
# runtime/workloads/triage_ap_inbox/grading.py: only a comment changed, yet bumped
COMPONENT_VERSION = 2   # tidied the comments

lrc reports:
  runtime/workloads/triage_ap_inbox/grading.py:26:21: warning[LRC5104]: code component triage.ap-inbox.grading was bumped to 2 but nothing changed since 1""",
    # -- 6xxx: methodology policy --------------------------------------------------------------
    "LRC6001": """\
# specs/editions/demo.yaml
models:
  - id: openai/gpt-4o-mini
    role: candidate
pricing: {}         # no entry for openai/gpt-4o-mini

lrc reports:
  specs/editions/demo.yaml:31:9: error[LRC6001]: model 'openai/gpt-4o-mini' has no frozen price
    at /models/3/id
    hint: add pricing.openai/gpt-4o-mini with input/output prices, as_of and source (an explicit "0" if it is free)

`lrc pricing snapshot openai/gpt-4o-mini` prints a block to review and paste.""",
    "LRC6002": """\
# specs/editions/demo.yaml: a price for a model that is not in models:
pricing:
  openai/gpt-4o:
    input: "2.50"

lrc reports:
  specs/editions/demo.yaml:60:5: warning[LRC6002]: pricing lists 'openai/gpt-4o', which the edition does not run
    at /pricing/openai~1gpt-4o""",
    "LRC6003": """\
# specs/workloads/triage.ap-inbox/workload.yaml
primitive: classfy

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:7:12: error[LRC6003]: unknown primitive 'classfy'
    at /primitive
    hint: did you mean 'classify'?""",
    "LRC6004": """\
# specs/editions/demo.yaml: no workload of the edition has an agentic entry
systems:
  - single-shot.v1
  - agentic.v1

lrc reports:
  specs/editions/demo.yaml:15:5: warning[LRC6004]: no workload of this edition runs agentic.v1
    at /systems/1""",
    "LRC6005": """\
# specs/workloads/execute.month-end/workload.yaml
primitive: execute
systems:
  single-shot: {system: single-shot.v1}
  agentic: {system: agentic.v1}

lrc reports:
  specs/workloads/execute.month-end/workload.yaml:82:3: error[LRC6005]: execute workloads run agentic only
    at /systems
    hint: remove every system but `agentic`""",
    "LRC6006": """\
# specs/workloads/triage.ap-inbox/workload.yaml
tools:
  definitions:
    - name: list_emails
    - name: list_emails

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:101:17: error[LRC6006]: tool 'list_emails' is defined twice
    at /systems/agentic/tools/definitions/1/name""",
    "LRC6007": """\
# specs/editions/demo.yaml (the standard's qualifying pass rate is 0.80)
qualifying:
  min_pass_rate: "0.50"

lrc reports:
  specs/editions/demo.yaml:70:18: error[LRC6007]: qualifying pass rate 0.50 is below the standard's 0.80
    at /qualifying/min_pass_rate""",
    "LRC6008": """\
# specs/workloads/triage.ap-inbox/workload.yaml
input:
  mode: text
  attachments:
    - {file: batch.eml, media_type: message/rfc822}

lrc reports:
  specs/workloads/triage.ap-inbox/workload.yaml:48:5: error[LRC6008]: input mode text attaches nothing
    at /input/attachments
    hint: remove attachments, or set input.mode to file or text-or-file""",
    "LRC6009": """\
# specs/editions/demo.yaml
systems:
  - single-shot.v2
  - planner.v1           # specs/systems/planner.yaml has no `implementation:` (data only)

lrc reports:
  specs/editions/demo.yaml:16:5: error[LRC6009]: planner.v1 has no implementation: the runtime cannot run it yet
    at /systems/1
    hint: remove it from the edition; it is specified as data for a later runtime""",
    "LRC6010": """\
# specs/editions/demo.yaml, with no `tasks:` block
systems:
  - agentic.v2
  - direct.v2            # runs reliability tasks only

lrc reports:
  specs/editions/demo.yaml:16:5: error[LRC6010]: direct.v2 runs reliability tasks only, and this edition lists none
    at /systems/1
    hint: its workloads run on single-shot and agentic; add tasks (tasks.dev / tasks.test) or remove it""",
    "LRC6012": """\
# specs/systems/capped.yaml (mode: agentic), listed by an edition that has no tasks
budget:
  max_tool_calls: 10

lrc reports:
  specs/editions/budgeted.yaml:21:5: warning[LRC6012]: capped.v1's budget is never applied in this edition: a system's budget bounds the task runs it makes, and here it makes none
    at /systems/2
    hint: workload runs are bounded by the system's max_steps alone; remove the system's `budget`, or run the edition's tasks on it""",
    "LRC6011": """\
# specs/editions/demo.yaml
models:
  - id: lrc/oracle
    role: flagship               # the oracle writes the answer key: a calibration check, never scored

lrc reports:
  specs/editions/demo.yaml:29:11: error[LRC6011]: lrc/oracle cannot take the role 'flagship'
    at /models/0/role
    hint: its role is infrastructure-check: a calibration check is never scored""",
    "LRC6101": """\
# three workloads of three different primitives, each with grading.kind: judged
grading:
  kind: judged

lrc reports:
  specs/workloads/synthesize.memo/workload.yaml:70:9: error[LRC6101]: 3 primitives are graded by a judge (classify, generate, synthesize); at most 2 may be
    at /grading/kind
    hint: at least 5 of 7 primitives are graded deterministically (seed §1.3)""",
    "LRC6102": """\
# specs/workloads/generate.variance-commentary/workload.yaml
grading:
  kind: hybrid
  checks: []          # no deterministic sub-check
  judge: {rubric: variance-commentary.v1}

lrc reports:
  specs/workloads/generate.variance-commentary/workload.yaml:64:3: error[LRC6102]: a hybrid workload needs at least one blocking deterministic sub-check
    at /grading/checks
    hint: a deterministic fail is a fail regardless of the judge score (seed §5.2)""",
    "LRC6103": """\
# specs/editions/2026-12.yaml runs a judged workload but has no `judge:` block
workloads:
  - generate.variance-commentary.v1

lrc reports:
  specs/editions/2026-12.yaml:14:5: error[LRC6103]: generate.variance-commentary.v1 is judged but the edition fixes no judge
    at /workloads/0
    hint: add judge: {model: <provider/model>, sampling: {temperature: 0}} and price it""",
    "LRC6104": """\
# specs/editions/2026-12.yaml
human_review:
  spot_check_rate: "0.10"
  disagreement_threshold: "0.10"

lrc reports:
  specs/editions/2026-12.yaml:80:20: error[LRC6104]: spot-check rate 0.10 is below the standard's 0.20
    at /human_review/spot_check_rate""",
    "LRC6105": """\
# specs/editions/2026-12.yaml: a prompt tweak for one model
models:
  - id: anthropic/claude-haiku-4-5
    system_prompt: Think step by step.

lrc reports:
  specs/editions/2026-12.yaml:40:5: error[LRC6105]: model-specific prompt 'system_prompt' is not allowed: prompts are identical across models
    at /models/3/system_prompt
    hint: seed §3: no model-specific tuning; document a structural provider difference in provider_exception""",
    "LRC6106": """\
{# specs/workloads/triage.ap-inbox/prompts/single-shot.user.j2: the sample answer leaks #}
Hint: the first email is a {{ "dunning_notice" }}.

lrc reports:
  specs/workloads/triage.ap-inbox/prompts/single-shot.user.j2: error[LRC6106]: the rendered sample prompt contains expected answer value(s): 'dunning_notice'
    note: used by triage.ap-inbox.v1 at /systems/single-shot/prompts/user
    hint: a prompt may show the input, never the answer (seed 000, inclusion rule 5)""",
    "LRC6107": """\
# specs/editions/2026-12.yaml
tasks:
  dev:
    - month-end.close-a.v1
  test:
    - month-end.close-a.v1

lrc reports:
  specs/editions/2026-12.yaml:95:7: error[LRC6107]: month-end.close-a.v1 is a development task; it cannot be in a test split
    at /tasks/test/0
    hint: move it to tasks.dev, or use a task that was never used for development""",
    "LRC6108": """\
# specs/workloads/reconcile.ledger/workload.yaml
grading:
  checks:
    - check: reconcile.ledger.grading.v1
      failure_category: financial-incorrectnes

lrc reports:
  specs/workloads/reconcile.ledger/workload.yaml:75:25: error[LRC6108]: unknown failure category 'financial-incorrectnes'
    at /grading/checks/0/failure_category
    hint: did you mean 'financial-incorrectness'?""",
    "LRC6109": """\
# specs/rubrics/variance-commentary.yaml
scale: {min: 1, max: 5}
pass_threshold: 7

lrc reports:
  specs/rubrics/variance-commentary.yaml:12:17: error[LRC6109]: pass threshold 7 is outside the scale 1..5
    at /pass_threshold""",
    # -- 7xxx: generated files -----------------------------------------------------------------
    "LRC6110": """\
# specs/editions/demo.yaml (the standard ledgerrate.v2 states n = 15)
n_per_cell: 5

lrc reports:
  specs/editions/demo.yaml:61:13: error[LRC6110]: n_per_cell 5 is below the standard's n of 15 (ledgerrate.v2)
    at /n_per_cell
    hint: run at least n_per_cell: 15 (one attempt per distinct item, seed §3)""",
    "LRC6111": """\
# specs/systems/agentic.yaml (the standard's max_agentic_steps is 25)
max_steps: 60

lrc reports:
  specs/systems/agentic.yaml:13:12: error[LRC6111]: max_steps 60 exceeds the standard's step cap of 25 (ledgerrate.v2)
    at /max_steps
    hint: set max_steps to at most 25: exceeding the cap is a fail, not a longer run""",
    "LRC6112": """\
# specs/editions/2027-01.yaml: the commitment edition 2026-10 (recorded in generated/ledger/) used
seed:
  policy: held-out
  commitment: sha256:abababababababababababababababababababababababababababababababab

lrc reports:
  specs/editions/2027-01.yaml:69:15: error[LRC6112]: the held-out seed commitment was already committed to by 2026-10.v1
    at /seed/commitment
    hint: make a fresh seed with `lrc seed new` (seed §7: datasets regenerate each edition from fresh seeds)""",
    "LRC6113": """\
# specs/editions/2026-12.yaml: the judge is an OpenAI model and so is a flagship under evaluation
judge:
  model: openai/gpt-4.1
  sampling: {temperature: 0}

lrc reports:
  specs/editions/2026-12.yaml:52:10: error[LRC6113]: the judge openai/gpt-4.1 is of the family of openai/gpt-5 (under evaluation) and the edition fixes no second judge
    at /judge/model
    hint: add judge.second_model: <a model of another family>, priced like every model (seed §5.4)""",
    "LRC6114": """\
# specs/tasks/fa.fix-sign/task.yaml
objective: >-
  One expense in the income statement of model.xlsx carries the wrong sign. Correct that
  formula so it reads =-Inputs!E6, as in expected/model.xlsx.
checks:
  - validator: fa.formula-presence
    params: {file: model.xlsx, cells: [{sheet: IS, row: Operating expenses, pattern: "=-Inputs!{c}6"}]}

lrc reports:
  specs/tasks/fa.fix-sign/task.yaml:14:12: error[LRC6114]: the objective names the file 'expected/model.xlsx', which is not one of the task's inputs or its output
    at /objective
    hint: name only the files the agent receives and the one it hands back; the expected artifact is never shown (seed 000, inclusion rule 5)
  specs/tasks/fa.fix-sign/task.yaml:14:12: error[LRC6114]: the objective spells out '=-Inputs!{c}6', the expected content held by fa.formula-presence
    at /objective
    note: at /checks/0/params/cells/0/pattern
    hint: describe the change to make, never the expected result (seed 000, inclusion rule 5)""",
    "LRC6115": """\
# specs/tasks/fa.fix-sign/task.yaml
checks:
  - validator: fa.conventions
  - validator: fa.unchanged-outside
failure_modes:
  - id: sign-left-wrong
    description: the expense is still shown positive
    observed_by: [fa.identities]      # a validator this task does not run

lrc reports:
  specs/tasks/fa.fix-sign/task.yaml:31:3: error[LRC6115]: no failure mode is observable by the task's checks
    at /failure_modes
    hint: name in observed_by a validator the task runs (fa.conventions, fa.unchanged-outside) for at least one failure mode (seed 000, inclusion rule 3)""",
    "LRC6116": """\
# specs/taxonomies/failure-taxonomy.yaml
rules:
  - id: step-cap
    when: {outcome: step_cap}
    primary: review-burden        # a secondary category where the primary one goes
  - id: made-up
    when: {category: task-incomplete}
    primary: task-incomplete
    secondary: [task-incomplete]  # a primary category in the secondary list

lrc reports:
  specs/taxonomies/failure-taxonomy.yaml:18:14: error[LRC6116]: 'review-burden' is a secondary failure category; a rule's primary takes a primary one
    at /rules/0/primary
    hint: primary categories: artifact-integrity, budget-exceeded, financial-incorrectness, provenance, refusal, task-incomplete, unsafe-action, wrong-classification
  specs/taxonomies/failure-taxonomy.yaml:22:17: error[LRC6116]: 'task-incomplete' is a primary failure category; a rule's secondary list takes a secondary one
    at /rules/1/secondary/0
    hint: secondary categories: format-only, inconsistent-statement, partial-completion, review-burden, tool-misuse, unexpected-change
  specs/taxonomies/failure-taxonomy.yaml:16:3: error[LRC6116]: no rule of failure-taxonomy.v3 gives a primary category to outcome budget_exceeded, refusal, no_answer, invalid_output
    at /rules
    hint: add a rule `when: {outcome: budget_exceeded}` with a primary category""",
    "LRC6117": """\
# specs/editions/demo.yaml
errata:
  - date: "2026-12-01"
    note: fixed a typo in the footer

lrc reports:
  specs/editions/demo.yaml:102:3: error[LRC6117]: errata are no longer written inside the edition: adding one would change its plan digest
    at /errata
    hint: move each entry to specs/errata/E-demo-NNN.yaml (kind: erratum, naming this edition's plan digest) and leave `errata: []`""",
    "LRC7001": """\
$ lrc compile --check      # after editing generated/demo/plan.lock by hand, or a spec without recompiling

lrc reports:
  generated/demo/plan.lock: error[LRC7001]: generated/demo/plan.lock is out of date
    hint: run `lrc compile` and commit generated/""",
    "LRC7002": """\
$ rm generated/demo/prompts/triage.ap-inbox.v1/agentic.user.sample.txt
$ lrc compile --check

lrc reports:
  generated/demo/prompts/triage.ap-inbox.v1/agentic.user.sample.txt: error[LRC7002]: generated/demo/prompts/triage.ap-inbox.v1/agentic.user.sample.txt is missing
    hint: run `lrc compile` and commit generated/""",
    "LRC7003": """\
$ git rm specs/editions/old-edition.yaml     # generated/old-edition/ stays behind
$ lrc compile --check

lrc reports:
  generated/old-edition/plan.lock: error[LRC7003]: generated/old-edition/plan.lock would not be produced by `lrc compile`
    hint: run `lrc compile` (it removes stale generated files) and commit""",
    "LRC7004": """\
$ lrc bump triage.ap-inbox && lrc compile --check     # the new version is not in the ledger yet

lrc reports:
  generated/ledger.jsonl: error[LRC7004]: generated/ledger.jsonl is out of date
    hint: run `lrc compile` and commit generated/""",
    "LRC7005": """\
$ ln -s /home/me generated/demo     # committed in a pull request
$ lrc compile

lrc reports:
  generated/demo: error[LRC7005]: generated/demo is a symlink; lrc writes generated files only into real folders
    hint: remove the link (`rm generated/demo`, which leaves its target alone) and run `lrc compile`""",
    # -- 8xxx: bump ----------------------------------------------------------------------------
    "LRC8001": """\
$ lrc bump triage.ap-inbx

lrc reports:
  lrc: error[LRC8001]: no spec or code component has id 'triage.ap-inbx'
    hint: did you mean 'triage.ap-inbox'?""",
    "LRC8002": """\
# specs/systems/single-shot.yaml: the version is written in a form lrc cannot edit alone
version: 0x1

lrc reports:
  specs/systems/single-shot.yaml:4:10: error[LRC8002]: could not find the version token 1 at line 4

Write the version as a plain integer (`version: 1`) and run `lrc bump` again; the file was not touched.""",
    "LRC8101": """\
$ lrc diff --against no-such-branch

lrc reports:
  lrc: error[LRC8101]: unknown git ref 'no-such-branch' (not a commit, branch or tag of main)""",
    "LRC8102": """\
$ lrc diff --against v0.1   # a tag whose specs this lrc refuses

lrc reports:
  v0.1:specs/systems/single-shot.yaml:3:1: error[LRC2003]: unknown field 'timeout'
  lrc: error[LRC8102]: the specs at v0.1 do not compile with this lrc
    hint: their errors are listed with paths written REF:path""",
    "LRC8103": """\
$ lrc diff --against old.lock   # old.lock was edited by hand after `lrc compile` wrote it

lrc reports:
  lrc: error[LRC8103]: old.lock was modified after compilation: section edition differs from what was compiled (sha256:76d8… -> sha256:09f3…); root digest differs: …
    hint: compare against a lock as `lrc compile` wrote it (e.g. from git), or against a git ref""",
    "LRC8201": """\
$ lrc render triage.ap-inbox --system single-shot --edition nope

lrc reports:
  lrc: error[LRC8201]: no lock for edition 'nope' (generated/nope/plan.lock); run `lrc compile`""",
    "LRC8202": """\
$ lrc render triage.ap-inbox --system single-shot --model lrc/orcle

lrc reports:
  lrc: error[LRC8202]: the edition does not run model 'lrc/orcle'; did you mean lrc/oracle? (it runs: lrc/baseline, lrc/null, lrc/oracle)""",
    "LRC8203": """\
$ lrc render triage.ap-inbox --system single-shot --edition 2026-12 --item 0   # held-out edition, no --seed-file

lrc reports:
  lrc: error[LRC8203]: this edition has a held-out seed: pass --seed-file with the seed whose commitment is locked""",
    "LRC8204": """\
$ lrc render triage.ap-inbox --system single-shot --item 999

lrc reports:
  lrc: error[LRC8204]: item 999 is outside this edition's items: 0..14 (n_per_cell = 15)""",
    "LRC8301": """\
$ lrc execute specs/editions/demo.yaml --out runs/demo

lrc reports:
  lrc: error[LRC8301]: specs/editions/demo.yaml is an edition spec, not a plan.lock; pass its lock: generated/demo/plan.lock
    hint: lrc execute generated/demo/plan.lock --out ...""",
    "LRC8311": """\
# run.yaml, given to `lrc execute generated/2026-12/plan.lock --profile run.yaml ...`
kind: run-profile
models:
  openai/gpt-4.1-mni:
    max_concurrency: 8

lrc reports:
  run.yaml:4:3: error[LRC8311]: the run profile sets model 'openai/gpt-4.1-mni', which the plan does not run
    at /models/openai~1gpt-4.1-mni
    hint: did you mean openai/gpt-4.1-mini? the plan runs: anthropic/claude-haiku-4-5, anthropic/claude-sonnet-4-5, openai/gpt-4.1, openai/gpt-4.1-mini""",
    "LRC8312": """\
$ lrc execute generated/2026-12/plan.lock --out runs/2026-12 --max-concurrency openai/gpt-4.1=lots

lrc reports:
  lrc: error[LRC8312]: --max-concurrency openai/gpt-4.1=lots: expected integer, found "lots"
    hint: Upper bound of this model's concurrent requests; lrc backs off below it on 429s and recovers. Default 4.""",
    "LRC8313": """\
$ lrc execute generated/demo/plan.lock --out runs/demo --profile run.yml   # the file is run.yaml

lrc reports:
  run.yml: error[LRC8313]: cannot read the run profile: No such file or directory
    hint: --profile takes a YAML file (see schemas/run-profile.schema.json and docs/profiles/ for an example)""",
    "LRC8314": """\
$ lrc execute generated/demo/plan.lock --out runs/demo --api-base lrc/oracle=http://127.0.0.1:8000/v1   # a warning: it runs

lrc reports:
  lrc: warning[LRC8314]: --api-base lrc/oracle=... has no effect: lrc/oracle is an embedded reference model (it runs in-process, with no endpoint); the run's operating record keeps the setting as given
    hint: lrc's embedded models (lrc/...) run inside the lrc process: they are never called over HTTP and read no key. Remove the setting; max_concurrency still applies to them""",
}


def section(code: str) -> str:
    """The example block `lrc explain` appends (empty for a code without an example)."""
    example = EXAMPLES.get(code)
    if example is None:
        return ""
    body = "\n".join(("    " + line) if line else "" for line in example.splitlines())
    return f"\nExample:\n\n{body}\n"
