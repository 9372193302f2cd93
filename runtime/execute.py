"""`lrc execute PLAN.lock --out DIR`: verify, generate, run, journal, grade, report.

The runtime reads nothing but the lock, the running code and (for a held-out edition) the
seed file. Runs go through litellm with bounded, 429-adaptive concurrency per model; every
finished call and run is journaled, so a killed execute resumes where it stopped and ends
with the same results as an uninterrupted one. Results are rebuilt from the journal alone
(`lrc report` does just that).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import fcntl
import importlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from lrc.runtime.lock import format as lockformat
from lrc.runtime.lock.canonical import digest, digest_bytes
from lrc.runtime.lock.templating import render
from lrc.runtime import window
from lrc.runtime.judging import judge_record

if TYPE_CHECKING:
    from lrc.runtime.operate import RunOptions

EXIT_OK, EXIT_PROBLEMS, EXIT_INCOMPLETE, EXIT_REFUSED, EXIT_CALIBRATION, EXIT_UNUSABLE = 0, 1, 3, 4, 5, 6
EXIT_BUDGET = 7  # --budget reached: no further call was started; a larger budget resumes
EXIT_WINDOW = 8  # the edition's window (seed §3) closed: no run starts after it; --outside-window makes them


class Refused(Exception):
    """The lock, the seed or the output folder cannot be used; nothing was run."""


class Aborted(Exception):
    """A configuration problem stopped the run (missing key, rejected request)."""


class Unusable(Exception):
    """The output folder cannot be written (not a folder, read-only, disk full): nothing
    journaled is lost, and the same command resumes once the cause is gone."""


def _os_problem(exc: OSError) -> str:
    where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
    return f"{exc.strerror or type(exc).__name__}{where}"


@dataclass(frozen=True)
class RunSpec:
    key: str
    workload: str
    model: str
    system: str
    item_index: int
    item_id: str
    repetition: int


def _say(message: str) -> None:
    print(message, file=sys.stderr)


# -- loading and verification --------------------------------------------------------------

LOCK_LIMIT = 1 << 30
"""The largest plan.lock read (an edition with 1,000-item workloads inlines every prompt: tens of MB)."""


def load_verified(lock_path: Path) -> dict[str, Any]:
    from lrc.runtime.verify import verify

    from lrc.runtime import filebytes

    try:  # a regular file of a sane size: never a FIFO (waited on) or /dev/zero (read without end)
        data = filebytes.read_whole(lock_path, limit=LOCK_LIMIT)
    except filebytes.NotRegular as exc:
        raise Refused(f"cannot use {lock_path}: {exc}") from None
    except OSError as exc:
        raise Refused(f"cannot read {lock_path}: {exc.strerror or exc}") from exc
    try:
        lock = lockformat.loads(data)
    except lockformat.LockError as exc:
        raise Refused(f"{lock_path}: {exc}") from exc
    problems = verify(lock)
    if problems:
        raise Refused(f"{lock_path} refused:\n  " + "\n  ".join(problems))
    return lock


def resolve_seed(plan: dict[str, Any], seed_file: Path | None) -> str:
    seed = plan["seed"]
    if seed["policy"] == "public":
        if seed_file is not None:
            raise Refused("this edition's seed is public and locked; do not pass --seed-file")
        return seed["value"]
    if seed_file is None:
        raise Refused("this edition has a held-out seed: pass --seed-file with the seed whose commitment is locked")
    from lrc.runtime import filebytes

    try:  # a seed file is a line of text: a FIFO, a device or a huge file is not one
        value = filebytes.read_whole(seed_file, limit=1 << 16).decode("utf-8").strip()
    except filebytes.NotRegular as exc:
        raise Refused(f"cannot read the seed file {seed_file}: {exc}") from None
    except UnicodeDecodeError:
        raise Refused(f"cannot read the seed file {seed_file}: it is not UTF-8 text") from None
    except OSError as exc:
        raise Refused(f"cannot read the seed file {seed_file}: {exc.strerror or exc}") from exc
    if digest_bytes("seed", value.encode("utf-8")) != seed["commitment"]:
        raise Refused(f"{seed_file} does not match the locked seed commitment {seed['commitment']}")
    return value


def import_modules(plan: dict[str, Any]) -> dict[str, ModuleType]:
    """The module of every component the plan locks, imported by the name the running code
    declares it under (`codeprint.discover`: the module whose files verify() fingerprinted),
    never by the name the lock gives: a lock is untrusted, and importing a module runs it."""
    from lrc.runtime.lock import codeprint, factmemo

    with factmemo.remembered():
        running = codeprint.discover()
    modules: dict[str, str] = {}
    for ref, entry in sorted(plan["code"].items()):  # all checked before any is imported
        comp = running.get(ref)
        if comp is None:
            # a version the running code no longer has (an erratum's regrade keeps the component
            # it replaces in the plan): its module only if the running code declares that
            # component, at another version, in that same module
            comp = next((c for c in running.values() if c.id == entry.get("id") and c.module == entry.get("module")), None)
        if comp is None or comp.module != entry.get("module"):
            declared = f"declares it in {comp.module!r}" if comp is not None else "has no such component"
            raise Refused(f"code {ref}: the lock names module {entry.get('module')!r}; the running code {declared}; nothing was run")
        modules[ref] = comp.module
    return {ref: importlib.import_module(module) for ref, module in sorted(modules.items())}


# -- planning -------------------------------------------------------------------------------

def plan_runs(plan: dict[str, Any], items: dict[str, list]) -> list[RunSpec]:
    from lrc.runtime.journal import run_key

    edition = plan["edition"]["spec"]
    reps = edition.get("repetitions", 1)
    edition_systems = {plan["systems"][ref]["spec"]["id"] for ref in edition["systems"]}
    runs: list[RunSpec] = []
    for wref, wl in plan["workloads"].items():
        for model in sorted(plan["models"]):
            for system in sorted(set(wl["spec"]["systems"]) & edition_systems):
                for item in items[wref]:
                    for rep in range(1, reps + 1):
                        runs.append(RunSpec(run_key(wref, model, system, item.item_id, rep), wref, model, system, item.index, item.item_id, rep))
    if plan.get("tasks"):  # the edition's tasks (seed 000), on its agentic systems: lrc.runtime.tasks.planning
        from lrc.runtime.tasks import planning

        runs += planning.plan_runs(plan, items)
    return runs


def attaches_files(workload: dict[str, Any], model: dict[str, Any]) -> bool:
    """Does this model get the item's file itself rather than its text (seed §4.1 input)?"""
    mode = workload["spec"]["input"]["mode"]
    return mode == "file" or (mode == "text-or-file" and bool(model.get("accepts_files")))


#: Rendered prompt texts of this process, so an item rendered for one run is not rendered again
#: for its other repetitions, models and the report's forecast: (id(item), id(task), template
#: sources) -> (item, task, texts). The entry holds the item and task it was made from and is used
#: only while they are the very same objects, so a recycled id never matches; rendering is
#: deterministic (a sandbox with no clock or randomness), so a hit is the same text.
_RENDERED: dict[tuple, tuple[Any, Any, tuple[str, str]]] = {}
_RENDERED_MAX = 8192


def _render_texts(prompts: dict[str, Any], task: Any, item, user: str) -> tuple[str, str]:
    key = (id(item), id(task), prompts["system"]["template"], prompts[user]["template"])
    hit = _RENDERED.get(key)
    if hit is not None and hit[0] is item and hit[1] is task:
        return hit[2]
    context = {"task": task, "item": item.context}
    texts = (render(prompts["system"]["template"], context), render(prompts[user]["template"], context))
    if len(_RENDERED) >= _RENDERED_MAX:
        _RENDERED.clear()
    _RENDERED[key] = (item, task, texts)
    return texts


def render_messages(workload: dict[str, Any], system: str, item, model: dict[str, Any]) -> list[dict[str, Any]]:
    """The locked prompts rendered for one item; in file mode the user message carries the file.
    New lists and dicts on every call (callers extend them); the texts are rendered once per item."""
    prompts = workload["prompts"][system]
    task = workload["spec"]["task"]
    if not attaches_files(workload, model):
        system_text, user_text = _render_texts(prompts, task, item, "user")
        return [{"role": "system", "content": system_text}, {"role": "user", "content": user_text}]
    system_text, user_text = _render_texts(prompts, task, item, "user_file")
    messages = [{"role": "system", "content": system_text}]
    parts: list[dict[str, Any]] = [{"type": "text", "text": user_text}]
    for attachment in workload["spec"]["input"]["attachments"]:
        data = item.files.get(attachment["file"])
        if data is None:
            raise Aborted(f"{workload['ref']}: item {item.item_id} has no file {attachment['file']} to attach")
        encoded = base64.b64encode(data).decode("ascii")
        parts.append({"type": "file", "file": {"filename": attachment["file"], "file_data": f"data:{attachment['media_type']};base64,{encoded}"}})
    return messages + [{"role": "user", "content": parts}]


# -- execution ------------------------------------------------------------------------------

async def _execute(plan: dict[str, Any], runs: list[RunSpec], items: dict[str, list], modules: dict[str, ModuleType],
                   journal, progress: bool, settings, endpoint=None, cache=None, spending=None, judging=None,
                   out: Path | None = None, halt=None, gate: "WindowGate | None" = None) -> Any:
    """Run every pending run; the infrastructure figures (`infra.InfraStats`) come back.
    `cache` is the response cache (`response_cache.ResponseCache`) of `--cache`, if any;
    `spending` is the execute's `budget.Budget` (--budget), or None; `judging` the judge step
    (`lrc.runtime.judging.Judging`) of a plan with judged workloads, or None; `out` the run folder
    (a task run works on a private copy of its files there); `halt` the execute's
    `lrc.runtime.halt.Halt` (SIGINT/SIGTERM: no new call starts, calls in flight are journaled);
    `gate` the edition's window (no run starts after its close, unless --outside-window)."""
    from lrc.runtime import tool_call_cap
    from lrc.runtime.budget import BudgetReached
    from lrc.runtime.halt import Halt, Halted
    from lrc.runtime.lock.judges import callable_models
    from lrc.runtime.models import adapter, infra
    from lrc.runtime.models.reference import CURRENT, ReferenceContext
    from lrc.runtime.systems.base import RunContext, Turn

    def unjudged(r: RunSpec) -> bool:
        """A journaled run of a judged workload whose primary judge record is missing (the
        execute that made it was stopped before its judge call came back)."""
        return judging is not None and judging.applies(r.workload) and r.key in journal.runs \
            and (r.key, "primary") not in journal.judges

    pending = [r for r in runs if r.key not in journal.runs or unjudged(r)]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(runs), initial=len(runs) - len(pending), desc="runs", unit="run", file=sys.stderr,
                   disable=None, dynamic_ncols=True)
    stats = infra.InfraStats()
    # A stopped model is reported once, at the end (`run`); while a progress bar is on
    # screen it is also said at once, above the bar, so a stalled bar is explained.
    lanes = {m: infra.ModelLane(m, entry, settings, stats, on_stop=lambda _m, text: _announce_live(bar, f"lrc execute: {text}"),
                                endpoint=endpoint(m) if endpoint is not None else None)
             for m, entry in callable_models(plan).items()}
    # A call holds one of these from before it is sent until its journal line is fsync'd, so
    # at most the model's concurrency of paid calls are ever unacknowledged: a kill repays at
    # most that many per model (the group commit adds no repaid call; journal.py, "Durability").
    unacknowledged = {m: asyncio.Semaphore(lane.limiter.max) for m, lane in lanes.items()}
    halt = halt if halt is not None else Halt()
    halt.say = lambda text: _announce(bar, text)
    for lane in lanes.values():
        lane.halt = halt  # a retry or a call waiting for a concurrency slot does not go out after a stop

    def _abort(reason: str) -> None:
        """A problem no retry fixes: stop starting calls, let those in flight be journaled, then
        end the execute with it (exit 1; `halt.abort`)."""
        if not halt.stopping:
            halt.abort(reason)
            # an exception's text may hold an echoed API key: said through the journal's redactor
            _announce(bar, journal.redact(f"lrc execute: stopping: {reason}. No new call starts; waiting for the "
                                          f"{halt.in_flight} call(s) in flight to come back and be journaled."))

    async def judge(spec: RunSpec, role: str) -> None:
        """The judge step of one journaled run (lrc.runtime.judging): nothing when the
        deterministic checks failed, or when this judge's record is already journaled."""
        if (spec.key, role) in journal.judges or (spending is not None and spending.stopped) or halt.stopping:
            return
        material = await asyncio.to_thread(judging.material, spec, journal.runs[spec.key])  # grading: off the loop
        if material is None:
            return
        request = judging.request(role, spec, material)
        entry = request.model
        if entry.get("reference"):
            workload = plan["workloads"][spec.workload]
            CURRENT.set(ReferenceContext(modules[workload["spec"]["reference"]["implementation"]], items[spec.workload][spec.item_index],
                                         material=material))
        timeout = max(plan["systems"][ref]["spec"].get("request_timeout_seconds", 300) for ref in plan["systems"])
        try:
            hold = await spending.reserve(entry["id"], request.messages, None) if spending is not None else None
        except BudgetReached:
            return
        waiting = time.monotonic()
        async with unacknowledged[entry["id"]]:
            waited_ms = int((time.monotonic() - waiting) * 1000)
            try:
                halt.check()
                halt.in_flight += 1
                try:
                    res = await adapter.complete(entry, request.messages, None, timeout, lanes[entry["id"]], lanes[entry["id"]].run_budget(),
                                                 _retry_billed(spending, hold, entry["id"]))
                finally:
                    halt.in_flight -= 1
            except Halted:  # stopped before the judge call went out: a resume judges the run
                if hold is not None:
                    spending.release(hold)
                return
            except adapter.ConfigError as exc:
                if hold is not None:
                    spending.release(hold)
                _abort(str(exc))
                return
            except adapter.InfraExhausted as exc:
                if hold is not None:
                    _settle_failed(spending, hold, entry["id"], exc)
                # Counted like any exhausted call; the run stays unjudged (held out, exit 3) and a resume judges it.
                await journal.commit({"type": "infra_exhausted", "run": spec.key, "failures": [f.record() for f in exc.failures],
                                      "reason": f"judge-{getattr(exc, 'reason', 'retries-exhausted')}", "judge": role})
                stats.exclude(f"judge {getattr(exc, 'reason', 'retries-exhausted')}")
                return
            except BaseException:
                if hold is not None:
                    spending.release(hold)
                raise
            if hold is not None:
                spending.settle(hold, entry["id"], res.usage)
            await journal.commit(judge_record(request, spec.key, res, _call_record(spec, 0, request.digest, res, waited_ms)))

    task_refs = set(plan.get("tasks") or {})
    if task_refs:
        from lrc.runtime.tasks import planning as task_planning
        from lrc.runtime.tasks import reference as task_reference
        from lrc.runtime.tasks import runner as task_runner
    policies_by_task: dict[str, Any] = {}
    started_here = set(journal.calls)  # (run, step) journaled before this execute: replayed, their latency counts

    def task_policies(ref: str, item: Any) -> Any:
        """The reference policies of a task, made once per execute (the differ's plan is not free)."""
        if ref not in policies_by_task:
            policies_by_task[ref] = task_reference.TaskPolicies(item)
        return policies_by_task[ref]

    async def one(spec: RunSpec) -> None:
        if (spending is not None and spending.stopped) or halt.stopping:  # --budget reached, or a stop: no run starts
            return
        if spec.key in journal.runs:  # made by an earlier execute; only its judge step is left
            if judging is not None and judging.applies(spec.workload):
                await judge(spec, "primary")
            if bar:
                bar.update(1)
            return
        placed: list[bool] = []  # [outside the window?] once the run's first call goes out in this execute
        model = plan["models"][spec.model]
        item = items[spec.workload][spec.item_index]
        task = spec.workload in task_refs
        toolbox = None
        if task:  # a seed-000 task: lrc.runtime.tasks.runner drives the edition's agentic loop
            system = task_planning.system_spec(plan, spec.system)
            if model.get("reference"):
                CURRENT.set(ReferenceContext(task_policies(spec.workload, item), item, workload=spec.workload))
        else:
            workload = plan["workloads"][spec.workload]
            system_ref = workload["spec"]["systems"][spec.system]["system"]
            system = plan["systems"][system_ref]["spec"]
            use = workload["spec"]["systems"][spec.system]
            if use.get("tools"):
                tools_module = modules[use["tools"]["implementation"]]
                toolbox = await asyncio.to_thread(tools_module.Toolbox, item,  # off the loop: it may run SQL
                                                  max_result_chars=use["tools"].get("max_result_chars", 20000))
            if model.get("reference"):
                CURRENT.set(ReferenceContext(modules[workload["spec"]["reference"]["implementation"]], item, workload=spec.workload))
        runner = modules[system["implementation"]]

        async def call(step: int, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
            request = digest("request", {"model": spec.model, "sampling": model.get("sampling", {}), "messages": messages, "tools": tools})
            done = journal.calls.get((spec.key, step))
            if done is not None:
                if done["request"] != request:
                    raise Aborted(f"{spec.key} step {step}: the request differs from the journaled one; the run is not deterministic")
                r = done["response"]
                return Turn(r["message"], r["finish_reason"], r["refusal"], r.get("invalid"))
            halt.check()  # SIGINT/SIGTERM: no new call (the run stops unjournaled; a resume replays its calls)
            # -- response cache (--cache): an identical request of an earlier run answers without a call
            hit = cache.lookup(request, spec.item_id, spec.repetition, model) if cache is not None else None
            if hit is not None:
                place()
                await journal.commit({"type": "call", "run": spec.key, "step": step, "request": request, **hit.journal_fields()})
                r = hit.response
                return Turn(r["message"], r["finish_reason"], r["refusal"], r.get("invalid"))
            # -- end response cache
            # -- --budget (runtime/budget.py): reserve the call's worst case; its actual cost replaces it below.
            hold = await spending.reserve(spec.model, messages, tools) if spending is not None else None
            waiting = time.monotonic()
            async with unacknowledged[spec.model]:
                waited_ms = int((time.monotonic() - waiting) * 1000)
                try:
                    halt.check()  # a stop while this call waited for its slot: it does not go out
                    place()  # the edition's window, decided when the run's first call goes out
                    halt.in_flight += 1
                    try:
                        res = await adapter.complete(model, messages, tools, system.get("request_timeout_seconds", 300), lanes[spec.model], budget,
                                                     _retry_billed(spending, hold, spec.model))
                    finally:
                        halt.in_flight -= 1
                except BaseException as exc:
                    if hold is not None:
                        _settle_failed(spending, hold, spec.model, exc)
                    raise
                if hold is not None:
                    spending.settle(hold, spec.model, res.usage)
                # -- end --budget
                record = _call_record(spec, step, request, res, waited_ms)
                await journal.commit(record)
            if cache is not None:  # response cache: store what was paid (after it is journaled)
                cache.store(record, spec.item_id, spec.repetition, model)
            return Turn(res.message, res.finish_reason, res.refusal, res.invalid)

        def place() -> None:
            """Seed §3: a run starts when its first call goes out (or is answered from the cache);
            after the window's close it does not start (WindowClosed), or with --outside-window it
            is journaled as outside. A run that started inside goes on."""
            if placed or gate is None:
                return
            outside = gate.outside(window.now())
            if gate.stopped:
                raise WindowClosed()
            placed.append(outside)

        budget = lanes[spec.model].run_budget()
        task_record = None
        try:
            if task:
                task_record = await task_runner.run(task_runner.TaskRun(
                    item=item, system=system, loop=runner, call=call,
                    usage_of=lambda step: journal.calls[(spec.key, step)]["usage"],
                    earlier_latency=lambda step: task_runner.earlier_latency(journal, spec.key, step, started_here),
                    work=task_runner.work_folder(out, spec), price=model.get("price")))
                outcome = None
            else:
                offered = workload["tools"].get(spec.system, [])
                # A run that offers tools makes at most MAX_TOOL_CALLS_PER_RUN of them (runtime/tool_call_cap.py).
                ctx = RunContext(messages=render_messages(workload, spec.system, item, model), tools=offered,
                                 terminal_tools=workload["terminal_tools"].get(spec.system, []), max_steps=system.get("max_steps", 1),
                                 call=tool_call_cap.capped(call) if offered else call, toolbox=toolbox)
                try:
                    outcome = await runner.run(ctx)
                except tool_call_cap.OverCap as over:
                    outcome = tool_call_cap.outcome(over)
        except (BudgetReached, Halted, WindowClosed):  # the run stops unjournaled; its journaled calls are replayed on resume
            return
        except adapter.InfraExhausted as exc:
            await journal.commit({"type": "infra_exhausted", "run": spec.key, "failures": [f.record() for f in exc.failures],
                            "reason": getattr(exc, "reason", "retries-exhausted")})
            stats.exclude(getattr(exc, "reason", "retries-exhausted"))
            if bar:
                bar.set_postfix_str(stats.postfix(), refresh=False)
                bar.update(1)
            return
        except adapter.ConfigError as exc:  # no new call starts; the calls in flight are journaled (halt.abort)
            _abort(str(exc))
            return
        fields = task_record if task_record is not None else {
            "outcome": outcome.outcome, "steps": outcome.steps, "answer_text": outcome.answer_text,
            "answer": outcome.answer, "submitted": outcome.submitted, "transcript": outcome.transcript, "events": outcome.events}
        await journal.commit({  # the run is done once this line is fsync'd (acknowledged)
            "type": "run", "run": spec.key, "workload": spec.workload, "model": spec.model, "system": spec.system,
            "item": spec.item_id, "item_index": spec.item_index, "repetition": spec.repetition, **fields,
            **({"outside_window": True} if placed and placed[0] else {}),  # started after the window closed (--outside-window)
        })
        if task:  # journaled: the scratch copy has done its work
            await asyncio.to_thread(task_runner.remove_work_folder, out, spec)
        if judging is not None and judging.applies(spec.workload):
            await judge(spec, "primary")
        if bar:
            bar.update(1)

    tasks = [asyncio.ensure_future(one(r)) for r in pending]
    ticker = asyncio.ensure_future(_show_infra(bar, stats)) if bar else None
    halt.install()
    try:
        # The first failure stops the run (asyncio.wait, unlike as_completed, leaves no
        # coroutine un-awaited behind when it does).
        if tasks:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for t in tasks:
            if t.done() and not t.cancelled() and t.exception() is not None:
                raise t.exception()
        if judging is not None:  # the second judge's sample needs every primary judgment first (seed §5.4)
            tasks = [asyncio.ensure_future(judge(r, "second")) for r in judging.second_sample(journal, runs)]
            if tasks:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for t in tasks:
                if t.done() and not t.cancelled() and t.exception() is not None:
                    raise t.exception()
    except BaseException:
        # Cancelling a call inside litellm leaves the provider coroutine litellm created but
        # had not awaited yet; Python then warns "coroutine ... was never awaited" at exit.
        # The call is abandoned on purpose (it was never journaled, a resume makes it again).
        import warnings

        warnings.filterwarnings("ignore", message=r"coroutine '.*' was never awaited", category=RuntimeWarning)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        halt.uninstall()
        # Whatever is queued goes out (whole lines, in order) before the loop ends.
        await journal.drain()
        if ticker:
            ticker.cancel()
            await asyncio.gather(ticker, return_exceptions=True)
        if bar:
            bar.set_postfix_str(stats.postfix(), refresh=False)
            bar.close()
    return stats


class WindowClosed(Exception):
    """A run's first call would go out after the edition's window closed: the run does not start."""


class WindowGate:
    """The edition's window during one execute: `outside(now)` says whether a run starting now
    starts after the close; without --outside-window such a run does not start (`stopped`)."""

    def __init__(self, win: "window.Window", outside_allowed: bool):
        self.window = win
        self.outside_allowed = outside_allowed
        self.stopped = False

    def outside(self, at: float) -> bool:
        if not self.window.closed(at):
            return False
        if not self.outside_allowed:
            self.stopped = True
        return True


def _call_record(spec: RunSpec, step: int, request: str, res, waited_ms: int) -> dict[str, Any]:
    """A call's journal record. `latency_ms` is the provider's (its last attempt); `queue_ms` the
    wait for a concurrency slot (the model's limiter, and the unacknowledged-call bound)."""
    return {"type": "call", "run": spec.key, "step": step, "request": request,
            "response": {"message": res.message, "finish_reason": res.finish_reason, "refusal": res.refusal,
                         **({"invalid": res.invalid} if res.invalid else {})},
            "usage": res.usage, "attempts": res.attempts, "response_model": res.response_model,
            "infra_failures": [f.record() for f in res.failures], "latency_ms": res.latency_ms,
            "queue_ms": res.queue_ms + waited_ms}


async def _show_infra(bar, stats) -> None:
    """Keep the progress bar's postfix (retries, exclusions, backoff, concurrency) live."""
    while True:
        bar.set_postfix_str(stats.postfix())
        await asyncio.sleep(0.5)


def _announce_live(bar, message: str) -> None:
    """A message for the operator watching the progress bar (nothing without one)."""
    if bar is not None and not bar.disable:
        bar.write(message, file=sys.stderr)


def _announce(bar, message: str) -> None:
    """A message that must be seen now, above the progress bar if there is one."""
    if bar is not None and not bar.disable:
        bar.write(message, file=sys.stderr)
    else:
        _say(message)


# -- entry points ---------------------------------------------------------------------------

class _OutLock:
    """One `lrc execute` per output folder at a time."""

    def __init__(self, out: Path):
        from lrc.runtime import outfolder

        self.out = out
        if out.exists() and not out.is_dir():
            raise Unusable(f"--out {out} is a file, not a folder; pass a folder (it is created if missing)")
        try:
            out.mkdir(parents=True, exist_ok=True)
            self.fh = outfolder.open_lock(out)  # never through a link, never waiting on a FIFO
        except outfolder.UnsafeFolder as exc:
            raise Unusable(str(exc)) from None
        except OSError as exc:
            raise Unusable(f"cannot use {out} as the output folder: {_os_problem(exc)}") from exc
        try:
            _no_links(out)  # nothing is written through a link that leads out of it
        except Unusable:
            self.fh.close()
            raise

    def __enter__(self) -> "_OutLock":
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise Refused(f"another `lrc execute` is using {self.out}") from exc
        return self

    def __exit__(self, *exc: Any) -> None:
        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()


# -- outputs up to date: skip a rebuild that would write the same bytes ------------------------

STAMP = ".lrc-outputs.json"
_STAMP_FORMAT = 1
_TAIL_BYTES = 1 << 16


def _retry_billed(spending, hold, model_id: str):
    """What `adapter.complete` asks before retrying a billed attempt under --budget (None: no budget)."""
    if hold is None:
        return None
    return lambda billed: spending.retry(hold, model_id, billed)


def _settle_failed(spending, hold, model_id: str, exc: BaseException) -> None:
    """A budgeted call that raised: what its failed attempts were billed (a call that ran out of
    retries after generations that failed mid-answer) replaces its reservation; else nothing was
    billed and the reservation is dropped."""
    from lrc.runtime.models import adapter

    billed = exc.billed() if isinstance(exc, adapter.InfraExhausted) else {}
    if any(billed.values()):
        spending.settle(hold, model_id, billed)
    else:
        spending.release(hold)


def _journal_identity(path: Path) -> dict[str, Any] | None:
    """What identifies the journal's content cheaply: size, inode, mtime and a digest of its
    last 64 KiB (the journal only ever grows by appending; hashing 1 GB on every resume would
    cost seconds). None if it cannot be read."""
    import hashlib

    from lrc.runtime import filebytes

    try:
        fd, _size = filebytes.open_regular(path, None)  # a FIFO is no journal: never waited on
        with os.fdopen(fd, "rb") as fh:  # fstat below: the inode and mtime, not only the size
            st = os.fstat(fh.fileno())
            fh.seek(max(0, st.st_size - _TAIL_BYTES))
            tail = hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None
    return {"bytes": st.st_size, "inode": st.st_ino, "mtime_ns": st.st_mtime_ns, "tail_sha256": tail}


_STAMPED_OUTPUTS = ("summary.json", "rate-card.md", "cells.csv", "cells.parquet", "report.html")


def _file_digest(path: Path) -> str | None:
    import hashlib

    from lrc.runtime import filebytes

    data = filebytes.read_regular(path)  # None for a FIFO or a device in an output's place
    return None if data is None else hashlib.sha256(data).hexdigest()


def _stamp_key(lock: dict[str, Any], out: Path, selection: Any) -> dict[str, Any]:
    return {"stamp_format": _STAMP_FORMAT, "plan": lock["root_digest"], "lrc": lock["lrc_version"],
            "out": str(out.resolve()), "selection": repr(selection)}


def write_stamp(lock: dict[str, Any], out: Path, selection: Any, summary, runs_planned: int) -> None:
    """Record that the outputs of `out` were written from its journal as it is now (best
    effort: without a stamp the next execute/report simply rebuilds). Only a folder that holds
    every planned run gets one: a partial folder (a subset, a shard, a stopped budget) or one
    with excluded runs has work left, so the next execute must look at its journal."""
    if getattr(summary, "not_run", 0) or summary.incomplete:
        try:
            (out / STAMP).unlink(missing_ok=True)
        except OSError:
            pass
        return
    identity = _journal_identity(out / "journal.jsonl")
    if identity is None:
        return
    stamp = {**_stamp_key(lock, out, selection), "journal": identity, "runs_planned": runs_planned,
             "outputs": {name: _file_digest(out / name) for name in _STAMPED_OUTPUTS},
             "summary": {"card": summary.card, "where": summary.where, "incomplete": summary.incomplete,
                         "calibration": summary.calibration}}
    tmp = out / f".{STAMP}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps(stamp, sort_keys=True), encoding="utf-8")
        os.replace(tmp, out / STAMP)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def up_to_date(lock: dict[str, Any], out: Path, selection: Any):
    """The Summary of `out` if its outputs were written from exactly the journal it holds now,
    under this plan and code (verified before this is asked), else None.

    The outputs are a pure function of the lock, the journal and the verified code, so when the
    journal has not changed since they were written (same size, inode, mtime, last 64 KiB) and
    the summary, rate card and cells files still hold what was written, rebuilding them would
    write the same bytes: `lrc report` and a resume with nothing to do skip it (no journal
    parse, no item generation, no grading, no litellm). Traces under runs/ are not re-read;
    delete `out/.lrc-outputs.json` to force a rebuild (e.g. after deleting trace files)."""
    from lrc.runtime import filebytes

    # A stamp is a small regular file lrc wrote; anything else (a FIFO, a device, a deep or huge
    # planted one) is no stamp: the outputs are rebuilt.
    raw = filebytes.read_regular(out / STAMP, limit=1 << 20)
    if raw is None:
        return None
    try:
        stamp = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(stamp, dict) or any(stamp.get(k) != v for k, v in _stamp_key(lock, out, selection).items()):
        return None
    if stamp.get("journal") != _journal_identity(out / "journal.jsonl"):
        return None
    outputs = stamp.get("outputs")
    if not isinstance(outputs, dict) or any(outputs.get(name) is None or outputs.get(name) != _file_digest(out / name)
                                            for name in _STAMPED_OUTPUTS):
        return None
    s = stamp.get("summary") or {}
    try:
        return _StampedSummary(card=s["card"], where=s["where"], incomplete=int(s["incomplete"]), calibration=s["calibration"])
    except (KeyError, TypeError, ValueError):
        return None


@dataclass
class _StampedSummary:
    """`report.outputs.Summary` as recorded in the stamp (that module imports polars: too slow
    to import just to print a rate card that is already written)."""

    card: str
    where: str
    incomplete: int
    calibration: dict[str, Any] | None = None

    @property
    def calibration_failed(self) -> bool:
        from lrc.runtime.report import calibration_text

        return calibration_text.failed(self.calibration)

    def calibration_report(self) -> str:
        from lrc.runtime.report import calibration_text

        return calibration_text.report(self.calibration)


def _selection(options: "RunOptions") -> Any:
    """The options that decide which runs an execute makes (a subset gives other outputs)."""
    return tuple(getattr(options, name, None) for name in ("models", "workloads", "limit", "shard"))


def out_place_problem(lock_path: Path, out: Path) -> None:
    """Unusable when `out` cannot hold a run without destroying something: a folder inside the
    project's generated/ or specs/ (the next `lrc compile` rewrites generated/ and deleted the
    run's journal and outputs), or an existing folder without a journal that already holds files
    named as lrc's outputs (an operator's own report.html, summary.json: they were overwritten)."""
    generated = lock_path.resolve().parent.parent
    target = out.resolve()
    if generated.name == "generated":
        for managed in (generated, generated.parent / "specs"):
            if target == managed or target.is_relative_to(managed):
                raise Unusable(f"--out {out} is inside {managed}, which `lrc compile` manages: the next compile would "
                               f"delete the run; use a folder outside generated/ and specs/ (e.g. runs/<name>)")
    if out.is_dir() and not (out / "journal.jsonl").exists():
        from lrc.runtime.outfolder import OUTPUT_FILES

        taken = [name for name in OUTPUT_FILES if (out / name).exists()]
        if taken:
            raise Unusable(f"--out {out} has no journal but already holds {', '.join(taken)}: they would be overwritten; "
                           f"use a new folder (or the folder of the run they belong to)")


def run(lock_path: Path, out: Path, options: "RunOptions") -> int:
    from lrc.runtime import budget
    from lrc.runtime import items as item_gen
    from lrc.runtime import selection
    from lrc.runtime.halt import Halt
    from lrc.runtime.journal import Journal, JournalError, JournalWriteError
    from lrc.runtime.models import adapter
    from lrc.runtime.pricing import decimal_str
    from lrc.runtime.redact import build_redactor, declare_secret_variables

    # A key variable the operator named is a credential whatever its name (never journaled, printed).
    declare_secret_variables(e.api_key_env for e in options.endpoints.values())
    settings = options.settings
    seed_file, progress = options.seed_file, options.progress
    if (out / "erratum.json").is_file():  # its tables are corrected ones (lrc.runtime.errata): never run into it
        raise Refused(f"{out} is a folder regraded by an erratum (erratum.json): it is never executed into; "
                      f"run `lrc report PLAN.lock --out {out}` to rebuild it, or execute into the original folder")
    out_place_problem(lock_path, out)
    lock = load_verified(lock_path)
    plan = lock["plan"]
    from lrc.runtime.lock import judges as judge_models

    from lrc.runtime.tasks import planning as task_planning

    refused = judge_models.problems(plan) + task_planning.problems(plan)
    if refused:  # before any call: a judged workload must be able to reach a pass honestly
        raise Refused("; ".join(refused) + "; nothing was run")
    callable_models = judge_models.callable_models(plan)
    unknown = options.unknown_models(callable_models)
    if unknown:
        raise Aborted(f"the run profile or a flag sets model(s) the plan does not run: {', '.join(unknown)} "
                      f"(it runs: {', '.join(sorted(plan['models']))}); nothing was run")
    chosen_models, _ = selection.check(plan, options)  # an unknown id stops here: nothing is written or called
    if (out / STAMP).is_file() and options.cache_dir is None:  # with --cache the journal's calls are stored first
        with _OutLock(out):
            summary = up_to_date(lock, out, _selection(options))
        if summary is not None and not summary.incomplete:
            resolve_seed(plan, seed_file)  # a missing or wrong seed file is refused here too
            # Every planned run is journaled and the outputs were written from this journal:
            # nothing to call, nothing to rewrite (and no litellm to import).
            _say(f"nothing to do: every {'selected ' if options.partial else ''}run is journaled and the outputs are up to date")
            print(summary.card, end="")
            print(summary.where)
            return _finish("lrc execute", summary)
    used_models = [dict(m) for ref, m in plan["models"].items() if chosen_models is None or ref in chosen_models]
    used_models += [dict(j) for j in judge_models.judges(plan).values() if j["id"] not in plan["models"]]
    missing = adapter.missing_credentials(used_models, options.endpoint)
    if missing:
        lines = [f"{model}: set {' and '.join(names)}" for model, names in missing]
        raise Aborted("missing API credentials, nothing was called:\n  " + "\n  ".join(lines))
    seed = resolve_seed(plan, seed_file)
    modules = import_modules(plan)
    cache = _open_cache(options, lock)  # --cache DIR
    with _cache_closed(cache), _OutLock(out):
        journal_path = out / "journal.jsonl"
        try:
            journal = Journal(journal_path, lock["root_digest"], plan["edition"]["ref"], redact=build_redactor())
        except JournalError as exc:
            raise Refused(str(exc)) from exc
        except OSError as exc:
            raise Unusable(f"cannot write the journal in {out}: {_os_problem(exc)}") from exc
        if journal.truncated_tail:
            _say("note: the journal's last line was incomplete (the previous run was killed mid-write); it was cut off")
        try:
            items = item_gen.generate(plan, seed)
            try:
                item_gen.write(items, out)
            except item_gen.ItemError as exc:
                raise Refused(f"{exc} (the folder holds another plan's items)") from exc
            runs = plan_runs(plan, items)
            chosen = selection.select(plan, runs, options)
            if options.partial:
                _say(f"lrc execute: {selection.describe(options)}: {len(chosen)} of the plan's {len(runs)} runs selected")
            done = sum(1 for r in chosen if r.key in journal.runs)
            if done:
                _say(f"resuming: {done} of {len(chosen)} runs already journaled; they are not repeated")
            # Seed §3: the runs start within the edition's window, opened by the folder's first
            # execute (runtime/window.py). Once it has closed no run starts (--outside-window: they
            # do, and are journaled as outside it).
            started = window.now()
            win = window.of(plan, journal)
            if any(r.key not in journal.runs for r in chosen):
                if win.closed(started) and not options.outside_window:
                    left = sum(1 for r in chosen if r.key not in journal.runs)
                    _say(_window_closed(win, "has closed", f"{left} run(s) were not made, and none is started now"))
                    return EXIT_WINDOW
                if win.opened is None:  # this execute opens the window
                    win = window.Window(started, win.hours)
                # How this execute is operated, once, before the first run it journals (an
                # execute with nothing to do leaves the journal as it was); when it started.
                journal.append({"type": "session", "opened": window.stamp(started), "operation": options.operation(callable_models)})
            gate = WindowGate(win, options.outside_window)
            if cache is not None:  # what earlier executes of this folder paid for, in case it is not stored yet
                cache.store_journaled(journal.calls.values(), {r.key: r for r in runs}, plan["models"])
            try:
                # A subset (`--models`) needs an output bound only for the models it may still
                # call (and the judge); the plan's other models are priced, never called here.
                pending = {r.model for r in chosen if r.key not in journal.runs}
                spending = budget.open_budget(options.budget, {**plan, "models": callable_models}, journal,
                                              calling={m for m in callable_models if m in pending or m not in plan["models"]})
            except budget.BudgetUnusable as exc:
                raise Aborted(f"--budget: {exc}") from exc
            judging = None
            if judge_models.judged_workloads(plan):
                from lrc.runtime.judging import Judging

                judging = Judging(plan, modules, items, seed)
            halt = Halt()
            stats = asyncio.run(_execute(plan, chosen, items, modules, journal, progress, settings, options.endpoint, cache,
                                         spending, judging, out, halt, gate))
        except JournalWriteError as exc:
            kept = len(journal.runs)
            raise Unusable(f"{exc}; the {kept} run(s) journaled so far are kept. "
                           f"Free the space (or make {out} writable) and run the same command again to resume.") from exc
        except OSError as exc:
            raise Unusable(f"cannot write in {out}: {_os_problem(exc)}. "
                           f"Fix it and run the same command again to resume.") from exc
        finally:
            journal.close()
        if halt.abort_reason is not None:  # the calls in flight were journaled; the resume repays none of them
            raise Aborted(halt.abort_reason)
        if halt.requested:  # SIGINT/SIGTERM: the calls in flight are journaled; the outputs wait for the resume
            return _halted(halt, journal, chosen)
        summary = _write_outputs(lock, plan, runs, items, modules, Journal(journal_path, lock["root_digest"], plan["edition"]["ref"],
                                                                           readonly=True), out, seed)
        write_stamp(lock, out, _selection(options), summary, len(runs))
    print(summary.card, end="")
    print(summary.where)
    for model, reason in sorted(stats.stopped.items()):
        _say(f"lrc execute: {model} ({options.endpoint(model).where(model)}) was stopped: {reason}")
    if spending is not None and spending.stopped:
        _say(f"lrc execute: budget reached: the next call could cost up to ${decimal_str(spending.refused)}, more than is "
             f"left; no further call was started. {spending.summary()}. {summary.not_run + summary.incomplete} run(s) have no result yet: run the "
             f"same command with a larger --budget to resume (journaled calls are not paid again).")
        if spending.overrun:
            _say(f"lrc execute: warning: actual costs exceeded their reservations by ${decimal_str(spending.overrun)} "
                 f"(the provider counted more tokens than lrc's offline count plus its margin)")
        return EXIT_CALIBRATION if _finish("lrc execute", summary) == EXIT_CALIBRATION else EXIT_BUDGET
    if gate.stopped:
        _say(_window_closed(gate.window, "closed during this execute",
                            f"no run started after it, the runs in flight finished and were journaled, and "
                            f"{summary.not_run + summary.incomplete} run(s) have no result"))
        return EXIT_CALIBRATION if _finish("lrc execute", summary) == EXIT_CALIBRATION else EXIT_WINDOW
    if spending is not None:
        _say(f"lrc execute: budget: {spending.summary()}")
    if summary.incomplete:
        _say(f"lrc execute: {summary.incomplete} run(s) were excluded after infrastructure failures "
             f"({stats.describe_exclusions()}); "
             f"run the same command again to resume them (finished calls are not paid again).")
    _say_partial("lrc execute", summary, lock_path, out)
    return _finish("lrc execute", summary)


def _window_closed(win: "window.Window", when: str, what: str) -> str:
    """What an execute says when the edition's window has closed (exit 8), and what to do."""
    return (f"lrc execute: the edition's window ({win.describe()}; seed §3) {when}: {what}. Runs made after the close "
            f"would not be comparable with the others; execute into a new folder (a new window), or pass "
            f"--outside-window to make them anyway (the rate card then counts them as outside).")


def _halted(halt, journal, chosen: list) -> int:
    """An execute stopped by SIGINT or SIGTERM (`lrc.runtime.halt`): say what is journaled and
    how to resume; exit 128 + the signal's number. The outputs are not rewritten (a resume, or
    `lrc report`, writes them from the journal)."""
    done = sum(1 for r in chosen if r.key in journal.runs)
    _say(f"lrc execute: stopped on {halt.name}: no call was started after it, and every call in flight came back and was "
         f"journaled. {done} of the {len(chosen)} selected runs are journaled; the outputs were not rewritten. Run the "
         f"same command again to resume (journaled calls are not paid again).")
    return 128 + int(halt.signum)


def _say_partial(command: str, summary, lock_path: Path, out: Path) -> None:
    """A partial folder is not a measurement: say so, and how to complete it (exit code unchanged:
    a partial execute that made every run it was asked to make exits 0)."""
    if summary.not_run:
        _say(f"{command}: partial run: {summary.not_run} of the plan's {summary.planned} runs are not in the journal "
             f"(a subset, a limit, a shard, or an execute that was stopped); the folder gives no rate-card lines and no "
             f"qualifying verdict. Complete it with `lrc execute {lock_path} --out {out}` (no subset flags), "
             f"or combine shards with `lrc merge`.")


def _open_cache(options: "RunOptions", lock: dict[str, Any]):
    """The response cache of `--cache DIR`, or None; refused (nothing run) if it cannot be used."""
    if options.cache_dir is None:
        return None
    from lrc.runtime.redact import build_redactor
    from lrc.runtime.response_cache import CacheError, ResponseCache

    try:
        return ResponseCache(options.cache_dir, lock["root_digest"], lock["plan"]["edition"]["ref"],
                             sampled=options.cache_sampled, redact=build_redactor())
    except CacheError as exc:
        raise Aborted(f"{exc}; nothing was called") from exc


@contextlib.contextmanager
def _cache_closed(cache):
    """Flush and release the response cache when the execute ends, however it ends, and say what it did."""
    try:
        yield
    finally:
        if cache is not None:
            cache.close()
            for line in cache.report():
                _say(f"lrc execute: {line}")


def _finish(command: str, summary) -> int:
    """The exit code of a finished execute or report: calibration failures (5) first -- they
    stand whatever a resume adds --, then an incomplete run (3), else 0."""
    if summary.calibration_failed:
        _say(f"{command}: {summary.calibration_report()}\n"
             f"  (marked in summary.json under \"calibration\"; the reference models must pass n/n and 0/n)")
        return EXIT_CALIBRATION
    return EXIT_INCOMPLETE if summary.incomplete else EXIT_OK


def _write_outputs(lock, plan, runs, items, modules, journal, out: Path, seed: str | None = None, memo: bool = True):
    """`memo`: let task grades, charts and the forecast come from the per-user memos
    (`lrc.runtime.tasks.grade_memo`, `lrc.runtime.report.chart_memo`, `lrc.runtime.forecast_memo`);
    `lrc verify` says False, so that a package is verified by recomputing every grade, drawing
    every chart and counting every prompt's tokens."""
    from lrc.runtime import estimate
    from lrc.runtime.forecast_memo import ForecastMemo
    from lrc.runtime.report import outputs
    from lrc.runtime.review.categorize import recorded_problem
    from lrc.runtime.review.status import recorded_adjudication_problem

    from lrc.runtime.judging import recorded_judge_problem

    problem = recorded_problem(plan, journal)
    if problem is not None:
        raise Refused(f"{out / 'journal.jsonl'}: {problem}: it was not written by `lrc categorize`; nothing was reported")
    problem = recorded_judge_problem(plan, journal)
    if problem is not None:
        raise Refused(f"{out / 'journal.jsonl'}: {problem}: it was not written by this plan's judge step; nothing was reported")
    problem = recorded_adjudication_problem(plan, journal)
    if problem is not None:
        raise Refused(f"{out / 'journal.jsonl'}: {problem}: it was not written by `lrc review import`; nothing was reported")

    # The forecast of `lrc estimate`, recomputed from the lock by the same code (or remembered from
    # this user's last computation of exactly it), beside the actual cost.
    forecast = ForecastMemo(enabled=memo).for_report(
        lock, plan, seed, runs, lambda: estimate.for_report(estimate.forecast(plan, lock["root_digest"], items, runs)))
    try:
        return outputs.write_all(lock, plan, runs, items, modules, journal, out, forecast, seed=seed, memo=memo)
    except OSError as exc:
        raise Unusable(f"cannot write the outputs in {out}: {_os_problem(exc)}; the journal is intact: fix it and run "
                       f"`lrc report` (or the same `lrc execute`) again") from exc


def run_cli(lock_path: Path, out: Path, request: dict[str, Any] | None = None) -> int:
    """`lrc execute`: `request` holds the command line's flags by name and the validated run
    profile (see `operate.from_request`)."""
    from lrc.runtime import operate
    from lrc.runtime.redact import build_redactor, declare_secret_variables

    # A provider's error may echo the API key (a rejected key often is): never print it.
    redact = build_redactor()
    try:
        options = operate.from_request(request)
    except operate.OptionsError as exc:
        _say(redact(f"lrc execute: {exc}"))
        return EXIT_PROBLEMS
    declare_secret_variables(e.api_key_env for e in options.endpoints.values())  # whatever their names say
    redact = build_redactor()
    try:
        return run(lock_path, out, options)
    except operate.OptionsError as exc:
        _say(redact(f"lrc execute: {exc}"))
        return EXIT_PROBLEMS
    except Refused as exc:
        _say(redact(f"lrc execute: {exc}"))
        return EXIT_REFUSED
    except Aborted as exc:
        _say(redact(f"lrc execute: {exc}"))
        return EXIT_PROBLEMS
    except Unusable as exc:
        _say(redact(f"lrc execute: {exc}"))
        return EXIT_UNUSABLE


def estimate_cli(lock_path: Path, request: dict[str, Any] | None = None) -> int:
    """`lrc estimate`: the forecast cost of the full edition, before any call (`lrc.runtime.estimate`).
    `request` holds the flags: `seed_file`, `format` ("text" | "json") and `profile_path` (a run
    profile: operating settings only, which change no forecast figure)."""
    import json

    from lrc.runtime import estimate
    from lrc.runtime import items as item_gen
    from lrc.runtime.redact import build_redactor

    request = dict(request or {})
    redact = build_redactor()
    try:
        lock = load_verified(lock_path)
        plan = lock["plan"]
        items = item_gen.generate(plan, resolve_seed(plan, request.get("seed_file")))
        fc = estimate.forecast(plan, lock["root_digest"], items)
    except Refused as exc:
        _say(redact(f"lrc estimate: {exc}"))
        return EXIT_REFUSED
    except estimate.EstimateError as exc:
        _say(redact(f"lrc estimate: {exc}"))
        return EXIT_PROBLEMS
    if request.get("format") == "json":
        sys.stdout.write(json.dumps({"command": "estimate", **fc.as_json()}, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(estimate.text(fc))
    return EXIT_OK


def report_cli(lock_path: Path, out: Path | None, html: bool = False, html_out: Path | None = None,
               history: Path | None = None) -> int:
    """Rebuild every output of a run folder from its journal, without calling any model.
    `html`: end with the path of the folder's report.html (written either way). With no run
    folder (`out` None): the pre-registration page from the lock alone (`report.html`).
    `history`: then add the "Trend across editions" section from that results history
    (`lrc.runtime.publish`) to report.html; the exit code is the report's unless the trend fails."""
    if history is not None and out is not None:
        code = report_cli(lock_path, out, html=html, html_out=html_out)
        if code not in (EXIT_OK, EXIT_INCOMPLETE, EXIT_CALIBRATION):
            return code
        from lrc.runtime.publish.publish_cli import add_trend

        try:
            lock = load_verified(lock_path)
        except Refused as exc:
            _say(f"lrc report: {exc}")
            return EXIT_REFUSED
        return add_trend(lock, out, history) or code
    if out is None:
        from lrc.runtime.report.html import preregister_cli

        return preregister_cli(lock_path, html_out)
    from lrc.runtime.redact import build_redactor

    if (out / "erratum.json").is_file():  # a folder regraded by errata: rebuilt as `lrc regrade` built it
        from lrc.runtime.errata import report_cli as regraded_report

        return regraded_report(lock_path, out)
    redact = build_redactor()
    try:
        lock = load_verified(lock_path)
        plan = lock["plan"]
        if not (out / "journal.jsonl").exists():
            raise Refused(f"{out} has no journal.jsonl; run `lrc execute` first")
        seed = resolve_seed(plan, None) if plan["seed"]["policy"] == "public" else None
        current = up_to_date(lock, out, _selection(None)) if seed is not None else None
        if current is not None:
            print(current.card, end="")
            print(current.where)
            _say_page(out, html)
            from lrc.runtime.errata import say_published

            say_published(lock["root_digest"], out)
            return _finish("lrc report", current)
        if seed is None:
            raise Refused("a held-out edition's report needs its items; rerun `lrc execute` with --seed-file")
        summary = rebuild_outputs(lock_path, lock, out)  # the folder may come from elsewhere: no link is written through
    except Refused as exc:
        _say(redact(f"lrc report: {exc}"))
        return EXIT_REFUSED
    except Unusable as exc:
        _say(redact(f"lrc report: {exc}"))
        return EXIT_UNUSABLE
    print(summary.card, end="")
    print(summary.where)
    _say_page(out, html)
    _say_partial("lrc report", summary, lock_path, out)
    from lrc.runtime.errata import say_published

    say_published(lock["root_digest"], out)  # errata published for this plan: named, never applied silently
    return _finish("lrc report", summary)


def rebuild_outputs(lock_path: Path, lock: dict[str, Any], out: Path, seed_file: Path | None = None):
    """Every output of the run folder `out` rebuilt from its journal, whatever its stamp or its
    summary.json say (a regraded folder as `lrc regrade` built it): what `lrc publish` reads, so
    that a folder's published numbers are always its journal's. A folder from elsewhere may
    carry a summary and cells of another run (a shard given the whole run's, a journal cut to
    its header, a float cost): rebuilt, they say what the journal holds. Refused / Unusable as
    `lrc report`; a held-out edition needs its seed (`seed_file`)."""
    from lrc.runtime import items as item_gen
    from lrc.runtime.journal import Journal, JournalError

    if (out / "erratum.json").exists():
        from lrc.runtime import errata

        record = errata._read_applied(out)
        return errata.rebuild(errata.verified_lock(lock_path, record["applied"]), out, record, seed_file)
    plan = lock["plan"]
    seed = resolve_seed(plan, seed_file)
    try:
        journal = Journal(out / "journal.jsonl", lock["root_digest"], plan["edition"]["ref"], readonly=True)
    except JournalError as exc:
        raise Refused(str(exc)) from exc
    except FileNotFoundError:
        raise Refused(f"{out} has no journal.jsonl; run `lrc execute` first") from None
    except OSError as exc:
        raise Refused(f"cannot read {out / 'journal.jsonl'}: {_os_problem(exc)}") from exc
    items = item_gen.generate(plan, seed)
    runs = plan_runs(plan, items)
    _no_links(out)
    summary = _write_outputs(lock, plan, runs, items, import_modules(plan), journal, out, seed)
    write_stamp(lock, out, _selection(None), summary, len(runs))
    return summary


def _no_links(out: Path) -> None:
    """Unusable if the output folder holds a symbolic link anywhere (lrc.runtime.outfolder)."""
    from lrc.runtime import outfolder

    try:
        outfolder.check_no_links(out)
    except outfolder.UnsafeFolder as exc:
        raise Unusable(str(exc)) from None


def _say_page(out: Path, html: bool) -> None:
    if html:
        print(f"page: {out / 'report.html'}")


def merge_cli(lock_path: Path, folders: list[Path], out: Path, seed_file: Path | None = None) -> int:
    """`lrc merge`: combine run folders (shards) of one plan (`lrc.runtime.merge`)."""
    from lrc.runtime import merge

    return merge.merge_cli(lock_path, folders, out, seed_file=seed_file)
