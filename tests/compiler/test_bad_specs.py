"""The bad-spec corpus: every diagnostic the compile pipeline can emit, with golden text.

Each folder of tests/compiler/bad_specs/ is one case. It holds only what differs from the
real project, at project-relative paths (e.g. `specs/systems/single-shot.yaml`), plus
`expected.txt`: the text diagnostics (`printer.text(result.diagnostics.sorted())`). Paths in
it are project-relative, so a line number in expected.txt points into the file beside it.

A case may carry a `case.json` for what plain files cannot express:

    check          compile with --check (the 7xxx cases)
    expect_errors  false for warning-only cases (default true)
    remove         project-relative files to delete
    symlinks       {link: target}: replace `link` by a symlink to `target` (relative to the link)
    append         {path: text}: append text to a file
    prepend        {path: text}: put text before a file's content (damaged ledger lines at a
                   line number that does not depend on how many components runtime/ has)
    pad            {path: n}: pad a file with comment lines to exactly n bytes (size caps)
    ledger         records to upsert into generated/ledger.jsonl by kind/id/version; a digest
                   of "@code:ID" is the fingerprint the compiler computes now for component ID

Files under `runtime/` in a case are added to a *copy* of runtime/ that the compiler is
pointed at for that case (the real runtime/ is never touched); that is how the code-gate
codes (51xx) and LRC3009 are reached, with a component (`fixture.component`) that exists
only in the corpus, so the golden text does not move when the real runtime is edited.

Every case is overlaid on a fresh copy of the project -- trimmed to the demo edition and what
it pins, with a generated/ compiled from scratch (see conftest.py) -- compiled in-process, and must: report errors (unless
expect_errors is false), leave every file under generated/ byte- and mtime-identical, and
print exactly expected.txt. Regenerate the golden files with `LRC_UPDATE_GOLDEN=1`; the code,
line and column of the key cases are pinned in PRIMARY below so a regeneration cannot move
them silently.

Coverage. Every code of compiler/codes.py in the 1xxx-7xxx ranges appears in at least one
expected.txt (test_every_reachable_code_is_covered enforces it). Notes on the few that need
more than a bad file:

- LRC3009 and LRC5101-LRC5103 are about runtime code. The corpus adds modules to a copy of
  runtime/ (`runtime/lrc_test_*.py`, component `fixture.component`) and fabricates ledger
  lines for them, so the golden text does not move when the real runtime is edited.
  test_gate.py covers LRC5101 for the real `triage.ap-inbox.generator` too (fabricated
  ledger line and snapshot) and for real edits of a runtime copy.
- LRC5104 (code bump without change) is reachable only by fabrication: a code fingerprint
  covers the component's version and the COMPONENT_VERSION literal of its own module, so a
  real bump always changes it. The case code-bump-without-change records the *current*
  fingerprint at an older version.
- LRC5004 (spec bump without change) is compared on the recorded snapshot, not the digest:
  a spec's digest covers its `version` field, so before that fix the warning could not fire.
- LRC1003 has a second, defensive path in load._Builder ("unsupported YAML value of type")
  that no YAML text reaches: untagged scalars are str/int/float/bool/None or timestamps
  (converted to ISO strings), and anything else needs a tag, which the pre-scan refuses.
- LRC8001/LRC8002 belong to `lrc bump`, not to compile: see test_bump.py.
- LRC5006 and LRC7001-LRC7005 are about generated/, reached with `case.json` edits of it
  (LRC7005: a symlink in it, `symlinks`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from lrc.compiler.codes import CODES
from lrc.compiler.load import MAX_NODES, load_text
from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.pipeline import compile_project
from lrc.compiler.printer import text as render_text
from lrc.runtime.lock import codeprint

UPDATE_GOLDEN = os.environ.get("LRC_UPDATE_GOLDEN") == "1"  # see conftest.py
CORPUS = Path(__file__).resolve().parent / "bad_specs"
CASES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
META_FILES = {"expected.txt", "case.json", "README.md"}

# case -> (code, path, line, column) of the first error in sorted order. Kept by hand.
PRIMARY: dict[str, tuple[str, str, int | None, int | None]] = {
    "failure-category-wrong-tier": ("LRC6116", "specs/taxonomies/hostile.yaml", 16, 3),
    "yaml-syntax-error": ("LRC1001", "specs/systems/single-shot.yaml", 5, 19),
    "duplicate-key": ("LRC1002", "specs/systems/single-shot.yaml", 13, 1),
    "operating-setting-in-edition": ("LRC2010", "specs/editions/operated.yaml", 26, 5),
    "python-object-tag": ("LRC1003", "specs/systems/single-shot.yaml", 11, 17),
    "anchor-alias": ("LRC1004", "specs/editions/demo.yaml", 26, 15),
    "yaml-directive": ("LRC1005", "specs/systems/single-shot.yaml", 3, 1),
    "deep-nesting": ("LRC1006", "specs/systems/single-shot.yaml", 16, 46),
    "non-utf8-spec": ("LRC1007", "specs/systems/single-shot.yaml", None, None),
    "float-price": ("LRC2001", "specs/editions/demo.yaml", 50, 12),
    "unpinned-reference": ("LRC3002", "specs/editions/demo.yaml", 12, 5),
    "unknown-reference": ("LRC3001", "specs/editions/demo.yaml", 14, 5),
    "unknown-code-component": ("LRC3001", "specs/workloads/triage.ap-inbox/workload.yaml", 14, 14),
    "file-reference-dotdot": ("LRC3004", "specs/workloads/triage.ap-inbox/workload.yaml", 68, 11),
    "symlinked-template": ("LRC3004", "specs/workloads/triage.ap-inbox/workload.yaml", 86, 15),
    "regex-backreference-in-item-schema": ("LRC3020", "specs/workloads/triage.ap-inbox/workload.yaml", 27, 41),
    "regex-lookaround-in-output-schema": ("LRC3020", "specs/workloads/triage.ap-inbox/workload.yaml", 68, 11),
    "regex-maxlength-above-pattern-limit": ("LRC3021", "specs/workloads/triage.ap-inbox/workload.yaml", 27, 71),
    "template-syntax-error": ("LRC4001", "specs/workloads/triage.ap-inbox/prompts/system.j2", 5, 1),
    "template-attribute-escape": ("LRC4003", "specs/workloads/triage.ap-inbox/prompts/single-shot.user.j2", 1, 1),
    "template-output-bomb": ("LRC4004", "specs/workloads/triage.ap-inbox/prompts/single-shot.user.j2", 1, 1),
    "changed-without-bump": ("LRC5001", "specs/workloads/triage.ap-inbox/workload.yaml", 5, 10),
    "version-backwards": ("LRC5002", "specs/workloads/triage.ap-inbox/workload.yaml", 5, 10),
    "code-changed-without-bump": ("LRC5101", "runtime/lrc_test_fixture.py", 4, 21),
    "unpriced-model": ("LRC6001", "specs/editions/demo.yaml", 45, 9),
    "execute-single-shot": ("LRC6005", "specs/workloads/triage.ap-inbox/workload.yaml", 83, 3),
    "n-below-standard": ("LRC6110", "specs/editions/demo.yaml", 91, 13),
    "reference-model-wrong-role": ("LRC6011", "specs/editions/demo.yaml", 29, 11),
    "step-cap-exceeded": ("LRC6111", "specs/systems/agentic.yaml", 13, 12),
    "held-out-seed-reused": ("LRC6112", "specs/editions/2027-01.yaml", 69, 15),
    "held-out-seed-published": ("LRC6112", "specs/editions/2027-01.yaml", 69, 15),
}


def _set_ledger(root: Path, records: list[dict]) -> None:
    path = root / "generated/ledger.jsonl"
    lines = [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()] if path.exists() else []
    for rec in records:
        rec = dict(rec)
        if rec["digest"].startswith("@code:"):
            ident = rec["digest"].removeprefix("@code:")
            comp = next(c for c in codeprint.discover(codeprint.runtime_root()).values() if c.id == ident)
            rec["digest"] = codeprint.fingerprint(comp).fingerprint
        for old in lines:
            if (old["kind"], old["id"], old["version"]) == (rec["kind"], rec["id"], rec["version"]):
                old["digest"] = rec["digest"]
                break
        else:
            lines.append(rec)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in lines), encoding="utf-8")


def _pad(path: Path, size: int) -> None:
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    line = b"# " + b"x" * 76 + b"\n"
    data += line * ((size - len(data)) // len(line))
    rest = size - len(data)
    if rest:
        data += (b"#" + b"x" * (rest - 2) + b"\n") if rest >= 2 else b"\n"
    assert len(data) == size
    path.write_bytes(data)


def apply_case(case_dir: Path, root: Path, runtime_copy) -> dict:
    """Overlay one corpus case on the project at `root`; returns its case.json settings."""
    meta = json.loads((case_dir / "case.json").read_text()) if (case_dir / "case.json").exists() else {}
    if (case_dir / "runtime").is_dir() or any(r["digest"].startswith("@code:") for r in meta.get("ledger", [])):
        runtime_copy(root)
    for src in sorted(case_dir.rglob("*")):
        rel = src.relative_to(case_dir).as_posix()
        if src.is_dir() or rel in META_FILES:
            continue
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(src.read_bytes())
    for rel in meta.get("remove", []):
        (root / rel).unlink()
    for rel, target in meta.get("symlinks", {}).items():
        link = root / rel
        if link.exists() or link.is_symlink():
            link.unlink()
        os.symlink(target, link)
    for rel, extra in meta.get("append", {}).items():
        with (root / rel).open("ab") as fh:
            fh.write(extra.encode("utf-8"))
    for rel, extra in meta.get("prepend", {}).items():
        (root / rel).write_bytes(extra.encode("utf-8") + (root / rel).read_bytes())
    for rel, size in meta.get("pad", {}).items():
        _pad(root / rel, size)
    if meta.get("ledger"):
        _set_ledger(root, meta["ledger"])
    return meta


def tree_state(folder: Path) -> dict[str, tuple[bytes, int]]:
    """{relative path: (bytes, mtime_ns)} of every file below `folder`."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def run_case(name: str, root: Path, runtime_copy):
    meta = apply_case(CORPUS / name, root, runtime_copy)
    before = tree_state(root / "generated")
    result = compile_project(root, check=bool(meta.get("check")))
    after = tree_state(root / "generated")
    return meta, result, before, after


# The from-scratch comparison doubles a case's cost (a cold compile of the whole project): every
# third case by name runs it in the default suite, the rest under the slow marker (CI runs both).
FROM_SCRATCH_BY_DEFAULT = set(CASES[::3])


# Cases whose template runs until the render deadline stops it: the deadline fires after an
# eighth of RENDER_SECONDS here (the diagnostic still names RENDER_SECONDS, which the golden text
# pins), so the case costs ~0.5 s of spinning instead of 4 (it is compiled twice, see below).
SHORT_DEADLINE = {"template-render-timeout"}


def _short_deadline(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if name in SHORT_DEADLINE:
        from lrc.compiler import render

        real = render._deadline
        monkeypatch.setattr(render, "_deadline", lambda seconds: real(seconds / 8))


@pytest.mark.parametrize("name", CASES)
def test_bad_spec(name: str, fresh_project: Path, runtime_copy, monkeypatch: pytest.MonkeyPatch) -> None:
    _short_deadline(name, monkeypatch)
    meta, result, before, after = run_case(name, fresh_project, runtime_copy)
    diags = result.diagnostics.sorted()
    got = render_text(diags)

    assert result.diagnostics.has_errors is meta.get("expect_errors", True), got
    assert diags, "a bad spec must produce at least one diagnostic"
    assert before == after, "nothing under generated/ may be written, changed or removed"
    assert str(fresh_project) not in got and "/tmp" not in got, "diagnostics must use project-relative paths"
    assert all(d.code in CODES for d in diags)

    golden = CORPUS / name / "expected.txt"
    if UPDATE_GOLDEN:
        golden.write_text(got, encoding="utf-8")
    assert golden.exists(), f"{golden} is missing: run with LRC_UPDATE_GOLDEN=1 and review it"
    assert got == golden.read_text(encoding="utf-8")

    if name in PRIMARY:
        first = next(d for d in diags if d.severity == "error")
        assert (first.code, first.path, first.line, first.column) == PRIMARY[name]

    # The baseline's compile cache came with the copy, so every spec the case left alone was
    # served from it: the same diagnostics from scratch prove the cache changes nothing. (A third
    # of the cases here; every other case in test_bad_spec_from_scratch, under --slow.)
    assert result.cache_hits > 0 or meta.get("check") or not (fresh_project / ".lrc-cache").exists()
    if name in FROM_SCRATCH_BY_DEFAULT:
        _assert_same_from_scratch(fresh_project, got)


def _assert_same_from_scratch(root: Path, got: str) -> None:
    cold = compile_project(root, check=True, cache=False)
    assert render_text(cold.diagnostics.sorted()) == got


@pytest.mark.slow
@pytest.mark.parametrize("name", [c for c in CASES if c not in FROM_SCRATCH_BY_DEFAULT])
def test_bad_spec_from_scratch(name: str, fresh_project: Path, runtime_copy, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rest of the cases: the compile-cache run and a cold compile say the same, word for word."""
    _short_deadline(name, monkeypatch)
    _meta, result, _before, _after = run_case(name, fresh_project, runtime_copy)
    _assert_same_from_scratch(fresh_project, render_text(result.diagnostics.sorted()))


def test_primary_table_names_real_cases() -> None:
    assert set(PRIMARY) <= set(CASES)


def _golden_codes() -> set[str]:
    codes: set[str] = set()
    for name in CASES:
        golden = CORPUS / name / "expected.txt"
        if golden.exists():
            codes.update(re.findall(r"(?:error|warning)\[(LRC\d{4})\]", golden.read_text(encoding="utf-8")))
    return codes


def test_every_reachable_code_is_covered() -> None:
    compile_codes = {c for c in CODES if c[3] in "1234567"}
    missing = sorted(compile_codes - _golden_codes())
    assert not missing, f"codes without a bad-spec case: {missing} (add a case, or document why in this module's docstring)"


@pytest.mark.slow
def test_node_count_cap() -> None:
    """More than MAX_NODES YAML nodes is refused by the pre-scan (kept out of the corpus: 100 kB)."""
    diags = Diagnostics()
    text = "kind: system\nbig: [" + ",".join(["0"] * (MAX_NODES + 1)) + "]\n"
    assert load_text(text, "specs/systems/big.yaml", Path("big.yaml"), diags) is None
    assert [d.code for d in diags.items] == ["LRC1006"]
    assert f"more than {MAX_NODES} YAML nodes" in diags.items[0].summary


def test_alias_bomb_is_refused_quickly(fresh_project: Path, runtime_copy) -> None:
    """The pre-scan refuses anchors before anything is built, so the bomb never expands."""
    import time

    start = time.perf_counter()
    _, result, _, _ = run_case("alias-bomb", fresh_project, runtime_copy)
    assert time.perf_counter() - start < 10
    assert {d.code for d in result.diagnostics.items} == {"LRC1004"}


def test_json_format_of_a_bad_spec(fresh_project: Path, runtime_copy) -> None:
    """`--format json` carries the same diagnostics as values (format_version 1)."""
    from lrc.compiler.printer import as_json

    _, result, _, _ = run_case("unknown-field-typo", fresh_project, runtime_copy)
    doc = json.loads(as_json(result.diagnostics.sorted()))
    assert doc["format_version"] == 1
    typo = next(d for d in doc["diagnostics"] if d["code"] == "LRC2003")
    assert typo["pointer"] == "/titel"
    assert typo["hint"] == "did you mean 'title'?"
    assert (typo["path"], typo["line"], typo["column"]) == ("specs/systems/single-shot.yaml", 5, 1)
