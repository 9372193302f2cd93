"""runtime/artifacts is a library that nothing else in lrc imports yet (issue 13): the
compiler reaches it only statically -- the task generators (runtime/artifacts/generators/) and
the validators' component are fingerprinted by codeprint, which parses and never imports, and
the ids the compiler checks live in lrc.runtime.lock.artifact_validators. Wiring it into
`lrc execute` is a deliberate change that relaxes this test for the runtime's task runner."""

from __future__ import annotations

import ast

from support import REPO


def test_nothing_outside_the_package_imports_it():
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
    assert importers == []
