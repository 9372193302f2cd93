"""A pull request can commit more than specs: symlinks where lrc writes (generated/,
.lrc-cache/), folders nested a thousand deep, numbers too long for Python to print, templates
nested too deep for jinja's parser, JSON with repeated keys. Each gets a diagnostic and exit 1
-- never a write or a removal outside the project, never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.load import load_text
from lrc.compiler.pipeline import compile_project

WORKLOAD = "specs/workloads/triage.ap-inbox"


def _codes(result) -> list[tuple[str, str, str | None]]:
    return [(d.severity, d.code, d.path) for d in result.diagnostics.sorted()]


def _outside(tmp_path: Path) -> Path:
    """A folder outside the project with a file lrc must never touch."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.txt").write_text("keep me\n")
    (folder / "plan.lock").write_text("not lrc's\n")
    return folder


def _dirty_cache(root: Path) -> None:
    """No compile cache yet, and a spec whose bytes (not meaning) changed: the compile saves one."""
    shutil.rmtree(root / ".lrc-cache", ignore_errors=True)
    spec = root / WORKLOAD / "workload.yaml"
    spec.write_text(spec.read_text() + "# a comment\n")


def _untouched(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == ["plan.lock", "victim.txt"]
    assert (folder / "victim.txt").read_text() == "keep me\n"
    assert (folder / "plan.lock").read_text() == "not lrc's\n"


@pytest.mark.parametrize("link", ["generated", "generated/demo", "generated/demo/prompts"])
@pytest.mark.parametrize("check", [False, True])
def test_a_symlink_in_generated_is_refused_and_nothing_is_written_through_it(fresh_project: Path, tmp_path: Path,
                                                                              link: str, check: bool) -> None:
    outside = _outside(tmp_path)
    target = fresh_project / link
    assert target.is_dir()
    os.rename(target, tmp_path / "moved-away")
    target.symlink_to(outside, target_is_directory=True)
    result = compile_project(fresh_project, check=check)
    assert ("error", "LRC7005", link) in _codes(result), _codes(result)
    assert result.changed == []
    _untouched(outside)
    assert target.is_symlink()


def test_a_symlinked_compile_cache_is_not_used_and_nothing_outside_is_removed(fresh_project: Path, tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    _dirty_cache(fresh_project)
    (fresh_project / ".lrc-cache").symlink_to(outside, target_is_directory=True)
    result = compile_project(fresh_project)
    assert not result.diagnostics.has_errors, _codes(result)
    assert ("warning", "LRC7005", ".lrc-cache") in _codes(result)
    _untouched(outside)


def test_symlinks_inside_the_compile_cache_are_removed_not_followed(fresh_project: Path, tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    _dirty_cache(fresh_project)
    cache = fresh_project / ".lrc-cache"
    cache.mkdir()
    (cache / "stale-toolchain").symlink_to(outside, target_is_directory=True)
    (cache / ".gitignore").symlink_to(outside / "victim.txt")
    result = compile_project(fresh_project)
    assert not result.diagnostics.has_errors, _codes(result)
    _untouched(outside)
    assert not (cache / "stale-toolchain").is_symlink()
    assert not (cache / ".gitignore").is_symlink()


def _remove_deep(top: Path) -> None:
    """Remove a folder nested too deep for shutil.rmtree (it recurses per level: left behind, the
    tree made pytest's own clean-up of its temporary folder fail at the next run's start)."""
    chain = [top]
    while True:
        below = [p for p in chain[-1].iterdir() if p.is_dir() and not p.is_symlink()]
        if not below:
            break
        chain.append(below[0])
    for folder in reversed(chain):
        for entry in folder.iterdir():
            entry.unlink() if not entry.is_dir() or entry.is_symlink() else entry.rmdir()
        folder.rmdir()


def test_a_tree_nested_a_thousand_folders_deep_is_walked(fresh_project: Path) -> None:
    top = deep = fresh_project / WORKLOAD / "notes"
    try:
        for _ in range(1100):  # os.makedirs itself recurses per level
            deep.mkdir()
            deep = deep / "d"
        deep.with_name("x.txt").write_text("deep\n")
        result = compile_project(fresh_project, check=True)
        assert not result.diagnostics.has_errors, _codes(result)
    finally:
        _remove_deep(top)
    assert not top.exists()


@pytest.mark.parametrize("text, pointer", [
    ("n_per_cell: 0x" + "f" * 4000 + "\n", "/n_per_cell"),
    ("n: 0o" + "7" * 6000 + "\n", "/n"),
    ("n: 0b" + "1" * 20000 + "\n", "/n"),
    ("a:\n  ? 0x" + "f" * 4000 + "\n  : 1\n", "/a"),
])
def test_an_integer_too_long_to_print_gets_the_normal_diagnostic(text: str, pointer: str) -> None:
    diags = Diagnostics()
    load_text(text, "specs/x.yaml", Path("x.yaml"), diags)
    [diag] = diags.items
    assert (diag.code, diag.pointer) == ("LRC2001", pointer)
    assert len(diag.summary) < 200 and "digits" in diag.summary


def test_a_spec_with_a_huge_hex_integer_compiles_to_a_diagnostic(fresh_project: Path) -> None:
    spec = fresh_project / WORKLOAD / "workload.yaml"
    spec.write_text(spec.read_text().replace("version: 4\n", "version: 0x" + "f" * 4000 + "\n", 1))
    result = compile_project(fresh_project, check=True)
    assert ("error", "LRC2001", f"{WORKLOAD}/workload.yaml") in _codes(result), _codes(result)


def _output_schema(root: Path, text: str) -> None:
    (root / WORKLOAD / "output.schema.json").write_text(text)


def test_a_json_integer_too_long_to_convert_is_a_diagnostic(fresh_project: Path) -> None:
    _output_schema(fresh_project, '{\n  "type": "object",\n  "maxProperties": ' + "9" * 5000 + "\n}\n")
    result = compile_project(fresh_project, check=True)
    [diag] = [d for d in result.diagnostics.sorted() if d.code == "LRC3005"]
    assert (diag.path, diag.line, diag.column) == (f"{WORKLOAD}/output.schema.json", 3, 20)
    assert len(diag.summary) < 200


def test_a_repeated_key_in_a_json_file_is_refused_like_in_yaml(fresh_project: Path) -> None:
    schema = json.loads((fresh_project / WORKLOAD / "output.schema.json").read_text())
    text = json.dumps({"$comment": "first", **schema, "$comment~": "x"}, indent=2).replace('"$comment~"', '"$comment"')
    _output_schema(fresh_project, text)
    result = compile_project(fresh_project, check=True)
    [diag] = [d for d in result.diagnostics.sorted() if d.code == "LRC1002"]
    assert (diag.path, diag.pointer) == (f"{WORKLOAD}/output.schema.json", "/$comment")
    assert (diag.line, diag.column) == (len(text.splitlines()) - 1, 3)
    nested = json.dumps({**schema, "properties": {"a": {"type": "string", "type~": "number"}}}).replace('"type~"', '"type"')
    _output_schema(fresh_project, nested)
    result = compile_project(fresh_project, check=True)
    [diag] = [d for d in result.diagnostics.sorted() if d.code == "LRC1002"]
    assert diag.pointer == "/properties/a/type"


NESTED = "{{ " + "(" * 100 + "1" + ")" * 100 + " }}\n"


def test_a_prompt_template_nested_too_deep_for_the_parser_is_a_diagnostic(fresh_project: Path) -> None:
    (fresh_project / WORKLOAD / "prompts/system.j2").write_text(NESTED)
    result = compile_project(fresh_project, check=True)
    assert ("error", "LRC4001", f"{WORKLOAD}/prompts/system.j2") in _codes(result), _codes(result)


def test_a_stage_template_nested_too_deep_for_the_parser_is_a_diagnostic(fresh_project: Path) -> None:
    (fresh_project / "specs/systems/orchestrated/plan.j2").write_text(NESTED)
    result = compile_project(fresh_project, check=True)
    assert ("error", "LRC4001", "specs/systems/orchestrated/plan.j2") in _codes(result), _codes(result)


def test_running_out_of_memory_while_rendering_is_a_diagnostic(fresh_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lrc.compiler import render as render_module

    def exhausted(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(render_module, "render", exhausted)
    result = compile_project(fresh_project, check=True, cache=False)
    assert ("error", "LRC4004", f"{WORKLOAD}/prompts/system.j2") in _codes(result), _codes(result)
