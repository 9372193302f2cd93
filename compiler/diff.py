"""`lrc diff [--against GIT_REF | OLD.lock]`: what changed, per spec and per code component.

Both sides are resolved to normalized specs and code fingerprints (the digests the gate
compares); nothing is gated and nothing is written. A change is reported as JSON pointers
with old -> new values, digests old -> new, and whether a bump is required: the gate would
refuse the new content because its id@version is recorded in the ledger with other content
(or a higher version is recorded), so `lrc bump ID` is needed.

- Against a git ref (default HEAD), that ref's `specs/` and `schemas/` (and `runtime/`, when
  the project is the lrc repository whose runtime is running) are materialized into a
  temporary folder with `git archive` and resolved like the working tree. Every spec of every
  kind and every code component is compared.
- Against a lock, the specs the lock contains (edition, standard, systems, workloads, any
  other locked spec) and its code components are compared with what `lrc compile` would lock
  now for the same edition.

Exit (see cli.py): 0 nothing changed, 2 something changed, 1 error.
"""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.pipeline import Analysis, analyze
from lrc.compiler.resolve import Spec
from lrc.compiler.versioning import Ledger, changed_pointers, file_location
from lrc.runtime.lock import codeprint

MISSING = object()
SHOW_CHARS = 72
"""Longest value shown in a field change; longer values are cut around the first difference."""
GIT_TIMEOUT = 60


class DiffError(Exception):
    """The comparison cannot be made (bad ref, unreadable lock, not a git repository)."""


@dataclass(frozen=True)
class State:
    """One spec or code component at one version, on one side of the comparison."""

    kind: str  # spec kind, or "code"
    id: str
    version: int
    digest: str
    content: Any  # normalized spec, or {"files": {path: digest}} for code
    path: str | None = None
    line: int | None = None
    column: int | None = None
    spec: Spec | None = field(default=None, compare=False, repr=False)  # current side: to locate pointers

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"

    @property
    def ref(self) -> str:
        return f"{self.id}.v{self.version}"


@dataclass
class FieldChange:
    pointer: str
    old: str | None  # display text (JSON, shortened); None when absent on that side
    new: str | None
    line: int | None = None
    column: int | None = None
    file: str | None = None  # the inlined file behind the pointer (a template, an output schema)


@dataclass
class Change:
    kind: str
    id: str
    status: str  # "changed" | "added" | "removed"
    old: State | None
    new: State | None
    fields: list[FieldChange] = field(default_factory=list)
    bump_required: bool = False
    reason: str | None = None
    problem: str | None = None

    @property
    def bump_command(self) -> str | None:
        return f"lrc bump {self.id}" if self.bump_required else None

    @property
    def label(self) -> str:
        return "code component" if self.kind == "code" else self.kind

    def to_json(self) -> dict[str, Any]:
        def side(s: State | None) -> dict[str, Any] | None:
            if s is None:
                return None
            return {"version": s.version, "digest": s.digest, "path": s.path, "line": s.line, "column": s.column}

        return {
            "kind": self.kind,
            "id": self.id,
            "status": self.status,
            "old": side(self.old),
            "new": side(self.new),
            "changes": [{"pointer": f.pointer, "old": f.old, "new": f.new, "file": f.file, "line": f.line, "column": f.column}
                        for f in self.fields],
            "bump_required": self.bump_required,
            "bump_command": self.bump_command,
            "reason": self.reason,
            "problem": self.problem,
        }


@dataclass
class DiffResult:
    against: dict[str, Any]
    diagnostics: Diagnostics
    changes: list[Change] = field(default_factory=list)
    error: str | None = None
    error_code: str | None = None  # the diagnostic code of `error`, when it is the command's own failure

    def fail(self, code: str, message: str, hint: str | None = None) -> None:
        """The comparison cannot be made: a diagnostic with its code, and the summary `error`."""
        self.error, self.error_code = message, code
        self.diagnostics.error(code, message, hint=hint)

    @property
    def failed(self) -> bool:
        return self.error is not None or self.diagnostics.has_errors

    @property
    def bumps(self) -> list[str]:
        return sorted({c.id for c in self.changes if c.bump_required})


# -- value display ------------------------------------------------------------------------------

def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _cut(text: str, start: int, width: int = SHOW_CHARS) -> str:
    start = max(0, min(start, len(text) - 1))
    piece = text[start:start + width]
    return ("…" if start > 0 else "") + piece + ("…" if start + width < len(text) else "")


def show_pair(old: Any, new: Any) -> tuple[str | None, str | None]:
    """Display texts of two values; long ones are cut around the first difference."""
    a = None if old is MISSING else _compact(old)
    b = None if new is MISSING else _compact(new)
    if a is not None and b is not None and (len(a) > SHOW_CHARS or len(b) > SHOW_CHARS):
        first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        start = max(0, first - 16)
        return _cut(a, start), _cut(b, start)
    return (a if a is None or len(a) <= SHOW_CHARS else _cut(a, 0)), (b if b is None or len(b) <= SHOW_CHARS else _cut(b, 0))


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def resolve_pointer(value: Any, pointer: str) -> Any:
    if pointer in ("", "/"):
        return value
    for token in pointer.split("/")[1:]:
        token = _unescape(token)
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return MISSING
    return value


# -- the comparison ------------------------------------------------------------------------------

def _field_changes(old: State, new: State) -> list[FieldChange]:
    out: list[FieldChange] = []
    for pointer in changed_pointers(old.content, new.content):
        a, b = resolve_pointer(old.content, pointer), resolve_pointer(new.content, pointer)
        shown_old, shown_new = show_pair(a, b)
        change = FieldChange(pointer, shown_old, shown_new)
        if new.kind == "code":
            change.file = _unescape(pointer.split("/", 2)[-1]) if pointer.startswith("/files/") else None
        elif new.spec is not None:
            doc = new.spec.doc
            root = Path(str(doc.abspath)[:-len(doc.path)]) if str(doc.abspath).endswith(doc.path) else None
            inlined = file_location(root, new.spec.files, pointer, old.content, new.content)
            if inlined is not None:  # every location is a line of the file it names
                change.file, change.line = inlined
                change.column = 1
            else:
                change.line, change.column = doc.locate(pointer)
        out.append(change)
    return out


def _bump_verdict(change: Change, ledger: Ledger) -> None:
    new = change.new
    assert new is not None
    recorded = ledger.history.get(new.key, {})
    at = recorded.get(new.version)
    if at is not None and at != new.digest:
        change.bump_required = True
        change.reason = f"{new.ref} is recorded in the ledger with other content"
        if recorded and new.version < max(recorded):
            change.reason += f" (latest recorded: v{max(recorded)})"
        return
    if recorded and new.version < max(recorded):
        change.bump_required = True
        change.reason = f"v{new.version} is lower than the recorded v{max(recorded)}"
        return
    old = change.old
    if old is not None and old.version != new.version:
        change.reason = f"version {old.version} -> {new.version}"
        if new.version < old.version:
            change.problem = f"the version went backwards ({old.version} -> {new.version})"
    elif old is not None:
        change.reason = (f"{new.ref} is already recorded with this content" if at == new.digest else
                         f"{new.ref} is not in the ledger yet: the next compile records this content")
    else:
        change.reason = "new" if not recorded else f"not in the compared tree; the ledger knows versions {sorted(recorded)}"


def _pairs(old: dict[int, State], new: dict[int, State]) -> list[tuple[State | None, State | None]]:
    common = sorted(set(old) & set(new))
    pairs: list[tuple[State | None, State | None]] = [(old[v], new[v]) for v in common]
    rest_old = sorted(set(old) - set(new))
    rest_new = sorted(set(new) - set(old))
    if not common and len(rest_old) == 1 and len(rest_new) == 1:
        return [(old[rest_old[0]], new[rest_new[0]])]
    pairs += [(old[v], None) for v in rest_old] + [(None, new[v]) for v in rest_new]
    return pairs


def compare(old_states: list[State], new_states: list[State], ledger: Ledger) -> list[Change]:
    def group(states: list[State]) -> dict[tuple[str, str], dict[int, State]]:
        out: dict[tuple[str, str], dict[int, State]] = {}
        for s in states:
            out.setdefault((s.kind, s.id), {})[s.version] = s
        return out

    old_g, new_g = group(old_states), group(new_states)
    changes: list[Change] = []
    for kind, ident in sorted(set(old_g) | set(new_g), key=lambda k: (k[0] == "code", k)):
        for old, new in _pairs(old_g.get((kind, ident), {}), new_g.get((kind, ident), {})):
            if old is not None and new is not None:
                if old.digest == new.digest and old.version == new.version:
                    continue
                change = Change(kind, ident, "changed", old, new, _field_changes(old, new))
            elif new is not None:
                change = Change(kind, ident, "added", None, new)
            else:
                change = Change(kind, ident, "removed", old, None)
            if change.new is not None:
                _bump_verdict(change, ledger)
            changes.append(change)
    return changes


def states_from_analysis(analysis: Analysis) -> list[State]:
    specs: dict[tuple[str, str], Spec] = {}
    if analysis.graph is not None:
        for kind, by_id in analysis.graph.specs.items():
            for ident, spec in by_id.items():
                specs[(kind, ident)] = spec
    return [State(e.kind, e.id, e.version, e.digest, e.snapshot, e.path, e.line, e.column, specs.get((e.kind, e.id)))
            for e in analysis.entries]


def _is_locked_spec(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("spec"), dict) and isinstance(value.get("digest"), str)
            and {"kind", "id", "version"} <= value["spec"].keys())


def states_from_plan(plan: dict[str, Any]) -> list[State]:
    """Every spec a plan locks (any section shaped {ref, digest, source, spec}) and its code."""
    out: list[State] = []
    for name, section in sorted(plan.items()):
        if name == "code" and isinstance(section, dict):
            for entry in section.values():
                if isinstance(entry, dict) and {"id", "version", "fingerprint", "files"} <= entry.keys():
                    out.append(State("code", entry["id"], entry["version"], entry["fingerprint"], {"files": entry["files"]}))
            continue
        entries = [section] if _is_locked_spec(section) else (
            list(section.values()) if isinstance(section, dict) and section and all(_is_locked_spec(v) for v in section.values()) else [])
        for entry in entries:
            spec = entry["spec"]
            out.append(State(spec["kind"], spec["id"], spec["version"], entry["digest"], spec, entry.get("source")))
    return out


# -- the two sides -----------------------------------------------------------------------------

def _git(args: list[str], cwd: Path, binary: bool = False) -> subprocess.CompletedProcess:
    try:
        if binary:
            return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=GIT_TIMEOUT)
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8", errors="replace",
                              timeout=GIT_TIMEOUT)
    except FileNotFoundError as exc:
        raise DiffError("git is not installed; compare against a lock instead: lrc diff --against generated/<edition>/plan.lock") from exc
    except subprocess.TimeoutExpired as exc:
        raise DiffError(f"git {' '.join(args[:2])} took more than {GIT_TIMEOUT}s") from exc


def _materialize(root: Path, ref: str, dest: Path) -> tuple[Path, str, set[str]]:
    """Extract `ref`'s specs/, schemas/ and runtime/ (those it has) into dest.

    Returns (the project folder inside dest, the full commit id, the parts found).
    """
    top = _git(["rev-parse", "--show-toplevel"], root)
    if top.returncode != 0:
        raise DiffError(f"{root} is not inside a git repository; compare against a lock instead: "
                        f"lrc diff --against generated/<edition>/plan.lock")
    toplevel = Path(top.stdout.strip()).resolve()
    prefix = root.resolve().relative_to(toplevel).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    if ref.startswith("-"):
        raise DiffError(f"unknown git ref {ref!r}")
    commit = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], toplevel)
    if commit.returncode != 0:
        raise DiffError(f"unknown git ref {ref!r} (not a commit, branch or tag of {toplevel.name})")
    sha = commit.stdout.strip()
    wanted = [f"{prefix}{part}" for part in ("specs", "schemas", "runtime")]
    listed = _git(["ls-tree", "--name-only", sha, "--", *wanted], toplevel)
    if listed.returncode != 0:
        raise DiffError(f"cannot list {ref}: {listed.stderr.strip()}")
    present = [p for p in listed.stdout.splitlines() if p in wanted]
    parts = {p[len(prefix):] for p in present}
    project = dest / prefix if prefix else dest
    project.mkdir(parents=True, exist_ok=True)
    if present:
        archive = _git(["archive", "--format=tar", sha, "--", *present], toplevel, binary=True)
        if archive.returncode != 0:
            raise DiffError(f"git archive {ref} failed: {archive.stderr.decode('utf-8', 'replace').strip()}")
        try:
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                tar.extractall(dest, filter="data")  # no absolute paths, no links out of dest
        except (tarfile.TarError, OSError) as exc:
            raise DiffError(f"cannot unpack {ref}'s files: {exc}") from exc
    (project / "specs").mkdir(exist_ok=True)  # a ref without schemas/ is read with lrc's own (validate.schemas_dir)
    return project, sha, parts


def _relocate(diags: Diagnostics, label: str) -> list:
    """Diagnostics of the compared tree, their paths shown as `REF:path` (git's notation)."""
    return [dataclasses.replace(d, path=f"{label}:{d.path}" if d.path else label) for d in diags.sorted() if d.severity == "error"]


def against_git(root: Path, ref: str) -> DiffResult:
    result = DiffResult({"kind": "git", "ref": ref}, Diagnostics())
    own_runtime = (root / "runtime").is_dir() and (root / "runtime").resolve() == codeprint.runtime_root().resolve()
    with tempfile.TemporaryDirectory(prefix="lrc-diff-") as tmp:
        try:
            old_root, sha, parts = _materialize(root, ref, Path(tmp))
        except DiffError as exc:
            result.fail("LRC8101", str(exc))
            return result
        result.against["commit"] = sha
        current = analyze(root)
        result.diagnostics.extend(current.diagnostics.sorted())
        if current.diagnostics.has_errors:
            result.error = "the working tree does not compile; fix the errors above first"
            return result
        try:
            old = analyze(old_root, runtime=old_root / "runtime" if own_runtime and "runtime" in parts else None, cache_root=root)
        except Exception as exc:  # noqa: BLE001 - an old tree is foreign input to this compiler
            result.fail("LRC8102", f"the specs at {ref} cannot be read by this lrc: {type(exc).__name__}: {exc}")
            return result
        if old.diagnostics.has_errors:
            result.diagnostics.extend(_relocate(old.diagnostics, ref))
            result.fail("LRC8102", f"the specs at {ref} do not compile with this lrc",
                        hint="their errors are listed with paths written REF:path")
            return result
        old_states = states_from_analysis(old)
    ledger = Ledger.read(root, Diagnostics())
    result.changes = compare(old_states, states_from_analysis(current), ledger)
    return result


def against_lock(root: Path, lock_path: Path) -> DiffResult:
    from lrc.runtime.lock import format as lockformat

    result = DiffResult({"kind": "lock", "path": str(lock_path)}, Diagnostics())
    try:
        lock = lockformat.loads(lock_path.read_bytes())
    except OSError as exc:
        result.fail("LRC8101", f"cannot read {lock_path}: {exc.strerror}")
        return result
    except lockformat.LockError as exc:
        result.fail("LRC8101", f"{lock_path}: {exc}")
        return result
    problems = lockformat.verify_digests(lock)
    if problems:
        result.fail("LRC8103", f"{lock_path} was modified after compilation: " + "; ".join(problems),
                    hint="compare against a lock as `lrc compile` wrote it (e.g. from git), or against a git ref")
        return result
    plan = lock["plan"]
    edition_id = plan.get("edition", {}).get("spec", {}).get("id")
    result.against.update({"edition": edition_id, "root_digest": lock["root_digest"]})
    current = analyze(root, plans=True)
    result.diagnostics.extend(current.diagnostics.sorted())
    if current.diagnostics.has_errors:
        result.error = "the working tree does not compile; fix the errors above first"
        return result
    located = {(s.kind, s.id, s.version): s for s in states_from_analysis(current)}
    now_plan = current.plans.get(edition_id)
    new_states = []
    if now_plan is not None:
        for s in states_from_plan(now_plan):
            new_states.append(located.get((s.kind, s.id, s.version), s))
    ledger = Ledger.read(root, Diagnostics())
    result.changes = compare(states_from_plan(plan), new_states, ledger)
    return result


def run(root: Path, against: str) -> DiffResult:
    """Compare the working tree with a lock file (if `against` names one) or a git ref."""
    candidate = Path(against)
    if not candidate.is_file() and not candidate.is_absolute() and (root / candidate).is_file():
        candidate = root / candidate  # a lock path relative to the project (with --project from elsewhere)
    if candidate.is_file() or against.endswith(".lock"):
        return against_lock(root, candidate)
    return against_git(root, against)


# -- output -----------------------------------------------------------------------------------------

def _short(digest: str | None) -> str:
    return digest[:19] if digest else "-"


def _where(s: State | None) -> str:
    if s is None or s.path is None:
        return ""
    return f"{s.path}:{s.line}" if s.line else s.path


def text(result: DiffResult) -> str:
    against = result.against
    what = (f"{against['ref']} ({against['commit'][:12]})" if against["kind"] == "git" else
            f"{against['path']} (edition {against.get('edition')}, {_short(against.get('root_digest'))})")
    out = [f"lrc diff: working tree against {what}"]
    if not result.changes:
        out.append("no changes: every spec and code component has the same digest.")
        return "\n".join(out) + "\n"
    for c in result.changes:
        out.append("")
        if c.status == "added":
            assert c.new is not None
            out.append(f"+ {c.label} {c.new.ref}  {_where(c.new)}  (added)")
            out.append(f"    digest {_short(c.new.digest)}")
        elif c.status == "removed":
            assert c.old is not None
            out.append(f"- {c.label} {c.old.ref}  {c.old.path or ''}  (removed)".rstrip())
            out.append(f"    digest {_short(c.old.digest)}")
            continue
        else:
            assert c.old is not None and c.new is not None
            version = (f"version {c.new.version}" if c.old.version == c.new.version else
                       f"version {c.old.version} -> {c.new.version}")
            out.append(f"~ {c.label} {c.id}  {_where(c.new)}")
            out.append(f"    {version}; digest {_short(c.old.digest)} -> {_short(c.new.digest)}")
            shown = c.fields[:20]
            for f in shown:
                if c.kind == "code" and f.file:
                    state = ("added" if f.old is None else "removed" if f.new is None else
                             f"changed ({_short(f.old.strip(chr(34)))} -> {_short(f.new.strip(chr(34)))})")
                    out.append(f"    {f.file}: {state}")
                    continue
                label = f.pointer + (f" ({f.file}:{f.line})" if f.file and f.line else f" ({f.file})" if f.file else "")
                out.append(f"    {label}: {f.old if f.old is not None else '(absent)'} -> {f.new if f.new is not None else '(absent)'}")
            if len(c.fields) > len(shown):
                out.append(f"    ... and {len(c.fields) - len(shown)} more (--format json lists them all)")
        if c.problem:
            out.append(f"    problem: {c.problem}")
        if c.bump_required:
            out.append(f"    bump required: run `{c.bump_command}` ({c.reason})")
        elif c.status == "changed":
            out.append(f"    bump required: no ({c.reason})")
    counts = {s: sum(c.status == s for c in result.changes) for s in ("changed", "added", "removed")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    out.append("")
    bumps = result.bumps
    if bumps:
        out.append(f"{summary}; {len(bumps)} bump(s) required: "
                   + ("`lrc bump --all-required`" if len(bumps) > 1 else f"`lrc bump {bumps[0]}`")
                   + ", then update the references that pin the old versions")
    else:
        out.append(f"{summary}; no bump required.")
    return "\n".join(out) + "\n"


def as_json(result: DiffResult) -> dict[str, Any]:
    return {
        "command": "diff",
        "ok": not result.failed,
        "error": result.error,
        "against": result.against,
        "differs": bool(result.changes),
        "bump_commands": [f"lrc bump {i}" for i in result.bumps],
        "specs": [c.to_json() for c in result.changes],
    }


def _gh(value: str, prop: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def github(result: DiffResult) -> str:
    out = []
    for c in result.changes:
        s = c.new or c.old
        assert s is not None
        props = []
        if c.new is not None and c.new.path:
            props.append(f"file={_gh(c.new.path, True)}")
            if c.new.line:
                props += [f"line={c.new.line}", f"col={c.new.column or 1}"]
        if c.bump_required:
            props.append(f"title={_gh('bump required', True)}")
            message = (f"{c.label} {c.id} changed at {s.ref}: run `{c.bump_command}` ({c.reason}); changed: "
                       + ", ".join(f.file if c.kind == "code" and f.file else f.pointer for f in c.fields[:10]))
            out.append(f"::error {','.join(props)}::{_gh(message)}")
            continue
        props.append(f"title={_gh('lrc diff', True)}")
        if c.status == "changed":
            message = f"{c.label} {c.id} changed ({c.reason}): " + ", ".join(
                f.file if c.kind == "code" and f.file else f.pointer for f in c.fields[:10])
        else:
            message = f"{c.label} {s.ref} {c.status}"
        out.append(f"::notice {','.join(props)}::{_gh(message)}")
    return "\n".join(out) + ("\n" if out else "")


__all__ = ["DiffError", "DiffResult", "Change", "State", "against_git", "against_lock", "compare", "run",
           "states_from_plan", "states_from_analysis", "show_pair"]
