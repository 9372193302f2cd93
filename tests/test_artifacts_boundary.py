"""runtime/artifacts is a library with one door: the task runner (`lrc.runtime.tasks`, issue 13)
is the only part of lrc that imports it. Everything else (execute, the report, the systems,
the reference models, the compiler) reaches it through `lrc.runtime.tasks`, so what a task
run uses of the library is in one package, whose modules the analysis fingerprint covers."""

from __future__ import annotations

import ast

from support import REPO


def _importers() -> list[str]:
    importers = []
    for folder in ("compiler", "runtime"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path.is_relative_to(REPO / "runtime" / "artifacts"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                if any(n.startswith("lrc.runtime.artifacts") or n == "artifacts" for n in names):
                    importers.append(path.relative_to(REPO).as_posix())
    return sorted(set(importers))


def test_only_the_task_runner_imports_it():
    importers = _importers()
    assert importers, "the task runner imports the artifact library"
    assert [p for p in importers if not p.startswith("runtime/tasks/")] == []
