"""`lrc bump --all-required --update-pins`: one command from an edit to a tree `lrc compile`
accepts, editing only version and pin tokens.

Every test runs the real command line (a subprocess) on its own copy of the repository's
specs/ and schemas/ with a generated/ (and compile cache) compiled from scratch, so nothing
depends on what an earlier command left in the tree. Code components are changed in a copy of
runtime/ that the subprocess reads instead of the real one (codeprint.runtime_root is pointed at it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from helpers.project import compiled_copy, copy_project, replace_in
from support import REPO, pinned, run_lrc

pytestmark = pytest.mark.usefixtures("code_is_locked")  # conftest says why


WORKLOAD = "specs/workloads/triage.ap-inbox/workload.yaml"
SYSTEM_PROMPT = "specs/workloads/triage.ap-inbox/prompts/system.j2"
DEMO = "specs/editions/demo.yaml"
DECEMBER = "specs/editions/2026-12.yaml"
TOOLS = "workloads/triage_ap_inbox/tools.py"

# Run before the CLI in the command's process: the compiler reads code from the project's copy.
WITH_RUNTIME = """\
from pathlib import Path
from lrc.runtime.lock import codeprint
codeprint.runtime_root = lambda: Path({runtime!r})
"""


@pytest.fixture(scope="module")
def _baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compiled_copy(tmp_path_factory.mktemp("pins-baseline") / "project")


@pytest.fixture
def project(_baseline: Path, tmp_path: Path) -> Path:
    return copy_project(_baseline, tmp_path / "project")


def _versions(project: Path, rel: str) -> int:
    import re

    return int(re.search(r"(?m)^version: (\d+)", (project / rel).read_text(encoding="utf-8")).group(1))


def _line(project: Path, rel: str, prefix: str) -> int:
    """The 1-based line of `rel` that starts with `prefix` (line numbers follow the spec files)."""
    lines = (project / rel).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, start=1) if line.startswith(prefix))


def _pins(project: Path) -> tuple[str, str]:
    """The triage pin the editions carry now and the one a bump writes (the baseline is compiled
    from scratch, so its ledger records only the current version: the bump goes to current + 1)."""
    v = _versions(project, WORKLOAD)
    return f"triage.ap-inbox.v{v}", f"triage.ap-inbox.v{v + 1}"


DEMO_WORKLOADS = ("extract.invoice", "triage.ap-inbox", "reconcile.ledger", "query.nl2sql", "execute.month-end",
                  "generate.variance-commentary", "synthesize.board-brief")


def _compiles_clean(project: Path, lrc=run_lrc) -> None:
    res = lrc("compile", cwd=project)
    assert res.returncode == 0, res.stderr
    res = lrc("compile", "--check", cwd=project)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "up to date" in res.stdout


def test_one_word_prompt_edit_is_one_command(project: Path) -> None:
    replace_in(project / SYSTEM_PROMPT, "You are", "You are a careful")
    demo_before = (project / DEMO).read_text(encoding="utf-8")
    dec_before = (project / DECEMBER).read_text(encoding="utf-8")
    demo_v, dec_v = _versions(project, DEMO), _versions(project, DECEMBER)
    wl_v = _versions(project, WORKLOAD)
    old_pin, new_pin = _pins(project)
    wl_line, demo_line, dec_line = _line(project, WORKLOAD, "version:"), _line(project, DEMO, "version:"), _line(project, DECEMBER, "version:")
    pin_line = _line(project, DEMO, f"  - {old_pin}")
    assert f"  - {old_pin}\n" in demo_before and old_pin in dec_before

    res = run_lrc("bump", "--all-required", "--update-pins", cwd=project)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert f"{WORKLOAD}:{wl_line}: version: {wl_v} → version: {wl_v + 1}" in lines
    assert f"{DEMO}:{pin_line}: {old_pin} → {new_pin}" in lines
    assert f"{DEMO}:{demo_line}: version: {demo_v} → version: {demo_v + 1}" in lines
    assert f"{DECEMBER}:{dec_line}: version: {dec_v} → version: {dec_v + 1}" in lines
    assert any(line.startswith(f"{DECEMBER}:") and line.endswith(f"{old_pin} → {new_pin}") for line in lines)
    # Only the version and pin tokens changed: comments, quoting and layout are the author's.
    assert (project / DEMO).read_text(encoding="utf-8") == demo_before.replace(
        f"\nversion: {demo_v}\n", f"\nversion: {demo_v + 1}\n").replace(f"  - {old_pin}\n", f"  - {new_pin}\n")
    after = (project / DECEMBER).read_text(encoding="utf-8")
    assert after == dec_before.replace(f"\nversion: {dec_v}\n", f"\nversion: {dec_v + 1}\n").replace(old_pin, new_pin)
    _compiles_clean(project)
    res = run_lrc("bump", "--all-required", "--update-pins", cwd=project)
    assert res.returncode == 0 and "Nothing to bump" in res.stdout


# The default run keeps two layouts (a quoted pin, CRLF line ends); the other three are slow variants.
@pytest.mark.parametrize("layout", ["quoted", pytest.param("single-quoted", marks=pytest.mark.slow),
                                    pytest.param("flow", marks=pytest.mark.slow), "crlf",
                                    pytest.param("commented", marks=pytest.mark.slow)])
def test_pins_are_rewritten_in_place_whatever_their_layout(project: Path, layout: str) -> None:
    path = project / DEMO
    text = path.read_text(encoding="utf-8")
    old_pin, new_pin = _pins(project)
    pins = [pinned(w) for w in DEMO_WORKLOADS]
    assert old_pin in pins
    block = "".join(f"  - {pin}\n" for pin in pins)
    assert "workloads:\n" + block in text
    if layout == "quoted":
        text = text.replace(f"  - {old_pin}\n", f'  - "{old_pin}"   # the triage workload\n')
    elif layout == "single-quoted":
        text = text.replace(f"  - {old_pin}\n", f"  - '{old_pin}'\n")
    elif layout == "flow":
        text = text.replace("workloads:\n" + block, f"workloads: [{pins[0]}, {pins[1]},  {pins[2]},"
                            f" {', '.join(pins[3:])}]  # every workload\n")
    elif layout == "commented":
        text = text.replace(f"  - {old_pin}\n", f"  # {old_pin} is the classify workload\n  - {old_pin} # pinned\n")
    elif layout == "crlf":
        text = text.replace("\n", "\r\n")
    path.write_bytes(text.encode("utf-8"))
    assert run_lrc("compile", cwd=project).returncode == 0  # the new layout is recorded first
    demo_v = _versions(project, DEMO)
    replace_in(project / SYSTEM_PROMPT, "You are", "You are a careful")
    res = run_lrc("bump", "--all-required", "--update-pins", cwd=project)
    assert res.returncode == 0, res.stderr
    expected = text.replace(f"version: {demo_v}\r\n" if layout == "crlf" else f"version: {demo_v}\n",
                            f"version: {demo_v + 1}\r\n" if layout == "crlf" else f"version: {demo_v + 1}\n", 1)
    if layout == "commented":  # the comment mentions the old pin: it is not a value, so it stays
        expected = expected.replace(f"  - {old_pin} # pinned", f"  - {new_pin} # pinned")
    else:
        expected = expected.replace(old_pin, new_pin)
    assert path.read_bytes() == expected.encode("utf-8")
    _compiles_clean(project)


def test_pins_left_stale_by_an_earlier_bump_are_repaired(project: Path) -> None:
    """The six-command path, abandoned half way: a plain bump left the editions pinning the old version."""
    old_pin, new_pin = _pins(project)
    replace_in(project / SYSTEM_PROMPT, "You are", "You are a careful")
    assert run_lrc("bump", "triage.ap-inbox", cwd=project).returncode == 0
    assert run_lrc("compile", cwd=project).returncode == 1  # the editions pin a version that is gone
    res = run_lrc("bump", "--all-required", "--update-pins", "--format", "json", cwd=project)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    Draft202012Validator(json.loads((REPO / "schemas/diagnostics.schema.json").read_text(encoding="utf-8"))).validate(doc)
    assert doc["update_pins"] is True and doc["ok"] is True
    assert {(e["path"], e["old"], e["new"]) for e in doc["edits"] if e["what"] == "pin"} == {
        (DEMO, old_pin, new_pin), (DECEMBER, old_pin, new_pin)}
    assert sorted(b["id"] for b in doc["bumped"]) == ["2026-12", "demo"]
    _compiles_clean(project)


def _with_runtime(runtime: Path):
    """`lrc ARGS` reading the runtime code at `runtime`: a zygote fork with the patch as its
    preamble (a plain `python -c PREAMBLE+main()` subprocess where no fork can stand in)."""
    from helpers import zygote

    def lrc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        return zygote.run(list(args), dict(os.environ), cwd, 300, preamble=WITH_RUNTIME.format(runtime=str(runtime)))
    return lrc


def test_component_change_bumps_the_component_its_workload_and_the_editions(project: Path) -> None:
    runtime = project / "runtime"
    shutil.copytree(REPO / "runtime", runtime, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    lrc = _with_runtime(runtime)
    assert lrc("compile", "--check", cwd=project).returncode == 0
    tools = runtime / TOOLS
    source = tools.read_text(encoding="utf-8")
    import re

    tools_v = int(re.search(r"(?m)^COMPONENT_VERSION = (\d+)$", source).group(1))
    tools_line = next(i for i, line in enumerate(source.splitlines(), start=1) if line.startswith("COMPONENT_VERSION = "))
    wl_v = _versions(project, WORKLOAD)
    wl_line, demo_line, dec_line = _line(project, WORKLOAD, "version:"), _line(project, DEMO, "version:"), _line(project, DECEMBER, "version:")
    old_pin, new_pin = _pins(project)
    pin_line = _line(project, DEMO, f"  - {old_pin}")
    tools.write_text(source + "\n\ndef _added_helper(x):\n    return x + 1\n", encoding="utf-8")
    assert "LRC5101" in lrc("compile", cwd=project).stderr

    res = lrc("bump", "--all-required", "--update-pins", cwd=project)
    assert res.returncode == 0, res.stderr
    out = res.stdout.splitlines()
    assert (f"runtime/workloads/triage_ap_inbox/tools.py:{tools_line}: COMPONENT_VERSION = {tools_v}"
            f" → COMPONENT_VERSION = {tools_v + 1}") in out
    assert any(line.startswith(f"{WORKLOAD}:") and line.endswith(f"triage.ap-inbox.tools.v{tools_v} → triage.ap-inbox.tools.v{tools_v + 1}")
               for line in out)
    assert f"{WORKLOAD}:{wl_line}: version: {wl_v} → version: {wl_v + 1}" in out
    assert f"{DEMO}:{pin_line}: {old_pin} → {new_pin}" in out
    assert any(line.startswith(f"{DEMO}:{demo_line}: version: ") for line in out)
    assert any(line.startswith(f"{DECEMBER}:{dec_line}: version: ") for line in out)
    # Order: the component first, then what pins it, then what pins that.
    order = [next(i for i, line in enumerate(out) if needle in line)
             for needle in ("COMPONENT_VERSION", f"triage.ap-inbox.tools.v{tools_v + 1}", f"{WORKLOAD}:{wl_line}:",
                            f"{DEMO}:{pin_line}:", f"{DEMO}:{demo_line}:")]
    assert order == sorted(order)
    assert f"COMPONENT_VERSION = {tools_v}\n" in source
    assert tools.read_text(encoding="utf-8") == source.replace(f"COMPONENT_VERSION = {tools_v}", f"COMPONENT_VERSION = {tools_v + 1}", 1) + \
        "\n\ndef _added_helper(x):\n    return x + 1\n"
    _compiles_clean(project, lrc)


def test_a_pin_lrc_cannot_edit_alone_leaves_the_file_untouched(project: Path) -> None:
    path = project / DEMO
    old_pin, new_pin = _pins(project)
    text = path.read_text(encoding="utf-8")
    assert f"  - {old_pin}\n" in text
    text = text.replace(f"  - {old_pin}\n", f"  - >-\n    {old_pin}\n")
    path.write_text(text, encoding="utf-8")
    assert run_lrc("compile", cwd=project).returncode == 0
    replace_in(project / SYSTEM_PROMPT, "You are", "You are a careful")
    before = path.read_bytes()
    res = run_lrc("bump", "--all-required", "--update-pins", cwd=project)
    assert res.returncode == 1
    assert "error[LRC8002]" in res.stderr and f"write {new_pin} there by hand" in res.stderr
    assert "Traceback" not in res.stderr
    assert path.read_bytes() == before


def test_update_pins_needs_all_required_and_without_it_nothing_is_rewritten(project: Path) -> None:
    res = run_lrc("bump", "--update-pins", cwd=project)
    assert res.returncode == 2 and "--all-required" in res.stderr
    replace_in(project / SYSTEM_PROMPT, "You are", "You are a careful")
    before = (project / DEMO).read_bytes()
    res = run_lrc("bump", "--all-required", cwd=project)
    assert res.returncode == 0 and "update them by hand" in res.stdout
    assert (project / DEMO).read_bytes() == before


def test_update_pins_github_format_annotates_every_edit(project: Path) -> None:
    old_pin, new_pin = _pins(project)
    wl_v = _versions(project, WORKLOAD)
    pin_line, wl_line = _line(project, DEMO, f"  - {old_pin}"), _line(project, WORKLOAD, "version:")
    replace_in(project / SYSTEM_PROMPT, "You are", "You are a careful")
    res = run_lrc("bump", "--all-required", "--update-pins", "--format", "github", cwd=project)
    assert res.returncode == 0, res.stderr
    notices = [line for line in res.stdout.splitlines() if line.startswith("::notice ")]
    assert any(line.startswith(f"::notice file={DEMO},line={pin_line},") and f"{old_pin} → {new_pin}" in line for line in notices)
    assert any(line.startswith(f"::notice file={WORKLOAD},line={wl_line},") and f"version: {wl_v} → version: {wl_v + 1}" in line
               for line in notices)
    assert len(notices) == 5  # the workload's version, two pins, two editions' versions
