"""The output contract: parse a model's reply as JSON and check it against the locked schema.

Shared by every workload: a reply that does not parse, or does not follow the published
output schema, is a model failure with a validator result that says where it broke.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator

from lrc.runtime.checks.results import ValidatorResult, result

COMPONENT_ID = "lrc.output-contract"
COMPONENT_VERSION = 1

MAX_ANSWER_CHARS = 1_000_000


class NoJSON(ValueError):
    pass


def extract_json(text: str | None) -> Any:
    """The first JSON object or array in a reply, tolerating prose and ``` fences around it."""
    if text is None or not text.strip():
        raise NoJSON("the reply is empty")
    if len(text) > MAX_ANSWER_CHARS:
        raise NoJSON(f"the reply is longer than {MAX_ANSWER_CHARS} characters")
    decoder = json.JSONDecoder()
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(text, i)
                return value
            except json.JSONDecodeError:
                continue
    raise NoJSON("no JSON object found in the reply")


@lru_cache(maxsize=64)
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_json))


def check(answer: Any, schema: dict[str, Any]) -> ValidatorResult:
    """One result: does the (normalized) answer follow the output schema?"""
    validator = _validator(json.dumps(schema, sort_keys=True))
    errors = sorted(validator.iter_errors(answer), key=lambda e: list(map(str, e.absolute_path)))
    if not errors:
        return result(COMPONENT_ID, COMPONENT_VERSION, "pass", observed="valid", expected="output schema", location="/",
                      message="the answer follows the output contract")
    first = errors[0]
    pointer = "".join(f"/{p}" for p in first.absolute_path) or "/"
    return result(COMPONENT_ID, COMPONENT_VERSION, "fail", observed=f"{len(errors)} schema error(s)", expected="output schema",
                  location=pointer, message=f"{first.message} (at {pointer})")


def unparseable(reason: str) -> ValidatorResult:
    return result(COMPONENT_ID, COMPONENT_VERSION, "fail", observed=reason, expected="one JSON answer", location="/",
                  message=f"the reply is not a JSON answer: {reason}")
