"""Hostile model replies and tool arguments, as raw chat-completion bodies.

Each case is a function of the request body that returns the exact bytes a provider sends
back with HTTP 200: the reply text or the tool-call arguments a model might emit (huge
integers, deep nesting, invalid JSON, huge strings, wrong types) and responses whose shape is
wrong (no choices, content not a string, arguments not a string, ...). The bytes are built by
hand, never with `json.dumps` of the hostile value, so nothing here trips Python's own
int-string limit. `pick(body, seed)` chooses a case deterministically from the request, so a
run's outcome does not depend on timing.

Used by tests/test_model_output_limits.py and benchmarks/fuzz_replies.py.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any, Callable

BIG_INT = "9" * 5000
DEEP = 5000
OVER_THE_BOUND = 32 * 1024 * 1024 + 1  # bounded_http.MAX_RESPONSE_BYTES + 1 (test_response_bound.py checks)


def _q(text: str) -> str:
    """A JSON string literal (text holds no hostile ints, so dumps is safe)."""
    return json.dumps(text)


def _envelope(message_json: str, finish: str = "stop", usage: str | None = None) -> bytes:
    usage = usage or '{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}'
    return ('{"id": "chatcmpl-hostile", "object": "chat.completion", "created": 1764374400, "model": "stub-model", '
            f'"choices": [{{"index": 0, "message": {message_json}, "finish_reason": "{finish}"}}], "usage": {usage}}}').encode("utf-8")


def _content(text: str) -> bytes:
    return _envelope('{"role": "assistant", "content": ' + _q(text) + "}")


def _tool_call(body: dict[str, Any], arguments_json: str, name: str | None = None) -> bytes:
    tools = body.get("tools") or []
    names = [t.get("function", {}).get("name") for t in tools] or ["submit"]
    # the terminal tool (the last one declared) receives the hostile answer, unless told
    name = name or names[-1]
    step = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant") + 1
    call = f'{{"id": "call_{step}_1", "type": "function", "function": {{"name": {_q(name)}, "arguments": {arguments_json}}}}}'
    return _envelope('{"role": "assistant", "content": null, "tool_calls": [' + call + "]}", finish="tool_calls")


def _args(text: str) -> str:
    """Tool-call arguments are a JSON string holding JSON: `text` as that string."""
    return _q(text)


# -- the hostile payloads (as JSON text a model might write) ------------------------------

def _payloads(rng: random.Random) -> dict[str, str]:
    depth = rng.choice([DEEP, 1200, 200, 70])
    return {
        "big-int": '{"labels": [' + BIG_INT + "]}",
        "big-int-bare": BIG_INT,
        "big-negative-int": '{"value": -' + BIG_INT + "}",
        "big-float": '{"value": ' + BIG_INT + "." + BIG_INT + "e99999}",
        "nan-inf": '{"value": NaN, "other": -Infinity}',
        "deep-array": "[" * depth + "]" * depth,
        "deep-object": '{"a":' * depth + "1" + "}" * depth,
        "deep-unclosed": "[" * DEEP,
        "invalid-json": '{"labels": [1, 2,, }',
        "truncated": '{"labels": ["invo',
        "huge-string": '{"note": "' + "A" * rng.choice([200_000, 1_100_000]) + '"}',
        "many-keys": "{" + ",".join(f'"k{i}": {i}' for i in range(20_000)) + "}",
        "lone-surrogate": '{"text": "\\ud800"}',
        "nul-and-controls": '{"text": "\\u0000\\u001b[31m"}',
        "not-an-object": "[1, 2, 3]",
        "a-string": '"just a string"',
        "null": "null",
        "empty": "",
        "whitespace": "   \n ",
        "prose": "I think the answer is 42.",
        "fenced-big-int": "```json\n{\"x\": " + BIG_INT + "}\n```",
        "duplicate-keys": '{"a": 1, "a": 2}',
    }


PAYLOAD_NAMES = tuple(_payloads(random.Random(0)))

# -- malformed responses (the shape is wrong, whatever the model meant) --------------------

SHAPES: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "no-choices": lambda b: b'{"id": "x", "object": "chat.completion", "created": 1, "model": "m", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}',
    "empty-choices": lambda b: b'{"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}',
    "choices-not-a-list": lambda b: b'{"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": 7, "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}',
    "no-message": lambda b: _envelope("null"),
    "content-a-number": lambda b: _envelope('{"role": "assistant", "content": 12345}'),
    "content-an-object": lambda b: _envelope('{"role": "assistant", "content": {"labels": []}}'),
    "content-a-big-int": lambda b: _envelope('{"role": "assistant", "content": ' + BIG_INT + "}"),
    "content-deep": lambda b: _envelope('{"role": "assistant", "content": ' + "[" * DEEP + "]" * DEEP + "}"),
    "arguments-an-object": lambda b: _tool_call(b, '{"labels": []}'),
    "arguments-a-number": lambda b: _tool_call(b, "12"),
    "arguments-a-big-int": lambda b: _tool_call(b, BIG_INT),
    "tool-calls-not-a-list": lambda b: _envelope('{"role": "assistant", "content": null, "tool_calls": {"id": 1}}', "tool_calls"),
    "tool-call-no-function": lambda b: _envelope('{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function"}]}', "tool_calls"),
    "tool-call-name-a-number": lambda b: _tool_call(b, '"{}"', name=None).replace(b'"name": "', b'"name": 7, "x": "'),
    "unknown-tool": lambda b: _tool_call(b, _args("{}"), name="rm_rf"),
    "usage-big-int": lambda b: _envelope('{"role": "assistant", "content": "{}"}', usage='{"prompt_tokens": ' + BIG_INT + ', "completion_tokens": 1, "total_tokens": 2}'),
    "not-json-at-all": lambda b: b"<html>502 Bad Gateway? no: a 200 with garbage</html>",
    "invalid-utf8": lambda b: b'{"choices": [{"message": {"content": "\xff\xfe"}}]}',
    "top-level-array": lambda b: b"[]",
    "body-deep": lambda b: b"[" * DEEP + b"]" * DEEP,
    "body-big-int": lambda b: BIG_INT.encode(),
    # Valid JSON, an ordinary answer -- followed by more whitespace than a response may hold
    # (bounded_http.MAX_RESPONSE_BYTES): read whole, it is 32 MiB in memory per call.
    "body-over-the-bound": lambda b: _envelope('{"role": "assistant", "content": "{\\"labels\\": []}"}') + b" " * OVER_THE_BOUND,
}


def cases() -> list[str]:
    """Every case name: `content:<payload>`, `args:<payload>`, `shape:<name>`."""
    return ([f"content:{p}" for p in PAYLOAD_NAMES] + [f"args:{p}" for p in PAYLOAD_NAMES] + [f"shape:{s}" for s in SHAPES])


def reply(case: str, body: dict[str, Any], rng: random.Random | None = None) -> bytes:
    rng = rng or random.Random(0)
    kind, name = case.split(":", 1)
    if kind == "shape":
        return SHAPES[name](body)
    payload = _payloads(rng)[name]
    if kind == "content":
        return _content(payload)
    if not body.get("tools"):
        return _content(payload)  # a single-shot request has no tools to call
    return _tool_call(body, _args(payload))


def pick(body: dict[str, Any], seed: int = 0, only: list[str] | None = None) -> tuple[str, bytes]:
    """A case chosen from the request (and `seed`) alone: (name, raw body)."""
    canonical = json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False)
    h = int.from_bytes(hashlib.sha256(f"{seed}|{canonical}".encode("utf-8")).digest()[:8], "big")
    pool = only or cases()
    case = pool[h % len(pool)]
    return case, reply(case, body, random.Random(h))
