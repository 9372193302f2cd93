"""What a lock's content must be before anything reads it: the runtime's check of a hostile lock.

A lock's digests are plain sha256 over its own content, so whoever edits a lock (a pull
request, a download) can recompute them: consistent digests say nothing about who wrote it.
The content is therefore checked as untrusted input, in three steps, before the digests,
the code fingerprints or any part of the runtime look at it:

1. `parse`: JSON within limits (file size, nesting, digits of a number; no NaN, Infinity
   or duplicate keys), so that no value can crash or stall what reads it later (Python's
   int-to-text limit, RecursionError) — only LockError, never a traceback.
2. `problems`, schemas: the lock against schemas/lock.schema.json (closed at the top and in
   the plan), and each resolved spec against its kind's schema — the same schemas the
   compiler validated the specs against, so a value the compiler would have refused (an
   `n_per_cell` of 10^9, an id holding a path separator) is refused here too.
3. `problems`, references: what the runtime looks up by name must be there under that name,
   as the compiler puts it there (compiler/plan.py): every entry keyed by its own `ref`
   (`<id>.v<version>`); every workload, system, model, task, rubric and code component a
   spec names present in the plan; a workload's prompts, tools and terminal tools those of
   its spec; a model the edition's entry with its price; and every name that becomes a
   folder of a run folder a single, plain path part.

Each problem names the JSON pointer of the value. The schemas ship inside the package
(`lrc.schemas`, setup.py: SCHEMAS), so an installed lrc finds them without a checkout.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from lrc.runtime.lock import safe_regex
from lrc.runtime.lock.canonical import digest_bytes

# The release's schemas: the repository's schemas/ beside runtime/, which an installed lrc
# holds as the package `lrc.schemas` beside `lrc.runtime` (setup.py; the compiler finds its
# bundled schemas the same way). Not the project's schemas/: a lock is checked by the release
# that runs it.
SCHEMAS = Path(__file__).resolve().parent.parent.parent / "schemas"
MAX_LOCK_BYTES = 64 * 1024 * 1024  # compiled locks are well under 1 MiB; inlined task inputs add their bytes
MAX_DEPTH = 64  # compiled locks nest 16 levels deep
MAX_NUMBER_CHARS = 40  # a lock's numbers are counts, versions and sampling settings
MAX_PROBLEMS = 20  # listed of a refused lock; the rest are counted

# What `lrc.runtime.*` module names look like (a lock names the module of each component).
_MODULE = re.compile(r"lrc\.runtime(?:\.[a-z_][a-z0-9_]*)+")
# Kind of the schema each resolved spec of the plan was validated against at compile time.
_SPEC_KINDS = {"edition": "edition", "standard": "standard", "taxonomy": "taxonomy",
               "systems": "system", "workloads": "workload", "rubrics": "rubric", "tasks": "task"}


class ShapeError(ValueError):
    """The lock's bytes are not JSON within the limits; the message says why."""


# -- 1. parsing ---------------------------------------------------------------------------------

class _Refused:
    """Stands, in the parsed tree, for a value refused while parsing, so that the refusal can
    name its JSON pointer (the parser's hooks do not know where they are)."""

    def __init__(self, why: str):
        self.why = why


def _number(text: str, convert: Any) -> Any:
    if len(text) > MAX_NUMBER_CHARS:
        return _Refused(f"a number of {len(text)} characters (the limit is {MAX_NUMBER_CHARS})")
    return convert(text)


class _Twice(dict):
    """An object in which a key appeared twice (JSON keeps the last; a reader of the file may see the first)."""

    twice = ""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    marked = _Twice(out)
    marked.twice = next(k for k, _ in pairs if k in seen or seen.add(k))
    return marked


_DECODER = json.JSONDecoder(parse_int=lambda t: _number(t, int), parse_float=lambda t: _number(t, float),
                            parse_constant=lambda name: _Refused(f"{name} is not a JSON value"), object_pairs_hook=_object)


def parse(data: bytes) -> Any:
    """The JSON value of a lock's bytes, within every limit; else ShapeError, naming the JSON
    pointer of the value over a limit where the parser got that far."""
    if len(data) > MAX_LOCK_BYTES:
        raise ShapeError(f"{len(data):,} bytes (the limit is {MAX_LOCK_BYTES:,})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ShapeError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise ShapeError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ShapeError(f"nested too deeply (the limit is {MAX_DEPTH} levels)") from None
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, _Refused):
            raise ShapeError(f"{pointer(path) or '(top level)'}: {item.why}")
        if isinstance(item, (dict, list)):
            if len(path) >= MAX_DEPTH:
                raise ShapeError(f"{pointer(path)}: nested more than {MAX_DEPTH} levels deep")
            if isinstance(item, _Twice):
                raise ShapeError(f"{pointer(path) or '(top level)'}: the key {item.twice[:80]!r} appears twice")
            children = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend((child, path + (key,)) for key, child in children)
    return value


# -- 2. schemas ---------------------------------------------------------------------------------

def pointer(path: tuple[str | int, ...] | list[str | int]) -> str:
    """RFC 6901 JSON pointer of a path ("" is the whole lock)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def schema(kind: str) -> dict[str, Any]:
    """lrc's own schema of `kind` (lock, edition, workload, ...), as shipped with this release."""
    return json.loads(_schema_text(kind))


@lru_cache(maxsize=None)
def _schema_text(kind: str) -> str:
    return (SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def _validator(kind: str) -> tuple[dict[str, Any], Any]:
    body = schema(kind)
    if kind == "workload":
        # The spec names its output schema by path; the lock inlines the schema it read there.
        body["properties"]["output"]["properties"]["schema"] = {"type": "object"}
    return body, safe_regex.validator(body)


def _violations(kind: str, value: Any, at: tuple[str | int, ...]) -> list[str]:
    body, built = _validator(kind)
    found = safe_regex.violations(body, value, built=built)
    return [f"{pointer(at + tuple(v.path)) or '(top level)'}: {v.message}" for v in found]


def _resolved_specs(plan: dict[str, Any]) -> list[tuple[str, tuple[str | int, ...], Any]]:
    """(schema kind, path, spec) of every resolved spec the plan holds."""
    found = []
    for section, kind in _SPEC_KINDS.items():
        value = plan.get(section)
        if section in ("edition", "standard", "taxonomy"):
            if value is not None:
                found.append((kind, ("plan", section, "spec"), value["spec"]))
        else:
            found += [(kind, ("plan", section, ref, "spec"), entry["spec"]) for ref, entry in sorted((value or {}).items())]
    return found


# -- 3. references ------------------------------------------------------------------------------

def same(a: Any, b: Any) -> bool:
    """Equal as JSON: `==` alone takes 1 for true and 0.0 for 0, which the runtime does not."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _path_part(name: Any) -> bool:
    """Can `name` be one folder of a run folder: one plain part, never a way out of it?"""
    return (isinstance(name, str) and 0 < len(name) <= 200 and name not in (".", "..")
            and not any(c in name for c in "/\\\0") and name.isprintable())


def _reference_problems(plan: dict[str, Any]) -> list[str]:
    problems: list[str] = []

    def own_ref(path: tuple[str, ...], entry: dict[str, Any], key: str | None = None) -> None:
        spec = entry["spec"]
        expected = f"{spec.get('id')}.v{spec.get('version')}"
        if entry["ref"] != expected:
            problems.append(f"{pointer(path + ('ref',))}: {entry['ref']!r} is not its spec's {expected!r}")
        if key is not None and key != entry["ref"]:
            problems.append(f"{pointer(path)}: keyed {key!r} but its ref is {entry['ref']!r}")

    for section in ("edition", "standard", "taxonomy"):
        if section in plan:
            own_ref(("plan", section), plan[section])
    for section in ("systems", "workloads", "rubrics", "tasks"):
        for key, entry in sorted(plan.get(section, {}).items()):
            if not _path_part(key):
                problems.append(f"{pointer(('plan', section, key))}: {key[:80]!r} is not a plain name "
                                "(it becomes a folder of the run)")
            own_ref(("plan", section, key), entry, key)
    for key, entry in sorted(plan["code"].items()):
        expected = f"{entry['id']}.v{entry['version']}"
        if key != expected:
            problems.append(f"{pointer(('plan', 'code', key))}: keyed {key!r} but it is component {expected!r}")
        if not _MODULE.fullmatch(entry["module"]):
            problems.append(f"{pointer(('plan', 'code', key, 'module'))}: {entry['module'][:80]!r} is not an lrc.runtime module")
    edition = plan["edition"]["spec"]
    # A plan's model is the edition's entry (checked by the edition schema) with its provider,
    # whether it is embedded, and its frozen price: nothing else.
    declared = {m.get("id"): m for m in edition.get("models", [])}
    for key, entry in sorted(plan["models"].items()):
        at = ("plan", "models", key)
        if entry["id"] != key:
            problems.append(f"{pointer(at + ('id',))}: {entry['id']!r} under the key {key!r}")
        elif key not in declared:
            problems.append(f"{pointer(at)}: {key!r} is not a model of the edition (/plan/edition/spec/models)")
        else:
            own = {k: v for k, v in entry.items() if k not in ("provider", "reference", "price")}
            if not same(own, declared[key]) or entry["provider"] != key.split("/", 1)[0] \
                    or not same(entry["price"], edition.get("pricing", {}).get(key)):
                problems.append(f"{pointer(at)}: differs from the edition's entry and price of {key!r}")
    for field, section in (("workloads", "workloads"), ("systems", "systems")):
        for i, ref in enumerate(edition.get(field, [])):
            if ref not in plan[section]:
                problems.append(f"{pointer(('plan', 'edition', 'spec', field, i))}: {ref!r} is not in /plan/{section}")
    for i, model in enumerate(edition.get("models", [])):
        if model.get("id") not in plan["models"]:
            problems.append(f"{pointer(('plan', 'edition', 'spec', 'models', i, 'id'))}: {model.get('id')!r} is not in /plan/models")
    problems += _component_problems(plan)
    if not same(plan["seed"], seed_section(edition.get("seed", {}))):
        problems.append("/plan/seed: not the edition's seed (/plan/edition/spec/seed) and its commitment")
    for ref, entry in sorted(plan["workloads"].items()):
        problems += _workload_problems(("plan", "workloads", ref), entry)
    for split, refs in sorted((edition.get("tasks") or {}).items()):
        for i, ref in enumerate(refs):
            if ref not in plan.get("tasks", {}):
                problems.append(f"{pointer(('plan', 'edition', 'spec', 'tasks', split, i))}: {ref!r} is not in /plan/tasks")
    return problems


def seed_section(seed: dict[str, Any]) -> dict[str, Any]:
    """The plan's seed section of an edition's `seed:` (the compiler writes the same:
    compiler/plan.py `seed_section`): a public seed with its commitment, a held-out one's commitment."""
    if seed.get("policy") == "public" and isinstance(seed.get("value"), str):
        return {"policy": "public", "value": seed["value"], "commitment": digest_bytes("seed", seed["value"].encode("utf-8"))}
    return {"policy": "held-out", "commitment": seed.get("commitment")}


def _component_problems(plan: dict[str, Any]) -> list[str]:
    """Every code component and rubric a spec of the plan names must be in the plan (as the
    compiler collects them: compiler/plan.py build_plan)."""
    named: list[tuple[tuple[str | int, ...], str, str]] = []  # (where, section, ref)
    edition = plan["edition"]["spec"]
    named.append((("plan", "edition", "spec", "analysis"), "code", edition.get("analysis")))
    for ref, system in sorted(plan["systems"].items()):
        named.append((("plan", "systems", ref, "spec", "implementation"), "code", system["spec"].get("implementation")))
    runs_reference_models = any(m.get("reference") for m in plan["models"].values())
    for ref, workload in sorted(plan["workloads"].items()):
        spec, at = workload["spec"], ("plan", "workloads", ref, "spec")
        named.append((at + ("dataset", "generator"), "code", spec["dataset"].get("generator")))
        named += [(at + ("grading", "checks", i, "check"), "code", c.get("check"))
                  for i, c in enumerate(spec["grading"].get("checks", []))]
        if runs_reference_models:
            named.append((at + ("reference", "implementation"), "code", spec.get("reference", {}).get("implementation")))
        for key, use in sorted(spec["systems"].items()):
            if use.get("tools"):
                named.append((at + ("systems", key, "tools", "implementation"), "code", use["tools"].get("implementation")))
        if "judge" in spec["grading"]:
            named.append((at + ("grading", "judge", "rubric"), "rubrics", spec["grading"]["judge"].get("rubric")))
    for ref, task in sorted(plan.get("tasks", {}).items()):
        spec, at = task["spec"], ("plan", "tasks", ref, "spec")
        named.append((at + ("validators",), "code", spec.get("validators")))
        named.append((at + ("review_rubric",), "rubrics", spec.get("review_rubric")))
        named += [(at + ("input_artifacts", i, "generator"), "code", a["generator"])
                  for i, a in enumerate(spec.get("input_artifacts", [])) if "generator" in a]
    return [f"{pointer(where)}: {ref!r} is not in /plan/{section}"
            for where, section, ref in named if ref is not None and ref not in plan.get(section, {})]


def tool_definitions(spec: dict[str, Any], system: str) -> list[dict[str, Any]]:
    """The OpenAI tool definitions a workload's spec gives a system, as the lock holds them
    (the compiler writes the same: compiler/plan.py `_tool_defs`)."""
    tools = spec["systems"][system].get("tools")
    out = []
    for tool in (tools or {}).get("definitions", []):
        if tool.get("parameters_from") == "output":
            params = {k: v for k, v in spec["output"]["schema"].items() if k not in ("$schema", "$id", "title")}
        else:
            params = tool.get("parameters")
        function = {"name": tool.get("name"), "description": tool.get("description"), "parameters": params}
        out.append({"type": "function", "function": function})
    return out


def _workload_problems(at: tuple[str, ...], workload: dict[str, Any]) -> list[str]:
    """A workload's prompts, tools and terminal tools are its spec's: the runtime reads them by system."""
    spec, problems = workload["spec"], []
    uses = spec["systems"]
    if set(workload["prompts"]) != set(uses):
        problems.append(f"{pointer(at + ('prompts',))}: systems {sorted(workload['prompts'])} are not its spec's {sorted(uses)}")
    for key in sorted(set(workload["prompts"]) & set(uses)):
        locked, declared = workload["prompts"][key], uses[key].get("prompts", {})
        if not same({role: p["template"] for role, p in locked.items()}, declared):
            problems.append(f"{pointer(at + ('prompts', key))}: the templates are not its spec's (/systems/{key}/prompts)")
    with_tools = sorted(key for key, use in uses.items() if use.get("tools"))
    tools = {key: tool_definitions(spec, key) for key in with_tools}
    if not same(workload["tools"], tools):
        problems.append(f"{pointer(at + ('tools',))}: not the tool definitions of its spec's systems")
    terminal = {key: sorted(t.get("name") for t in uses[key]["tools"].get("definitions", []) if t.get("terminal"))
                for key in with_tools}
    if not same(workload["terminal_tools"], terminal):
        problems.append(f"{pointer(at + ('terminal_tools',))}: not the terminal tools of its spec's systems")
    return problems


def problems(lock: Any) -> list[str]:
    """Every way `lock` (a parsed lock) is not what `lrc compile` writes, each at its JSON
    pointer: [] for a lock whose content the runtime may read."""
    found = _violations("lock", lock, ())
    if found:
        return found
    plan = lock["plan"]
    for kind, path, spec in _resolved_specs(plan):
        found += _violations(kind, spec, path)
    if found:
        return found
    return _reference_problems(plan)
