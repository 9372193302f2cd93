"""`lrc` commands for the tests as forked processes of a warm interpreter (a zygote).

Why: most CLI tests run `lrc execute` / `lrc report` as a real subprocess, and each of those
spends ~2.7 s of CPU importing litellm (its pydantic models) before doing a few hundred
milliseconds of work; on a 2-core machine that import was about a third of the default
suite. A zygote imports lrc, litellm (offline, exactly as `load_litellm` does) and polars
once per test session (the xdist controller starts it and the workers share it: `start_shared`;
a worker that cannot reach it warms its own), then forks one child per command. The child is still a separate
process with the semantics the tests rely on: its own pid, working directory, environment,
stdin (/dev/null), stdout and stderr (files, read back as text), exit code, and a timeout
that kills it — and it starts from the zygote's pristine state, so nothing one command does
(module state, caches, environment) reaches the next.

What a fork cannot reproduce goes to a plain subprocess instead (`run` falls back by itself):
an environment that differs from the zygote's in anything read at interpreter start-up
(`PYTHON*`, locale and time-zone variables), and a zygote that is busy or gone. Tests that
are about start-up itself (what is imported, the installed script, signals to a running
execute) call `subprocess` directly, as before.

The zygote forks only from its main thread and holds no thread, event loop or open client
when it forks (checked when it starts).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

_STARTUP_PREFIXES = ("PYTHON", "LC_", "LANG", "TZ")
_ENV_DISABLE = "LRC_TEST_NO_ZYGOTE"  # set to 1 to run every command as a plain subprocess
_ENV_CMDLOG = "LRC_TEST_CMDLOG"  # a file: every command's wall time is appended to it (`_log_command`)
ENV_NO_FREEZE = "LRC_TEST_NO_FREEZE"  # set: neither the zygote nor a test worker freezes its heap (to measure what it saves)


def _startup_env(env: dict[str, str]) -> dict[str, str]:
    """What an interpreter reads of `env` when it starts. `PYTHONHASHSEED=random` is dropped:
    Python treats it exactly as no PYTHONHASHSEED (a random hash secret), so the runners that
    set it (helpers/project.py `lrc_env`) and those that inherit none (tests/support.py) share
    one zygote per worker instead of warming two (~5 s of CPU each). A forked child keeps its
    zygote's hash secret either way; a test about hash seeds runs fresh interpreters, each with
    its own (tests/support.py `outputs_across_environments`)."""
    return {k: v for k, v in env.items()
            if k.startswith(_STARTUP_PREFIXES) and not (k == "PYTHONHASHSEED" and v == "random")}


# -- the zygote process ------------------------------------------------------------------------

def _child(request: dict[str, Any]) -> None:
    """In the forked child: become the command's process, run it, exit with its code."""
    code = 70
    try:
        os.setpgrp()  # a timeout kills the command and anything it started
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        out = os.open(request["stdout"], os.O_WRONLY | os.O_TRUNC)
        err = os.open(request["stderr"], os.O_WRONLY | os.O_TRUNC)
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [sys.argv[0], *request["args"]]
        from lrc.compiler import cli

        if request.get("preamble"):  # the test's monkeypatch, as `python -c PREAMBLE+main()` would run it
            exec(compile(request["preamble"], "<preamble>", "exec"), {"__name__": "__lrc_preamble__"})
        try:
            code = cli.main(list(request["args"]))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported like an interpreter would, then exit
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code if isinstance(code, int) else 1)


def _kill(pid: int) -> None:
    """Kill a timed-out command: its group, and the child itself if it had no group yet; reap it."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    os.waitpid(pid, 0)


def _wait(pid: int, timeout: float) -> int | None:
    """The child's exit status (as subprocess reports it), or None after `timeout` (it is then killed)."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:  # a kernel without pidfds: poll
        return _poll(pid, timeout)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            _kill(pid)
            return None
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _poll(pid: int, timeout: float) -> int | None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.005)
    _kill(pid)
    return None


def _warm_lazy_imports() -> None:
    """Import every runtime and compiler module, and draw one chart, before the first fork.

    The runtime imports its heavy libraries where they are used (matplotlib for the page's
    charts, reportlab and pypdf for PDFs, openpyxl and formulas for tasks, tiktoken for the
    forecast), so `lrc compile` and a resume stay light. In a forked command that deferral is
    paid again by every child: ~0.3 s of matplotlib alone in each of the ~180 executes and
    reports of a run of the suite. Imported and warmed once here (no thread is started: checked
    below), every child starts with them. A child still starts from the zygote's state, and the
    byte-identity tests (`test_html_report`, `test_trend`) compare its output with a fresh
    interpreter's."""
    import importlib
    import pkgutil

    import lrc.compiler
    import lrc.runtime

    for package in (lrc.runtime, lrc.compiler):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(module.name)
    # ... and what those import on first use, not at their own import: jsonschema (the compiler's
    # schema checks), formulas' function modules (a workbook's recalculation) and python-pptx
    # (a deck task's items): together ~0.1-0.2 s in each child that needs them, by a sampling
    # profile of the suite.
    import formulas.functions
    import jsonschema  # noqa: F401
    import pptx  # noqa: F401

    for module in pkgutil.iter_modules(formulas.functions.__path__, "formulas.functions."):
        importlib.import_module(module.name)
    from lrc.runtime.report import charts

    point = {"model": "warm/up", "check": False, "pass_rate": 0.5, "wilson_low": 0.2, "wilson_high": 0.8,
             "cpo": 0.01, "cpo_low": 0.005, "cpo_high": 0.02}
    charts.pareto_svg("zygote-warm-up", "warm-up", [{"system": "single-shot", "points": [point]}], "", 0.8)


def _warm_first_call() -> None:
    """One call of the reference model `lrc/null` through litellm, as `adapter.complete` makes it,
    in an event loop of its own that is closed (its executor's threads joined) before the first fork.

    litellm defers work to a process's first call: for a custom provider it loads its default
    tokenizer (tiktoken's cl100k, ~0.09 s: every custom call is handed one), it imports its proxy's
    file-id helpers (~0.06 s) and pydantic builds the schemas of its response models on first use.
    Without this every forked execute of a reference-model plan paid all of it again: by a
    sampling profile of the default suite, ~16 s of CPU over ~150 forked commands. Only the
    reference provider is called: litellm caches a provider's HTTP client, bound to the loop
    that made it, and no such client may reach a child."""
    import asyncio

    from lrc.runtime.models import adapter

    litellm = adapter.load_litellm()

    async def call() -> None:
        await litellm.acompletion(model="lrc/null", messages=[{"role": "user", "content": "warm-up"}],
                                  num_retries=0, max_retries=0, timeout=30)

    asyncio.run(call())


def serve(shared_socket: str | None = None) -> None:
    """The zygote's loop: one JSON request per line on stdin, one JSON reply per line on stdout.

    With `shared_socket` (a path) the zygote is the test session's, started by the xdist
    controller (`start_shared`): it listens there from its first instruction (a worker that
    connects during the warm-up waits in the backlog), and forks one server per connected
    worker after the warm-up; each serves its worker exactly as a private zygote does. One
    warm-up per session instead of one per worker (~5 s of CPU each), done while the workers
    collect."""
    listener = None
    if shared_socket is not None:
        import socket

        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(shared_socket)
        listener.listen(64)
    from lrc.compiler import cli  # noqa: F401 - warm: the CLI and everything execute/report import
    from lrc.runtime import execute, items, journal  # noqa: F401
    from lrc.runtime.models import adapter
    from lrc.runtime.report import outputs  # noqa: F401

    adapter.load_litellm()
    import polars  # noqa: F401

    _warm_lazy_imports()
    _warm_first_call()

    # The running code's fingerprints, computed once: every execute, report and render verifies
    # the lock against them (~1 s of parsing per fresh process). codeprint's memo is keyed by
    # each file's path, size and mtime, so a file a test changes is parsed again in its child.
    from lrc.runtime.lock import codeprint

    with codeprint.batch():
        for component in codeprint.discover().values():
            codeprint.fingerprint(component)

    # Every object the warm-up made (~480,000: litellm's and pydantic's models, polars, matplotlib)
    # moves to the permanent generation: a child's collections scan only what the command itself
    # allocates. Without it each full collection in a child walked the whole warm heap -- ~20% of a
    # small execute's time (the cost showed up inside whatever was allocating, e.g. matplotlib's
    # transforms). What is collectable, and when, is unchanged for the command's own objects.
    import gc

    if not os.environ.get(ENV_NO_FREEZE):
        gc.freeze()
    if threading.active_count() != 1:  # forking with another thread alive could copy a held lock
        raise SystemExit(f"zygote: {threading.active_count()} threads after warm-up; refusing to fork")
    if listener is None:
        _serve_requests(sys.stdin, os.fdopen(os.dup(1), "w", encoding="utf-8"))
        return
    while True:  # the shared zygote: one forked server per worker, until the controller stops it
        ready, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in ready and not sys.stdin.buffer.read1(1):  # the controller is gone (its pipe closed)
            os._exit(0)
        if listener not in ready:
            continue
        connection, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            try:
                _serve_requests(connection.makefile("r", encoding="utf-8"), connection.makefile("w", encoding="utf-8"),
                                connection)
            finally:
                os._exit(0)
        connection.close()
        while True:  # reap the servers of workers that have gone
            try:
                done, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if not done:
                break


def _serve_requests(requests, replies, connection=None) -> None:
    """Fork one command per request line, reply with its exit status, until the requests end."""
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            replies.close()
            if connection is not None:  # the command holds no end of its worker's connection
                requests.close()
                connection.close()
            _child(request)
        code = _wait(pid, float(request["timeout"]))
        replies.write(json.dumps({"returncode": code}) + "\n")
        replies.flush()


# -- the client (the test worker) -------------------------------------------------------------

class Zygote:
    """One zygote per test worker, started on first use, stopped when the worker exits; or this
    worker's server of the session's shared zygote (`connect`)."""

    def __init__(self, env: dict[str, str], connection: Any = None):
        self.env = dict(env)
        self.lock = threading.Lock()
        self.connection = connection
        if connection is None:
            here = Path(__file__).resolve().parents[1]
            self.proc = subprocess.Popen([sys.executable, "-c", "from helpers.zygote import serve; serve()"],
                                         cwd=here, env={**self.env, "PYTHONPATH": str(here)}, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, bufsize=1)
            self.requests, self.replies = self.proc.stdin, self.proc.stdout
        else:
            self.proc = None
            self.requests = connection.makefile("w", encoding="utf-8")
            self.replies = connection.makefile("r", encoding="utf-8")
        self.broken = False
        self.tmp = Path(tempfile.mkdtemp(prefix="lrc-zygote-"))

    @classmethod
    def connect(cls, shared: dict[str, Any]) -> "Zygote | None":
        """This worker's server of the shared zygote described by `shared` (`start_shared`), or None."""
        import socket

        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.connect(shared["socket"])
        except OSError:
            connection.close()
            return None
        return cls(shared["startup"], connection)

    def alive(self) -> bool:
        return not self.broken and (self.proc is None or self.proc.poll() is None)

    def usable(self, env: dict[str, str]) -> bool:
        return self.alive() and _startup_env(env) == _startup_env(self.env)

    def run(self, args: list[str], env: dict[str, str], cwd: Path, timeout: float,
            preamble: str | None = None) -> subprocess.CompletedProcess | None:
        """The command's CompletedProcess, or None when it must run as a plain subprocess."""
        if not self.usable(env) or not self.lock.acquire(blocking=False):
            return None
        try:
            out, err = self.tmp / "stdout", self.tmp / "stderr"
            out.write_bytes(b"")
            err.write_bytes(b"")
            request = {"args": [str(a) for a in args], "env": env, "cwd": str(cwd), "timeout": timeout,
                       "stdout": str(out), "stderr": str(err), "preamble": preamble}
            try:
                self.requests.write(json.dumps(request) + "\n")
                self.requests.flush()
                reply = self.replies.readline()
            except (BrokenPipeError, OSError):
                self.broken = True
                return None
            if not reply:
                self.broken = True
                return None
            code = json.loads(reply)["returncode"]
            stdout = out.read_bytes().decode("utf-8", "replace")
            stderr = err.read_bytes().decode("utf-8", "replace")
            argv = [sys.executable, "-m", "lrc.compiler.cli", *map(str, args)]
            if code is None:
                raise subprocess.TimeoutExpired(argv, timeout, output=stdout, stderr=stderr)
            return subprocess.CompletedProcess(argv, code, stdout, stderr)
        finally:
            self.lock.release()

    def close(self) -> None:
        if self.connection is not None:  # this worker's server ends when its connection does
            for end in (self.requests, self.replies, self.connection):
                end.close()
        elif self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        for f in self.tmp.iterdir():
            f.unlink()
        self.tmp.rmdir()


_ZYGOTES: dict[tuple, Zygote] = {}
MAX_ZYGOTES = 2  # per worker: the runners' start-up environment (one, see `_startup_env`) and one other a test may use


_MAIN = "\nimport sys\nfrom lrc.compiler.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def run(args: list[str], env: dict[str, str], cwd: Path, timeout: float,
        preamble: str | None = None) -> subprocess.CompletedProcess:
    """`lrc ARGS` in a fork of a warm zygote started with the same start-up environment, else as
    a plain subprocess (same result type, same timeout behaviour). `preamble` is Python run in
    the command's process before the CLI starts (a test's monkeypatch of runtime code): the
    plain subprocess is then `python -c PREAMBLE + main()`."""
    started = time.perf_counter()
    try:
        return _run(args, env, cwd, timeout, preamble)
    finally:
        _log_command(args, time.perf_counter() - started)


def _log_command(args: list[str], seconds: float) -> None:
    """With LRC_TEST_CMDLOG=FILE in the suite's environment, one JSON line per command: its first
    arguments, its wall time and the test that ran it -- where the suite's time goes, by command
    and by test (`python3 dev.py test` with it set, then sum the lines)."""
    path = os.environ.get(_ENV_CMDLOG)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"args": [str(a) for a in args][:3], "seconds": round(seconds, 3),
                                 "test": os.environ.get("PYTEST_CURRENT_TEST")}) + "\n")


def _run(args: list[str], env: dict[str, str], cwd: Path, timeout: float,
         preamble: str | None) -> subprocess.CompletedProcess:
    if os.environ.get(_ENV_DISABLE) != "1" and hasattr(os, "fork") and hasattr(os, "pidfd_open"):
        key = tuple(sorted(_startup_env(env).items()))
        zygote = _ZYGOTES.get(key)
        if (zygote is None or not zygote.alive()) and (key in _ZYGOTES or len(_ZYGOTES) < MAX_ZYGOTES):
            import atexit

            shared = _shared()
            zygote = Zygote.connect(shared) if shared is not None and key not in _ZYGOTES and \
                _startup_env(shared["startup"]) == dict(key) else None
            zygote = _ZYGOTES[key] = zygote or Zygote(env)
            atexit.register(zygote.close)
        if zygote is not None:
            done = zygote.run(args, env, cwd, timeout, preamble)
            if done is not None:
                return done
    start = ["-c", preamble + _MAIN] if preamble else ["-m", "lrc.compiler.cli"]
    return subprocess.run([sys.executable, *start, *map(str, args)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


# -- the session's shared zygote (started by the xdist controller) ------------------------------

_ENV_SHARED = "LRC_TEST_SHARED_ZYGOTE"  # set by `start_shared` for the workers: JSON {socket, startup}
_ENV_NO_SHARED = "LRC_TEST_NO_SHARED_ZYGOTE"  # set to 1: each worker warms a zygote of its own


def _shared() -> dict[str, Any] | None:
    raw = os.environ.get(_ENV_SHARED)
    return json.loads(raw) if raw else None


class SharedZygote(NamedTuple):
    """The session's zygote process and the private folder holding its socket."""
    proc: subprocess.Popen
    folder: Path


def start_shared() -> SharedZygote | None:
    """Start the session's zygote in the xdist controller, before its workers exist, and tell
    them where it listens (an environment variable they inherit). A worker connects on its first
    command whose start-up environment is the controller's; a worker that cannot connect, or
    whose shared server dies, warms a zygote of its own as before. `stop_shared` ends it."""
    if os.environ.get(_ENV_DISABLE) == "1" or os.environ.get(_ENV_NO_SHARED) == "1" or not hasattr(os, "fork") \
            or not hasattr(os, "pidfd_open"):
        return None
    folder = Path(tempfile.mkdtemp(prefix="lrc-zygote-shared-"))
    path = folder / "socket"
    here = Path(__file__).resolve().parents[1]
    env = dict(os.environ)
    proc = subprocess.Popen([sys.executable, "-c", f"from helpers.zygote import serve; serve({str(path)!r})"],
                            cwd=here, env={**env, "PYTHONPATH": str(here)}, stdin=subprocess.PIPE,
                            start_new_session=True)  # its stdin is a lifeline: it ends when this process does
    deadline = time.monotonic() + 30
    while not path.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)  # it binds before it imports anything: milliseconds
    shared = SharedZygote(proc, folder)
    if not path.exists():
        stop_shared(shared)
        return None
    os.environ[_ENV_SHARED] = json.dumps({"socket": str(path), "startup": _startup_env(env)})
    return shared


def stop_shared(shared: SharedZygote | None) -> None:
    """Stop the shared zygote and the servers it forked (one session: its process group)."""
    if shared is None:
        return
    os.environ.pop(_ENV_SHARED, None)
    try:
        os.killpg(shared.proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    shared.proc.wait()
    shared.proc.stdin.close()
    shutil.rmtree(shared.folder, ignore_errors=True)
