"""`lrc execute … --budget USD`: never start a call that could take the total spent above the budget.

The accounting (Decimal, frozen prices, `lrc.runtime.pricing`):

- **spent** starts with every call already journaled in the output folder (a resume counts
  what earlier executes paid; a call answered from the response cache was paid elsewhere and
  counts nothing) and grows by each new call's actual cost;
- before a call, its **worst case** is reserved: its input tokens, counted offline by the
  counter of `lrc estimate` (`lrc.runtime.estimate.counter_for`; the reference models' count
  is exact, litellm's count of a real model gets a `INPUT_MARGIN` margin because it only
  approximates the provider's), times the input price, plus the model's maximum output
  (`max_tokens` in its locked sampling, else litellm's bundled `max_output_tokens`) times the
  output price. A model whose output price is not zero and whose maximum output is unknown
  cannot run under a budget: `open_budget` refuses before any call;
- a call starts only if spent + every reservation in flight + its worst case <= budget. If it
  does not fit while other calls are in flight, it waits for them to settle (their actual cost
  replaces their reservation, which frees money); if it does not fit with nothing in flight,
  the budget is reached: no further call starts, calls in flight finish and are journaled, and
  `lrc execute` ends with exit code 7, printing what was spent and what is left. The same
  command with a larger budget resumes; journaled calls are answered from the journal and
  cost nothing again;
- a retry is a call too. An attempt whose generation failed mid-answer is billed, and the
  reservation covered one attempt: before such a call is retried, what the failed attempt
  was billed is added to its reservation (`Budget.retry`), so the next attempt's worst case
  is still held. If that does not fit, the retry does not start: the call's run is excluded
  (reason `budget-reached`, its billed attempts journaled and counted) and the budget is
  reached. A resume with a larger budget runs it again.
"""

from __future__ import annotations

import asyncio
import math
from decimal import Decimal
from typing import Any

from lrc.runtime.lock import judges as judge_models
from lrc.runtime.pricing import call_cost, decimal_str, price_for

#: litellm's offline count of a real model's prompt, times this, is the input reserved for a call.
INPUT_MARGIN = Decimal("1.10")


class BudgetUnusable(Exception):
    """A budget cannot be kept (a model's maximum output is unknown): nothing is run."""


class BudgetReached(Exception):
    """The next call cannot be afforded: the run stops here, without journaling a result."""


class Hold:
    """One call's reservation: its worst case, grown by what its failed attempts were billed."""

    __slots__ = ("amount", "worst")

    def __init__(self, worst: Decimal):
        self.worst = worst
        self.amount = worst

    def __repr__(self) -> str:
        return f"Hold(amount={self.amount}, worst={self.worst})"


class Budget:
    def __init__(self, limit: Decimal, plan: dict[str, Any], journal: Any, calling: set[str] | None = None):
        from lrc.runtime.estimate import counter_for, max_output

        self.limit = limit
        self._plan = plan
        self._prices = {m: e["price"] for m, e in plan["models"].items()}
        self._counters: dict[str, Any] = {}
        self._counter_for = counter_for
        self.bounds: dict[str, tuple[int, str]] = {}
        for model_id, entry in sorted(plan["models"].items()):
            cap, source = max_output(entry)
            price = self._prices[model_id]
            if cap is None and calling is not None and model_id not in calling:
                continue  # not called by this execute (a --models subset): no bound needed
            if cap is None:
                if any(Decimal(str(price.get(k, "0"))) != 0 for k in ("output", "reasoning")):
                    raise BudgetUnusable(f"{model_id}: no bound on a call's output is known ({source}); a budget cannot "
                                         f"be kept. Declare max_tokens in its sampling, or run without --budget")
                cap, source = 0, "its output price is zero, so its output costs nothing"
            self.bounds[model_id] = (cap, source)
        # A call answered from the response cache (`reused`) was paid by the folder it came from,
        # not by this budget: a live reuse costs the budget nothing, and neither does its resume.
        self.earlier = sum((call_cost(c["usage"], price_for(self._prices, _model_of(key)))
                            for (key, _step), c in journal.calls.items() if not c.get("reused")), Decimal(0))
        # Judge calls are grading cost, kept out of CPO, but they are spent all the same.
        self.earlier += sum((call_cost(j["usage"], price_for(self._prices, j["model"]))
                             for j in getattr(journal, "judges", {}).values()), Decimal(0))
        # Failed attempts of calls that ran out of retries were billed too (`Journal.billed_in_exclusions`).
        exhaustions = getattr(journal, "exhaustions", {})
        judge_prices = {role: entry["price"] for role, entry in judge_models.judges(plan).items()} if exhaustions else {}
        for key in sorted(exhaustions):
            own, judged = journal.billed_in_exclusions(key)
            if own:
                self.earlier += call_cost(own, price_for(self._prices, _model_of(key)))
            self.earlier += sum((call_cost(b, judge_prices[role]) for role, b in sorted(judged.items()) if role in judge_prices),
                                Decimal(0))
        self.spent = self.earlier
        self.reserved = Decimal(0)
        self.calls = 0
        self.stopped = False
        self.refused: Decimal | None = None  # the worst case of the call (or retry) that could not start
        self.overrun = Decimal(0)  # how much actual costs exceeded their reservations, in total
        self._changed = asyncio.Event()

    @property
    def left(self) -> Decimal:
        return self.limit - self.spent

    def worst_case(self, model_id: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Decimal:
        counter = self._counters.get(model_id)
        if counter is None:
            counter = self._counters[model_id] = self._counter_for(self._plan["models"][model_id])
        tokens_in = counter.prompt(messages, tools)
        if not counter.exact:
            tokens_in = math.ceil(tokens_in * INPUT_MARGIN)
        price = self._prices[model_id]
        cap = self.bounds[model_id][0]
        # A call bills at most `cap` output tokens, reasoning ones included: price them all at the dearer rate.
        out_cost = max(call_cost({"output": cap}, price), call_cost({"reasoning": cap}, price) if "reasoning" in price else Decimal(0))
        return call_cost({"input": tokens_in}, price) + out_cost

    async def reserve(self, model_id: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Hold:
        """Hold the call's worst case, waiting for calls in flight to settle if it does not fit
        yet; BudgetReached if it cannot fit at all (and from then on, for every call)."""
        worst = self.worst_case(model_id, messages, tools)
        while True:
            if self.stopped:
                raise BudgetReached()
            if self.spent + self.reserved + worst <= self.limit:
                self.reserved += worst
                return Hold(worst)
            if self.reserved == 0:
                self._stop(worst)
                raise BudgetReached()
            changed = self._changed
            await changed.wait()

    def retry(self, hold: Hold, model_id: str, billed: dict[str, int]) -> bool:
        """May the call of `hold` be tried again after an attempt billed `billed`? That attempt's
        cost is added to the reservation, so the next attempt's worst case stays held. False (and
        the budget is reached) if it does not fit now, or the budget was reached meanwhile: the
        retry must not start. It never waits for calls in flight to settle, as a new call does:
        calls waiting for one another's money while each holds its own would wait forever.

        (A synchronous check: what decides and what reserves run without a yield between them.)"""
        extra = call_cost(billed, self._prices[model_id])
        if self.stopped:
            return False
        if self.spent + self.reserved + extra > self.limit:
            self._stop(hold.worst)
            return False
        self.reserved += extra
        hold.amount += extra
        return True

    def _stop(self, attempt: Decimal) -> None:
        """The budget is reached: `attempt`, what the call (or retry) that could not start could cost."""
        self.stopped, self.refused = True, attempt
        self._wake()

    def settle(self, hold: Hold, model_id: str, usage: dict[str, int]) -> None:
        """The call came back: its actual cost replaces its reservation."""
        actual = call_cost(usage, self._prices[model_id])
        self.reserved -= hold.amount
        self.spent += actual
        self.calls += 1
        if actual > hold.amount:
            self.overrun += actual - hold.amount
        self._wake()

    def release(self, hold: Hold) -> None:
        """The call failed without a response (nothing billed): drop its reservation."""
        self.reserved -= hold.amount
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def summary(self) -> str:
        before = f" (${decimal_str(self.earlier)} of it by earlier executes in this folder)" if self.earlier else ""
        return f"spent ${decimal_str(self.spent)}{before} of the budget ${decimal_str(self.limit)}; left ${decimal_str(self.left)}"


def _model_of(run_key: str) -> str:
    """The model of a journaled run key (`workload|model|system|item|rN`, `lrc.runtime.journal.run_key`)."""
    return run_key.split("|")[1]


def open_budget(limit: Decimal | None, plan: dict[str, Any], journal: Any, calling: set[str] | None = None) -> Budget | None:
    """`calling`: the models this execute may call (None: every model of `plan`); only they need
    a known output bound. Every model stays priced: earlier calls of the folder count as spent."""
    return None if limit is None else Budget(limit, plan, journal, calling)
