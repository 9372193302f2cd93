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
    line: int | None = None  # where the version token is (1-based)


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
        return Bumped(doc.path, ident, version, new, line)

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
        return Bumped(rel, ident, comp.version, new, comp.version_line)

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
    done, analysis = _bump_required_once(root, diags)
    if analysis is None:
        return [], []
    old_to_new = {f"{b.id}.v{b.old}": f"{b.id}.v{b.new}" for b in done}
    return done, find_pins(analysis.graph, old_to_new) if analysis.graph is not None else []


def _bump_required_once(root: Path, diags: Diagnostics):
    """One pass: the gate's verdict on the tree as it is, and a bump of everything it refuses."""
    from lrc.compiler.pipeline import gate_report

    analysis, gated = gate_report(root)
    if analysis.diagnostics.has_errors:
        diags.extend([d for d in analysis.diagnostics.sorted() if d.severity == "error"])
        return [], None
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
    return done, analysis


# -- lrc bump --all-required --update-pins ----------------------------------------------------

@dataclass
class Edit:
    """One token lrc rewrote: a version (`version: 1` -> `version: 2`) or a pin (`x.v1` -> `x.v2`)."""

    path: str
    line: int
    column: int
    old: str
    new: str
    what: str  # "version" or "pin"
    owner: str  # "workload triage.ap-inbox", "code component triage.ap-inbox.tools"


MAX_ROUNDS = 32
"""Bumps follow references (code <- workload <- edition), which never form a cycle; a chain
longer than this is a bug, not a project."""

_PIN = re.compile(r"(?P<id>.+)\.v(?P<n>[1-9][0-9]*)")


def bump_and_update_pins(root: Path, diags: Diagnostics) -> tuple[list[Bumped], list[Edit]]:
    """`lrc bump --all-required --update-pins`: repeat {rewrite every pin of an older version to
    the current one; bump what the gate refuses} until neither changes anything.

    A pin of an id at a version lower than the one in the tree can only be stale (one file per
    spec or component, its version changes in place), so it is rewritten, whether this command
    or an earlier `lrc bump` raised the version. Each file is edited token by token and
    re-read: the edit must change exactly the pinned values, or the file is left untouched
    (LRC8002) and the command stops.
    """
    bumped: list[Bumped] = []
    edits: list[Edit] = []
    for _ in range(MAX_ROUNDS):
        before = len(diags.items)
        pins = update_stale_pins(root, diags)
        edits.extend(pins)
        if any(d.severity == "error" for d in diags.items[before:]):
            return bumped, edits
        done, analysis = _bump_required_once(root, diags)
        bumped.extend(done)
        edits.extend(Edit(b.path, b.line or 1, 1, *_version_tokens(root, b), "version", _owner_of(b, analysis)) for b in done)
        if analysis is None or any(d.severity == "error" for d in diags.items[before:]):
            return bumped, edits
        if not done and not pins:
            return bumped, edits
    raise RuntimeError(f"lrc bump --update-pins did not settle after {MAX_ROUNDS} rounds")


def _version_tokens(root: Path, b: Bumped) -> tuple[str, str]:
    if b.path.endswith(".py"):
        return f"COMPONENT_VERSION = {b.old}", f"COMPONENT_VERSION = {b.new}"
    return f"version: {b.old}", f"version: {b.new}"


def _owner_of(b: Bumped, analysis) -> str:
    for e in analysis.entries if analysis is not None else ():
        if e.path == b.path and e.id == b.id:
            return f"{'code component' if e.kind == 'code' else e.kind} {e.id}"
    return b.id


def _current_versions(root: Path, docs) -> dict[str, int]:
    """id -> the version in the tree, for every spec and code component; an id that two kinds
    share with different versions is left out (a pin of it is not rewritten)."""
    seen: dict[str, set[int]] = {}
    for _, doc in docs:
        ident, version = doc.data.get("id"), doc.data.get("version")
        if isinstance(ident, str) and isinstance(version, int):
            seen.setdefault(ident, set()).add(version)
    for comp in discover_components(root, Diagnostics()).values():
        seen.setdefault(comp.id, set()).add(comp.version)
    return {ident: next(iter(v)) for ident, v in seen.items() if len(v) == 1}


def update_stale_pins(root: Path, diags: Diagnostics) -> list[Edit]:
    """Rewrite every spec value `ID.vN` whose ID is at a higher version in the tree; return the edits."""
    scratch = Diagnostics()  # a file that does not load is not edited; compile reports it
    schemas = SchemaSet.load(root / "schemas", scratch)
    if scratch.has_errors:
        return []
    docs = load_and_validate(root, schemas, scratch)
    current = _current_versions(root, docs)
    from lrc.compiler.diagnostics import pointer_of

    planned: list[tuple[str, bytes, list[Edit]]] = []
    for kind, doc in docs:
        wanted: dict[str, str] = {}  # pointer -> new ref
        for parts, value in _strings(doc.data):
            m = _PIN.fullmatch(value)
            if m and parts != ("id",) and current.get(m["id"], 0) > int(m["n"]):
                wanted[pointer_of(parts)] = f"{m['id']}.v{current[m['id']]}"
        if wanted:
            made = _rewrite_pins(root, kind, doc, wanted, diags)
            if made is None:
                return []  # all files or none: a half-updated tree is harder to reason about
            planned.append((doc.path, *made))
    edits: list[Edit] = []
    for rel, data, made in planned:
        (root / rel).write_bytes(data)
        edits.extend(made)
    return edits


def _rewrite_pins(root: Path, kind: str, doc, wanted: dict[str, str], diags: Diagnostics) -> tuple[bytes, list[Edit]] | None:
    """The file's new bytes with the pins at `wanted` (pointer -> new ref) rewritten, and the edits."""
    raw = (root / doc.path).read_bytes().decode("utf-8")
    bom = "\ufeff" if raw.startswith("\ufeff") else ""
    text = raw[len(bom):]
    owner = f"{kind} {doc.data.get('id')}"
    spots = []
    for pointer, new in wanted.items():
        old = _value_at(doc.data, pointer)
        line, col = doc.locate(pointer)
        spots.append((line, col, pointer, old, new))
    edits: list[Edit] = []
    # Right to left within a line, so an earlier edit never moves a later one's column.
    for line, col, pointer, old, new in sorted(spots, key=lambda s: (s[0], -s[1])):
        row = text.split("\n")[line - 1]
        start = col + 1 if row[col - 1:col] in ("'", '"') else col
        edited = _replace_token(text, line, start, old, new)
        if edited is None:
            diags.error("LRC8002", f"could not find the pin {old} at line {line}; file left untouched",
                        path=doc.path, line=line, column=col, pointer=pointer, hint=f"write {new} there by hand")
            return None
        text = edited
        edits.append(Edit(doc.path, line, start, old, new, "pin", owner))
    check = Diagnostics()
    after = load_text(text.replace("\r\n", "\n").replace("\r", "\n"), doc.path, doc.abspath, check)
    if after is None or sorted(changed_pointers(doc.data, after.data)) != sorted(wanted) \
            or any(_value_at(after.data, p) != v for p, v in wanted.items()):
        line, col = doc.locate(min(wanted))
        diags.error("LRC8002", "rewriting the pins would change more than the pinned values; file left untouched",
                    path=doc.path, line=line, column=col, hint="update the pins by hand: " +
                    ", ".join(f"{p} -> {v}" for p, v in sorted(wanted.items())))
        return None
    return (bom + text).encode("utf-8"), sorted(edits, key=lambda e: (e.line, e.column))


def _value_at(data, pointer: str):
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        data = data[int(token)] if isinstance(data, list) else data[token]
    return data
