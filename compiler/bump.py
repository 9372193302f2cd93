"""`lrc bump ID`: raise a version by editing exactly one token of the author's file.

Re-dumping YAML through ruamel would reformat the author's file, so the edit is surgical:
find the version value's position, replace that token's text, re-load the edited text and
prove that the only difference is /version (for Python components: that the syntax tree
differs only in the COMPONENT_VERSION literal). Otherwise the file is left untouched.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.load import load_text
from lrc.compiler.pipeline import load_and_validate, discover_components
from lrc.compiler.validate import SchemaSet
from lrc.compiler.versioning import Ledger, changed_pointers
from lrc.runtime.lock import codeprint


@dataclass
class Bumped:
    path: str
    id: str
    old: int
    new: int


def _replace_token(text: str, line: int, col: int, old: str, new: str) -> str | None:
    lines = text.split("\n")
    row = lines[line - 1]
    start = col - 1
    if row[start:start + len(old)] != old:
        return None
    lines[line - 1] = row[:start] + new + row[start + len(old):]
    return "\n".join(lines)


def _next_version(ledger: Ledger, key: str, current: int) -> int:
    recorded = ledger.history.get(key, {})
    return max([current, *recorded]) + 1


def bump(root: Path, ident: str, diags: Diagnostics) -> Bumped | None:
    ledger = Ledger.read(root, diags)
    schemas = SchemaSet.load(root / "schemas")
    scratch = Diagnostics()  # problems elsewhere in the tree do not block a bump of this file
    for kind, doc in load_and_validate(root, schemas, scratch):
        if doc.data.get("id") != ident:
            continue
        version = doc.data["version"]
        new = _next_version(ledger, f"{kind}:{ident}", version)
        line, col = doc.locate("/version")
        raw = (root / doc.path).read_bytes().decode("utf-8")
        bom = "\ufeff" if raw.startswith("\ufeff") else ""  # load positions are counted without it
        # Edit the raw text: split on LF, a CRLF row keeps its trailing CR after the token, so
        # the column is the same and every line ending (mixed ones too) stays as it was.
        edited = _replace_token(raw[len(bom):], line, col, str(version), str(new))
        if edited is None:
            diags.error("LRC8002", f"could not find the version token {version} at line {line}", path=doc.path, line=line, column=col)
            return None
        check = Diagnostics()
        after = load_text(edited.replace("\r\n", "\n").replace("\r", "\n"), doc.path, doc.abspath, check)
        if after is None or changed_pointers(doc.data, after.data) != ["/version"]:
            diags.error("LRC8002", "the edit would change more than /version; file left untouched", path=doc.path, line=line, column=col)
            return None
        (root / doc.path).write_bytes((bom + edited).encode("utf-8"))
        return Bumped(doc.path, ident, version, new)

    for comp in discover_components(root, diags).values():
        if comp.id != ident:
            continue
        new = _next_version(ledger, f"code:{ident}", comp.version)
        text = comp.path.read_text(encoding="utf-8")
        edited = _replace_token(text, comp.version_line, comp.version_col, str(comp.version), str(new))
        rel = comp.path.resolve().relative_to(codeprint.project_root()).as_posix()
        if edited is None or not _only_version_changed(text, edited, new):
            diags.error("LRC8002", "could not edit COMPONENT_VERSION alone; file left untouched", path=rel, line=comp.version_line, column=comp.version_col)
            return None
        comp.path.write_text(edited, encoding="utf-8")
        return Bumped(rel, ident, comp.version, new)

    known = sorted({d.data.get("id") for _, d in load_and_validate(root, schemas, Diagnostics())} |
                   {c.id for c in discover_components(root, Diagnostics()).values()})
    from lrc.compiler.refs import did_you_mean

    guess = did_you_mean(ident, known)
    diags.error("LRC8001", f"no spec or code component has id '{ident}'", hint=f"did you mean '{guess}'?" if guess else None)
    return None


def _only_version_changed(before: str, after: str, new: int) -> bool:
    a, b = ast.parse(before), ast.parse(after)
    for node in b.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "COMPONENT_VERSION":
            node.value = ast.Constant(value=None)
    for node in a.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "COMPONENT_VERSION":
            node.value = ast.Constant(value=None)
    return ast.dump(a) == ast.dump(b) and re.search(rf"COMPONENT_VERSION\s*=\s*{new}\b", after) is not None
