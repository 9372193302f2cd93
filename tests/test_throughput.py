"""Issue 11 §4, throughput and CPU: the classes of per-run waste, tested by what they do, not by timing.

- each locked template is compiled once per plan, however many runs render it;
- the journal commits in groups off the event loop, and a run counts as done only once its
  line was fsync'd (kill and disk-full mid-batch: acknowledged runs survive, nothing half-written);
- the provider's latency and the wait for a concurrency slot are journaled apart;
- `lrc report` and a resume with nothing to do never import litellm;
- benchmarks/throughput.py runs (--quick, slow).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lrc.runtime.lock import templating

REPO = Path(__file__).resolve().parent.parent


# -- templates: compiled once per plan ----------------------------------------------------------

@pytest.fixture
def count_compiles(monkeypatch):
    calls: list[str] = []
    original = templating._BoundedSandbox.from_string

    def counting(self, source, *args, **kwargs):
        calls.append(source)
        return original(self, source, *args, **kwargs)

    monkeypatch.setattr(templating._BoundedSandbox, "from_string", counting)
    monkeypatch.setattr(templating, "_compiled", {})
    return calls


@pytest.mark.parametrize("renders", [1, 50, 2100])
def test_each_template_is_compiled_once_however_many_renders(count_compiles, renders):
    sources = ["System: {{ task.name }}\n", "User: {% for e in item.emails %}{{ e }};{% endfor %}\n"]
    outs = set()
    for i in range(renders):
        for source in sources:
            outs.add(templating.render(source, {"task": {"name": f"t{i % 3}"}, "item": {"emails": [i, i + 1]}}))
    assert sorted(count_compiles) == sorted(sources)  # one compile per distinct text
    assert len(outs) == min(renders, 3) + renders  # every render used its own context


def test_the_demo_plans_prompts_compile_once_per_template(count_compiles):
    """The real path: render_messages over every item of every workload of the demo lock."""
    from lrc.runtime import items as item_gen
    from lrc.runtime.execute import load_verified, render_messages, resolve_seed

    plan = load_verified(REPO / "generated" / "demo" / "plan.lock")["plan"]
    items = item_gen.generate(plan, resolve_seed(plan, None))
    renders = 0
    templates = set()
    for wref, workload in plan["workloads"].items():
        for system, prompts in workload["prompts"].items():
            for model in plan["models"].values():
                for item in items[wref]:
                    messages = render_messages(workload, system, item, model)
                    renders += len(messages)
            templates.update(p["template"] for p in prompts.values())
    assert renders > 10 * len(templates)
    assert len(count_compiles) == len(set(count_compiles)) <= len(templates)


def test_a_cached_template_keeps_the_sandbox_and_its_limits(count_compiles):
    big = "{{ 'x' * n }}"
    assert templating.render(big, {"n": 3}) == "xxx"
    for _ in range(3):  # the cached template still refuses, every time
        with pytest.raises(templating.RenderTooLarge):
            templating.render(big, {"n": templating.MAX_RENDER_CHARS + 1})
    from jinja2.exceptions import SecurityError, UndefinedError

    escape = "{{ ''.__class__.__mro__ }}"
    for _ in range(2):
        with pytest.raises(SecurityError):
            templating.render(escape, {})
    with pytest.raises(UndefinedError):
        templating.render("{{ missing }}", {})
    assert len(count_compiles) == 3


@pytest.mark.parametrize("source,line", [("{% if %}", 1), ("ok\nok\n{{ x ", 3), ("a\n{% for x in y %}\nb\n", 3)])
def test_a_template_that_does_not_compile_is_reported_with_its_line_every_time(count_compiles, source, line):
    from jinja2 import TemplateSyntaxError

    for _ in range(3):
        with pytest.raises(TemplateSyntaxError) as err:
            templating.render(source, {"x": 1, "y": []})
        assert err.value.lineno == line
    assert len(count_compiles) == 3  # a failure is never cached as a template
    assert source not in templating._compiled


def test_the_cache_is_bounded(count_compiles, monkeypatch):
    monkeypatch.setattr(templating, "COMPILED_CACHE_SIZE", 8)
    for i in range(40):
        assert templating.render(f"{i}:{{{{ v }}}}", {"v": i}) == f"{i}:{i}"
    assert len(templating._compiled) <= 8


# -- the journal: group commit, off the loop, acknowledged means durable ------------------------

import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402

from lrc.runtime import journal as journal_module  # noqa: E402
from lrc.runtime.journal import Journal, JournalWriteError  # noqa: E402


def _rec(i: int, size: int = 200) -> dict:
    return {"type": "run", "run": f"w|m|s|item-{i:05d}|r1", "outcome": "answered", "pad": "x" * size}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("records,concurrency", [(50, 50), (400, 64), (300, 8)])
def test_concurrent_commits_share_fsyncs_made_off_the_event_loop(tmp_path, monkeypatch, records, concurrency):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path, "sha256:x", "e")
    fsync_threads: list[int] = []
    real_fsync = os.fsync

    def fsync(fd):
        fsync_threads.append(threading.get_ident())
        return real_fsync(fd)

    monkeypatch.setattr(journal_module.os, "fsync", fsync)

    async def main():
        loop_thread = threading.get_ident()
        sem = asyncio.Semaphore(concurrency)

        async def one(i):
            async with sem:
                await asyncio.sleep(0)
                await journal.commit(_rec(i))
                assert _rec(i)["run"] in journal.runs  # acknowledged => indexed

        await asyncio.gather(*(one(i) for i in range(records)))
        await journal.drain()
        return loop_thread

    loop_thread = asyncio.run(main())
    journal.close()
    assert len(journal.runs) == records
    assert len(fsync_threads) == journal.batches < records  # one fsync per batch, fewer than records
    assert loop_thread not in fsync_threads  # never inside the event loop
    assert sorted(r["run"] for r in _lines(path)[1:]) == sorted(_rec(i)["run"] for i in range(records))


def test_unawaited_records_are_written_in_queue_order_before_the_awaited_one(tmp_path):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path, "sha256:x", "e")

    async def main():
        for i in range(30):
            journal.submit({"type": "call", "run": f"r{i}", "step": 1, "n": i})  # queued, not awaited
            await journal.commit({"type": "run", "run": f"r{i}", "outcome": "answered", "n": i})
            assert (f"r{i}", 1) in journal.calls  # acknowledging the run acknowledged its call

    asyncio.run(main())
    journal.close()
    kinds = [(r["type"], r["run"]) for r in _lines(path)[1:]]
    assert kinds == [(k, f"r{i}") for i in range(30) for k in ("call", "run")]


_KILL_SCRIPT = r"""
import asyncio, sys
from pathlib import Path
from lrc.runtime.journal import Journal
journal = Journal(Path(sys.argv[1]), "sha256:x", "e")
async def one(i):
    await journal.commit({"type": "run", "run": f"run-{i:05d}", "outcome": "answered", "pad": "y" * int(sys.argv[2])})
    print(i, flush=True)  # acknowledged: reported only after its fsync
async def main():
    sem = asyncio.Semaphore(64)
    async def bounded(i):
        async with sem:
            await one(i)
    await asyncio.gather(*(bounded(i) for i in range(100000)))
asyncio.run(main())
"""


# A kill after the first record, mid-run among long lines (default), and late among short lines.
@pytest.mark.parametrize("kill_after,pad", [pytest.param(1, 100, marks=pytest.mark.slow), (150, 3000),
                                           pytest.param(700, 50, marks=pytest.mark.slow)])
def test_a_kill_during_group_commits_keeps_every_acknowledged_record(tmp_path, kill_after, pad):
    """SIGKILL while batches are in flight: every record acknowledged before the kill is in
    the journal, the journal loads (a torn line is cut), and what is there is whole lines."""
    path = tmp_path / "journal.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", _KILL_SCRIPT, str(path), str(pad)], stdout=subprocess.PIPE, text=True)
    acked: list[str] = []
    for line in proc.stdout:
        acked.append(f"run-{int(line):05d}")
        if len(acked) >= kill_after:
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=60)
    rest = proc.stdout.read()
    acked += [f"run-{int(x):05d}" for x in rest.split()]
    journal = Journal(path, "sha256:x", "e")
    journal.close()
    assert set(acked) <= set(journal.runs)  # acknowledged => survived
    assert all(r.startswith("run-") for r in journal.runs)


def _failing_os(after: int, errno_name: str = "ENOSPC"):
    """`os` whose write fails (after a torn half) once `after` writes have succeeded."""
    import errno
    import types

    budget = {"left": after}
    fake = types.SimpleNamespace(**{k: getattr(os, k) for k in dir(os) if not k.startswith("__")})

    def write(fd, data):
        if budget["left"] <= 0:
            os.write(fd, bytes(data)[: max(1, len(data) // 2)])
            code = getattr(errno, errno_name)
            raise OSError(code, os.strerror(code))
        budget["left"] -= 1
        return os.write(fd, data)

    fake.write = write
    return fake


@pytest.mark.parametrize("after", [0, 1, 7, 40])
def test_disk_full_in_the_middle_of_a_batch_writes_nothing_half_and_fails_the_rest(tmp_path, monkeypatch, after):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path, "sha256:x", "e")
    monkeypatch.setattr(journal_module, "os", _failing_os(after))

    async def main():
        acks = [journal.submit(_rec(i)) for i in range(60)]  # one batch of 60, a failure inside it
        results = await asyncio.gather(*acks, return_exceptions=True)
        with pytest.raises(JournalWriteError):  # broken for the rest of this process
            journal.submit(_rec(999))
        return results

    results = asyncio.run(main())
    monkeypatch.undo()
    journal.close()
    ok = [i for i, r in enumerate(results) if r is None]
    failed = [r for r in results if r is not None]
    assert all(isinstance(r, JournalWriteError) and "No space left" in str(r) for r in failed)
    assert ok == list(range(len(ok))) and len(ok) <= after and len(failed) >= 60 - after
    data = path.read_bytes()
    assert data.endswith(b"\n")  # no half line
    on_disk = [r["run"] for r in _lines(path)[1:]]
    assert on_disk == [_rec(i)["run"] for i in range(after)]  # exactly the whole lines written
    assert set(journal.runs) == {_rec(i)["run"] for i in ok}
    again = Journal(path, "sha256:x", "e")  # resumes from there
    assert not again.truncated_tail and set(again.runs) >= set(journal.runs)
    again.close()


def test_the_synchronous_append_still_fsyncs_each_record(tmp_path, monkeypatch):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path, "sha256:x", "e")
    count = []
    real = os.fsync
    monkeypatch.setattr(journal_module.os, "fsync", lambda fd: (count.append(fd), real(fd)))
    for i in range(5):
        journal.append(_rec(i))
    journal.close()
    assert len(count) == 5 and len(journal.runs) == 5


# -- the provider's latency and the slot wait, apart ------------------------------------------

class _FakeLitellm:
    """A provider answering after `latency` seconds (no network): only what complete() reads."""

    def __init__(self, latency: float):
        self.latency = latency

    async def acompletion(self, **kwargs):
        from types import SimpleNamespace as NS

        await asyncio.sleep(self.latency)
        return NS(choices=[NS(message=NS(content="ok", tool_calls=None, refusal=None), finish_reason="stop")],
                  usage={"prompt_tokens": 3, "completion_tokens": 1}, model="fake-1")


@pytest.mark.parametrize("limit,calls,latency", [(1, 4, 0.15), (2, 6, 0.15), (4, 4, 0.1)])
def test_latency_is_the_providers_and_the_slot_wait_is_recorded_apart(monkeypatch, limit, calls, latency):
    from lrc.runtime.models import adapter, infra

    monkeypatch.setattr(adapter, "_litellm", _FakeLitellm(latency))
    stats = infra.InfraStats()
    from lrc.runtime.operate import ModelEndpoint

    lane = infra.ModelLane("openai/fake", {}, infra.InfraSettings(), stats, endpoint=ModelEndpoint(max_concurrency=limit))
    model = {"id": "openai/fake", "price": {"input": "1", "output": "1"}}

    async def main():
        return await asyncio.gather(*(adapter.complete(model, [{"role": "user", "content": "x"}], None, 30, lane)
                                      for _ in range(calls)))

    results = asyncio.run(main())
    for r in results:
        assert latency * 1000 * 0.9 <= r.latency_ms < latency * 1000 + 400  # the provider's time only
    waits = sorted(r.queue_ms for r in results)
    waves = math.ceil(calls / limit)
    assert waits[:limit] == [pytest.approx(0, abs=100)] * limit  # the first wave never waited
    if waves > 1:
        assert waits[-1] >= (waves - 1) * latency * 1000 * 0.9  # the last wave waited for the others


import math  # noqa: E402


# -- no litellm where no call is made -------------------------------------------------------------

_NO_LITELLM = r"""
import sys
from lrc.compiler.cli import main
code = main(sys.argv[1:])
heavy = sorted(m for m in ("litellm", "openai", "aiohttp") if m in sys.modules)
print("IMPORTED:" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


from helpers.project import run_lrc  # noqa: E402


def _lrc_checked(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, list[str]]:
    res = subprocess.run([sys.executable, "-c", _NO_LITELLM, *map(str, args)], cwd=REPO, capture_output=True, text=True,
                         timeout=600, env=env if env is not None else {**os.environ, "PYTHONHASHSEED": "random"})
    imported = [line.split(":", 1)[1] for line in res.stderr.splitlines() if line.startswith("IMPORTED:")]
    assert imported, res.stderr[-3000:]
    return res, [m for m in imported[-1].split(",") if m]


@pytest.fixture(scope="module")
def finished(small_demo_run, tmp_path_factory) -> tuple[str, Path]:
    """(lock, a copy of a finished run folder): the small demo (every workload, system and
    model, conftest.py `small_demo_run`) run once to the end; this module changes its copy."""
    lock, done, res = small_demo_run
    assert res.returncode == 0, res.stderr[-3000:]
    out = tmp_path_factory.mktemp("demo") / "out"
    shutil.copytree(done, out)
    (out / ".lrc-execute.lock").unlink(missing_ok=True)
    calls = [r for r in _lines(out / "journal.jsonl")[1:] if r["type"] == "call"]
    assert calls and all(isinstance(c["queue_ms"], int) and isinstance(c["latency_ms"], int) for c in calls)
    # The stamp names the folder it was written for, so a copy is another folder: one report
    # stamps this copy, and "stamp kept" below is the path with nothing to rebuild whatever runs first.
    res = run_lrc("report", str(lock), "--out", out)
    assert res.returncode == 0, res.stderr[-3000:]
    return str(lock), out


def _outputs(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != "journal.jsonl" and not p.name.startswith(".")}


@pytest.mark.parametrize("stamp", ["kept", "removed"])
@pytest.mark.parametrize("command", ["execute", "report"])
def test_report_and_a_resume_with_nothing_to_do_never_import_litellm(finished, command, stamp):
    lock, finished_demo = finished
    before = _outputs(finished_demo)
    if stamp == "removed":  # no record of the outputs: they are rebuilt from the journal, still without litellm
        (finished_demo / ".lrc-outputs.json").unlink(missing_ok=True)
    stamped = (finished_demo / ".lrc-outputs.json").stat() if stamp == "kept" else None
    args = [command, lock, "--out", str(finished_demo)] + (["--no-progress"] if command == "execute" else [])
    res, imported = _lrc_checked(*args)
    assert res.returncode == 0, res.stderr[-3000:]
    assert imported == []
    assert "Rate card" in res.stdout or "rate card" in res.stdout.lower()
    assert _outputs(finished_demo) == before  # the same bytes either way
    assert (finished_demo / ".lrc-outputs.json").is_file()
    if stamped is not None:  # nothing rebuilt (a rebuild writes a new stamp, even over the same bytes)
        now = (finished_demo / ".lrc-outputs.json").stat()
        assert (now.st_ino, now.st_mtime_ns) == (stamped.st_ino, stamped.st_mtime_ns)


def test_a_rebuilt_report_of_a_real_model_imports_no_litellm_once_its_forecast_is_remembered(stub, tmp_path):
    """A report that rebuilds a real model's folder needs litellm only to count the forecast's
    tokens; the execute that made the folder remembered that forecast (lrc.runtime.forecast_memo),
    so the rebuild imports none -- and with the memo off it counts, and writes the same bytes."""
    from helpers.project import build_project, lrc_env

    lock = build_project(tmp_path / "project", stub.api_base, n_per_cell=2)
    cache = tmp_path / "user-cache"
    env = lrc_env("sk-test-forecast", XDG_CACHE_HOME=str(cache), LRC_CACHE_KEY_FILE=str(cache / "lrc" / "cache.key"))
    env.pop("LRC_NO_CACHE", None)
    out = tmp_path / "out"
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert list((cache / "lrc" / "forecasts").glob("*.bin"))  # the execute remembered its forecast
    written = _outputs(out)
    (out / ".lrc-outputs.json").unlink()
    res, imported = _lrc_checked("report", lock, "--out", out, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "litellm" not in imported, imported
    assert _outputs(out) == written
    # With the memo off the report counts the tokens itself (litellm's counter) and writes the
    # same bytes. A forked command (helpers.zygote): a fresh interpreter that imports litellm to
    # count cost ~5 s of CPU, and that it imports litellm is not what this test is about.
    (out / ".lrc-outputs.json").unlink()
    res = run_lrc("report", lock, "--out", out, env={**env, "LRC_NO_CACHE": "1"})
    assert res.returncode == 0, res.stderr[-3000:]
    assert _outputs(out) == written


# An output edited and the journal grown by default; an output deleted and the journal touched under --slow.
@pytest.mark.parametrize("change", [pytest.param("cells.csv deleted", marks=pytest.mark.slow), "rate card edited",
                                    pytest.param("journal touched", marks=pytest.mark.slow), "journal line appended"])
def test_outputs_are_rebuilt_when_the_journal_or_an_output_changed(finished, change, tmp_path):
    lock, finished_demo = finished
    out = tmp_path / "out"
    shutil.copytree(finished_demo, out)
    # a copy is another folder: the first report rebuilds, and stamps it. (Forked commands: that
    # a rebuild imports no litellm is the test above, "stamp removed".)
    res = run_lrc("report", lock, "--out", out)
    assert res.returncode == 0, res.stderr[-2000:]
    expected = _outputs(out)
    journal = out / "journal.jsonl"
    if change == "cells.csv deleted":
        (out / "cells.csv").unlink()
    elif change == "rate card edited":
        (out / "rate-card.md").write_text("tampered\n", encoding="utf-8")
    elif change == "journal touched":
        os.utime(journal, ns=(1, 1))
    else:  # a duplicate of a finished run's record: the same results, but a different journal
        last = [line for line in journal.read_text(encoding="utf-8").splitlines() if '"type":"run"' in line][-1]
        with open(journal, "a", encoding="utf-8") as fh:
            fh.write(last + "\n")
    res = run_lrc("report", lock, "--out", out)
    assert res.returncode == 0, res.stderr[-2000:]
    assert _outputs(out) == expected  # rebuilt, identical


# -- the benchmark script ---------------------------------------------------------------------------

@pytest.mark.slow
def test_the_throughput_benchmark_runs_in_quick_mode(tmp_path):
    res = subprocess.run([sys.executable, str(REPO / "benchmarks" / "throughput.py"), "--quick", "--runs", "64",
                          "--journals", "200", "--keep", str(tmp_path / "work")],
                         cwd=REPO, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    out = res.stdout
    assert "lrc execute: wall" in out and "ms per run after imports" in out and "queue wait median" in out
    assert "resume with nothing to do" in out and "report" in out
    figures = json.loads(out.split("json: ", 1)[1])
    assert len(figures["lrc"]["wall"]) == 1 and figures["journal_200"]["runs"] >= 200
