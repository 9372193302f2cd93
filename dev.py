#!/usr/bin/env python3
"""The two commands a newcomer runs on a fresh machine (python3 and git, nothing else).

    python3 dev.py demo          # set up, compile the demo edition, execute it, print the rate card
    python3 dev.py test [ARGS]   # set up, run the test suite on parallel workers, without the slow tests
    python3 dev.py test --slow   # only the tests marked slow (fuzz, property and benchmark-sized cases)
    python3 dev.py test --all    # every test
    python3 dev.py setup         # set up only

Set-up creates .venv/ and installs exactly the hash-locked dependencies of
requirements.lock (pip --require-hashes), then lrc itself in editable mode, printing one
line per stage with its time; pip's own output is shown only when it fails. Where chromium
is missing it is installed with apt-get (optional: it never fails set-up; without it the
browser check of report.html skips). It is redone
only when requirements.lock, pyproject.toml or setup.py change. ARGS go to pytest; `-n 0`
runs the tests in one process, `-m EXPR` replaces the slow-marker selection.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
STAMP = VENV / ".lrc-install-stamp"
INPUTS = ("requirements.lock", "pyproject.toml", "setup.py")


def _say(msg: str) -> None:
    print(f"[dev] {msg}", flush=True)


def _run(cmd: list[str], **kw) -> int:
    """Run `cmd` in the foreground and return its exit code. Ctrl-C reaches the command too (it is
    in this terminal's process group), so it is waited for, not killed: `lrc execute` stops its
    own way (the calls in flight are journaled, it says how to resume). A second Ctrl-C kills it."""
    proc = subprocess.Popen([str(c) for c in cmd], cwd=ROOT, **kw)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            proc.kill()
            proc.wait()
            return 130


class _Stage:
    """`with _Stage("doing x"):` prints `[dev] doing x … 4.2 s` (one line per stage)."""

    def __init__(self, what: str):
        self.what = what

    def __enter__(self) -> "_Stage":
        self.start = time.monotonic()
        print(f"[dev] {self.what} … ", end="", flush=True)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            print(f"{time.monotonic() - self.start:.1f} s", flush=True)
        elif not isinstance(exc, _StageFailed):
            print("failed", flush=True)


class _StageFailed(SystemExit):
    """A stage's command failed; its output is already printed below the stage's line."""


def _quiet(cmd: list[str], failure: str) -> None:
    """Run `cmd` with its output captured; show the output and stop only if it fails."""
    done = subprocess.run([str(c) for c in cmd], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    if done.returncode:
        print(f"failed (exit {done.returncode}); its output:", flush=True)
        sys.stdout.write(done.stdout)
        raise _StageFailed(f"{failure} (see the output above)")


def setup() -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"lrc needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    wanted = hashlib.sha256(b"".join((ROOT / f).read_bytes() for f in INPUTS)).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == wanted and PY.exists():
        return
    if not PY.exists():
        with _Stage("creating .venv"):
            venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    pip = [PY, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
    # --no-deps: the lock already holds every transitive pin (uv resolved them). Letting pip
    # resolve again is how it broke: litellm asks for httpx[http2], pip treats the extra as a
    # new requirement, looks past the pin to the newest httpx on the index and refuses it as
    # unpinned. `pip check` then proves the pinned set is consistent.
    with _Stage("installing hash-locked dependencies (requirements.lock)"):
        _quiet([*pip, "--require-hashes", "--no-deps", "-r", "requirements.lock"], "dependency installation failed")
        _quiet([PY, "-m", "pip", "check"], "requirements.lock is not a consistent set (pip check)")
    with _Stage("installing lrc (editable)"):
        _quiet([*pip, "--no-deps", "--no-build-isolation", "-e", "."], "installing lrc failed")
    STAMP.write_text(wanted + "\n")


def browser() -> None:
    """Optional: Debian's `chromium`, for the test that renders OUT/report.html in a real browser
    (tests/test_html_report.py). Installed with apt-get when absent and this is root on a Debian
    or Ubuntu machine; it never fails set-up -- otherwise one line says why, and that test skips."""
    import shutil

    if any(shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")):
        return
    if shutil.which("apt-get") is None:
        _say("no chromium, and no apt-get to install it: the browser check of report.html will be skipped")
        return
    if os.geteuid() != 0:
        _say("no chromium, and not root to `apt-get install chromium`: the browser check of report.html will be skipped")
        return
    start = time.monotonic()
    print("[dev] installing chromium (optional: the browser check of report.html) … ", end="", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]
    done = None
    for cmd in (install, ["apt-get", "update", "-q"], install):  # the package lists may be missing: update once
        done = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        if done.returncode == 0 and cmd is install:
            print(f"{time.monotonic() - start:.1f} s", flush=True)
            return
    tail = (done.stdout.strip().splitlines() or ["no output"])[-1]
    print(f"skipped: `{' '.join(install)}` failed ({tail.strip()}); the browser check of report.html will be skipped", flush=True)


def byte_compile() -> None:
    """Write lrc's own bytecode (__pycache__/, gitignored). pip does this for what it installs,
    but not for an editable install's source tree, and where PYTHONDONTWRITEBYTECODE is set
    (as on CI machines) nothing else ever does: every `lrc` run would compile its ~100 modules
    from source. Stale files are rewritten; up-to-date ones cost a stat each."""
    with _Stage("byte-compiling lrc"):
        _run([PY, "-m", "compileall", "-q", "compiler", "runtime"], stdout=subprocess.DEVNULL)


def demo() -> int:
    lrc = BIN / "lrc"
    _say("lrc compile  (specs/ -> generated/demo/plan.lock)")
    if rc := _run([lrc, "compile"]):
        return rc
    lock = ROOT / "generated" / "demo" / "plan.lock"
    import json

    digest = json.loads(lock.read_text())["root_digest"].split(":")[1][:12]
    out = ROOT / "runs" / f"demo-{digest}"
    _say(f"lrc execute generated/demo/plan.lock --out {out.relative_to(ROOT)}")
    return _run([lrc, "execute", lock, "--out", out])


def pytest_args(extra: list[str]) -> list[str]:
    """pytest's arguments for `dev.py test [--slow|--all] [ARGS]`: parallel workers unless ARGS
    choose (-n, -p no:xdist), and the slow-marker selection unless ARGS give their own -m."""
    args = list(extra)
    selection = ["-m", "not slow"]
    if "--slow" in args:
        args.remove("--slow")
        selection = ["-m", "slow"]
    if "--all" in args:
        args.remove("--all")
        selection = []
    if any(a == "-m" or a.startswith("-m") and not a.startswith("--") for a in args):
        selection = []
    workers = [] if any(a in ("-n", "--numprocesses", "no:xdist") or a.startswith(("-n", "--numprocesses=")) for a in args) else ["-n", "auto"]
    return ["-q", *workers, *selection, *args]


def test_basetemp(extra: list[str]) -> list[str]:
    """`--basetemp` in RAM (/dev/shm) when the machine has it and ARGS do not choose: the suite
    writes ~1.3 GB of throw-away projects and run folders, and every lock, journal commit and
    item it writes is fsync'd -- on a disk that is seconds of waiting per test worker, on tmpfs
    none. The folder is this checkout's own (pytest empties it at the start of every run) and is
    removed after a green run."""
    shm = Path("/dev/shm")
    if any(a == "--basetemp" or a.startswith("--basetemp=") for a in extra) or not (shm.is_dir() and os.access(shm, os.W_OK)):
        return []
    return [f"--basetemp={shm / ('pytest-of-lrc-' + hashlib.sha256(str(ROOT).encode()).hexdigest()[:12])}"]


def test(extra: list[str]) -> int:
    basetemp = test_basetemp(extra)
    rc = _run([PY, "-m", "pytest", *pytest_args(extra), *basetemp])
    if rc == 0 and basetemp:
        import shutil

        shutil.rmtree(basetemp[0].split("=", 1)[1], ignore_errors=True)
    return rc


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("demo", "test", "setup"):
        print(__doc__)
        return 2
    start = time.monotonic()
    setup()
    browser()
    byte_compile()
    if argv[0] == "demo":
        rc = demo()
    elif argv[0] == "test":
        rc = test(argv[1:])
    else:
        return 0
    _say(f"{argv[0]} {'finished' if rc == 0 else f'failed (exit {rc})'} in {time.monotonic() - start:.1f} s")
    return rc


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:  # during a set-up stage: what it was doing is redone next time
        print("\n[dev] interrupted", file=sys.stderr, flush=True)
        sys.exit(130)
