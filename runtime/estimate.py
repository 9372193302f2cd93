"""`lrc estimate PLAN.lock`: the full edition's cost, per cell and in total, before any call.

A forecast, not a measurement: it is computed from the lock alone (the items generated from
the seed, the locked prompts rendered exactly as a run sends them, the frozen prices) and a
few *declared assumptions*, which are printed with every estimate:

- **Input tokens** are counted, not assumed: each run's first request (messages, tool
  definitions, attached files) is rendered and counted offline. Real models are counted by
  litellm's token counter (its bundled tiktoken and tokenizer files; nothing is downloaded:
  a model whose tokenizer litellm would fetch from the network is counted with the bundled
  `cl100k_base` instead, and the estimate says so). The embedded reference models (`lrc/*`)
  bill ceil(characters / 4) of the prompt, and are counted by that same rule.
- **Output tokens per call** are assumed from what a correct answer is: the answer the
  embedded `lrc/oracle` writes for the item when shown it whole (the workload's system without
  tools; offline and deterministic, in the format the prompt asks for), else -- a workload with
  no tool-less system, or an oracle that writes no text there -- the item's answer key (compact
  JSON). low = 0x (nothing written, as `lrc/null` answers: every run pays at least its first
  request, so low is a floor of what a cell can cost, up to the token counter's accuracy),
  expected = 1.5x the oracle's answer (a line of prose, a code fence), high = 3x the longer of
  the oracle's answer and the key (the key alone was the base before: nl2sql's key holds the
  result rows where a model writes one SQL query, ~9x what the demo's models wrote); never above
  the model's maximum output (`max_tokens` in its sampling, else litellm's bundled
  `max_output_tokens`), when one is known. A step that calls a tool instead writes
  `TOOL_CALL_TOKENS` (x3 at high).
- **Steps** (agentic systems): low 1, expected `TYPICAL_STEPS` (at most the locked
  `max_steps`), high the locked `max_steps`. Every step re-sends the conversation so far:
  step k's input is the first request plus (k-1) x (one tool call + one tool result); a tool
  result is `TOOL_RESULT_TOKENS` (low, expected) or the locked `max_result_chars` / 4 (high).
- **Task runs** (seed 000: a task on a direct or orchestrated system) are forecast like an
  agentic run: the first request is the one the task runner sends (the task prompt and the
  tools the task permits; on an orchestrated system the plan stage's prompt and tools), the
  steps low 1 / expected `TYPICAL_STEPS` / high the run's step cap, every step -- the last one
  too, `submit` -- a tool call, a tool result `TOOL_RESULT_TOKENS` or the artifact toolbox's
  cut / 4 (high), and no level counts a step past the one whose reply takes the run over its
  budget's `max_tokens` or `max_cost_usd` (the runner stops the run there; the run's budget is
  the task's and the system's, the smaller of each: `lrc.runtime.tasks.runner.effective_budget`). Before this, task runs were left out of every total
  without a word.
- Cached input, cache writes and separately billed reasoning tokens are not forecast (all
  input is priced as uncached input; reasoning as part of the output).
- **Judge calls** of hybrid/judged workloads are forecast apart, as grading cost (never in the
  models' cost or CPO): low none (every run fails a deterministic check and is not judged),
  expected one per run, high one per run plus the second judge's sample when the family rule
  calls it (`_grading`).

Money is Decimal end to end, with the frozen prices of `lrc.runtime.pricing`; a model without
a price is an error, never $0. Nothing here makes a network call, and litellm is imported only
when a real (non-reference) model's tokens must be counted.

The same code computes the forecast `lrc execute`/`lrc report` set beside the actual cost in
a run folder (`forecast_vs_actual` in summary.json, forecast-vs-actual.md): it is recomputed
from the lock, never stored by `lrc estimate`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable

from lrc.runtime.models.reference import _prompt_text as reference_prompt_text
from lrc.runtime.models.reference import estimate_tokens as _chars_over_four
from lrc.runtime.pricing import PricingError, call_cost, decimal_str, format_usd, price_for
from lrc.runtime.report.labels import model_label

LEVELS = ("low", "expected", "high")
#: Output tokens of a final answer, as a multiple of a correct answer's tokens (see the module
#: docstring): expected scales the oracle's answer, high the longer of it and the answer key.
ANSWER_FACTORS = {"low": Decimal(0), "expected": Decimal("1.5"), "high": Decimal(3)}
#: Output tokens of a step that calls a tool (name, arguments, call framing): a documented default.
TOOL_CALL_TOKENS = 60
#: Tokens of one tool result at the low and expected levels: a documented default.
TOOL_RESULT_TOKENS = 400
#: Expected number of steps of an agentic run: a documented default, capped at the locked max_steps.
TYPICAL_STEPS = 5
#: The tokenizer used when a model's own would have to be downloaded (never fetched).
FALLBACK_ENCODING = "cl100k_base"
_DOWNLOADED_TOKENIZERS = frozenset({"llama2", "llama3", "cohere"})


class EstimateError(Exception):
    """The estimate cannot be made honestly (a price is missing): exit 1, nothing estimated."""


# -- counting tokens -------------------------------------------------------------------------

# The embedded reference models bill ceil(chars / 4) of their prompt text (`reference_prompt_text`,
# `_chars_over_four`, imported from the reference provider itself): their forecast is exact.


@dataclass
class TokenCounter:
    """How one model's tokens are counted offline. `exact`: the count is the one the model
    bills (the reference rule); otherwise litellm's offline count approximates the provider's."""

    model: str
    rule: str
    exact: bool
    prompt: Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], int]
    text: Callable[[str], int]


def _litellm() -> Any:
    from lrc.runtime.models.adapter import load_litellm  # offline-safe (OFFLINE_ENV) before the import

    return load_litellm()


def counter_for(model: dict[str, Any]) -> TokenCounter:
    """The offline token counter of a locked model entry."""
    model_id = model["id"]
    if model.get("reference"):
        return TokenCounter(model_id, "ceil(characters / 4) of the prompt: the embedded reference models' own billing rule",
                            True, lambda messages, tools: _chars_over_four(reference_prompt_text(messages, tools)),
                            _chars_over_four)
    litellm = _litellm()
    from litellm.utils import huggingface_tokenizer_kind

    try:
        bare = litellm.get_llm_provider(model_id)[0]
    except Exception:  # noqa: BLE001 - an unknown provider prefix: count under the name as written
        bare = model_id
    kind = huggingface_tokenizer_kind(bare)
    if kind in _DOWNLOADED_TOKENIZERS:
        from litellm.litellm_core_utils.default_encoding import encoding

        custom = {"type": "openai_tokenizer", "tokenizer": encoding}
        rule = (f"litellm's bundled {FALLBACK_ENCODING} (an approximation: {bare}'s own {kind} tokenizer "
                f"would have to be downloaded, and lrc estimate never fetches one)")
    else:
        # The tokenizer litellm's token_counter would select for this model on every call,
        # selected once (`token_counter` uses `custom_tokenizer or select_tokenizer(model)`):
        # the same counts, without ~0.4 ms of selection per prompt (issue 11 §4).
        from litellm.utils import select_tokenizer

        custom = select_tokenizer(bare)
        rule = f"litellm {getattr(litellm, 'version', '')} offline token counter for {bare} " \
               f"({kind + ' tokenizer, bundled' if kind else 'tiktoken, bundled encodings'})".replace("  ", " ")

    def prompt(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        return int(litellm.token_counter(model=bare, custom_tokenizer=custom, messages=messages, tools=tools or None))

    def text(value: str) -> int:
        return int(litellm.token_counter(model=bare, custom_tokenizer=custom, text=value)) if value else 0

    return TokenCounter(model_id, rule, False, prompt, text)


def max_output(model: dict[str, Any]) -> tuple[int | None, str]:
    """(the most output tokens one call of this model can bill, where that bound comes from);
    (None, why) when no bound is known."""
    sampling = model.get("sampling") or {}
    for key in ("max_completion_tokens", "max_tokens"):
        value = sampling.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value, f"{key} in its locked sampling"
    if model.get("reference"):
        return None, "an embedded reference model: no max_tokens in its sampling, and no provider limit"
    litellm = _litellm()
    try:
        info = litellm.get_model_info(model["id"])
    except Exception:  # noqa: BLE001 - a model litellm's map does not list
        info = {}
    for key in ("max_output_tokens", "max_tokens"):
        value = info.get(key) if isinstance(info, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value, f"{key} of {model['id']} in litellm's bundled model map"
    return None, f"no max_tokens in its locked sampling, and litellm's bundled model map gives no max_output_tokens for {model['id']}"


# -- the forecast ----------------------------------------------------------------------------

@dataclass
class Figures:
    input_tokens: int = 0
    output_tokens: int = 0
    cost: Decimal = field(default_factory=lambda: Decimal(0))

    def add(self, other: "Figures", times: int = 1) -> None:
        self.input_tokens += other.input_tokens * times
        self.output_tokens += other.output_tokens * times
        self.cost += other.cost * times

    def as_json(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens, "cost_usd": decimal_str(self.cost)}


@dataclass
class CellForecast:
    workload: str
    model: str
    system: str
    runs: int = 0
    levels: dict[str, Figures] = field(default_factory=lambda: {lv: Figures() for lv in LEVELS})

    def as_json(self) -> dict[str, Any]:
        return {"workload": self.workload, "model": self.model, "system": self.system, "runs": self.runs,
                **{lv: self.levels[lv].as_json() for lv in LEVELS}}


@dataclass
class Forecast:
    edition: str
    plan_digest: str
    cells: dict[tuple[str, str, str], CellForecast]
    per_run: dict[tuple[str, str, str, str], dict[str, Figures]]  # (workload, model, system, item) -> one repetition
    assumptions: list[str]
    counting: dict[str, str]  # model -> how its tokens are counted
    total: dict[str, Figures]
    #: Judge calls of hybrid/judged workloads (seed §5): grading cost, apart from the models'
    #: cost and CPO; (workload, judge model) -> levels. Empty for a plan without a judge.
    grading: dict[tuple[str, str], dict[str, Figures]] = field(default_factory=dict)

    @property
    def runs(self) -> int:
        return sum(c.runs for c in self.cells.values())

    def as_json(self) -> dict[str, Any]:
        return {"edition": self.edition, "plan_digest": self.plan_digest, "currency": "USD", "runs": self.runs,
                "cells": [c.as_json() for _, c in sorted(self.cells.items())],
                "total": {lv: self.total[lv].as_json() for lv in LEVELS},
                "grading": [{"workload": w, "judge": j, **{lv: f[lv].as_json() for lv in LEVELS}}
                            for (w, j), f in sorted(self.grading.items())],
                "assumptions": list(self.assumptions), "token_counting": dict(sorted(self.counting.items()))}


def _scaled(tokens: int, factor: Decimal) -> int:
    return int((Decimal(tokens) * factor).to_integral_value(rounding="ROUND_CEILING"))


def _cost(tokens_in: int, tokens_out: int, price: dict[str, Any]) -> Decimal:
    return call_cost({"input": tokens_in, "output": tokens_out}, price)


@dataclass(frozen=True)
class Answer:
    """The tokens of a correct final answer to one item, as one model counts them: `key`, the
    answer key as compact JSON; `oracle`, what the embedded `lrc/oracle` writes for the item
    (None when it writes no text for it: see `_oracle_text`)."""

    key: int
    oracle: int | None

    def at(self, level: str) -> int:
        """Output tokens of the final answer at `level` (the module docstring's rule)."""
        if level == "high":
            return _scaled(max(self.key, self.oracle or 0), ANSWER_FACTORS[level])
        return _scaled(self.key if self.oracle is None else self.oracle, ANSWER_FACTORS[level])


def run_figures(first_input: int, answer_tokens: Answer | None, max_steps: int, tools: bool, max_result_chars: int,
                cap: int | None, price: dict[str, Any], token_budget: int | None = None,
                cost_budget: Decimal | None = None) -> dict[str, Figures]:
    """Low/expected/high figures of one run whose first request counts `first_input` tokens.

    `answer_tokens` None: the run ends with a tool call (a task's `submit`), not a text answer.
    `token_budget`, `cost_budget`: a task run's `max_tokens` and `max_cost_usd` -- the run stops
    after the first step whose reply takes its input plus output (its cost) past one of them
    (`lrc.runtime.tasks.runner.Meter`), so no level counts a step beyond that one."""
    out: dict[str, Figures] = {}
    for level in LEVELS:
        call = TOOL_CALL_TOKENS * (3 if level == "high" else 1)
        answer = call if answer_tokens is None else answer_tokens.at(level)
        if cap is not None:
            answer, call = min(answer, cap), min(call, cap)
        if tools and max_steps > 1:
            steps = {"low": 1, "expected": min(TYPICAL_STEPS, max_steps), "high": max_steps}[level]
            result = math.ceil(max_result_chars / 4) if level == "high" else TOOL_RESULT_TOKENS
        else:
            steps, result = 1, 0
        # Step k re-sends the first request and k-1 earlier (tool call + tool result) pairs.
        tokens_in = tokens_out = 0
        for k in range(1, steps + 1):
            tokens_in += first_input + (k - 1) * (call + result)
            tokens_out += answer if k == steps else call
            if token_budget is not None and tokens_in + tokens_out > token_budget:
                break
            if cost_budget is not None and _cost(tokens_in, tokens_out, price) > cost_budget:
                break
        out[level] = Figures(tokens_in, tokens_out, _cost(tokens_in, tokens_out, price))
    return out


def _task_figures(plan: dict[str, Any], spec: Any, item: Any, counter: TokenCounter, cap: int | None,
                  price: dict[str, Any], counted: dict[tuple, Any], task_steps: dict[str, set[int]]) -> dict[str, Figures]:
    """The figures of one task run (seed 000): its first request (the task prompt and the tools it
    is offered, `lrc.runtime.tasks.planning.first_request`) counted like any run's, the steps of
    an agentic run under the task's step cap, every step (the last one too: `submit`) a tool call,
    and no level past the task budget's `max_tokens`."""
    from lrc.runtime.tasks import planning as task_planning

    first = task_planning.first_request(plan, spec.system, item)
    task_steps.setdefault(spec.system, set()).add(first["max_steps"])
    shared = ("task", counter.rule if counter.exact else spec.model, spec.workload, spec.system, spec.item_index)
    if shared not in counted:
        counted[shared] = counter.prompt(first["messages"], first["tools"])
    try:
        spend = first["max_cost_usd"]
        return run_figures(counted[shared], None, first["max_steps"], True, first["max_result_chars"], cap, price,
                           token_budget=first["max_tokens"], cost_budget=None if spend is None else Decimal(spend))
    except PricingError as exc:
        raise EstimateError(f"{spec.model}: {exc}") from None


def _key_text(item: Any) -> str:
    return json.dumps(item.answer_key, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _oracle_text(plan: dict[str, Any], policies: dict[str, Any], workload_ref: str, item: Any, model: dict[str, Any]) -> str | None:
    """What the embedded `lrc/oracle` answers for `item`, shown it whole: the request of the
    workload's first system without tools, rendered as `model` gets it (text or attached file).

    Why that system: on an agentic system the item is fetched through tools, and the oracle,
    asked without them, truthfully answers that it sees nothing ("I cannot see the invoice.").
    None when the workload has no tool-less system, no reference policy, or the oracle writes
    no text (it answers through tool calls): the answer key stands in. The oracle is the
    plan's own locked code, deterministic and offline; an error in it is not the estimate's to
    raise (the run's infrastructure check reports it), so it falls back to the key as well."""
    from lrc.runtime.execute import render_messages

    workload = plan["workloads"][workload_ref]
    module = policies.get((workload["spec"].get("reference") or {}).get("implementation", ""))
    oracle = getattr(module, "oracle", None)
    plain = [s for s in sorted(workload["spec"]["systems"]) if not workload["tools"].get(s)]
    if oracle is None or not plain:
        return None
    try:
        reply = oracle(render_messages(workload, plain[0], item, model), None, item)
    except Exception:  # noqa: BLE001 - the key stands in (see the docstring)
        return None
    content = getattr(reply, "content", None)
    return content if isinstance(content, str) and content.strip() else None


def forecast(plan: dict[str, Any], root_digest: str, items: dict[str, list], runs: list | None = None) -> Forecast:
    """The forecast of `runs` (default: every run of the plan, the tasks' too), per cell and in total."""
    from lrc.runtime.execute import attaches_files, import_modules, plan_runs, render_messages

    runs = plan_runs(plan, items) if runs is None else runs
    task_refs = {r.workload for r in runs if r.workload not in plan["workloads"]}  # seed-000 tasks: `_task_figures`
    prices = {m: e.get("price") for m, e in plan["models"].items() if e.get("price") is not None}
    counters: dict[str, TokenCounter] = {}
    caps: dict[str, tuple[int | None, str]] = {}
    cells: dict[tuple[str, str, str], CellForecast] = {}
    per_run: dict[tuple[str, str, str, str], dict[str, Figures]] = {}
    files_seen = False
    counted: dict[tuple, tuple[int, Answer]] = {}
    oracle_texts: dict[tuple[str, int, bool], str | None] = {}  # (workload, item index, files) -> its text
    policies = import_modules(plan) if runs else {}
    reasoning_priced = []
    task_steps: dict[str, set[int]] = {}  # task system -> the step caps of its runs (for the assumptions)
    for spec in runs:
        model = plan["models"][spec.model]
        try:
            price = dict(price_for(prices, spec.model))
        except PricingError as exc:
            raise EstimateError(f"{exc}: the lock has no price for it (unknown prices are errors, never $0)") from None
        if spec.model not in counters:
            counters[spec.model] = counter_for(model)
            caps[spec.model] = max_output(model)
            if "reasoning" in price:
                reasoning_priced.append(spec.model)
        key = (spec.workload, spec.model, spec.system, spec.item_id)
        if key not in per_run and spec.workload in task_refs:
            per_run[key] = _task_figures(plan, spec, items[spec.workload][spec.item_index], counters[spec.model],
                                         caps[spec.model][0], price, counted, task_steps)
        elif key not in per_run:
            workload = plan["workloads"][spec.workload]
            item = items[spec.workload][spec.item_index]
            counter = counters[spec.model]
            use = workload["spec"]["systems"][spec.system]
            system = plan["systems"][use["system"]]["spec"]
            tools = workload["tools"].get(spec.system) or None
            files = attaches_files(workload, model)
            files_seen = files_seen or files
            # Models counted by the same rule share one count (the reference models: one rule).
            shared = (counter.rule if counter.exact else spec.model, spec.workload, spec.system, spec.item_index, files)
            if shared not in counted:
                said = (spec.workload, spec.item_index, files)
                if said not in oracle_texts:
                    oracle_texts[said] = _oracle_text(plan, policies, spec.workload, item, model)
                oracle = oracle_texts[said]
                counted[shared] = (counter.prompt(render_messages(workload, spec.system, item, model), tools),
                                   Answer(counter.text(_key_text(item)), None if oracle is None else counter.text(oracle)))
            first, answer = counted[shared]
            try:
                per_run[key] = run_figures(first, answer, int(system.get("max_steps", 1)), bool(tools),
                                           int((use.get("tools") or {}).get("max_result_chars", 20000)), caps[spec.model][0], price)
            except PricingError as exc:
                raise EstimateError(f"{spec.model}: {exc}") from None
        cell = cells.setdefault((spec.workload, spec.model, spec.system), CellForecast(spec.workload, spec.model, spec.system))
        cell.runs += 1
        for level in LEVELS:
            cell.levels[level].add(per_run[key][level])
    total = {lv: Figures() for lv in LEVELS}
    for cell in cells.values():
        for lv in LEVELS:
            total[lv].add(cell.levels[lv])
    grading, judge_notes = _grading(plan, items, runs, counters, oracle_texts)
    keyed = sorted({(w, i) for (w, i, _), text in oracle_texts.items() if text is None})
    return Forecast(plan["edition"]["ref"], root_digest, cells, per_run,
                    _assumptions(plan, runs, caps, files_seen, reasoning_priced, keyed, task_steps) + judge_notes,
                    {m: c.rule for m, c in counters.items()}, total, grading)


#: Output tokens of one judgment when the judge declares no max_tokens: a scored rubric's reply
#: (scores and a short justification), and a checklist's (an entry per fact).
JUDGMENT_TOKENS = 120
FACT_TOKENS = 40


def _grading(plan: dict[str, Any], items: dict[str, list], runs: list, counters: dict[str, "TokenCounter"],
             oracle_texts: dict[tuple[str, int, bool], str | None]) -> tuple[dict[tuple[str, str], dict[str, Figures]], list[str]]:
    """The judge calls' forecast per (judged workload, judge model), and its declared assumptions.

    low: no run reaches the judge (every one fails a deterministic check); expected: every
    run does; high: every run does, and the second judge, when the family rule calls it (seed
    §5.4), grades its share as well. A judge request is the rubric text and the framing, the
    item (as the source), and an output as long as a final answer at that level."""
    from lrc.runtime.judge import protocol
    from lrc.runtime.judging import MIN_SECOND_SHARE
    from lrc.runtime.lock import judges as judge_models

    judged = set(judge_models.judged_workloads(plan))
    roles = judge_models.judges(plan)
    if not judged or "primary" not in roles:
        return {}, []
    second = roles.get("second") if judge_models.same_family(plan) else None
    review = plan["edition"]["spec"].get("human_review") or {}
    share = max(MIN_SECOND_SHARE, Decimal(review.get("spot_check_rate", "0")))
    # The judge reads the output as text: the oracle's text answer of the item (a file-mode
    # rendering's only where no text-mode one was made).
    judged_texts: dict[tuple[str, int], str] = {}
    for (workload_ref, index, files), text in sorted(oracle_texts.items(), key=lambda kv: (kv[0][2], kv[0][:2])):
        if text is not None:
            judged_texts.setdefault((workload_ref, index), text)
    out: dict[tuple[str, str], dict[str, Figures]] = {}
    for role, entry in (("primary", roles["primary"]), ("second", second)):
        if entry is None:
            continue
        counter = counters.get(entry["id"]) or counter_for(entry)
        counters.setdefault(entry["id"], counter)
        cap = max_output(entry)[0]
        for workload_ref in sorted(judged):
            workload = plan["workloads"][workload_ref]
            rubric = plan["rubrics"][workload["spec"]["grading"]["judge"]["rubric"]]["spec"]
            checklist = "facts" in json.dumps(rubric["answer_format"]["schema"])
            framing = counter.prompt(protocol.messages(rubric, {"output": "", "source": "", "checks": []}), None)
            mine = [r for r in runs if r.workload == workload_ref]
            figures = {lv: Figures() for lv in LEVELS}
            for spec in mine:
                item = items[workload_ref][spec.item_index]
                source = counter.text(json.dumps(item.context, sort_keys=True, ensure_ascii=False))
                oracle = judged_texts.get((workload_ref, spec.item_index))
                answer = Answer(counter.text(_key_text(item)), None if oracle is None else counter.text(oracle))
                reply = FACT_TOKENS * 20 if checklist else JUDGMENT_TOKENS
                reply = min(reply, cap) if cap is not None else reply
                for level in ("expected", "high"):
                    if role == "second" and level != "high":
                        continue
                    tokens_in = framing + source + answer.at(level)
                    figures[level].add(Figures(tokens_in, reply, _cost(tokens_in, reply, entry["price"])))
            if role == "second":  # only its sample: the share of the judged runs
                high = figures["high"]
                figures["high"] = Figures(_scaled(high.input_tokens, share), _scaled(high.output_tokens, share),
                                          (high.cost * share).quantize(Decimal(1).scaleb(-12)))
            key = (workload_ref, entry["id"])
            if key in out:
                for lv in LEVELS:
                    out[key][lv].add(figures[lv])
            else:
                out[key] = figures
    notes = [
        "judge calls (grading cost, never in CPO): low none (every run fails a deterministic check), expected one per run "
        "(every run passes them), high one per run plus the second judge's sample when the family rule calls it; a judge "
        "request is the rubric and framing, the item as source and an output the size of a final answer at that level; "
        f"a judgment writes {JUDGMENT_TOKENS} tokens ({FACT_TOKENS} per checklist fact), at most the judge's max_tokens",
    ]
    return out, notes


def _assumptions(plan: dict[str, Any], runs: list, caps: dict[str, tuple[int | None, str]], files: bool,
                 reasoning: list[str], keyed: list[tuple[str, int]], task_steps: dict[str, set[int]] | None = None) -> list[str]:
    workload_systems = {r.system for r in runs if r.workload in plan["workloads"]}
    steps = sorted({(plan["systems"][wl["spec"]["systems"][s]["system"]]["spec"].get("max_steps", 1), s)
                    for wl in plan["workloads"].values() for s in wl["spec"]["systems"] if s in workload_systems})
    lines = [
        "input tokens: each run's first request (locked prompts rendered for its item, tool definitions, attached files) "
        "counted offline; see token counting",
        "output tokens of a final answer, counted with the model's counter: low nothing (as lrc/null answers), so it is "
        "a floor -- every run pays at least its first request; expected "
        f"x{ANSWER_FACTORS['expected']} the answer the embedded lrc/oracle writes for the item shown whole (its "
        f"workload's system without tools); high x{ANSWER_FACTORS['high']} the longer of that answer and the item's "
        "answer key as compact JSON -- documented defaults of lrc estimate",
        f"a step that calls a tool writes {TOOL_CALL_TOKENS} output tokens (x3 at high) -- a documented default",
    ]
    if keyed:
        per_workload: dict[str, int] = {}
        for workload_ref, _ in keyed:
            per_workload[workload_ref] = per_workload.get(workload_ref, 0) + 1
        lines.append("the answer key stands in for the oracle's answer where the oracle writes no text for the item "
                     "(no system without tools, or it answers through tools): "
                     + ", ".join(f"{w} ({n} item{'s' if n != 1 else ''})" for w, n in sorted(per_workload.items())))
    for max_steps, system in steps:
        if max_steps > 1:
            lines.append(f"steps of {system}: low 1 / expected {min(TYPICAL_STEPS, max_steps)} (documented default) / "
                         f"high {max_steps} (the locked max_steps); each step re-sends the conversation, one tool result per "
                         f"step of {TOOL_RESULT_TOKENS} tokens (low, expected) or the locked max_result_chars / 4 (high)")
        else:
            lines.append(f"steps of {system}: 1 (the locked max_steps)")
    for system, caps_seen in sorted((task_steps or {}).items()):
        n = len({r.workload for r in runs if r.system == system and r.workload not in plan["workloads"]})
        cap_text = "/".join(str(c) for c in sorted(caps_seen))
        lines.append(f"task runs (seed 000) on {system} ({n} task{'s' if n != 1 else ''}): the first request is the task prompt "
                     f"and the tools it is offered{' (with the plan stage prompt)' if _mode(plan, system) == 'orchestrated' else ''}; "
                     f"steps low 1 / expected {'/'.join(str(v) for v in sorted({min(TYPICAL_STEPS, c) for c in caps_seen}))} (documented default) / "
                     f"high {cap_text} (the run's step cap); every step, "
                     f"the last one too (submit), writes a tool call; a tool result is {TOOL_RESULT_TOKENS} tokens (low, expected) "
                     f"or the artifact toolbox's cut / 4 (high); no level counts a step past the one whose reply takes the run "
                     f"over its budget's max_tokens or max_cost_usd (where the runner stops it; the budget is the task's and "
                     f"the system's, the smaller of each)")
    for model, (cap, source) in sorted(caps.items()):
        lines.append(f"max output of {model_label(model)}: {cap} tokens ({source})" if cap is not None
                     else f"max output of {model_label(model)}: unbounded ({source}); the answer factors alone bound the forecast")
    if files:
        lines.append("attached files (PDF): litellm counts each page offline with pypdf -- its text plus per-page framing "
                     "(OpenAI models) or plus a rendered page image (other models); the reference models count the "
                     "base64 data's characters / 4, as they bill")
    lines.append("all input is priced as uncached input (no cache hits assumed); cache writes are not forecast")
    if reasoning:
        lines.append(f"reasoning tokens billed apart ({', '.join(sorted(reasoning))}) are not forecast")
    lines.append("prices: the frozen pricing table of the lock (USD, Decimal)")
    return lines


def _mode(plan: dict[str, Any], system_id: str) -> str | None:
    from lrc.runtime.tasks import planning as task_planning

    return task_planning.system_spec(plan, system_id).get("mode")


# -- printing ----------------------------------------------------------------------------------

def text(fc: Forecast) -> str:
    rows = [("workload", "model", "system", "runs", "low", "expected", "high", "tokens in/out (expected)")]
    for _, c in sorted(fc.cells.items()):
        e = c.levels["expected"]
        rows.append((c.workload, model_label(c.model), c.system, str(c.runs), *(format_usd(c.levels[lv].cost) for lv in LEVELS),
                     f"{e.input_tokens:,} / {e.output_tokens:,}"))
    e = fc.total["expected"]
    rows.append(("total", "", "", str(fc.runs), *(format_usd(fc.total[lv].cost) for lv in LEVELS),
                 f"{e.input_tokens:,} / {e.output_tokens:,}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [f"lrc estimate: edition {fc.edition} ({fc.plan_digest}), {fc.runs} runs, before any call"]
    for n, r in enumerate(rows):
        if n == len(rows) - 1:
            lines.append("  ".join("-" * w for w in widths))
        lines.append("  ".join(v.ljust(w) if i < 3 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))).rstrip())
    tokens = fc.total
    if fc.grading:
        lines.append("")
        lines.append("Judge calls (grading cost, not in the models' cost or CPO):")
        for (workload, judge), f in sorted(fc.grading.items()):
            lines.append(f"  {workload} · {judge}: " + " / ".join(format_usd(f[lv].cost) for lv in LEVELS) + " (low / expected / high)")
        judge_total = {lv: sum((f[lv].cost for f in fc.grading.values()), Decimal(0)) for lv in LEVELS}
        lines.append("  total with the judge: " + " / ".join(format_usd(fc.total[lv].cost + judge_total[lv]) for lv in LEVELS))
    lines.append(f"tokens in total: input {tokens['low'].input_tokens:,} / {tokens['expected'].input_tokens:,} / "
                 f"{tokens['high'].input_tokens:,}; output {tokens['low'].output_tokens:,} / "
                 f"{tokens['expected'].output_tokens:,} / {tokens['high'].output_tokens:,} (low / expected / high)")
    lines.append("")
    lines.append("Assumptions (declared; the estimate is a forecast, not a bound):")
    lines.extend(f"  - {a}" for a in fc.assumptions)
    lines.append("Token counting:")
    lines.extend(f"  - {model_label(m)}: {rule}" for m, rule in sorted(fc.counting.items()))
    return "\n".join(lines) + "\n"


def for_report(fc: Forecast) -> dict[str, Any]:
    """The plain value `lrc.runtime.report.outputs` sets beside the actual figures."""
    return {"cells": {k: {lv: c.levels[lv] for lv in LEVELS} | {"runs": c.runs} for k, c in fc.cells.items()},
            "per_run": fc.per_run, "assumptions": fc.assumptions, "counting": fc.counting}
