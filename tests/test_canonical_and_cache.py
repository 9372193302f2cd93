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


def test_a_damaged_cache_is_a_cold_cache(tmp_path: Path):
    root = _project(tmp_path)
    compile_project(root)
    for f in (root / ".lrc-cache").glob("*.json"):
        f.write_text("{not json")
    result = compile_project(root, check=True)
    assert not result.diagnostics.has_errors
