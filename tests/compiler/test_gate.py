"""The version gate (DESIGN §2) as previous/current pairs.

Each test starts from `fresh_project` (specs of the repository, generated/ compiled from
scratch, so the ledger records exactly the current specs and code), edits it the way an
author would, compiles again and checks what the gate says. Code components are never
edited in the real runtime/: LRC5101 is reached with a fabricated ledger line and snapshot,
and the transitive-fingerprint cases edit a *copy* of runtime/ (see conftest.runtime_copy).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from lrc.compiler.bump import bump
from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.pipeline import compile_project
from lrc.compiler.versioning import LEDGER, snapshot_path
from lrc.runtime.lock import codeprint

WORKLOAD = "specs/workloads/triage.ap-inbox/workload.yaml"
EDITION = "specs/editions/demo.yaml"
STANDARD = "specs/standard/ledgerrate.yaml"
SYSTEM_PROMPT = "specs/workloads/triage.ap-inbox/prompts/system.j2"
GENERATOR = "triage.ap-inbox.generator"


def edit(root: Path, rel: str, old: str, new: str, count: int = 1) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def line_of(root: Path, rel: str, prefix: str) -> int:
    lines = (root / rel).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, start=1) if line.startswith(prefix))


def errors(result) -> list:
    return [d for d in result.diagnostics.sorted() if d.severity == "error"]


def codes(result) -> list[tuple[str, str]]:
    return [(d.code, d.path) for d in result.diagnostics.sorted()]


def ledger_records(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / LEDGER).read_text(encoding="utf-8").splitlines()]


def bump_ok(root: Path, ident: str) -> None:
    diags = Diagnostics()
    assert bump(root, ident, diags) is not None, diags.sorted()
    assert not diags.items


def repin(root: Path, old: str, new: str) -> None:
    """Replace a pinned reference in every spec of the project (other workloads pin systems too)."""
    for path in sorted((root / "specs").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        edited = re.sub(rf"(?<![\w.-]){re.escape(old)}(?![\w.-])", new, text)
        if edited != text:
            path.write_text(edited, encoding="utf-8")


def unused_primitive(root: Path) -> str:
    """A primitive of the standard that no workload of the project uses."""
    used = set(re.findall(r"(?m)^primitive:\s*(\S+)", "".join(p.read_text(encoding="utf-8") for p in (root / "specs/workloads").rglob("*.yaml"))))
    standard = (root / STANDARD).read_text(encoding="utf-8")
    free = [p for p in re.findall(r"(?m)^  - id: (\S+)\n    definition:", standard) if p not in used]
    assert free, "every primitive is used by a workload"
    return free[-1]


def version_of(root: Path, rel: str) -> int:
    """The `version:` a spec of the project declares now (the tests follow the re-locks)."""
    return int(re.search(r"(?m)^version: (\d+)\s*(?:#.*)?$", (root / rel).read_text(encoding="utf-8")).group(1))


def release_workload(root: Path) -> tuple[int, int]:
    """Bump the workload, pin it in the edition, bump the edition: the author's whole job.
    Returns the workload's (old, new) version."""
    old = version_of(root, WORKLOAD)
    assert f"  - triage.ap-inbox.v{old}\n" in (root / EDITION).read_text(encoding="utf-8")
    diags = Diagnostics()
    done = bump(root, "triage.ap-inbox", diags)
    assert done is not None and not diags.items, diags.sorted()
    assert done.old == old
    repin(root, f"triage.ap-inbox.v{old}", f"triage.ap-inbox.v{done.new}")
    bump_ok(root, "demo")
    return done.old, done.new


def change_prompt(root: Path) -> None:
    edit(root, SYSTEM_PROMPT, "Use exactly one of these labels", "Use exactly one of the following labels")


# -- specs -----------------------------------------------------------------------------------


def test_unchanged_project_passes_and_writes_nothing(fresh_project: Path) -> None:
    result = compile_project(fresh_project)
    assert not result.diagnostics.items
    assert result.changed == []


def test_prompt_change_at_same_version_is_an_error_at_the_version_line(fresh_project: Path) -> None:
    change_prompt(fresh_project)
    result = compile_project(fresh_project)
    [diag] = errors(result)
    assert diag.code == "LRC5001"
    assert (diag.path, diag.line, diag.column) == (WORKLOAD, line_of(fresh_project, WORKLOAD, "version:"), len("version: ") + 1)
    assert diag.pointer == "/version"
    # The notes and the related location name the prompt file and the line that changed in it.
    prompt = "specs/workloads/triage.ap-inbox/prompts/system.j2"
    assert diag.notes == (f"changed: /systems/agentic/prompts/system ({prompt}:2)", f"changed: /systems/single-shot/prompts/system ({prompt}:2)")
    assert diag.related == ((prompt, 2),)
    assert "lrc bump triage.ap-inbox" in diag.hint
    assert result.changed == [] and not result.outputs


def test_prompt_change_after_bump_and_new_edition_compiles(fresh_project: Path) -> None:
    edition_before = int(re.search(r"(?m)^version: (\d+)$", (fresh_project / "specs/editions/demo.yaml").read_text()).group(1))
    change_prompt(fresh_project)
    old, new = release_workload(fresh_project)
    result = compile_project(fresh_project)
    assert not result.diagnostics.items, result.diagnostics.sorted()
    recorded = {(r["kind"], r["id"], r["version"]) for r in ledger_records(fresh_project)}
    assert new == old + 1
    assert {("workload", "triage.ap-inbox", old), ("workload", "triage.ap-inbox", new),
            ("edition", "demo", edition_before), ("edition", "demo", edition_before + 1)} <= recorded
    lock = result.locks["demo"]
    assert f"triage.ap-inbox.v{new}" in lock["plan"]["workloads"] and f"triage.ap-inbox.v{old}" not in lock["plan"]["workloads"]
    assert "the following labels" in lock["plan"]["workloads"][f"triage.ap-inbox.v{new}"]["prompts"]["agentic"]["system"]["template"]
    assert (fresh_project / snapshot_path("workload", "triage.ap-inbox", new)).is_file()
    # Compiling again is a no-op.
    again = compile_project(fresh_project)
    assert not again.diagnostics.items and again.changed == []


def test_ledger_is_append_only(fresh_project: Path) -> None:
    before = (fresh_project / LEDGER).read_bytes()
    change_prompt(fresh_project)
    old, new = release_workload(fresh_project)
    assert not compile_project(fresh_project).diagnostics.has_errors
    after = (fresh_project / LEDGER).read_bytes()
    assert after.startswith(before) and len(after) > len(before)


def test_recorded_version_reused_with_other_content(fresh_project: Path) -> None:
    change_prompt(fresh_project)
    old, new = release_workload(fresh_project)
    assert not compile_project(fresh_project).diagnostics.has_errors  # ledger: old and new
    recorded = {r["version"] for r in ledger_records(fresh_project) if (r["kind"], r["id"]) == ("workload", "triage.ap-inbox")}
    assert {old, new} <= recorded and max(recorded) == new
    # Back to the old (recorded) version with content that is neither the old one's nor the new one's.
    edit(fresh_project, WORKLOAD, f"version: {new}", f"version: {old}")
    edit(fresh_project, WORKLOAD, "title: AP inbox triage", "title: AP inbox triage, third take")
    edit(fresh_project, EDITION, f"  - triage.ap-inbox.v{new}", f"  - triage.ap-inbox.v{old}")
    result = compile_project(fresh_project)
    workload = [d for d in errors(result) if d.path == WORKLOAD]
    assert [d.code for d in workload] == ["LRC5003"]
    assert f"reuses version {old}" in workload[0].summary and f"latest recorded: {new}" in workload[0].summary
    assert "changed: /title" in workload[0].notes
    assert f"set the version to {new + 1}" in workload[0].hint
    # The edition (bumped, now pinning the old workload version) changed without a bump.
    assert [d.code for d in errors(result) if d.path == EDITION] == ["LRC5001"]


def test_version_lower_than_recorded_with_old_content(fresh_project: Path) -> None:
    originals = {rel: (fresh_project / rel).read_bytes() for rel in (WORKLOAD, EDITION, SYSTEM_PROMPT)}
    change_prompt(fresh_project)
    old, new = release_workload(fresh_project)
    assert not compile_project(fresh_project).diagnostics.has_errors
    for rel, data in originals.items():  # a revert of the whole release: v1 content, v1 numbers
        (fresh_project / rel).write_bytes(data)
    result = compile_project(fresh_project)
    assert codes(result) == [("LRC5002", EDITION), ("LRC5002", WORKLOAD)]
    diag = next(d for d in errors(result) if d.path == WORKLOAD)
    assert diag.summary == f"workload triage.ap-inbox declares version {old}, lower than the recorded {new}"
    assert diag.line == line_of(fresh_project, WORKLOAD, "version:")


def test_version_lower_than_recorded_never_compiled(fresh_project: Path) -> None:
    """A version below the latest that was never recorded at all is backwards too."""
    old = version_of(fresh_project, "specs/systems/single-shot.yaml")
    with (fresh_project / LEDGER).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"digest": "sha256:" + "0" * 64, "id": "single-shot", "kind": "system", "version": old + 2}, sort_keys=True) + "\n")
    assert old + 1 not in {r["version"] for r in ledger_records(fresh_project) if (r["kind"], r["id"]) == ("system", "single-shot")}
    edit(fresh_project, "specs/systems/single-shot.yaml", f"version: {old}", f"version: {old + 1}")
    edit(fresh_project, "specs/systems/single-shot.yaml", "title: Single-shot", "title: Single shot")
    repin(fresh_project, f"single-shot.v{old}", f"single-shot.v{old + 1}")
    result = compile_project(fresh_project)
    assert ("LRC5002", "specs/systems/single-shot.yaml") in codes(result)


def test_bump_without_change_warns_and_compiles(fresh_project: Path) -> None:
    old, new = release_workload(fresh_project)
    result = compile_project(fresh_project)
    assert not result.diagnostics.has_errors
    [warning] = result.diagnostics.sorted()
    assert (warning.code, warning.severity, warning.path) == ("LRC5004", "warning", WORKLOAD)
    assert warning.summary == f"workload triage.ap-inbox was bumped to {new} but nothing changed since {old}"
    assert result.changed  # the new versions are recorded and the lock rewritten
    assert ("workload", "triage.ap-inbox", new) in {(r["kind"], r["id"], r["version"]) for r in ledger_records(fresh_project)}


def test_bump_without_change_ignores_a_tampered_snapshot(fresh_project: Path) -> None:
    """The 'nothing changed' judgement trusts a snapshot only if it still matches its ledger digest."""
    snap = fresh_project / snapshot_path("workload", "triage.ap-inbox", version_of(fresh_project, WORKLOAD))
    data = json.loads(snap.read_text(encoding="utf-8"))
    data["title"] = "edited by hand"
    snap.write_text(json.dumps(data), encoding="utf-8")
    edit(fresh_project, WORKLOAD, "title: AP inbox triage", "title: edited by hand")
    old, new = release_workload(fresh_project)
    result = compile_project(fresh_project)
    assert not result.diagnostics.items


def test_edition_change_without_bump(fresh_project: Path) -> None:
    edit(fresh_project, EDITION, "title: LedgerRate demo edition (embedded reference models)", "title: LedgerRate demo edition")
    result = compile_project(fresh_project)
    [diag] = errors(result)
    assert (diag.code, diag.path, diag.notes) == ("LRC5001", EDITION, ("changed: /title",))


def _drop_workloads_of(root: Path, primitive: str) -> None:
    """Remove the workloads of `primitive` and every edition's pin of them (editions bumped)."""
    import shutil

    for spec in sorted((root / "specs/workloads").glob("*/workload.yaml")):
        text = spec.read_text(encoding="utf-8")
        if re.search(rf"(?m)^primitive:\s*{primitive}\s*$", text):
            ident = re.search(r"(?m)^id:\s*(\S+)", text).group(1)
            shutil.rmtree(spec.parent)
            for edition in sorted((root / "specs/editions").glob("*.yaml")):
                old = edition.read_text(encoding="utf-8")
                new = re.sub(rf"(?m)^  - {re.escape(ident)}\.v\d+\n", "", old)
                if new != old:
                    edition.write_text(new, encoding="utf-8")
                    if edition.stem != "demo":
                        bump_ok(root, edition.stem)


def test_standard_drops_a_primitive_within_methodology_1(fresh_project: Path) -> None:
    try:
        dropped = unused_primitive(fresh_project)
    except AssertionError:  # every primitive has a workload: drop the last one's workloads first
        dropped = "synthesize"
        _drop_workloads_of(fresh_project, dropped)
    standard_before = version_of(fresh_project, STANDARD)
    bump_ok(fresh_project, "ledgerrate")
    text = (fresh_project / STANDARD).read_text(encoding="utf-8")
    (fresh_project / STANDARD).write_text(re.sub(rf"  - id: {dropped}\n    definition: .*\n", "", text), encoding="utf-8")
    repin(fresh_project, f"ledgerrate.v{standard_before}", f"ledgerrate.v{standard_before + 1}")
    bump_ok(fresh_project, "demo")
    result = compile_project(fresh_project)
    [diag] = errors(result)
    assert (diag.code, diag.path, diag.pointer) == ("LRC5005", STANDARD, "/primitives")
    assert diag.notes == (f"removed: {dropped}",)
    assert "methodology 2.0" in diag.hint


def test_standard_may_change_primitives_with_a_new_methodology_major(fresh_project: Path) -> None:
    standard_before = version_of(fresh_project, STANDARD)
    bump_ok(fresh_project, "ledgerrate")
    edit(fresh_project, STANDARD, 'methodology: "1.0"', 'methodology: "2.0"')
    edit(fresh_project, STANDARD, "  - id: query\n", "  - id: forecast\n    definition: Project a figure forward from history.\n  - id: query\n")
    repin(fresh_project, f"ledgerrate.v{standard_before}", f"ledgerrate.v{standard_before + 1}")
    bump_ok(fresh_project, "demo")
    result = compile_project(fresh_project)
    assert not result.diagnostics.has_errors, result.diagnostics.sorted()


def test_damaged_ledger_line(fresh_project: Path) -> None:
    path = fresh_project / LEDGER
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3] = lines[3][: len(lines[3]) // 2] + "\n"  # a line cut in half
    path.write_text("".join(lines), encoding="utf-8")
    result = compile_project(fresh_project)
    damaged = [d for d in errors(result) if d.code == "LRC5006"]
    assert [(d.path, d.line) for d in damaged] == [(LEDGER, 4)]


def test_removed_ledger_entry_is_a_check_failure(fresh_project: Path) -> None:
    path = fresh_project / LEDGER
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]), encoding="utf-8")
    result = compile_project(fresh_project, check=True)
    assert [(d.code, d.path) for d in errors(result)] == [("LRC7004", LEDGER)]


# -- edits that are not changes ---------------------------------------------------------------


def test_comments_key_order_and_style_need_no_bump(fresh_project: Path) -> None:
    before = compile_project(fresh_project, check=True)
    assert not before.diagnostics.items
    root_digest = before.locks["demo"]["root_digest"]
    path = fresh_project / WORKLOAD
    text = path.read_text(encoding="utf-8")
    # Comments, a moved key, block -> flow style and a different indentation.
    text = text.replace("title: AP inbox triage\n", "# a new comment\n")
    text = text.replace("rate_card:\n  job: Sort 1,000 AP emails\n  volume_units: 1000\n",
                        "rate_card: {volume_units: 1000, job: 'Sort 1,000 AP emails'}  # flow style now\n"
                        "title: AP inbox triage   # moved to the end of the mapping\n")
    text = text.replace("reference:\n  implementation: triage.ap-inbox.reference.v1\n",
                        "reference:\n        implementation: triage.ap-inbox.reference.v1\n")
    path.write_text(text, encoding="utf-8")
    after = compile_project(fresh_project)
    assert not after.diagnostics.items, after.diagnostics.sorted()
    assert after.changed == []
    assert after.locks["demo"]["root_digest"] == root_digest


def test_writing_a_default_out_needs_no_bump(fresh_project: Path) -> None:
    """Defaults are applied before hashing: spelling one out is not a change."""
    edit(fresh_project, "specs/systems/agentic.yaml", "retry_model_failures: false\n", "")
    edit(fresh_project, EDITION, "errata: []\n", "")
    result = compile_project(fresh_project)
    assert not result.diagnostics.items and result.changed == []


# -- code components -------------------------------------------------------------------------


def _generator(runtime_root: Path | None = None) -> codeprint.Component:
    comps = codeprint.discover(runtime_root or codeprint.runtime_root())
    [comp] = [c for c in comps.values() if c.id == GENERATOR]
    return comp


def test_generator_changed_without_bump_fabricated_ledger(fresh_project: Path) -> None:
    """The ledger says generator v1 had another fingerprint, and its snapshot one other file digest."""
    comp = _generator()
    module = comp.path.resolve().relative_to(codeprint.project_root()).as_posix()
    records = ledger_records(fresh_project)
    for rec in records:
        if (rec["kind"], rec["id"], rec["version"]) == ("code", GENERATOR, comp.version):
            rec["digest"] = "sha256:" + "ab" * 32
    (fresh_project / LEDGER).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records), encoding="utf-8")
    snap = fresh_project / snapshot_path("code", GENERATOR, comp.version)
    data = json.loads(snap.read_text(encoding="utf-8"))
    assert module in data["files"]
    data["files"][module] = "sha256:" + "cd" * 32
    snap.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    result = compile_project(fresh_project)
    [diag] = errors(result)
    assert diag.code == "LRC5101"
    assert (diag.path, diag.line, diag.column) == (module, comp.version_line, comp.version_col)
    assert diag.pointer is None
    assert diag.notes == (f"changed: {module}",)
    assert f"lrc bump {GENERATOR}" in diag.hint


def test_code_change_in_a_runtime_copy_is_caught(fresh_project: Path, runtime_copy) -> None:
    runtime = runtime_copy(fresh_project)
    comp = _generator(runtime)
    text = comp.path.read_text(encoding="utf-8")
    comp.path.write_text(text + "\n\n_LRC_TEST_BEHAVIOUR_CHANGE = 1\n", encoding="utf-8")
    result = compile_project(fresh_project)
    [diag] = errors(result)
    assert (diag.code, diag.path) == ("LRC5101", "runtime/workloads/triage_ap_inbox/generator.py")
    assert diag.notes == ("changed: runtime/workloads/triage_ap_inbox/generator.py",)


def test_shared_helper_change_reaches_every_importer(fresh_project: Path, runtime_copy) -> None:
    """A change in a module a component imports (transitively) is a change of the component."""
    runtime = runtime_copy(fresh_project)
    comp = _generator(runtime)
    printed = codeprint.fingerprint(comp)
    helper = next(f for f in printed.files if f != "runtime/workloads/triage_ap_inbox/generator.py" and not f.endswith("__init__.py"))
    path = fresh_project / helper
    path.write_text(path.read_text(encoding="utf-8") + "\n\n_LRC_TEST_HELPER_CHANGE = 1\n", encoding="utf-8")
    result = compile_project(fresh_project)
    flagged = {d.summary.split()[2] for d in errors(result) if d.code == "LRC5101"}
    assert GENERATOR in flagged
    expected = {c.id for c in codeprint.discover(runtime).values() if helper in codeprint.fingerprint(c).files}
    assert flagged == expected
    assert all(d.notes == (f"changed: {helper}",) for d in errors(result))


def test_comment_and_docstring_edits_of_code_are_not_changes(fresh_project: Path, runtime_copy) -> None:
    runtime = runtime_copy(fresh_project)
    comp = _generator(runtime)
    text = comp.path.read_text(encoding="utf-8")
    comp.path.write_text("# a new comment at the top\n" + text.replace("\n\n\n", "\n\n\n# another comment\n", 1), encoding="utf-8")
    result = compile_project(fresh_project)
    assert not result.diagnostics.items
    assert result.changed == []


def test_code_bump_after_change_compiles(fresh_project: Path, runtime_copy) -> None:
    runtime = runtime_copy(fresh_project)
    comp = _generator(runtime)
    comp.path.write_text(comp.path.read_text(encoding="utf-8") + "\n\n_LRC_TEST_BEHAVIOUR_CHANGE = 1\n", encoding="utf-8")
    bump_ok(fresh_project, GENERATOR)
    assert f"COMPONENT_VERSION = {comp.version + 1}\n" in comp.path.read_text(encoding="utf-8")
    # The workload pins the old generator version, which no longer exists: bump it and the edition too.
    result = compile_project(fresh_project)
    assert [d.code for d in errors(result)] == ["LRC3001"]
    edit(fresh_project, WORKLOAD, f"generator: {GENERATOR}.v{comp.version}", f"generator: {GENERATOR}.v{comp.version + 1}")
    old, new = release_workload(fresh_project)
    result = compile_project(fresh_project)
    assert not result.diagnostics.has_errors, result.diagnostics.sorted()
    assert f"{GENERATOR}.v{comp.version + 1}" in result.locks["demo"]["plan"]["code"]
