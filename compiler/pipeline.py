"""The compile pipeline: load -> validate -> resolve -> render -> gate -> emit.

Every stage appends diagnostics; a stage with errors stops the pipeline before anything is
written. The result carries the in-memory outputs so tests and `--check` can compare them.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from lrc.compiler import emit, errata
from lrc.compiler import load as load_module
from lrc.compiler.cache import Cache
from lrc.compiler.defaults import apply_defaults
from lrc.compiler.diagnostics import Diagnostic, Diagnostics
from lrc.compiler.load import SourceDoc, read_capped
from lrc.compiler.plan import build_plan, spec_digest
from lrc.compiler.render import render_workload
from lrc.compiler import policy
from lrc.compiler.resolve import SPEC_KINDS, Graph, Resolver, Spec
from lrc.compiler.tree import SpecTree, scan
from lrc.compiler.units import CachedDoc, Memo, sha
from lrc.compiler.validate import KINDS, SchemaSet, schemas_dir, validate
from lrc.compiler.versioning import (
    LEDGER,
    SNAPSHOTS,
    Entry,
    Ledger,
    check_taxonomy,
    gate,
    snapshot_bytes,
    snapshot_path,
)
from lrc.runtime.lock import codeprint, format as lockformat
from lrc.runtime.lock.codeprint import CodeprintError


class ProjectNotFound(Exception):
    pass


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` holding specs/ and either schemas/ or one of the
    spec-kind folders (specs/editions/, specs/workloads/, ...): a specs repository need not
    vendor schemas/ (validate.schemas_dir)."""
    start = start.resolve()
    for folder in (start, *start.parents):
        specs = folder / "specs"
        if specs.is_dir() and ((folder / "schemas").is_dir() or any((specs / sub).is_dir() for sub in KINDS)):
            return folder
    raise ProjectNotFound(f"no lrc project (a folder with specs/ holding editions/, workloads/, ... or with schemas/) at or above {start}")


@dataclass
class CompileResult:
    root: Path
    diagnostics: Diagnostics
    outputs: dict[str, bytes] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    locks: dict[str, dict] = field(default_factory=dict)  # edition id -> lock
    graph: Graph | None = None
    cache_hits: int = 0  # spec files served from the compile cache (compiler/units.py)


def load_and_validate(root: Path, schemas: SchemaSet, diags: Diagnostics) -> list[tuple[str, SourceDoc]]:
    """Every spec loaded and schema-checked, without the compile cache (lrc bump)."""
    docs: list[tuple[str, SourceDoc]] = []
    for f in scan(root, diags).files:
        if f.symlink:
            diags.error("LRC3004", "spec files may not be symlinks", path=f.rel)
            continue
        doc = load_module.load_file(f.path, f.rel, diags)
        if doc is None:
            continue
        if validate(doc, f.kind, schemas, diags):
            docs.append((f.kind, doc))
    return docs


@dataclass
class Fresh:
    """A spec compiled from its bytes in this run: what the memo needs to remember it."""

    raw_sha: str
    diagnostics: list[Diagnostic]


def load_specs(tree: SpecTree, schemas: SchemaSet, memo: Memo | None, diags: Diagnostics,
               fresh: dict[str, Fresh]) -> list[tuple[str, SourceDoc, object]]:
    """(kind, document, units.Hit or None) for every spec file that loads and validates.

    A spec whose unit is valid for the bytes on disk is not parsed; the others are loaded
    and validated, and noted in `fresh` with the diagnostics of their own."""
    docs: list[tuple[str, SourceDoc, object]] = []
    for f in tree.files:
        if f.symlink:
            diags.error("LRC3004", "spec files may not be symlinks", path=f.rel)
            continue
        raw = read_capped(f.abspath, f.rel, diags)
        if raw is None:
            continue
        hit = memo.lookup(f.rel, f.kind, raw, tree) if memo is not None else None
        if hit is not None:
            diags.extend(list(hit.warnings))
            docs.append((f.kind, CachedDoc(f.rel, f.abspath, raw, hit.version_pos), hit))
            continue
        before = len(diags.items)
        doc = load_module.load_bytes(raw, f.rel, f.path, diags)
        if doc is None:
            continue
        if validate(doc, f.kind, schemas, diags):
            docs.append((f.kind, doc, None))
            fresh[f.rel] = Fresh(sha(raw), list(diags.items[before:]))
    return docs


def discover_components(root: Path, diags: Diagnostics) -> dict[str, codeprint.Component]:
    try:
        return codeprint.discover(codeprint.runtime_root())
    except CodeprintError as exc:
        rel = exc.path.resolve().relative_to(codeprint.project_root()).as_posix()
        diags.error("LRC3009", exc.message, path=rel, line=exc.line, column=1)
        return {}


@contextmanager
def _attached(store: Cache, write: bool) -> Iterator[Cache]:
    """Lend the cache's code namespace to the code fingerprinting for one command; with
    `write`, save the cache afterwards (--check, diff and bump only read it)."""
    codeprint.SOURCE_DIGESTS = store.namespace("code") if store.enabled else None
    known = len(codeprint.SOURCE_DIGESTS or {})
    try:
        yield store
    finally:
        if len(codeprint.SOURCE_DIGESTS or {}) != known:
            store.dirty = True  # the code namespace is filled in place
        codeprint.SOURCE_DIGESTS = None
        if write:
            store.save()


def compile_project(root: Path, check: bool = False, cache: bool = True) -> CompileResult:
    """Compile `root`; with `cache`, reuse results from .lrc-cache/ (compiler/cache.py,
    compiler/units.py), written by a plain compile and only read by --check."""
    with _attached(Cache(root, enabled=cache), write=not check) as store:
        return _compile_project(root, check, store)


def _compile_project(root: Path, check: bool, store: Cache | None = None) -> CompileResult:
    analysis = _analyze(root, None, plans=True, store=store, write_cache=not check)
    diags = analysis.diagnostics
    result = CompileResult(root, diags, graph=analysis.graph, cache_hits=analysis.cache_hits)
    if diags.has_errors:
        return result
    graph, entries = analysis.graph, analysis.entries
    ledger = Ledger.read(root, diags)
    check_taxonomy(entries, ledger, diags)
    policy.check_split_history(graph, ledger, diags)
    policy.check_seed_freshness(graph, ledger, diags)
    to_record = gate(entries, ledger, diags)
    if diags.has_errors:
        return result

    outputs: dict[str, bytes] = {}
    edition_dirs: set[str] = set()
    for edition in graph.specs["edition"].values():
        plan = analysis.plans[edition.id]
        lock = lockformat.build(plan)
        result.locks[edition.id] = lock
        edition_dirs.add(edition.id)
        base = f"generated/{edition.id}"
        outputs[f"{base}/plan.lock"] = lockformat.dumps(lock)
        for wref, wl in plan["workloads"].items():
            for system_key, roles in wl["prompts"].items():
                for role, rendered in roles.items():
                    outputs[f"{base}/prompts/{wref}/{system_key}.{role}.sample.txt"] = rendered["sample"].encode("utf-8")
    # Errata are compiled apart from the locks (compiler/errata.py): publishing one changes no plan digest.
    outputs.update(errata.compile_errata(root, graph, result.locks, analysis.components, analysis.prints, diags))
    edition_dirs.add("errata")
    if diags.has_errors:
        return result
    ledger_lines = ledger.lines + [e.record() for e in to_record]
    outputs[LEDGER] = ledger.serialize(ledger_lines)
    recording = {id(e) for e in to_record}
    present = _existing_snapshots(root)
    for entry in entries:  # a recorded version's snapshot is immutable: written once, never re-read
        snap = snapshot_path(entry.kind, entry.id, entry.version)
        if id(entry) in recording or snap not in present:
            outputs[snap] = snapshot_bytes(entry.snapshot)
    result.outputs = outputs
    if check:
        emit.check(root, outputs, edition_dirs, diags)
    else:
        result.changed = emit.write(root, outputs, edition_dirs)
    return result


def _existing_snapshots(root: Path) -> set[str]:
    """Project-relative paths of the ledger snapshots on disk (one listing per kind folder)."""
    found: set[str] = set()
    base = root / SNAPSHOTS
    try:
        kinds = [e for e in os.scandir(base) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return found
    for kind in kinds:
        for entry in os.scandir(kind.path):
            if entry.is_file(follow_symlinks=False):
                found.add(f"{SNAPSHOTS}/{kind.name}/{entry.name}")
    return found


# -- analysis without the gate (lrc diff, lrc bump --all-required) ----------------------------

@dataclass
class Analysis:
    """A project resolved to normalized specs, code fingerprints and digests; nothing written.

    `entries` are what the gate would check (every spec of every kind, every code component);
    `plans` (only when asked for) are the in-memory plans of each edition, as a compile would
    lock them.
    """

    root: Path
    diagnostics: Diagnostics
    graph: Graph | None = None
    components: dict[str, codeprint.Component] = field(default_factory=dict)
    prints: dict[str, codeprint.CodePrint] = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)
    plans: dict[str, dict] = field(default_factory=dict)
    cache_hits: int = 0


def spec_entries(graph: Graph) -> list[Entry]:
    """One gate entry per spec, for every kind the resolver indexed, in the graph's order."""
    entries: list[Entry] = []
    for kind, specs in graph.specs.items():
        for spec in specs.values():
            line, col = spec.doc.locate("/version")
            entries.append(Entry(kind, spec.id, spec.version, spec_digest(spec), lambda spec=spec: spec.normalized, spec.doc.path, line, col,
                                 dict(spec.files)))
    return entries


def analyze(root: Path, runtime: Path | None = None, plans: bool = False, cache_root: Path | None = None) -> Analysis:
    """Load, validate, resolve and fingerprint `root` (specs from `root`, code from `runtime`,
    by default the running code) without rendering, gating or writing anything.

    With `plans=True`, prompts are rendered and every edition's plan is built as `compile`
    would lock it. Positions of code components are relative to the runtime's parent folder.
    The compile cache of `cache_root` (default: `root`) is read, never written: its entries
    are checked against the bytes they were made from, so they serve any tree, an old git
    ref's included.
    """
    with _attached(Cache(cache_root if cache_root is not None else root), write=False) as store:
        return _analyze(root, runtime, plans, store=store, write_cache=False)


def _rebuilder(root: Path, schemas: SchemaSet, components: dict):
    """Recompute a cached spec's normalized form and prompts when its blob is gone."""
    def rebuild(spec: Spec) -> dict:
        scratch = Diagnostics()
        doc = spec.doc
        again = Spec(spec.kind, doc, apply_defaults(doc.data, schemas.schemas[spec.kind]))
        Resolver(root, root / "specs", schemas.schemas, components, scratch).local(again)
        prompts = render_workload(again, scratch) if spec.kind == "workload" else None
        if scratch.has_errors or again.digest != spec.digest:
            raise RuntimeError(f"{doc.path} changed while it was being compiled; run the command again")
        return {"normalized": again.normalized, "prompts": prompts}
    return rebuild


def _analyze(root: Path, runtime: Path | None, plans: bool, store: Cache | None = None, write_cache: bool = False) -> Analysis:
    diags = Diagnostics()
    result = Analysis(root, diags)
    schemas = SchemaSet.load(schemas_dir(root), diags)
    if diags.has_errors:
        return result
    memo = Memo(store, schemas.digest, write=write_cache) if store is not None and store.enabled else None
    tree = scan(root, diags)
    fresh: dict[str, Fresh] = {}
    docs = load_specs(tree, schemas, memo, diags, fresh)
    result.cache_hits = memo.hits if memo is not None else 0
    if diags.has_errors:
        return result
    code_root = runtime if runtime is not None else codeprint.runtime_root()
    try:
        components = codeprint.discover(code_root)
    except CodeprintError as exc:
        diags.error("LRC3009", exc.message, path=exc.path.resolve().relative_to(code_root.resolve().parent).as_posix(),
                    line=exc.line, column=1)
        return result
    result.components = components
    if memo is not None:
        memo.rebuild = _rebuilder(root, schemas, components)
    resolver = Resolver(root, root / "specs", schemas.schemas, components, diags)
    graph = resolver.index(docs)

    def local_done(spec: Spec, produced: list[Diagnostic]) -> None:
        if spec.doc.path in fresh:
            fresh[spec.doc.path].diagnostics.extend(produced)

    resolver.resolve(graph, on_local=local_done)
    result.graph = graph
    rendered: set[str] = set()
    if not diags.has_errors and plans:  # rendering precedes fingerprinting, so a template error stops here, as compile always did
        for wl in graph.specs["workload"].values():
            if wl.memo is not None and wl.memo.rendered:
                continue  # rendered cleanly before, from these very bytes
            before = len(diags.items)
            wl.prompts = render_workload(wl, diags)
            rendered.add(wl.doc.path)
            if wl.doc.path in fresh:
                fresh[wl.doc.path].diagnostics.extend(diags.items[before:])
            elif not any(d.severity == "error" for d in diags.items[before:]):
                fresh[wl.doc.path] = Fresh(wl.memo.raw_sha, list(wl.memo.warnings))  # now with its prompts
    if memo is not None:
        _remember(graph, fresh, rendered, memo)
        memo.forget_missing({f.rel for f in tree.files})
        if store is not None and memo.write:
            store.live_blobs = memo.live_blobs()
    if diags.has_errors:
        return result
    with codeprint.batch():
        for ref, comp in components.items():
            try:
                result.prints[ref] = codeprint.fingerprint(comp, code_root)
            except CodeprintError as exc:
                diags.error("LRC3009", exc.message, path=exc.path.resolve().relative_to(code_root.resolve().parent).as_posix(),
                            line=exc.line, column=1)
    if diags.has_errors:
        return result
    entries = spec_entries(graph)
    for ref, comp in components.items():
        rel = comp.path.resolve().relative_to(code_root.resolve().parent).as_posix()
        entries.append(Entry("code", comp.id, comp.version, result.prints[ref].fingerprint, {"files": result.prints[ref].files},
                             rel, comp.version_line, comp.version_col))
    result.entries = entries
    if plans:
        for edition in graph.specs["edition"].values():
            pinned = [graph.by_ref("workload", ref) for ref in edition.data["workloads"]]
            prompts = {wl.ref: wl.prompts for wl in pinned if wl is not None}
            result.plans[edition.id] = build_plan(edition, graph, prompts, result.prints)
    return result


def _remember(graph: Graph, fresh: dict[str, Fresh], rendered: set[str], memo: Memo) -> None:
    """Record a unit for every spec compiled from its bytes whose own stages were clean."""
    if not memo.write:
        return
    for kind in SPEC_KINDS:
        for spec in graph.specs[kind].values():
            noted = fresh.get(spec.doc.path)
            if noted is None or any(d.severity == "error" for d in noted.diagnostics):
                continue
            prompts = spec.prompts if spec.kind == "workload" and spec.doc.path in rendered else None
            memo.remember(spec, noted.raw_sha, [d for d in noted.diagnostics if d.severity == "warning"], prompts)


def gate_report(root: Path) -> tuple[Analysis, Diagnostics]:
    """The analysis of `root` and what the version gate says about it, writing nothing.

    The second value is empty when the analysis has errors (the gate needs a resolved tree).
    """
    analysis = analyze(root)
    gated = Diagnostics()
    if analysis.diagnostics.has_errors:
        return analysis, gated
    ledger = Ledger.read(root, gated)
    check_taxonomy(analysis.entries, ledger, gated)
    gate(analysis.entries, ledger, gated)
    return analysis, gated
