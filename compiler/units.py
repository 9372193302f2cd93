"""The per-spec memo: what one spec file compiled to, reused while its bytes are unchanged.

Most of a compile is work on one spec at a time that reads nothing but that spec and the
files it references: parse, schema validation, defaults, inlining prompt templates and
output schemas, metaschema checks, the sample render, the canonical digest. A *unit* is
the result of that work for one clean spec (no error of its own). On the next compile, a
spec whose bytes, and the bytes of every file it references, are unchanged (and whose
references are still plain files inside specs/, see tree.py) is not parsed again: its
validated data, digest and warnings come from the unit. Its normalized form and rendered
prompts live in a blob and are read only when something needs them (a lock that pins it,
a ledger snapshot to write, a gate diagnostic to explain); its source positions are
re-parsed from its text only when a diagnostic needs one.

Everything that relates specs to each other (references, policies, the version gate) runs
on every compile, cached or not. The memo is keyed by the schemas' bytes too (they decide
validation and defaults) and lives in the toolchain-namespaced, sealed cache of cache.py.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from lrc.compiler.cache import Cache
from lrc.compiler.diagnostics import Diagnostic, Diagnostics
from lrc.compiler.load import SourceDoc, decode_text, read_bytes
from lrc.compiler.resolve import MAX_REFERENCED_FILE
from lrc.compiler.tree import SpecTree

NAMESPACE = "units"
META = "units-meta"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class CachedDoc(SourceDoc):
    """A SourceDoc served from the memo: `text`, `data`, `values` and `keys` are rebuilt from
    the file's bytes on first use (a diagnostic's position, `lrc bump`), never before."""

    def __init__(self, path: str, abspath: str, raw: bytes, version_pos: tuple[int, int]):
        self.__dict__.update(path=path, _abspath=abspath, _raw=raw, _version_pos=version_pos)

    def __getattr__(self, name: str) -> Any:
        if name == "abspath":
            self.__dict__["abspath"] = Path(self._abspath)
            return self.__dict__["abspath"]
        if name in ("text", "data", "values", "keys"):
            self._materialize()
            return self.__dict__[name]
        raise AttributeError(name)

    def _materialize(self) -> None:
        from lrc.compiler import load as load_module

        scratch = Diagnostics()
        text = decode_text(self._raw, self.path, scratch)
        doc = load_module._load_text(text, self.path, self.abspath, scratch) if text is not None else None
        if doc is None:  # the bytes were checked against the memo: they loaded cleanly before
            raise RuntimeError(f"{self.path}: a cached spec no longer loads")
        self.__dict__.update(text=doc.text, data=doc.data, values=doc.values, keys=doc.keys)

    def locate(self, pointer: str) -> tuple[int, int]:
        if pointer == "/version" and "values" not in self.__dict__:
            return self._version_pos
        return super().locate(pointer)


@dataclass
class Hit:
    """A unit found valid for the bytes on disk."""

    rel: str
    kind: str
    data: dict[str, Any]
    files: dict[str, str]
    deps: dict[str, str]
    digest: str
    version_pos: tuple[int, int]
    warnings: tuple[Diagnostic, ...]
    blob: str | None
    rendered: bool  # the blob holds the rendered prompts (a workload that reached the render stage)
    raw_sha: str
    memo: "Memo"

    def heavy(self) -> dict[str, Any] | None:
        """{"normalized": ..., "prompts": ...} from the blob, or None if it is gone."""
        if self.blob is None:
            return None
        value = self.memo.cache.get_blob(self.blob)
        return value if isinstance(value, dict) and "normalized" in value else None


class Memo:
    """Lookup and recording of units in one compile; inert without a cache."""

    def __init__(self, cache: Cache | None, schemas_digest: str, write: bool):
        self.cache = cache if cache is not None and cache.enabled else None
        self.write = write and self.cache is not None
        self.units: dict[str, tuple] = {}
        if self.cache is not None:
            meta = self.cache.namespace(META)
            self.units = self.cache.namespace(NAMESPACE)
            if meta.get("schemas") != schemas_digest:
                self.units.clear()
                meta["schemas"] = schemas_digest
                self.cache.dirty = self.write
        self.rebuild: Callable[[Any], dict[str, Any]] | None = None
        self.hits = 0

    def lookup(self, rel: str, kind: str, raw: bytes, tree: SpecTree) -> Hit | None:
        record = self.units.get(rel)
        if record is None:
            return None
        r_kind, r_sha, deps, data, files, digest, version_pos, warnings, blob, rendered = record
        if r_kind != kind or r_sha != sha(raw):
            return None
        root = str(tree.root)
        for dep, dep_sha in deps:
            if dep not in tree.regular:
                return None
            try:
                if sha(read_bytes(f"{root}/{dep}", MAX_REFERENCED_FILE)) != dep_sha:
                    return None
            except OSError:
                return None
        self.hits += 1
        return Hit(rel, kind, data, files, dict(deps), digest, tuple(version_pos),
                   tuple(Diagnostic(*w[:8], notes=tuple(w[8])) for w in warnings), blob, rendered, r_sha, self)

    def remember(self, spec: Any, raw_sha: str, warnings: list[Diagnostic], prompts: dict | None) -> None:
        """Record a freshly compiled clean spec (its own stages emitted no error)."""
        if not self.write:
            return
        assert self.cache is not None
        heavy = {"normalized": spec.normalized, "prompts": prompts}
        blob = self.cache.put_blob(heavy)
        version_pos = spec.doc.locate("/version")
        self.units[spec.doc.path] = (
            spec.kind, raw_sha, tuple(sorted(spec.deps.items())), spec.data, dict(spec.files), spec.digest,
            tuple(version_pos),
            tuple((w.code, w.severity, w.summary, w.path, w.line, w.column, w.pointer, w.hint, tuple(w.notes)) for w in warnings),
            blob, prompts is not None,
        )
        self.cache.dirty = True

    def forget_missing(self, present: set[str]) -> None:
        """Drop units of spec files that no longer exist (keeps the cache the size of the tree)."""
        if not self.write:
            return
        gone = [rel for rel in self.units if rel not in present]
        for rel in gone:
            del self.units[rel]
        if gone:
            self.cache.dirty = True  # type: ignore[union-attr]

    def live_blobs(self) -> set[str]:
        return {record[8] for record in self.units.values() if record[8]}
