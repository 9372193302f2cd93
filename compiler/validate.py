"""Stage 2: check each loaded spec against its kind's JSON Schema (Draft 2020-12).

Schemas come from the project's schemas/ folder. A spec is first checked by jsonschema-rs
(formats asserted, no network), which may only *accept*; a spec it does not accept is
validated by Python jsonschema through an offline `referencing` registry, and every error
(not just the best match) becomes a diagnostic at the YAML position of the offending value,
with its JSON pointer, a stable code by keyword, and a did-you-mean for unknown fields and
values. So Python jsonschema decides every refusal and words every message, and is not even
imported by a compile whose specs are all valid.

No regex is run by a backtracking engine here either: both validators decide `pattern` and
`format: regex` with the linear-time engine of `lrc.runtime.lock.safe_regex` (the spec value
is hostile; a workload's item schema inside it is only ever *data* to these schemas). The
project's schemas use no `patternProperties` (a test keeps it so), the one keyword whose
Python implementation would still reach `re` through `additionalProperties`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from lrc.compiler.diagnostics import Diagnostics, pointer_of
from lrc.compiler.load import SourceDoc, read_regular
from lrc.runtime.lock import safe_regex

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

KINDS = {
    "standard": "standard", "systems": "system", "workloads": "workload", "editions": "edition",
    "rubrics": "rubric", "taxonomies": "taxonomy", "tasks": "task", "errata": "erratum",
}
"""specs/ sub-folder -> spec kind (and schemas/<kind>.schema.json)."""
BUNDLED_SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
"""The schemas of this lrc release: the repository's schemas/ in a checkout (compiler/../schemas),
`lrc/schemas/` inside an installed wheel (setup.py ships them as package data)."""


def schemas_dir(root: Path) -> Path:
    """The schemas a project's specs are validated against: its own schemas/ when it has one
    (lrc's repository, or a specs repository that vendors them), else those of the installed
    lrc release -- a repository holding only specs/ and generated/ pins lrc, and with it the
    schemas."""
    own = root / "schemas"
    return own if own.is_dir() else BUNDLED_SCHEMAS
MAX_SCHEMA_BYTES = 4 * 1024 * 1024


@dataclass
class SchemaSet:
    """The project's schemas, loaded once; validators are built per kind on first use."""

    schemas: dict[str, dict]
    digest: str = ""  # sha256 over the names and bytes read: what validation results depend on
    _python: dict[str, Any] = field(default_factory=dict)
    _rust: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, schema_dir: Path, diags: Diagnostics | None = None) -> "SchemaSet":
        """The schemas of `schema_dir`. A file that is not a regular file holding a JSON object
        is an LRC3005 diagnostic in `diags` (schemas/ arrives in pull requests like specs/),
        or ValueError without `diags`."""
        schemas: dict[str, dict] = {}
        h = hashlib.sha256()
        for path in sorted(schema_dir.glob("*.schema.json")):
            rel = f"{schema_dir.name}/{path.name}"
            raw = read_regular(path, MAX_SCHEMA_BYTES)
            problem = None
            try:
                schema = json.loads(raw.decode("utf-8")) if raw is not None else None
                if raw is None:
                    problem = "not a readable regular file"
                elif not isinstance(schema, dict):
                    problem = "not a JSON object"
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
                problem = f"not valid JSON: {exc}"
            if problem is not None:
                if diags is None:
                    raise ValueError(f"{rel}: {problem}")
                diags.error("LRC3005", f"{rel} is {problem}", path=rel, hint="schemas/ holds the JSON Schemas lrc ships; restore it from version control")
                continue
            h.update(path.name.encode() + b"\0" + raw + b"\0")
            schemas[path.name.removesuffix(".schema.json")] = schema
        return cls(schemas, h.hexdigest())

    def validator(self, kind: str) -> "Draft202012Validator":
        """Python jsonschema's validator for `kind`: the authority on every error."""
        if not self._python:
            from jsonschema import Draft202012Validator
            from referencing import Registry, Resource

            registry = Registry().with_resources((schema["$id"], Resource.from_contents(schema)) for schema in self.schemas.values())
            linear = _linear_python_validator()
            checker = _linear_format_checker()
            self._python.update({
                name: linear(schema, registry=registry, format_checker=checker)
                for name, schema in self.schemas.items()
            })
        return self._python[kind]

    def fast_valid(self, kind: str, instance: Any) -> bool:
        """True only when jsonschema-rs finds `instance` valid (formats asserted); False when it
        does not, or cannot tell (not installed, a schema it cannot build)."""
        rust = self._rust.get(kind)
        if rust is None:
            try:
                import jsonschema_rs

                rust = jsonschema_rs.Draft202012Validator(self.schemas[kind], validate_formats=True, offline=True,
                                                          formats={"regex": safe_regex.is_regex}, pattern_options=safe_regex.pattern_options())
            except Exception:  # noqa: BLE001 - Python jsonschema decides every spec of this kind
                rust = False
            self._rust[kind] = rust
        if not rust:
            return False
        try:
            return bool(rust.is_valid(instance))
        except Exception:  # noqa: BLE001 - a value it cannot take: let Python decide
            return False


def _linear_format_checker() -> Any:
    """Python jsonschema's format checker, with `format: regex` decided by the linear-time engine."""
    from jsonschema import Draft202012Validator, FormatChecker

    checker = FormatChecker()
    checker.checkers = dict(Draft202012Validator.FORMAT_CHECKER.checkers)
    checker.checkers["regex"] = (safe_regex.is_regex, ())
    return checker


def _linear_python_validator() -> Any:
    """Draft202012Validator whose `pattern` keyword is the linear-time engine's search. The
    patterns are lrc's own (schemas/), small and trusted, so no subject-length limit applies
    (as in `fast_valid`, which decides with the same engine)."""
    from jsonschema import Draft202012Validator, ValidationError, validators

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and not safe_regex.search(patrn, instance, limit=False):
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    return validators.extend(Draft202012Validator, {"pattern": pattern})


PER_MODEL_PROMPT = __import__("re").compile(r"prompt|template|instruction", __import__("re").I)


OPERATING_SETTINGS = {"api_base": "--api-base", "api_key_env": "--api-key-env", "max_concurrency": "--max-concurrency"}
"""Per-model settings an edition once held: how a model is reached, never what is measured.
They live in a run profile (schemas/run-profile.schema.json) or the flags of `lrc execute`."""


def operating_hint(model: Any, key: str, value: Any, edition: Any = None) -> str:
    """The run-profile equivalent of an operating setting found in an edition's model entry."""
    model_id = model if isinstance(model, str) and model else "MODEL"
    shown = json.dumps(value, ensure_ascii=False)
    flag_value = value if isinstance(value, str) else shown
    bump = f"`lrc bump {edition}`" if isinstance(edition, str) and edition else "`lrc bump EDITION`"
    from lrc.compiler.resolve import REFERENCE_MODELS

    if key != "max_concurrency" and model_id in REFERENCE_MODELS:  # nowhere to reach: nothing to move (LRC8314)
        return (f"remove it from the edition (once recorded, that is a content change: {bump}); {model_id} is an embedded "
                f"reference model that runs in-process, so it has no endpoint or key variable to set anywhere")
    return (f"remove it from the edition (once recorded, that is a content change: {bump}) and set it per execute "
            f"in a run profile, "
            f"`models: {{{json.dumps(model_id)}: {{{key}: {shown}}}}}` (`lrc execute PLAN --profile run.yaml`), "
            f"or with `{OPERATING_SETTINGS[key]} {model_id}={flag_value}`")


def _suggest(word: str, options: Iterable[str]) -> str | None:
    match = difflib.get_close_matches(word, sorted(options), n=1, cutoff=0.6)
    return match[0] if match else None


def _known_properties(schema: dict) -> list[str]:
    return sorted(schema.get("properties", {}).keys())


def _type_hint(error: ValidationError) -> str | None:
    expected = error.validator_value
    if expected == "string" and isinstance(error.instance, (int, float)) and not isinstance(error.instance, bool):
        return f'quote the value: "{error.instance}" (decimals are strings so they are never rounded through binary floats)'
    if expected == "integer" and isinstance(error.instance, str) and error.instance.isdigit():
        return f"write it without quotes: {error.instance}"
    return None


def _leaf_errors(error: ValidationError) -> list[ValidationError]:
    """For oneOf/anyOf, the errors of the branch that got furthest, else the error itself."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        best = max(error.context, key=lambda e: (len(e.absolute_path), -len(e.schema_path)))
        depth = len(best.absolute_path)
        branch = [e for e in error.context if len(e.absolute_path) == depth and e.schema_path[0] == best.schema_path[0]]
        return branch or [error]
    return [error]


def _report(error: ValidationError, doc: SourceDoc, diags: Diagnostics) -> None:
    parts = list(error.absolute_path)
    pointer = pointer_of(parts)
    line, col = doc.locate(pointer)
    kw = error.validator
    if kw == "required":
        missing = [p for p in error.validator_value if isinstance(error.instance, dict) and p not in error.instance]
        for name in missing or [str(error.message)]:
            diags.error("LRC2002", f"missing required field '{name}'", path=doc.path, line=line, column=col,
                        pointer=pointer, hint=f"add `{name}:` here")
        return
    if kw == "additionalProperties" and isinstance(error.instance, dict):
        known = _known_properties(error.schema)
        for key in sorted(k for k in error.instance if k not in known and not _matches_pattern_props(error.schema, k)):
            kp = pointer_of(parts + [key])
            kline, kcol = doc.locate_key(kp)
            if len(parts) == 2 and parts[0] == "models" and key in OPERATING_SETTINGS and doc.data.get("kind") == "edition":
                diags.error("LRC2010", f"'{key}' is an operating setting, not part of an edition: it moves to a run profile",
                            path=doc.path, line=kline, column=kcol, pointer=kp,
                            hint=operating_hint(error.instance.get("id"), key, error.instance[key], doc.data.get("id")))
                continue
            if len(parts) == 2 and parts[0] == "models" and PER_MODEL_PROMPT.search(key):
                diags.error("LRC6105", f"model-specific prompt '{key}' is not allowed: prompts are identical across models", path=doc.path,
                            line=kline, column=kcol, pointer=kp,
                            hint="seed §3: no model-specific tuning; document a structural provider difference in provider_exception")
                continue
            guess = _suggest(key, known)
            diags.error("LRC2003", f"unknown field '{key}'", path=doc.path, line=kline, column=kcol, pointer=kp,
                        hint=f"did you mean '{guess}'?" if guess else f"allowed here: {', '.join(known)}")
        return
    if kw == "propertyNames":
        key = error.instance
        kp = pointer_of(parts + [key]) if isinstance(key, str) else pointer
        kline, kcol = doc.locate_key(kp)
        allowed = error.validator_value.get("enum", []) if isinstance(error.validator_value, dict) else []
        guess = _suggest(str(key), allowed)
        diags.error("LRC2004", f"'{key}' is not an allowed key here", path=doc.path, line=kline, column=kcol, pointer=kp,
                    hint=f"did you mean '{guess}'?" if guess else (f"allowed: {', '.join(allowed)}" if allowed else None))
        return
    if kw == "type":
        diags.error("LRC2001", f"expected {error.validator_value}, found {_json_type(error.instance)}",
                    path=doc.path, line=line, column=col, pointer=pointer, hint=_type_hint(error))
        return
    if kw in ("enum", "const"):
        allowed = error.validator_value if kw == "enum" else [error.validator_value]
        shown = ", ".join(json.dumps(a) for a in allowed)
        guess = _suggest(str(error.instance), [str(a) for a in allowed]) if isinstance(error.instance, str) else None
        diags.error("LRC2004", f"{json.dumps(error.instance)} is not allowed here (allowed: {shown})",
                    path=doc.path, line=line, column=col, pointer=pointer,
                    hint=f"did you mean {json.dumps(guess)}?" if guess else
                    (error.schema.get("description") if isinstance(error.schema, dict) else None))
        return
    if kw in ("pattern", "format"):
        what = f"pattern {error.validator_value}" if kw == "pattern" else f"format '{error.validator_value}'"
        diags.error("LRC2005", f"{json.dumps(error.instance)} does not match {what}", path=doc.path, line=line,
                    column=col, pointer=pointer, hint=error.schema.get("description"))
        return
    diags.error("LRC2009", error.message, path=doc.path, line=line, column=col, pointer=pointer,
                hint=error.schema.get("description") if isinstance(error.schema, dict) else None)


def _matches_pattern_props(schema: dict, key: str) -> bool:
    return any(safe_regex.search(p, key) for p in schema.get("patternProperties", {}))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value}"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def validate(doc: SourceDoc, kind: str, schemas: SchemaSet, diags: Diagnostics) -> bool:
    """Validate one document; True when it has no schema errors."""
    if schemas.fast_valid(kind, doc.data):
        return True
    validator = schemas.validator(kind)
    before = len(diags.items)
    errors = sorted(validator.iter_errors(doc.data), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    for error in errors:
        for leaf in _leaf_errors(error):
            _report(leaf, doc, diags)
    return not any(d.severity == "error" for d in diags.items[before:])
