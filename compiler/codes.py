"""Every diagnostic code lrc can emit, with a title and a long explanation.

Codes are stable: tests pin them and users search for them. `lrc explain CODE` prints the
entry. Ranges: 1xxx loading YAML, 2xxx schema, 3xxx references and files, 4xxx prompt
templates, 5xxx the version gate, 6xxx methodology policy, 7xxx generated files, 80xx bump,
81xx diff, 82xx render, 83xx execute and report arguments. `lrc explain --list` prints every
code with its title, grouped by these ranges (RANGES).
"""

from __future__ import annotations

from typing import NamedTuple


class Code(NamedTuple):
    title: str
    explanation: str


CODES: dict[str, Code] = {
    "LRC1001": Code("YAML syntax error", "The file is not well-formed YAML. Fix the syntax at the reported position."),
    "LRC1002": Code("duplicate key", "A mapping repeats a key. YAML loaders disagree on which value wins, so lrc refuses it; keep one."),
    "LRC1003": Code("explicit YAML tag", "Tags such as `!!python/object` or `!custom` are refused in specs: specs are untrusted input and plain data only."),
    "LRC1004": Code("anchor or alias", "Anchors (`&a`), aliases (`*a`) and merge keys (`<<`) are refused: they enable alias bombs and hide what a value is. Repeat the value or reference another spec by id."),
    "LRC1005": Code("YAML directive", "`%YAML` and `%TAG` directives change how later text is typed; specs are always YAML 1.2 without directives."),
    "LRC1006": Code("spec too large", "The file exceeds a size, nesting-depth or node-count cap that protects the compiler from hostile input."),
    "LRC1007": Code("not UTF-8", "Spec files and referenced files must be UTF-8 text."),
    "LRC1008": Code("not one mapping", "A spec file holds exactly one YAML document whose top level is a mapping."),
    "LRC1009": Code("missing schema modeline", "Spec files start with `# yaml-language-server: $schema=<path>` so editors complete and check them."),
    "LRC2001": Code("wrong type", "A value has the wrong JSON type for its field. Decimal money and rates are strings: quote them (`\"0.15\"`)."),
    "LRC2002": Code("missing field", "A required field is absent. The schema of each spec kind (schemas/<kind>.schema.json) lists what every spec must state explicitly."),
    "LRC2003": Code("unknown field", "A field is not part of this kind of spec. It is often a typo; the hint suggests the closest known field."),
    "LRC2004": Code("value not allowed", "A value is not one of the allowed values for its field."),
    "LRC2005": Code("bad format", "A value does not match the required pattern or format (ids, references, dates, decimals)."),
    "LRC2009": Code("schema constraint", "A value breaks a schema constraint (length, range, count, uniqueness)."),
    "LRC2010": Code("operating setting in an edition", "`api_base`, `api_key_env` and `max_concurrency` say how a model is reached in one execute, not what is measured, so they are not part of an edition (DESIGN §3: the lock freezes the measurement, never how a run is operated). Changing them must never force a bump of a published edition. They come from a run profile (`lrc execute PLAN --profile run.yaml`, schemas/run-profile.schema.json) or the flags `--api-base MODEL=URL`, `--api-key-env MODEL=VAR`, `--max-concurrency MODEL=N`; the hint shows the profile entry for the value found. Removing them from an edition changes its content, so the edition is bumped once (`lrc bump EDITION`)."),
    "LRC3001": Code("unknown reference", "A reference names a spec or code component that does not exist at that version. References pin versions (`triage.ap-inbox.v1`)."),
    "LRC3002": Code("unpinned reference", "A reference must pin a version: write `name.vN`, never a bare name or `latest`."),
    "LRC3003": Code("duplicate spec id", "Two spec files declare the same kind and id. One file per spec; its version changes in place."),
    "LRC3004": Code("bad file reference", "A referenced file is missing, outside specs/, a symlink, not a regular file, or too large. A task's checked-in input artifact must be a relative path inside the task's own folder (no '..', no absolute path, no symlink), at most 2 MiB (the lock inlines it), and every input artifact needs its own file name; a generated one is named by the bare file name its generator writes."),
    "LRC3005": Code("invalid JSON file", "A referenced JSON file (an output schema) does not parse."),
    "LRC3006": Code("invalid JSON Schema", "A referenced output schema or tool parameter schema is not a valid JSON Schema (Draft 2020-12)."),
    "LRC3007": Code("sample item does not match", "A workload's `sample_item` does not follow its own `item_schema`; prompts would be rendered from data the runtime never produces."),
    "LRC3008": Code("inconsistent reference", "A reference points at the wrong thing for its place, e.g. the `agentic` entry of a workload pins a system whose id is not `agentic`."),
    "LRC3009": Code("bad code component", "A runtime module that declares COMPONENT_ID/COMPONENT_VERSION cannot be read or declares them wrongly."),
    "LRC3010": Code("unknown validator", "A task's check or failure mode names a validator id that the registry of artifact validators (lrc.runtime.lock.artifact_validators, implemented by the code component lrc.artifact-validators) does not define. The compiler reads that registry, never the validators themselves, so `lrc compile` stays free of the runtime's Office libraries. The hint suggests the closest id; `fa.*` ids are seed 000's validator families."),
    "LRC3011": Code("invalid validator parameters", "A task's check gives its validator parameters that break the validator's parameter schema in the registry (lrc.runtime.lock.artifact_validators): an unknown key, a wrong type, a missing required key; or a file parameter (`file`, `model_file`) names a file that is neither one of the task's input artifacts nor its output. A task whose inputs are all checked in states every required parameter; a task with a generated input states only the parameters that do not depend on the seed (the generator supplies the seeded ones, such as the periods and the permitted region), so `required` is not enforced for it."),
    "LRC3020": Code("regex the linear-time engine cannot use", "A `pattern` or `patternProperties` name in an item, output, tool-parameter or answer-format schema does not compile with lrc's linear-time regex engine (the Rust `regex` crate, ECMA-262 syntax): it uses a backreference (`\\1`, `\\k<name>`) or look-around (`(?=`, `(?!`, `(?<=`, `(?<!`), is not a valid regular expression, or compiles larger than 64 KiB (the engine's cost is program size times value length). Specs and model answers are untrusted, so lrc never evaluates a spec's regex with a backtracking engine, where a nested quantifier such as `(a+)+$` against a near-matching value takes time exponential in its length. Rewrite the pattern without those features (list the alternatives explicitly, or check the relation between parts in a validator); the pattern is reported where it is written, and for an output schema file the note gives its JSON pointer inside that file. Separately, no string longer than 4,096 characters is ever matched against a spec's regex: a sample item, generated item or model answer with a longer string under a `pattern` (or a longer object key where `patternProperties` applies) fails that check with \"string of N characters exceeds the 4,096-character limit for pattern checks\" at its JSON pointer."),
    "LRC3021": Code("maxLength above the pattern-check limit", "A schema object in an item, output, tool-parameter or answer-format schema has a `pattern` and a `maxLength` above 4,096. lrc never matches a string longer than 4,096 characters against a spec's regex (a linear-time engine still costs program size times value length, and values come from models), so such a string fails its check with \"string of N characters exceeds the 4,096-character limit for pattern checks\" whatever the schema says. The schema would promise what lrc does not check: lower `maxLength` to 4,096 or less, or drop the `pattern` and check the value in a validator."),
    "LRC3022": Code("erratum names another plan", "An erratum (specs/errata/<id>.yaml) corrects the published results of one plan: its `plan_digest` is the `root_digest` of the plan.lock the runs were made with (the run folder's summary.json `plan_digest`). When its `edition` is the edition's current version, the lock compiled now must have that root digest; when the edition has moved on, `lrc regrade` checks the digest against the run folder's lock."),
    "LRC3023": Code("regrade_with cannot correct that component", "`regrade_with: <component>.vN` re-grades stored outputs with corrected code and calls no model, so it may only replace a grading component the corrected plan locked: a workload's checks (grader, validators), the output contract or the analysis code. The named version must be the running code (else LRC3001) and newer than the locked one: fix the code, `lrc bump` the component, then name the new version. Generators, tools, systems and reference models shape what the model saw or did: correcting them needs new runs, not an erratum."),
    "LRC3024": Code("excluded item not in the plan", "An erratum's `exclude` names a workload the corrected edition does not run, or excludes one item twice. Item ids come from the seeded generators, which the compiler never runs; `lrc regrade` refuses an item the run folder does not hold (exit 1)."),
    "LRC3025": Code("price correction does not apply", "An erratum's `price` corrects the frozen price of a model (or judge) of the corrected edition, replacing its pricing block whole with decimal strings (never floats). The model must be priced by the edition, corrected once per erratum, and the corrected block must differ from the locked one."),
    "LRC4001": Code("template syntax error", "A prompt template does not parse as jinja2."),
    "LRC4002": Code("undefined template variable", "A prompt template uses a variable the workload does not provide. Templates see `task` (the spec's task block) and `item` (one dataset item)."),
    "LRC4003": Code("template not allowed", "A prompt template tried something the sandbox forbids (attribute escapes, mutation, random, clock)."),
    "LRC4004": Code("template output too large", "A rendered prompt exceeds the size cap."),
    "LRC5001": Code("changed without version bump", "The spec's content differs from what was recorded for the same id and version. Any change to dataset design, prompts or pass criteria bumps the version (seed §7): run `lrc bump ID`."),
    "LRC5002": Code("version went backwards", "The spec declares a version lower than one already recorded in the ledger. Versions only move forward."),
    "LRC5003": Code("recorded version reused", "The spec declares an older version number that was recorded with different content. A published id@version always means the same content."),
    "LRC5004": Code("bump without change", "The version was bumped but the content equals the previous version's. Harmless, but a reader will look for a change that is not there."),
    "LRC5005": Code("primitive taxonomy changed", "The seven primitives are frozen for every 1.x methodology. Changing them needs a new methodology major version."),
    "LRC5006": Code("ledger damaged", "generated/ledger.jsonl is append-only. A line is malformed, or a recorded entry was removed or changed."),
    "LRC5101": Code("code changed without version bump", "A generator, validator, tool, system or reference model changed behaviour (its normalized source or a project module it imports changed) but its COMPONENT_VERSION did not. Bump it with `lrc bump COMPONENT_ID` and update the specs that pin it."),
    "LRC5102": Code("code version went backwards", "A code component declares a version lower than one already recorded."),
    "LRC5103": Code("code version reused", "A code component declares an older version that was recorded with a different fingerprint."),
    "LRC5104": Code("code bump without change", "A code component's version was bumped but its fingerprint equals the previous version's."),
    "LRC6001": Code("model without a price", "Every model in an edition, judge included, needs a frozen price for every token class it can bill. Unknown prices are errors, never $0."),
    "LRC6002": Code("price for an unknown model", "The pricing table lists a model the edition does not run."),
    "LRC6003": Code("unknown primitive or function", "A workload names a primitive or business function that the standard does not define, or a function that is not active."),
    "LRC6004": Code("system unused", "The edition lists a system that none of its workloads can run."),
    "LRC6005": Code("execute workloads are agentic-only", "`execute.*` workloads run agentic only (seed §3)."),
    "LRC6006": Code("tool definitions inconsistent", "Tool names must be unique, and a tool's parameters must be a JSON Schema object."),
    "LRC6007": Code("edition inconsistent", "The edition's settings contradict each other or the standard (e.g. a workload not in the standard's function, a threshold outside 0..1)."),
    "LRC6008": Code("input mode inconsistent", "A workload's input mode, attachments and prompts disagree, or an edition runs a file-only workload on a model that does not accept files. Mode `file` and `text-or-file` need `input.attachments` and a `user_file` prompt for every system; mode `text` has neither."),
    "LRC6009": Code("system not executable", "The edition lists a system that has no implementation (a system spec without `implementation:` is data only). Remove it from the edition until its implementation exists."),
    "LRC6010": Code("task-only system without tasks", "The edition lists direct or orchestrated, seed 000's two configurations, which run an edition's reliability tasks only (workloads run on single-shot and agentic), but it lists no task. Add tasks or remove the system."),
    "LRC6011": Code("model in a role it cannot take", "The calibration of an edition rests on two embedded models whose scores are known in advance: `lrc/oracle` (role infrastructure-check) writes the answer key and must pass n/n, and `lrc/null` (role floor-check) does nothing and must pass 0/n. Neither is ever scored, and no other model can stand in for them, because no other model's expected score is known. `lrc/baseline` is the deterministic heuristic (role baseline). The demo's reference candidates `lrc/careful` and `lrc/cheap` are scored stand-ins for a flagship and a cheap model, with declared demo prices (role flagship or candidate), never calibration checks."),
    "LRC6012": Code("system budget that is never applied", "A system's `budget` (max_tool_calls, max_wall_seconds, max_cost_usd) bounds the task runs (seed 000) it makes, together with each task's own budget: every limit is the smaller of the two (lrc.runtime.tasks.runner.effective_budget), and the task prompt shows the model that budget. Tasks run on an edition's direct and orchestrated systems, or on its agentic ones when it lists neither; workload runs are bounded by their system's max_steps alone. A budget on a system that makes no task run in the edition would be frozen in the lock and read by reviewers as a limit, yet bound nothing: lrc warns at the edition's entry for that system."),
    "LRC6101": Code("too few deterministic primitives", "At least 5 of the 7 primitives are graded by deterministic checks (seed §1.3): no more than two primitives may have judged or hybrid workloads."),
    "LRC6102": Code("judged workload without deterministic sub-checks", "Hybrid and judged workloads run deterministic sub-checks first (a deterministic fail is a fail regardless of the judge) and name the rubric the judge applies (seed §5.2)."),
    "LRC6103": Code("judged workload without a judge", "An edition that runs a hybrid or judged workload fixes and discloses its judge model (seed §5.1), priced like every other model."),
    "LRC6104": Code("human spot-check rate too low", "Judged runs get a human spot-check on at least the standard's minimum share (20%, seed §5.3), and the edition states the judge-human disagreement threshold that triggers a full regrade."),
    "LRC6105": Code("model-specific prompt", "Prompts are identical across models and published verbatim (seed §3). A provider's structural difference is documented in the model's provider_exception, never as a different prompt."),
    "LRC6106": Code("expected answer in a prompt", "A value of the workload's sample_answer that is not in the sample item or the task constants appears in a rendered sample prompt: the expected artifact must never be embedded in the prompt (seed 000, inclusion rule 5)."),
    "LRC6107": Code("development task in a test split", "Tasks used while developing prompts or validators belong to the development set and can never be counted as held-out test tasks (seed 000) — not now, and not after their split was changed."),
    "LRC6108": Code("unknown failure category", "A workload check, system, task or a rule of the failure taxonomy names a failure category that the failure taxonomy does not define (or, for an edition, that the taxonomy it uses does not define). The runtime writes only taxonomy ids, so an unknown label is refused at compile time; a known id in the wrong tier is LRC6116."),
    "LRC6109": Code("rubric inconsistent", "A rubric's pass threshold lies outside its scale, or its answer format does not cover every criterion."),
    "LRC6110": Code("fewer runs per cell than the standard's n", "The standard states n independent runs per cell, one per distinct dataset item (seed 001 §3: n = 15), so that a pass rate reflects coverage across item difficulty and its interval is as tight as the standard promises. An edition's n_per_cell may be larger, never smaller, than its pinned standard's policy.n_per_cell. The demo edition runs the full n too (its reference models cost nothing)."),
    "LRC6111": Code("step cap above the standard's", "A tool loop runs at most the standard's max_agentic_steps requests (seed 001 §3: 25; exceeding the cap is a fail, never a longer run). Every system that loops over tools (agentic, direct, orchestrated) and every task budget is bound by it; a system whose max_steps is higher would let some models take more attempts than the standard allows."),
    "LRC6112": Code("seed not fresh", "Datasets regenerate each edition from fresh seeds (seed 001 §7). An edition's held-out seed commitment may not equal the commitment of another edition -- current, or any version recorded in generated/ledger/ -- nor the commitment of a seed another edition publishes: those items (and, once that edition closes, its seed) are public, so nothing would be held out. An edition's own later versions keep their commitment. A public seed that another edition also uses is a warning: nothing is leaked, but both editions run the same items. Make a new seed with `lrc seed new`."),
    "LRC6113": Code("judge of an evaluated model's family without a second judge", "When a model under evaluation is of the judge's family (its declared `family`, else its provider prefix, or listed in `judge.same_family_as`), the report discloses it and a second judge grades a seeded sample of at least 20% of each judged workload's judged runs (seed 001 §5.4). The edition must fix that second judge (`judge.second_model`, priced like every model). The embedded reference judge lrc/judge has no family: it scores from the answer key."),
    "LRC6114": Code("expected artifact in a task's objective", "Seed 000, inclusion rule 5: the expected artifact is not embedded in the prompt. A task's objective is what the agent reads, so lrc refuses what it can compute from the spec: (a) the objective names a file (a name with a document or data extension: .xlsx, .pptx, .csv, .json, ...) that is neither one of the task's input artifacts nor its output -- an oracle, `expected/model.xlsx` or `solution.xlsx`; (b) the objective spells out a value that the task's checks hold as the expected artifact's content, such as a formula-presence pattern (the exact formula to write), compared without spaces, `$` and case, with the `{c}`/`{p}` column placeholders matching any column. Not computable at compile time, and so left to the runtime and to review: the values of a generated oracle (they exist only once the seed generates them) and anything inside a checked-in binary file (lrc hashes those, never decodes them). Describe the change to make, never its result."),
    "LRC6115": Code("no observable failure mode", "Seed 000, inclusion rule 3: a task enters the test set only when at least one meaningful failure mode is observable. lrc requires that at least one of the task's `failure_modes` names, in `observed_by`, a validator that the task's own `checks` run: a failure mode seen by no check of the task is one only a reviewer might notice. Failure modes that only review can see are allowed beside it (leave `observed_by` out)."),
    "LRC6116": Code("failure category in the wrong tier, or rules that leave a run uncategorized", "Seed 000: every failed or partial run gets one primary category and any secondary ones, derived by the failure taxonomy's declared `rules` (lrc.runtime.failures) and frozen in the lock. lrc refuses, at the value: a system's `failure_categories` entry (an outcome's category) or a rule's `primary` that is a secondary category; a rule's `secondary` entry that is a primary category; two rules with one id; rules that give no primary category to some run outcome (step_cap, budget_exceeded, refusal, no_answer, invalid_output) or to the verdicts fail and partial; a taxonomy without rules; and a check of an edition that declares a `failure_category` no rule with a primary category matches (it would fall through to the catch-all and its label would be lost). An id that is in no tier at all is LRC6108. The hint lists the ids of the tier the place takes."),
    "LRC6117": Code("errata inside an edition", "Errata used to be a list inside the edition spec; adding one changed the edition's plan digest, after which `lrc report` refused every run folder of the published plan and every run had to be paid again. An erratum is now its own spec, specs/errata/<id>.yaml (schemas/erratum.schema.json), naming the plan digest it corrects, compiled to generated/errata/<id>.json and applied with `lrc regrade RUN_DIR --erratum ID --out NEW_DIR`. The edition's `errata:` field is deprecated and must stay `[]`."),
    "LRC7001": Code("generated file stale", "A file under generated/ differs from what `lrc compile` would write. Run `lrc compile` and commit the result. When several generated files differ (missing, out of date or no longer produced), `lrc compile --check` says so once, `generated/ is stale`, and lists the files in the notes: they have one cause and one fix."),
    "LRC7002": Code("generated file missing", "A file that `lrc compile` would write is missing. Run `lrc compile` and commit the result."),
    "LRC7003": Code("unexpected generated file", "generated/ holds a file `lrc compile` would not write (e.g. an edition that was removed)."),
    "LRC7004": Code("ledger not up to date", "The version ledger lacks entries for what is compiled now. Run `lrc compile` and commit generated/ledger.jsonl."),
    "LRC7005": Code("symlink where lrc writes", "generated/ (or a folder or file in it) or .lrc-cache/ is a symlink. Both arrive in pull requests, and lrc writes into them and removes stale files from them: through a link it would write and delete outside the project. lrc never follows one: a symlink in generated/ is an error and nothing is written; a symlinked .lrc-cache/ is a warning and the compile runs without the cache. Remove the link (`rm PATH` removes the link, not its target); lrc makes real folders."),
    "LRC8001": Code("cannot bump", "`lrc bump` needs the id of one spec or code component that exists."),
    "LRC8002": Code("bump would change more", "Re-reading the file after the edit showed a change beyond the version (or, with `--update-pins`, beyond the pinned values), or the token is written in a form lrc cannot edit alone (a block scalar, an escape), so the file was left untouched. Edit that token by hand."),
    "LRC8101": Code("comparison base unavailable", "`lrc diff --against` names something that cannot be read: a git ref that does not exist (or a folder that is not in a git repository), or an OLD.lock that is missing or is not a plan.lock."),
    "LRC8102": Code("comparison base does not compile", "The specs at the git ref `lrc diff` compares against cannot be read or do not compile with this lrc; their own errors are listed with paths written REF:path. Compare against a ref this lrc can compile, or against a lock."),
    "LRC8103": Code("compared lock was modified", "The OLD.lock given to `lrc diff` fails its own digests: it was edited after `lrc compile` wrote it, so its contents cannot be trusted as a baseline."),
    "LRC8201": Code("no lock to render", "`lrc render` shows prompts from a compiled lock: the edition has no generated/<edition>/plan.lock (run `lrc compile`), or several editions are compiled and none was chosen with --edition."),
    "LRC8202": Code("not run by the edition", "The workload, system or model given to `lrc render` is not part of the edition's lock; the message lists what it runs and the closest name."),
    "LRC8203": Code("lock or seed refused", "The lock fails verification (modified after compilation, another lock format or lrc release, code that no longer matches its fingerprints), or a held-out edition's seed file is missing or does not match its commitment. `lrc execute` would refuse the same."),
    "LRC8204": Code("item cannot be shown", "`lrc render --item N` could not generate that item from the edition's seed (e.g. N is beyond the edition's items, or the generator failed)."),
    "LRC8301": Code("not a plan.lock", "`lrc execute` and `lrc report` run a compiled lock, generated/<edition>/plan.lock, never a spec: the lock freezes prompts, prices, seeds and code fingerprints. Given an edition spec, lrc names its lock, or says that `lrc compile` must write it first. Exit code 2 (a usage error); a file that claims to be a lock and fails verification is refused with exit code 4."),
    "LRC8311": Code("operating setting for a model the plan does not run", "A run profile's `models:` entry or a flag (`--max-concurrency`, `--api-base`, `--api-key-env`) names a model that is not in the plan.lock being executed. Nothing is run: a setting that applies to no model is most often a typo, and an execute with it would silently use the defaults for the model that was meant. The message names the closest model the plan runs and lists them all. Exit code 1."),
    "LRC8312": Code("bad operating flag", "A `--max-concurrency`, `--api-base` or `--api-key-env` value is not `MODEL=VALUE`, or its value breaks the run profile's rule for that setting (schemas/run-profile.schema.json): a concurrency is a whole number from 1 to 1024, an endpoint starts with http:// or https:// and holds no user, password, query or fragment (a URL that could carry a key is refused and not printed: endpoints are recorded in every run manifest), a key variable is an environment variable NAME (A-Z, 0-9, _), never the key itself. Nothing is run; exit code 1."),
    "LRC8313": Code("run profile cannot be read", "The file given to `--profile` is missing, not a regular file, too large (512 KiB) or not UTF-8. Nothing is run; exit code 1. A profile that loads is then checked like a spec: YAML rules (LRC1xxx) and the run profile's schema (LRC2xxx), each error at its line and column."),
    "LRC8314": Code("endpoint setting for an embedded model", "A run profile's `models:` entry or a flag (`--api-base`, `--api-key-env`) sets an endpoint or a key variable for one of lrc's embedded reference models (`lrc/oracle`, `lrc/null`, `lrc/baseline`, the demo candidates, `lrc/judge`). They run inside the lrc process and are never called over HTTP, so the setting changes nothing; the run's operating record still lists it as given, which would suggest otherwise. A warning: the execute runs. Remove the setting (a `max_concurrency` for an embedded model does apply)."),
}


RANGES: tuple[tuple[str, str], ...] = (
    ("LRC1", "1xxx loading YAML"),
    ("LRC2", "2xxx schema"),
    ("LRC3", "3xxx references and files"),
    ("LRC4", "4xxx prompt templates"),
    ("LRC5", "5xxx the version gate"),
    ("LRC6", "6xxx methodology policy"),
    ("LRC7", "7xxx generated files"),
    ("LRC80", "80xx lrc bump"),
    ("LRC81", "81xx lrc diff"),
    ("LRC82", "82xx lrc render"),
    ("LRC83", "83xx lrc execute and lrc report arguments"),
)
"""Code prefix -> heading, as the module docstring lists them; the longest matching prefix wins."""


def range_of(code: str) -> str:
    matches = [(prefix, title) for prefix, title in RANGES if code.startswith(prefix)]
    return max(matches, key=lambda m: len(m[0]))[1] if matches else "other"


def listing() -> str:
    """Every code with its title, grouped by range (`lrc explain --list`)."""
    groups: dict[str, list[str]] = {}
    for code in sorted(CODES):
        groups.setdefault(range_of(code), []).append(f"  {code}  {CODES[code].title}")
    order = [title for _, title in RANGES] + ["other"]
    out = []
    for title in order:
        if title in groups:
            out.append(f"{title}:")
            out.extend(groups[title])
            out.append("")
    out.append("`lrc explain CODE` prints a code's explanation and an example.")
    return "\n".join(out) + "\n"


def explain(code: str) -> str | None:
    entry = CODES.get(code.upper())
    if entry is None:
        return None
    from lrc.compiler.code_examples import section  # one example per code (code_examples.py)
    return f"{code.upper()}: {entry.title}\n\n{entry.explanation}\n" + section(code.upper())
