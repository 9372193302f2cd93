"""Policies the standard states and the compiler enforces (issue 9 §4): the standard's n per
cell (LRC6110), its agentic step cap (LRC6111), fresh seeds for every edition (LRC6112) and
the analysis code pinned and fingerprinted like generators and graders.

Each test compiles a copy of the repository's specs (no generated/, so the ledger holds only
what is compiled now) with one edit, in several variants, from a warm compile cache."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lrc.compiler.pipeline import compile_project
from lrc.compiler.seeds import commitment
from helpers.project import compiled_copy, copy_project, replace_in
from support import pinned

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def _baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compiled_copy(tmp_path_factory.mktemp("policies-baseline"))


@pytest.fixture
def root(_baseline: Path, tmp_path: Path) -> Path:
    """A copy of the repository's specs and schemas with the warm compile cache, without the
    baseline's generated/ (so the ledger holds only what the test compiles)."""
    return copy_project(_baseline, tmp_path, generated=False)


def _diags(result, code: str, severity: str = "error") -> list:
    return [d for d in result.diagnostics.items if d.code == code and d.severity == severity]


def _standard_n(root: Path) -> int:
    return int(re.search(r"(?m)^  n_per_cell: (\d+)", (root / "specs/standard/ledgerrate.yaml").read_text()).group(1))


# -- n per cell ---------------------------------------------------------------------------

@pytest.mark.parametrize("edition", ["demo", "2026-12"])
@pytest.mark.parametrize("n", [1, 4, 5, 14])
def test_an_edition_below_the_standards_n_is_refused(root: Path, edition: str, n: int):
    path = root / f"specs/editions/{edition}.yaml"
    replace_in(path, "n_per_cell: 15", f"n_per_cell: {n}")
    found = _diags(compile_project(root), "LRC6110")
    assert len(found) == 1 and found[0].path == f"specs/editions/{edition}.yaml" and found[0].pointer == "/n_per_cell"
    assert f"n_per_cell {n} is below the standard's n of 15" in found[0].summary


@pytest.mark.parametrize("n", [15, 16, 40])
def test_the_standards_n_or_more_compiles(root: Path, n: int):
    replace_in(root / "specs/editions/demo.yaml", "n_per_cell: 15", f"n_per_cell: {n}")
    result = compile_project(root)
    assert not result.diagnostics.has_errors, [d.summary for d in result.diagnostics.items]


def test_the_shipped_editions_run_the_standards_n():
    root = REPO
    n = _standard_n(root)
    for path in sorted((root / "specs/editions").glob("*.yaml")):
        got = int(re.search(r"(?m)^n_per_cell: (\d+)", path.read_text()).group(1))
        assert got >= n, f"{path.name} runs {got} per cell, below the standard's {n}"


def test_the_n_compared_is_the_pinned_standards(root: Path):
    """Raising the standard's n (a new standard version) refuses the editions that pin it."""
    replace_in(root / "specs/standard/ledgerrate.yaml", "  n_per_cell: 15", "  n_per_cell: 20")
    found = _diags(compile_project(root), "LRC6110")
    assert sorted(d.path for d in found) == ["specs/editions/2026-12.yaml", "specs/editions/demo.yaml"]


# -- step cap -----------------------------------------------------------------------------

@pytest.mark.parametrize("system,old,new", [
    ("agentic", "max_steps: 25", "max_steps: 26"),
    ("agentic", "max_steps: 25", "max_steps: 60"),
    ("direct", "max_steps: 25", "max_steps: 30"),
    ("orchestrated", "max_steps: 25", "max_steps: 40"),
])
def test_a_tool_loop_above_the_step_cap_is_refused(root: Path, system: str, old: str, new: str):
    replace_in(root / f"specs/systems/{system}.yaml", old, new)
    found = _diags(compile_project(root), "LRC6111")
    assert len(found) == 1 and found[0].path == f"specs/systems/{system}.yaml" and found[0].pointer == "/max_steps"
    assert "exceeds the standard's step cap of 25" in found[0].summary


def test_the_cap_itself_and_a_lower_cap_compile(root: Path):
    replace_in(root / "specs/systems/agentic.yaml", "max_steps: 25", "max_steps: 10")
    assert not _diags(compile_project(root), "LRC6111")


def test_a_lower_standard_cap_refuses_systems_above_it(root: Path):
    replace_in(root / "specs/standard/ledgerrate.yaml", "max_agentic_steps: 25", "max_agentic_steps: 20")
    found = _diags(compile_project(root), "LRC6111")
    systems = ["specs/systems/agentic.yaml", "specs/systems/direct.yaml", "specs/systems/orchestrated.yaml"]
    tasks = sorted(p.relative_to(root).as_posix() for p in (root / "specs/tasks").glob("*/task.yaml"))  # their budgets: 25 steps
    assert tasks and sorted(d.path for d in found) == sorted(systems + tasks)


# -- fresh seeds --------------------------------------------------------------------------

HELD = re.compile(r"commitment: (sha256:[0-9a-f]{64})")


def _new_edition(root: Path, ident: str, seed_block: str) -> Path:
    text = (root / "specs/editions/2026-12.yaml").read_text()
    text = re.sub(r"(?m)^id: 2026-12$", f"id: {ident}", text)
    text = re.sub(r"(?m)^version: \d+$", "version: 1", text)
    text = re.sub(r"(?ms)^seed:\n  policy: held-out\n  commitment: \S+\n", seed_block, text)
    path = root / f"specs/editions/{ident}.yaml"
    path.write_text(text)
    return path


def test_a_second_edition_with_the_same_held_out_commitment_is_refused_both_ways(root: Path):
    old = HELD.search((root / "specs/editions/2026-12.yaml").read_text()).group(1)
    _new_edition(root, "2027-01", f"seed:\n  policy: held-out\n  commitment: {old}\n")
    found = _diags(compile_project(root), "LRC6112")
    assert sorted(d.path for d in found) == ["specs/editions/2026-12.yaml", "specs/editions/2027-01.yaml"]
    assert all(d.pointer == "/seed/commitment" for d in found)


def test_a_commitment_recorded_for_an_earlier_edition_is_refused_after_that_edition_moved_on(root: Path):
    """2026-12 v1 is recorded with commitment A; it then moves to a fresh seed at v2. A new
    edition reusing A is still refused: the ledger remembers."""
    assert not compile_project(root).diagnostics.has_errors  # records 2026-12 at its version
    path = root / "specs/editions/2026-12.yaml"
    old = HELD.search(path.read_text()).group(1)
    version = int(re.search(r"(?m)^version: (\d+)$", path.read_text()).group(1))
    replace_in(path, old, commitment("a fresh seed"))
    replace_in(path, f"version: {version}", f"version: {version + 1}")
    assert not compile_project(root).diagnostics.has_errors, "an edition may change its own seed with a bump"
    _new_edition(root, "2027-01", f"seed:\n  policy: held-out\n  commitment: {old}\n")
    found = _diags(compile_project(root), "LRC6112")
    assert [(d.path, d.summary) for d in found] == [
        ("specs/editions/2027-01.yaml", f"the held-out seed commitment was already committed to by 2026-12.v{version}")]


def test_an_editions_own_later_version_keeps_its_commitment(root: Path):
    assert not compile_project(root).diagnostics.has_errors
    path = root / "specs/editions/2026-12.yaml"
    version = int(re.search(r"(?m)^version: (\d+)$", path.read_text()).group(1))
    replace_in(path, f"version: {version}", f"version: {version + 1}")
    replace_in(path, "window_hours: 72", "window_hours: 48")
    result = compile_project(root)
    assert not result.diagnostics.has_errors and not _diags(result, "LRC6112", "warning")


@pytest.mark.parametrize("value", ["ledgerrate-demo-2026-11"])
def test_a_held_out_commitment_to_a_published_seed_is_refused(root: Path, value: str):
    _new_edition(root, "2027-01", f"seed:\n  policy: held-out\n  commitment: {commitment(value)}\n")
    found = _diags(compile_project(root), "LRC6112")
    assert [d.path for d in found] == ["specs/editions/2027-01.yaml"]
    assert "published by demo.v" in found[0].summary


def test_a_public_seed_used_by_two_editions_is_a_warning_on_each(root: Path):
    _new_edition(root, "2027-01", "seed:\n  policy: public\n  value: ledgerrate-demo-2026-11\n")
    result = compile_project(root)
    assert not _diags(result, "LRC6112")
    found = _diags(result, "LRC6112", "warning")
    assert sorted(d.path for d in found) == ["specs/editions/2027-01.yaml", "specs/editions/demo.yaml"]


def test_fresh_seeds_compile_quietly(root: Path):
    _new_edition(root, "2027-01", f"seed:\n  policy: held-out\n  commitment: {commitment('another seed')}\n")
    result = compile_project(root)
    assert not _diags(result, "LRC6112") and not _diags(result, "LRC6112", "warning")


# -- analysis code ------------------------------------------------------------------------

def test_the_lock_fingerprints_the_analysis_code_the_edition_pins(root: Path):
    result = compile_project(root)
    assert not result.diagnostics.has_errors
    for lock in result.locks.values():
        plan = lock["plan"]
        ref = plan["edition"]["spec"]["analysis"]
        entry = plan["code"][ref]
        assert entry["id"] == "lrc.analysis" and entry["module"] == "lrc.runtime.report.outputs"
        covered = set(entry["files"])
        for module in ("runtime/report/aggregate.py", "runtime/report/stats.py", "runtime/report/ratecard.py",
                       "runtime/report/outputs.py", "runtime/pricing.py", "runtime/grading.py"):
            assert any(f.endswith(module.removeprefix("runtime/")) or f == module for f in covered), (module, sorted(covered))


@pytest.mark.parametrize("ref,code", [
    ("lrc.analysis", "LRC3002"),
    ("lrc.analysis.v999", "LRC3001"),  # a version that does not exist (not a past one: v9 is in the ledger)
    ("lrc.output-contract.vCURRENT", "LRC3008"),  # an existing component that is not the analysis code
])
def test_an_edition_must_pin_the_analysis_code(root: Path, ref: str, code: str):
    from lrc.runtime.checks import contract

    ref = ref.replace("vCURRENT", f"v{contract.COMPONENT_VERSION}")
    replace_in(root / "specs/editions/demo.yaml", f"analysis: {pinned('lrc.analysis')}", f"analysis: {ref}")
    found = _diags(compile_project(root), code)
    assert [(d.path, d.pointer) for d in found] == [("specs/editions/demo.yaml", "/analysis")]


def test_an_edition_without_analysis_is_a_schema_error(root: Path):
    path = root / "specs/editions/demo.yaml"
    path.write_text(re.sub(r"(?m)^analysis: .*\n", "", path.read_text()))
    found = _diags(compile_project(root), "LRC2002")
    assert found and "analysis" in found[0].summary


# Two modules by default (the statistics and the prices); the other three under --slow.
@pytest.mark.parametrize("module", ["report/stats.py", *(pytest.param(m, marks=pytest.mark.slow) for m in
                                    ("report/aggregate.py", "report/ratecard.py", "report/outputs.py")), "pricing.py"])
def test_changing_the_analysis_code_without_a_bump_is_refused(fresh_project: Path, runtime_copy, module: str):
    """Every module behind a published figure is covered: a change is LRC5101 for lrc.analysis."""
    runtime = runtime_copy(fresh_project)
    path = runtime / module
    path.write_text(path.read_text(encoding="utf-8") + "\n\n_LRC_TEST_ANALYSIS_CHANGE = 1\n", encoding="utf-8")
    result = compile_project(fresh_project)
    flagged = {d.summary.split()[2] for d in result.diagnostics.items if d.code == "LRC5101"}
    assert "lrc.analysis" in flagged
    assert all(d.notes == (f"changed: runtime/{module}",) for d in result.diagnostics.items if d.code == "LRC5101")


# -- a system's budget binds only the task runs it makes (LRC6012) -------------------------

def _budget_on_agentic(root: Path) -> None:
    path = root / "specs/systems/agentic.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "budget:\n  max_tool_calls: 10\n", encoding="utf-8")


def test_a_system_budget_that_binds_no_run_is_a_warning_at_the_editions_entry(root: Path):
    """agentic.v2 runs the workloads only wherever the edition lists a task system (direct,
    orchestrated): a budget on it would be locked and bind nothing, so each edition that lists it
    gets LRC6012 at its `systems` entry. The systems that do run tasks keep theirs silently."""
    assert not _diags(compile_project(root), "LRC6012", "warning")  # direct.v2 and orchestrated.v4 have budgets
    _budget_on_agentic(root)
    found = _diags(compile_project(root), "LRC6012", "warning")
    assert sorted((d.path, d.pointer) for d in found) == [("specs/editions/2026-12.yaml", "/systems/1"),
                                                         ("specs/editions/demo.yaml", "/systems/1")]
    assert all("agentic.v2's budget is never applied" in d.summary for d in found)


def test_an_agentic_system_that_runs_the_tasks_keeps_its_budget_without_a_warning(root: Path):
    """An edition that lists no task system runs its tasks on its agentic systems, so their
    budget binds those runs: no warning."""
    _budget_on_agentic(root)
    for edition in ("demo", "2026-12"):
        path = root / f"specs/editions/{edition}.yaml"
        text, count = re.subn(r"(?m)^  - (?:direct|orchestrated)\.v\d+\b.*\n", "", path.read_text(encoding="utf-8"))
        assert count == 2
        path.write_text(text, encoding="utf-8")
    result = compile_project(root)
    assert not _diags(result, "LRC6012", "warning"), [d.summary for d in result.diagnostics.items]
