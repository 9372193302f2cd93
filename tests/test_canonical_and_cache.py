"""The canonical-JSON fast path is byte-identical to RFC 8785, and the compile cache can
never serve a stale result."""

from __future__ import annotations

import shutil
from pathlib import Path

import rfc8785
from hypothesis import given, settings, strategies as st

from lrc.compiler.pipeline import compile_project
from lrc.runtime.lock.canonical import CanonicalError, _fast, canonical_bytes
from support import REPO

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",))),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_canonical_bytes_equal_rfc8785_or_both_refuse(value):
    try:
        expected = rfc8785.dumps(value)
    except Exception:  # JCS refuses (e.g. an integer beyond 2^53): so must we
        try:
            canonical_bytes(value)
        except CanonicalError:
            return
        raise AssertionError(f"accepted a value JCS refuses: {value!r}")
    assert canonical_bytes(value) == expected
    fast = _fast(value)
    assert fast is None or fast == expected


def _project(tmp: Path) -> Path:
    for name in ("specs", "schemas", "generated"):
        shutil.copytree(REPO / name, tmp / name)
    return tmp


def test_a_warm_compile_equals_a_cold_one_and_an_edit_is_never_served_from_the_cache(tmp_path: Path):
    root = _project(tmp_path)
    cold = compile_project(root, check=True, cache=False)
    assert not (root / ".lrc-cache").exists()  # --check writes nothing, not even the cache
    first = compile_project(root)  # a plain compile fills .lrc-cache
    assert (root / ".lrc-cache").is_dir()
    warm = compile_project(root, check=True)
    assert not cold.diagnostics.has_errors and not warm.diagnostics.has_errors
    assert cold.outputs == first.outputs == warm.outputs
    # An edit after caching: the cache is keyed by content, so the change is seen at once.
    prompt = root / "specs/workloads/triage.ap-inbox/prompts/system.j2"
    prompt.write_text(prompt.read_text().replace("Use exactly one", "Use one"))
    edited = compile_project(root, check=True)
    assert [d.code for d in edited.diagnostics.items if d.severity == "error"] == ["LRC5001"]
    assert compile_project(root, check=True, cache=False).diagnostics.sorted() == edited.diagnostics.sorted()


def _spec_count(root: Path) -> int:
    return sum(1 for p in (root / "specs").rglob("*.yaml"))


def _cache_files(root: Path) -> list[Path]:
    return [p for p in (root / ".lrc-cache").rglob("*.bin")]


def test_a_damaged_cache_is_a_cold_cache(tmp_path: Path):
    root = _project(tmp_path)
    compile_project(root)
    files = _cache_files(root)
    assert files
    for f in files:
        f.write_bytes(f.read_bytes()[:40] + b"damaged")
    result = compile_project(root, check=True)
    assert not result.diagnostics.has_errors and result.cache_hits == 0


def test_every_unchanged_spec_is_served_from_the_cache_and_warnings_are_replayed(tmp_path: Path):
    root = _project(tmp_path)
    spec = root / "specs/systems/agentic.yaml"
    spec.write_text("\n".join(spec.read_text().splitlines()[1:]) + "\n")  # no modeline: warning LRC1009, no error
    cold = compile_project(root)
    warm = compile_project(root, check=True)
    assert cold.cache_hits == 0 and warm.cache_hits == _spec_count(root)
    assert [d.code for d in warm.diagnostics.sorted()] == [d.code for d in cold.diagnostics.sorted()]
    assert "LRC1009" in [d.code for d in warm.diagnostics.items]


def test_a_missing_blob_is_rebuilt_and_the_lock_is_the_same(tmp_path: Path):
    root = _project(tmp_path)
    first = compile_project(root)
    for blob in (root / ".lrc-cache").rglob("blobs/*/*.bin"):
        blob.unlink()
    (root / "generated/demo/plan.lock").unlink()  # the lock must be rebuilt from cached specs
    again = compile_project(root)
    assert again.cache_hits == _spec_count(root)
    assert not again.diagnostics.has_errors and again.outputs["generated/demo/plan.lock"] == first.outputs["generated/demo/plan.lock"]


def test_a_referenced_file_turned_symlink_is_refused_even_when_cached(tmp_path: Path):
    root = _project(tmp_path)
    compile_project(root)
    prompt = root / "specs/workloads/triage.ap-inbox/prompts/system.j2"
    outside = tmp_path / "outside.j2"
    outside.write_bytes(prompt.read_bytes())  # the very same bytes, now reached through a symlink
    prompt.unlink()
    prompt.symlink_to(outside)
    warm = compile_project(root, check=True)
    cold = compile_project(root, check=True, cache=False)
    assert "LRC3004" in [d.code for d in warm.diagnostics.items]
    assert warm.diagnostics.sorted() == cold.diagnostics.sorted()


def test_a_cache_sealed_by_someone_else_is_ignored(tmp_path: Path, monkeypatch):
    """A `.lrc-cache/` committed into a pull request is not trusted: it was sealed with the
    author's key, not this user's, so it cannot turn a broken spec into a clean one."""
    root = _project(tmp_path)
    monkeypatch.setenv("LRC_CACHE_KEY_FILE", str(tmp_path / "author.key"))
    compile_project(root)  # the "author" fills a cache, as if committed with the pull request
    assert (tmp_path / "author.key").exists()
    monkeypatch.setenv("LRC_CACHE_KEY_FILE", str(tmp_path / "reviewer.key"))
    result = compile_project(root, check=True)
    assert result.cache_hits == 0 and not result.diagnostics.has_errors


def test_a_changed_toolchain_or_schema_starts_cold(tmp_path: Path, monkeypatch):
    from lrc.compiler import cache as cache_module

    root = _project(tmp_path)
    compile_project(root)
    assert compile_project(root, check=True).cache_hits == _spec_count(root)
    real = cache_module.toolchain_digest
    monkeypatch.setattr(cache_module, "toolchain_digest", lambda: "0" * 40 + real()[40:])
    assert compile_project(root, check=True).cache_hits == 0
    monkeypatch.setattr(cache_module, "toolchain_digest", real)
    schema = root / "schemas/system.schema.json"
    schema.write_text(schema.read_text() + "\n")  # same meaning, other bytes: results are not reused
    assert compile_project(root, check=True).cache_hits == 0


def test_a_spec_with_an_error_of_its_own_is_never_cached_and_cross_checks_always_run(tmp_path: Path):
    root = _project(tmp_path)
    n = _spec_count(root)
    prompt = root / "specs/workloads/triage.ap-inbox/prompts/system.j2"
    good_prompt = prompt.read_text()
    prompt.write_text(good_prompt + "{% if %}\n")  # a template error: the workload's own stage fails
    bad = compile_project(root)
    assert "LRC4001" in [d.code for d in bad.diagnostics.items]
    again = compile_project(root)
    assert again.cache_hits == n - 1  # every spec but the broken one
    assert again.diagnostics.sorted() == bad.diagnostics.sorted()
    prompt.write_text(good_prompt)
    assert not compile_project(root).diagnostics.has_errors

    # An error between specs (an unknown primitive) is found from cached data too.
    spec = root / "specs/workloads/triage.ap-inbox/workload.yaml"
    spec.write_text(spec.read_text().replace("primitive: classify", "primitive: classifyy", 1))
    first = compile_project(root)
    second = compile_project(root)
    assert "LRC6003" in [d.code for d in first.diagnostics.items]
    assert second.cache_hits == n and second.diagnostics.sorted() == first.diagnostics.sorted()


def test_a_key_file_that_is_a_fifo_or_a_device_is_no_key_never_a_wait(tmp_path: Path, monkeypatch):
    """`LRC_CACHE_KEY_FILE` naming a FIFO hung `lrc compile` (waiting for a writer); /dev/zero ran
    out of memory. Neither is a key: the caches are cold, the compile the same."""
    import os

    from lrc.runtime.lock import sealing

    fifo = tmp_path / "key.fifo"
    os.mkfifo(fifo)
    for named in (fifo, Path("/dev/zero"), tmp_path):  # a FIFO, an endless device, a folder
        monkeypatch.setenv("LRC_CACHE_KEY_FILE", str(named))
        assert sealing.secret() is None
    short = tmp_path / "short.key"
    short.write_bytes(b"too short")
    monkeypatch.setenv("LRC_CACHE_KEY_FILE", str(short))
    assert sealing.secret() is None  # a key file of fewer than 32 bytes is no key either
    monkeypatch.setenv("LRC_CACHE_KEY_FILE", str(fifo))
    root = _project(tmp_path / "p")
    assert not compile_project(root).diagnostics.has_errors
    assert not (root / ".lrc-cache").exists() or not _cache_files(root)  # nothing sealed without a key
