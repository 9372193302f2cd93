"""The output contract: parse a model's reply as JSON and check it against the locked schema.

Shared by every workload: a reply that does not parse, or does not follow the published
output schema, is a model failure with a validator result that says where it broke.
"""

from __future__ import annotations

import json
from typing import Any

from lrc.runtime.checks.results import ValidatorResult, result
from lrc.runtime.lock import safe_regex

COMPONENT_ID = "lrc.output-contract"
COMPONENT_VERSION = 2

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


def check(answer: Any, schema: dict[str, Any]) -> ValidatorResult:
    """One result: does the (normalized) answer follow the output schema?

    The schema is evaluated by the linear-time engine (`lrc.runtime.lock.safe_regex`): the
    answer is hostile, and a backtracking regex in the schema would let it stall the run."""
    errors = safe_regex.violations(schema, answer)
    if not errors:
        return result(COMPONENT_ID, COMPONENT_VERSION, "pass", observed="valid", expected="output schema", location="/",
                      message="the answer follows the output contract")
    first = errors[0]
    pointer = first.pointer
    return result(COMPONENT_ID, COMPONENT_VERSION, "fail", observed=f"{len(errors)} schema error(s)", expected="output schema",
                  location=pointer, message=f"{first.message} (at {pointer})")


def unparseable(reason: str) -> ValidatorResult:
    return result(COMPONENT_ID, COMPONENT_VERSION, "fail", observed=reason, expected="one JSON answer", location="/",
                  message=f"the reply is not a JSON answer: {reason}")
