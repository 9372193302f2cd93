"""Fixtures for the compiler test suite (tests/compiler/).

Every test works on a temporary copy of the project; nothing here writes into the
repository's specs/ or generated/.

Golden files
------------
The bad-spec corpus (tests/compiler/bad_specs/<case>/expected.txt) holds the exact text
diagnostics of each case. To regenerate them after an intended change of wording, run

    LRC_UPDATE_GOLDEN=1 .venv/bin/pytest tests/compiler/test_bad_specs.py

and review the diff like any other change. (The option is an environment variable, not a
`--update-golden` command-line flag, because pytest only accepts `pytest_addoption` in the
root conftest, which belongs to another part of the suite.) The code, line and column of the
key cases are pinned separately in test_bad_specs.py so that a regeneration cannot silently
move them.

Fixtures
--------
- `project`: a verbatim copy of the repository's specs/, schemas/ and generated/ (the
  committed lock and ledger included) in tmp_path.
- `fresh_project`: a copy of specs/ (trimmed to the demo edition and what it pins, see
  `trim_to_edition`) and schemas/, whose generated/ was rebuilt from scratch by one compile
  (a ledger holding exactly what is compiled now). Tests of the gate and of the bad-spec
  corpus start from it, so they do not depend on whether the committed generated/ happens
  to be current while others edit runtime/ and specs/. The baseline is rebuilt when specs/,
  schemas/ or runtime/ of the repository change during the session.
- `runtime_copy`: copies runtime/ into a project and points the compiler's code discovery
  at the copy (monkeypatching `codeprint.runtime_root`), so tests can add or change code
  components without touching the real runtime/.

Speed: a compile spends nearly all its time parsing -- YAML (ruamel.yaml is pure Python
and each spec is parsed twice: the hostile-input pre-scan, then the load) and Python (every
code component re-parses its whole import closure). Two autouse memos (kept for the session, applied only
while this folder's tests run) keep the suite fast without changing any result:

- `codeprint.file_digest` and `codeprint._imports` are keyed by (file name, file bytes[,
  module]): both are pure functions of the file's content; `codeprint.discover` by its root
  and the (path, bytes) of every module below it.
- `load.load_text` is keyed by (text, project-relative path) and remembers only loads that
  emitted no diagnostic; a hit returns a deep copy with the caller's `abspath`. The file a
  test breaks has other text and is loaded for real, so every diagnostic is real.
  (test_loads_do_not_leak_state checks, without the memo, that one load cannot change the
  next -- the one thing a memo of a stateful loader could hide.)

Subprocess tests (test_lock_determinism.py, the CLI tests) run without either.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import shutil
from pathlib import Path
from typing import Callable

import pytest

from lrc.compiler import load as load_module
from lrc.compiler.pipeline import compile_project
from lrc.runtime.lock import codeprint

REPO = Path(__file__).resolve().parents[2]
PROJECT_PARTS = ("specs", "schemas", "generated")


def copy_project(dest: Path, parts: tuple[str, ...] = PROJECT_PARTS) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name in parts:
        shutil.copytree(REPO / name, dest / name, symlinks=True)
    return dest


# The memos live for the worker's session; the patches only while tests/compiler/ runs
# (scope "module": each test module of this folder; the memos outlive it). A session-wide patch outlived the folder and changed what
# later tests of the same worker measured: the runtime's fingerprint memo (test_factmemo) saw
# fingerprints that never consulted it.
_DIGESTS: dict[tuple[str, bytes], str] = {}
_IMPORTS: dict[tuple[str, bytes, str], list[str]] = {}
_DISCOVERED: dict[tuple, dict] = {}
_CLEAN_LOADS: dict = {}


@pytest.fixture(scope="module", autouse=True)
def _memoized_code_fingerprints():
    digests, imports = _DIGESTS, _IMPORTS
    real_digest = codeprint.file_digest
    real_imports = getattr(codeprint, "_imports", None)

    def file_digest(path: Path) -> str:
        key = (path.name, path.read_bytes())
        if key not in digests:
            digests[key] = real_digest(path)
        return digests[key]

    def _imports(path: Path, module: str):
        key = (path.name, path.read_bytes(), module)
        if key not in imports:
            imports[key] = list(real_imports(path, module))
        return iter(imports[key])

    discovered = _DISCOVERED
    real_discover = codeprint.discover

    def discover(root: Path | None = None) -> dict:
        root = root or codeprint.runtime_root()
        # keyed by each file's path, size and modification time (a stat, not a read: ~2 s of a suite
        # run's 240 bad-spec compiles went to reading every runtime file for the key)
        files = tuple((p.as_posix(), st.st_size, st.st_mtime_ns) for p in sorted(root.rglob("*.py"))
                      if "__pycache__" not in p.parts for st in (p.stat(),))
        key = (str(root), files)
        if key not in discovered:
            discovered[key] = real_discover(root)
        return dict(discovered[key])

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(codeprint, "discover", discover)
        mp.setattr(codeprint, "file_digest", file_digest)
        if real_imports is not None:
            mp.setattr(codeprint, "_imports", _imports)
        yield


_SCALARS = (str, int, float, bool, type(None))


def _copy_data(value):
    """A deep copy of a loaded document's plain data (dicts, lists, scalars), ~18x faster than
    copy.deepcopy on the specs (which also walked every position tuple); anything else is
    deep-copied as before."""
    kind = type(value)
    if kind is dict:
        return {k: _copy_data(v) for k, v in value.items()}
    if kind is list:
        return [_copy_data(v) for v in value]
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)


def _copy_doc(doc, **changes):
    """A SourceDoc no compile can change through the memo: its data copied deeply, its position
    maps (pointer -> tuple of ints, immutable) copied as dicts."""
    return dataclasses.replace(doc, data=_copy_data(doc.data), values=dict(doc.values), keys=dict(doc.keys), **changes)


@pytest.fixture(scope="module", autouse=True)
def _memoized_clean_loads():
    cache = _CLEAN_LOADS
    real = load_module.load_text

    def load_text(text, path, abspath, diags):
        hit = cache.get((text, path))
        if hit is not None:
            return _copy_doc(hit, abspath=abspath)
        before = len(diags.items)
        doc = real(text, path, abspath, diags)
        if doc is not None and len(diags.items) == before:
            cache[(text, path)] = _copy_doc(doc)
        return doc

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(load_module, "load_text", load_text)
        yield


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the repository's specs/, schemas/ and generated/ (as committed)."""
    return copy_project(tmp_path / "project")


def _source_signature() -> tuple:
    """(path, mtime, size) of every file a compile reads: specs/, schemas/ and runtime/."""
    out = []
    for top in ("specs", "schemas", "runtime"):
        for path in sorted((REPO / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                stat = path.stat()
                out.append((path.relative_to(REPO).as_posix(), stat.st_mtime_ns, stat.st_size))
    return tuple(out)


DEMO_EDITION = "demo"


def trim_to_edition(root: Path, edition: str = DEMO_EDITION) -> None:
    """Keep only the edition `edition`, the workloads it pins, the systems and the standard.

    The bad-spec corpus and the gate tests are about the demo chain (triage.ap-inbox.v1 in
    the demo edition); other workloads only make every compile slower and every golden file
    depend on what else happens to be in specs/.
    """
    keep_text = ""
    for path in sorted((root / "specs/editions").rglob("*.y*ml")):
        text = path.read_text(encoding="utf-8")
        if re.search(rf"(?m)^id:\s*{re.escape(edition)}\s*$", text):
            keep_text = text
        else:
            path.unlink()
    assert keep_text, f"no edition '{edition}' in specs/editions"
    pinned = set(re.findall(r"(?m)^\s*-\s*([a-z0-9][a-z0-9.-]*)\.v[0-9]+\s*(?:#.*)?$", keep_text))
    workloads = root / "specs/workloads"
    for path in sorted(workloads.rglob("*.y*ml")):
        found = re.search(r"(?m)^id:\s*(\S+)", path.read_text(encoding="utf-8"))
        if found and found.group(1) in pinned:
            continue
        if path.parent != workloads and path.parent.exists():
            shutil.rmtree(path.parent)
        elif path.exists():
            path.unlink()


class _Baseline:
    """specs/ (trimmed to the demo edition) and schemas/ of the repository plus a generated/
    compiled from scratch.

    Compiled once per session, and again whenever specs/, schemas/ or runtime/ of the
    repository changed since (other people edit them while the suite runs): a stale baseline
    would make every gate test report their edits.
    """

    def __init__(self, factory: pytest.TempPathFactory):
        self.factory = factory
        self.signature: tuple | None = None
        self.root: Path | None = None

    def get(self) -> Path:
        signature = _source_signature()
        if signature != self.signature or self.root is None:
            root = copy_project(self.factory.mktemp("baseline") / "project", ("specs", "schemas"))
            trim_to_edition(root)
            result = compile_project(root)
            errors = [d for d in result.diagnostics.sorted() if d.severity == "error"]
            assert not errors, "the repository's specs do not compile:\n" + "\n".join(f"{d.code} {d.path}: {d.summary}" for d in errors)
            self.signature, self.root = signature, root
        return self.root


@pytest.fixture(scope="session")
def baseline_project(tmp_path_factory: pytest.TempPathFactory) -> _Baseline:
    return _Baseline(tmp_path_factory)


@pytest.fixture
def fresh_project(baseline_project: _Baseline, tmp_path: Path) -> Path:
    """A throw-away copy of the (current) baseline project."""
    dest = tmp_path / "project"
    shutil.copytree(baseline_project.get(), dest, symlinks=True)
    return dest


@pytest.fixture
def runtime_copy(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], Path]:
    """`runtime_copy(root)` copies runtime/ to root/runtime and makes the compiler read code from there."""

    def make(root: Path) -> Path:
        target = root / "runtime"
        if not target.exists():
            shutil.copytree(REPO / "runtime", target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        monkeypatch.setattr(codeprint, "runtime_root", lambda: target)
        return target

    return make
