"""The output contract: parse a model's reply as JSON and check it against the locked schema.

Shared by every workload: a reply that does not parse, or does not follow the published
output schema, is a model failure with a validator result that says where it broke.
"""

from __future__ import annotations

import json
from typing import Any

from lrc.runtime import boundedjson
from lrc.runtime.checks.results import ValidatorResult, result
from lrc.runtime.lock import safe_regex

COMPONENT_ID = "lrc.output-contract"
COMPONENT_VERSION = 2

MAX_ANSWER_CHARS = boundedjson.MAX_CHARS


class NoJSON(ValueError):
    pass


def extract_json(text: str | None) -> Any:
    """The first JSON object or array in a reply, tolerating prose and ``` fences around it.

    Parsed with the limits of `lrc.runtime.boundedjson` (length, nesting, digits): a reply
    over a limit is refused as a whole, with the reason.
    """
    if text is None or (isinstance(text, str) and not text.strip()):
        raise NoJSON("the reply is empty")
    if not isinstance(text, str):
        raise NoJSON(f"the reply is not text but {type(text).__name__}")
    if len(text) > MAX_ANSWER_CHARS:
        raise NoJSON(f"the reply is longer than {MAX_ANSWER_CHARS} characters")
    try:
        return boundedjson.loads(text)
    except boundedjson.Unparseable:
        pass
    try:
        return boundedjson.raw_decode_first(text)
    except boundedjson.Unparseable as exc:
        raise NoJSON(str(exc)) from None


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
