"""Throughput and CPU of `lrc execute` at the physical limit, beside inspect_ai (issue 11 §4).

A script that prints figures, not a test. It starts a loopback OpenAI-compatible server
(aiohttp, in its own process so its CPU is not counted; 127.0.0.1 only; it stops by itself
after `--server-seconds` or when this script goes away) that answers like a model -- the triage
workload's deterministic baseline policy, the same one `tests/helpers/stub_server.py` serves --
after `--latency` seconds, and fails `--rate-429` / `--rate-5xx` of the requests on purpose.

Then:
1. `lrc execute` of 1,050 single-shot triage runs (`--runs`) at concurrency 64 against it, in a
   throw-away project (the repository's specs plus one edition whose model is served by the
   loopback server); prints wall, CPU per run after imports, and the ideal
   ceil(runs / concurrency) x latency;
2. the same prompts through inspect_ai (`inspect eval ... --max-connections 64`) when it is
   installed (`pip install -e .[bench]`; never a runtime dependency), and the ratio;
3. `lrc execute` on a finished run folder (resume with nothing to do) and `lrc report`, on
   synthetic journals of 10,000 and 100,000 runs (`--journals`).

CPU "after imports" is the CPU of the whole process minus the CPU of a process that only
imports what that tool imports to make calls (litellm etc. for lrc, inspect_ai for inspect):
it holds item generation, rendering, calls, journaling, grading and the report.

    .venv/bin/python benchmarks/throughput.py                 # all of it, median of 3
    .venv/bin/python benchmarks/throughput.py --quick         # a short run (a smoke test)
    .venv/bin/python benchmarks/throughput.py --runs 256 --repeat 1 --journals 10000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

MODEL = "openai/stub-model"
KEY_ENV = "LRC_BENCH_STUB_KEY"
KEY = "sk-lrc-bench-throughput"
LRC = [sys.executable, "-m", "lrc.compiler.cli"]


# -- the loopback server (runs in a child process: `throughput.py --serve`) ------------------

def serve(latency: float, rate_429: float, rate_5xx: float, seconds: float, seed: int) -> None:
    """Serve until `seconds` pass or stdin closes (the parent went away); print the port first."""
    import asyncio
    import random

    from aiohttp import web

    from helpers.stub_server import reply_for

    rng = random.Random(seed)
    counts = {"requests": 0, "429": 0, "5xx": 0}

    async def completions(request: web.Request) -> web.Response:
        counts["requests"] += 1
        body = await request.json()
        await asyncio.sleep(latency)
        draw = rng.random()
        if draw < rate_429:
            counts["429"] += 1
            return web.json_response({"error": {"message": "bench: rate limited", "type": "rate_limit_exceeded",
                                                "code": "rate_limit_exceeded"}}, status=429, headers={"Retry-After": "0.05"})
        if draw < rate_429 + rate_5xx:
            counts["5xx"] += 1
            return web.json_response({"error": {"message": "bench: server error", "type": "server_error"}}, status=503)
        return web.json_response(reply_for(body, "baseline"))

    async def main() -> None:
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", completions)
        app.router.add_post("/chat/completions", completions)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(port, flush=True)
        loop = asyncio.get_running_loop()
        stdin_closed = loop.run_in_executor(None, sys.stdin.read)
        try:
            await asyncio.wait_for(stdin_closed, timeout=seconds)
        except asyncio.TimeoutError:
            pass
        await runner.cleanup()
        print(json.dumps(counts), file=sys.stderr, flush=True)

    asyncio.run(main())


class Server:
    """The loopback server as a child process; `with Server(...) as s: s.api_base`."""

    def __init__(self, latency: float, rate_429: float = 0.0, rate_5xx: float = 0.0, seconds: float = 1800):
        self.args = [sys.executable, __file__, "--serve", "--latency", str(latency), "--rate-429", str(rate_429),
                     "--rate-5xx", str(rate_5xx), "--server-seconds", str(seconds)]

    def __enter__(self) -> "Server":
        env = {**os.environ, "PYTHONPATH": str(REPO / "tests")}
        self.proc = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not line.strip().isdigit():
            self.proc.kill()
            raise RuntimeError("the loopback server did not start")
        self.api_base = f"http://127.0.0.1:{int(line)}/v1"
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# -- the throw-away project ------------------------------------------------------------------

def operating_flags(api_base: str, concurrency: int, model: str = "") -> list[str]:
    """How the loopback model is reached in this execute: operating settings are flags (or a
    run profile), never part of the edition."""
    model = model or MODEL
    return ["--api-base", f"{model}={api_base}", "--api-key-env", f"{model}={KEY_ENV}",
            "--max-concurrency", f"{model}={concurrency}"]


def build_project(root: Path, api_base: str, n_items: int, concurrency: int, models: Sequence[str] = (MODEL,),
                  repetitions: int = 1) -> Path:
    """specs/ and schemas/ of the repository, plus an edition `bench`: triage, single-shot, the
    given models (`openai/...` ones served by the loopback server), `n_items` per cell."""
    import re

    from support import pinned

    from lrc.compiler.pipeline import compile_project

    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, root / name)
    standard = root / "specs" / "standard" / "ledgerrate.yaml"
    text = standard.read_text(encoding="utf-8")
    found = re.search(r"(?m)^  n_per_cell: (\d+)", text)
    if found and n_items < int(found.group(1)):
        standard.write_text(text[:found.start(1)] + str(n_items) + text[found.end(1):], encoding="utf-8")
    entries, prices = [], []
    for model in models:
        if model.startswith("lrc/"):
            role = {"lrc/oracle": "infrastructure-check", "lrc/null": "floor-check", "lrc/baseline": "baseline"}[model]
            entries.append(f"  - id: {model}\n    role: {role}\n    sampling: {{temperature: 0}}\n")
            price = ('    input: "0"\n    cached_input: "0"\n    output: "0"\n'
                     '    source: embedded reference model, runs in-process\n')
        else:
            entries.append(f"  - id: {model}\n    role: candidate\n    sampling: {{temperature: 0}}\n")
            price = ('    input: "1.25"\n    cached_input: "0.125"\n    output: "10.00"\n'
                     '    source: benchmark price for the loopback server\n')
        prices.append(f"  {model}:\n    currency: USD\n    per_tokens: 1000000\n{price}    as_of: \"2026-11-29\"\n")
    edition = (
        "# yaml-language-server: $schema=../../schemas/edition.schema.json\n"
        "kind: edition\nid: bench\nversion: 1\ntitle: LedgerRate throughput benchmark\ndate: \"2026-11-29\"\n"
        f"standard: {pinned('ledgerrate')}\nanalysis: {pinned('lrc.analysis')}\n"
        f"workloads:\n  - {pinned('triage.ap-inbox')}\nsystems:\n  - {pinned('single-shot')}\n"
        "models:\n" + "".join(entries) + "pricing:\n" + "".join(prices) +
        f"n_per_cell: {n_items}\nrepetitions: {repetitions}\nwindow_hours: 72\n"
        "seed:\n  policy: public\n  value: ledgerrate-bench-2026-11\nqualifying:\n  min_pass_rate: \"0.80\"\n"
        "brand: LedgerRate\nfooter: LedgerRate throughput benchmark\n"
        "disclaimer: Benchmark edition against a loopback server; not a measurement.\nerrata: []\n")
    (root / "specs" / "editions" / "bench.yaml").write_text(edition, encoding="utf-8")
    result = compile_project(root)
    if result.diagnostics.has_errors:
        raise RuntimeError("the benchmark project does not compile:\n" + "\n".join(str(d) for d in result.diagnostics.sorted()))
    return root / "generated" / "bench" / "plan.lock"


# -- measuring processes ---------------------------------------------------------------------

def measure(cmd: list[str], env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,), cwd: Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+system) of one whole process and its children."""
    start = time.perf_counter()
    before = os.times()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    if proc.returncode not in ok:
        text = (out + err).decode("utf-8", "replace")
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{text[-4000:]}")
    return wall, cpu


def lrc_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LRC_")}
    env.update({KEY_ENV: KEY, "OPENAI_API_KEY": KEY}, **extra)
    return env


LRC_IMPORTS = ("import lrc.compiler.cli, tqdm; from lrc.runtime import execute, journal, items; "
               "from lrc.runtime.models import adapter; adapter.load_litellm(); import lrc.runtime.report.outputs")
INSPECT_IMPORTS = "import inspect_ai, inspect_ai.model, inspect_ai.solver, inspect_ai._cli.main, openai"


def import_cpu(code: str, repeat: int, python: str = sys.executable) -> float:
    return statistics.median(measure([python, "-c", code], env=lrc_env())[1] for _ in range(repeat))


def inspect_installed(python: str = sys.executable) -> bool:
    return subprocess.run([python, "-c", "import inspect_ai"], capture_output=True).returncode == 0


INSPECT_TASK = '''
import json
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import generate


@task
def triage():
    rows = json.load(open({prompts!r}, encoding="utf-8"))
    samples = [Sample(id=i, input=[ChatMessageSystem(content=s), ChatMessageUser(content=u)], target="")
               for i, (s, u) in enumerate(rows)]
    return Task(dataset=MemoryDataset(samples), solver=generate())
'''


def run_inspect(work: Path, prompts: list[tuple[str, str]], api_base: str, concurrency: int,
                python: str = sys.executable) -> tuple[float, float]:
    (work / "prompts.json").write_text(json.dumps(prompts), encoding="utf-8")
    (work / "bench_task.py").write_text(INSPECT_TASK.replace("{prompts!r}", repr(str(work / "prompts.json"))), encoding="utf-8")
    logs = work / "inspect-logs"
    shutil.rmtree(logs, ignore_errors=True)
    cmd = [python, "-m", "inspect_ai", "eval", "bench_task.py", "--model", MODEL,
           "--model-base-url", api_base, "--max-connections", str(concurrency), "--temperature", "0",
           "--log-dir", str(logs), "--display", "none"]
    return measure(cmd, env=lrc_env(INSPECT_LOG_DIR=str(logs)), cwd=work)


# -- synthetic journals ------------------------------------------------------------------------

def synthetic_journal(lock_path: Path, out: Path) -> int:
    """A finished journal for every planned run of `lock_path`, as `lrc execute` writes it
    (one call and one run record per run, the baseline policy's answer), without a call."""
    from lrc.runtime import items as item_gen
    from lrc.runtime.execute import load_verified, plan_runs, render_messages, resolve_seed
    from lrc.runtime.journal import JOURNAL_FORMAT, _encode
    from lrc.runtime.lock.canonical import digest
    from lrc.runtime.models.reference import estimate_tokens
    from lrc.runtime.workloads.triage_ap_inbox.reference import baseline

    lock = load_verified(lock_path)
    plan = lock["plan"]
    items = item_gen.generate(plan, resolve_seed(plan, None))
    runs = plan_runs(plan, items)
    out.mkdir(parents=True, exist_ok=True)
    rendered: dict[tuple[str, int], tuple[list, str]] = {}
    with open(out / "journal.jsonl", "w", encoding="utf-8") as fh:
        fh.write(_encode({"type": "header", "journal_format": JOURNAL_FORMAT, "plan": lock["root_digest"],
                          "edition": plan["edition"]["ref"]}) + "\n")
        for spec in runs:
            model = plan["models"][spec.model]
            key = (spec.model, spec.item_index)
            if key not in rendered:
                messages = render_messages(plan["workloads"][spec.workload], spec.system, items[spec.workload][spec.item_index], model)
                rendered[key] = (messages, baseline(messages, None).content or "")
            messages, answer = rendered[key]
            reply = {"role": "assistant", "content": answer}
            request = digest("request", {"model": spec.model, "sampling": model.get("sampling", {}), "messages": messages, "tools": None})
            usage = {"input": estimate_tokens(json.dumps(messages)), "cached_input": 0, "cache_write": 0,
                     "output": estimate_tokens(answer), "reasoning": 0}
            fh.write(_encode({"type": "call", "run": spec.key, "step": 1, "request": request,
                              "response": {"message": reply, "finish_reason": "stop", "refusal": False},
                              "usage": usage, "attempts": 1, "response_model": spec.model, "infra_failures": [],
                              "latency_ms": 200, "queue_ms": 0}) + "\n")
            fh.write(_encode({"type": "run", "run": spec.key, "workload": spec.workload, "model": spec.model,
                              "system": spec.system, "item": spec.item_id, "item_index": spec.item_index,
                              "repetition": spec.repetition, "outcome": "answered", "steps": 1, "answer_text": answer,
                              "answer": None, "submitted": False, "transcript": [*messages, reply],
                              "events": [{"step": 1, "event": "model_reply", "finish_reason": "stop"}]}) + "\n")
    return len(runs)


def journal_figures(work: Path, runs: int, repeat: int) -> dict[str, Any]:
    """A synthetic finished journal of about `runs` runs: resume and report times."""
    models = ("lrc/baseline", "lrc/null", "lrc/oracle", MODEL, MODEL + "-b")
    reps = 10 if runs <= len(models) * 10 * 1000 else 20  # an edition allows <= 1,000 items and <= 20 repetitions
    n_items = max(1, math.ceil(runs / (len(models) * reps)))
    project = work / f"journal-{runs}"
    lock = build_project(project, "http://127.0.0.1:9/v1", n_items, 4, models=models, repetitions=reps)
    out = project / "out"
    made = synthetic_journal(lock, out)
    env = lrc_env()
    # Every model of the synthetic journal answers like the baseline, so the reference checks
    # fail calibration (exit 5): expected here, the figures are times.
    ok = (0, 5)
    first_report, _ = measure([*LRC, "report", str(lock), "--out", str(out)], env=env, ok=ok)
    resume = [measure([*LRC, "execute", str(lock), "--out", str(out), "--no-progress"], env=env, ok=ok)[0] for _ in range(repeat)]
    report = [measure([*LRC, "report", str(lock), "--out", str(out)], env=env, ok=ok)[0] for _ in range(repeat)]
    (out / "journal.jsonl").open("a").close()
    return {"runs": made, "items": n_items, "models": len(models), "repetitions": reps, "first_report": first_report, "resume": resume, "report": report}


# -- main --------------------------------------------------------------------------------------

def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--runs", type=int, default=1050, help="single-shot triage runs (default 1050)")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2, help="server latency per request, seconds")
    ap.add_argument("--rate-429", type=float, default=0.0, help="share of requests answered 429 (Retry-After 0.05)")
    ap.add_argument("--rate-5xx", type=float, default=0.0, help="share of requests answered 503")
    ap.add_argument("--server-seconds", type=float, default=1800, help="the server stops by itself after this")
    ap.add_argument("--repeat", type=int, default=3, help="median of this many runs (default 3)")
    ap.add_argument("--journals", default=None, help="synthetic journal sizes, comma-separated ('' for none; default "
                    "10000,100000, with --quick 1000)")
    ap.add_argument("--no-inspect", action="store_true", help="skip inspect_ai even if installed")
    ap.add_argument("--inspect-python", default=sys.executable,
                    help="the Python that has inspect_ai (a separate venv keeps the project's .venv as locked; "
                         "default: this one)")
    ap.add_argument("--journals-only", action="store_true", help="only the resume/report figures of synthetic journals")
    ap.add_argument("--quick", action="store_true", help="a short run: 128 runs, once, a 1,000-run journal, no inspect_ai")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = ap.parse_args(argv)
    if args.serve:
        serve(args.latency, args.rate_429, args.rate_5xx, args.server_seconds, seed=11)
        return 0
    if args.quick:
        args.runs, args.repeat, args.no_inspect = min(args.runs, 128), 1, True
    if args.journals is None:
        args.journals = "1000" if args.quick else "10000,100000"
    work = args.keep or Path(tempfile.mkdtemp(prefix="lrc-throughput-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        return _bench(args, work)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def _bench(args: argparse.Namespace, work: Path) -> int:
    reps = math.ceil(args.runs / 1000)
    args.runs = math.ceil(args.runs / reps) * reps
    ideal = math.ceil(args.runs / args.concurrency) * args.latency
    print(f"lrc throughput benchmark: {args.runs} single-shot triage runs, concurrency {args.concurrency}, "
          f"latency {args.latency * 1000:.0f} ms, 429 {args.rate_429:.0%}, 5xx {args.rate_5xx:.0%}; "
          f"median of {args.repeat}; {os.cpu_count()} CPU(s), load {os.getloadavg()[0]:.1f}")
    print(f"  ideal wall ceil({args.runs}/{args.concurrency}) x {args.latency:g} s = {ideal:.2f} s")
    results: dict[str, Any] = {}
    if not args.journals_only:
        _execute_figures(args, work, ideal, results)
    for size in [int(s) for s in args.journals.split(",") if s.strip()]:
        fig = journal_figures(work, size, args.repeat)
        results[f"journal_{size}"] = fig
        print(f"journal of {fig['runs']} runs ({fig['items']} items x {fig['models']} models x {fig['repetitions']} repetitions): "
              f"first report {fig['first_report']:.2f} s; resume with nothing to do {median(fig['resume']):.2f} s "
              f"({', '.join(f'{x:.2f}' for x in fig['resume'])}); report {median(fig['report']):.2f} s "
              f"({', '.join(f'{x:.2f}' for x in fig['report'])})")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")
    print("goals: wall <= 1/4 of inspect_ai's; <= 5 ms CPU per run after imports; resume of 10,000 runs < 1 s; "
          "report of 100,000 runs < 5 s")
    print("json: " + json.dumps(results, sort_keys=True))
    return 0


def _execute_figures(args: argparse.Namespace, work: Path, ideal: float, results: dict[str, Any]) -> None:
    with Server(args.latency, args.rate_429, args.rate_5xx, args.server_seconds) as server:
        # An edition has at most 1,000 items per cell: more runs are repetitions of them.
        reps = math.ceil(args.runs / 1000)
        lock = build_project(work / "project", server.api_base, math.ceil(args.runs / reps), args.concurrency, repetitions=reps)
        base_cpu = import_cpu(LRC_IMPORTS, args.repeat)
        walls, cpus = [], []
        for i in range(args.repeat):
            out = work / f"out-{i}"
            shutil.rmtree(out, ignore_errors=True)
            cmd = [*LRC, "execute", str(lock), "--out", str(out), "--no-progress",
                   *operating_flags(server.api_base, args.concurrency)]
            wall, cpu = measure(cmd, env=lrc_env(), ok=(0, 3))
            walls.append(wall)
            cpus.append(cpu)
        lrc_wall, lrc_cpu = median(walls), median(cpus)
        per_run = (lrc_cpu - base_cpu) / args.runs
        results["lrc"] = {"wall": walls, "cpu": cpus, "import_cpu": base_cpu}
        print(f"lrc execute: wall {lrc_wall:.2f} s ({', '.join(f'{w:.2f}' for w in walls)}), {lrc_wall / ideal:.1f}x ideal; "
              f"CPU {lrc_cpu:.2f} s, imports {base_cpu:.2f} s -> {per_run * 1000:.2f} ms per run after imports")
        latencies = [r.get("latency_ms") for r in _records(work / "out-0", "call")]
        queues = [r.get("queue_ms") for r in _records(work / "out-0", "call") if r.get("queue_ms") is not None]
        if latencies:
            print(f"  journal: provider latency median {median(latencies):.0f} ms"
                  + (f", queue wait median {median(queues):.0f} ms (max {max(queues)} ms)" if queues else ""))
        if not args.no_inspect and inspect_installed(args.inspect_python):
            prompts = [(r["transcript"][0]["content"], r["transcript"][1]["content"]) for r in _records(work / "out-0", "run")]
            icpu_base = import_cpu(INSPECT_IMPORTS, args.repeat, args.inspect_python)
            iwalls, icpus = [], []
            for i in range(args.repeat):
                wall, cpu = run_inspect(work, prompts, server.api_base, args.concurrency, args.inspect_python)
                iwalls.append(wall)
                icpus.append(cpu)
            iwall, icpu = median(iwalls), median(icpus)
            results["inspect_ai"] = {"wall": iwalls, "cpu": icpus, "import_cpu": icpu_base}
            print(f"inspect_ai {_version('inspect_ai', args.inspect_python)}: wall {iwall:.2f} s ({', '.join(f'{w:.2f}' for w in iwalls)}); CPU {icpu:.2f} s, "
                  f"imports {icpu_base:.2f} s -> {(icpu - icpu_base) / args.runs * 1000:.2f} ms per run after imports")
            print(f"ratio lrc/inspect_ai wall: {lrc_wall / iwall:.2f} (goal <= 0.25); CPU: {lrc_cpu / icpu:.2f}")
        elif not args.no_inspect:
            print("inspect_ai: not installed (pip install -e .[bench]); no ratio")


def _records(out: Path, kind: str) -> list[dict[str, Any]]:
    path = out / "journal.jsonl"
    if not path.exists():
        return []
    return [r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r.get("type") == kind]


def _version(dist: str, python: str = sys.executable) -> str:
    code = f"from importlib import metadata; print(metadata.version({dist.replace('_', '-')!r}))"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "?"


if __name__ == "__main__":
    sys.exit(main())
