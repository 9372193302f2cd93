"""runtime/artifacts is not wired in yet (issue 13, part 1): no module outside it imports it,
so the code fingerprints in committed locks stay what they were. Wiring it in is a deliberate
change that deletes this test."""

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
