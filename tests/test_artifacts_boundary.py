"""runtime/artifacts is a library that only the runtime's task runner (runtime/tasks/) imports
(issue 13): the compiler reaches it only statically -- the task generators
(runtime/artifacts/generators/) and the validators' component are fingerprinted by codeprint,
which parses and never imports, and the ids the compiler checks live in
lrc.runtime.lock.artifact_validators."""

from __future__ import annotations

import ast

from support import REPO


def test_nothing_outside_the_package_imports_it():
    importers = []
    for folder in ("compiler", "runtime"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path.is_relative_to(REPO / "runtime" / "artifacts") or path.is_relative_to(REPO / "runtime" / "tasks"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                if any(n.startswith("lrc.runtime.artifacts") or n == "artifacts" for n in names):
                    importers.append(path.relative_to(REPO).as_posix())
    assert importers == []
