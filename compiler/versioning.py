"""Stage 5: the version gate against the committed, append-only ledger.

generated/ledger.jsonl records every `id@version -> digest` ever compiled, for specs and
for code components; generated/ledger/ keeps the normalized content (or per-file code
digests) of each recorded version so the gate can name what changed. Rules (DESIGN §2):
same version + same digest is fine; same version + different digest is an error pointing
at the `version:` line; a version lower than the latest recorded is an error; a bump with
no content change is a warning. The primitive taxonomy may not change within a
methodology major version.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lrc.compiler.diagnostics import Diagnostics, escape_pointer_token
from lrc.compiler.load import read_regular
from lrc.runtime.lock.canonical import digest

LEDGER = "generated/ledger.jsonl"
SNAPSHOTS = "generated/ledger"


@dataclass(frozen=True, eq=False)
class Entry:
    """What is compiled now: one spec or code component at one version."""

    kind: str  # "standard" | "system" | "workload" | "edition" | "code"
    id: str
    version: int
    digest: str
    content: Any  # normalized spec, or {"files": {...}} for code; or a function returning it
    path: str  # where its version is declared
    line: int
    column: int
    files: dict[str, str] = field(default_factory=dict)  # JSON pointer -> the inlined file behind it (specs)

    @property
    def snapshot(self) -> Any:
        """The recorded form. Fetched on demand: a spec served from the compile cache keeps
        its normalized form out of memory unless the gate must record or explain it."""
        return self.content() if callable(self.content) else self.content

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"

    def record(self) -> dict:
        return {"kind": self.kind, "id": self.id, "version": self.version, "digest": self.digest}


def snapshot_path(kind: str, ident: str, version: int) -> str:
    return f"{SNAPSHOTS}/{kind}/{ident}.v{version}.json"


def snapshot_bytes(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


class Ledger:
    """The recorded history: kind:id -> {version: digest}, in file order."""

    def __init__(self, root: Path, lines: list[dict]):
        self.root = root
        self.lines = lines
        self.history: dict[str, dict[int, str]] = {}
        for rec in lines:
            self.history.setdefault(f"{rec['kind']}:{rec['id']}", {})[rec["version"]] = rec["digest"]

    @classmethod
    def read(cls, root: Path, diags: Diagnostics) -> "Ledger":
        path = root / LEDGER
        lines: list[dict] = []
        if not path.exists() and not path.is_symlink():
            return cls(root, lines)
        data = read_regular(path)
        try:
            text = data.decode("utf-8") if data is not None else None
        except UnicodeDecodeError:
            text = None
        if text is None:
            diags.error("LRC5006", "the ledger is not a readable UTF-8 regular file", path=LEDGER,
                        hint="the ledger is machine-written and append-only; restore it from version control")
            return cls(root, lines)
        seen: dict[tuple, str] = {}
        for n, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
                ok = isinstance(rec, dict) and {"kind", "id", "version", "digest"} <= rec.keys() and isinstance(rec["version"], int) \
                    and all(isinstance(rec[k], str) for k in ("kind", "id", "digest"))
            except (json.JSONDecodeError, RecursionError):  # a line nested a million deep is malformed, not a crash
                ok = False
            if not ok:
                diags.error("LRC5006", "malformed ledger line", path=LEDGER, line=n, column=1,
                            hint="the ledger is machine-written and append-only; restore it from version control")
                continue
            key = (rec["kind"], rec["id"], rec["version"])
            if key in seen and seen[key] != rec["digest"]:
                diags.error("LRC5006", f"{rec['id']}@{rec['version']} is recorded twice with different digests",
                            path=LEDGER, line=n, column=1)
                continue
            if key not in seen:
                seen[key] = rec["digest"]
                lines.append(rec)
        return cls(root, lines)

    def snapshot(self, kind: str, ident: str, version: int) -> Any | None:
        data = read_regular(self.root / snapshot_path(kind, ident, version))
        try:
            return json.loads(data.decode("utf-8")) if data is not None else None
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            return None

    def serialize(self, lines: list[dict]) -> bytes:
        return "".join(json.dumps(rec, sort_keys=True, ensure_ascii=False) + "\n" for rec in lines).encode("utf-8")


def changed_pointers(old: Any, new: Any, prefix: str = "") -> list[str]:
    """JSON pointers where two values differ (added, removed or changed)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new)):
            sub = f"{prefix}/{escape_pointer_token(key)}"
            if key not in old or key not in new:
                out.append(sub)
            else:
                out.extend(changed_pointers(old[key], new[key], sub))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        out = []
        for i, (a, b) in enumerate(zip(old, new)):
            out.extend(changed_pointers(a, b, f"{prefix}/{i}"))
        return out
    return [] if old == new else [prefix or "/"]


_MISSING = object()


def _at_pointer(value: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:] if pointer not in ("", "/") else ():
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return _MISSING
    return value


def _first_changed_line(old: Any, new: str) -> int:
    """The first line of `new` that differs from `old` (a text), 1-based; a line of `new` always."""
    new_lines = new.split("\n")
    if not isinstance(old, str):
        return 1
    old_lines = old.split("\n")
    for i, (a, b) in enumerate(zip(old_lines, new_lines)):
        if a != b:
            return i + 1
    return max(1, min(len(old_lines), len(new_lines)) + (1 if len(new_lines) > len(old_lines) else 0)
               - (1 if len(new_lines) < len(old_lines) else 0))


def _json_key_line(text: str, sub_pointer: str) -> int:
    """The line of the deepest key of `sub_pointer` found in a JSON text, following the keys in
    order (each searched after the previous one); 1 when none is found. Always a line of `text`."""
    pos = 0
    for token in sub_pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if token.isdigit():
            continue
        m = re.compile(re.escape(json.dumps(token)) + r"\s*:").search(text, pos)
        if m is None:
            break
        pos = m.start()
    return text.count("\n", 0, pos) + 1


def file_location(root: Path | None, files: dict[str, str], pointer: str, old_content: Any, new_content: Any) -> tuple[str, int] | None:
    """For a changed pointer of a spec that lies in an inlined file (a prompt template, an output
    schema): that file (project-relative) and the line of the change in it; None otherwise.

    A template is inlined as its text, so the line is the first that differs from the recorded
    text; a JSON file is inlined parsed, so the line is that of the changed key in the file."""
    best = None
    for file_pointer, rel in files.items():
        if pointer == file_pointer or pointer.startswith(file_pointer + "/"):
            if best is None or len(file_pointer) > len(best[0]):
                best = (file_pointer, rel)
    if best is None:
        return None
    file_pointer, rel = best
    new_value = _at_pointer(new_content, file_pointer)
    if isinstance(new_value, str):
        return rel, _first_changed_line(_at_pointer(old_content, file_pointer), new_value)
    text = None
    if root is not None:
        data = read_regular(root / rel)
        try:
            text = data.decode("utf-8") if data is not None else None
        except UnicodeDecodeError:
            text = None
    return rel, (_json_key_line(text, pointer[len(file_pointer):]) if text else 1)


def _describe_changes(entry: Entry, previous: Any, root: Path | None = None) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...]]:
    """The notes naming what changed, and the (file, line) of each change inside an inlined file."""
    if previous is None:
        return ("the recorded content of this version is not available to compare",), ()
    pointers = changed_pointers(previous, entry.snapshot)
    if entry.kind == "code":
        files = [p.split("/", 2)[-1].replace("~1", "/") for p in pointers]
        shown = files[:8]
        return tuple(f"changed: {f}" for f in shown) + ((f"... and {len(files) - 8} more",) if len(files) > 8 else ()), ()
    notes, related = [], []
    for p in pointers[:8]:
        where = file_location(root, entry.files, p, previous, entry.snapshot)
        if where is None:
            notes.append(f"changed: {p}")
            continue
        notes.append(f"changed: {p} ({where[0]}:{where[1]})")
        if where not in related:
            related.append(where)
    if len(pointers) > 8:
        notes.append(f"... and {len(pointers) - 8} more")
    return tuple(notes), tuple(related)


def _same_but_version(entry: Entry, ledger: Ledger, latest: int) -> bool:
    """True when a spec differs from its latest recorded version in `/version` alone.

    A spec's digest covers its normalized content, `version` included, so a bump always
    changes the digest; "nothing changed" is judged on the recorded snapshot instead (and only
    on a snapshot that still matches its ledger digest). Code fingerprints also cover the
    COMPONENT_VERSION literal of the module's own file, so code is compared by digest only.
    """
    if entry.kind == "code":
        return False
    previous = ledger.snapshot(entry.kind, entry.id, latest)
    if previous is None or digest(f"spec:{entry.kind}", previous) != ledger.history[entry.key][latest]:
        return False
    return changed_pointers(previous, entry.snapshot) == ["/version"]


def gate(entries: list[Entry], ledger: Ledger, diags: Diagnostics) -> list[Entry]:
    """Check every entry against the ledger; return the entries to record."""
    to_record: list[Entry] = []
    for entry in entries:
        recorded = ledger.history.get(entry.key, {})
        where = {"path": entry.path, "line": entry.line, "column": entry.column}
        code = entry.kind == "code"
        label = f"{'code component' if code else entry.kind} {entry.id}"
        bump = f"lrc bump {entry.id}"
        if entry.version in recorded:
            latest = max(recorded)
            if recorded[entry.version] == entry.digest:
                if entry.version < latest:  # an older version's content, back again: still backwards
                    diags.error("LRC5102" if code else "LRC5002",
                                f"{label} declares version {entry.version}, lower than the recorded {latest}",
                                **where, pointer=None if code else "/version",
                                hint=f"versions only move forward: use {latest + 1} (`{bump}`)")
                continue
            notes, related = _describe_changes(entry, ledger.snapshot(entry.kind, entry.id, entry.version), ledger.root)
            if entry.version == latest:
                diags.error("LRC5101" if code else "LRC5001",
                            f"{label} changed but its version is still {entry.version}",
                            **where, pointer=None if code else "/version", notes=notes, related=related,
                            hint=f"run `{bump}` (then update the references that pin {entry.id}.v{entry.version})")
            else:
                diags.error("LRC5103" if code else "LRC5003",
                            f"{label} reuses version {entry.version}, recorded with other content (latest recorded: {latest})",
                            **where, pointer=None if code else "/version", notes=notes, related=related,
                            hint=f"set the version to {latest + 1} with `{bump}`")
            continue
        if recorded and entry.version < max(recorded):
            latest = max(recorded)
            diags.error("LRC5102" if code else "LRC5002",
                        f"{label} declares version {entry.version}, lower than the recorded {latest}",
                        **where, pointer=None if code else "/version",
                        hint=f"versions only move forward: use {latest + 1} (`{bump}`)")
            continue
        if recorded and (recorded[max(recorded)] == entry.digest or _same_but_version(entry, ledger, max(recorded))):
            diags.warning("LRC5104" if code else "LRC5004",
                          f"{label} was bumped to {entry.version} but nothing changed since {max(recorded)}",
                          **where, pointer=None if code else "/version")
        to_record.append(entry)
    return to_record


def check_taxonomy(entries: list[Entry], ledger: Ledger, diags: Diagnostics) -> None:
    """The primitive list is frozen within a methodology major version (seed §1.1, §7)."""
    for entry in entries:
        if entry.kind != "standard":
            continue
        major = entry.snapshot["methodology"].split(".")[0]
        current = [p["id"] for p in entry.snapshot["primitives"]]
        for version in sorted(ledger.history.get(entry.key, {})):
            old = ledger.snapshot("standard", entry.id, version)
            if not old or old.get("methodology", "").split(".")[0] != major:
                continue
            before = [p["id"] for p in old["primitives"]]
            if before != current:
                added = sorted(set(current) - set(before))
                removed = sorted(set(before) - set(current))
                diags.error("LRC5005", f"the primitive taxonomy differs from {entry.id}.v{version} within methodology {major}.x",
                            path=entry.path, line=entry.line, column=entry.column, pointer="/primitives",
                            notes=tuple([f"added: {', '.join(added)}"] if added else []) + tuple([f"removed: {', '.join(removed)}"] if removed else []),
                            hint=f"keep the primitives of methodology {major}.x, or move to methodology {int(major) + 1}.0")
                break
