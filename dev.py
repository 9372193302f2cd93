#!/usr/bin/env python3
"""The two commands a newcomer runs on a fresh machine (python3 and git, nothing else).

    python3 dev.py demo   # set up, compile the demo edition, execute it, print the rate card
    python3 dev.py test   # set up, run the whole test suite

Set-up creates .venv/ and installs exactly the hash-locked dependencies of
requirements.lock (pip --require-hashes), then lrc itself in editable mode. It is redone
only when requirements.lock, pyproject.toml or setup.py change.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
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
    return subprocess.call([str(c) for c in cmd], cwd=ROOT, **kw)


def setup() -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"lrc needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    wanted = hashlib.sha256(b"".join((ROOT / f).read_bytes() for f in INPUTS)).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == wanted and PY.exists():
        return
    if not PY.exists():
        _say("creating .venv")
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    _say("installing hash-locked dependencies (requirements.lock)")
    quiet = ["-q"] if os.environ.get("CI") or not sys.stdout.isatty() else []
    if _run([PY, "-m", "pip", "install", *quiet, "--disable-pip-version-check", "--require-hashes", "-r", "requirements.lock"]):
        sys.exit("dependency installation failed (see above)")
    if _run([PY, "-m", "pip", "install", *quiet, "--disable-pip-version-check", "--no-deps", "--no-build-isolation", "-e", "."]):
        sys.exit("installing lrc failed (see above)")
    STAMP.write_text(wanted + "\n")


def byte_compile() -> None:
    """Write lrc's own bytecode (__pycache__/, gitignored). pip does this for what it installs,
    but not for an editable install's source tree, and where PYTHONDONTWRITEBYTECODE is set
    (as on CI machines) nothing else ever does: every `lrc` run would compile its ~100 modules
    from source. Stale files are rewritten; up-to-date ones cost a stat each."""
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


def test(extra: list[str]) -> int:
    return _run([PY, "-m", "pytest", "-q", *extra])


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("demo", "test", "setup"):
        print(__doc__)
        return 2
    setup()
    byte_compile()
    if argv[0] == "demo":
        return demo()
    if argv[0] == "test":
        return test(argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
