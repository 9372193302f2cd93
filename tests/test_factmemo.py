"""The runtime's sealed memo of code fingerprints (lrc.runtime.lock.factmemo).

It may only ever save time: with it warm, verification gives exactly the fingerprints a cold
parse gives, an edited file is still a changed component, and a memo that was not sealed by
this user's key (planted, damaged) is ignored. The speed is measured by
benchmarks/throughput.py (resume of a finished 10,000-run folder), never timed here.
"""

from __future__ import annotations

import json
import marshal
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lrc.runtime.lock import codeprint, factmemo, sealing
from lrc.runtime.verify import verify
from support import REPO


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("LRC_CACHE_KEY_FILE", str(tmp_path / "cache" / "lrc" / "cache.key"))
    monkeypatch.delenv("LRC_NO_CACHE", raising=False)
    monkeypatch.setattr(codeprint, "SOURCE_DIGESTS", None)  # an in-process compile of an earlier test may have left its cache's
    codeprint._MEMO.clear()  # this process's own memo: every step below reads the files again
    yield tmp_path / "cache"
    codeprint._MEMO.clear()


def _prints(root: Path | None = None) -> dict[str, str]:
    codeprint._MEMO.clear()
    with factmemo.remembered():
        found = codeprint.discover(root)
        with codeprint.batch():
            return {ref: codeprint.fingerprint(c, root).fingerprint for ref, c in found.items()}


_PRINTS_SCRIPT = (
    "import json\nfrom lrc.runtime.lock import codeprint, factmemo\n"
    "with factmemo.remembered():\n    found = codeprint.discover()\n    with codeprint.batch():\n"
    "        print(json.dumps({ref: codeprint.fingerprint(c).fingerprint for ref, c in found.items()}))\n")


def test_a_warm_memo_gives_the_fingerprints_a_cold_parse_gives(user_cache: Path, tmp_path: Path) -> None:
    """In fresh interpreters, as `lrc execute` meets it: nothing an earlier test left in this
    worker (its memo, a compile's SOURCE_DIGESTS, a patched module) decides the outcome."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(user_cache),
           "LRC_CACHE_KEY_FILE": str(user_cache / "lrc" / "cache.key")}
    run = lambda extra: json.loads(subprocess.run([sys.executable, "-c", _PRINTS_SCRIPT], env={**env, **extra},
                                                  capture_output=True, text=True, check=True).stdout)
    cold = run({"LRC_NO_CACHE": "1"})  # no memo at all: every file parsed
    assert cold and not factmemo.memo_path().exists()
    first = run({})
    assert factmemo.memo_path().is_file()  # written by the first verification
    stored = sealing.unseal(sealing.secret(), factmemo.memo_path().read_bytes())
    assert stored is not None and len(marshal.loads(stored)) > 0
    assert first == cold == run({})  # the warm memo gives what a cold parse gives


def test_the_demo_lock_verifies_with_the_memo_cold_and_warm(user_cache: Path) -> None:
    lock = json.loads((REPO / "generated" / "demo" / "plan.lock").read_text(encoding="utf-8"))
    codeprint._MEMO.clear()
    assert verify(lock) == []
    codeprint._MEMO.clear()
    assert verify(lock) == []  # from the memo


def test_an_edited_file_is_a_changed_component_with_a_warm_memo(user_cache: Path, tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    shutil.copytree(REPO / "runtime", runtime, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    before = _prints(runtime)
    _prints(runtime)  # warm
    stats = runtime / "report" / "stats.py"
    stats.write_text(stats.read_text(encoding="utf-8") + "\n\ndef _added(x):\n    return x\n", encoding="utf-8")
    after = _prints(runtime)
    changed = {ref for ref in before if before[ref] != after[ref]}
    assert any(ref.startswith("lrc.analysis.") for ref in changed)
    codeprint._MEMO.clear()
    assert after == {ref: codeprint.fingerprint(c, runtime).fingerprint for ref, c in codeprint.discover(runtime).items()}


# Each forgery costs a cold fingerprint of the whole runtime (~1 s): the default suite plants the
# memo sealed with another key, `--slow` (CI) also a truncated and a garbage one.
@pytest.mark.parametrize("forgery", ["another key", pytest.param("truncated", marks=pytest.mark.slow),
                                     pytest.param("garbage", marks=pytest.mark.slow)])
def test_a_memo_not_sealed_by_this_users_key_is_ignored(user_cache: Path, tmp_path: Path, forgery: str) -> None:
    runtime = tmp_path / "runtime"
    shutil.copytree(REPO / "runtime", runtime, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    honest = _prints(runtime)
    stats = runtime / "report" / "stats.py"
    stats.write_text(stats.read_text(encoding="utf-8") + "\n# edited\nX = 1\n", encoding="utf-8")
    codeprint._MEMO.clear()
    truth = {ref: codeprint.fingerprint(c, runtime).fingerprint for ref, c in codeprint.discover(runtime).items()}
    # A planted memo maps the edited file's bytes to the old digest, sealed with another key.
    import hashlib
    entries = marshal.loads(sealing.unseal(sealing.secret(), factmemo.memo_path().read_bytes()))
    old_digest = codeprint.file_digest(REPO / "runtime" / "report" / "stats.py")
    entries[hashlib.sha256(stats.read_bytes()).hexdigest()] = old_digest
    forged = {"another key": sealing.seal(b"k" * 32, marshal.dumps(entries)), "truncated": b"\x00" * 10,
              "garbage": b"garbage" * 100}[forgery]
    factmemo.memo_path().write_bytes(forged)
    assert _prints(runtime) == truth != honest


def test_the_memo_is_off_with_lrc_no_cache_and_with_no_usable_key(user_cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("LRC_NO_CACHE", "1")
    _prints()
    assert not factmemo.memo_path().exists()
    monkeypatch.delenv("LRC_NO_CACHE")
    (tmp_path / "blocked").write_text("a file, not a folder", encoding="utf-8")
    monkeypatch.setenv("LRC_CACHE_KEY_FILE", str(tmp_path / "blocked" / "cache.key"))
    assert _prints() == _prints()  # no key: nothing stored, nothing read, same fingerprints
    assert not factmemo.memo_path().exists()


def test_a_resume_with_nothing_to_do_refuses_an_edited_component(user_cache: Path, tmp_path: Path) -> None:
    """End to end in a child process: warm the memo by verifying, edit the analysis code, and
    the same verification refuses (the memo never hides a change)."""
    runtime = tmp_path / "runtime"
    shutil.copytree(REPO / "runtime", runtime, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    script = (
        "import json, sys\nfrom pathlib import Path\nfrom lrc.runtime.lock import codeprint\n"
        "codeprint.runtime_root = lambda: Path(sys.argv[1])\nfrom lrc.runtime.verify import verify\n"
        "print(json.dumps(verify(json.loads(Path(sys.argv[2]).read_text()))))\n")
    lock = REPO / "generated" / "demo" / "plan.lock"
    env = {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(user_cache), "HOME": str(tmp_path),
           "LRC_CACHE_KEY_FILE": str(user_cache / "lrc" / "cache.key")}
    run = lambda: json.loads(subprocess.run([sys.executable, "-c", script, str(runtime), str(lock)], env=env,
                                            capture_output=True, text=True, check=True).stdout)
    assert run() == [] and run() == []
    outputs = runtime / "report" / "outputs.py"
    outputs.write_text(outputs.read_text(encoding="utf-8").replace("TRACE_FORMAT = 1", "TRACE_FORMAT = 2"), encoding="utf-8")
    problems = run()
    assert any("lrc.analysis" in p and "differs from what was locked" in p and "outputs.py" in p for p in problems), problems


# One process fingerprints as `lrc execute` does -- verify the lock, then discover the running
# code again to import it -- counting the modules it parses (in this process: no prefetch child).
_COUNTING_SCRIPT = (
    "import json, sys\nfrom pathlib import Path\nfrom lrc.runtime.lock import codeprint, factmemo\n"
    "codeprint.PARALLEL_MIN_FILES = 10 ** 9\nparsed = []\nread = codeprint._read_facts\n"
    "codeprint._read_facts = lambda path: parsed.append(path.name) or read(path)\n"
    "root = Path(sys.argv[1]) if len(sys.argv) > 1 else None\n"
    "with factmemo.remembered():\n    found = codeprint.discover(root)\n    with codeprint.batch():\n"
    "        prints = {ref: codeprint.fingerprint(c, root).fingerprint for ref, c in found.items()}\n"
    "with factmemo.remembered():\n    codeprint.discover(root)\n"
    "print(json.dumps({'parsed': sorted(parsed), 'prints': prints}))\n")


def _counting(user_cache: Path, home: Path, root: Path | None = None) -> dict:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_CACHE_HOME": str(user_cache),
           "LRC_CACHE_KEY_FILE": str(user_cache / "lrc" / "cache.key")}
    done = subprocess.run([sys.executable, "-c", _COUNTING_SCRIPT, *([str(root)] if root else [])], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_a_command_that_fingerprints_twice_leaves_the_memo_warm_for_the_next(user_cache: Path, tmp_path: Path) -> None:
    """Before, each fingerprinting saved only the entries it had used: `lrc execute`'s second one
    (discovering the components to import) kept the declarations alone, so every execute parsed
    every module again (~180 of them, ~0.8 s of CPU per execute, a resume included)."""
    cold = _counting(user_cache, tmp_path)
    assert len(cold["parsed"]) > 50
    warm = _counting(user_cache, tmp_path)
    assert warm == {"parsed": [], "prints": cold["prints"]}


def test_two_versions_of_the_code_do_not_evict_each_other(user_cache: Path, tmp_path: Path) -> None:
    """An edited copy of the runtime (another checkout, the next version of the code) adds its
    changed module; the original's entries stay, so going back parses nothing (before: the
    original module was parsed again, each switch evicting the other)."""
    runtime = tmp_path / "runtime"
    shutil.copytree(REPO / "runtime", runtime, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    stats = runtime / "report" / "stats.py"
    stats.write_text(stats.read_text(encoding="utf-8") + "\n\ndef _added(x):\n    return x\n", encoding="utf-8")
    original = _counting(user_cache, tmp_path)
    edited = _counting(user_cache, tmp_path, runtime)
    assert edited["parsed"] == ["stats.py"] and edited["prints"] != original["prints"]
    again = _counting(user_cache, tmp_path)
    assert again == {"parsed": [], "prints": original["prints"]}


def test_the_memo_keeps_what_this_process_used_and_the_newest_others_up_to_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factmemo, "KEEP", 5)
    entries = factmemo._Tracked({f"k{i}": i for i in range(10)})
    assert entries["k1"] == 1 and "k2" in entries and "nope" not in entries
    entries["k11"] = 11
    assert list(factmemo._kept(entries)) == ["k8", "k9", "k1", "k2", "k11"]  # the newest others first, then the used
    assert entries.used == {"k1", "k2", "k11"}  # saving reads nothing as used
    monkeypatch.setattr(factmemo, "KEEP", 2)
    assert list(factmemo._kept(entries)) == ["k1", "k2", "k11"]  # what was used is never dropped
