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
from lrc.compiler.validate import SchemaSet, schemas_dir
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


def bump(root: Path, ident: str, diags: Diagnostics, kind: str | None = None) -> Bumped | None:
    """Bump the spec or code component `ident` (only of `kind` when given: a spec kind or "code")."""
    ledger = Ledger.read(root, diags)
    before = len(diags.items)
    schemas = SchemaSet.load(schemas_dir(root), diags)
    if any(d.severity == "error" for d in diags.items[before:]):
        return None
    scratch = Diagnostics()  # problems elsewhere in the tree do not block a bump of this file
    for kind_found, doc in load_and_validate(root, schemas, scratch):
        if doc.data.get("id") != ident or (kind is not None and kind_found != kind):
            continue
        version = doc.data["version"]
        new = _next_version(ledger, f"{kind_found}:{ident}", version)
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
        if comp.id != ident or kind not in (None, "code"):
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


# -- lrc bump --all-required ------------------------------------------------------------------

REQUIRED = ("LRC5001", "LRC5003", "LRC5101", "LRC5103")
"""Gate errors a bump fixes: content changed at a recorded version (the latest, or an older one reused)."""


@dataclass
class Pin:
    """A reference that still pins a version that was just bumped."""

    path: str
    line: int
    column: int
    pointer: str
    owner: str  # "edition demo", "workload triage.ap-inbox"
    old: str  # the pinned ref
    new: str  # the ref to write instead


def _strings(value, parts=()):
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from _strings(sub, (*parts, key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            yield from _strings(sub, (*parts, i))
    elif isinstance(value, str):
        yield parts, value


def find_pins(graph, old_to_new: dict[str, str]) -> list[Pin]:
    """Every spec value equal to one of the old refs (editions pin workloads, workloads pin code, ...)."""
    from lrc.compiler.diagnostics import pointer_of

    pins: list[Pin] = []
    for kind, specs in graph.specs.items():
        for spec in specs.values():
            for parts, value in _strings(spec.data):
                if value in old_to_new:
                    pointer = pointer_of(parts)
                    line, col = spec.doc.locate(pointer)
                    pins.append(Pin(spec.doc.path, line, col, pointer, f"{kind} {spec.id}", value, old_to_new[value]))
    return sorted(pins, key=lambda p: (p.path, p.line, p.column))


def bump_all_required(root: Path, diags: Diagnostics) -> tuple[list[Bumped], list[Pin]]:
    """Bump every spec and code component the gate refuses for changed content; list the stale pins.

    Needs a tree that resolves (the gate compares resolved content): otherwise the errors are
    reported and nothing is bumped.
    """
    from lrc.compiler.pipeline import gate_report

    analysis, gated = gate_report(root)
    if analysis.diagnostics.has_errors:
        diags.extend([d for d in analysis.diagnostics.sorted() if d.severity == "error"])
        return [], []
    by_place = {(e.path, e.line, e.column): e for e in analysis.entries}
    todo = []
    for d in gated.sorted():
        entry = by_place.get((d.path, d.line, d.column))
        if d.code in REQUIRED and entry is not None and entry not in todo:
            todo.append(entry)
    done: list[Bumped] = []
    for entry in todo:
        res = bump(root, entry.id, diags, kind=entry.kind)
        if res is not None:
            done.append(res)
    old_to_new = {f"{b.id}.v{b.old}": f"{b.id}.v{b.new}" for b in done}
    return done, find_pins(analysis.graph, old_to_new) if analysis.graph is not None else []
