"""The compile pipeline: load -> validate -> resolve -> render -> gate -> emit.

Every stage appends diagnostics; a stage with errors stops the pipeline before anything is
written. The result carries the in-memory outputs so tests and `--check` can compare them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lrc.compiler import emit
from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.load import SourceDoc, load_file
from lrc.compiler.plan import build_plan, spec_digest
from lrc.compiler.render import render_workload
from lrc.compiler import policy
from lrc.compiler.resolve import SPEC_KINDS, Graph, Resolver
from lrc.compiler.validate import KINDS, SchemaSet, validate
from lrc.compiler.versioning import (
    LEDGER,
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
    """The nearest folder at or above `start` holding specs/ and schemas/."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / "specs").is_dir() and (folder / "schemas").is_dir():
            return folder
    raise ProjectNotFound(f"no lrc project (a folder with specs/ and schemas/) at or above {start}")


@dataclass
class CompileResult:
    root: Path
    diagnostics: Diagnostics
    outputs: dict[str, bytes] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    locks: dict[str, dict] = field(default_factory=dict)  # edition id -> lock
    graph: Graph | None = None


def spec_files(root: Path, diags: Diagnostics) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    specs = root / "specs"
    for folder in sorted(specs.iterdir()):
        if not folder.is_dir():
            if folder.suffix in (".yaml", ".yml"):
                diags.error("LRC1008", "spec files live in a kind folder (standard/, systems/, workloads/, editions/)",
                            path=folder.relative_to(root).as_posix())
            continue
        kind = KINDS.get(folder.name)
        files = sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        if kind is None:
            for p in files:
                diags.warning("LRC1008", f"specs/{folder.name}/ is not a spec folder; file ignored",
                              path=p.relative_to(root).as_posix(), hint=f"spec folders: {', '.join(sorted(KINDS))}")
            continue
        out.extend((kind, p) for p in files)
    return out


def load_and_validate(root: Path, schemas: SchemaSet, diags: Diagnostics) -> list[tuple[str, SourceDoc]]:
    docs: list[tuple[str, SourceDoc]] = []
    for kind, path in spec_files(root, diags):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            diags.error("LRC3004", "spec files may not be symlinks", path=rel)
            continue
        doc = load_file(path, rel, diags)
        if doc is None:
            continue
        if validate(doc, kind, schemas, diags):
            docs.append((kind, doc))
    return docs


def discover_components(root: Path, diags: Diagnostics) -> dict[str, codeprint.Component]:
    try:
        return codeprint.discover(codeprint.runtime_root())
    except CodeprintError as exc:
        rel = exc.path.resolve().relative_to(codeprint.project_root()).as_posix()
        diags.error("LRC3009", exc.message, path=rel, line=exc.line, column=1)
        return {}


def compile_project(root: Path, check: bool = False, cache: bool = True) -> CompileResult:
    """Compile `root`; with `cache`, reuse content-addressed results from .lrc-cache/
    (written by a plain compile, only read by --check)."""
    from lrc.compiler import load as load_module
    from lrc.compiler.cache import Cache

    store = Cache(root, enabled=cache)
    load_module.CACHE = store if store.enabled else None
    codeprint.SOURCE_DIGESTS = store.namespace("code") if store.enabled else None
    known = len(codeprint.SOURCE_DIGESTS or {})
    try:
        return _compile_project(root, check)
    finally:
        if len(codeprint.SOURCE_DIGESTS or {}) != known:
            store.dirty = True  # the code namespace is filled in place
        load_module.CACHE = None
        codeprint.SOURCE_DIGESTS = None
        if not check:  # --check writes nothing at all, the cache included; it only reads it
            store.save()


def _compile_project(root: Path, check: bool) -> CompileResult:
    analysis = _analyze(root, None, plans=True)
    diags = analysis.diagnostics
    result = CompileResult(root, diags, graph=analysis.graph)
    if diags.has_errors:
        return result
    graph, entries = analysis.graph, analysis.entries
    ledger = Ledger.read(root, diags)
    check_taxonomy(entries, ledger, diags)
    policy.check_split_history(graph, ledger, diags)
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
    ledger_lines = ledger.lines + [e.record() for e in to_record]
    outputs[LEDGER] = ledger.serialize(ledger_lines)
    for entry in entries:
        snap = snapshot_path(entry.kind, entry.id, entry.version)
        if entry in to_record or not (root / snap).exists():
            outputs[snap] = snapshot_bytes(entry.snapshot)
        else:
            outputs[snap] = (root / snap).read_bytes()
    result.outputs = outputs
    if check:
        emit.check(root, outputs, edition_dirs, diags)
    else:
        result.changed = emit.write(root, outputs, edition_dirs)
    return result


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


def spec_entries(graph: Graph) -> list[Entry]:
    """One gate entry per spec, for every kind the resolver indexed, in the graph's order."""
    entries: list[Entry] = []
    for kind, specs in graph.specs.items():
        for spec in specs.values():
            line, col = spec.doc.locate("/version")
            entries.append(Entry(kind, spec.id, spec.version, spec_digest(spec), spec.normalized, spec.doc.path, line, col))
    return entries


def analyze(root: Path, runtime: Path | None = None, plans: bool = False, cache_root: Path | None = None) -> Analysis:
    """Load, validate, resolve and fingerprint `root` (specs from `root`, code from `runtime`,
    by default the running code) without rendering, gating or writing anything.

    With `plans=True`, prompts are rendered and every edition's plan is built as `compile`
    would lock it. Positions of code components are relative to the runtime's parent folder.
    The compile cache of `cache_root` (default: `root`) is read, never written: its entries
    are keyed by content, so they serve any tree, an old git ref's included.
    """
    from lrc.compiler import load as load_module
    from lrc.compiler.cache import Cache

    store = Cache(cache_root if cache_root is not None else root)
    load_module.CACHE = store if store.enabled else None
    codeprint.SOURCE_DIGESTS = store.namespace("code") if store.enabled else None
    try:
        return _analyze(root, runtime, plans)
    finally:
        load_module.CACHE = None
        codeprint.SOURCE_DIGESTS = None


def _analyze(root: Path, runtime: Path | None, plans: bool) -> Analysis:
    diags = Diagnostics()
    result = Analysis(root, diags)
    schemas = SchemaSet.load(root / "schemas")
    docs = load_and_validate(root, schemas, diags)
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
    resolver = Resolver(root, root / "specs", schemas.schemas, components, diags)
    graph = resolver.index(docs)
    resolver.resolve(graph)
    result.graph = graph
    if diags.has_errors:
        return result
    prompts = {}
    if plans:  # rendering precedes fingerprinting, so a template error stops here, as compile always did
        prompts = {wl.ref: render_workload(wl, diags) for wl in graph.specs["workload"].values()}
        if diags.has_errors:
            return result
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
            result.plans[edition.id] = build_plan(edition, graph, prompts, result.prints)
    return result


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
