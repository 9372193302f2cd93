"""Stage 3: from validated documents to a graph of normalized, cross-checked specs.

Resolving means: index specs by kind and id; apply schema defaults; inline every referenced
file by content (templates, output schemas), confined to specs/ and never through a
symlink; check every pinned reference (specs and code components) with did-you-mean; and
check the methodology policies that can be checked from the specs alone.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import Any, Callable


from lrc.compiler.defaults import apply_defaults
from lrc.compiler.diagnostics import Diagnostics, pointer_of
from lrc.compiler.load import SURROGATE, SourceDoc, decode_text, read_capped
from lrc.compiler.refs import did_you_mean, make_ref, parse_ref
from lrc.compiler import schemacheck, tasks
from lrc.runtime.lock.canonical import digest as digest_value
from lrc.runtime.lock.codeprint import Component
from lrc.runtime.lock.safe_regex import SUBJECT_LIMIT

MAX_REFERENCED_FILE = 256 * 1024
REFERENCE_MODELS = {"lrc/oracle", "lrc/null", "lrc/baseline", "lrc/careful", "lrc/cheap"}
#: The roles each embedded model may take. The oracle and the null model calibrate the harness
#: (their expected scores are n/n and 0/n), so they are never scored; the demo's reference
#: candidates are scored stand-ins and never calibration checks. A model that is not embedded
#: cannot be a calibration check: no other model's expected score is known.
REFERENCE_ROLES: dict[str, tuple[str, ...]] = {
    "lrc/oracle": ("infrastructure-check",),
    "lrc/null": ("floor-check",),
    "lrc/baseline": ("baseline",),
    "lrc/careful": ("flagship", "candidate"),
    "lrc/cheap": ("flagship", "candidate"),
}
CHECK_ROLES = ("infrastructure-check", "floor-check")
REFERENCE_MODELS_COMPONENT = "lrc.reference-models"
REFERENCE_JUDGE = "lrc/judge"  # the embedded reference judge: only ever a judge, never a model under evaluation
JUDGE_COMPONENT = "lrc.judge"
OUTPUT_CONTRACT_COMPONENT = "lrc.output-contract"
ANALYSIS_COMPONENT = "lrc.analysis"
"""The code that computes an edition's published figures (runtime/report/outputs.py and what it
imports: grading, aggregation, statistics, pricing, the rate card, calibration)."""
PROMPT_ROLES = ("system", "user", "user_file")
SPEC_KINDS = ("standard", "taxonomy", "rubric", "system", "workload", "task", "edition", "erratum")
FILE_MODES = ("file", "text-or-file")
TASK_SYSTEM_MODES = ("direct", "orchestrated")
"""Seed 000's two configurations: they run an edition's reliability tasks, nothing else."""
SYSTEM_TEMPLATE_VARIABLES = ("task", "workflow")


class Spec:
    """One spec file after validation; `normalized` is what its digest covers.

    A spec served from the compile cache (`memo`, a units.Hit) has its validated `data`
    at once; its `normalized` form, digest and rendered `prompts` are read from the cache
    only when asked for."""

    def __init__(self, kind: str, doc: SourceDoc, data: dict[str, Any], memo: Any = None):
        self.kind = kind
        self.doc = doc
        self.data = data
        self.memo = memo
        self.files: dict[str, str] = dict(memo.files) if memo is not None else {}  # JSON pointer -> inlined file
        self.deps: dict[str, str] = dict(memo.deps) if memo is not None else {}  # inlined file -> sha256 of its bytes
        self._normalized: dict[str, Any] | None = None
        self._digest: str | None = memo.digest if memo is not None else None
        self._prompts: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"Spec({self.kind} {self.doc.path})"

    def _heavy(self) -> None:
        """Fill normalized and prompts of a cached spec from its blob (or rebuild them)."""
        heavy = self.memo.heavy()
        if heavy is None:
            heavy = self.memo.memo.rebuild(self)
        self._normalized = heavy["normalized"]
        if self._prompts is None:
            self._prompts = heavy.get("prompts")

    @property
    def normalized(self) -> dict[str, Any]:
        if self._normalized is None:
            if self.memo is None:
                return {}
            self._heavy()
        return self._normalized  # type: ignore[return-value]

    @normalized.setter
    def normalized(self, value: dict[str, Any]) -> None:
        self._normalized = value
        self._digest = None

    @property
    def digest(self) -> str:
        if self._digest is None:
            self._digest = digest_value(f"spec:{self.kind}", self.normalized)
        return self._digest

    @property
    def prompts(self) -> dict[str, Any] | None:
        """system -> role -> rendered template (workloads; None until rendered)."""
        if self._prompts is None and self.memo is not None:
            self._heavy()
        return self._prompts

    @prompts.setter
    def prompts(self, value: dict[str, Any] | None) -> None:
        self._prompts = value

    @property
    def id(self) -> str:
        return self.data["id"]

    @property
    def version(self) -> int:
        return self.data["version"]

    @property
    def ref(self) -> str:
        return make_ref(self.id, self.version)

    def at(self, *parts) -> dict[str, Any]:
        """Location keywords for a diagnostic about the value at `parts`."""
        pointer = pointer_of(parts)
        line, col = self.doc.locate(pointer)
        return {"path": self.doc.path, "line": line, "column": col, "pointer": pointer}


@dataclass
class Graph:
    """Every spec of the project, by kind and id, plus the code components found."""

    specs: dict[str, dict[str, Spec]]
    components: dict[str, Component]

    def by_ref(self, kind: str, ref: str) -> Spec | None:
        parsed = parse_ref(ref)
        if not parsed:
            return None
        spec = self.specs.get(kind, {}).get(parsed[0])
        return spec if spec is not None and spec.version == parsed[1] else None

    def refs(self, kind: str) -> list[str]:
        return sorted(s.ref for s in self.specs.get(kind, {}).values())

    def components_latest(self, ident: str) -> int:
        """The version of a built-in component the compiler adds on its own (e.g. the output contract)."""
        versions = [c.version for c in self.components.values() if c.id == ident]
        if not versions:
            raise KeyError(f"built-in code component {ident} is missing from runtime/")
        return max(versions)


class _Refused(ValueError):
    """A JSON value json.loads would accept but lrc does not; `needle` is its source text, to
    find its line (json's hooks are not told where they are), `pointer` where known."""

    def __init__(self, msg: str, needle: str = "", pointer: str | None = None):
        super().__init__(msg)
        self.msg, self.needle, self.pointer = msg, needle, pointer


def _refuse_constant(name: str) -> Any:
    """json.loads accepts NaN and Infinity, which have no canonical form: refuse them."""
    raise _Refused(f"{name} is not valid JSON (no canonical form)", name)


def _safe_int(text: str) -> int:
    """An integer within 2^53, refused by its digit count first: int() of more than 4300
    digits raises ValueError (Python's guard against quadratic conversion)."""
    digits = text.lstrip("-")
    if len(digits) > 16 or abs(int(text)) > 2**53 - 1:
        shown = text if len(text) <= 24 else f"{text[:10]}...{text[-4:]} ({len(digits)} digits)"
        raise _Refused(f"integer {shown} is beyond 2^53 (no canonical form)", text)
    return int(text)


_DUPLICATE = object()


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """object_pairs_hook: a repeated key is refused, as in YAML specs (LRC1002), rather than
    resolved last-wins; the object is marked so `_duplicate` can say where."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            return {_DUPLICATE: key}  # type: ignore[dict-item]
        out[key] = value
    return out


def _duplicate(value: Any) -> tuple[str, str] | None:
    """(JSON pointer, key) of the first repeated key in a value built with `_pairs`."""
    stack: list[tuple[Any, tuple]] = [(value, ())]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            if _DUPLICATE in node:
                return pointer_of([*at, node[_DUPLICATE]]), node[_DUPLICATE]
            stack.extend((v, (*at, k)) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((v, (*at, i)) for i, v in reversed(list(enumerate(node))))
    return None


def load_json_file(text: str) -> Any:
    """Parse a referenced JSON file as lrc reads JSON: no NaN or Infinity, integers within 2^53,
    no repeated keys. Raises json.JSONDecodeError or _Refused."""
    value = json.loads(text, parse_constant=_refuse_constant, parse_int=_safe_int, object_pairs_hook=_pairs)
    found = _duplicate(value)
    if found is not None:
        pointer, key = found
        raise _Refused(f'duplicate key "{key}"', key, pointer)
    return value


def _duplicate_line_col(text: str, key: str) -> tuple[int | None, int | None]:
    """Where the repeated key is, when the text names it as a key exactly twice (else unknown:
    json's hooks are not told positions, and a guess could point at another object)."""
    import re

    hits = [m.start() for m in re.finditer(re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:", text)]
    return _position(text, hits[1]) if len(hits) == 2 else (None, None)


def _position(text: str, at: int) -> tuple[int | None, int | None]:
    """1-based line and column of offset `at` in `text` (None when `at` is negative)."""
    if at < 0:
        return None, None
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def _line_col(text: str, needle: str) -> tuple[int | None, int | None]:
    """Where `needle` first occurs in `text`."""
    return _position(text, text.find(needle) if needle else -1)


class Resolver:
    def __init__(self, root: Path, specs_dir: Path, schemas: dict[str, dict], components: dict[str, Component], diags: Diagnostics):
        self.root = root
        self.specs_dir = specs_dir
        self.schemas = schemas
        self.components = components
        self.diags = diags

    # -- indexing ---------------------------------------------------------------------
    def index(self, docs: list[tuple[str, SourceDoc, Any]]) -> Graph:
        """Specs by kind and id; `docs` are (kind, document, units.Hit or None)."""
        specs: dict[str, dict[str, Spec]] = {k: {} for k in SPEC_KINDS}
        for kind, doc, hit in docs:
            if hit is not None:
                spec = Spec(kind, doc, hit.data, memo=hit)
            else:
                spec = Spec(kind, doc, apply_defaults(doc.data, self.schemas[kind]))
            other = specs[kind].get(spec.id)
            if other is not None:
                self.diags.error("LRC3003", f"{kind} '{spec.id}' is also defined in {other.doc.path}", **spec.at("id"),
                                 hint="one file per spec; its version changes in place")
                continue
            specs[kind][spec.id] = spec
        return Graph({k: dict(sorted(v.items())) for k, v in specs.items()}, self.components)

    # -- references ----------------------------------------------------------------------
    def _spec_ref(self, graph: Graph, owner: Spec, parts: tuple, kind: str) -> Spec | None:
        text = owner.data
        for p in parts:
            text = text[p]
        if not isinstance(text, str):
            return None
        if parse_ref(text) is None:
            guess = did_you_mean(text + ".v1", graph.refs(kind))
            self.diags.error("LRC3002", f"reference '{text}' does not pin a version", **owner.at(*parts),
                             hint=f"write {guess}" if guess else "write <id>.v<N>")
            return None
        target = graph.by_ref(kind, text)
        if target is None:
            guess = did_you_mean(text, graph.refs(kind))
            self.diags.error("LRC3001", f"unknown {kind} '{text}'", **owner.at(*parts),
                             hint=f"did you mean {guess}?" if guess else f"no {kind} specs are defined")
        return target

    def _code_ref(self, owner: Spec, parts: tuple) -> Component | None:
        text: Any = owner.data
        for p in parts:
            text = text[p]
        if not isinstance(text, str):
            return None
        if parse_ref(text) is None:
            guess = did_you_mean(text + ".v1", self.components)
            self.diags.error("LRC3002", f"code reference '{text}' does not pin a version", **owner.at(*parts),
                             hint=f"write {guess}" if guess else "write <component id>.v<N>")
            return None
        comp = self.components.get(text)
        if comp is None:
            guess = did_you_mean(text, self.components)
            self.diags.error("LRC3001", f"unknown code component '{text}'", **owner.at(*parts),
                             hint=f"did you mean {guess}?" if guess else "components declare COMPONENT_ID and COMPONENT_VERSION in runtime/")
        return comp

    # -- files ---------------------------------------------------------------------------
    def _file(self, owner: Spec, parts: tuple) -> tuple[str, str] | None:
        """(project-relative path, LF-normalized text) of a file referenced from a spec."""
        rel: Any = owner.data
        for p in parts:
            rel = rel[p]
        where = owner.at(*parts)
        pure = PurePosixPath(rel)
        if pure.is_absolute() or "\\" in rel or any(part == ".." for part in pure.parts):
            self.diags.error("LRC3004", f"file reference '{rel}' must be a relative path inside the spec's folder", **where,
                             hint="no absolute paths, no '..', forward slashes only")
            return None
        base = owner.doc.abspath.parent
        candidate = base.joinpath(*pure.parts)
        # Walk component by component so no symlink anywhere on the way is followed.
        probe = base
        try:
            for part in pure.parts:
                probe = probe / part
                if probe.is_symlink():
                    self.diags.error("LRC3004", f"file reference '{rel}' goes through a symlink", **where,
                                     hint="specs may only reference regular files inside specs/")
                    return None
            exists = candidate.is_file()
        except (OSError, ValueError) as exc:  # a name too long, a NUL byte: not a readable file reference
            self.diags.error("LRC3004", f"file reference cannot be used: {getattr(exc, 'strerror', None) or exc}", **where)
            return None
        try:
            candidate.resolve().relative_to(self.specs_dir.resolve())
        except ValueError:
            self.diags.error("LRC3004", f"file reference '{rel}' resolves outside specs/", **where)
            return None
        if not exists:
            self.diags.error("LRC3004", f"referenced file '{rel}' does not exist", **where,
                             hint=f"expected at {candidate.relative_to(self.root).as_posix()}")
            return None
        relpath = candidate.relative_to(self.root).as_posix()
        owner.files[where["pointer"]] = relpath
        before = len(self.diags.items)
        raw = read_capped(candidate, relpath, self.diags, limit=MAX_REFERENCED_FILE)
        text = None if raw is None else decode_text(raw, relpath, self.diags)
        if raw is not None:
            owner.deps[relpath] = hashlib.sha256(raw).hexdigest()  # what a cached result of the owner relies on
        if text is None:
            for d in self.diags.items[before:]:
                object.__setattr__(d, "notes", d.notes + (f"referenced from {owner.doc.path} at {where['pointer']}",))
            return None
        return relpath, text

    # -- per kind ------------------------------------------------------------------------
    def resolve(self, graph: Graph, on_local: Callable[[Spec, list], None] | None = None) -> None:
        """Resolve every spec: first what each one needs of itself alone (skipped for specs
        served from the compile cache; `on_local` sees each fresh spec with the diagnostics
        it produced), then references across specs and the policies spanning several."""
        ordered = [spec for kind in SPEC_KINDS for spec in graph.specs[kind].values()]
        for spec in ordered:
            if spec.memo is None:
                before = len(self.diags.items)
                self.local(spec)
                if on_local is not None:
                    on_local(spec, self.diags.items[before:])
        for spec in ordered:
            self.refs(graph, spec)
        from lrc.compiler import policy  # cross-spec methodology policies, after every reference is resolved

        policy.check(graph, self.diags)

    def local(self, spec: Spec) -> None:
        """Everything a spec needs of itself and the files it references; sets `normalized`."""
        if spec.kind == "rubric":
            self._rubric(spec)
        elif spec.kind == "workload":
            self._workload_local(spec)
        elif spec.kind == "task":
            tasks.local(self, spec)  # compiler/tasks.py: artifacts hashed as bytes, checks, inclusion rules 3 and 5
        elif spec.kind == "system":
            self._system_local(spec)
        else:
            spec.normalized = spec.data

    def refs(self, graph: Graph, spec: Spec) -> None:
        """The checks of a spec that read other specs or the code components."""
        if spec.kind == "system":
            if "implementation" in spec.data:
                self._code_ref(spec, ("implementation",))
        elif spec.kind == "workload":
            self._workload_refs(graph, spec)
        elif spec.kind == "task":
            tasks.refs(self, graph, spec)
        elif spec.kind == "edition":
            self._edition(graph, spec)

    def _system_local(self, spec: Spec) -> None:
        """An orchestrated system's stage templates (inlined by content, checked in the sandbox:
        they see `task` and `workflow` only) and its stage tools' parameter schemas."""
        data = spec.data
        norm = json.loads(json.dumps(data))
        if data["mode"] == "orchestrated":
            for key in ("workflow", "stage_tools", "retries"):
                if key not in data:
                    self.diags.error("LRC2002", f"an orchestrated system needs `{key}`", **spec.at("mode"),
                                     hint="see specs/systems/orchestrated.yaml: stage prompts, the harness's tools, the retry bound")
        elif "workflow" in data or "stage_tools" in data:
            self.diags.error("LRC2003", f"`workflow` and `stage_tools` belong to an orchestrated system, not mode {data['mode']}",
                             **spec.at("workflow" if "workflow" in data else "stage_tools"))
        from jinja2 import TemplateError, meta

        from lrc.runtime.lock.templating import make_environment

        env = make_environment()
        for stage in sorted(data.get("workflow") or {}):
            got = self._file(spec, ("workflow", stage, "prompt"))
            if not got:
                continue
            relpath, text = got
            try:
                unknown = sorted(meta.find_undeclared_variables(env.parse(text)) - set(SYSTEM_TEMPLATE_VARIABLES))
            except TemplateError as exc:
                self.diags.error("LRC4001", f"template syntax error: {getattr(exc, 'message', exc)}", path=relpath,
                                 line=getattr(exc, "lineno", None), column=1, notes=(f"used by {spec.ref} at /workflow/{stage}/prompt",))
                continue
            except (RecursionError, MemoryError):  # jinja's parser recurses per nesting level
                self.diags.error("LRC4001", "template nests too deeply to parse", path=relpath,
                                 hint="flatten the expression (fewer nested parentheses, brackets or blocks)",
                                 notes=(f"used by {spec.ref} at /workflow/{stage}/prompt",))
                continue
            if unknown:
                self.diags.error("LRC4002", f"template uses undefined variable(s): {', '.join(unknown)}", path=relpath, pointer=None,
                                 hint="a stage template sees only `task` (the task's prompt context) and `workflow` (the stage state)",
                                 notes=(f"used by {spec.ref} at /workflow/{stage}/prompt",))
                continue
            norm["workflow"][stage]["prompt"] = text
        for name, tool in sorted((data.get("stage_tools") or {}).items()):
            if tool["parameters"].get("type") != "object":
                self.diags.error("LRC6006", "tool parameters must be a JSON Schema of type object",
                                 **spec.at("stage_tools", name, "parameters"))
            self._check_schema(spec, ("stage_tools", name, "parameters"), tool["parameters"])
        spec.normalized = norm

    def _rubric(self, spec: Spec) -> None:  # local: scale and answer format only
        data = spec.data
        scale = data["scale"]
        if not scale["min"] <= data["pass_threshold"] <= scale["max"]:
            self.diags.error("LRC6109", f"pass threshold {data['pass_threshold']} is outside the scale {scale['min']}..{scale['max']}",
                             **spec.at("pass_threshold"))
        fmt = data["answer_format"]["schema"]
        if self._check_schema(spec, ("answer_format", "schema"), fmt):
            covered = set(fmt.get("properties", {})) & set(fmt.get("required", []))
            missing = [c["id"] for c in data["criteria"] if c["id"] not in covered]
            if missing and data["audience"] != "human":
                self.diags.error("LRC6109", f"the answer format does not require a score for: {', '.join(missing)}",
                                 **spec.at("answer_format", "schema"), hint="add each criterion id to properties and required")
        spec.normalized = data

    def _standard_for(self, graph: Graph) -> Spec | None:
        standards = list(graph.specs["standard"].values())
        return standards[0] if len(standards) == 1 else None

    def _workload_refs(self, graph: Graph, spec: Spec) -> None:
        """Standard (primitive, function), code components, judge rubric, pinned systems."""
        data = spec.data
        standard = self._standard_for(graph)
        if standard is not None:
            prims = [p["id"] for p in standard.data["primitives"]]
            funcs = {f["id"]: f["status"] for f in standard.data["functions"]}
            if data["primitive"] not in prims:
                guess = did_you_mean(data["primitive"], prims)
                self.diags.error("LRC6003", f"unknown primitive '{data['primitive']}'", **spec.at("primitive"),
                                 hint=f"did you mean '{guess}'?" if guess else f"primitives: {', '.join(prims)}")
            if data["function"] not in funcs:
                guess = did_you_mean(data["function"], funcs)
                self.diags.error("LRC6003", f"unknown business function '{data['function']}'", **spec.at("function"),
                                 hint=f"did you mean '{guess}'?" if guess else None)
            elif funcs[data["function"]] != "active":
                self.diags.error("LRC6003", f"business function '{data['function']}' is planned, not active", **spec.at("function"))
            if data["primitive"] in standard.data["policy"]["agentic_only_primitives"] and set(data["systems"]) != {"agentic"}:
                self.diags.error("LRC6005", f"{data['primitive']} workloads run agentic only", **spec.at("systems"),
                                 hint="remove every system but `agentic`")
        self._code_ref(spec, ("dataset", "generator"))
        self._code_ref(spec, ("reference", "implementation"))
        if "judge" in data["grading"]:
            self._spec_ref(graph, spec, ("grading", "judge", "rubric"), "rubric")
        for i, _ in enumerate(data["grading"]["checks"]):
            self._code_ref(spec, ("grading", "checks", i, "check"))
        for system_key, use in data["systems"].items():
            target = self._spec_ref(graph, spec, ("systems", system_key, "system"), "system")
            if target is not None and target.id != system_key:
                self.diags.error("LRC3008", f"the '{system_key}' entry pins system '{use['system']}'", **spec.at("systems", system_key, "system"),
                                 hint=f"pin a version of '{system_key}', e.g. {system_key}.v{target.version}")
            tools = use.get("tools")
            if target is not None and target.data["tools"] and tools is None:
                self.diags.error("LRC6006", f"system {target.ref} runs a tool loop but the workload defines no tools for it",
                                 **spec.at("systems", system_key), hint="add a `tools:` block with implementation and definitions")
            if tools is not None:
                if target is not None and not target.data["tools"]:
                    self.diags.error("LRC6006", f"system {target.ref} takes no tools", **spec.at("systems", system_key, "tools"))
                self._code_ref(spec, ("systems", system_key, "tools", "implementation"))

    def _workload_local(self, spec: Spec) -> None:
        """Input mode, item schema and sample, output schema and prompt files, tool definitions."""
        data = spec.data
        norm = json.loads(json.dumps(data))  # deep copy of plain data
        mode, attachments = data["input"]["mode"], data["input"].get("attachments", [])
        if mode not in FILE_MODES and attachments:
            self.diags.error("LRC6008", f"input mode {mode} attaches nothing", **spec.at("input", "attachments"),
                             hint="remove attachments, or set input.mode to file or text-or-file")
        if mode == "tools" and set(data["systems"]) != {"agentic"}:
            self.diags.error("LRC6008", "input mode tools reaches the item only through tools, so only the agentic system can run it",
                             **spec.at("input", "mode"))
        if mode in FILE_MODES and not attachments:
            self.diags.error("LRC6008", f"input mode {mode} needs input.attachments (which item file, which media type)", **spec.at("input", "mode"))

        item_schema = data["dataset"]["item_schema"]
        if self._check_schema(spec, ("dataset", "item_schema"), item_schema):
            for err in schemacheck.instance_errors(item_schema, data["sample_item"]):
                self.diags.error("LRC3007", f"sample_item does not match item_schema: {err.message}",
                                 **spec.at("sample_item", *err.path))

        found = self._file(spec, ("output", "schema"))
        if found:
            relpath, text = found
            try:
                schema = load_json_file(text)
            except json.JSONDecodeError as exc:
                self.diags.error("LRC3005", f"{relpath} is not valid JSON: {exc.msg}", path=relpath, line=exc.lineno, column=exc.colno)
                schema = None
            except RecursionError:  # json's decoder recurses per nesting level
                self.diags.error("LRC3005", f"{relpath} nests too deeply to parse", path=relpath)
                schema = None
            except _Refused as exc:
                if exc.pointer is not None:  # a repeated key: refused as in YAML specs
                    line, column = _duplicate_line_col(text, exc.needle)
                    self.diags.error("LRC1002", f"{relpath}: {exc.msg}", path=relpath, line=line, column=column, pointer=exc.pointer,
                                     hint="keep one occurrence of the key (JSON readers disagree on which value wins)")
                else:
                    line, column = _line_col(text, exc.needle)
                    self.diags.error("LRC3005", f"{relpath} is not valid JSON: {exc.msg}", path=relpath, line=line, column=column)
                schema = None
            if schema is not None and SURROGATE.search(json.dumps(schema, ensure_ascii=False)):
                self.diags.error("LRC3005", f"{relpath} holds a lone surrogate escape (e.g. \\ud800), which is not a Unicode character",
                                 path=relpath, hint="write the character itself, or a valid surrogate pair")
                schema = None
            if schema is not None and self._check_schema(spec, ("output", "schema"), schema, relpath):
                norm["output"]["schema"] = schema

        for system_key, use in data["systems"].items():
            for role in PROMPT_ROLES:
                if role not in use["prompts"]:
                    continue
                got = self._file(spec, ("systems", system_key, "prompts", role))
                if got:
                    norm["systems"][system_key]["prompts"][role] = got[1]
            self._input_mode(spec, system_key, use)
            tools = use.get("tools")
            if tools is not None:
                seen: set[str] = set()
                for i, tool in enumerate(tools["definitions"]):
                    if tool["name"] in seen:
                        self.diags.error("LRC6006", f"tool '{tool['name']}' is defined twice", **spec.at("systems", system_key, "tools", "definitions", i, "name"))
                    seen.add(tool["name"])
                    if "parameters" in tool:
                        params = tool["parameters"]
                        if params.get("type") != "object":
                            self.diags.error("LRC6006", "tool parameters must be a JSON Schema of type object",
                                             **spec.at("systems", system_key, "tools", "definitions", i, "parameters"))
                        self._check_schema(spec, ("systems", system_key, "tools", "definitions", i, "parameters"), params)
        spec.normalized = norm

    def _input_mode(self, spec: Spec, system_key: str, use: dict[str, Any]) -> None:
        """File modes need attachments and a file-mode prompt; text mode has neither."""
        mode = spec.data["input"]["mode"]
        has_file_prompt = "user_file" in use["prompts"]
        if mode not in FILE_MODES and has_file_prompt:
            self.diags.error("LRC6008", f"input mode is {mode}, so no file-mode prompt is used", **spec.at("systems", system_key, "prompts", "user_file"),
                             hint="remove user_file, or set input.mode to text-or-file")
        if mode in FILE_MODES and not has_file_prompt:
            self.diags.error("LRC6008", f"input mode {mode} needs a user_file prompt for the attached document", **spec.at("systems", system_key, "prompts"),
                             hint="add `user_file: prompts/<name>.j2`")

    def _check_schema(self, spec: Spec, parts: tuple, schema: Any, relpath: str | None = None) -> bool:
        """A spec schema is valid 2020-12, every regex in it compiles with the linear-time
        engine (LRC3020 at each one that does not), and that engine can build it."""
        verdict = schemacheck.check(schema)
        for bad in verdict.bad_regexes:
            inner = pointer_of(list(bad.path))
            is_name = len(bad.path) >= 2 and bad.path[-2] == "patternProperties"
            where = spec.at(*parts) if relpath else spec.at(*parts, *bad.path)
            if is_name and not relpath:
                where["line"], where["column"] = spec.doc.locate_key(where["pointer"])
            what = "patternProperties name" if is_name else "pattern"
            self.diags.error("LRC3020", f"{what} {json.dumps(bad.pattern, ensure_ascii=False)} cannot be used: {bad.problem}", **where,
                             notes=(f"in {relpath} at {inner}",) if relpath else (),
                             hint="lrc evaluates every spec regex in linear time; rewrite it without backreferences or "
                                  "look-around (e.g. match both alternatives, or check the relation in a validator)")
        if verdict.error is not None:
            where = spec.at(*parts)
            self.diags.error("LRC3006", f"not a valid JSON Schema: {verdict.error.message}", **where,
                             notes=(f"in {relpath}",) if relpath else ())
        if not verdict.ok:
            return False
        overlong = schemacheck.overlong_pattern_lengths(schema)
        for path, limit in overlong:
            where = spec.at(*parts) if relpath else spec.at(*parts, *path)
            self.diags.error("LRC3021", f"maxLength {limit} is above the {SUBJECT_LIMIT:,}-character limit for pattern checks",
                             **where, notes=(f"in {relpath} at {pointer_of(list(path))}",) if relpath else (),
                             hint=f"lrc never matches a string longer than {SUBJECT_LIMIT:,} characters against a spec's regex "
                                  f"(such a value fails); lower maxLength to {SUBJECT_LIMIT:,} or less, or drop the pattern")
        if overlong:
            return False
        problem = schemacheck.usable_error(schema)
        if problem is not None:
            self.diags.error("LRC3006", f"not a usable JSON Schema: {problem}", **spec.at(*parts),
                             notes=(f"in {relpath}",) if relpath else ())
            return False
        return True

    def _edition(self, graph: Graph, spec: Spec) -> None:
        data = spec.data
        if data.get("errata"):  # deprecated: an erratum is its own spec and never changes the plan digest
            self.diags.error("LRC6117", "errata are no longer written inside the edition: adding one would change its plan digest",
                             **spec.at("errata"), hint=f"move each entry to specs/errata/E-{data['id']}-NNN.yaml (kind: erratum, "
                                                       f"naming this edition's plan digest) and leave `errata: []`")
        standard = self._spec_ref(graph, spec, ("standard",), "standard")
        analysis = self._code_ref(spec, ("analysis",))
        if analysis is not None and analysis.id != ANALYSIS_COMPONENT:
            self.diags.error("LRC3008", f"analysis pins '{data['analysis']}', which is not the analysis code ({ANALYSIS_COMPONENT})",
                             **spec.at("analysis"), hint=f"pin {ANALYSIS_COMPONENT}.v<N>")
        workloads = [self._spec_ref(graph, spec, ("workloads", i), "workload") for i in range(len(data["workloads"]))]
        systems = [self._spec_ref(graph, spec, ("systems", i), "system") for i in range(len(data["systems"]))]
        if "taxonomy" in data:
            self._spec_ref(graph, spec, ("taxonomy",), "taxonomy")
        for split in ("test", "dev"):
            for i, _ in enumerate(data.get("tasks", {}).get(split, [])):
                self._spec_ref(graph, spec, ("tasks", split, i), "task")
        has_tasks = any(data.get("tasks", {}).get(split) for split in ("test", "dev"))
        for i, system in enumerate(systems):
            if system is not None and "implementation" not in system.data:
                self.diags.error("LRC6009", f"{system.ref} has no implementation: the runtime cannot run it yet", **spec.at("systems", i),
                                 hint="remove it from the edition; it is specified as data for a later runtime")
            elif system is not None and system.data["mode"] in TASK_SYSTEM_MODES and not has_tasks:
                self.diags.error("LRC6010", f"{system.ref} runs reliability tasks only, and this edition lists none",
                                 **spec.at("systems", i),
                                 hint="its workloads run on single-shot and agentic; add tasks (tasks.dev / tasks.test) or remove it")
        # A system's budget bounds the task runs it makes (lrc.runtime.tasks.runner.effective_budget);
        # tasks run on the task-mode systems, or on agentic ones when the edition lists none.
        task_systems_listed = any(s is not None and s.data.get("mode") in TASK_SYSTEM_MODES for s in systems)
        for i, system in enumerate(systems):
            if system is None or not system.data.get("budget"):
                continue
            mode = system.data.get("mode")
            if not (has_tasks and (mode in TASK_SYSTEM_MODES or (mode == "agentic" and not task_systems_listed))):
                self.diags.warning("LRC6012", f"{system.ref}'s budget is never applied in this edition: a system's budget bounds "
                                              f"the task runs it makes, and here it makes none", **spec.at("systems", i),
                                   hint="workload runs are bounded by the system's max_steps alone; remove the system's `budget`, "
                                        "or run the edition's tasks on it")
        for role in ("model", "second_model"):
            judge = data.get("judge", {}).get(role)
            if judge is not None and judge.startswith("lrc/") and judge != REFERENCE_JUDGE:
                self.diags.error("LRC3001", f"unknown embedded reference judge '{judge}'", **spec.at("judge", role),
                                 hint=f"the embedded judge is {REFERENCE_JUDGE}")
            if judge is not None and judge not in data["pricing"]:
                self.diags.error("LRC6001", f"judge model '{judge}' has no frozen price", **spec.at("judge", role),
                                 hint="judge tokens are grading cost: price them like any model (reported apart from CPO)")
        model_ids = [m["id"] for m in data["models"]]
        for i, model in enumerate(data["models"]):
            if model["id"].startswith("lrc/") and model["id"] not in REFERENCE_MODELS:
                guess = did_you_mean(model["id"], REFERENCE_MODELS)
                self.diags.error("LRC3001", f"unknown embedded reference model '{model['id']}'", **spec.at("models", i, "id"),
                                 hint=f"did you mean {guess}?" if guess else f"embedded models: {', '.join(sorted(REFERENCE_MODELS))}")
            allowed = REFERENCE_ROLES.get(model["id"])
            role = model.get("role")
            if allowed is not None and role not in allowed:
                self.diags.error("LRC6011", f"{model['id']} cannot take the role '{role}'", **spec.at("models", i, "role"),
                                 hint=f"its role is {' or '.join(allowed)}: "
                                      + ("a calibration check is never scored" if allowed[0] in CHECK_ROLES else
                                         "the embedded oracle and null model are the calibration checks"))
            elif allowed is None and role in CHECK_ROLES and not model["id"].startswith("lrc/"):
                self.diags.error("LRC6011", f"{model['id']} cannot be a calibration check ('{role}')", **spec.at("models", i, "role"),
                                 hint="only lrc/oracle (infrastructure-check) and lrc/null (floor-check) have a known expected score; "
                                      "score this model as flagship, candidate or baseline")
            if model_ids.count(model["id"]) > 1 and model_ids.index(model["id"]) != i:
                self.diags.error("LRC6007", f"model '{model['id']}' is listed twice", **spec.at("models", i, "id"))
            if model["id"] not in data["pricing"]:
                self.diags.error("LRC6001", f"model '{model['id']}' has no frozen price", **spec.at("models", i, "id"),
                                 hint=f"add pricing.{model['id']} with input/output prices, as_of and source (an explicit \"0\" if it is free)")
        judges = {data.get("judge", {}).get(r) for r in ("model", "second_model")} - {None}
        for name in data["pricing"]:
            if name not in model_ids and name not in judges:
                self.diags.warning("LRC6002", f"pricing lists '{name}', which the edition does not run", **spec.at("pricing", name))
        if standard is not None:
            threshold = Decimal(data["qualifying"]["min_pass_rate"])
            floor = Decimal(standard.data["policy"]["qualifying_pass_rate"])
            if threshold < floor:
                self.diags.error("LRC6007", f"qualifying pass rate {threshold} is below the standard's {floor}", **spec.at("qualifying", "min_pass_rate"))
        supported: set[str] = set()
        for i, workload in enumerate(workloads):
            if workload is None:
                continue
            if workload.data["input"]["mode"] == "file":
                for j, model in enumerate(data["models"]):
                    if not model.get("accepts_files"):
                        self.diags.error("LRC6008", f"{workload.ref} attaches its document (input mode file) but '{model['id']}' does not accept files",
                                         **spec.at("models", j, "id"), hint="set accepts_files: true if it does, or use input mode text-or-file")
            supported.update(workload.data["systems"].keys())
            ours = {s.id for s in systems if s is not None}
            if not ours & set(workload.data["systems"]):
                task_only = sorted(s.ref for s in systems if s is not None and s.data["mode"] in TASK_SYSTEM_MODES)
                self.diags.error("LRC6007", f"{workload.ref} supports none of the edition's systems", **spec.at("workloads", i),
                                 hint=(f"it runs on {', '.join(sorted(workload.data['systems']))}; {', '.join(task_only)} run(s) "
                                       f"reliability tasks only") if task_only else None)
            for key, use in workload.data["systems"].items():
                pinned = use["system"]
                mine = next((s for s in systems if s is not None and s.id == key), None)
                if mine is not None and mine.ref != pinned:
                    self.diags.error("LRC6007", f"{workload.ref} pins {pinned} but the edition runs {mine.ref}", **spec.at("workloads", i))
        for i, system in enumerate(systems):
            if None in workloads:  # an unresolved workload is already an error; its systems are unknown
                break
            if system is not None and system.id not in supported and system.data["mode"] not in TASK_SYSTEM_MODES:
                self.diags.warning("LRC6004", f"no workload of this edition runs {system.ref}", **spec.at("systems", i))
