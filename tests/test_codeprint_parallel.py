"""Parsing runtime modules on a second process changes nothing but the time it takes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lrc.runtime.lock import codeprint
from support import REPO


def _runtime_copy(tmp_path: Path) -> Path:
    target = tmp_path / "runtime"
    shutil.copytree(REPO / "runtime", target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


def _sources(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts}


@pytest.mark.skipif(not hasattr(os, "fork") or not sys.platform.startswith("linux"), reason="fork is used on Linux only")
def test_facts_from_the_second_process_equal_a_serial_parse(tmp_path: Path, monkeypatch):
    root = _runtime_copy(tmp_path)
    monkeypatch.setattr(codeprint, "_can_fork", lambda: True)
    monkeypatch.setattr(codeprint, "SOURCE_DIGESTS", None)
    sources = _sources(root)
    before = {k for k in codeprint._MEMO if k[0] == "facts" and k[1].startswith(str(root))}
    assert not before
    codeprint._prefetch(root, sources)
    fetched = {k: v for k, v in codeprint._MEMO.items() if k[0] == "facts" and k[1].startswith(str(root))}
    components = [p for p, raw in sources.items() if b"COMPONENT_" in raw]
    assert len(fetched) > len(components)  # the components and the modules they import
    for key, facts in fetched.items():
        assert facts == codeprint._read_facts(Path(key[1])), key[1]
    # Every component found and fingerprinted after the prefetch is what a serial run gives.
    parallel = {ref: codeprint.fingerprint(c, root) for ref, c in codeprint.discover(root).items()}
    for key in list(codeprint._MEMO):
        if key[1].startswith(str(root)):
            del codeprint._MEMO[key]
    monkeypatch.setattr(codeprint, "_can_fork", lambda: False)
    serial = {ref: codeprint.fingerprint(c, root) for ref, c in codeprint.discover(root).items()}
    assert parallel == serial and len(serial) >= 20


@pytest.mark.skipif(not hasattr(os, "fork") or not sys.platform.startswith("linux"), reason="fork is used on Linux only")
def test_a_module_that_does_not_parse_is_reported_the_same_way(tmp_path: Path, monkeypatch):
    root = _runtime_copy(tmp_path)
    broken = root / "checks" / "money.py"  # imported by several components
    broken.write_text(broken.read_text() + "\ndef oops(:\n")
    monkeypatch.setattr(codeprint, "SOURCE_DIGESTS", None)
    errors = []
    for fork in (True, False):
        for key in list(codeprint._MEMO):
            if key[1].startswith(str(root)):
                del codeprint._MEMO[key]
        monkeypatch.setattr(codeprint, "_can_fork", lambda fork=fork: fork)
        with pytest.raises(codeprint.CodeprintError) as exc:
            for comp in codeprint.discover(root).values():
                codeprint.fingerprint(comp, root)
        errors.append((exc.value.path, exc.value.line, exc.value.message))
    assert errors[0] == errors[1]


def test_the_cli_compiles_the_same_with_and_without_the_second_process(tmp_path: Path):
    for name in ("specs", "schemas", "generated"):
        shutil.copytree(REPO / name, tmp_path / name)
    outputs = []
    for extra in ({}, {"LRC_NO_PARALLEL": "1"}):
        env = {**os.environ, "LRC_NO_CACHE": "1", **extra}
        run = subprocess.run([sys.executable, "-m", "lrc.compiler.cli", "compile", "--check", "--project", str(tmp_path)],
                             capture_output=True, text=True, env=env, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1]
