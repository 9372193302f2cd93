"""Resolving a reliability-protocol task spec (seed 000), and the task inclusion rules lrc
can compute from the spec alone.

Called by resolve.py for every `task` spec: `local` (the spec and its files) and `refs`
(the code and rubric it pins). What is checked, and why each check is where it is:

- input artifacts: a checked-in file is read as bytes, confined to the task's own folder
  (no '..', no absolute path, no symlink), capped at 2 MiB, and hashed (sha256) -- never
  decoded, since an xlsx or pptx is a zip, not text (LRC3004). A generated one names the file
  its pinned generator writes (`lrc.task.<kind>.vN`, LRC3001/LRC3008). The agent receives each
  file under its last path component; two inputs of one name are refused (LRC3004).
- checks: every validator id is in lrc.runtime.lock.artifact_validators (LRC3010) and its
  params follow the registry's schema, in full for a task whose inputs are all checked in,
  without `required` for a task with a generated input (its generator supplies the seeded
  params); a param naming a file names one of the task's own files (LRC3011).
- inclusion rule 3, a meaningful failure mode is observable: at least one failure mode names
  a validator the task's checks run (LRC6115).
- inclusion rule 5, the expected artifact is not embedded in the prompt (the objective is what
  the agent reads). Computable from the spec: (a) the objective names no file but the task's
  inputs and its output -- an oracle, `expected/…` or `solution.xlsx` path is refused; (b) it
  does not spell out a value the checks hold as the expected artifact's content (a
  formula-presence pattern: the exact formula to write), compared without spaces, `$` and
  case, with the `{c}`/`{p}` column and `{r}` row placeholders matching any column or row (LRC6114). Not
  computable at compile time: the values of a generated oracle (they exist only once the
  seed generates them, and the compiler never runs generators) and anything inside a
  checked-in binary file (never decoded).
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from lrc.compiler import schemacheck
from lrc.compiler.load import read_bytes
from lrc.compiler.refs import did_you_mean
from lrc.runtime.lock.artifact_validators import COMPONENT as VALIDATORS_COMPONENT, VALIDATORS, expected_values, partial
from lrc.runtime.lock.tasks import file_sha256

if TYPE_CHECKING:  # resolve imports this module; the types are for readers only
    from lrc.compiler.resolve import Graph, Resolver, Spec

MAX_TASK_ARTIFACT = 2 * 1024 * 1024
"""Cap on a checked-in input artifact: the lock inlines it (base64), so it stays small."""
GENERATOR_PREFIX = "lrc.task."
FILE_TOKEN = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.(?:xlsx|xlsm|xls|pptx|ppt|docx|doc|csv|tsv|json|pdf|txt|xml|zip|sqlite|db|parquet))\b",
                        re.IGNORECASE)
"""A file named in prose: a name (optionally with folders) and a document or data extension."""


def input_name(artifact: dict[str, Any]) -> str:
    """The name the agent receives an input artifact under."""
    return PurePosixPath(artifact["file"]).name


def local(resolver: "Resolver", spec: "Spec") -> None:
    """Artifacts hashed, checks against the registry, rules 3 and 5; sets `normalized`."""
    data = spec.data
    norm = json.loads(json.dumps(data))
    names: dict[str, int] = {}
    for i, artifact in enumerate(data["input_artifacts"]):
        if "generator" in artifact:
            _generated_file(resolver, spec, i, artifact)
        else:
            found = _checked_in(resolver, spec, i, artifact)
            if found is not None:
                norm["input_artifacts"][i]["sha256"], norm["input_artifacts"][i]["size"] = found
        name = input_name(artifact)
        if name in names:
            resolver.diags.error("LRC3004", f"input artifacts {names[name]} and {i} are both received as '{name}'",
                                 **spec.at("input_artifacts", i, "file"), hint="give every input artifact its own file name")
        names.setdefault(name, i)
    generated = any("generator" in a for a in data["input_artifacts"])
    own_files = set(names) | {data["output"]["file"]}
    for i, check in enumerate(data["checks"]):
        _check(resolver, spec, i, check, generated, own_files)
    _observable(resolver, spec)
    _no_expected_artifact_in_objective(resolver, spec, own_files)
    spec.normalized = norm


def refs(resolver: "Resolver", graph: "Graph", spec: "Spec") -> None:
    """The validators' code component, every generator, and the review rubric."""
    comp = resolver._code_ref(spec, ("validators",))
    if comp is not None and comp.id != VALIDATORS_COMPONENT:
        resolver.diags.error("LRC3008", f"validators pins '{spec.data['validators']}', which is not the artifact validators ({VALIDATORS_COMPONENT})",
                             **spec.at("validators"), hint=f"pin {VALIDATORS_COMPONENT}.v<N>")
    for i, artifact in enumerate(spec.data["input_artifacts"]):
        if "generator" not in artifact:
            continue
        gen = resolver._code_ref(spec, ("input_artifacts", i, "generator"))
        if gen is not None and not gen.id.startswith(GENERATOR_PREFIX):
            resolver.diags.error("LRC3008", f"generator '{artifact['generator']}' is not a task generator ({GENERATOR_PREFIX}<kind>)",
                                 **spec.at("input_artifacts", i, "generator"),
                                 hint="task kinds are the lrc.task.* components of runtime/artifacts/generators/")
    resolver._spec_ref(graph, spec, ("review_rubric",), "rubric")


# -- input artifacts -------------------------------------------------------------------------

def _generated_file(resolver: "Resolver", spec: "Spec", i: int, artifact: dict[str, Any]) -> None:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", artifact["file"]):
        resolver.diags.error("LRC3004", f"a generated artifact is named by its file name, not a path: '{artifact['file']}'",
                             **spec.at("input_artifacts", i, "file"), hint="e.g. file: model.xlsx (the name the generator writes)")


def _checked_in(resolver: "Resolver", spec: "Spec", i: int, artifact: dict[str, Any]) -> tuple[str, int] | None:
    """(sha256, size) of a checked-in artifact, read as bytes inside the task's folder."""
    rel = artifact["file"]
    where = spec.at("input_artifacts", i, "file")
    diags = resolver.diags
    pure = PurePosixPath(rel)
    if pure.is_absolute() or "\\" in rel or any(part in ("..", ".") for part in pure.parts) or "\0" in rel:
        diags.error("LRC3004", f"input artifact '{rel}' must be a relative path inside the task's folder", **where,
                    hint="e.g. inputs/model.xlsx; no absolute paths, no '..', forward slashes only")
        return None
    base = spec.doc.abspath.parent
    candidate = base.joinpath(*pure.parts)
    probe = base
    try:
        for part in pure.parts:
            probe = probe / part
            if probe.is_symlink():
                diags.error("LRC3004", f"input artifact '{rel}' goes through a symlink", **where,
                            hint="a task's artifacts are regular files inside its folder")
                return None
        exists = candidate.is_file()
    except (OSError, ValueError) as exc:
        diags.error("LRC3004", f"input artifact cannot be used: {getattr(exc, 'strerror', None) or exc}", **where)
        return None
    relpath = candidate.relative_to(resolver.root).as_posix()
    if not exists:
        diags.error("LRC3004", f"input artifact '{rel}' does not exist", **where, hint=f"expected at {relpath}")
        return None
    try:
        raw = read_bytes(candidate, MAX_TASK_ARTIFACT)
    except OSError as exc:
        diags.error("LRC3004", f"cannot read input artifact '{rel}': {exc.strerror}", **where)
        return None
    if len(raw) > MAX_TASK_ARTIFACT:
        diags.error("LRC3004", f"input artifact '{rel}' is larger than the {MAX_TASK_ARTIFACT // (1024 * 1024)} MiB cap", **where,
                    hint="the lock inlines checked-in artifacts; generate a large input from the seed instead")
        return None
    spec.deps[relpath] = file_sha256(raw).removeprefix("sha256:")  # what a cached result of the spec relies on
    return file_sha256(raw), len(raw)


def read_checked_in(spec: "Spec", index: int) -> bytes:
    """The bytes of checked-in artifact `index`, re-read for the lock and proved unchanged."""
    artifact = spec.normalized["input_artifacts"][index]
    raw = read_bytes(spec.doc.abspath.parent.joinpath(*PurePosixPath(artifact["file"]).parts), MAX_TASK_ARTIFACT)
    if file_sha256(raw) != artifact["sha256"]:
        raise RuntimeError(f"{artifact['file']} of {spec.doc.path} changed while it was being compiled; run the command again")
    return raw


# -- checks ----------------------------------------------------------------------------------

def _unknown_validator(resolver: "Resolver", spec: "Spec", parts: tuple, vid: str) -> None:
    guess = did_you_mean(vid, VALIDATORS)
    resolver.diags.error("LRC3010", f"unknown validator '{vid}'", **spec.at(*parts),
                         hint=f"did you mean '{guess}'?" if guess else f"validators: {', '.join(sorted(VALIDATORS))}")


def _check(resolver: "Resolver", spec: "Spec", i: int, check: dict[str, Any], generated: bool, own_files: set[str]) -> None:
    vid = check["validator"]
    entry = VALIDATORS.get(vid)
    if entry is None:
        _unknown_validator(resolver, spec, ("checks", i, "validator"), vid)
        return
    params = check.get("params", {})
    schema = partial(entry.params) if generated else entry.params
    for err in schemacheck.instance_errors(schema, params):
        resolver.diags.error("LRC3011", f"{vid} params: {err.message}", **spec.at("checks", i, "params", *err.path),
                             hint="the generator supplies seeded params; state only fixed ones" if generated and err.keyword == "required"
                             else f"see the parameters of {vid} in lrc.runtime.lock.artifact_validators")
    for key in entry.file_params:
        value = params.get(key)
        if isinstance(value, str) and value not in own_files:
            guess = did_you_mean(value, own_files)
            resolver.diags.error("LRC3011", f"{vid} param {key} names '{value}', which is not a file of this task",
                                 **spec.at("checks", i, "params", key),
                                 hint=f"did you mean '{guess}'?" if guess else f"the task's files: {', '.join(sorted(own_files))}")


def _observable(resolver: "Resolver", spec: "Spec") -> None:
    """Inclusion rule 3: at least one failure mode is observed by a validator the task runs."""
    checked = {c["validator"] for c in spec.data["checks"]}
    observable = False
    for i, mode in enumerate(spec.data["failure_modes"]):
        for j, vid in enumerate(mode.get("observed_by", [])):
            if vid not in VALIDATORS:
                _unknown_validator(resolver, spec, ("failure_modes", i, "observed_by", j), vid)
            elif vid in checked:
                observable = True
    if not observable:
        resolver.diags.error("LRC6115", "no failure mode is observable by the task's checks", **spec.at("failure_modes"),
                             hint=f"name in observed_by a validator the task runs ({', '.join(sorted(checked))}) for at least one failure mode "
                                  "(seed 000, inclusion rule 3)")


# -- inclusion rule 5 ------------------------------------------------------------------------

def _squeeze(text: str) -> str:
    return re.sub(r"[\s$]+", "", text).upper()


def _template_regex(value: str) -> re.Pattern[str]:
    """A regex over squeezed text for a value with `{c}`/`{p}` column and `{r}` row placeholders."""
    parts = re.split(r"(\{[cpr]\})", value)
    return re.compile("".join("[0-9]+" if p == "{r}" else "[A-Z]{1,3}" if p in ("{c}", "{p}") else re.escape(_squeeze(p))
                              for p in parts))


def _no_expected_artifact_in_objective(resolver: "Resolver", spec: "Spec", own_files: set[str]) -> None:
    objective = spec.data["objective"]
    where = spec.at("objective")
    paths = {a["file"] for a in spec.data["input_artifacts"]}
    for match in FILE_TOKEN.finditer(objective):
        token = match.group(1)
        if token in own_files or token in paths:
            continue
        resolver.diags.error("LRC6114", f"the objective names the file '{token}', which is not one of the task's inputs or its output", **where,
                             hint="name only the files the agent receives and the one it hands back; the expected artifact is never shown "
                                  "(seed 000, inclusion rule 5)")
    squeezed = _squeeze(objective)
    for i, check in enumerate(spec.data["checks"]):
        for pointer, value in expected_values(check["validator"], check.get("params", {})):
            if len(_squeeze(value)) < 4:
                continue  # too short to be an answer rather than a coincidence
            if _template_regex(value).search(squeezed):
                resolver.diags.error("LRC6114", f"the objective spells out {value!r}, the expected content held by {check['validator']}",
                                     **where, notes=(f"at /checks/{i}/params{pointer}",),
                                     hint="describe the change to make, never the expected result (seed 000, inclusion rule 5)")

