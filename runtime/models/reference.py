"""The embedded reference models, served to litellm as the custom provider `lrc`.

They let the whole path (prompts -> litellm -> parsing -> grading -> report) run without
keys or network, and they bound every workload from both sides:

- `lrc/oracle` answers from the item's answer key, but only for what it can see in the
  conversation; it must pass 100% (the infrastructure check, never scored);
- `lrc/null` answers nothing (on a task: submits the input unchanged); it must pass 0%;
- `lrc/baseline` is each workload's deterministic non-LLM heuristic: an honest floor;
- `lrc/careful` and `lrc/cheap` are the demo's *reference candidates*: deterministic stand-ins
  for a flagship and a cheap model, so that the demo's rate card shows what the product is
  (rates, CPO intervals, multipliers, a frontier premium, a workload no model qualifies on).
  Each answers a fixed share of a workload's items like the oracle and the others like the
  baseline (`CANDIDATES`); their prices are declared in the demo edition ("demo price") and
  every report labels them "demo model, demo price". They measure the harness, not any model.

The workload's behaviour comes from its `reference` component; the current workload and
item reach the handler through a context variable the runtime sets around each run (they
never travel in the request). Token usage is estimated deterministically (ceil(chars / 4))
so the accounting path is exercised with stable numbers.

litellm is imported only when the provider is registered (`register`, from
`adapter.load_litellm`, i.e. when a call is about to be made): a plan's code modules are
imported by `lrc report` and by a resume with nothing to do, which must not pay for it.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import math
import re
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from lrc.runtime.models import offline  # noqa: F401 - must precede the litellm import
from lrc.runtime.workloads.base import Item, Reply

COMPONENT_ID = "lrc.reference-models"
COMPONENT_VERSION = 5

PROVIDER = "lrc"
MODELS = ("oracle", "null", "baseline", "careful", "cheap")
JUDGE = "judge"
"""`lrc/judge`, the embedded reference judge: deterministic, it scores the anonymized output
shown to it from the item's answer key (the workload's `reference.judge`), so the whole judge
path runs offline. It is labelled as such wherever a judge is disclosed; it is not a model."""


@dataclass(frozen=True)
class ReferenceContext:
    policies: ModuleType  # the workload's reference component
    item: Item
    material: dict[str, Any] | None = None  # set for a judge call: what the judge is shown
    workload: str = ""  # the workload or task ref (e.g. `extract.invoice.v4`): the candidates' skill is per workload


@dataclass(frozen=True)
class Candidate:
    """A reference candidate's skill: which items it answers like `lrc/oracle`, which like
    `lrc/baseline`.

    `misses[workload id]` of every 15 consecutive item indices (default `default_misses`) are
    answered like the baseline, at positions fixed by a digest of (model, workload), so a
    cell's share is exact at n = 15 and the same items are missed under every system (the
    agentic multiplier compares like with like). A task has one item: it is missed when its
    id is in `tasks_missed`. The baseline may still pass a missed item: that is measured, not
    assumed."""

    misses: dict[str, int]
    default_misses: int
    tasks_missed: frozenset[str]


#: Tuned on the demo edition's public seed so that its card shows every kind of line: the
#: cheap model qualifies on triage, invoices and board briefs (the cheapest qualifying, with a
#: frontier premium over the flagship) and misses the bar elsewhere, where the careful one is
#: the cheapest qualifying; neither qualifies on reconcile.ledger (a workload with no
#: qualifying model); on the tasks the cheap one passes 1 of 4 direct and 3 of 4 orchestrated
#: (the validator-driven repair of lrc/baseline's partial job).
CANDIDATES: dict[str, Candidate] = {
    "careful": Candidate(misses={"reconcile.ledger": 6}, default_misses=1,
                         tasks_missed=frozenset({"fa.extend-quarter"})),
    "cheap": Candidate(misses={"triage.ap-inbox": 1, "extract.invoice": 2, "synthesize.board-brief": 3, "reconcile.ledger": 8},
                       default_misses=7,
                       tasks_missed=frozenset({"fa.extend-quarter", "fa.fix-cash-flow", "fa.fix-sign"})),
}

_VERSION_SUFFIX = re.compile(r"\.v[0-9]+$")


def candidate_answers_well(name: str, workload: str, item: Item) -> bool:
    """Whether reference candidate `name` answers this item like the oracle (see `Candidate`)."""
    skill = CANDIDATES[name]
    workload_id = _VERSION_SUFFIX.sub("", workload)
    if workload_id.startswith("fa."):  # a seed-000 task: one item
        return workload_id not in skill.tasks_missed
    misses = skill.misses.get(workload_id, skill.default_misses)
    offset = int.from_bytes(hashlib.sha256(f"{name}|{workload_id}".encode()).digest()[:4], "big") % 15
    return (item.index + offset) % 15 >= misses


CURRENT: contextvars.ContextVar[ReferenceContext | None] = contextvars.ContextVar("lrc_reference_context", default=None)


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4) if text else 0


def _prompt_text(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    parts = [json.dumps(tools, sort_keys=True)] if tools else []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):  # content parts: text, and attached files (counted by their encoded size)
            for part in content:
                if part.get("type") == "text":
                    parts.append(str(part.get("text", "")))
                elif part.get("type") == "file":
                    parts.append(str((part.get("file") or {}).get("file_data", "")))
        else:
            parts.append(str(content or ""))
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {}) if isinstance(call, dict) else {}
            parts.append(str(fn.get("name", "")) + str(fn.get("arguments", "")))
    return "\n".join(parts)


def _plain_messages(messages: list[Any]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        if hasattr(m, "model_dump"):
            m = m.model_dump()
        out.append(dict(m))
    return out


def respond(model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Reply:
    """The reference policy's reply; raises LookupError outside a run."""
    name = model.split("/", 1)[-1]
    ctx = CURRENT.get()
    if name == "null":
        # A task's null policy hands the input back through `submit` (lrc.runtime.tasks.reference);
        # a workload's null answers nothing.
        task_null = getattr(ctx.policies, "null", None) if ctx is not None else None
        return task_null(messages, tools, ctx.item) if task_null is not None else Reply(content="")
    if ctx is None:
        raise LookupError("lrc reference models run only inside `lrc execute` (no current item)")
    if name == "oracle":
        return ctx.policies.oracle(messages, tools, ctx.item)
    if name == "baseline":
        return ctx.policies.baseline(messages, tools)
    if name in CANDIDATES:
        if candidate_answers_well(name, ctx.workload, ctx.item):
            return ctx.policies.oracle(messages, tools, ctx.item)
        return ctx.policies.baseline(messages, tools)
    if name == JUDGE:
        if ctx.material is None:
            raise LookupError("lrc/judge grades only inside a judge step (no material)")
        return Reply(content=json.dumps(ctx.policies.judge(ctx.material, ctx.item), sort_keys=True, ensure_ascii=False))
    raise LookupError(f"unknown reference model lrc/{name}; known: {', '.join('lrc/' + m for m in (*MODELS, JUDGE))}")


def _provider_class() -> type:
    """The litellm custom handler for `lrc/<name>` (litellm is imported here, not at module import)."""
    from litellm import CustomLLM
    from litellm.types.utils import Choices, Message, ModelResponse, Usage

    class ReferenceProvider(CustomLLM):
        """litellm custom handler for `lrc/<name>`."""

        async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
            return self._complete(model, messages, kwargs)

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
            return self._complete(model, messages, kwargs)

        def _complete(self, model: str, messages: list, kwargs: dict[str, Any]) -> ModelResponse:
            plain = _plain_messages(messages)
            tools = (kwargs.get("optional_params") or {}).get("tools")
            reply = respond(model, plain, tools)
            tool_calls = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments, sort_keys=True)}}
                for c in reply.tool_calls
            ]
            message = Message(role="assistant", content=reply.content, tool_calls=tool_calls or None)
            completion_text = (reply.content or "") + "".join(c["function"]["name"] + c["function"]["arguments"] for c in tool_calls)
            prompt_tokens = estimate_tokens(_prompt_text(plain, tools))
            completion_tokens = estimate_tokens(completion_text)
            return ModelResponse(
                model=f"{PROVIDER}/{model}",
                choices=[Choices(index=0, finish_reason="tool_calls" if tool_calls else "stop", message=message)],
                usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, total_tokens=prompt_tokens + completion_tokens),
            )

    return ReferenceProvider


def register(litellm_module: Any) -> None:
    """Add the `lrc` provider to litellm's custom provider map (idempotent)."""
    entries = [e for e in (litellm_module.custom_provider_map or []) if e.get("provider") != PROVIDER]
    entries.append({"provider": PROVIDER, "custom_handler": _provider_class()()})
    litellm_module.custom_provider_map = entries
    try:  # litellm reads the map when it sets up providers; refresh it if this release has the hook
        from litellm.utils import custom_llm_setup

        custom_llm_setup()
    except ImportError:  # pragma: no cover - older/newer releases set up lazily
        pass
