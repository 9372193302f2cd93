"""Run profiles and the operating flags of `lrc execute`, checked like specs.

A run profile (schemas/run-profile.schema.json) says how one execute is operated: per model
its endpoint, key variable and concurrency; retries, timeouts and deadlines. It is not a
spec: it has no version, never enters a lock or a digest, and changing it never needs a bump.
It is still hostile input read with the compiler's YAML loader (no tags, anchors, aliases,
duplicate keys; size caps) and validated against its schema, so a mistake reads like a spec
error: `file:line:col: error[CODE]`, the JSON pointer and a hint, exit 1, nothing run.

`check(...)` returns the validated plain data the runtime takes (`operate.from_request`):
`{"profile": {...} | None, "profile_path": str | None, "flags": {setting: {model: value}}}`,
plus the diagnostics. A profile entry or a flag for a model that the plan does not run is an
error (LRC8311); a flag that is not `MODEL=VALUE`, or whose value breaks the profile's rule
for that setting, is LRC8312. An endpoint or a key variable for one of lrc's embedded models
(`lrc/...`, which run in-process and are never called over HTTP) is a warning, LRC8314: the
execute runs, and the operating record keeps the setting as given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Collection

from lrc.compiler.diagnostics import Diagnostic, Diagnostics, pointer_of
from lrc.compiler.load import MAX_FILE_BYTES, SourceDoc, decode_text, load_text, read_bytes

KIND = "run-profile"
#: flag -> the per-model setting it sets (the profile's `models.<id>.<setting>`)
FLAGS = {"--max-concurrency": "max_concurrency", "--api-base": "api_base", "--api-key-env": "api_key_env"}


def _schemas():
    from lrc.compiler.validate import BUNDLED_SCHEMAS, SchemaSet

    return SchemaSet.load(BUNDLED_SCHEMAS)


def load(path: Path, shown: str, diags: Diagnostics) -> SourceDoc | None:
    """The profile at `path` (named `shown` in diagnostics), loaded and schema-checked; None
    with diagnostics when it cannot be used."""
    from lrc.compiler.validate import validate

    try:
        raw = read_bytes(path, MAX_FILE_BYTES)
    except OSError as exc:
        diags.error("LRC8313", f"cannot read the run profile: {exc.strerror or exc}", path=shown,
                    hint="--profile takes a YAML file (see schemas/run-profile.schema.json and docs/profiles/ for an example)")
        return None
    if len(raw) > MAX_FILE_BYTES:
        diags.error("LRC8313", f"the run profile is larger than {MAX_FILE_BYTES} bytes", path=shown)
        return None
    before = len(diags.items)
    text = decode_text(raw, shown, diags)
    if text is None:
        diags.items[before:] = [Diagnostic("LRC8313", d.severity, d.summary, path=d.path, hint=d.hint) for d in diags.items[before:]]
        return None
    doc = load_text(text, shown, path, diags)
    if doc is None:
        return None
    if not validate(doc, KIND, _schemas(), diags):
        return None
    return doc


def _closest(model: str, models: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(model, models, n=1, cutoff=0.5)
    listed = ", ".join(models) or "none"
    return (f"did you mean {close[0]}? " if close else "") + f"the plan runs: {listed}"


def parse_flag(flag: str, text: str) -> tuple[str, str] | None:
    """`MODEL=VALUE` -> (model, value); None when it is not of that form."""
    model, sep, value = text.partition("=")
    if not sep or not model.strip() or not value.strip():
        return None
    return model.strip(), value.strip()


def _flag_value(setting: str, raw: str) -> Any:
    if setting == "max_concurrency":
        try:
            return int(raw)
        except ValueError:
            return raw  # the schema words the error (expected integer)
    return raw


def check(profile_path: Path | None, shown: str | None, flags: dict[str, list[str]], plan_models: list[str] | None,
          diags: Diagnostics, embedded: Collection[str] = ()) -> dict[str, Any] | None:
    """The validated operating request (see the module docstring), or None with diagnostics.

    `flags` maps a flag (`--max-concurrency`...) to its raw `MODEL=VALUE` strings, in order;
    `plan_models` are the model ids of the plan (None: the lock could not be read, and the
    runtime's own check names unknown models); `embedded` those of them that run in-process
    (lrc's reference models): an endpoint or a key variable set for one is a warning (LRC8314)."""
    before = len(diags.items)
    data: dict[str, Any] | None = None
    if profile_path is not None:
        doc = load(profile_path, shown or str(profile_path), diags)
        _hide_key_values(diags, before)
        if doc is not None:
            data = doc.data
            if plan_models is not None:
                for model in sorted((data.get("models") or {})):
                    if model not in plan_models:
                        pointer = pointer_of(["models", model])
                        line, col = doc.locate_key(pointer)
                        diags.error("LRC8311", f"the run profile sets model '{model}', which the plan does not run",
                                    path=doc.path, line=line, column=col, pointer=pointer, hint=_closest(model, plan_models))
                    elif model in embedded and isinstance(data["models"][model], dict):
                        for setting in ENDPOINT_SETTINGS:
                            if setting in data["models"][model]:
                                pointer = pointer_of(["models", model, setting])
                                line, col = doc.locate_key(pointer)
                                diags.warning("LRC8314", _unused_endpoint(model, f"its {setting}"), path=doc.path, line=line,
                                              column=col, pointer=pointer, hint=_UNUSED_HINT)
    parsed: dict[str, dict[str, Any]] = {}
    validator = _schemas().validator(KIND)
    for flag, values in flags.items():
        setting = FLAGS[flag]
        for text in values:
            pair = parse_flag(flag, text)
            if pair is None:
                diags.error("LRC8312", f"{flag} {text!r} is not MODEL=VALUE",
                            hint=f"e.g. {flag} openai/gpt-4.1-mini={_EXAMPLE[setting]}")
                continue
            model, raw = pair
            value = _flag_value(setting, raw)
            errors = list(validator.iter_errors({"kind": KIND, "models": {model: {setting: value}}}))
            if errors:
                error = errors[0]
                hint = error.schema.get("description") if isinstance(error.schema, dict) else None
                if setting == "api_key_env":  # the value may be the key itself: never echo it
                    diags.error("LRC8312", f"{flag} {model}=<value not shown>: not an environment variable NAME", hint=hint)
                elif setting == "api_base" and _may_hold_credential(raw):
                    diags.error("LRC8312", f"{flag} {model}=<value not shown>: {_CREDENTIAL_URL}", hint=hint)
                else:
                    diags.error("LRC8312", f"{flag} {text}: {_message(error, value)}", hint=hint)
                continue
            if plan_models is not None and model not in plan_models:
                diags.error("LRC8311", f"{flag} {text}: the plan does not run model '{model}'", hint=_closest(model, plan_models))
                continue
            if setting in ENDPOINT_SETTINGS and model in embedded:
                diags.warning("LRC8314", _unused_endpoint(model, f"{flag} {model}=..."), hint=_UNUSED_HINT)
            parsed.setdefault(setting, {})[model] = value  # a repeated flag: the last one wins
    if any(d.severity == "error" for d in diags.items[before:]):
        return None
    return {"profile": data, "profile_path": shown if profile_path is not None else None, "flags": parsed}


#: Settings that say how a model is reached over the network; an embedded model has no endpoint.
ENDPOINT_SETTINGS = ("api_base", "api_key_env")
_UNUSED_HINT = ("lrc's embedded models (lrc/...) run inside the lrc process: they are never called over HTTP and read no "
                "key. Remove the setting; max_concurrency still applies to them")


def _unused_endpoint(model: str, what: str) -> str:
    return (f"{what} has no effect: {model} is an embedded reference model (it runs in-process, with no endpoint); "
            f"the run's operating record keeps the setting as given")


_EXAMPLE = {"max_concurrency": "8", "api_base": "http://127.0.0.1:8000/v1", "api_key_env": "LEDGERRATE_OPENAI_KEY"}


def _message(error: Any, value: Any) -> str:
    if error.validator == "type":
        return f"expected {error.validator_value}, found {json.dumps(value)}"
    if error.validator == "pattern":
        return f"{json.dumps(value)} does not match {error.validator_value}"
    return str(error.message)


_CREDENTIAL_URL = ("an api_base may hold no user, password, query or fragment (the URL is not shown: it may hold a "
                   "credential, and it would be recorded in every run manifest and summary.json)")


def _may_hold_credential(url: str) -> bool:
    """Could this api_base carry a key (`user:KEY@host`, `?api-key=KEY`, `#KEY`)? Such a value
    is refused by the schema's pattern, and its diagnostic must not print it."""
    return any(c in url for c in "@?#")


def _hide_key_values(diags: Diagnostics, start: int) -> None:
    """A bad `api_key_env` may be the key pasted in by mistake, a refused `api_base` may carry
    one in its URL: say what is wrong without the value."""
    from dataclasses import replace

    for i in range(start, len(diags.items)):
        d = diags.items[i]
        if (d.pointer and d.pointer.endswith("/api_base") and d.code == "LRC2005" and "does not match" in d.summary
                and _may_hold_credential(d.summary.rsplit(" does not match ", 1)[0])):  # the value: all before the pattern
            diags.items[i] = replace(d, summary=_CREDENTIAL_URL)
            continue
        if d.pointer and d.pointer.endswith("/api_key_env") and d.code in ("LRC2001", "LRC2005", "LRC2009"):
            diags.items[i] = replace(d, summary="api_key_env is not an environment variable NAME (its value is not shown: "
                                                "it may be the key itself)")
